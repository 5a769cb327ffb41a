"""Waiting on a prompt: `wait` and `ask`."""

from __future__ import annotations

import time
from argparse import Namespace
from collections.abc import Awaitable, Callable

import anyio

from paneboard.board.context import Context
from paneboard.cli.board import emit, match_ref
from paneboard.listener.view import BoardView
from paneboard.protocol.errors import PromptClosed, WaitTimedOut
from paneboard.protocol.visible import visible
from paneboard.protocol.words import CLOSED_STAGES, ENDED_STAGES
from paneboard.state.fold import PromptState, stage


def _find(view: BoardView, ctx: Context, ref: str) -> PromptState:
    return view.state.prompts[match_ref(ctx, view.state.prompts, ref, "prompts")]


def _reached(ps: PromptState, until: str, now: float) -> bool:
    """True when every recipient is at *until*; raises `PromptClosed` if that cannot happen now."""
    wanted = {
        "closed": CLOSED_STAGES,
        "seen": ("seen", *CLOSED_STAGES),
        "delivered": ("delivered", "seen", *CLOSED_STAGES),
    }[until]
    stages = [stage(ps, name, now) for name in ps.recipients]
    for name, s in zip(ps.recipients, stages, strict=True):
        if s in ENDED_STAGES:
            why = f"{ps.recipients[name].reason} (by {name})" if s == "refused" else None
            raise PromptClosed(ps.prompt.id, s, why)
    return all(s in wanted for s in stages)


async def wait_for(
    ctx: Context,
    ref: str,
    until: str,
    limit: float | None,
    progress: Callable[[PromptState], Awaitable[None]] | None = None,
) -> PromptState:
    """Block until prompt *ref* is *until* (``delivered``, ``seen``, ``closed``) for every
    recipient; *progress* is awaited with the prompt each time the board changed and it is
    not there yet."""
    with BoardView(ctx.store()) as view:
        view.refresh()
        ps = _find(view, ctx, ref)
        try:
            with anyio.fail_after(limit):
                while not _reached(ps, until, time.time()):
                    if progress is not None:
                        await progress(ps)
                    expires = ps.prompt.expires
                    with anyio.move_on_after(
                        None if expires is None else max(0.0, expires - time.time())
                    ):
                        await view.wait_changed()
                    view.refresh()
        except TimeoutError:
            raise WaitTimedOut(ps.prompt.id, until, limit or 0) from None
        return ps


def outcomes(ps: PromptState) -> list[dict[str, str | None]]:
    """`wait --json`: one object per recipient, with its stage and answer."""
    now = time.time()
    return [
        {
            "prompt": ps.prompt.id,
            "recipient": name,
            "stage": stage(ps, name, now),
            "answer": r.answer,
        }
        for name, r in ps.recipients.items()
    ]


def print_outcome(ctx: Context, ps: PromptState) -> None:
    for row in outcomes(ps):
        if ctx.json:
            emit(row)
        elif row["answer"] is not None:
            print(visible(row["answer"]))  # a person reads it: escapes shown, never obeyed


def run_wait(ctx: Context, ref: str, until: str, timeout: float | None) -> None:
    print_outcome(ctx, anyio.run(wait_for, ctx, ref, until, timeout))


def run_ask(ctx: Context, to: str, words: list[str], priority: str, timeout: float | None) -> None:
    from paneboard.cli.posting import PromptRequest, post_prompt, read_text

    request = PromptRequest([to], read_text(words, "prompt body"), priority=priority)
    fields = post_prompt(ctx, request)
    print_outcome(ctx, anyio.run(wait_for, ctx, str(fields["id"]), "closed", timeout))


def wait_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        run_wait(ctx, args.id, args.until, args.timeout)


def ask_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        run_ask(ctx, args.to, args.text, args.priority, args.timeout)
