"""The proxy's rules file: the user's own mapping of an upstream's failures to the contract.

`mcp-errors proxy --rules FILE` reads a TOML file of `[[rule]]` tables. Each rule matches a
failure by its JSON-RPC code, a regular expression on its text, or a structured field, and
says what the failure is. The file is validated whole when the proxy starts; a mistake is a
`RulesError` naming the file, the rule and the problem. The format is in docs/proxy.md:

    [[rule]]
    name = "not a repository"
    tool = ["git_status", "git_log"]         # optional: only these tools
    match = { text = "not a git repository" }   # success = true: a failure answered as a success
    category = "validation"
    code = "NOT_A_REPOSITORY"
    description = "repo_path is no git repository ({match}). Pass a directory that has one."

A tool's own rules are tried before the rules for every tool, each group in file order; the
first rule whose conditions all hold wins.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from mcp_errors._shared.contract import ErrorCategory, ExecutionState

__all__ = ["MatchedRule", "Rule", "Rules", "RulesError", "load_rules", "read_field"]


class RulesError(ValueError):
    """A rules file the proxy cannot use. The message names the file, the rule and the problem."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One validated rule."""

    number: int
    """Its place in the file, from 1."""
    name: str | None
    tools: frozenset[str] | None
    """The tools it is for; `None` for every tool."""
    codes: frozenset[int]
    text: re.Pattern[str] | None
    field: tuple[str, ...] | None
    equals: tuple[str | int | float | bool, ...]
    pattern: re.Pattern[str] | None
    category: ErrorCategory
    code: str | None
    description: str | None
    """A template: `{match}`, `{text}`, `{tool}` and the named groups of `text`."""
    retry_after: float | str | None
    """Seconds, or a template that gives them (`"{seconds}"`)."""
    execution_state: ExecutionState | None
    on_success: bool = False
    """It matches a success (`match.success = true`): a failure the server answered as one."""

    @property
    def label(self) -> str:
        """How messages name it: `rule 2 (rate limit)`."""
        return f"rule {self.number}" + (f" ({self.name})" if self.name else "")


@dataclass(frozen=True, slots=True)
class MatchedRule:
    """A rule that matched one failure, with what it matched, for its templates."""

    rule: Rule
    values: Mapping[str, str]
    """`match`, the named groups of `text`; all raw (the caller sanitises)."""


class Rules:
    """The rules of one file, ready to match."""

    def __init__(self, source: str, rules: Sequence[Rule]) -> None:
        self.source = source
        self.rules = tuple(rules)
        self._for_tool: dict[str, tuple[Rule, ...]] = {}

    def first_match(
        self, tool: str, *, code: int | None, text: str, structured: Mapping[str, Any] | None, success: bool = False
    ) -> MatchedRule | None:
        """The first rule for `tool` whose conditions all hold, trying the tool's own rules first.

        Rules for failures match failures, and rules with `match.success = true` successes.
        """
        text = text[:_MAX_MATCHED_CHARS]
        for rule in self._ordered(tool):
            if rule.on_success is not success:
                continue
            values = _match(rule, code, text, structured)
            if values is not None:
                return MatchedRule(rule, values)
        return None

    def _ordered(self, tool: str) -> tuple[Rule, ...]:
        ordered = self._for_tool.get(tool)
        if ordered is None:
            own = [rule for rule in self.rules if rule.tools is not None and tool in rule.tools]
            ordered = self._for_tool[tool] = (*own, *(rule for rule in self.rules if rule.tools is None))
        return ordered

    def __len__(self) -> int:
        return len(self.rules)

    @property
    def match_successes(self) -> bool:
        """Whether any rule reads successes (then every success is matched against them)."""
        return any(rule.on_success for rule in self.rules)


# User regexes run on an upstream's text; only its head is searched, so that a long answer
# cannot make a careless pattern slow.
_MAX_MATCHED_CHARS: Final = 8000


def _match(rule: Rule, code: int | None, text: str, structured: Mapping[str, Any] | None) -> dict[str, str] | None:
    values: dict[str, str] = {}
    if rule.codes and code not in rule.codes:
        return None
    if rule.codes:
        values["match"] = str(code)
    if rule.field is not None:
        found, value = read_field(structured, rule.field)
        if not found:
            return None
        if rule.equals and not any(_same(value, wanted) for wanted in rule.equals):
            return None
        if rule.pattern is not None and rule.pattern.search(_as_text(value)) is None:
            return None
        values["match"] = _as_text(value)
    if rule.text is not None:
        hit = rule.text.search(text)
        if hit is None:
            return None
        values["match"] = hit.group(0)
        values.update({name: value for name, value in hit.groupdict().items() if value is not None})
    return values


def read_field(data: object, path: Sequence[str]) -> tuple[bool, object]:
    """The value at a dotted path (`error.status`, `errors.0.code`) of JSON data: (found, value)."""
    for part in path:
        if isinstance(data, Mapping) and part in data:
            data = data[part]
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return False, None
    return True, data


def _same(value: object, wanted: str | int | float | bool) -> bool:
    # `true` is not `1`: a boolean matches only a boolean.
    if isinstance(value, bool) or isinstance(wanted, bool):
        return isinstance(value, bool) and isinstance(wanted, bool) and value is wanted
    return value == wanted


def _as_text(value: object) -> str:
    return value if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)


