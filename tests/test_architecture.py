"""The layers of docs/architecture.md hold: who may import whom, no cycles, every module mapped."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "src" / "mcp_errors"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

# The layers, bottom to top, and what each may import. `check`, `demo` and `integrations`
# are matched as whole subpackages.
LAYERS: dict[str, set[str]] = {
    "contract": {
        "_contract",
        "_head",
        "_envelope",
        "_sanitize",
        "_duck",
        "_idempotency_keys",
        "_config",
        "_tool_failure",
        "_telemetry",
    },
    "server": {"_errors", "_classify", "_install", "_fastmcp", "_replay", "_fastmcp_replay", "stores"},
    "client": {"_client", "_outcome", "_budget", "_policy", "_render"},
    "multi-agent": {"_partial"},
    "on top": {"testing", "_cli", "_cli_params", "__main__", "check", "demo", "integrations", "proxy"},
}
MAY_IMPORT: dict[str, set[str]] = {
    "contract": {"contract"},
    "server": {"contract", "server"},
    "client": {"contract", "client"},
    "multi-agent": {"contract", "client", "multi-agent"},
    "on top": {"contract", "server", "client", "multi-agent", "on top"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        if name:  # the package's own __init__ re-exports everything; it is no layer
            yield name, path


def imports_of(path: Path) -> set[str]:
    """Every mcp_errors module `path` imports, at module level, deferred or for type checking."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
            if node.module == "mcp_errors":
                names = [f"mcp_errors.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found.update(name.removeprefix("mcp_errors.") for name in names if name.startswith("mcp_errors."))
    return found


def layer_of(name: str) -> str | None:
    top = name.split(".")[0]
    return next((layer for layer, members in LAYERS.items() if name in members or top in members), None)


def test_every_module_belongs_to_a_layer() -> None:
    unmapped = [name for name, _ in modules() if layer_of(name) is None]
    assert unmapped == [], "add these modules to a layer here and in docs/architecture.md"


def test_every_module_is_in_the_architecture_map() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    missing = [name for name, _ in modules() if f"`{name.split('.')[0]}" not in text]
    assert missing == []


@pytest.mark.parametrize(("name", "path"), list(modules()), ids=[name for name, _ in modules()])
def test_a_module_imports_only_from_its_own_layer_or_below(name: str, path: Path) -> None:
    layer = layer_of(name)
    assert layer is not None
    wrong = sorted(
        f"{imported} ({layer_of(imported)})"
        for imported in imports_of(path)
        if layer_of(imported) not in MAY_IMPORT[layer]
    )
    assert wrong == [], f"{name} ({layer}) imports from a layer it must not use"


def test_the_server_and_client_sides_never_import_each_other() -> None:
    # Implied by the table above; spelled out because it is the rule that matters most: an
    # agent's client must not need a server framework, nor a server the recovery policy.
    for name, path in modules():
        side = layer_of(name)
        other = {"server": "client", "client": "server"}.get(side or "")
        if other is not None:
            assert not [imported for imported in imports_of(path) if layer_of(imported) == other], name


def test_there_are_no_import_cycles() -> None:
    graph = {name: {imported for imported in imports_of(path) if imported != name} for name, path in modules()}
    # A subpackage's __init__ imports its own modules; the cycle rule is about the modules.
    for package in ("check", "demo", "integrations", "stores"):
        graph.pop(package, None)
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt in path:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt in graph:
                visit(nxt, [*path, nxt])

    for start in sorted(graph):
        visit(start, [start])
    assert cycles == []
