"""An agent reached through a script paneboard writes into its project (OpenCode's plugin, pi's
extension): the file, its install and uninstall, the private folder of its sockets, the
registry beside each socket, the door that writes one JSON line and reads one back, and the
doctor's checks.

The script runs inside each agent process. It serves a private Unix socket ``DIR/<pid>.sock``
beside the registry ``DIR/<pid>.json`` (``{"pid", "socket", …}``), and starts the session's
listener (its session-start hook, told the socket in an environment variable). The door writes
``{"id": ID, "text": TEXT}`` and a newline; the script answers one line, ``{"ok": true, …}``
once the agent has taken the text, else ``{"ok": false, "error": WHY}``.

Installing the same script again changes nothing; a file at its path that paneboard did not
write (or a symbolic link) is refused and left untouched; uninstall removes it, and the
folders install made when they are left empty.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from anyio.abc import ByteStream

from paneboard.agents.base import Agent, Change, DoctorRequest, DoorRequest, ListenOption, Setup
from paneboard.agents.hookfile import remove_own_file, write_project_file
from paneboard.listener.doors.base import Door, Outcome
from paneboard.listener.doors.process import alive
from paneboard.listener.doors.socket import SocketDoor, check_socket
from paneboard.protocol.errors import BadInput, BoardIOError, DoorFailed, DoorUnavailable
from paneboard.protocol.posts import Prompt
from paneboard.state.health import Check

REPLY_LIMIT = 64 * 1024
SHARED = "// paneboard: the shared parts (agents/script_common.js) go here.\n"


@dataclass(frozen=True)
class Script:
    """The file paneboard writes into a project: at *path* (relative to the project), made from
    *template* (a file beside this module), the first line *mark*; *word* is what the agent
    calls it (plugin, extension).

    A script for a fork of another agent is that agent's: *template* is then only its own
    header (comment lines), followed by the body of *base* (the other's template, after its
    header) with each of *names* (the other's word for a thing, this agent's) replaced."""

    path: Path
    template: str
    mark: str
    kind: str
    word: str
    base: str = ""
    names: tuple[tuple[str, str], ...] = ()

    def source(self) -> str:
        """The template, the body of its base (with this agent's names) appended."""
        here = Path(__file__).parent
        template = (here / self.template).read_text(encoding="utf-8")
        if not self.base:
            return template
        lines = (here / self.base).read_text(encoding="utf-8").splitlines(keepends=True)
        start = next(n for n, line in enumerate(lines) if not line.startswith("//"))
        body = "".join(lines[start:])
        for theirs, ours in self.names:
            if theirs not in body:
                raise ValueError(f"{self.base} has no {theirs!r} to name {ours!r}")
            body = body.replace(theirs, ours)
        return template + body

    def text(self, exe: str, options: Sequence[str]) -> str:
        """The script, its command the session-start hook with *options*, and the parts every
        script shares (``script_common.js``) where its template marks them."""
        here = Path(__file__).parent
        template = self.source()
        common = (here / "script_common.js").read_text(encoding="utf-8")
        default = ["paneboard", "hook", "session-start", "--agent", self.kind]
        command = [exe, *default[1:], *options]
        return template.replace(SHARED, common).replace(
            f"const COMMAND = {json.dumps(default)};", f"const COMMAND = {json.dumps(command)};"
        )

    def current(self, path: Path) -> str | None:
        """The file's text (None if missing); `BadInput` if it is not paneboard's script."""
        try:
            if path.is_symlink():
                raise BadInput(f"{path} is a symlink; nothing was changed")
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise BadInput(f"cannot read {path}: {exc}; nothing was changed") from None
        if not text.startswith(self.mark):
            raise BadInput(
                f"{path} is not paneboard's {self.word}; move it away, nothing was changed"
            )
        return text

    def installed(self, project: Path) -> bool:
        try:
            return self.current(project / self.path) is not None
        except BadInput:
            return False


def private_folder(name: str, env: Mapping[str, str] | None = None) -> Path:
    """Where a script keeps its sockets: the same rule as the scripts' `privateFolder()`, a
    folder of this user's (never a name in /tmp another user could make first), under
    *env*'s folders (this process's environment by default)."""
    env = os.environ if env is None else env
    home = env.get("HOME") or os.path.expanduser("~")
    base = env.get("XDG_RUNTIME_DIR") or env.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    return Path(base) / name


def read_registry(path: Path, door: str, title: str) -> dict[str, object]:
    """The registry beside the socket *path*, if it is a file of this user's naming a live
    process; else `DoorUnavailable`."""
    registry = path.with_suffix(".json")
    try:
        st = os.lstat(registry)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            raise DoorUnavailable(door, f"{registry} is not a file of this user")
        record = json.loads(registry.read_text(encoding="utf-8"))
        pid = int(record["pid"])
    except FileNotFoundError:
        raise DoorUnavailable(door, f"no registry {registry} (has {title} ended?)") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DoorUnavailable(door, f"cannot read the registry {registry}: {exc}") from None
    if pid <= 0:
        raise DoorUnavailable(door, f"the registry {registry} names no process (pid {pid})")
    if not alive(pid, zombie=False):
        raise DoorUnavailable(door, f"the {title} process {pid} behind {path} has ended")
    return dict(record)


def live_doors(folder: Path, door: str, title: str) -> Iterator[tuple[int, Path]]:
    """(pid, socket) of every process whose script's door is up and takes a connection (for
    `doctor`; nothing is sent)."""
    for registry in sorted(folder.glob("*.json")):
        path = registry.with_suffix(".sock")
        try:
            check_socket(path, door)
            pid = int(str(read_registry(path, door, title)["pid"]))
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                probe.settimeout(1.0)
                probe.connect(str(path))
        except (DoorUnavailable, OSError, ValueError):
            continue
        yield pid, path


class ScriptDoor(SocketDoor):
    """Hands a prompt to an agent session through paneboard's script in it."""

    title = "the agent"  # for the registry's messages
    word = "script"  # what the agent calls it
    not_taken = "the script did not hand it over"
    replies = True

    def check(self) -> None:
        super().check()
        read_registry(self.socket, self.name, self.title)

    def _line(self, prompt: Prompt, text: str) -> bytes:
        return msgspec.json.encode({"id": prompt.id, "text": text})

    async def _reply(self, stream: ByteStream) -> bytes:
        data = b""
        while b"\n" not in data and len(data) < REPLY_LIMIT:
            data += await stream.receive()
        return data.split(b"\n", 1)[0]

    def _outcome(self, reply: bytes) -> Outcome:
        try:
            answer = json.loads(reply)
        except ValueError:
            why = f"the {self.word} answered something not JSON: {reply[:200]!r}"
            raise DoorFailed(self.name, why) from None
        if isinstance(answer, dict) and answer.get("ok") is True:
            return "accepted"
        error = answer.get("error") if isinstance(answer, dict) else answer
        raise DoorFailed(self.name, f"{self.not_taken}: {error}")


def socket_option(script: Script) -> ListenOption:
    """`listen --socket`, for the door of paneboard's *script*."""
    return ListenOption("--socket", f"the socket of paneboard's {script.word}", "PATH")


@dataclass(frozen=True)
class ScriptAgent(Agent):
    """An agent reached through a listener its script starts (`--mode listen` only)."""

    script: Script | None = None
    socket_env: str = ""  # how the script tells its session-start hook the socket
    folder: str = ""  # the name of the private folder of the script's sockets
    door_class: type[ScriptDoor] = ScriptDoor
    command: str = ""  # the agent's command, for `doctor`

    @property
    def own(self) -> Script:
        assert self.script is not None  # every script agent has one
        return self.script

    def install(self, setup: Setup) -> list[Change]:
        path, word = setup.project / self.own.path, self.own.word
        text = self.own.text(setup.exe, setup.words())
        if self.own.current(path) == text:
            return [Change(f"paneboard {word} already installed: {path}", path)]
        try:
            write_project_file(path, text.encode(), setup.project)
        except OSError as exc:
            raise BoardIOError(f"cannot write {path}: {exc.strerror}") from exc
        return [Change(f"installed paneboard {word} {path}", path, True)]

    def uninstall(self, setup: Setup) -> list[Change]:
        """Remove the script, and the folders install made if that empties them."""
        path, word = setup.project / self.own.path, self.own.word
        if self.own.current(path) is None:
            return [Change(f"no paneboard {word} at {path}", path)]
        remove_own_file(path)
        return [Change(f"removed paneboard {word} {path}", path, True)]

    def listen_args(
        self, data: Mapping[str, Any], environ: Mapping[str, str], parent: int
    ) -> tuple[list[str], dict[str, str]]:
        """The door of the agent process whose script ran the hook, and the session it names
        (which a wake resumes: Hermes's plugin gives it)."""
        path = environ.get(self.socket_env)
        if not path:
            raise BadInput(f"no {self.socket_env} from the {self.own.word}")
        session = self.session(data)
        named = ["--session", session] if session else []
        return ["--door", str(self.door), "--socket", path, "--parent-pid", str(parent), *named], {}

    def open_door(self, request: DoorRequest) -> Door:
        socket = request.value("--socket")
        if not socket:
            raise BadInput(
                f"--door {self.door} needs --socket PATH "
                f"(paneboard's {self.title} {self.own.word} passes it)"
            )
        return self.door_class(Path(socket), min(request.timeout, 10.0))

    def doctor(self, ask: DoctorRequest) -> list[Check]:
        """On PATH? The script installed? Which of the agent's processes have its door up?"""
        kind, word, door = self.kind, self.own.word, str(self.door)
        where = shutil.which(self.command, path=ask.env.get("PATH"))
        cli = where or f"no `{self.command}` on PATH"
        path = ask.project / self.own.path
        if self.own.installed(ask.project):
            checks = [Check("ok" if where else "warn", kind, f"{cli}; {word} {path}")]
        else:
            hint = f"(paneboard hook install {kind})"
            checks = [Check("warn", kind, f"{cli}; no {word} at {path} {hint}")]
        folder = private_folder(self.folder)
        doors = [
            Check("ok", kind, f"{word} door of {self.title} pid {pid}: {sock}")
            for pid, sock in live_doors(folder, door, self.title)
        ]
        none = Check("warn", kind, f"no {self.title} runs with the {word}'s door up (in {folder})")
        return checks + (doors or [none])
