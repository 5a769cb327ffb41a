"""Claude Code: its hooks in ``DIR/.claude/settings.local.json``, its inbox socket, its doctor.

A session's SessionStart hook starts a listener whose door is the session's inbox socket
(``CLAUDE_CODE_MESSAGING_SOCKET``): one JSON user message per prompt. With the session's
transcript, the door counts a prompt delivered once the transcript shows Claude Code admitted
it (`Intake`), and the listener follows the same file to post `seen`. The Stop hook (`--mode
stop` or `both`) hands prompts over as the block reason at a turn's end; SessionEnd stops the
listener. `hook install claude --mcp` registers `paneboard mcp` in ``DIR/.mcp.json``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from paneboard.agents.base import DoctorRequest, DoorRequest
from paneboard.agents.claude_transcript import ADMIT_WITHIN, Intake, Pace, user_texts
from paneboard.agents.hookfile import HookFileAgent
from paneboard.agents.mcpconfig import JsonServers
from paneboard.listener.doors.base import Door, HeldByAgent, Outcome
from paneboard.listener.doors.socket import SocketDoor, check_socket
from paneboard.listener.seen import Sighting
from paneboard.protocol.errors import BadInput, DoorFailed, DoorUnavailable
from paneboard.protocol.posts import Prompt
from paneboard.state.health import Check

SOCKET = "CLAUDE_CODE_MESSAGING_SOCKET"  # the session's inbox, in its hooks' environment


class ClaudeInboxDoor(SocketDoor):
    """One JSON user message on a Claude Code session's inbox socket.

    With the session's *transcript*, a prompt counts as delivered once the transcript shows
    it enqueued (Claude Code admitted it); one it held raises `HeldByAgent`; one it dropped
    or refused is `DoorFailed` naming Claude Code's reason (or `DoorUnavailable` for a
    standing refusal). Without one, the line written is all there is to go on. Either way the
    sends keep to Claude Code's bucket (`Pace`).
    """

    name = "claude-inbox"
    sent_noun = "message"

    def __init__(
        self,
        socket: Path,
        timeout: float,
        transcript: Path | None = None,
        project: Path | None = None,
        admit_within: float = ADMIT_WITHIN,
    ) -> None:
        super().__init__(socket, timeout)
        self.intake = None if transcript is None else Intake(transcript, project)
        self.pace = Pace()
        self.admit_within = admit_within

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> Outcome:
        if self.intake is None:
            await self.pace.take()
            return await super().deliver(prompt, text, agent)
        await self.intake.catch_up()
        verdict = self.intake.verdicts.get(prompt.id)  # it may have it already (a crash)
        if verdict is None:
            await self.pace.take()
            sent_at = time.time()
            await super().deliver(prompt, text, agent)
            verdict = await self.intake.wait_verdict(prompt.id, self.admit_within)
            if verdict is None:
                self._not_taken(sent_at)
        if verdict == "held":
            raise HeldByAgent(self.name, self.intake.held_why.get(prompt.id, "held"))
        return "accepted"

    def _not_taken(self, sent_at: float) -> None:
        assert self.intake is not None
        reason, for_good = self.intake.why_not(sent_at, self.admit_within)
        if reason.startswith("Claude Code dropped it: rate-limited"):
            self.pace.empty()
        raise (DoorUnavailable if for_good else DoorFailed)(self.name, reason)

    def _line(self, prompt: Prompt, text: str) -> bytes:
        return msgspec.json.encode({"type": "user", "message": {"role": "user", "content": text}})


@dataclass(frozen=True)
class Claude(HookFileAgent):
    def user_texts(self, record: dict[str, Any]) -> list[str]:
        return user_texts(record)

    def listen_args(
        self, data: Mapping[str, Any], environ: Mapping[str, str], parent: int
    ) -> tuple[list[str], dict[str, str]]:
        socket = environ.get(SOCKET)
        if not socket:
            raise BadInput(f"no {SOCKET} in this session")
        return ["--door", "claude-inbox", "--socket", socket, "--parent-pid", str(parent)], {}

    def open_door(self, request: DoorRequest) -> Door:
        path = request.socket or request.env.get(SOCKET)
        if not path:
            raise BadInput(f"--door claude-inbox needs --socket PATH or {SOCKET}")
        # The session's hooks run in its project folder, and so does a listener they start.
        seen_in = Path(request.transcript).absolute() if request.transcript else None
        return ClaudeInboxDoor(Path(path), min(request.timeout, 10.0), seen_in, request.project)

    def sighting(self, mark: Path, door: Door, transcript: Path | None) -> Sighting | None:
        """`seen` follows the transcript through the door's reader of it, when the door reads
        it (one reader of the file in the listener)."""
        intake = door.intake if isinstance(door, ClaudeInboxDoor) else None
        if intake is None or transcript is None or self.seen_source is None:
            return super().sighting(mark, door, transcript)
        return Sighting(mark, self.seen_source, transcript, self.user_texts, shared=intake.lines)

    def doctor(self, ask: DoctorRequest) -> list[Check]:
        return [self.inbox_check(ask.socket or ask.env.get(SOCKET)), *super().doctor(ask)]

    def inbox_check(self, socket: str | None) -> Check:
        """The doctor's check of the session's inbox socket *socket* (its door `self.door`):
        none (not inside a session), a bad one, or a good one."""
        if not socket:
            why = f"no inbox socket (not inside a {self.title} session, and no --socket)"
            return Check("warn", self.kind, why)
        try:
            check_socket(Path(socket), self.door or self.kind)
        except DoorUnavailable as exc:
            return Check("fail", self.kind, exc.reason)
        return Check("ok", self.kind, f"inbox socket {socket} (a socket, yours)")


CLAUDE = Claude(
    kind="claude",
    title="Claude Code",
    modes=("listen", "stop", "both"),
    default_mode="listen",
    hooks_file=".claude/settings.local.json",
    events={"session-start": "SessionStart", "stop": "Stop", "session-end": "SessionEnd"},
    door="claude-inbox",
    seen_source="claude-transcript",
    mcp=JsonServers(".mcp.json"),
    cli_argv_suffixes=("/claude", "cli.js"),
    no_transcript=" (delivered: the line was written; Claude Code's admission is not checked)",
)
