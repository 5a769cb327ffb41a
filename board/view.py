"""A board followed as it grows: the log reader, the fold, and the watcher together."""

from __future__ import annotations

import itertools
from typing import Self

import anyio

from paneboard.protocol.posts import Post
from paneboard.state.abc import Store
from paneboard.state.fold import BoardState, apply


class BoardView:
    """The state of one board, brought up to date by `refresh()`.

    Open it (`with BoardView(...) as view`) before the first `refresh()`, so no
    append between the read and the wait is ever missed.
    """

    def __init__(self, store: Store, state: BoardState | None = None) -> None:
        self.store = store
        self.state = state if state is not None else BoardState()
        self.follower = store.follow(self.state.position)
        self.replaced = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.follower.close()

    def refresh(self, *, keep: bool = True) -> list[tuple[int, Post]]:
        """Read and fold every post appended since the last refresh; return them if *keep*.

        If the log was replaced (compacted), the state is folded again from its start and
        `replaced` is set, for the caller to notice.
        """
        batches = self.follower.batches()
        first = next(batches, None)  # opening the log tells whether it was replaced
        if self.follower.replaced:
            self.follower.replaced = False
            # Emptied in place: whoever holds the state (a pane, its seen task) sees the new fold.
            self.state.prompts, self.state.position = {}, 0
            self.replaced = True
        new: list[tuple[int, Post]] = []
        state = self.state
        for batch in itertools.chain([] if first is None else [first], batches):
            for position, post in batch:
                apply(state, position, post)
            if keep:
                new += batch
        state.position = self.follower.position
        return new

    async def refresh_async(self) -> None:
        """Fold what is new in a worker thread, without keeping it (a cold catch-up may be long)."""
        await anyio.to_thread.run_sync(lambda: self.refresh(keep=False))

    async def wait_changed(self) -> None:
        await self.follower.wait_changed()
