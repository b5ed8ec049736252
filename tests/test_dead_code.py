"""Dead code vulture cannot see: a private module-level name that nothing in src/ reads.

Vulture (`uv run vulture`, run by .ci/run) skips names that start with `_`, which is where
dead constants hide (`_ANY`, `_SECOND_WORDS`, `_UNKNOWN_KEY` were such). A private name read
only by the tests is dead too: the code it serves lives in the test.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).parents[1] / "src" / "mcp_errors"


def unread_private_names(root: Path) -> list[str]:
    defined: dict[tuple[str, str], int] = {}
    read: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            names: list[str] = []
            if isinstance(node, ast.Assign):
                names = [target.id for target in node.targets if isinstance(target, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names = [node.name]
            for name in names:
                if name.startswith("_") and not name.startswith("__"):
                    defined[(path.relative_to(root).as_posix(), name)] = node.lineno
        for walked in ast.walk(tree):
            if isinstance(walked, ast.Name) and isinstance(walked.ctx, ast.Load):
                read.add(walked.id)
            elif isinstance(walked, ast.Attribute):
                read.add(walked.attr)
            elif isinstance(walked, ast.alias):
                read.add(walked.name.rpartition(".")[2])
            elif isinstance(walked, ast.Constant) and isinstance(walked.value, str) and walked.value.isidentifier():
                read.add(walked.value)  # getattr(module, "_name"), __all__, lazy re-export tables
    return [f"{where}:{line}: {name}" for (where, name), line in sorted(defined.items()) if name not in read]


def test_every_private_module_level_name_is_read_somewhere_in_src() -> None:
    assert unread_private_names(SRC) == []


def test_an_unread_private_constant_is_found(tmp_path: Path) -> None:
    (tmp_path / "rules.py").write_text("_ANY = 1\n_USED = 2\n\n\ndef rule() -> int:\n    return _USED\n")
    assert unread_private_names(tmp_path) == ["rules.py:1: _ANY"]
