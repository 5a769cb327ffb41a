"""Gemini CLI: reached through its Stop hook, ``AfterAgent`` in ``DIR/.gemini/settings.json``.

Its entries carry a matcher, a name and a timeout in milliseconds; its stop hook, with nothing
to hand over, answers ``{}``. It writes its chat to a file whose ``"type": "user"`` records
are the turns it ran (`seen`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from paneboard.agents.base import WakeRequest
from paneboard.agents.hookfile import StopHookAgent
from paneboard.agents.wake import resume_door
from paneboard.listener.doors.base import Door
from paneboard.listener.doors.resume import Mark, session_uuid
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

    def wake_door(self, request: WakeRequest) -> Door:
        """`gemini --resume ID -o stream-json` with the text on its input (headless, as its
        input is no terminal): one turn of the session, appended to its chat file (where
        `seen` is read). Admitted: its events ``init`` with that session id, then the
        ``message`` of role ``user``."""
        session = session_uuid(request.session, self.title)
        argv = ["gemini", "--resume", session, "-o", "stream-json"]
        marks: tuple[Mark, ...] = (
            lambda e: e.get("type") == "init" and e.get("session_id") == session,
            lambda e: e.get("type") == "message" and e.get("role") == "user",
        )
        return resume_door(request, "gemini-resume", self.title, argv, marks)


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
