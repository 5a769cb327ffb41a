"""Gemini CLI: reached through its Stop hook, ``AfterAgent`` in ``DIR/.gemini/settings.json``.

Its entries carry a matcher, a name and a timeout in milliseconds; its stop hook, with nothing
to hand over, answers ``{}``. It writes its chat to a file whose ``"type": "user"`` records
are the turns it ran (`seen`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from paneboard.agents.hookfile import StopHookAgent
from paneboard.listener.seen import content_texts


@dataclass(frozen=True)
class Gemini(StopHookAgent):
    def entry(self, action: str, command: str) -> dict[str, Any]:
        hook = {"name": f"paneboard-{action}", "type": "command", "command": command}
        return {"matcher": "*", "hooks": [{**hook, "timeout": 30_000}]}

    def user_texts(self, record: dict[str, Any]) -> list[str]:
        """A ``"type": "user"`` record of its chat file, its content at the top (its
        ``warning`` records echo a block reason too, and do not count)."""
        return content_texts(record.get("content")) if record.get("type") == "user" else []


GEMINI = Gemini(
    kind="gemini",
    title="Gemini CLI",
    modes=("stop",),
    default_mode="stop",
    hooks_file=".gemini/settings.json",
    events={"session-start": "SessionStart", "stop": "AfterAgent"},
    seen_source="gemini-transcript",
    idle_reply="{}",
    per_stop=1,
)
