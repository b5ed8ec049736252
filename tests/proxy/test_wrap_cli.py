"""`mcp-errors wrap` as a person runs it: the diff of a dry run, the backup, undo, and a clear refusal."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from mcp_errors._cli import app

HOSTS = Path(__file__).parents[1] / "hosts"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["wrap", *args], env={"NO_COLOR": "1"})
    return result.exit_code, result.stdout, result.stderr


def test_a_dry_run_prints_the_diff_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    shutil.copyfile(HOSTS / "claude_code_mcp.json", path)
    code, out, err = run("--dry-run", str(path))
    assert code == 0
    assert out.startswith("---")
    assert '-      "command": "uvx",' in out
    assert "git: wrapped (rule pack mcp-server-git)" in err
    assert "docs: skipped" in err
    assert path.read_bytes() == (HOSTS / "claude_code_mcp.json").read_bytes()


def test_wrap_then_undo_from_the_command_line_restores_the_file(tmp_path: Path) -> None:
    path = tmp_path / "claude_desktop_config.json"
    shutil.copyfile(HOSTS / "claude_desktop_config.json", path)
    code, _, err = run("--http-too", "--no-packs", str(path))
    assert code == 0
    assert "mcp-errors-backup" in err
    assert "--rules" not in path.read_text(encoding="utf-8")
    again = run(str(path))
    assert again[0] == 0
    assert "nothing to wrap" in again[2]
    code, _, err = run("--undo", str(path))
    assert code == 0
    assert "restored from its backup" in err
    assert path.read_bytes() == (HOSTS / "claude_desktop_config.json").read_bytes()


def test_a_file_that_is_no_host_configuration_is_refused_with_status_2(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"editor.fontSize": 14}', encoding="utf-8")
    code, _, err = run(str(path))
    assert code == 2
    assert "not a host's MCP configuration" in err
    assert path.read_text(encoding="utf-8") == '{"editor.fontSize": 14}'
