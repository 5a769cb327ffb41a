"""The `opencode` door: one JSON line on the socket paneboard's OpenCode plugin serves.

The plugin (``hooks/opencode_plugin.js``) writes ``DIR/<pid>.sock`` and the registry
``DIR/<pid>.json`` ``{"pid", "socket", "directory"}`` in each OpenCode process. The door
writes ``{"id": ID, "text": TEXT}`` and a newline; the plugin answers one line, ``{"ok": true,
"session": ID}`` once OpenCode has taken the prompt (``promptAsync``: a turn starts now if the
session is idle, after the current one if it is busy), else ``{"ok": false, "error": WHY}``.
"""

from __future__ import annotations

import json
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import msgspec
from anyio.abc import ByteStream

from paneboard.listener.doors.agents import SocketDoor, check_socket
from paneboard.listener.doors.base import Outcome
from paneboard.listener.doors.process import alive
from paneboard.protocol.errors import DoorFailed, DoorUnavailable
from paneboard.protocol.posts import Prompt

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
