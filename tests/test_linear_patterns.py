"""Every regular expression in `src/`, and in the shipped rule packs, reads hostile text in linear time.

The patterns are found by walking the package's modules (a new one is covered the day it is
written): every compiled pattern at module level, also inside tuples, lists and dicts there.
Each is run on texts built to make a backtracking pattern go quadratic or worse: long runs of
one character, of the pattern's own literal fragments, of blanks before a character that
fails the match. The bound is a hang guard, far above what a linear pattern needs (a few
milliseconds) and far below what a quadratic one takes on this much text (seconds).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import mcp_errors
from mcp_errors.proxy import load_rules

pytestmark = pytest.mark.slow  # seconds of CPU per test (`-m "not slow"` leaves it out)

HOSTILE_CHARS = 30_000
BOUND_SECONDS = 2.0


def compiled_patterns() -> Iterator[tuple[str, Any]]:
    seen: set[int] = set()
    for info in pkgutil.walk_packages(mcp_errors.__path__, prefix="mcp_errors."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            for found in _patterns_in(value, depth=0):
                if id(found) not in seen:
                    seen.add(id(found))
                    yield f"{info.name}.{name}", found


def _patterns_in(value: object, depth: int) -> Iterator[Any]:
    if isinstance(value, re.Pattern | regex.Pattern):
        yield value
    elif depth < 3 and isinstance(value, tuple | list | frozenset):
        for item in value:
            yield from _patterns_in(item, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for item in (*value.keys(), *value.values()):
            yield from _patterns_in(item, depth + 1)


PATTERNS = sorted(compiled_patterns(), key=lambda pair: pair[0])


def fragments(pattern: Any) -> list[str]:
    """Pieces of text a pattern is likely to half-match: its literal runs, and characters it names."""
    source = pattern.pattern if isinstance(pattern.pattern, str) else ""
    literals = re.findall(r"[A-Za-z]{2,12}", source)
    characters = sorted(set(re.sub(r"\\\\.", "", source)) - set("()[]{}|?*+^$"))
    return [*literals[:20], *characters[:40], " ", "\t", "\n", "a", "0", "/", ".", "-", ":", "_", "'", '"', "\\\\", "é"]


def hostile_texts(pattern: Any) -> Iterator[str]:
    for fragment in fragments(pattern):
        run = (fragment * (HOSTILE_CHARS // len(fragment) + 1))[:HOSTILE_CHARS]
        yield run
        yield run + "\x00"  # a run, then a character nothing expects: every start backtracks
        yield "x " + run + "!"


def assert_linear(pattern: Any, text: str, name: str) -> None:
    started = time.perf_counter()
    pattern.findall(text)
    pattern.match(text)
    elapsed = time.perf_counter() - started
    assert elapsed < BOUND_SECONDS, f"{name} took {elapsed:.2f} s on {len(text)} hostile characters ({text[:20]!r}...)"


def test_the_walk_finds_the_patterns_of_every_part() -> None:
    names = {name.rsplit(".", 1)[0] for name, _ in PATTERNS}
    for part in ("_shared.failure_words", "_shared.sanitize", "_shared.error_text", "proxy._classify", "check._judge"):
        assert f"mcp_errors.{part}" in names


@pytest.mark.parametrize(("name", "pattern"), PATTERNS, ids=[name for name, _ in PATTERNS])
def test_a_pattern_reads_runs_of_its_own_pieces_in_linear_time(name: str, pattern: Any) -> None:
    for text in hostile_texts(pattern):
        assert_linear(pattern, text, name)


MIXED_PIECES = [" ", "\t", "a", "0", ":", "/", "-", "'", "(", "error", "retry", "in "]


@settings(max_examples=25, deadline=None)
@given(
    data=st.data(),
    pieces=st.lists(
        st.sampled_from([" ", "\t", "a", "0", ":", "/", "-", "'", "(", "error", "retry", "in "]), min_size=1, max_size=4
    ),
    tail=st.sampled_from(["", "!", "\x00", " x", "]"]),
)
def test_mixed_runs_stay_linear_for_every_pattern(data: st.DataObject, pieces: list[str], tail: str) -> None:
    unit = "".join(pieces)
    text = (unit * (HOSTILE_CHARS // len(unit) + 1))[:HOSTILE_CHARS] + tail
    name, pattern = data.draw(st.sampled_from(PATTERNS))
    assert_linear(pattern, text, name)


RULES = Path(__file__).parents[1] / "docs" / "proxy-rules"
RULE_PATTERNS = sorted(
    (f"{path.name} {rule.label}", pattern)
    for path in RULES.glob("*.toml")
    for rule in load_rules(path).rules
    for pattern in (rule.text, rule.pattern)
    if pattern is not None
)


def led_by_its_head(pattern: Any) -> Iterator[str]:
    """Texts that start the pattern's literal head over and over, each followed by a run it half-matches."""
    head = re.match(r"[^\\()\[\]{}|?*+^$.]*", pattern.pattern.lstrip("^")).group()  # type: ignore[union-attr]
    for run in ("a" * 3000, "a:" * 1500, "é" * 3000, "' " * 1500):
        yield ((head + run) * (HOSTILE_CHARS // (len(head) + len(run)) + 1))[:HOSTILE_CHARS] + "\x00"


@pytest.mark.parametrize(("name", "pattern"), RULE_PATTERNS, ids=[name for name, _ in RULE_PATTERNS])
def test_a_shipped_rules_pattern_reads_hostile_text_in_linear_time(name: str, pattern: Any) -> None:
    for text in (*hostile_texts(pattern), *led_by_its_head(pattern)):
        assert_linear(pattern, text, name)
