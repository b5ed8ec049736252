"""An outputSchema widened so that error results validate against it, with the standard library only.

`admit_error_envelope` is the one widening: the fastmcp and MCPServer adapters and the proxy
apply it (through `envelope.WideningCache`), and the gateway's stdio front
(`proxy/_front.py`), which lists tools before any heavy import, applies it too. So this
module imports nothing but the standard library.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = ["admit_error_envelope"]


def admit_error_envelope(output_schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Widen a tool's outputSchema so that its error results validate against it.

    Strict clients (TypeScript SDK v1, the Inspector) validate every `structuredContent`
    against `outputSchema`, errors included, and reject a mismatch before the model sees
    it. The widened schema is `{"type": "object", "anyOf": [success, {"required":
    ["errorCategory"]}]}`: an error result validates because it carries `errorCategory`,
    and nothing more is asked of it (the contract's full check is `ENVELOPE_SCHEMA`, which
    `mcp-errors check` enforces). The root keeps `"type": "object"` because some clients
    wrap results of non-object schemas.

    Args:
        output_schema: The tool's schema, or `None` when it declares none.

    Returns:
        The widened schema (the same content when already widened), or `None`.
    """
    if output_schema is None:
        return None
    schema = dict(output_schema)
    if any(_is_admission_branch(branch) for branch in _branches(schema)):
        return schema
    widened: dict[str, Any] = {"type": "object"}
    if schema.get("type") == "object":
        del schema["type"]  # said once, at the root: every byte is sent per tool, per listing
    # `$ref`s inside the success schema point at `#/$defs/...` (or draft 7's
    # `#/definitions/...`) of the root, and `$schema`, `$id` and the other document keys
    # only mean something at the root: they stay there when the schema moves into `anyOf`.
    for key in _DOCUMENT_KEYS:
        if key in schema:
            widened[key] = schema.pop(key)
    # Vendor keys describe the result as a whole: fastmcp's client reads
    # `x-fastmcp-wrap-result` at the root, and then the root's `properties.result` to type
    # the unwrapped value. `result` is no envelope field, so errors still pass.
    for key in [key for key in schema if key.startswith("x-")]:
        widened[key] = schema.pop(key)
    properties = schema.get("properties")
    if widened.get("x-fastmcp-wrap-result") and isinstance(properties, Mapping) and "result" in properties:
        widened["properties"] = {"result": properties["result"]}
    widened["anyOf"] = [schema, _admission_branch()]
    return widened


_DOCUMENT_KEYS: Final = ("$schema", "$id", "$vocabulary", "$anchor", "$dynamicAnchor", "$defs", "definitions")


def _branches(schema: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    branches = schema.get("anyOf")
    return [b for b in branches if isinstance(b, Mapping)] if isinstance(branches, list) else []


def _admission_branch() -> dict[str, Any]:
    return {"required": [_ADMISSION_FIELD]}


def _is_admission_branch(branch: Mapping[str, Any]) -> bool:
    # The titled branch is what earlier versions embedded (a proxy may widen their schemas).
    return (branch.get("required") == [_ADMISSION_FIELD] and len(branch) == 1) or branch.get("title") == ENVELOPE_TITLE


# The branch embedded in outputSchemas only *admits* error results, and is as small as the
# strict clients allow: tools/list sends it once per tool, and clients compile it. It is not
# the contract's check (ENVELOPE_SCHEMA, with the category values, the isRetryable invariant
# and the optional fields): a strict client that rejected a slightly wrong envelope would
# hide the error from the model, which is worse than the defect. It carries no `$id`: ajv
# (TypeScript SDK) refuses a second schema with the same one, and every tool embeds it.
_ADMISSION_FIELD: Final = "errorCategory"


ENVELOPE_TITLE: Final = "MCP tool error envelope"
"""The title of the branch earlier versions embedded (`ENVELOPE_SCHEMA["title"]`); still recognised as widened."""
