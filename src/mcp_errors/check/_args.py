"""`--args FILE`: what a server's author tells the checker about real data.

```toml
roots = ["/srv/data"]          # paths the server works in: used for path arguments, never leaks

[tools.search_orders]
valid = { customer = "ada@example.com" }     # a call that reaches real data and succeeds
empty = { customer = "nobody@example.com" }  # a valid call that matches nothing
```

The same document as JSON: `{"roots": [...], "tools": {"search_orders": {"valid": {...},
"empty": {...}}}}`. A `.toml` file is read as TOML, anything else as JSON.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CallArguments", "ToolArguments", "load_call_arguments"]


@dataclass(frozen=True, slots=True)
class ToolArguments:
    """The calls the author gave for one tool."""

    valid: dict[str, Any] | None = None
    """Arguments for a call that reaches the tool's real work and succeeds."""
    empty: dict[str, Any] | None = None
    """Arguments for a valid call that matches nothing: its answer must be a success saying so."""


@dataclass(frozen=True, slots=True)
class CallArguments:
    """Everything an `--args` file says."""

    tools: dict[str, ToolArguments] = field(default_factory=dict[str, ToolArguments])
    roots: tuple[str, ...] = ()
    """Paths the server works in."""


def load_call_arguments(path: Path) -> CallArguments:
    """Read an `--args` file (TOML when it ends in `.toml`, JSON otherwise).

    Raises:
        OSError: The file cannot be read.
        ValueError: The file is not such a document; the message says where it is wrong.
    """
    text = path.read_text(encoding="utf-8")
    try:
        document: object = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not valid {'TOML' if path.suffix.lower() == '.toml' else 'JSON'}: {exc}") from None
    return parse_call_arguments(document)


def parse_call_arguments(document: object) -> CallArguments:
    """The `CallArguments` of an already parsed `--args` document.

    Raises:
        ValueError: The document is not shaped as the module docstring shows.
    """
    if not isinstance(document, Mapping):
        raise ValueError("the document must be a table (TOML) or an object (JSON)")
    unknown = sorted(set(document) - {"tools", "roots"})
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(map(repr, unknown))}: only 'roots' and 'tools' are read")
    roots = document.get("roots", [])
    if not isinstance(roots, list) or not all(isinstance(root, str) and root for root in roots):
        raise ValueError("'roots' must be a list of paths")
    tools = document.get("tools", {})
    if not isinstance(tools, Mapping):
        raise ValueError("'tools' must map tool names to their calls")
    parsed: dict[str, ToolArguments] = {}
    for name, calls in tools.items():
        if not isinstance(calls, Mapping):
            raise ValueError(f"tools.{name} must be a table with 'valid' and/or 'empty'")
        extra = sorted(set(calls) - {"valid", "empty"})
        if extra:
            raise ValueError(f"tools.{name}: unknown key(s) {', '.join(map(repr, extra))} (use 'valid', 'empty')")
        for kind in ("valid", "empty"):
            if kind in calls and not isinstance(calls[kind], Mapping):
                raise ValueError(f"tools.{name}.{kind} must be a table (TOML) or an object (JSON) of arguments")
        parsed[str(name)] = ToolArguments(
            valid=dict(calls["valid"]) if "valid" in calls else None,
            empty=dict(calls["empty"]) if "empty" in calls else None,
        )
    return CallArguments(tools=parsed, roots=tuple(roots))
