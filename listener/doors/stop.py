"""The Stop-hook door: at the end of the agent's turn, the prompts waiting for it, on stdout.

One pass of a `Pane`: the undelivered open prompts in catch-up order that the agent's policy
lets through (state/screen.py, as the listener asks it), composed, go out as
one block reason (up to the reason's size limit, and to *limit* prompts for the agents that
take one per turn end); once it is written and flushed they are recorded as the listener
records its deliveries (a crash in between costs a duplicate, never a loss), and the
checkpoint is kept, with the traffic (the rate and the loop limit). A prompt past the rate
waits for a later turn's end, once the window lets it out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TextIO

from paneboard.protocol.compose import Provenance
from paneboard.protocol.posts import Prompt
from paneboard.protocol.words import STOP_HOOK_DOOR
from paneboard.state.fold import PromptState
from paneboard.state.pane import Pane
from paneboard.state.screen import Screen

Compose = Callable[[Prompt, Provenance], str]

REASON_LIMIT = 64 * 1024


def deliver_at_stop(
    pane: Pane, screen: Screen, compose: Compose, out: TextIO, limit: int | None
) -> bool:
    """Write the block reason for *pane*'s waiting prompts that *screen* admits to *out*;
    False if none wait."""
    let_through = admitted(screen, pane.undelivered())
    chosen, texts = take(let_through, compose, limit)
    for ps, _ in let_through[len(chosen) :]:
        screen.traffic.take_back(ps.prompt.id)  # not handed over at this stop: no place taken
    if not chosen:
        pane.save_checkpoint()  # what this stop read, and decided, counts at the next
        return False
    intro = (
        f"paneboard: {len(chosen)} prompt(s) for you, `{pane.agent}`, "
        f"arrived on board `{pane.board}`; handle them now."
    )
    out.write(json.dumps({"decision": "block", "reason": "\n\n".join([intro, *texts])}) + "\n")
    out.flush()  # handed over: a crash before the keys are kept costs a duplicate, not a loss
    pane.record(chosen, STOP_HOOK_DOOR)
    pane.save_checkpoint()
    return True


def admitted(screen: Screen, pending: list[PromptState]) -> list[tuple[PromptState, Provenance]]:
    """Each of *pending* the policy lets through, with what the agent is told of it (the
    others are held or refused on the board)."""
    found = ((ps, screen.admit(ps)) for ps in pending)
    return [(ps, provenance) for ps, provenance in found if provenance is not None]


def take(
    pending: list[tuple[PromptState, Provenance]], compose: Compose, limit: int | None
) -> tuple[list[Prompt], list[str]]:
    """The first of *pending*, composed, that fit in one reason (and number at most *limit*)."""
    chosen: list[Prompt] = []
    texts: list[str] = []
    size = 0
    for ps, provenance in pending:
        text = compose(ps.prompt, provenance)
        if chosen and (size + len(text) > REASON_LIMIT or len(chosen) == limit):
            break  # the rest wait for the next stop
        chosen.append(ps.prompt)
        texts.append(text)
        size += len(text)
    return chosen, texts
