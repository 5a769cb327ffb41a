"""OpenCode: paneboard's plugin, the `opencode` door it serves, and the doctor's checks.

OpenCode has no shell hooks; a plugin runs inside each OpenCode process. `hook install
opencode` writes paneboard's (``opencode_plugin.js`` beside this module) to
``DIR/.opencode/plugins/paneboard.js``, with the command and options it was given; installing
the same again changes nothing; a file at that path that paneboard did not write is refused
and left untouched; uninstall removes the file (and the folders install created, when they
are left empty). OpenCode itself installs ``@opencode-ai/plugin`` into ``.opencode/``
(package.json, node_modules) for any local plugin: that is OpenCode's, not ours.

The plugin serves a private Unix socket ``DIR/<pid>.sock`` and writes the registry
``DIR/<pid>.json`` ``{"pid", "socket", "directory"}`` in each OpenCode process, and starts the
session's listener (its session-start hook). The door writes ``{"id": ID, "text": TEXT}`` and
a newline; the plugin answers one line, ``{"ok": true, "session": ID}`` once OpenCode has
taken the prompt (``promptAsync``: a turn starts now if the session is idle, after the
current one if it is busy), else ``{"ok": false, "error": WHY}``.
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
from paneboard.protocol.errors import BadInput, BoardIOError, DoorFailed, DoorUnavailable
from paneboard.protocol.posts import Prompt

PLUGIN = Path(".opencode") / "plugins" / "paneboard.js"
_TEMPLATE = Path(__file__).with_name("opencode_plugin.js")
_MARK = "// paneboard: the OpenCode door."
_COMMAND_LINE = 'const COMMAND = ["paneboard", "hook", "session-start", "--agent", "opencode"];'


def plugin_path(project: Path) -> Path:
    return project / PLUGIN


def plugin_text(exe: str, options: Sequence[str]) -> str:
    """The plugin, its command the session-start hook with *options*."""
    template = _TEMPLATE.read_text(encoding="utf-8")
    command = [exe, "hook", "session-start", "--agent", "opencode", *options]
    return template.replace(_COMMAND_LINE, f"const COMMAND = {json.dumps(command)};")


def _current(path: Path) -> str | None:
    """The file's text (None if missing); `BadInput` if it is not paneboard's plugin."""
    try:
        if path.is_symlink():
            raise BadInput(f"{path} is a symlink; nothing was changed")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read {path}: {exc}; nothing was changed") from None
    if not text.startswith(_MARK):
        raise BadInput(f"{path} is not paneboard's plugin; move it away, nothing was changed")
    return text


def _write_plugin(path: Path, text: str, project: Path) -> None:
    try:
        write_project_file(path, text.encode(), project)
    except OSError as exc:
        raise BoardIOError(f"cannot write {path}: {exc.strerror}") from exc


def installed(project: Path) -> bool:
    try:
        return _current(plugin_path(project)) is not None
    except BadInput:
        return False


REPLY_LIMIT = 64 * 1024


def plugin_folder() -> Path:
    """Where the plugin keeps its sockets: the same rule as the plugin's `privateFolder()`,
    a folder of this user's (never a name in /tmp another user could make first)."""
    env = os.environ
    base = env.get("XDG_RUNTIME_DIR") or env.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "paneboard-opencode"


def registry_of(path: Path) -> Path:
    return path.with_suffix(".json")


def registry_pid(path: Path, door: str = "opencode") -> int:
    """The pid the socket's registry names, if that process is alive; else `DoorUnavailable`."""
    registry = registry_of(path)
    try:
        st = os.lstat(registry)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            raise DoorUnavailable(door, f"{registry} is not a file of this user")
        pid = int(json.loads(registry.read_text(encoding="utf-8"))["pid"])
    except FileNotFoundError:
        raise DoorUnavailable(door, f"no registry {registry} (has OpenCode ended?)") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DoorUnavailable(door, f"cannot read the registry {registry}: {exc}") from None
    if pid <= 0:
        raise DoorUnavailable(door, f"the registry {registry} names no process (pid {pid})")
    if not alive(pid, zombie=False):
        raise DoorUnavailable(door, f"the OpenCode process {pid} behind {path} has ended")
    return pid


