"""A listener's checkpoint: the fold of a board for one agent, as of a log offset.

It is an optimisation only: a missing, stale or unreadable checkpoint means a cold
fold from the start of the log, with the same result.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from paneboard.state.abc import Store
from paneboard.state.filelog.log import open_regular
from paneboard.state.files import write_atomic
from paneboard.state.fold import BoardState
from paneboard.state.trust.policy import TrafficState

VERSION = 4  # 3: recipients carry `seen`; 4: the traffic (the rate and the loop limit), the pins
# of every name before `position` taken, and the prompts the pane saw finished


class Checkpoint(msgspec.Struct):
    version: int
    store: str  # the store's identity (the log's inode, the stream's creation)
    state: BoardState
    traffic: TrafficState = msgspec.field(default_factory=TrafficState)


def save(path: Path, store: Store, state: BoardState, traffic: TrafficState | None = None) -> None:
    """Write the checkpoint atomically (a temporary file renamed over the old one)."""
    identity = store.identity()
    if not identity:
        return
    kept = TrafficState() if traffic is None else traffic
    write_atomic(path, msgspec.msgpack.encode(Checkpoint(VERSION, identity, state, kept)))


def start(path: Path, store: Store, agent: str) -> tuple[BoardState, TrafficState]:
    """What an agent's deliverer starts from: its checkpoint, or an empty fold of its own
    prompts; with the traffic the checkpoint kept (none for a cold fold)."""
    cp = _load(path, store)
    if cp is None or cp.state.recipient != agent:
        return BoardState(keep_closed=False, recipient=agent), TrafficState()
    return cp.state, cp.traffic


def load(path: Path, store: Store) -> BoardState | None:
    """The checkpointed state, if it still describes a prefix of *store*; else None."""
    cp = _load(path, store)
    return None if cp is None else cp.state


def _load(path: Path, store: Store) -> Checkpoint | None:
    try:
        fd = open_regular(path)
        if fd is None:
            return None
        with os.fdopen(fd, "rb") as f:
            cp = msgspec.msgpack.decode(f.read(), type=Checkpoint)
    except Exception:  # noqa: BLE001  # any checkpoint that cannot be read means a cold fold
        return None
    if (
        cp.version != VERSION
        or cp.store != store.identity()
        or not store.accepts(cp.state.position)
    ):
        return None
    return cp
