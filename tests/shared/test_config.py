"""Testing mode's process-wide switch (its public face, `mcp_errors.testing`, is tested in test_testing.py)."""

from __future__ import annotations

import threading

from mcp_errors._shared.config import is_testing, set_testing


def test_threads_switching_at_once_leave_the_mode_they_found() -> None:
    def flip() -> None:
        for _ in range(200):
            with set_testing():
                pass

    threads = [threading.Thread(target=flip) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not is_testing()
