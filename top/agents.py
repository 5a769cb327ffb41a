"""The agents of a board as `top` shows them: whether a listener holds each pane, its pid,
its door and its last delivery.

Read from the pane files (`HOME/BOARD/panes/AGENT.lock` and `.presence`) and, on NATS, from
the presence bucket. The pane lock is tested with `panelock.holder`, which only reads it: a
descriptor opened for writing would, on closing, wake `top`'s own watch on the panes folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec

from paneboard.protocol.errors import BoardIOError
from paneboard.state import presence
from paneboard.state.abc import Store
from paneboard.state.panelock import holder
from paneboard.state.paths import BoardPaths


class AgentRow(msgspec.Struct, frozen=True):
    name: str
    pid: int | None = None  # the listener holding the pane (-1: held, pid unknown)
    door: str | None = None
    last_delivery: float | None = None
    host: str = ""

    @property
    def listening(self) -> bool:
        return self.pid is not None


def pane_names(paths: BoardPaths) -> list[str]:
    """Agents with a pane lock on this machine."""
    try:
        entries = list(os.scandir(paths.panes))
    except FileNotFoundError:
        return []
    return sorted(e.name.removesuffix(".lock") for e in entries if e.name.endswith(".lock"))


def read_agents(
    paths: BoardPaths,
    names: Iterable[str],
    remote: Mapping[str, presence.Presence],
) -> dict[str, AgentRow]:
    """A row for each of *names*, each local pane, and each listener seen on the store."""
    rows = {}
    for name in sorted({*names, *pane_names(paths), *remote}):
        try:
            lock, seen_file = paths.pane(name, "lock"), paths.pane(name, "presence")
        except ValueError:  # a forged post's name that is not an agent's: no pane to read
            rows[name] = AgentRow(name)
            continue
        pid = _holder(lock)
        seen = presence.read(seen_file)
        if pid is None and name in remote:  # a listener on another machine, within the TTL
            seen = remote[name]
            pid = seen.pid
        rows[name] = AgentRow(
            name,
            pid,
            seen.door if seen and pid else None,
            seen.last_delivery if seen else None,
            seen.host if seen and pid else "",
        )
    return rows


def remote_presences(store: Store) -> dict[str, presence.Presence]:
    """The store's presence records (NATS), decoded; {} for a store without them."""
    out = {}
    for name, raw in store.presence.read().items():
        if (seen := presence.parse(f"presence of `{name}`", raw)) is not None:
            out[name] = seen
    return out


def _holder(lock: Path) -> int | None:
    """The listener holding *lock*; a lock file that cannot be read counts as nobody's."""
    try:
        return holder(lock)
    except BoardIOError:
        return None
