"""One line of text from outside: whitespace folded, never longer than asked, cut visibly."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mcp_errors._shared.text import one_line


def test_whitespace_runs_become_one_space_and_the_ends_are_trimmed() -> None:
    assert one_line("  a\n\tb   c \r\n") == "a b c"


def test_a_text_within_the_limit_is_kept_whole() -> None:
    assert one_line("abc def", 7) == "abc def"


def test_a_longer_text_is_cut_to_the_limit_with_an_ellipsis_last() -> None:
    assert one_line("abcdefgh", 5) == "abcd…"


@given(st.text(), st.one_of(st.none(), st.integers(min_value=1, max_value=50)))
def test_the_result_is_one_line_and_never_longer_than_the_limit(text: str, limit: int | None) -> None:
    shown = one_line(text, limit)
    assert shown == " ".join(shown.split())
    if limit is not None:
        assert len(shown) <= limit
    folded = " ".join(text.split())
    assert shown == folded or (shown.endswith("…") and folded.startswith(shown[:-1]))