def load_rules(path: Path) -> Rules:
    """Read and validate a rules file.

    Args:
        path: The TOML file.

    Returns:
        Its rules.

    Raises:
        RulesError: If the file cannot be read, is not TOML, or a rule is wrong; the message
            names the file, the rule and the problem.
    """
    import tomllib  # only with a rules file: a proxy without one starts without the TOML parser

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RulesError(f"{path}: cannot read the rules file: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise RulesError(f"{path}: the rules file is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{path}: not valid TOML: {exc}") from None
    return parse_rules(data, source=str(path))


def parse_rules(data: Mapping[str, Any], *, source: str) -> Rules:
    """Validate rules already read from TOML (see `load_rules`)."""
    try:
        model = _File.model_validate(data)
    except pydantic.ValidationError as exc:
        raise RulesError(_describe(exc, data, source)) from None
    return Rules(source, tuple(_build(number, raw, source) for number, raw in enumerate(model.rule, start=1)))


# The raw shape, validated by pydantic: unknown keys (a typo) are errors, not ignored.
class _Strict(BaseModel):
    # Built when a rules file is first read: a proxy without one does without the schema (start-up time).
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)


Scalar = str | int | float | bool


class _Match(_Strict):
    code: int | list[int] | None = None
    text: str | None = None
    field: str | None = None
    equals: Scalar | list[Scalar] | None = None
    pattern: str | None = None
    success: bool = False


class _Rule(_Strict):
    name: str | None = None
    tool: str | list[str] | None = None
    match: _Match
    category: Literal["transient", "validation", "business", "permission"]
    code: Annotated[str, Field(pattern=r"^[A-Z][A-Z0-9_]*$")] | None = None
    description: Annotated[str, Field(min_length=1)] | None = None
    retry_after: Annotated[float, Field(ge=0)] | Annotated[int, Field(ge=0)] | str | None = None
    execution_state: Literal["not_executed", "outcome_unknown"] | None = None


class _File(_Strict):
    rule: list[_Rule] = []


_UNKNOWN_KEY: Final = "unknown key (see docs/proxy.md for the format)"


def _describe(exc: pydantic.ValidationError, data: Mapping[str, Any], source: str) -> str:
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        location = list(error["loc"])
        where = "the file"
        if location[:1] == ["rule"] and len(location) > 1 and isinstance(location[1], int):
            number = location[1]
            raw = data.get("rule")
            name = raw[number].get("name") if isinstance(raw, list) and isinstance(raw[number], Mapping) else None
            where = f"rule {number + 1}" + (f" ({name})" if isinstance(name, str) else "")
            location = location[2:]
        # pydantic names the union member it tried ("str", "list[int]"): noise to a user.
        key = ".".join(str(part) for part in location if not _is_type_label(part))
        problem = error["msg"] if error["type"] != "extra_forbidden" else _UNKNOWN_KEY
        problems.append(f"{source}: {where}: {key + ': ' if key else ''}{problem}")
    return "\n".join(dict.fromkeys(problems))


def _is_type_label(part: object) -> bool:
    return isinstance(part, str) and (
        part in {"str", "int", "float", "bool", "constrained-str", "constrained-float", "constrained-int"}
        or part.startswith(("list[", "function-", "literal["))
    )


_FIXED_NAMES: Final = frozenset({"match", "text", "tool"})


def _build(number: int, raw: _Rule, source: str) -> Rule:
    label = f"{source}: rule {number}" + (f" ({raw.name})" if raw.name else "")
    match = raw.match
    if (match.equals is not None or match.pattern is not None) and match.field is None:
        raise RulesError(f"{label}: match: equals and pattern need a field to look at")
    if match.code is None and match.text is None and match.field is None:
        raise RulesError(f"{label}: match: give at least one of code, text or field")
    if match.success and match.code is not None:
        raise RulesError(f"{label}: match: a success has no JSON-RPC code; match its text or a field")
    text = _compile(match.text, f"{label}: match.text")
    groups = frozenset(text.groupindex) if text is not None else frozenset()
    category = ErrorCategory(raw.category)
    if raw.retry_after is not None and category is not ErrorCategory.TRANSIENT:
        raise RulesError(f"{label}: retry_after: only a transient failure has a wait, not a {category.value} one")
    for key, template in (("description", raw.description), ("retry_after", raw.retry_after)):
        if isinstance(template, str):
            _check_template(template, groups, f"{label}: {key}")
    tools = raw.tool
    codes = match.code
    equals = match.equals
    return Rule(
        number=number,
        name=raw.name,
        tools=None if tools is None else frozenset([tools] if isinstance(tools, str) else tools),
        codes=frozenset([] if codes is None else [codes] if isinstance(codes, int) else codes),
        text=text,
        field=None if match.field is None else tuple(match.field.split(".")),
        equals=() if equals is None else tuple(equals) if isinstance(equals, list) else (equals,),
        pattern=_compile(match.pattern, f"{label}: match.pattern"),
        category=category,
        code=raw.code,
        description=raw.description,
        retry_after=raw.retry_after,
        execution_state=None if raw.execution_state is None else ExecutionState(raw.execution_state),
        on_success=match.success,
    )


def _compile(pattern: str | None, where: str) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise RulesError(f"{where}: not a valid regular expression: {exc}") from None


def _check_template(template: str, groups: frozenset[str], where: str) -> None:
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        raise RulesError(f"{where}: not a valid template ({exc}); write a literal brace as {{{{ or }}}}") from None
    allowed = _FIXED_NAMES | groups
    for name in fields:
        if name not in allowed:
            known = ", ".join(f"{{{n}}}" for n in sorted(allowed))
            raise RulesError(f"{where}: unknown placeholder {{{name}}}; use one of {known}")
