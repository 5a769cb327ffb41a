"""`who`: the agents on a board, and whether a listener holds each pane."""

from __future__ import annotations

from argparse import Namespace

from paneboard.board.context import Context
from paneboard.board.text import who_line
from paneboard.board.who import who
from paneboard.cli.show import emit


def who_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        rows = who(ctx)
    for row in rows:
        if args.json:
            emit(row)
        else:
            print(who_line(row))
