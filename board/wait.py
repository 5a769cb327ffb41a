"""Waiting until a prompt reaches a stage for every recipient (`wait`, `ask`, the MCP tools)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import anyio
import msgspec

from paneboard.board.context import Context
from paneboard.board.lookup import match_ref
from paneboard.board.trust import verdicts_for
from paneboard.board.view import BoardView
from paneboard.protocol.errors import PromptClosed, WaitTimedOut
from paneboard.protocol.ids import check_ref
from paneboard.protocol.words import CLOSED_STAGES, ENDED_STAGES
from paneboard.state.fold import PromptState, stage

# The stages that count as having reached each stage waited for.
_REACHED = {
    "closed": CLOSED_STAGES,
    "read": ("read", *CLOSED_STAGES),
    "seen": ("seen", "read", *CLOSED_STAGES),
    "delivered": ("delivered", "seen", "read", *CLOSED_STAGES),
}

Progress = Callable[[PromptState], Awaitable[None]]


class WaitOutcome(msgspec.Struct, frozen=True):
    """Where a waited-on prompt ended for one recipient, with the answer if it gave one."""

    prompt: str
    recipient: str
    stage: str
    answer: str | None = None


def reached(ps: PromptState, until: str, now: float) -> bool:
    """True when every recipient is at *until*; raises `PromptClosed` if that cannot happen now."""
    stages = [stage(ps, name, now) for name in ps.recipients]
    for name, s in zip(ps.recipients, stages, strict=True):
        if s in ENDED_STAGES:
            why = f"{ps.recipients[name].reason} (by {name})" if s == "refused" else None
            raise PromptClosed(ps.prompt.id, s, why)
    return all(s in _REACHED[until] for s in stages)


async def wait_for(
    ctx: Context, ref: str, until: str, limit: float | None, progress: Progress | None = None
) -> list[WaitOutcome]:
    """Block until prompt *ref* is *until* (``delivered``, ``seen``, ``closed``) for every
    recipient, for at most *limit* seconds (`WaitTimedOut`); *progress* is awaited with the
    prompt each time the board changed and it is not there yet."""
    wanted = check_ref(ref)
    with BoardView(ctx.store(), verdicts=verdicts_for(ctx), verify=_starts(wanted)) as view:
        view.refresh()
        ps = view.state.prompts[match_ref(ctx, view.state.prompts, ref, "prompts")]
        try:
            with anyio.fail_after(limit):
                while not reached(ps, until, time.time()):
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
        return outcomes(ps, time.time())


def _starts(ref: str) -> Callable[[str], bool]:
    """Whether a prompt id is one *ref* may name (only their posts are verified)."""
    return lambda prompt_id: prompt_id.startswith(ref)


def outcomes(ps: PromptState, now: float) -> list[WaitOutcome]:
    """One outcome per recipient of *ps*, as of *now*."""
    return [
        WaitOutcome(ps.prompt.id, name, stage(ps, name, now), r.answer)
        for name, r in ps.recipients.items()
    ]
