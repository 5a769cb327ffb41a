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

from paneboard.agents.base import (
    DoctorRequest,
    DoorRequest,
    ListenOption,
    Spawned,
    SpawnRequest,
    WakeRequest,
)
from paneboard.agents.claude_transcript import ADMIT_WITHIN, Intake, Pace, user_texts
from paneboard.agents.hookfile import HookFileAgent
from paneboard.agents.mcpconfig import JsonServers
from paneboard.listener.doors.base import Door, HeldByAgent, Outcome
from paneboard.listener.doors.process import alive, child_env, run_command
from paneboard.listener.doors.socket import SocketDoor, check_socket
from paneboard.listener.seen import Sighting
from paneboard.protocol.errors import BadInput, DoorFailed, DoorUnavailable
from paneboard.protocol.posts import Prompt
from paneboard.protocol.visible import one_line
from paneboard.state.failpoint import failpoint
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


_BACKGROUNDED = re.compile(r"backgrounded · ([0-9a-zA-Z]+)")


class ClaudeWakeDoor:
    """`claude --bg --resume SESSION TEXT`: the ended session, started again in the background
    in its project, with the prompt's text as its next turn.

    Claude Code 2.1.328 prints ``backgrounded · SHORTID`` and exits 0 within a second, for any
    session id, also one it has no conversation for; the turn shows in the session's
    transcript a few seconds later, as a user turn. So a prompt counts as delivered once the
    transcript shows it (`Intake`, as the inbox door reads it), a session without a transcript
    is gone (`DoorUnavailable`), and a resume whose turn never shows is `DoorFailed` with what
    Claude Code printed. A session that runs already (its registry file under
    ``~/.claude/sessions`` names it, and its process lives) is never resumed: Claude Code would
    start a copy of it.
    """

    name = "claude-wake"

    def __init__(self, request: WakeRequest, claude: str = "claude") -> None:
        self.session = request.session
        self.project = request.project
        self.env = child_env(request.env)
        self.timeout = request.timeout
        self.claude = claude
        self.transcript = None if request.transcript is None else Path(request.transcript)
        self.intake = None if self.transcript is None else Intake(self.transcript, self.project)
        self.spawned: Spawned | None = None  # the session it woke, once it has

    def check(self) -> None:
        if self.transcript is None or not self.transcript.is_file():
            where = "no --transcript" if self.transcript is None else f"no {self.transcript}"
            raise DoorUnavailable(self.name, f"session {self.session} is gone ({where})")

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> Outcome:
        self.check()
        assert self.intake is not None
        await self.intake.catch_up()
        if self.intake.verdicts.get(prompt.id) != "admitted":  # a wake killed halfway had it
            await self._resume(prompt, text)
        self.spawned = Spawned(self.session, f"claude attach {self.session[:8]}", self._running())
        return "accepted"

    async def _resume(self, prompt: Prompt, text: str) -> None:
        assert self.intake is not None
        running = self._running()
        if running is None:
            argv = [self.claude, "--bg", "--resume", self.session, text]
            done = await run_command(argv, b"", self.env, self.timeout, cwd=self.project)
            said = done.tail()
            if done.returncode != 0:
                code = "timed out" if done.timed_out else f"exited {done.returncode}"
                raise DoorFailed(self.name, f"claude --bg --resume {code}: {said}")
            if _BACKGROUNDED.search(said) is None or "started a copy" in said:
                raise DoorFailed(self.name, f"claude --bg --resume: {said}")
            failpoint("mid-wake")
        verdict = await self.intake.wait_verdict(prompt.id, self.timeout)
        if verdict == "admitted":
            return
        if running is not None:
            why = f"session {self.session} runs (pid {running}) and did not take it"
        else:
            why = f"the resumed session did not take it within {self.timeout:g} s"
        raise DoorFailed(self.name, why)

    def _running(self) -> int | None:
        """The pid of a live Claude Code process of this session (its registry file)."""
        config = self.env.get("CLAUDE_CONFIG_DIR") or str(
            Path(self.env.get("HOME", "~")) / ".claude"
        )
        for path in Path(config).expanduser().glob("sessions/*.json"):
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            pid = data.get("pid") if isinstance(data, dict) else None
            if (
                data.get("sessionId") == self.session
                and isinstance(pid, int)
                and alive(pid, zombie=False)
            ):
                return pid
        return None


@dataclass(frozen=True)
class Claude(HookFileAgent):
    def wake_session(self, request: DoorRequest) -> str | None:
        """Claude Code names a session's conversation file after its id."""
        return Path(request.transcript).stem if request.transcript else None

    def wake_door(self, request: WakeRequest) -> Door | None:
        return ClaudeWakeDoor(request)

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

    # --- spawn and stop: a background session (`claude --bg`, `claude stop ID`) ---------------

    def spawn(self, request: SpawnRequest) -> Spawned:
        """`claude --bg` in the project, no first turn (the first prompt comes through the
        door): its short id, and the session's pid from its registry once it is there."""
        from paneboard.agents import spawning  # here: a hook does not pay for it

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
        from paneboard.agents import spawning

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
    revives=True,
    no_transcript=" (delivered: the line was written; Claude Code's admission is not checked)",
    listen_options=(
        ListenOption("--socket", f"the session's inbox socket (default ${SOCKET})", "PATH"),
    ),
)
