"""The doors with no counterpart program of their own: stdout, exec, maildir."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec

from paneboard.listener.doors.base import Outcome
from paneboard.listener.doors.process import run_command
from paneboard.protocol.errors import DoorFailed, DoorUnavailable
from paneboard.protocol.posts import Prompt


class StdoutDoor:
    """One JSON line per prompt on stdout: the prompt's fields plus ``text``, flushed."""

    name = "stdout"
    coalesces = False  # its record is one prompt's (listener/deliverer.py `coalesces`)

    def check(self) -> None:
        pass

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> Outcome:
        line = msgspec.json.encode({**msgspec.to_builtins(prompt), "text": text}) + b"\n"
        try:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
        except (BrokenPipeError, ValueError) as exc:
            raise DoorUnavailable(self.name, "stdout is closed") from exc
        return "accepted"


class ExecDoor:
    """Runs a command with the text on stdin and the prompt's facts in its environment."""

    name = "exec"
    coalesces = False  # its record is one prompt's (listener/deliverer.py `coalesces`)

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], timeout: float) -> None:
        self.argv = list(argv)
        self.env = dict(env)
        self.timeout = timeout

    def check(self) -> None:
        exe = self.argv[0]
        if os.sep in exe:
            if not os.access(exe, os.X_OK):
                raise DoorUnavailable(self.name, f"{exe} is not an executable file")
        elif not _which(exe, self.env.get("PATH", os.defpath)):
            raise DoorUnavailable(self.name, f"no `{exe}` on PATH")

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> Outcome:
        self.check()
        env = {
            **self.env,
            "PANEBOARD_ID": prompt.id,
            "PANEBOARD_SENDER": prompt.sender,
            "PANEBOARD_AGENT": agent,
            "PANEBOARD_BOARD": prompt.board,
            "PANEBOARD_PRIORITY": prompt.priority,
            "PANEBOARD_THREAD": prompt.thread or "",
        }
        done = await run_command(self.argv, text.encode(), env, self.timeout)
        if done.timed_out:
            return "unknown"
        if done.returncode != 0:
            raise DoorFailed(self.name, f"`{self.argv[0]}` exited {done.returncode}: {done.tail()}")
        return "accepted"


def _which(exe: str, path: str) -> str | None:
    for folder in path.split(os.pathsep):
        candidate = os.path.join(folder or ".", exe)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


class MaildirDoor:
    """agent-inbox's layout: a Markdown file with front matter, written in tmp/,
    renamed into new/."""

    name = "maildir"
    coalesces = False  # its record is one prompt's (listener/deliverer.py `coalesces`)

    def __init__(self, root: Path) -> None:
        self.root = root

    def check(self) -> None:
        if self.root.is_symlink() or (self.root.exists() and not self.root.is_dir()):
            raise DoorUnavailable(self.name, f"{self.root} is not a folder")

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> Outcome:
        self.check()
        inbox = self.root / agent
        try:
            for folder in (self.root, inbox, inbox / "tmp", inbox / "new", inbox / "archive"):
                folder.mkdir(mode=0o700, exist_ok=True)
                if not stat.S_ISDIR(os.lstat(folder).st_mode):
                    raise DoorUnavailable(self.name, f"{folder} is not a folder (a symlink?)")
            name = (
                f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(prompt.ts))}"
                f"-paneboard.{prompt.id}.md"
            )
            tmp = inbox / "tmp" / name
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
            )
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(_front_matter(prompt, agent) + text)
                f.flush()
                os.fsync(f.fileno())
            os.rename(tmp, inbox / "new" / name)
        except FileExistsError:
            os.unlink(inbox / "tmp" / name)
            raise DoorFailed(self.name, f"{name} was left in tmp/ by an earlier attempt") from None
        except OSError as exc:
            raise DoorFailed(self.name, f"cannot write into {inbox}: {exc.strerror}") from exc
        return "accepted"


def _front_matter(prompt: Prompt, agent: str) -> str:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(prompt.ts))
    fields = {
        "from": prompt.sender,
        "to": agent,
        "reply_to": f"../{prompt.sender}/tmp/",
        "timestamp": stamp,
        **({"thread": prompt.thread} if prompt.thread else {}),
        "paneboard_id": prompt.id,
        "board": prompt.board,
        "priority": prompt.priority,
    }
    lines = ["---", *(f"{key}: {_scalar(value)}" for key, value in fields.items()), "---", "", ""]
    return "\n".join(lines)


_PLAIN = re.compile(r"[A-Za-z0-9.][A-Za-z0-9._:/-]*")


def _scalar(value: str) -> str:
    """*value* as a YAML scalar: plain when it is a name or a path of names, else a
    double-quoted string with every other character escaped, so no value starts a key."""
    return value if _PLAIN.fullmatch(value) else json.dumps(value)
