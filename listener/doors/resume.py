"""The wake door: an ended session continued by the agent's own resume command, headless.

Every agent whose CLI continues a session by id with a prompt as its next turn (`codex exec
resume ID -`, `opencode run --session ID`, `qwen --resume ID`) is woken the same way, by
`ResumeDoor`: its command runs in the session's project, in a process group of its own, the
text on its standard input, its output (JSON events, one a line) written to a file in the
paneboard home (``wake/DOOR-SESSION.out``, which a person can read afterwards). The door reads
that file as it grows and returns ``accepted`` once the agent's own events say it took the text as
a turn of that very session (`Resume.marks`, in order: the session it resumed, then the turn
starting); the agent then runs its turn to its end on its own, and the door does not wait for
it, but names its process (`spawned`): the asleep listener falls asleep again once it ends.
The turn's environment names the session it resumes (`WOKEN_ENV`). A command that exits
before admitting the text raises `DoorFailed` with the agent's own last words (a missing
session, a bad id); one that says nothing within the time limit is killed, and the outcome is
``unknown`` (it may have taken the text).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from paneboard.listener.doors.base import Outcome
from paneboard.listener.doors.process import OUTPUT_KEPT, WOKEN_ENV, child_env
from paneboard.listener.doors.simple import _which
from paneboard.protocol.errors import BadInput, DoorFailed, DoorUnavailable
from paneboard.protocol.posts import Prompt

__all__ = [
    "WOKEN_ENV",
    "Mark",
    "Resume",
    "ResumeDoor",
    "Started",
    "own_words",
    "session_uuid",
    "session_word",
]

ARG_MAX_ONE = 128 * 1024 - 1  # Linux refuses a single argument longer than this
POLL = 0.05  # seconds between two looks at the command's output
Mark = Callable[[Mapping[str, Any]], bool]  # is this event of the agent's the one waited for?
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_FAILED = re.compile(r"error|not found", re.IGNORECASE)
_SESSION_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def session_word(session: str, title: str) -> str:
    """*session* if it can be an agent's session id on a command line and in a file name
    (letters, digits, ``_ . -``, not starting with ``-``); `BadInput` otherwise."""
    if not _SESSION_WORD.fullmatch(session):
        raise BadInput(f"not a {title} session id: {session!r}")
    return session


def session_uuid(session: str, title: str) -> str:
    """*session* if it is a UUID, as the agent's session ids are; `BadInput` otherwise (the
    agent's resume would take another word as a session's title)."""
    if not _UUID.fullmatch(session):
        raise BadInput(f"not a {title} session id (a UUID): {session[:80]!r}")
    return session


@dataclass(frozen=True)
class Resume:
    """One agent's resume of session *session*: its command *argv* (the binary first, found on
    the environment's PATH unless a path), run in *project* with *env*, reading the prompt's
    text on its standard input (byte for byte, of any length: an argument would be bounded,
    and some CLIs quote one), or as *prompt_flag* ``=TEXT`` for a CLI that reads no input;
    *marks* the events that show it admitted the text, in order (a line of its output that is
    no JSON object is the event ``{"line": TEXT}``)."""

    name: str  # the door's name: `codex-resume`
    title: str  # the agent as a person knows it: "Codex"
    session: str
    argv: Sequence[str]
    marks: Sequence[Mark]
    project: Path
    env: Mapping[str, str]
    home: Path
    timeout: float
    prompt_flag: str = ""  # for a CLI that reads no input: the text as `FLAG=TEXT` instead

    def output(self) -> Path:
        """Where the command's output goes: ``HOME/wake/DOOR-SESSION.out``."""
        return self.home / "wake" / f"{self.name}-{self.session}.out"


@dataclass(frozen=True)
class Started:
    """The session a wake resumed, and the process running its turn (the asleep listener falls
    asleep again once it ends)."""

    session: str
    pid: int


