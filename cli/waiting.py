"""Waiting on a prompt: `wait` and `ask`."""

from __future__ import annotations

from argparse import Namespace

import anyio

from paneboard.board.context import Context
from paneboard.board.post import PromptRequest, append
from paneboard.board.wait import WaitOutcome, wait_for
from paneboard.cli.posting import read_text
from paneboard.cli.show import emit
from paneboard.protocol.visible import visible


def print_outcomes(outcomes: list[WaitOutcome], *, json: bool) -> None:
    """Each outcome as a JSON line; else each answer, for a person to read."""
    for row in outcomes:
        if json:
            emit(row)
        elif row.answer is not None:
            print(visible(row.answer))  # a person reads it: escapes shown, never obeyed


def wait_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        done = anyio.run(wait_for, ctx, args.id, args.until, args.timeout)
    print_outcomes(done, json=args.json)


def ask_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        request = PromptRequest(
            [args.to],
            read_text(args.text, "prompt body"),
            priority=args.priority,
            notice=args.notice,
        )
        posted = append(ctx, request)
        done = anyio.run(wait_for, ctx, posted.id, "closed", args.timeout)
    print_outcomes(done, json=args.json)
