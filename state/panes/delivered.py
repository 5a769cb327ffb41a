"""The delivered-key log: what a pane has handed over, and the prompts it saw finished.

One line per entry: a delivered key (``BOARD SENDER ID``), or ``closed ID`` for a prompt to
the pane's agent that its fold dropped once finished (closed by every recipient, cancelled
or refused), so a copy of it published again is never new (state/fold.py). Append-only and
fsynced: a key before its prompt's receipt, closed ids in one write per checkpoint. A
listener restarted any number of times never hands a prompt over twice. A line torn by a
crash is ignored (that key was never recorded, so the prompt may arrive again: the one
documented duplicate window; a torn closed id is written again with the next ones, as its
close is still on the board after the checkpoint before it).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from paneboard.protocol.errors import BoardIOError

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
_CLOSED = "closed "  # a delivered key has three words, a closed id two


class DeliveredKeys:
    """The keys recorded in one pane's delivered-key log, and the closed prompt ids."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._end = 0
        self.closed: set[str] = set()
        self.keys = self._load()

    def __contains__(self, key: str) -> bool:
        return key in self.keys

    def _load(self) -> set[str]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return set()
        except OSError as exc:
            raise BoardIOError(f"cannot read {self.path}: {exc.strerror}") from exc
        with os.fdopen(fd, "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        self._end = len(data) - len(lines[-1])  # the last piece is "" or a line torn by a crash
        keys = set()
        for line in lines[:-1]:
            text = line.decode(errors="replace")
            if text.startswith(_CLOSED) and " " not in text[len(_CLOSED) :]:
                self.closed.add(text[len(_CLOSED) :])
            elif text:
                keys.add(text)
        return keys

    def record(self, key: str) -> None:
        """Add *key*, durably, before returning."""
        if key in self.keys:
            return
        self._append(key.encode() + b"\n", "record delivery")
        self.keys.add(key)

    def record_closed(self, prompt_ids: Iterable[str]) -> None:
        """Add the ids of *prompt_ids* not recorded yet, durably, in one write."""
        new = sorted(set(prompt_ids) - self.closed)
        if new:
            self._append("".join(f"{_CLOSED}{pid}\n" for pid in new).encode(), "record closed ids")
            self.closed.update(new)

    def _append(self, lines: bytes, what: str) -> None:
        try:
            fd = os.open(self.path, _FLAGS, 0o600)
            try:
                if os.fstat(fd).st_size != self._end:
                    # cut a torn line (the pane lock makes us the only writer)
                    os.ftruncate(fd, self._end)
                os.write(fd, lines)
                os.fsync(fd)
                self._end += len(lines)
            finally:
                os.close(fd)
        except OSError as exc:
            raise BoardIOError(f"cannot {what} in {self.path}: {exc.strerror}") from exc
