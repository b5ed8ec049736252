"""Every `mcp-errors` option the docs name exists, and every default they quote is the real one.

README.md and docs/*.md are read for:

- commands, in fenced blocks and in inline code: `mcp-errors <subcommand> ... --option`; each
  option before a bare `--` (what follows is the upstream's command) must be one of that
  subcommand's options;
- options on their own in inline code (`--protocol legacy`, a table's `--timeout S`): each
  must be an option of some subcommand, unless it is another tool's (`FOREIGN_OPTIONS`);
- defaults quoted beside an option ("default 30", "30 s by default", "defaults to 30", "by
  default `--timeout`, 10"): the number must be the option's default, or a number its
  `--help` shows as the default.

The options are read from the command itself (typer's click parameters), so a renamed option
or a changed default fails here until the docs say the same.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command

from mcp_errors._cli import app

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FOREIGN_OPTIONS = {
    # Options of the other tools the docs name in inline code: not mcp-errors options.
    "--all-extras",  # uv
    "--directory",  # uv
    "--extra",  # uv
    "--from",  # uvx
    "--group",  # uv
    "--out-dir",  # uv build
    "--project",  # uv
    "--scope",  # claude mcp add
    "--wheel",  # uv build
    "--with",  # uvx
    "--otel",  # benchmarks/instructions.py
    "--password",  # a command line the sanitiser redacts (docs/wire-format.md)
}
OTHER_TOOLS_PAGES = {"docs/interop.md", "docs/performance.md"}
"""Pages about other programs (the peers' CLIs, the benchmarks' scripts, pytest): an option
on its own there is theirs. Their `mcp-errors <subcommand> --option` commands are still read."""

_FENCE = re.compile(r"^```[^\n]*\n(?P<code>.*?)^```\s*$", re.MULTILINE | re.DOTALL)
_INLINE = re.compile(r"`(?P<code>[^`\n]+)`")
_COMMAND = re.compile(r"\bmcp-errors\s+(?P<sub>check|proxy|serve|demo|wrap)\b(?P<rest>.*)")
_SCRIPT = re.compile(r"\b(?P<script>(?:tools|benchmarks)/\w+\.py)\b")
_OPTION = re.compile(r"^(?P<option>--?[A-Za-z][\w-]*)")
_DEFAULT = [
    re.compile(r"\bdefaults?(?: to|:)?\s+(?P<value>\d+(?:\.\d+)?)\b"),
    re.compile(r"\b(?P<value>\d+(?:\.\d+)?)(?:\s*s)?\s+by default\b"),
    re.compile(r"\bby default[^()|.;\d]*?(?P<value>\d+(?:\.\d+)?)\b"),
]


@dataclass(frozen=True)
class Mention:
    page: str
    line: int
    option: str
    subcommand: str | None
    """The subcommand the option was written after, `None` for an option on its own."""
    after: str = ""
    """The prose after an option on its own, to the end of its clause (where a default is quoted)."""
    script: str | None = None
    """A script of this repository (`tools/...`, `benchmarks/...`) the same line names: the option is its own."""

    def __str__(self) -> str:
        where = f"mcp-errors {self.subcommand} " if self.subcommand else ""
        return f"{self.page}:{self.line}: {where}{self.option}"


@cache
def subcommands() -> dict[str, Any]:
    """The subcommands' click commands (typer's own click: read by attribute, not by class)."""
    return dict(get_command(app).commands)  # type: ignore[attr-defined]


def options_of(command: Any) -> dict[str, Any]:
    """Each option string of a subcommand (`--help` included) and its click parameter."""
    options = {opt: param for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    return {**options, "--help": None}


def _command_options(rest: str) -> list[str]:
    """The options written after `mcp-errors <sub>`, up to `--` or the end of the command."""
    try:
        tokens = shlex.split(rest, comments=False)
    except ValueError:
        tokens = rest.split()
    found: list[str] = []
    for token in tokens:
        if token in ("--", "|", "&&", ";", "||") or token.startswith(("#", ">")):
            break
        match = _OPTION.match(token.strip("[]()"))
        if match is not None:
            found.append(match.group("option"))
    return found


def _clause(text: str) -> str:
    """Text up to the end of its clause: a sentence end, a semicolon, a closing parenthesis."""
    match = re.search(r"\.\s|;|\)|\|", text)
    return text if match is None else text[: match.end()]


def mentions() -> list[Mention]:
    found: list[Mention] = []
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        page = str(path.relative_to(ROOT))
        fenced: list[tuple[int, int]] = []
        for fence in _FENCE.finditer(text):
            fenced.append((fence.start(), fence.end()))
            start_line = text.count("\n", 0, fence.start()) + 2
            code = fence.group("code").replace("\\\n", " ")
            for offset, line in enumerate(code.splitlines()):
                for command in _COMMAND.finditer(line):
                    found += [
                        Mention(page, start_line + offset, option, command.group("sub"))
                        for option in _command_options(command.group("rest"))
                    ]
        for span in _INLINE.finditer(text):
            if any(start <= span.start() < end for start, end in fenced):
                continue
            line = text.count("\n", 0, span.start()) + 1
            code = span.group("code")
            inline = _COMMAND.search(code)
            if inline is not None:
                found += [
                    Mention(page, line, option, inline.group("sub"))
                    for option in _command_options(inline.group("rest"))
                ]
                continue
            alone = _OPTION.match(code)
            if alone is not None and alone.group("option").startswith("--") and code.split()[0] != "--":
                # The prose after it, lines joined, for a quoted default.
                table_row = text[text.rfind("\n", 0, span.start()) + 1 :].startswith("|")
                tail = text[span.end() : span.end() + 300]
                tail = tail.split("\n")[0] if table_row else re.sub(r"\s*\n\s*", " ", tail.split("\n\n")[0])
                line_text = text[text.rfind("\n", 0, span.start()) + 1 : text.find("\n", span.end())]
                script = _SCRIPT.search(line_text)
                found.append(
                    Mention(
                        page,
                        line,
                        alone.group("option"),
                        None,
                        tail if table_row else _clause(tail),
                        script.group("script") if script else None,
                    )
                )
    return found


MENTIONS = mentions()


def test_the_docs_name_options_of_every_subcommand() -> None:
    named = {mention.subcommand for mention in MENTIONS if mention.subcommand}
    assert {"check", "proxy", "serve", "demo"} <= named, named


def test_every_option_written_after_a_subcommand_is_one_of_its_options() -> None:
    commands = subcommands()
    wrong = [
        str(mention)
        for mention in MENTIONS
        if mention.subcommand is not None
        and (mention.subcommand not in commands or mention.option not in options_of(commands[mention.subcommand]))
    ]
    assert not wrong, "options the command does not have:\n" + "\n".join(wrong)


def test_every_option_named_on_its_own_is_an_option_of_some_subcommand() -> None:
    known = {option for command in subcommands().values() for option in options_of(command)} | FOREIGN_OPTIONS
    wrong = [
        str(mention)
        for mention in MENTIONS
        if mention.subcommand is None
        and mention.script is None
        and mention.option not in known
        and mention.page not in OTHER_TOOLS_PAGES
    ]
    assert not wrong, "options no subcommand has:\n" + "\n".join(wrong)


def test_every_option_named_beside_a_script_of_this_repository_is_one_that_script_reads() -> None:
    beside = [mention for mention in MENTIONS if mention.script is not None]
    wrong = [
        str(mention)
        for mention in beside
        if f'"{mention.option}"' not in (ROOT / str(mention.script)).read_text(encoding="utf-8")
    ]
    assert beside, "no option named beside a script: the test reads nothing"
    assert not wrong, "options the script named beside them does not read:\n" + "\n".join(wrong)


def quoted_default(after: str) -> str | None:
    for pattern in _DEFAULT:
        match = pattern.search(after)
        if match is not None:
            return match.group("value")
    return None


def real_defaults(option: str) -> set[float]:
    values: set[float] = set()
    for command in subcommands().values():
        param = options_of(command).get(option)
        if param is None or param.param_type_name != "option":
            continue
        if isinstance(param.default, int | float) and not isinstance(param.default, bool):
            values.add(float(param.default))
        if isinstance(param.show_default, str):
            values |= {float(number) for number in re.findall(r"\d+(?:\.\d+)?", param.show_default)}
    return values


def test_every_default_the_docs_quote_for_an_option_is_its_real_default() -> None:
    quoted = [(mention, value) for mention in MENTIONS if (value := quoted_default(mention.after)) is not None]
    assert quoted, "no quoted default found: the patterns no longer match the docs"
    wrong = [
        f"{mention}: the docs say {value}, --help says {sorted(real_defaults(mention.option))}"
        for mention, value in quoted
        if float(value) not in real_defaults(mention.option)
    ]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        (" seconds (by default `--timeout`, 10) to start", "10"),
        (" | seconds to start (default 30, or `--timeout` when longer) |", "30"),
        (" (30 s by default: [Deadlines](#deadlines))", "30"),
        (" defaults to 5 failures", "5"),
        (" | resend a safe transient failure (below; off by default) |", None),
    ],
)
def test_the_quoted_default_is_read_in_each_way_the_docs_write_it(after: str, expected: str | None) -> None:
    assert quoted_default(after) == expected
