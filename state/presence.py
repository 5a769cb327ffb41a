"""A pane's presence file: which listener runs it, with which door, last delivery."""

from __future__ import annotations

import os
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
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb") as f:
            return msgspec.json.decode(f.read(), type=Presence)
    except (OSError, msgspec.DecodeError):
        return None
