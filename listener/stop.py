"""The Stop-hook door: at the end of the agent's turn, the prompts waiting for it, on stdout.

One pass of a `Deliverer` (listener/deliverer.py, the listener's own), run by `paneboard hook
stop` (hooks/stop.py hands it the agent's values). The hook takes the pane lock without waiting
and stays silent if a listener holds it: a live listener delivers for this pane. With the
agent's conversation file, it first posts `seen` for the prompts delivered earlier that the
file now shows as a user turn (the block reason it returned, run as the next turn). Then,
unless a check ran less than the cooldown ago, the undelivered open prompts in catch-up order
that the agent's policy lets through (board/screen.py, as the listener asks it), composed, go
out as one block reason (up to the reason's size limit, and to the door's *limit* prompts for
the agents that take one per turn end); once it is written and flushed they are recorded as
the listener records its deliveries (a crash in between costs a duplicate, never a loss), and
the checkpoint is kept, with the traffic (the rate and the loop limit). A prompt past the rate
waits for a later turn's end, once the window lets it out.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from paneboard.board.context import Context, executable
from paneboard.listener.deliverer import Composer, Deliverer
from paneboard.listener.seen import SeenTask, Sighting, Texts
from paneboard.protocol.compose import Provenance
from paneboard.protocol.errors import PaneLocked
from paneboard.protocol.posts import Prompt
from paneboard.protocol.words import STOP_HOOK_DOOR
from paneboard.state.files import read_private, write_atomic
from paneboard.state.panes.pane import Pane

__all__ = ["REASON_LIMIT", "StopDoor", "Transcript", "deliver_at_stop"]

REASON_LIMIT = 64 * 1024

Compose = Callable[[Prompt, Provenance], str]


@dataclass(frozen=True)
class Transcript:
    """The agent's conversation file (*path*), where `seen` is read: *source* names it in a
    receipt, *texts* gives a user-role record's texts."""

    source: str
    path: Path
    texts: Texts


class StopDoor:
    """The Stop hook's door: one block reason on *out*, of at most *limit* prompts (None: as
    many as fit in `REASON_LIMIT`)."""

    name = STOP_HOOK_DOOR

    def __init__(self, out: TextIO, limit: int | None) -> None:
        self.out = out
        self.limit = limit

    def hand_over(self, pane: Pane, texts: list[str]) -> None:
        """Write *texts* as *pane*'s block reason, flushed: once this returns they are handed
        over."""
        intro = (
            f"paneboard: {len(texts)} prompt(s) for you, `{pane.agent}`, "
            f"arrived on board `{pane.board}`; handle them now."
        )
        reason = "\n\n".join([intro, *texts])
        self.out.write(json.dumps({"decision": "block", "reason": reason}) + "\n")
        self.out.flush()


def deliver_at_stop(
    ctx: Context, door: StopDoor, cooldown: float, transcript: Transcript | None = None
) -> bool:
    """One Stop-hook pass for *ctx*'s pane through *door*; False if it wrote nothing (a
    listener holds the pane, the last check was less than *cooldown* seconds ago, or no prompt
    is let through)."""
    pane = Pane(ctx.paths, ctx.agent, ctx.store())
    try:
        pane.take_lock()
    except PaneLocked:
        return False  # a live listener delivers for this pane
    composer = Composer(executable(), ctx.home, ctx.agent, ctx.store_options())
    deliverer = Deliverer(pane, door, composer)
    try:
        if transcript is not None:
            _note_seen(deliverer, transcript)
        if _cooling_down(pane, cooldown):
            return False
        if not deliverer.opened:
            deliverer.open()
            deliverer.catch_up()
        return _hand_over(deliverer)
    finally:
        deliverer.close()
        pane.release()


def _note_seen(deliverer: Deliverer[StopDoor], transcript: Transcript) -> None:
    """Post `seen` for delivered prompts that *transcript* shows since the pane's mark (the
    board is read only when a prompt id turned up)."""
    mark = deliverer.pane.files.mark
    sighting = Sighting(mark, transcript.source, transcript.path.absolute(), transcript.texts)
    try:
        ids = sighting.read_new()
        if not ids:
            return
        deliverer.open()
        deliverer.catch_up()
        SeenTask(deliverer, sighting).found(ids)
    finally:
        sighting.close()


def _cooling_down(pane: Pane, cooldown: float) -> bool:
    """True if the last check was less than *cooldown* seconds ago; records this check otherwise."""
    stamp = pane.files.stopcheck
    now = time.time()
    try:
        last = float(read_private(stamp, 64) or b"0")
    except (OSError, ValueError):
        last = 0.0
    if cooldown and now - last < cooldown:
        return True
    write_atomic(stamp, f"{now}\n".encode())
    return False


def _hand_over(deliverer: Deliverer[StopDoor]) -> bool:
    """Write the block reason for the waiting prompts the policy admits (one handover, as the
    listener's: `Deliverer.gather`); False if none, or while a notice it gave is unread."""
    pane, door = deliverer.pane, deliverer.door
    if deliverer.notice_waits() is not None:
        deliverer.save_checkpoint()
        return False
    handover = deliverer.gather(deliverer.undelivered(), limit=door.limit, bound=REASON_LIMIT)
    if not handover.prompts:
        deliverer.save_checkpoint()  # what this stop read, and decided, counts at the next
        return False
    texts = handover.texts
    if handover.more:
        texts = [*texts, f"[paneboard] {handover.more} more wait, for a later turn's end."]
    door.hand_over(pane, texts)  # a crash before the keys are kept costs a duplicate, not a loss
    several = len(handover.prompts) > 1
    pane.record(
        handover.prompts,
        door.name,
        handover=handover.key if several else None,
        notices=handover.notices,
    )
    deliverer.save_checkpoint()
    return True
