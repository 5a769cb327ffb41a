"""Waking when a board's log, or a pane's file, changes (through `state.watch`).

The watch is on the board's folder (so a log created or replaced later is seen),
filtered to events naming the log.
"""

from __future__ import annotations

from pathlib import Path

from paneboard.state.watch import (
    IN_CLOSE_WRITE,
    IN_CREATE,
    IN_DELETE,
    IN_MODIFY,
    IN_MOVED_TO,
    Watch,
)


class LogWatcher(Watch):
    """`await wait_changed()` returns after the log in *folder* may have changed."""

    def __init__(self, folder: Path, name: str = "log") -> None:
        super().__init__(folder, lambda got: got == name)


class FolderWatcher(Watch):
    """`await wait_changed()` returns after a file in *folder* whose name ends with one of
    *suffixes* was created, written, closed after writing, renamed in or deleted.

    A closed write catches a process that held a file open for writing and died (its pane
    lock), SIGKILL included: the kernel closes its files.
    """

    MASK = IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO | IN_DELETE

    def __init__(self, folder: Path, suffixes: tuple[str, ...]) -> None:
        super().__init__(folder, lambda name: name.endswith(suffixes), self.MASK)
