"""A listener's checkpoint: the fold of a board for one agent, as of a log offset.

It is an optimisation only: a missing, stale or unreadable checkpoint means a cold
fold from the start of the log, with the same result.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from state.fold import BoardState
from state.framing import HEAD, OVERHEAD, frame_at

VERSION = 1


class Checkpoint(msgspec.Struct):
    version: int
    log_inode: int
    state: BoardState


def save(path: Path, log: Path, state: BoardState) -> None:
    """Write the checkpoint atomically (a temporary file renamed over the old one)."""
    try:
        inode = os.stat(log).st_ino
    except FileNotFoundError:
        return
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(msgspec.msgpack.encode(Checkpoint(VERSION, inode, state)))
    os.replace(tmp, path)


def load(path: Path, log: Path) -> BoardState | None:
    """The checkpointed state, if it still describes a prefix of *log*; else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            cp = msgspec.msgpack.decode(f.read(), type=Checkpoint)
        st = os.stat(log)
    except (OSError, msgspec.DecodeError):
        return None
    pos = cp.state.position
    if cp.version != VERSION or cp.log_inode != st.st_ino or pos > st.st_size:
        return None
    if pos < st.st_size and not _record_starts_at(log, pos):
        return None
    return cp.state


def _record_starts_at(log: Path, pos: int) -> bool:
    with open(log, "rb") as f:
        f.seek(pos)
        head = f.read(HEAD.size)
        if len(head) < HEAD.size:
            return False
        (_, n, _) = HEAD.unpack(head)
        f.seek(pos)
        return frame_at(f.read(min(n, 1 << 21) + OVERHEAD), 0) > 0
