"""Claude Code: its hooks in ``DIR/.claude/settings.local.json``, its inbox socket, its doctor.

A session's SessionStart hook starts a listener whose door is the session's inbox socket
(``CLAUDE_CODE_MESSAGING_SOCKET``): one JSON user message per prompt. With the session's
transcript, the door counts a prompt delivered once the transcript shows Claude Code admitted
it (`Intake`), and the listener follows the same file to post `seen`. The Stop hook (`--mode
stop` or `both`) hands prompts over as the block reason at a turn's end; SessionEnd stops the
listener. `hook install claude --mcp` registers `paneboard mcp` in ``DIR/.mcp.json``.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from paneboard.agents import spawning
from paneboard.agents.base import DoctorRequest, DoorRequest, ListenOption, Spawned, SpawnRequest
from paneboard.agents.claude_transcript import ADMIT_WITHIN, Intake, Pace, user_texts
from paneboard.agents.hookfile import HookFileAgent
from paneboard.agents.mcpconfig import JsonServers
from paneboard.listener.doors.base import Door, HeldByAgent, Outcome
from paneboard.listener.doors.process import child_env
from paneboard.listener.doors.socket import SocketDoor, check_socket
from paneboard.protocol.errors import BadInput, DoorFailed, DoorUnavailable
from paneboard.protocol.posts import Prompt
from paneboard.protocol.visible import one_line
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
        path = request.value("--socket") or request.env.get(SOCKET)
        if not path:
            raise BadInput(f"--door claude-inbox needs --socket PATH or {SOCKET}")
        # The session's hooks run in its project folder, and so does a listener they start.
        seen_in = Path(request.transcript).absolute() if request.transcript else None
        return ClaudeInboxDoor(Path(path), min(request.timeout, 10.0), seen_in, request.project)

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

    # --- spawn and stop: a background session (`claude --bg`, `claude stop ID`) ---------------

    def spawn(self, request: SpawnRequest) -> Spawned:
        """`claude --bg` in the project, no first turn (the first prompt comes through the
        door): its short id, and the session's pid from its registry once it is there."""
        argv = [spawning.command("claude", request.env, self.title), "--bg"]
        done = _run(argv, request.project, request.env, BG_WITHIN)
        found = re.search(r"backgrounded · ([0-9A-Za-z_-]+)", done.stdout)
        if done.returncode != 0 or found is None:
            said = one_line(done.stderr.strip() or done.stdout.strip() or "(no output)")
            raise BadInput(f"claude --bg failed (exit {done.returncode}): {said}")
        job = found.group(1)
        return Spawned(job, f"claude attach {job}", _bg_pid(request.env, job))

    def stop_session(self, session: str, env: Mapping[str, str]) -> str:
        """`claude stop ID`; what it said (`BadInput` with its words when it fails)."""
        done = _run([spawning.command("claude", env, self.title), "stop", session], None, env, 30)
        said = one_line(done.stdout.strip() or done.stderr.strip() or "(no output)")
        if done.returncode != 0:
            raise BadInput(f"claude stop {session} failed (exit {done.returncode}): {said}")
        return said


BG_WITHIN = 60.0  # seconds `claude --bg` may take to start the session and print its id


def _run(
    argv: list[str], cwd: Path | None, env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """A Claude Code command; a session's own `CLAUDE_CODE_*` variables are not handed on."""
    try:
        return subprocess.run(
            argv,
            cwd=cwd,
            env=child_env(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BadInput(
            f"claude {shlex.join(argv[1:])} did not finish within {timeout:g} s"
        ) from None


def _bg_pid(env: Mapping[str, str], job: str, within: float = 5.0) -> int | None:
    """The pid of background session *job*, from Claude Code's registry of sessions
    (``~/.claude/sessions/PID.json``, ``"jobId"``); None if it does not show within *within*."""
    config = env.get("CLAUDE_CONFIG_DIR") or str(
        Path(env.get("HOME", "~")).expanduser() / ".claude"
    )
    deadline = time.monotonic() + within
    while True:
        for path in (Path(config) / "sessions").glob("*.json"):
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if isinstance(record, dict) and record.get("jobId") == job:
                pid = record.get("pid")
                return pid if isinstance(pid, int) and pid > 0 else None
        if time.monotonic() > deadline:
            return None
        time.sleep(0.1)


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
    listen_options=(
        ListenOption("--socket", f"the session's inbox socket (default ${SOCKET})", "PATH"),
    ),
)
