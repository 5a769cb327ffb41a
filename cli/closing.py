"""Closing a prompt: `ack` and `answer` by a recipient, `cancel` by its sender."""

from __future__ import annotations

from argparse import Namespace

from paneboard.board import close
from paneboard.board.context import Context
from paneboard.cli.posting import read_text
from paneboard.cli.show import emit


def ack_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        done = close.ack(ctx, args.id, args.note)
    if args.json:
        emit(done)


def answer_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        done = close.answer(ctx, args.id, read_text(args.text, "answer"))
    if args.json:
        emit(done)


def cancel_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        done = close.cancel(ctx, args.id)
    if args.json:
        emit(done)
