"""Closing a prompt: `ack` and `answer` by a recipient, `cancel` by its sender."""

from __future__ import annotations

import time

from paneboard.board.context import Context, header
from paneboard.board.lookup import find_prompt
from paneboard.board.write import write
from paneboard.protocol.errors import BadInput
from paneboard.protocol.names import check_body
from paneboard.protocol.posts import Ack, Answer, Cancel
from paneboard.protocol.words import OPEN_STAGES
from paneboard.state.fold import PromptState, stage


def _closable(ctx: Context, ps: PromptState) -> None:
    pid = ps.prompt.id
    if ctx.agent not in ps.recipients:
        raise BadInput(
            f"agent `{ctx.agent}` is not a recipient of prompt {pid} "
            f"(sent to {', '.join(ps.prompt.to)})"
        )
    now_stage = stage(ps, ctx.agent, time.time())
    if now_stage not in OPEN_STAGES:
        raise BadInput(f"prompt {pid} is already {now_stage} for `{ctx.agent}`")


def ack(ctx: Context, ref: str, note: str | None = None) -> Ack:
    """Close prompt *ref* as its recipient; return the ack written."""
    ps, state = find_prompt(ctx, ref)
    _closable(ctx, ps)
    if note is not None:
        check_body("ack note", note)
    done = Ack(**header(ctx.board, ctx.agent), prompt_id=ps.prompt.id, note=note)
    write(ctx, done, state)
    return done


def answer(ctx: Context, ref: str, body: str) -> Answer:
    """Close prompt *ref* with *body* as its recipient; return the answer written."""
    ps, state = find_prompt(ctx, ref)
    _closable(ctx, ps)
    done = Answer(
        **header(ctx.board, ctx.agent), prompt_id=ps.prompt.id, body=check_body("answer", body)
    )
    write(ctx, done, state)
    return done


def cancel(ctx: Context, ref: str) -> Cancel:
    """Withdraw prompt *ref* as its sender; return the cancel written."""
    ps, state = find_prompt(ctx, ref)
    pid = ps.prompt.id
    if ps.prompt.sender != ctx.agent:
        raise BadInput(
            f"agent `{ctx.agent}` did not send prompt {pid} (`{ps.prompt.sender}` did); "
            "only its sender can cancel it"
        )
    now = time.time()
    if not any(stage(ps, name, now) in OPEN_STAGES for name in ps.recipients):
        raise BadInput(f"prompt {pid} is already closed for every recipient")
    done = Cancel(**header(ctx.board, ctx.agent), prompt_id=pid)
    write(ctx, done, state)
    return done
