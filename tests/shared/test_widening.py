"""The outputSchema widening, with the standard library only (the gateway front lists tools before heavy imports)."""

from __future__ import annotations

import subprocess
import sys

from mcp_errors._shared import envelope, widening
from mcp_errors._shared.contract import ENVELOPE_SCHEMA


def test_the_widening_is_the_one_the_envelope_module_offers() -> None:
    assert envelope.admit_error_envelope is widening.admit_error_envelope


def test_a_schema_widened_by_an_earlier_version_s_titled_branch_is_recognised() -> None:
    assert ENVELOPE_SCHEMA["title"] == widening.ENVELOPE_TITLE
    earlier = {"type": "object", "anyOf": [{"properties": {}}, {"title": ENVELOPE_SCHEMA["title"]}]}
    assert widening.admit_error_envelope(earlier) == earlier


def test_importing_the_widening_imports_neither_pydantic_nor_the_sdk() -> None:
    code = "import sys, mcp_errors._shared.widening; print(sorted({'pydantic', 'mcp', 'mcp_types'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "[]"
