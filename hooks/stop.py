"""The Stop-hook door: at a turn's end, the open, undelivered prompts as the hook's block reason.

The hook takes the pane lock without waiting and stays silent if a listener holds it: a
live listener delivers for this pane.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import TextIO

from paneboard.agents import Agent
from paneboard.board.context import Context, executable
from paneboard.board.view import BoardView
from paneboard.listener.doors.stop import deliver_at_stop
from paneboard.listener.seen import SeenTask, Sighting
from paneboard.protocol.compose import Provenance, compose
from paneboard.protocol.errors import PaneLocked
from paneboard.protocol.posts import Prompt
from paneboard.protocol.words import STOP_HOOK_DOOR
from paneboard.state.files import read_private, write_atomic
from paneboard.state.pane import Pane
from paneboard.state.screen import Screen
from paneboard.state.verdicts import Verdicts


def stop(
    ctx: Context,
    agent: Agent,
    cooldown: float,
    out: TextIO,
    transcript: str | None = None,
) -> None:
    """The Stop-hook door: write the open, undelivered prompts as a block reason, or nothing.

    With nothing to hand over it prints the agent's idle reply: Claude Code takes no output
    as "go ahead and stop"; Codex wants ``{"continue": true}``.
    With *transcript* (the hook input's ``transcript_path``) it first posts `seen` for the
    prompts delivered earlier that the agent's conversation now shows as a user turn (the
    block reason it returned, run as the next turn).
    """
    if ctx.store().has_posts() and _deliver_at_stop(ctx, agent, cooldown, out, transcript):
        return
    if agent.idle_reply:
        out.write(agent.idle_reply + "\n")


def _deliver_at_stop(
    ctx: Context, agent: Agent, cooldown: float, out: TextIO, transcript: str | None
) -> bool:
    pane = Pane(ctx.paths, ctx.agent, ctx.store())
    try:
        pane.take_lock()
    except PaneLocked:
        return False  # a live listener delivers for this pane
    try:
        screen = _note_seen(pane, agent, Path(transcript)) if transcript else None
        if _cooling_down(ctx, cooldown):
            return False
        if screen is None:
            screen = _agent_state(pane)
        text = partial(
            _compose,
            exe=executable(),
            home=str(ctx.home),
            agent=ctx.agent,
            store=ctx.store_options(),
        )
        return deliver_at_stop(pane, screen, text, out, agent.per_stop)
    finally:
        pane.release()


def _compose(
    prompt: Prompt,
    provenance: Provenance,
    *,
    exe: str,
    home: str,
    agent: str,
    store: tuple[tuple[str, str], ...],
) -> str:
    return compose(prompt, exe=exe, home=home, agent=agent, store=store, provenance=provenance)


def _note_seen(pane: Pane, agent: Agent, transcript: Path) -> Screen | None:
    """Post `seen` for delivered prompts that *transcript* shows since the pane's mark.

    Returns the agent's state, when it had to be read (only when a prompt id turned up).
    """
    source = agent.seen_source or f"{agent.kind}-transcript"
    sighting = Sighting(pane.files.mark, source, transcript.absolute(), agent.user_texts)
    try:
        ids = sighting.read_new()
        if not ids:
            return None
        screen = _agent_state(pane)
        SeenTask(pane, sighting, STOP_HOOK_DOOR).found(ids)
        return screen
    finally:
        sighting.close()


def _cooling_down(ctx: Context, cooldown: float) -> bool:
    """True if the last check was less than *cooldown* seconds ago; records this check otherwise."""
    stamp = ctx.paths.pane(ctx.agent).stopcheck
    now = time.time()
    try:
        last = float(read_private(stamp, 64) or b"0")
    except (OSError, ValueError):
        last = 0.0
    if cooldown and now - last < cooldown:
        return True
    write_atomic(stamp, f"{now}\n".encode())
    return False


def _agent_state(pane: Pane) -> Screen:
    """The agent's fold brought up to date, and the policy over it."""
    pane.start_state()  # with the traffic its checkpoint kept: the rate and loop of the board
    verdicts = Verdicts(pane.paths.dir, own=pane.agent)
    with BoardView(pane.store, pane.state, verdicts, pane.traffic) as view:
        view.refresh(keep=False)
    pane.remember_finished()
    return Screen(pane, STOP_HOOK_DOOR, verdicts, view.payload, pane.traffic)
