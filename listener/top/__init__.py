"""`paneboard top`: a live view of one board in the terminal (extra `tui`: Textual).

Textual is imported only here, when the command runs.
"""

from __future__ import annotations

import sys

from paneboard.listener.context import Context
from paneboard.protocol.errors import BadInput, PaneboardError

__all__ = ["run_top"]


def run_top(ctx: Context, stale: float) -> None:
    """Show board *ctx* until `q`, SIGTERM, SIGHUP or SIGINT; the terminal is restored."""
    try:
        import textual  # noqa: F401  # only to say what is missing, in one line
    except ImportError:
        fix = "pip install 'paneboard[tui]'"
        raise PaneboardError(f"`paneboard top` needs Textual: {fix}") from None
    if not all(f is not None and f.isatty() for f in (sys.__stdin__, sys.__stderr__)):
        raise BadInput("`paneboard top` needs a terminal (its input and standard error)")
    from paneboard.listener.top.app import TopApp

    app = TopApp(ctx, stale=stale, signals=True)
    app.run()
    if app.error is not None:
        raise app.error
