"""What `conftest.py` learns while collecting, for the tests that read it.

A module of its own, not `conftest`: `tests/interop/conftest.py` is a `conftest` too, and which
of the two `import conftest` finds depends on which a worker loaded first.
"""

from __future__ import annotations

import pytest

TASK_TESTS = pytest.StashKey[list[str]]()
"""The node ids of the `tasks` tests this session collected, for `tests/test_tasks_env.py`."""
