"""pi (`@mariozechner/pi-coding-agent`, checked with 0.73.1): paneboard's extension, the
`pi-extension` door it serves, its `seen` source and the doctor's checks.

pi has no shell hooks; an extension runs inside each pi process. `hook install pi` writes
paneboard's (``pi_extension.js`` beside this module) into the project as
``.pi/extensions/paneboard.ts``, where pi finds project extensions by itself, with the command
and options it was given; installing the same again changes nothing; a file at that path that
paneboard did not write is refused and left untouched; uninstall removes it (and the folders
install made, when they are left empty).

The extension serves a private socket ``DIR/<pid>.sock`` beside the registry ``DIR/<pid>.json``
``{"pid", "socket", "cwd", "sessionFile"}`` in each interactive pi process (not in ``pi -p``,
which exits once its prompt is done), and starts the session's listener (its session-start
hook, with the session file as ``transcript_path``). The door writes ``{"id": ID, "text":
TEXT}`` and a newline; the extension gives TEXT to pi as a user message and answers one line,
``{"ok": true, "session": FILE, "busy": BOOL}`` once pi's own `input` event has carried that
text (a turn at once when idle, a follow-up of the current turn when busy), else ``{"ok":
false, "error": WHY}``: `delivered` means pi took the message.

`seen` comes from pi's session file (``~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl``),
which records a user message as the turn that carries it starts: ``{"type": "message",
"message": {"role": "user", "content": [{"type": "text", "text": …}]}}``.
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

from paneboard.agents.base import Agent, Change, Check, DoorRequest, Setup
from paneboard.agents.hookfile import remove_own_file, write_project_file
from paneboard.listener.doors.base import Door, Outcome
from paneboard.listener.doors.process import alive
from paneboard.listener.doors.socket import SocketDoor, check_socket
from paneboard.listener.seen import content_texts, field
from paneboard.protocol.errors import BadInput, BoardIOError, DoorFailed, DoorUnavailable
from paneboard.protocol.posts import Prompt

NAME = "pi-extension"
EXTENSION = Path(".pi") / "extensions" / "paneboard.ts"
SOCKET_ENV = "PANEBOARD_PI_SOCKET"  # the extension tells the session-start hook its socket
REPLY_LIMIT = 64 * 1024
_TEMPLATE = Path(__file__).with_name("pi_extension.js")
_MARK = "// paneboard: the pi door."
_COMMAND_LINE = 'const COMMAND = ["paneboard", "hook", "session-start", "--agent", "pi"];'


def extension_path(project: Path) -> Path:
    return project / EXTENSION


def extension_text(exe: str, options: Sequence[str]) -> str:
    """The extension, its command the session-start hook with *options*."""
    template = _TEMPLATE.read_text(encoding="utf-8")
    command = [exe, "hook", "session-start", "--agent", "pi", *options]
    return template.replace(_COMMAND_LINE, f"const COMMAND = {json.dumps(command)};")


def _current(path: Path) -> str | None:
    """The file's text (None if missing); `BadInput` if it is not paneboard's extension."""
    try:
        if path.is_symlink():
            raise BadInput(f"{path} is a symlink; nothing was changed")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read {path}: {exc}; nothing was changed") from None
    if not text.startswith(_MARK):
        raise BadInput(f"{path} is not paneboard's extension; move it away, nothing was changed")
    return text


def installed(project: Path) -> bool:
    try:
        return _current(extension_path(project)) is not None
    except BadInput:
        return False


def extension_folder() -> Path:
    """Where the extension keeps its sockets: the same rule as its `privateFolder()`, a folder
    of this user's (never a name in /tmp another user could make first)."""
    env = os.environ
    base = env.get("XDG_RUNTIME_DIR") or env.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "paneboard-pi"


def read_registry(path: Path) -> dict[str, object]:
    """The registry beside the socket *path*, if it is a file of this user's naming a live pi
    process; else `DoorUnavailable`."""
    registry = path.with_suffix(".json")
    try:
        st = os.lstat(registry)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            raise DoorUnavailable(NAME, f"{registry} is not a file of this user")
        record = json.loads(registry.read_text(encoding="utf-8"))
        pid = int(record["pid"])
    except FileNotFoundError:
        raise DoorUnavailable(NAME, f"no registry {registry} (has pi ended?)") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DoorUnavailable(NAME, f"cannot read the registry {registry}: {exc}") from None
    if pid <= 0 or not alive(pid, zombie=False):
        raise DoorUnavailable(NAME, f"the pi process {pid} behind {path} has ended")
    return dict(record)


