"""The Redis store (redis-py's asyncio client): keys shared by every replica, expired by Redis."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import anyio

from mcp_errors.stores._protocol import (
    Abandoned,
    Claim,
    Finished,
    IdempotencyStore,
    InProgress,
    Mismatch,
    Won,
    new_token,
    unreachable,
)

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisStore"]

# One string value per key. Running: "R<lease end, ms>:<token>:<fingerprint>".
# Finished: "D<fingerprint>:<answer bytes>". Tokens and fingerprints are hex, so ":" splits.
# Every script reads the clock of the Redis server, so replicas agree on leases.
_NOW: Final = "local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
_HELD_BY: Final = """
local cur = redis.call('GET', KEYS[1])
if not cur or string.sub(cur, 1, 1) ~= 'R' then return 0 end
local a = string.find(cur, ':', 2, true)
local b = string.find(cur, ':', a + 1, true)
if string.sub(cur, a + 1, b - 1) ~= ARGV[1] then return 0 end
"""
_CLAIM: Final = (
    _NOW
    + """
-- ARGV: fingerprint, token, lease ms, ttl ms
if redis.call('SET', KEYS[1], 'R' .. (now + tonumber(ARGV[3])) .. ':' .. ARGV[2] .. ':' .. ARGV[1],
              'NX', 'PX', ARGV[4]) then
  return {'won'}
end
local cur = redis.call('GET', KEYS[1])
if string.sub(cur, 1, 1) == 'D' then
  local sep = string.find(cur, ':', 2, true)
  if string.sub(cur, 2, sep - 1) ~= ARGV[1] then return {'mismatch'} end
  return {'finished', string.sub(cur, sep + 1)}
end
local a = string.find(cur, ':', 2, true)
local b = string.find(cur, ':', a + 1, true)
if string.sub(cur, b + 1) ~= ARGV[1] then return {'mismatch'} end
local left = tonumber(string.sub(cur, 2, a - 1)) - now
if left > 0 then return {'in_progress', tostring(left)} end
return {'abandoned'}
"""
)
_FINISH: Final = (
    _HELD_BY
    + """
-- ARGV: token, answer, ttl ms
local left = redis.call('PTTL', KEYS[1])
if left > tonumber(ARGV[3]) then left = tonumber(ARGV[3]) end
redis.call('SET', KEYS[1], 'D' .. string.sub(cur, b + 1) .. ':' .. ARGV[2], 'PX', math.max(left, 1))
return 1
"""
)
_RELEASE: Final = (
    _HELD_BY
    + """
redis.call('DEL', KEYS[1])
return 1
"""
)
_RENEW: Final = (
    _HELD_BY
    + _NOW
    + """
-- ARGV: token, lease ms
redis.call('SET', KEYS[1], 'R' .. (now + tonumber(ARGV[2])) .. string.sub(cur, a), 'KEEPTTL')
-- A running call's key outlives its time to live: expiring it would let a resend run it again.
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
"""
)


class RedisStore(IdempotencyStore):
    """Keys in Redis, for replicas on any number of hosts.

    A claim is `SET key value NX PX ttl` inside a Lua script that, when the key is taken,
    returns what it holds in the same atomic step; finishing, releasing and renewing are
    scripts that first check the claim's token, so only the winner can change its key.
    Redis expires keys itself after `ttl_seconds`. Durability is Redis's: without AOF
    (`appendfsync everysec` or `always`) a Redis restart forgets recent keys. Needs the
    `redis` extra (or `pip install "redis>=5.2"`); Redis 7 or later (`SET ... KEEPTTL`,
    and `TIME` in scripts).

    Args:
        url: A redis-py URL: `redis://host:6379/0`, `rediss://...` (TLS), `unix:///path`.
        prefix: Prepended to every key, to share a database with other data.
        **options: `ttl_seconds`, `lease_seconds`, `wait_seconds`, `grace_seconds`,
            `max_result_bytes`, `timeout_seconds` (see `IdempotencyStore`).

    Raises:
        ImportError: If redis-py is not installed.

    Example:
        ```python no-run
        from mcp.server.mcpserver import MCPServer
        from mcp_errors import install
        from mcp_errors.stores import RedisStore

        server = install(MCPServer("payments"), idempotency=RedisStore("redis://cache:6379/0"))
        ```
    """

    def __init__(self, url: str, *, prefix: str = "mcp-errors:idempotency:", **options: Any) -> None:
        super().__init__(**options)
        try:
            from redis.asyncio import Redis
        except ImportError as exc:
            raise ImportError(
                "RedisStore needs redis-py: pip install 'redis>=5.2' (the redis extra of mcp-errors)"
            ) from exc
        self.url = url
        self.prefix = prefix
        self._redis: Redis = Redis.from_url(url)
        self._claim = self._redis.register_script(_CLAIM)
        self._finish = self._redis.register_script(_FINISH)
        self._release = self._redis.register_script(_RELEASE)
        self._renew = self._redis.register_script(_RENEW)

    async def claim(self, key: str, fingerprint: str, *, lease_seconds: float, token: str | None = None) -> Claim:
        token = token or new_token()
        reply = await self._claim(
            keys=[self.prefix + key],
            args=[fingerprint, token, _ms(lease_seconds), _ms(max(self.ttl_seconds, lease_seconds))],
        )
        match reply[0]:
            case b"won":
                return Won(token)
            case b"finished":
                return Finished(bytes(reply[1]))
            case b"in_progress":
                return InProgress(int(reply[1]) / 1000)
            case b"mismatch":
                return Mismatch()
            case _:
                return Abandoned()

    async def finish(self, key: str, token: str, result: bytes) -> bool:
        return bool(await self._finish(keys=[self.prefix + key], args=[token, result, _ms(self.ttl_seconds)]))

    async def release(self, key: str, token: str) -> bool:
        return bool(await self._release(keys=[self.prefix + key], args=[token]))

    async def renew(self, key: str, token: str, *, lease_seconds: float) -> bool:
        return bool(await self._renew(keys=[self.prefix + key], args=[token, _ms(lease_seconds)]))

    async def ping(self) -> None:
        try:
            with anyio.fail_after(self.timeout_seconds):
                await self._redis.ping()
        except Exception as exc:  # any failure to reach Redis is the one answer
            raise unreachable(self.url, exc) from None

    def is_unwritable(self, error: BaseException) -> bool:
        """A read-only replica (redis-py's `ReadOnlyError`) or a full memory (`OOM command not allowed`)."""
        # Told by name and by Redis's words: redis-py need not be imported to judge.
        return type(error).__name__ == "ReadOnlyError" or str(error).startswith("OOM ") or super().is_unwritable(error)

    async def aclose(self) -> None:
        await self._redis.aclose()


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))
