"""A pane's presence record: which listener runs it, with which door, last delivery.

It is read from a file in the pane folder or from the NATS presence bucket (which any client
of the server may write), so it is input: checked as it decodes, and one that fails is skipped
with a `DamagedRecord` warning, as a post is.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Annotated

import msgspec

from paneboard.protocol.errors import DamagedRecord
from paneboard.protocol.posts import Name, Time, damage_reason
from paneboard.state.files import write_atomic

PRESENCE_MAX = 64 * 1024  # bytes: a record is a few dozen


class Presence(msgspec.Struct):
    pid: Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
    door: Name
    started: Time
    last_delivery: Time | None = None
    host: Annotated[str, msgspec.Meta(max_length=255)] = ""


def write(path: Path, presence: Presence) -> None:
    write_atomic(path, msgspec.json.encode(presence))


def read(path: Path) -> Presence | None:
    """The presence file at *path*; None when there is none (a damaged one is warned about)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not _regular(fd):
            return None
        data = os.read(fd, PRESENCE_MAX + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return parse(str(path), data)


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


def _regular(fd: int) -> bool:
    import stat

    return stat.S_ISREG(os.fstat(fd).st_mode)
