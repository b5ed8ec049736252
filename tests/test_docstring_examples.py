"""Every ```python block in a docstring under src/ runs, each in a fresh namespace and folder.

The `Example:` of a public entry point is what a reader copies first: it must run as written.
A block fenced ```python no-run is not run (nor listed as a test); use it only when running is
truly impossible (a database server, a model's API key).
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "mcp_errors"
_FENCE = re.compile(r"^[ \t]*```python(?P<flags>[^\n]*)\n(?P<code>.*?)^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)
_DOCUMENTED = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Example:
    where: str
    code: str
    run: bool


def examples_in(path: Path, root: Path = ROOT) -> Iterator[Example]:
    """The ```python blocks of every docstring in `path`, named `<file>:<object>`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not isinstance(node, _DOCUMENTED):
            continue
        docstring = ast.get_docstring(node, clean=True)
        if not docstring:
            continue
        name = getattr(node, "name", "<module>")
        for match in _FENCE.finditer(docstring):
            flags = match.group("flags").split()
            yield Example(
                f"{path.relative_to(root).as_posix()}:{name}",
                textwrap.dedent(match.group("code")),
                run="no-run" not in flags,
            )


ALL = [example for path in sorted(SRC.rglob("*.py")) for example in examples_in(path)]
RUN = [example for example in ALL if example.run]


def test_the_public_entry_points_examples_are_found() -> None:
    # A fence the extraction misses would pass silently: the count keeps it honest.
    assert len(ALL) >= 30
    assert any(example.where.endswith(":install") for example in RUN)


@pytest.mark.parametrize("example", RUN, ids=[example.where for example in RUN])
def test_a_docstring_example_runs_as_written(example: Example, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # files an example leaves (a SQLite store) go to its own folder
    code = compile(example.code, example.where, "exec")
    exec(code, {"__name__": "docstring_example"})  # running the example is the test


def test_a_failing_example_is_found_with_its_place(tmp_path: Path) -> None:
    module = tmp_path / "broken.py"
    module.write_text(
        'def f() -> None:\n    """Do.\n\n    Example:\n        ```python\n        assert 1 == 2\n        ```\n    """\n'
    )
    (found,) = examples_in(module, tmp_path)
    assert (found.where, found.code, found.run) == ("broken.py:f", "assert 1 == 2\n", True)
    with pytest.raises(AssertionError):
        exec(compile(found.code, found.where, "exec"), {})
