"""The record of a session `paneboard spawn` started: ``panes/AGENT.spawned``.

It names the agent kind, the agent's own id for the session (what its stop takes: `claude stop
ID`, a tmux server's name), how a person reaches it (`claude attach ID`), the agent's process
and when it started. `paneboard stop AGENT` acts on it, so it is a file that decides something:
written whole and private (0600, never through a link), read only when it is this user's and
no one else can write it (`read_owned`), and checked as it decodes.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import msgspec

from paneboard.protocol.errors import BoardIOError
from paneboard.protocol.posts import Name, Time, damage_reason
from paneboard.state.files import read_owned, write_atomic

RECORD_MAX = 16 * 1024  # bytes: a record is a few hundred
Line = Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]


class SpawnRecord(msgspec.Struct, frozen=True):
    """A spawned session: new fields go last, with defaults."""

    kind: Name
    session: Line
    attach: Line
    started: Time
    pid: Annotated[int, msgspec.Meta(ge=1, le=2**31 - 1)] | None = None


def record(kind: str, session: str, attach: str, pid: int | None) -> SpawnRecord:
    return SpawnRecord(kind, session, attach, time.time(), pid)


def write(path: Path, spawned: SpawnRecord) -> None:
    write_atomic(path, msgspec.json.encode(spawned), mode=0o600)


def read(path: Path) -> SpawnRecord | None:
    """The record at *path*; None when there is none. `BoardIOError` for one that is not a
    private file of this user's, or does not decode."""
    data = read_owned(path, "spawn record", RECORD_MAX + 1)
    if data is None:
        return None
    try:
        if len(data) > RECORD_MAX:
            raise ValueError(f"{len(data)} bytes or more")
        return msgspec.json.decode(data, type=SpawnRecord)
    except Exception as exc:  # noqa: BLE001  # any failure to decode the record is damage
        raise BoardIOError(
            f"spawn record {path} is damaged ({damage_reason(exc)}); remove it"
        ) from None


def remove(path: Path) -> None:
    path.unlink(missing_ok=True)
