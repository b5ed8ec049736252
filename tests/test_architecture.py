"""The layers of docs/architecture.md hold: who may import whom, no cycles, every module mapped."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "src" / "mcp_errors"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

# A module's layer is the folder it lives in: the three private folders are the layers of the
# core, and `stores` (the idempotency stores servers use) is server side. Everything else at
# the package's top (`check`, `demo`, `integrations`, `proxy`, `testing`, the CLI) is on top.
LAYER_OF_FOLDER: dict[str, str] = {"_shared": "shared", "_server": "server", "stores": "server", "_client": "client"}
MAY_IMPORT: dict[str, set[str]] = {
    "shared": {"shared"},
    "server": {"shared", "server"},
    "client": {"shared", "client"},
    "on top": {"shared", "server", "client", "on top"},
}
MAX_PRIVATE_MODULES_AT_THE_TOP = 8


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


def layer_of(name: str) -> str:
    return LAYER_OF_FOLDER.get(name.split(".")[0], "on top")


def test_at_most_a_few_private_modules_sit_at_the_top_of_the_package() -> None:
    # The layers are folders; what is left at the top is the entry points.
    at_top = [path.name for path in PACKAGE.glob("_*.py") if path.name not in ("__init__.py", "__main__.py")]
    assert len(at_top) <= MAX_PRIVATE_MODULES_AT_THE_TOP, at_top


def test_every_module_is_in_the_architecture_map() -> None:
    # Modules of the layer folders are named one by one (`_server/classify.py`); a public
    # subpackage is described as a whole, in its own row.
    text = ARCHITECTURE.read_text(encoding="utf-8")
    missing = []
    for name, _ in modules():
        top, _, rest = name.partition(".")
        wanted = f"`{top}/{rest}.py`" if top in ("_shared", "_server", "_client") and rest else f"`{top}"
        if wanted not in text:
            missing.append(name)
    assert missing == []


@pytest.mark.parametrize(("name", "path"), list(modules()), ids=[name for name, _ in modules()])
def test_a_module_imports_only_from_its_own_layer_or_below(name: str, path: Path) -> None:
    layer = layer_of(name)
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
    for package in ("check", "demo", "integrations", "stores", "proxy", "_shared", "_server", "_client"):
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


# Modules tested through a neighbour's test file rather than one of their own (paths under
# tests/): the proxy and the stores are tested whole (the stores by one conformance suite that
# every backend passes), the demo through what it serves and runs.
COVERED_BY: dict[str, str] = {
    "check._paths": "check/test_runner.py",
    "check._stdout": "check/test_runner.py",
    "check._wire": "check/test_runner.py",
    "demo._app": "demo/test_replicas.py",
    "demo._cli": "test_cli.py",
    "demo._db": "demo/test_refunds.py",
    "demo._faults": "demo/test_server.py",
    "demo._metrics": "demo/test_simulator.py",
    "demo._report": "demo/test_simulator.py",
    "proxy._gateway_config": "proxy/test_gateway.py",
    "proxy._middleware": "proxy/test_failures.py",
    "proxy._server": "proxy/test_passthrough.py",
    **{
        f"stores._{name}": "stores/test_stores.py"
        for name in ("memory", "postgres", "protocol", "redis", "sqlite", "url")
    },
}


def mirror_test(name: str) -> str:
    """The test file under tests/ that mirrors module `name`: its folder without the underscore.

    `_server.classify` -> `server/test_classify.py`, `check._judge` -> `check/test_judge.py`,
    `_cli` -> `test_cli.py`.
    """
    *folders, module = name.split(".")
    return "/".join([*(folder.lstrip("_") for folder in folders), f"test_{module.lstrip('_')}.py"])


def test_mirror_test_follows_the_source_tree() -> None:
    assert mirror_test("_server.classify") == "server/test_classify.py"
    assert mirror_test("check._judge") == "check/test_judge.py"
    assert mirror_test("_cli") == "test_cli.py"


def test_every_module_has_a_mirror_test() -> None:
    tests = ROOT / "tests"
    missing = []
    for name, path in modules():
        if path.name in ("__init__.py", "__main__.py"):
            continue
        wanted = COVERED_BY.get(name, mirror_test(name))
        if not (tests / wanted).exists():
            missing.append(f"{name} -> tests/{wanted}")
    assert missing == []


def test_every_test_folder_mirrors_a_source_folder() -> None:
    # A folder of test modules (a package, for pytest's sake: two folders may hold files of one
    # name) is named after the source folder it mirrors; helper folders hold no test modules.
    tests = ROOT / "tests"
    sources = {path.parent.relative_to(PACKAGE).as_posix().lstrip("_") for path in PACKAGE.rglob("__init__.py")}
    folders = {path.parent.relative_to(tests).as_posix() for path in tests.glob("*/test_*.py")}
    assert folders - sources - {"interop"} == set()
