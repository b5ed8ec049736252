"""Where an idempotency key travels: names shared by the client policy and the servers."""

from typing import Final

IDEMPOTENCY_KEY_META: Final = "mcp-errors/idempotencyKey"
"""Key in the `tools/call` request's `params._meta` that carries the idempotency key.

The client policy creates one key per logical operation and sends the same key on every
resend of it."""

REPLAYED_META: Final = "mcp-errors/replayed"
"""Key in a `tools/call` result's `_meta`, `true` when the server answered a repeated
idempotency key from its store instead of running the tool (the first answer, or what the
key holds instead: an unknown outcome, an answer too large to keep): resending the same key
again gets the same answer."""

HONOURS_IDEMPOTENCY_META: Final = "mcp-errors/honoursIdempotencyKey"
"""Key in a tool's `_meta` (from `tools/list`), `true` when the server replays the first
result for a repeated idempotency key, so a resend of a write cannot apply it twice."""
