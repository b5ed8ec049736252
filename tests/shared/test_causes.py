"""Walking an exception's chain: outermost first, bounded, so that a cycle cannot hang an error path."""

from __future__ import annotations

from mcp_errors._shared.causes import MAX_LINKS, cause_or_context, causes, innermost


def chained() -> BaseException:
    try:
        try:
            raise OSError("socket")
        except OSError as exc:
            raise ValueError("bad value") from exc
    except ValueError:
        try:
            raise RuntimeError("while handling")  # a context, not a cause, on purpose
        except RuntimeError as outer:
            return outer


def test_a_chain_is_walked_outermost_first_through_causes_and_contexts() -> None:
    outer = chained()
    assert outer.__cause__ is None  # reached through `__context__`
    walked = [type(exc).__name__ for exc in causes(outer)]
    assert walked == ["RuntimeError", "ValueError", "OSError"]
    assert cause_or_context(chained()).__class__ is ValueError


def test_a_cycle_of_causes_ends_after_the_bound() -> None:
    first, second = ValueError("a"), ValueError("b")
    first.__cause__, second.__cause__ = second, first
    assert len(list(causes(first))) == MAX_LINKS
    assert innermost(first, behind=cause_or_context) in (first, second)


def test_nothing_to_walk_yields_nothing_and_a_lone_exception_is_its_own_innermost() -> None:
    assert list(causes(None)) == []
    alone = KeyError("k")
    assert innermost(alone, behind=cause_or_context) is alone


def test_a_custom_link_decides_where_the_walk_stops() -> None:
    inner = TimeoutError()
    group = ExceptionGroup("one", [inner])

    def member(exc: BaseException) -> BaseException | None:
        return exc.exceptions[0] if isinstance(exc, ExceptionGroup) else None

    assert innermost(group, behind=member) is inner
