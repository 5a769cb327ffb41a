"""The one line a person or a client reads for a failed operation, for every front end."""

from __future__ import annotations


def unwrap(exc: BaseException) -> BaseException:
    """*exc* without the groups of one that task groups wrap it in (they say nothing to a user)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def error_message(exc: BaseException) -> str | None:
    """The one line a user reads for an error paneboard expects; None for any other."""
    from paneboard.protocol.errors import PaneboardError
    from paneboard.protocol.visible import one_line

    if isinstance(exc, PaneboardError):
        return one_line(f"paneboard: {exc}")
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return one_line(f"paneboard: {exc.strerror or exc}{where}")
    return None
