"""The coding agents' own doors: Claude Code's inbox socket and `codex queue`."""

from __future__ import annotations

import errno
import os
import re
import stat
import time
from collections.abc import Mapping
from pathlib import Path

import anyio
import msgspec
from anyio.abc import ByteStream

from paneboard.listener.codex import CodexThread, codex_home, thread_loaded
from paneboard.listener.doors.base import HeldByAgent, Outcome
from paneboard.listener.doors.intake import ADMIT_WITHIN, Intake, Pace
from paneboard.listener.doors.process import child_env, run_command
from paneboard.listener.doors.simple import _which
from paneboard.protocol.errors import DoorFailed, DoorUnavailable
from paneboard.protocol.posts import Prompt

ARG_MAX_ONE = 128 * 1024 - 1  # Linux refuses a single argument longer than this


def check_socket(path: Path, door: str = "claude-inbox") -> None:
    """A Unix socket owned by this user, and not a symlink; else `DoorUnavailable`."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise DoorUnavailable(door, f"no socket at {path} (is the session running?)") from None
    except OSError as exc:
        raise DoorUnavailable(door, f"cannot inspect {path}: {exc.strerror}") from exc
    if stat.S_ISLNK(st.st_mode):
        raise DoorUnavailable(door, f"{path} is a symlink; refusing to follow it")
    if not stat.S_ISSOCK(st.st_mode):
        raise DoorUnavailable(door, f"{path} is not a socket")
    if st.st_uid != os.geteuid():
        raise DoorUnavailable(
            door, f"{path} belongs to uid {st.st_uid}, not to this user ({os.geteuid()})"
        )


class SocketDoor:
    """A door that writes one JSON line on a Unix socket a session serves, then reads the
    session's one-line reply if it gives one (`_reply`); subclasses say what the line is."""

    name: str
    line_is = "line"  # what was "not taken within" the time
    ended = "the session has ended"  # why nobody listens any more
    replies = False  # the session answers: a timeout or a break after sending is "unknown"

    def __init__(self, socket: Path, timeout: float) -> None:
        self.socket = socket
        self.timeout = timeout

    def check(self) -> None:
        check_socket(self.socket, self.name)

    def _line(self, prompt: Prompt, text: str) -> bytes:
        raise NotImplementedError

    async def _reply(self, stream: ByteStream) -> bytes:
        return b""

    def _outcome(self, reply: bytes) -> Outcome:
        return "accepted"

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> Outcome:
        line = self._line(prompt, text) + b"\n"
        self.check()
        sent = False
        try:
            with anyio.fail_after(self.timeout):
                async with await anyio.connect_unix(str(self.socket)) as stream:
                    await stream.send(line)
                    sent = True
                    reply = await self._reply(stream)
        except TimeoutError:
            if sent and self.replies:
                return "unknown"  # the session has the text and may have taken it
            raise DoorFailed(
                self.name, f"the {self.line_is} was not taken within {self.timeout:g} s"
            ) from None
        except ConnectionRefusedError:
            raise DoorUnavailable(
                self.name, f"nobody listens on {self.socket} ({self.ended})"
            ) from None
        except (OSError, anyio.BrokenResourceError, anyio.EndOfStream) as exc:
            if getattr(exc, "errno", None) == errno.ENOENT:
                raise DoorUnavailable(self.name, f"no socket at {self.socket}") from None
            if sent and self.replies:
                return "unknown"
            raise DoorFailed(self.name, f"cannot write to {self.socket}: {exc}") from exc
        return self._outcome(reply)


class ClaudeInboxDoor(SocketDoor):
    """One JSON user message on a Claude Code session's inbox socket.

    With the session's *transcript*, a prompt counts as delivered once the transcript shows
    it enqueued (Claude Code admitted it); one it held raises `HeldByAgent`; one it dropped
    or refused is `DoorFailed` naming Claude Code's reason (or `DoorUnavailable` for a
    standing refusal). Without one, the line written is all there is to go on. Either way the
    sends keep to Claude Code's bucket (`Pace`).
    """

    name = "claude-inbox"
    line_is = "message"

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


_RECEIPT = re.compile(rb"Queued message \S+ for thread \S+")


class CodexQueueDoor:
    """`codex queue --thread ID --message TEXT`, which needs codex's own receipt to count."""

    name = "codex-queue"

    def __init__(self, thread: str, codex_bin: str, env: Mapping[str, str], timeout: float) -> None:
        self.thread = thread
        self.codex_bin = codex_bin
        self.env = child_env(env)
        self.timeout = timeout

    def executable(self) -> str:
        if os.sep in self.codex_bin:
            if os.access(self.codex_bin, os.X_OK) and os.path.isfile(self.codex_bin):
                return self.codex_bin
            raise DoorUnavailable(self.name, f"{self.codex_bin} is not an executable file")
        found = _which(self.codex_bin, self.env.get("PATH", os.defpath))
        if found is None:
            raise DoorUnavailable(self.name, f"no `{self.codex_bin}` on PATH")
        return found

    def check(self) -> None:
        if not self.thread:
            raise DoorUnavailable(self.name, "no thread id (give --thread or set CODEX_THREAD_ID)")
        self.executable()

    def codex_thread(self) -> CodexThread:
        return CodexThread(self.thread, codex_home(self.env))

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> Outcome:
        self.check()
        thread = self.codex_thread()
        if not thread_loaded(thread):
            reason = f"thread not running: no Codex process has thread {self.thread} loaded"
            raise DoorUnavailable(self.name, f"{reason} (no lock on {thread.lock})")
        if len(text.encode()) > ARG_MAX_ONE:
            raise DoorUnavailable(
                self.name,
                f"the prompt is {len(text.encode())} bytes; "
                f"one argument to codex can carry {ARG_MAX_ONE}",
            )
        argv = [self.executable(), "queue", "--thread", self.thread, "--message", text]
        done = await run_command(argv, b"", self.env, self.timeout)
        if done.timed_out:
            return "unknown"
        if done.returncode == 0 and _RECEIPT.search(done.output):
            return "accepted"
        if done.returncode == 0:
            raise DoorFailed(self.name, f"codex exited 0 without its receipt: {done.tail()}")
        raise DoorFailed(self.name, f"codex exited {done.returncode}: {_last_error(done.output)}")


def _last_error(output: bytes) -> str:
    """codex's own error line, without its harmless warnings."""
    lines = [
        ln
        for ln in output.decode(errors="replace").splitlines()
        if ln.strip() and not ln.startswith("WARNING:")
    ]
    return lines[-1].strip()[-300:] if lines else "(no output)"
