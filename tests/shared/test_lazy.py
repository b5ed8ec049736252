"""The packages' public names are imported when first read, once, and listed by `dir()`."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

from mcp_errors._shared.lazy import lazy_exports


def test_a_name_is_imported_on_first_read_and_kept_in_the_package() -> None:
    script = (
        "import sys, mcp_errors.demo as demo\n"
        "before = 'mcp_errors.demo._faults' in sys.modules\n"
        "config = demo.FaultConfig\n"
        "print(before, 'mcp_errors.demo._faults' in sys.modules, vars(demo)['FaultConfig'] is config)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "True"]


def test_a_name_the_package_does_not_export_is_an_attribute_error() -> None:
    package = types.ModuleType("lazy_probe")
    sys.modules[package.__name__] = package
    try:
        attribute, _ = lazy_exports(package.__name__, {"JSONDecoder": "json.decoder"})
        with pytest.raises(AttributeError, match="no attribute 'JSONEncoder'"):
            attribute("JSONEncoder")
        assert attribute("JSONDecoder") is json.JSONDecoder
    finally:
        del sys.modules[package.__name__]


def test_dir_lists_every_exported_name_before_any_is_read() -> None:
    package = types.ModuleType("lazy_probe")
    package.__all__ = ["ChildProcess"]  # type: ignore[attr-defined]  # set as a package's own __all__
    sys.modules[package.__name__] = package
    try:
        _, names = lazy_exports(package.__name__, {"ChildProcess": "mcp_errors.proxy._child"})
        assert "ChildProcess" in names()
    finally:
        del sys.modules[package.__name__]
