"""GitHub Copilot CLI: reached through its Stop hook, in ``DIR/.github/hooks/paneboard.json``.

The file is paneboard's alone (uninstall removes it once empty); Copilot loads a project's
``.github/hooks/`` only in folders the person trusts. Its hook payloads are Claude-style; its
stop hook, with nothing to hand over, prints nothing; its session-start context is a
top-level ``additionalContext``. Its ``events.jsonl`` holds a ``user.message`` event for each
turn it ran (`seen`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from paneboard.agents.base import WakeRequest, top_level
from paneboard.agents.hookfile import StopHookAgent
from paneboard.agents.wake import resume_door
from paneboard.listener.doors.base import Door
from paneboard.listener.doors.resume import Mark, session_uuid
from paneboard.listener.seen import content_texts, field

TRUST = "Copilot CLI loads a project's .github/hooks/ only in folders you have trusted"


@dataclass(frozen=True)
class Copilot(StopHookAgent):
    def entry(self, action: str, command: str) -> dict[str, Any]:
        return {"hooks": [{"type": "command", "command": command, "timeout": 30}]}

    def context(self, text: str) -> str:
        return top_level(text)

    def user_texts(self, record: dict[str, Any]) -> list[str]:
        """A ``user.message`` event of its ``events.jsonl`` (not the ``hook.end`` event that
        holds the reason the Stop hook returned)."""
        if record.get("type") != "user.message":
            return []
        return content_texts(field(record, "data").get("content"))

    def wake_door(self, request: WakeRequest) -> Door:
        """`copilot --resume ID --output-format json --prompt=TEXT`: one headless turn of the
        session, appended to its ``events.jsonl`` (where `seen` is read). Copilot reads no
        prompt on its input, so the text is an argument. Admitted: its events
        ``user.message`` then ``assistant.turn_start`` (none of them names the session before
        the last; an id that matches no session is refused, exit 1). The id must be a whole
        UUID: its `--resume` also takes a prefix or a session's name."""
        session = session_uuid(request.session, self.title)
        argv = ["copilot", "--resume", session, "--output-format", "json"]
        marks: tuple[Mark, ...] = (
            lambda e: e.get("type") == "user.message",
            lambda e: e.get("type") == "assistant.turn_start",
        )
        return resume_door(request, "copilot-resume", self.title, argv, marks, "--prompt=")


COPILOT = Copilot(
    kind="copilot",
    title="Copilot CLI",
    modes=("stop",),
    default_mode="stop",
    hooks_file=".github/hooks/paneboard.json",
    events={"session-start": "SessionStart", "stop": "Stop"},
    seen_source="copilot-transcript",
    per_stop=1,
    own_file=True,
    notes=(TRUST,),
)
