"""Following the file log: the reader from an offset, woken by the log's watcher."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from paneboard.protocol.posts import Post
from paneboard.state.filelog.log import LogReader
from paneboard.state.filelog.tail import LogWatcher
from paneboard.state.interest import Interest


class FileFollower:
    def __init__(self, folder: Path, position: int) -> None:
        self.reader = LogReader(folder / "log", position, board=folder.name)
        self.watcher = LogWatcher(folder)

    @property
    def position(self) -> int:
        return self.reader.position

    @property
    def rewrites(self) -> int:
        return self.reader.rewrites

    def batches(self) -> Iterator[list[tuple[int, Post]]]:
        return self.reader.batches()

    def records(self, interest: Interest | None = None) -> Iterator[list[tuple[int, Post, bytes]]]:
        return self.reader.records(interest)

    async def wait_changed(self) -> None:
        await self.watcher.wait_changed()

    def close(self) -> None:
        self.watcher.close()
