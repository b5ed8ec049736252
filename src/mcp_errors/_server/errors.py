"""The exceptions a tool raises to report a classified failure, and the taxonomy they follow.

Every tool failure falls in one of four categories; each asks the agent for a different
recovery, and only a transient one is worth resending unchanged:

    mcp.server.mcpserver.exceptions.ToolError    (the SDK's: a message, no category)
    └── ToolError                                 category given per instance
        ├── TransientError        transient    isRetryable: true   resend the same call after a wait
        ├── InputValidationError  validation   isRetryable: false  fix the input and call again
        ├── BusinessRuleError     business     isRetryable: false  take another path or escalate
        └── AccessDeniedError     permission   isRetryable: false  escalate or use another principal

- `transient`: timeout, service down, rate limit, busy database. The request is valid; the
  system was briefly unreachable. `retry_after_seconds` says how long to wait.
- `validation`: the arguments are malformed or out of range. `field_errors` name each one.
- `business`: a valid request that breaks a policy or rule (a refund over the limit).
- `permission`: the caller may not do this (missing role, refused credentials).

`isRetryable` answers one narrow question: can resending *this exact call* succeed?
`false` never means "stop": something must change first (the input, the request, or the
caller). `execution_state` says whether anything was applied before the failure, which is
what makes a resend of a write safe or not.

Exceptions a tool does not classify itself are classified for it by `_server/classify.py`
(timeouts are transient, HTTP 403 is permission, ...).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from mcp.server.mcpserver.exceptions import ToolError as _SDKToolError

from mcp_errors._shared.contract import CONTRACT_FIELDS, ErrorCategory, ExecutionState, FieldError

__all__ = [
    "AccessDeniedError",
    "BusinessRuleError",
    "InputValidationError",
    "ToolError",
    "TransientError",
]

_CODE: Final = re.compile(r"[A-Z][A-Z0-9_]*")


class ToolError(_SDKToolError):
    """A tool failure that tells the agent what went wrong and what to do next.

    Raise it from a tool of a server on which `mcp_errors.install` ran; the failure reaches
    the client as an `isError` result whose `structuredContent` carries the envelope. It
    subclasses the SDK's `ToolError`, so a server without `install` still shows the message.

    Args:
        message: A short headline, e.g. `"Refund exceeds policy limit"`.
        category: An `ErrorCategory` or its string value.
        description: What happened and what the agent should do next, in one or two
            sentences.
        code: A stable machine reason in UPPER_SNAKE, e.g. `"REFUND_LIMIT_EXCEEDED"`.
        retry_after_seconds: Transient only: the earliest sensible resend.
        field_errors: Validation only: one `FieldError` per bad argument.
        execution_state: Whether anything was applied before the failure.
        extra: More JSON fields for `structuredContent`, e.g. `{"orderId": "#12345"}`; not
            the contract's own field names.

    Raises:
        ValueError: If `retry_after_seconds` is given for a category other than transient
            or is negative, if `field_errors` are given for one other than validation, if
            `code` is not UPPER_SNAKE, or if `extra` uses a field name of the contract.

    Example:
        ```python
        from mcp_errors import ToolError, read_result, to_error_result

        try:
            raise ToolError(
                "Refund exceeds policy limit",
                category="business",
                description="Refunds above 500 need a manager. Escalate to a human with the details.",
                code="REFUND_LIMIT_EXCEEDED",
            )
        except ToolError as exc:
            outcome = read_result(to_error_result(exc))
        assert (outcome.category, outcome.code) == ("business", "REFUND_LIMIT_EXCEEDED")
        ```
    """

    default_category: ErrorCategory | None = None

    # Slots make the eight stores below cheaper than instance-dict stores (benchmarks/overhead.py's
    # adoption row); instances still have the `__dict__` every exception has.
    __slots__ = (
        "category",
        "code",
        "description",
        "execution_state",
        "extra",
        "field_errors",
        "message",
        "retry_after_seconds",
    )

    def __init__(
        self,
        message: str,
        *,
        category: ErrorCategory | str | None = None,
        description: str,
        code: str | None = None,
        retry_after_seconds: float | None = None,
        field_errors: Iterable[FieldError] = (),
        execution_state: ExecutionState | str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        # Type checks before enum calls: calling an enum class is slow next to them, and a
        # tool may raise these in a hot loop.
        default = self.default_category
        if category is None:
            if default is None:
                raise TypeError("ToolError needs a category")
            resolved = default
        else:
            resolved = category if type(category) is ErrorCategory else ErrorCategory(category)
            if default is not None and resolved is not default:
                raise TypeError(f"{type(self).__name__} is always {default.value}")
        self.message = message
        self.category = resolved
        self.description = description
        self.code = code
        self.retry_after_seconds = retry_after_seconds
        self.field_errors = field_errors if type(field_errors) is tuple else tuple(field_errors)
        self.execution_state = (
            execution_state
            if execution_state is None or type(execution_state) is ExecutionState
            else ExecutionState(execution_state)
        )
        self.extra: Mapping[str, Any] = dict(extra) if extra else {}
        if retry_after_seconds is not None:
            if resolved is not ErrorCategory.TRANSIENT:
                raise ValueError("retry_after_seconds only applies to transient errors")
            # The published schema requires both; failing here names the tool's bug instead
            # of sending a result that strict clients reject.
            if not (0 <= retry_after_seconds < math.inf):
                raise ValueError("retry_after_seconds must be a finite number >= 0")
        if code is not None and not _CODE.fullmatch(code):
            raise ValueError(f"code must be UPPER_SNAKE, e.g. REFUND_LIMIT_EXCEEDED, not {code!r}")
        if self.field_errors and resolved is not ErrorCategory.VALIDATION:
            raise ValueError("field_errors only apply to validation errors")
        if extra and not CONTRACT_FIELDS.isdisjoint(extra):
            taken = ", ".join(sorted(CONTRACT_FIELDS.intersection(extra)))
            raise ValueError(f"extra cannot set the contract's own fields ({taken}): use the arguments of that name")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, category={self.category.value!r}, code={self.code!r})"


class TransientError(ToolError):
    """A temporary failure (timeout, service down, rate limit): resend after a wait."""

    default_category = ErrorCategory.TRANSIENT


class InputValidationError(ToolError):
    """The arguments are malformed: fix them and call again."""

    default_category = ErrorCategory.VALIDATION


class BusinessRuleError(ToolError):
    """A valid request that breaks a policy or rule: take another path or escalate."""

    default_category = ErrorCategory.BUSINESS


class AccessDeniedError(ToolError):
    """The caller may not do this: escalate or use another principal."""

    default_category = ErrorCategory.PERMISSION
