"""`paneboard hook stop`: the Stop-hook door (listener/stop.py) with one agent's values."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from paneboard.agents import Agent
from paneboard.board.context import Context
from paneboard.listener.stop import StopDoor, Transcript, deliver_at_stop


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
    prompts delivered earlier that the agent's conversation now shows as a user turn.
    """
    door = StopDoor(out, agent.per_stop)
    source = agent.seen_source or f"{agent.kind}-transcript"
    seen = Transcript(source, Path(transcript), agent.user_texts) if transcript else None
    if ctx.store().has_posts() and deliver_at_stop(ctx, door, cooldown, seen):
        return
    if agent.idle_reply:
        out.write(agent.idle_reply + "\n")
