"""The Stop-hook door: at a turn's end, the open, undelivered prompts as the hook's block reason.

The hook takes the pane lock without waiting and stays silent if a listener holds it: a
live listener delivers for this pane.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TextIO

from paneboard.agents import SEEN_SOURCES as SOURCES
from paneboard.agents import Agent
from paneboard.board.context import Context, executable, header
from paneboard.listener.seen import Sighting, due, receipt
from paneboard.listener.view import BoardView
from paneboard.protocol.compose import compose
from paneboard.protocol.errors import PaneLocked
from paneboard.protocol.posts import Delivered, Prompt, delivered_key
from paneboard.protocol.words import STOP_HOOK_DOOR
from paneboard.state import checkpoint
from paneboard.state.delivered import DeliveredKeys
from paneboard.state.files import read_private, write_atomic
from paneboard.state.fold import BoardState, open_for, prune
from paneboard.state.panelock import take_pane_lock

REASON_LIMIT = 64 * 1024


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
    kind, limit = agent.kind, agent.per_stop
    if ctx.store().has_posts() and _deliver_at_stop(ctx, kind, cooldown, out, limit, transcript):
        return
    if agent.idle_reply:
        out.write(agent.idle_reply + "\n")


def _deliver_at_stop(
    ctx: Context,
    agent: str,
    cooldown: float,
    out: TextIO,
    limit: int | None,
    transcript: str | None,
) -> bool:
    ctx.paths.ensure()  # the pane's lock and keys are local, whatever the store
    try:
        lock = take_pane_lock(ctx.paths.pane(ctx.agent, "lock"), ctx.board, ctx.agent)
    except PaneLocked:
        return False  # a live listener delivers for this pane
    try:
        keys = DeliveredKeys(ctx.paths.pane(ctx.agent, "delivered"))
        state = _note_seen(ctx, agent, Path(transcript), keys) if transcript else None
        if _cooling_down(ctx, cooldown):
            return False
        state = _agent_state(ctx) if state is None else state
        chosen, texts = _take(ctx, state, keys, limit)
        if not chosen:
            return False
        intro = (
            f"paneboard: {len(chosen)} prompt(s) for you, `{ctx.agent}`, "
            f"arrived on board `{ctx.board}`; handle them now."
        )
        out.write(json.dumps({"decision": "block", "reason": "\n\n".join([intro, *texts])}) + "\n")
        out.flush()  # handed over: now record it (a crash here costs a duplicate, never a loss)
        for prompt in chosen:
            keys.record(delivered_key(prompt.board, prompt.sender, prompt.id))
        ctx.store().append(
            [
                Delivered(**header(ctx.board, ctx.agent), prompt=p.id, door=STOP_HOOK_DOOR)
                for p in chosen
            ]
        )
        checkpoint.save(
            ctx.paths.pane(ctx.agent, "checkpoint"), ctx.store(), prune(state, time.time())
        )
        return True
    finally:
        lock.release()


def _note_seen(
    ctx: Context,
    agent: str,
    transcript: Path,
    keys: DeliveredKeys,
) -> BoardState | None:
    """Post `seen` for delivered prompts that *transcript* shows since the pane's mark.

    Returns the agent's state when it had to be read (only when a prompt id turned up).
    """
    source = SOURCES.get(agent, f"{agent}-transcript")
    sighting = Sighting(ctx.paths.pane(ctx.agent, "transcript"), source, transcript.absolute())
    try:
        ids = sighting.read_new()
        if not ids:
            return None
        state = _agent_state(ctx)
        ready, _ = due(state, ctx.agent, ids, lambda p: _key(p) in keys, time.time())
        posts = [receipt(ps, ctx.agent, "stop-hook", source) for ps in ready]
        if posts:
            ctx.store().append(posts)  # folded by the next reader: they follow state.position
        return state
    finally:
        sighting.close()


def _key(prompt: Prompt) -> str:
    return delivered_key(prompt.board, prompt.sender, prompt.id)


def _cooling_down(ctx: Context, cooldown: float) -> bool:
    """True if the last check was less than *cooldown* seconds ago; records this check otherwise."""
    stamp = ctx.paths.pane(ctx.agent, "stopcheck")
    now = time.time()
    try:
        last = float(read_private(stamp, 64) or b"0")
    except (OSError, ValueError):
        last = 0.0
    if cooldown and now - last < cooldown:
        return True
    write_atomic(stamp, f"{now}\n".encode())
    return False


def _agent_state(ctx: Context) -> BoardState:
    state = checkpoint.start_state(ctx.paths.pane(ctx.agent, "checkpoint"), ctx.store(), ctx.agent)
    with BoardView(ctx.store(), state) as view:
        view.refresh(keep=False)
    return view.state


def _take(
    ctx: Context, state: BoardState, keys: DeliveredKeys, limit: int | None
) -> tuple[list[Prompt], list[str]]:
    """The undelivered open prompts in catch-up order, composed, up to the reason's size limit
    (and to *limit* prompts, for the agents that take one per turn end)."""
    exe = executable()
    chosen: list[Prompt] = []
    texts: list[str] = []
    size = 0
    for ps in open_for(state, ctx.agent, time.time()):
        if delivered_key(ps.prompt.board, ps.prompt.sender, ps.prompt.id) in keys:
            continue
        text = compose(
            ps.prompt, exe=exe, home=str(ctx.home), agent=ctx.agent, store=ctx.store_options()
        )
        if chosen and (size + len(text) > REASON_LIMIT or len(chosen) == limit):
            break  # the rest wait for the next stop
        chosen.append(ps.prompt)
        texts.append(text)
        size += len(text)
    return chosen, texts
