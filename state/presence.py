"""A pane's presence file: which listener runs it, with which door, last delivery."""

from __future__ import annotations

from pathlib import Path

import msgspec

from paneboard.state.files import write_atomic


class Presence(msgspec.Struct):
    pid: int
    door: str
    started: float
    last_delivery: float | None = None
    host: str = ""


def write(path: Path, presence: Presence) -> None:
    write_atomic(path, msgspec.json.encode(presence))


def read(path: Path) -> Presence | None:
    try:
        return msgspec.json.decode(path.read_bytes(), type=Presence)
    except (OSError, msgspec.DecodeError):
        return None
