"""A pane's presence file: which listener runs it, with which door, last delivery."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec


class Presence(msgspec.Struct):
    pid: int
    door: str
    started: float
    last_delivery: float | None = None
    host: str = ""


def write(path: Path, presence: Presence) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(msgspec.json.encode(presence))
    os.replace(tmp, path)


def read(path: Path) -> Presence | None:
    try:
        return msgspec.json.decode(path.read_bytes(), type=Presence)
    except (OSError, msgspec.DecodeError):
        return None
