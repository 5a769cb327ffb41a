"""A board followed as it grows: the log reader, the fold, and the watcher together."""

from __future__ import annotations

from pathlib import Path
from typing import Self

import anyio

from listener.tail import LogWatcher
from protocol.posts import Post
from state.fold import BoardState, apply
from state.log import LogReader


class BoardView:
    """The state of one board, brought up to date by `refresh()`.

    Open it (`with BoardView(...) as view`) before the first `refresh()`, so no
    append between the read and the wait is ever missed.
    """

    def __init__(self, folder: Path, state: BoardState | None = None) -> None:
        self.folder = folder
        self.state = state if state is not None else BoardState()
        self.reader = LogReader(folder / "log", self.state.position)
        self.watcher = LogWatcher(folder)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.watcher.close()

    def refresh(self) -> list[tuple[int, Post]]:
        """Read and fold every post appended since the last refresh; return them."""
        new = self.reader.read_new()
        for seq, post in new:
            apply(self.state, seq, post)
        self.state.position = self.reader.offset
        return new

    async def refresh_async(self) -> list[tuple[int, Post]]:
        """`refresh()` in a worker thread, for reads that may be long (a cold catch-up)."""
        return await anyio.to_thread.run_sync(self.refresh)

    async def wait_changed(self) -> None:
        await self.watcher.wait_changed()
