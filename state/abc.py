"""Where a board's posts live, as one interface; the stores themselves live beside it.

`state.filestore.FileStore` is the embedded default (the board's log file);
`state.natsstore.NatsStore` keeps a board on NATS JetStream, for agents on several machines;
`state.stores.open_store` picks one from a `--store` URL. A position is where a post sits,
increasing in log order: a byte offset in the file log, a stream sequence in JetStream.
Catch-up, order, delivered keys and receipts are the same code for every store; only these
operations differ.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from paneboard.protocol.posts import Post
    from paneboard.state.compact import Compacted

__all__ = ["Follower", "Store"]


class Follower(Protocol):
    """Reads a store forward from a position, and waits for it to grow."""

    replaced: bool  # the store was rewritten (compacted) since the last read: fold it again

    @property
    def offset(self) -> int:
        """The position after the last post handed out."""
        ...

    def batches(self) -> Iterator[list[tuple[int, Post]]]:
        """Every post after `offset` as (position, post), a batch at a time."""
        ...

    async def wait_changed(self) -> None:
        """Return once the store may have grown (woken by the kernel or the server,
        never a poll)."""
        ...

    def close(self) -> None: ...


class Store(Protocol):
    name: str
    # Seconds a listener's presence lives on the store (it refreshes it before then); None
    # where the store shares no presence and the pane's own file is all there is.
    presence_ttl: float | None

    @property
    def where(self) -> str:
        """The store as messages name it (a path, or a URL without credentials)."""
        ...

    def append(
        self, posts: Sequence[Post], *, guard: Callable[[], None] | None = None
    ) -> list[int]:
        """Store *posts* durably, in order; their positions. *guard* may refuse first,
        by raising."""
        ...

    def append_payloads(
        self, payloads: Sequence[bytes], *, guard: Callable[[], None] | None = None
    ) -> list[int]:
        """As `append`, for posts already encoded (`post`'s path, which skips msgspec)."""
        ...

    def read_all(self) -> list[tuple[int, Post]]: ...

    def follow(self, position: int) -> Follower: ...

    def has_posts(self) -> bool:
        """False only when the board certainly holds nothing yet (no need to read it)."""
        ...

    def identity(self) -> str:
        """What a checkpoint must match to describe this store ("" while it is empty)."""
        ...

    def accepts(self, position: int) -> bool:
        """True if *position* is one this store's history has (a checkpoint may start there)."""
        ...

    def compact(self, now: float, archive: Path | None = None) -> Compacted:
        """Rewrite the board keeping only open prompts (`BadInput` where the store cannot)."""
        ...

    def put_presence(self, agent: str, data: bytes) -> None:
        """Say that *agent*'s listener is here (*data*: its presence record, JSON)."""
        ...

    def presences(self) -> dict[str, bytes]:
        """agent -> presence record, for the listeners the store has seen within the TTL."""
        ...

    def check(self) -> tuple[str, str]:
        """For `doctor`: (ok|warn|fail, what was found)."""
        ...

    def close(self) -> None: ...
