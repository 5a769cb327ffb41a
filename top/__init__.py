"""`paneboard top`: a live view of one board in the terminal (extra `tui`: Textual).

Textual is imported only here, when the command runs.
"""

from __future__ import annotations

import sys
from argparse import Namespace

from paneboard.board.context import Context
from paneboard.protocol.errors import BadInput
from paneboard.protocol.lazy import require_extra

__all__ = ["run_top", "top_command"]


def top_command(args: Namespace) -> None:
    """`paneboard top` (the parser names this function; the command line imports nothing here)."""
    with Context.from_args(args) as ctx:
        run_top(ctx, args.stale)


def run_top(ctx: Context, stale: float) -> None:
    """Show board *ctx* until `q`, SIGTERM, SIGHUP or SIGINT; the terminal is restored."""
    require_extra("textual", "tui", "`paneboard top`")
    if not all(f is not None and f.isatty() for f in (sys.__stdin__, sys.__stderr__)):
        raise BadInput("`paneboard top` needs a terminal (its input and standard error)")
    from paneboard.top.app import TopApp

    app = TopApp(ctx, stale=stale, own_process=True)
    app.run()
    if app.error is not None:
        raise app.error
    if app.return_code:
        raise BadInput(f"`paneboard top` stopped with exit code {app.return_code}")