def live_doors(folder: Path | None = None) -> Iterator[tuple[int, Path]]:
    """(pid, socket) of every pi process whose extension's door is up and takes a connection
    (for `doctor`; nothing is sent)."""
    folder = folder or extension_folder()
    for registry in sorted(folder.glob("*.json")):
        path = registry.with_suffix(".sock")
        try:
            check_socket(path, NAME)
            pid = int(str(read_registry(path)["pid"]))
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                probe.settimeout(1.0)
                probe.connect(str(path))
        except (DoorUnavailable, OSError, ValueError):
            continue
        yield pid, path


class PiExtensionDoor(SocketDoor):
    """Hands a prompt to a pi session through paneboard's extension."""

    name = NAME
    ended = "pi has ended"
    replies = True

    def check(self) -> None:
        super().check()
        read_registry(self.socket)

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
            why = f"the extension answered something not JSON: {reply[:200]!r}"
            raise DoorFailed(self.name, why) from None
        if isinstance(answer, dict) and answer.get("ok") is True:
            return "accepted"
        error = answer.get("error") if isinstance(answer, dict) else answer
        raise DoorFailed(self.name, f"pi did not take it: {error}")


@dataclass(frozen=True)
class Pi(Agent):
    """pi, reached through a listener its extension starts (`--mode listen` only)."""

    def install(self, setup: Setup) -> list[Change]:
        path = extension_path(setup.project)
        text = extension_text(setup.exe, setup.words())
        if _current(path) == text:
            return [Change(f"paneboard extension already installed: {path}", path)]
        try:
            write_project_file(path, text.encode(), setup.project)
        except OSError as exc:
            raise BoardIOError(f"cannot write {path}: {exc.strerror}") from exc
        return [Change(f"installed paneboard extension {path}", path, True)]

    def uninstall(self, setup: Setup) -> list[Change]:
        """Remove the extension, and `.pi/extensions` and `.pi` if that empties them."""
        path = extension_path(setup.project)
        if _current(path) is None:
            return [Change(f"no paneboard extension at {path}", path)]
        remove_own_file(path)
        return [Change(f"removed paneboard extension {path}", path, True)]

    def listen_args(
        self, data: Mapping[str, Any], environ: Mapping[str, str], parent: int
    ) -> tuple[list[str], dict[str, str]]:
        """The door of the pi process whose extension ran the hook."""
        path = environ.get(SOCKET_ENV)
        if not path:
            raise BadInput(f"no {SOCKET_ENV} from the extension")
        return ["--door", NAME, "--socket", path, "--parent-pid", str(parent)], {}

    def open_door(self, request: DoorRequest) -> Door:
        if not request.socket:
            raise BadInput(
                f"--door {NAME} needs --socket PATH (paneboard's pi extension passes it)"
            )
        return PiExtensionDoor(Path(request.socket), min(request.timeout, 10.0))

    def user_texts(self, record: dict[str, Any]) -> list[str]:
        """A ``"type": "message"`` record of its session file whose message is the user's."""
        message = field(record, "message")
        if record.get("type") != "message" or message.get("role") != "user":
            return []
        return content_texts(message.get("content"))

    def doctor(self, project: Path, env: Mapping[str, str], socket: str | None) -> list[Check]:
        """On PATH? The extension installed? Which pi processes have its door up?"""
        where = shutil.which("pi", path=env.get("PATH"))
        cli = where or "no `pi` on PATH"
        path = extension_path(project)
        if installed(project):
            checks = [Check("ok" if where else "warn", "pi", f"{cli}; extension {path}")]
        else:
            hint = "(paneboard hook install pi)"
            checks = [Check("warn", "pi", f"{cli}; no extension at {path} {hint}")]
        doors = [
            Check("ok", "pi", f"extension door of pi pid {pid}: {sock}")
            for pid, sock in live_doors()
        ]
        none = Check(
            "warn", "pi", f"no pi runs with the extension's door up (in {extension_folder()})"
        )
        return checks + (doors or [none])


PI = Pi(
    kind="pi",
    title="pi",
    modes=("listen",),
    default_mode="listen",
    hooks_file=str(EXTENSION),
    events={},
    door=NAME,
    seen_source="pi-session",
    clis=("pi-coding-agent/dist/cli.js",),
    through="its extension",
)
