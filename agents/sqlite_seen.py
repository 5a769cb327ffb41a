"""`seen` from an agent that keeps its conversation in SQLite (Kilo Code, Hermes Agent).

The agent's database is read, never written: each read opens it read-only (``mode=ro``), asks
for the user-role texts holding a prompt header in the rows added since the mark, and closes.
The agent writes the file meanwhile: a read that finds it busy or locked, not there yet, or
not (yet) a database of that shape finds nothing, and the next change of the file reads again.
The mark is the last row read (its ``rowid``) in that file (its inode): a database replaced is
read from its start. A change of the file is a write to it or to its ``-wal`` or ``-journal``
beside it (in WAL mode a commit touches only the ``-wal``). In WAL mode a commit's last write to
a file comes before SQLite marks it committed, in the ``-shm`` it maps in memory (which no file
event tells): a read woken by that write can miss the commit, so each wake reads once more
`SETTLE` seconds later, rather than wait for the agent's next write.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from paneboard.listener.seen import Sighting, Texts
from paneboard.state.panes.transcript import FileWatch, Lines, Mark, load_mark

BUSY_MS = 500  # how long a read waits for the agent's write lock before trying at the next wake
SETTLE = 0.2  # seconds after a wake's read to read again (a commit marked after the first read)


class RowReader:
    """The user texts the *query* finds in the database *path* after the mark's row.

    *query* takes one parameter, the last row read, and gives ``(rowid, text, taken)`` rows in
    rowid order; each row *taken* (the agent has started the turn it is an input of) becomes a
    record ``{"role": "user", "text": TEXT}``. A row not taken yet (queued behind a running turn)
    holds the mark before it, so a later read finds it again (and the rows after it: the
    follower's receipts are posted once).
    """

    def __init__(self, path: Path, query: str, mark: Mark | None = None) -> None:
        self.path = path
        self.query = query
        self.inode: int | None = None
        self.row = 0
        if mark is not None and mark.path == str(path):
            self.inode, self.row = mark.inode, mark.offset

    @property
    def mark(self) -> Mark | None:
        return None if self.inode is None else Mark(str(self.path), self.inode, self.row)

    def read_new(self) -> list[dict[str, Any]]:
        """The records of the rows added since the last read (blocking file work)."""
        try:
            inode = os.stat(self.path).st_ino
        except OSError:
            return []  # not there (yet, or any more): a later wake reads it
        if inode != self.inode:
            self.inode, self.row = inode, 0  # another file than the mark's: from its start
        try:
            rows = self._rows()
        except sqlite3.Error:
            return []  # busy, locked, or not yet of its shape: the next change reads again
        waiting = [int(r) for r, _, taken in rows if not taken]
        if waiting:
            self.row = min(waiting) - 1
        elif rows:
            self.row = max(int(r) for r, _, _ in rows)
        return [{"role": "user", "text": t} for _, t, taken in rows if taken and isinstance(t, str)]

    def _rows(self) -> list[tuple[Any, Any, Any]]:
        uri = f"{self.path.as_uri()}?mode=ro"
        db = sqlite3.connect(uri, uri=True, timeout=BUSY_MS / 1000)
        try:
            return list(db.execute(self.query, (self.row,)).fetchall())
        finally:
            db.close()

    def close(self) -> None:
        """Nothing stays open between reads."""


class DbSighting(Sighting):
    """A pane's view of its agent's SQLite conversation database, from the pane's mark on."""

    def __init__(self, mark_path: Path, source: str, path: Path, texts: Texts, query: str) -> None:
        self.query = query
        super().__init__(mark_path, source, path, texts)

    def _reader(self, path: Path) -> Lines:
        return RowReader(path, self.query, load_mark(self.mark_path))

    def read_new(self) -> list[str]:
        """The prompt ids in the rows added since the last read, read twice (blocking)."""
        found = super().read_new()
        time.sleep(SETTLE)  # in a worker thread: the follower's own wait, nobody else's
        return found + super().read_new()

    def watch(self) -> FileWatch:
        assert self.reader is not None
        path = self.reader.path
        names = {path.name, f"{path.name}-wal", f"{path.name}-journal"}
        return FileWatch(path.parent, lambda name: name in names)


def user_text(record: dict[str, Any]) -> list[str]:
    """A `RowReader` record's text."""
    text = record.get("text")
    return [text] if record.get("role") == "user" and isinstance(text, str) else []
