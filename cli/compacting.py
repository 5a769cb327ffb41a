"""`compact`: rewrite the board's log keeping only open prompts and the posts about them."""

from __future__ import annotations

from argparse import Namespace

from paneboard.board.context import Context
from paneboard.board.read import compact
from paneboard.cli.show import emit


def compact_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        done = compact(ctx, archived=args.archive)
    if args.json:
        emit(done)
    else:
        total = done.kept + done.dropped
        print(
            f"board `{ctx.board}`: kept {done.kept} of {total} posts, "
            f"{done.before_bytes:,} -> {done.after_bytes:,} bytes, in {done.seconds:.2f} s"
        )
