"""The delivered-key log: what a pane's listener has handed over, one key per line.

Append-only and fsynced per key, so a listener restarted any number of times never
hands a prompt over twice. A line torn by a crash is ignored (that key was never
recorded, so the prompt may arrive again: the one documented duplicate window).
"""

from __future__ import annotations

import os
from pathlib import Path

from paneboard.protocol.errors import BoardIOError

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC


class DeliveredKeys:
    """The keys recorded in one pane's delivered-key log."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._end = 0
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
        return {line.decode(errors="replace") for line in lines[:-1] if line}

    def record(self, key: str) -> None:
        """Add *key*, durably, before returning."""
        if key in self.keys:
            return
        try:
            fd = os.open(self.path, _FLAGS, 0o600)
            try:
                if os.fstat(fd).st_size != self._end:
                    # cut a torn line (the pane lock makes us the only writer)
                    os.ftruncate(fd, self._end)
                line = key.encode() + b"\n"
                os.write(fd, line)
                os.fsync(fd)
                self._end += len(line)
            finally:
                os.close(fd)
        except OSError as exc:
            raise BoardIOError(f"cannot record delivery in {self.path}: {exc.strerror}") from exc
        self.keys.add(key)
