"""`top`: a live view of one board in the terminal (extra `tui`, imported only here)."""

from __future__ import annotations

from argparse import Namespace

from paneboard.listener.context import Context


def top_command(args: Namespace) -> None:
    from paneboard.listener.top import run_top

    run_top(Context.from_args(args), args.stale)