class ResumeDoor:
    """Runs an agent's resume command (`Resume`) with a prompt's text as the session's next
    turn; ``accepted`` once the agent's events admit it."""

    def __init__(self, resume: Resume) -> None:
        self.resume = resume
        self.name = resume.name
        self.env = {**child_env(resume.env), WOKEN_ENV: resume.session}
        self.process: subprocess.Popen[bytes] | None = None  # the last resume started
        self.spawned: Started | None = None  # the last resume that took its turn

    def executable(self, word: str) -> str:
        if os.sep in word:
            if os.path.isfile(word) and os.access(word, os.X_OK):
                return word
            raise DoorUnavailable(self.name, f"{word} is not an executable file")
        found = _which(word, self.env.get("PATH", os.defpath))
        if found is None:
            raise DoorUnavailable(self.name, f"no `{word}` on PATH")
        return found

    def check(self) -> None:
        self.executable(self.resume.argv[0])
        if not self.resume.project.is_dir():
            raise DoorUnavailable(self.name, f"the session's folder {self.resume.project} is gone")

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> Outcome:
        self.check()
        argv = list(self.resume.argv)
        argv[0] = self.executable(argv[0])
        if self.resume.prompt_flag:
            if len(text.encode()) + len(self.resume.prompt_flag) > ARG_MAX_ONE:
                size = len(text.encode())
                why = f"the prompt is {size} bytes; one argument can carry {ARG_MAX_ONE}"
                raise DoorUnavailable(self.name, why)
            argv.append(self.resume.prompt_flag + text)
            text = ""
        out = self.resume.output()
        out.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        given = out.with_suffix(".in")  # the text, read by the agent as its standard input
        flags = os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        fd_in = os.open(given, os.O_RDWR | flags, 0o600)
        try:
            data = memoryview(text.encode())
            while data:
                data = data[os.write(fd_in, data) :]
            os.lseek(fd_in, 0, os.SEEK_SET)
            given.unlink()  # the agent holds it open; nothing of the text stays on disk
            fd_out = os.open(out, os.O_WRONLY | flags, 0o600)
            try:
                # Popen, not anyio's process: the agent runs its turn on past this call, and
                # asyncio's process transport kills its child when it is closed
                proc = subprocess.Popen(  # noqa: ASYNC220
                    argv,
                    cwd=self.resume.project,
                    env=self.env,
                    stdin=fd_in,
                    stdout=fd_out,
                    stderr=fd_out,
                    start_new_session=True,
                )
            except (OSError, ValueError) as exc:  # ValueError: a NUL in an argument
                raise DoorFailed(self.name, f"{self.resume.title} did not start: {exc}") from exc
            finally:
                os.close(fd_out)
        finally:
            os.close(fd_in)
        self.process = proc
        try:
            outcome = await self._admitted(proc, out)
            self.spawned = Started(self.resume.session, proc.pid)
            return outcome
        finally:
            if proc.returncode is None:  # it runs its turn on: reaped when it ends
                threading.Thread(target=proc.wait, daemon=True).start()

    async def _admitted(self, proc: subprocess.Popen[bytes], out: Path) -> Outcome:
        marks, title = list(self.resume.marks), self.resume.title
        seen = Reader(out)
        deadline = time.monotonic() + self.resume.timeout
        while True:
            code = proc.poll()
            for event in seen.events():
                if marks and marks[0](event):
                    marks.pop(0)
            if not marks:
                return "accepted"
            if code is not None:
                words = own_words(seen.text())
                if code == 0:
                    raise DoorFailed(
                        self.name,
                        f"{title} exited 0 without taking the turn in session "
                        f"{self.resume.session}: {words}",
                    )
                raise DoorFailed(self.name, f"{title} exited {code}: {words}")
            if time.monotonic() > deadline:
                _kill_group(proc.pid)
                return "unknown"
            await anyio.sleep(POLL)


class Reader:
    """The command's output file as it grows: its events, line by line, and the last of its
    text (what its own words are taken from)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0  # bytes of the file read so far
        self.partial = b""  # a line not ended yet
        self.tail = b""  # the last OUTPUT_KEPT bytes read

    def _read(self) -> bytes:
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                chunk = f.read(OUTPUT_KEPT)
        except OSError:
            return b""
        self.offset += len(chunk)
        self.tail = (self.tail + chunk)[-OUTPUT_KEPT:]
        return chunk

    def events(self) -> list[dict[str, Any]]:
        """The events of the lines ended since the last look, to the end of the file."""
        found = []
        while chunk := self._read():
            data = self.partial + chunk
            end = data.rfind(b"\n") + 1
            self.partial = data[end:][-OUTPUT_KEPT:]  # a longer line is no event of interest
            for line in data[:end].splitlines():
                try:
                    event = json.loads(line)
                except ValueError:
                    event = None
                # a line that is no JSON object (a CLI that prints text): {"line": its text}
                found.append(event if isinstance(event, dict) else {"line": _words(line)})
        return found

    def text(self) -> str:
        self.events()
        return self.tail.decode(errors="replace")


def _words(line: bytes) -> str:
    return _ANSI.sub("", line.decode(errors="replace")).strip()


def own_words(output: str, limit: int = 300) -> str:
    """The agent's own words in *output*: its last line saying "error" or "not found", else its
    last line that is neither a JSON event nor a warning, else its last line."""
    lines = [ln for ln in (_ANSI.sub("", raw).strip() for raw in output.splitlines()) if ln]
    words = [ln for ln in lines if not ln.startswith("{") and not ln.lower().startswith("warning")]
    words = [ln for ln in words if _FAILED.search(ln)] or words or lines
    return words[-1][-limit:] if words else "(no output)"


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
