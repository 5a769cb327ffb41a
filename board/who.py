"""Who is on a board: each agent, whether a listener holds its pane, its door, its last
delivery and the prompts held for a person.

Read from the pane files (`HOME/BOARD/panes/AGENT.lock` and `.presence`) and, on NATS, from
the store's presence records. The pane lock is tested with `panelock.holder`, which only reads
it: a descriptor opened for writing would, on closing, wake a watch on the panes folder (such
as `top`'s).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec

from paneboard.board.context import Context
from paneboard.board.trust import read_board
from paneboard.protocol.errors import BoardIOError
from paneboard.state.abc import Store
from paneboard.state.fold import BoardState, stage
from paneboard.state.panes import presence, spawned
from paneboard.state.panes.lock import holder
from paneboard.state.paths import BoardPaths
from paneboard.state.proc import alive


class WhoRow(msgspec.Struct, frozen=True):
    """One agent of a board, as `who` shows it."""

    agent: str
    listening: bool = False
    pid: int | None = None  # the listener holding the pane (None: none, or its pid unknown)
    door: str | None = None
    last_delivery: float | None = None
    held: int = 0  # open prompts its agent (or policy) holds for a person
    host: str = ""  # the machine its listener runs on, as the listener said
    attach: str = ""  # how a person opens the session `paneboard spawn` started for it
    sleep: str = ""  # "asleep" or "woken": its session ended, its listener wakes it (a wake)
    last_read: float | None = None  # its newest verified `read`: it read a body (`paneboard read`)


def who(ctx: Context) -> list[WhoRow]:
    """Every agent that posted, was posted to, has a pane here or is present on the store; the
    prompts held for each as `status` counts them (only verified posts move a stage)."""
    posts, state = read_board(ctx)
    names: dict[str, None] = {}
    for _, post in posts:
        names[post.sender] = None
        names.update(dict.fromkeys(getattr(post, "to", ())))
    found = rows(ctx.paths, names, remote_presences(ctx.store()), held_counts(state))
    reads = last_reads(state)
    return [msgspec.structs.replace(row, last_read=reads.get(row.agent)) for row in found]


def rows(
    paths: BoardPaths,
    names: Iterable[str],
    remote: Mapping[str, presence.Presence],
    held: Mapping[str, int] | None = None,
) -> list[WhoRow]:
    """A row, by name, for each of *names*, each pane on this machine and each listener the
    store has seen (*remote*); *held* counts the prompts held for each."""
    held = held or {}
    return [
        _row(paths, name, remote, held.get(name, 0))
        for name in sorted({*names, *pane_names(paths), *remote})
    ]


def _row(
    paths: BoardPaths, name: str, remote: Mapping[str, presence.Presence], held: int
) -> WhoRow:
    try:
        files = paths.pane(name)
        lock, presence_file = files.lock, files.presence
    except ValueError:  # a forged post's name that is not an agent's: no pane to read
        return WhoRow(name, held=held)
    pid = _holder(lock)
    record = presence.read(presence_file)
    if pid is None and name in remote:  # a listener on another machine, within the TTL
        record = remote[name]
        pid = record.pid
    here = record if record and pid else None  # the door and host of a listener holding it now
    return WhoRow(
        name,
        listening=pid is not None,
        pid=pid if pid and pid > 0 else None,
        door=here.door if here else None,
        last_delivery=record.last_delivery if record else None,
        held=held,
        host=here.host if here else "",
        attach=_attach(files.spawned),
        sleep=here.sleep if here else "",
    )


def _attach(path: Path) -> str:
    """The attach line of the agent's spawned session while its process runs; "" for none (or
    a record that cannot be read: `stop` names what is wrong with it)."""
    try:
        record = spawned.read(path)
    except BoardIOError:
        return ""
    if record is None or (record.pid is not None and not alive(record.pid, zombie=False)):
        return ""
    return record.attach


def pane_names(paths: BoardPaths) -> list[str]:
    """Agents with a pane lock on this machine."""
    try:
        entries = list(os.scandir(paths.panes))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(e.name.removesuffix(".lock") for e in entries if e.name.endswith(".lock"))


def remote_presences(store: Store) -> dict[str, presence.Presence]:
    """The store's presence records (NATS), decoded; {} for a store without them."""
    out = {}
    for name, raw in store.presence.read().items():
        if (record := presence.parse(f"presence of `{name}`", raw)) is not None:
            out[name] = record
    return out


def held_counts(state: BoardState) -> dict[str, int]:
    """How many open prompts each recipient's agent (or policy) holds for a person."""
    now = time.time()
    counts: dict[str, int] = {}
    for ps in state.prompts.values():
        for name in ps.recipients:
            if stage(ps, name, now) == "held":
                counts[name] = counts.get(name, 0) + 1
    return counts


def last_reads(state: BoardState) -> dict[str, float]:
    """When each recipient last read a prompt's body, as the fold counts it (each prompt's
    first verified `read`)."""
    out: dict[str, float] = {}
    for ps in state.prompts.values():
        for name, r in ps.recipients.items():
            if r.read_at is not None and r.read_at > out.get(name, float("-inf")):
                out[name] = r.read_at
    return out


def _holder(lock: Path) -> int | None:
    """The listener holding *lock*; a lock file that cannot be read counts as nobody's."""
    try:
        return holder(lock)
    except BoardIOError:
        return None
