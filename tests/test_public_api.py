"""The public API: `mcp_errors.__all__` is sorted, complete, and every name in it imports."""

from __future__ import annotations
import __future__

import importlib
import subprocess
import sys
import types

import pytest

import mcp_errors


def isort_key(name: str) -> tuple[int, str]:
    # ruff's RUF022 order: CONSTANTS, then Classes, then functions.
    group = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return group, name


def public_names() -> set[str]:
    # The names are imported on first use (`mcp_errors.__getattr__`): what the package's
    # namespace holds is what was asked for so far, plus anything defined there by mistake.
    for name in mcp_errors.__all__:
        getattr(mcp_errors, name)
    return {
        name
        for name, value in vars(mcp_errors).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType | __future__._Feature)  # submodules are not API
    }


def test_all_is_sorted() -> None:
    assert mcp_errors.__all__ == sorted(mcp_errors.__all__, key=isort_key)


def test_all_lists_exactly_the_public_names() -> None:
    assert len(set(mcp_errors.__all__)) == len(mcp_errors.__all__)
    assert set(mcp_errors.__all__) == public_names()


@pytest.mark.slow  # a fresh interpreter
def test_importing_the_package_loads_no_name_and_no_sdk_until_one_is_used() -> None:
    code = (
        "import sys, mcp_errors; "
        "assert 'mcp' not in sys.modules, 'import mcp_errors loaded the SDK'; "
        "assert not set(mcp_errors.__all__) & set(vars(mcp_errors)); "
        "mcp_errors.install; assert 'mcp' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_version_is_the_installed_distributions() -> None:
    from importlib.metadata import version

    assert mcp_errors.__version__ == version("mcp-errors")
    assert "__version__" not in mcp_errors.__all__  # as in stamina and httpx: an attribute, not an export


@pytest.mark.slow  # a fresh interpreter
def test_every_listed_name_imports_in_a_fresh_interpreter() -> None:
    names = ", ".join(mcp_errors.__all__)
    subprocess.run([sys.executable, "-c", f"from mcp_errors import {names}"], check=True)


def test_the_foundation_names_other_code_relies_on_are_public() -> None:
    for name in (
        "ErrorCategory",
        "ToolError",
        "TransientError",
        "InputValidationError",
        "BusinessRuleError",
        "AccessDeniedError",
        "empty_result",
        "install",
        "to_error_result",
        "register_exception",
        "ENVELOPE_SCHEMA",
    ):
        assert name in mcp_errors.__all__
        assert getattr(importlib.import_module("mcp_errors"), name) is not None


def test_error_category_is_a_str_enum_of_the_four_values() -> None:
    assert [category.value for category in mcp_errors.ErrorCategory] == [
        "transient",
        "validation",
        "business",
        "permission",
    ]
    assert mcp_errors.ErrorCategory("transient") == "transient"


def test_the_stores_module_lists_exactly_its_public_names_and_shares_the_protocol() -> None:
    stores = importlib.import_module("mcp_errors.stores")
    for name in stores.__all__:
        getattr(stores, name)  # the backends are imported on first use (`stores.__getattr__`)
    public = {
        name
        for name, value in vars(stores).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType | __future__._Feature)
    }
    assert stores.__all__ == sorted(stores.__all__, key=isort_key)
    assert set(stores.__all__) == public
    assert stores.IdempotencyStore is mcp_errors.IdempotencyStore
    assert stores.open_store is mcp_errors.open_store
