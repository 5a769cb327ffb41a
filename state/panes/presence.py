"""A pane's presence record: which listener runs it, with which door, for which agent process
and conversation file, last delivery.

It is read from a file in the pane folder or from the NATS presence bucket (which any client
of the server may write), so it is input: checked as it decodes, and one that fails is skipped
with a `DamagedRecord` warning, as a post is.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated, Literal

import msgspec

from paneboard.protocol.errors import DamagedRecord
from paneboard.protocol.posts import Name, Time, damage_reason
from paneboard.state.files import read_private, write_atomic

PRESENCE_MAX = 64 * 1024  # bytes: a record is a few dozen
# "asleep": its agent's session ended and it starts it again for a prompt (a wake);
# "woken": it did, and hands the pane to the woken session's own listener; "": live
Sleep = Literal["", "asleep", "woken"]


class Presence(msgspec.Struct):
    pid: Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
    door: Name
    started: Time
    last_delivery: Time | None = None
    host: Annotated[str, msgspec.Meta(max_length=255)] = ""
    # What the listener was started for: the agent process it stops with (`--parent-pid`),
    # and the conversation file it follows (`--transcript`); a session start reads them to
    # tell its own listener from another process's. A record of an earlier version has
    # neither.
    parent: Annotated[int, msgspec.Meta(ge=1, le=2**31 - 1)] | None = None
    transcript: Annotated[str, msgspec.Meta(max_length=4096)] | None = None
    sleep: Sleep = ""


def write(path: Path, presence: Presence) -> None:
    write_atomic(path, msgspec.json.encode(presence))


def read(path: Path) -> Presence | None:
    """The presence file at *path*; None when there is none (a damaged one is warned about).

    Never through a link, and never blocking on a FIFO planted in its place."""
    try:
        data = read_private(path, PRESENCE_MAX + 1)
    except OSError:
        return None
    return None if data is None else parse(str(path), data)


def parse(where: str, data: bytes) -> Presence | None:
    """One presence record (from a file or the store), or None, with a warning, if damaged."""
    try:
        if len(data) > PRESENCE_MAX:
            raise ValueError(f"{len(data)} bytes or more")
        return msgspec.json.decode(data, type=Presence)
    except Exception as exc:  # noqa: BLE001  # any failure to decode one record is damage
        warnings.warn(
            DamagedRecord(where, 0, len(data), f"presence: {damage_reason(exc)}"), stacklevel=3
        )
        return None
