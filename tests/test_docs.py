"""Every ```python block of README.md and docs/*.md runs, each in a fresh namespace.

A block fenced ```python no-run is skipped; use it only when running is truly impossible. A
block fenced ```python subprocess runs in a fresh interpreter: for examples that set
process-wide state, such as OpenTelemetry's global providers.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_FENCE = re.compile(r"^```python(?P<flags>[^\n]*)\n(?P<code>.*?)^```\s*$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    code: str
    run: bool
    subprocess: bool = False

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks() -> list[Block]:
    found: list[Block] = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 2
            flags = match.group("flags").split()
            found.append(Block(path, line, match.group("code"), "no-run" not in flags, "subprocess" in flags))
    return found


BLOCKS = blocks()


def test_the_docs_have_runnable_examples() -> None:
    runnable = {block.path.name for block in BLOCKS if block.run}
    assert {"README.md", "wire-format.md"} <= runnable


@pytest.mark.parametrize("block", BLOCKS, ids=lambda block: block.name)
def test_docs_block_runs(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not block.run:
        pytest.skip("fenced ```python no-run")
    # Blocks may register exception mappings or write files: keep both local to the block.
    from mcp_errors import _classify

    monkeypatch.setattr(_classify, "_registry", dict(_classify._registry))
    monkeypatch.chdir(tmp_path)
    if block.subprocess:
        done = subprocess.run(
            [sys.executable, "-c", block.code], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, f"{block.name} failed:\n{done.stderr[-3000:]}"
        return
    # Padding makes line numbers in a failure's traceback point into the Markdown file.
    code = compile("\n" * (block.line - 1) + block.code, str(block.path), "exec")
    exec(code, {"__name__": "__docs__"})
