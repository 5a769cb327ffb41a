"""Exit codes, named here and mapped from exceptions in one place."""

from __future__ import annotations

OK = 0
FAILED = 1  # bad input, unknown id, I/O error, a prompt cancelled or expired while waited on
USAGE = 2
TIMED_OUT = 3
PANE_LOCKED = 4


def for_exception(exc: BaseException) -> int:
    from paneboard.protocol.errors import PaneLocked, WaitTimedOut

    if isinstance(exc, PaneLocked):
        return PANE_LOCKED
    if isinstance(exc, WaitTimedOut):
        return TIMED_OUT
    return FAILED
