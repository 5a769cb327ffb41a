"""Compaction: a board's log rewritten to hold only what is still open.

Kept: every prompt someone can still receive (not cancelled, not expired, not closed by
all its recipients) and every post about it, in their original order. Dropped: the rest.
Safe while posts are appended and listeners run: it holds the append lock while it
writes the new file and renames it over the log; a writer that was waiting on the old
file reopens the new one (`append_payloads` checks the inode under the lock); a reader
that sees a new inode folds the new log from its start (`LogReader.rewrites`).
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import msgspec

from paneboard.protocol.errors import BoardIOError
from paneboard.protocol.posts import Prompt
from paneboard.protocol.words import CLOSED_STAGES
from paneboard.state.filelog.framing import frame, generation_record
from paneboard.state.filelog.log import LogReader, open_regular
from paneboard.state.files import write_atomic
from paneboard.state.fold import BoardState, apply, expired


class Compacted(msgspec.Struct):
    before_bytes: int
    after_bytes: int
    kept: int
    dropped: int
    seconds: float


def compact(log: Path, now: float, archive: Path | None = None) -> Compacted:
    """Rewrite *log* in place keeping only open prompts and their posts; return what it did."""
    started = time.perf_counter()
    fd = open_regular(log, os.O_RDWR)
    if fd is None:
        raise BoardIOError(f"cannot open {log}: No such file or directory")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        before = os.fstat(fd).st_size
        keep, total = _keep(log, now)
        if archive is not None:
            archive.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.link(log, archive)
        new = generation_record() + b"".join(frame(p) for p in keep)  # a new generation
        write_atomic(log, new, durable=True)
        after = len(new)
    finally:
        os.close(fd)  # releases the lock: waiting writers see the new inode and reopen
    return Compacted(before, after, len(keep), total - len(keep), time.perf_counter() - started)


def _keep(log: Path, now: float) -> tuple[list[bytes], int]:
    """The payloads to keep, in log order, and how many records there were: each as stored,
    byte for byte, so its signature still checks."""
    state = BoardState()
    records: list[tuple[str, bytes]] = []  # (the prompt id it belongs to, payload)
    for batch in LogReader(log, board=log.parent.name).records():  # another board's: dropped
        for position, post, payload in batch:
            apply(state, position, post)
            records.append((post.id if isinstance(post, Prompt) else post.prompt_id, payload))
    live = {
        pid
        for pid, ps in state.prompts.items()
        if ps.cancelled is None
        and not expired(ps, now)
        and any(r.stage not in CLOSED_STAGES for r in ps.recipients.values())
    }
    return [payload for pid, payload in records if pid in live], len(records)
