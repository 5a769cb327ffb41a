"""The agents of a board as `top` shows them: whether a listener holds each pane, its pid,
its door and its last delivery.

Read from the pane files (`HOME/BOARD/panes/AGENT.lock` and `.presence`) and, on NATS, from
the presence bucket. The pane lock is tested through a read-only descriptor: a descriptor
opened for writing would, on closing, wake `top`'s own watch on the panes folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec

from paneboard.state import presence
from paneboard.state.abc import Store
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


def pane_holder(path: Path) -> int | None:
    """The pid of the process holding the pane lock at *path*, or None if nobody does."""
    try:
        import fcntl
    except ImportError:  # not POSIX: the lock module's own test (it opens for writing)
        from paneboard.state.panelock import holder

        return holder(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.read(fd, 32).strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


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
        pid = pane_holder(lock)
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
    for name, raw in store.presences().items():
        if (seen := presence.parse(f"presence of `{name}`", raw)) is not None:
            out[name] = seen
    return out
