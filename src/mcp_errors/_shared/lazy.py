"""The names a package re-exports from its private modules, imported on first use (PEP 562).

`import mcp_errors` (and with it the command's `--help`) must not load the MCP SDK, fastmcp
or a database driver, so each package's `__init__.py` names where its public names live and
this builds the module `__getattr__` and `__dir__` that import them when first read.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, homes: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's module-level `__getattr__` and `__dir__` for names kept in other modules.

    Args:
        package: The package's `__name__`.
        homes: Each name and its module: a dotted name, or a module of the package (`"_child"`).

    Returns:
        `(__getattr__, __dir__)`. A name is imported when first read, then kept in the
        package's namespace, so it is looked up once.

    Example:
        ```python
        from mcp_errors._shared.lazy import lazy_exports

        __getattr__, __dir__ = lazy_exports(__name__, {"ChildProcess": "_child"})
        ```
    """

    def attribute(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home if "." in home else f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def names() -> list[str]:
        module = sys.modules[package]
        return sorted({*vars(module), *getattr(module, "__all__", ())})

    return attribute, names