def live_doors(folder: Path | None = None) -> Iterator[tuple[int, Path]]:
    """(pid, socket) of every OpenCode process whose plugin door is up and takes a connection
    (for `doctor`; nothing is sent)."""
    folder = folder or plugin_folder()
    for registry in sorted(folder.glob("*.json")):
        path = registry.with_suffix(".sock")
        try:
            check_socket(path, "opencode")
            pid = registry_pid(path)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                probe.settimeout(1.0)
                probe.connect(str(path))
        except (DoorUnavailable, OSError):
            continue
        yield pid, path


class OpenCodeDoor(SocketDoor):
    """Hands a prompt to an OpenCode session through paneboard's plugin."""

    name = "opencode"
    ended = "OpenCode has ended"
    replies = True

    def check(self) -> None:
        super().check()
        registry_pid(self.socket, self.name)

    def _line(self, prompt: Prompt, text: str) -> bytes:
        return msgspec.json.encode({"id": prompt.id, "text": text})

    async def _reply(self, stream: ByteStream) -> bytes:
        return await _read_line(stream)

    def _outcome(self, reply: bytes) -> Outcome:
        return _outcome(self.name, reply)


async def _read_line(stream: ByteStream) -> bytes:
    data = b""
    while b"\n" not in data and len(data) < REPLY_LIMIT:
        data += await stream.receive()
    return data.split(b"\n", 1)[0]


def _outcome(door: str, reply: bytes) -> Outcome:
    try:
        answer = json.loads(reply)
    except ValueError:
        raise DoorFailed(door, f"the plugin answered something not JSON: {reply[:200]!r}") from None
    if isinstance(answer, dict) and answer.get("ok") is True:
        return "accepted"
    error = answer.get("error") if isinstance(answer, dict) else answer
    raise DoorFailed(door, f"the plugin did not hand it over: {error}")


@dataclass(frozen=True)
class OpenCode(Agent):
    """OpenCode, reached through a listener its plugin starts (`--mode listen` only)."""

    def install(self, setup: Setup) -> list[Change]:
        path = plugin_path(setup.project)
        text = plugin_text(setup.exe, setup.words())
        if _current(path) == text:
            return [Change(f"paneboard plugin already installed: {path}", path)]
        _write_plugin(path, text, setup.project)
        return [Change(f"installed paneboard plugin {path}", path, True)]

    def uninstall(self, setup: Setup) -> list[Change]:
        """Remove the plugin, and `.opencode/plugins` and `.opencode` if that empties them."""
        path = plugin_path(setup.project)
        if _current(path) is None:
            return [Change(f"no paneboard plugin at {path}", path)]
        remove_own_file(path)
        return [Change(f"removed paneboard plugin {path}", path, True)]

    def listen_args(
        self, data: Mapping[str, Any], environ: Mapping[str, str], parent: int
    ) -> tuple[list[str], dict[str, str]]:
        socket = environ.get("PANEBOARD_OPENCODE_SOCKET")
        if not socket:
            raise BadInput("no PANEBOARD_OPENCODE_SOCKET from the plugin")
        return ["--door", "opencode", "--socket", socket, "--parent-pid", str(parent)], {}

    def open_door(self, request: DoorRequest) -> Door:
        if not request.socket:
            raise BadInput(
                "--door opencode needs --socket PATH (paneboard's OpenCode plugin passes it)"
            )
        return OpenCodeDoor(Path(request.socket), min(request.timeout, 10.0))

    def doctor(self, project: Path, env: Mapping[str, str], socket: str | None) -> list[Check]:
        """On PATH? The plugin installed? Which OpenCode processes have its door up?"""
        where = shutil.which("opencode")
        cli = where or "no `opencode` on PATH"
        plugin = plugin_path(project)
        if installed(project):
            checks = [Check("ok" if where else "warn", "opencode", f"{cli}; plugin {plugin}")]
        else:
            hint = "(paneboard hook install opencode)"
            checks = [Check("warn", "opencode", f"{cli}; no plugin at {plugin} {hint}")]
        doors = [
            Check("ok", "opencode", f"plugin door of OpenCode pid {pid}: {path}")
            for pid, path in live_doors()
        ]
        folder = plugin_folder()
        none = Check(
            "warn", "opencode", f"no OpenCode runs with the plugin's door up (in {folder})"
        )
        return checks + (doors or [none])


OPENCODE = OpenCode(
    kind="opencode",
    title="OpenCode",
    modes=("listen",),
    default_mode="listen",
    hooks_file=str(PLUGIN),
    events={},
    door="opencode",
)
