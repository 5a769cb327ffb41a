"""Where a board's posts live, as one interface; the stores themselves live beside it.

`state.filelog.store.FileStore` is the embedded default (the board's log file);
`state.nats.store.NatsStore` keeps a board on NATS JetStream, for agents on several machines;
`state.stores.open_store` picks one from a `--store` URL. A position is where a post sits,
increasing in log order: a byte offset in the file log, a stream sequence in JetStream.
Catch-up, order, delivered keys and receipts are the same code for every store; only these
operations differ.

A store is its `Log` and its `PresenceStore`, and a context manager that closes it. What only
some stores can do is a capability, asked with ``isinstance``: `Compactable`, `HealthReport`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Self, runtime_checkable

if TYPE_CHECKING:
    from types import TracebackType

    from paneboard.protocol.posts import Post
    from paneboard.state.filelog.compact import Compacted
    from paneboard.state.health import Check
    from paneboard.state.interest import Interest
    from paneboard.state.limit import OpenLimit
    from paneboard.state.trust.sealing import Sealer

__all__ = ["Compactable", "Follower", "HealthReport", "Log", "PresenceStore", "Store"]


class Follower(Protocol):
    """Reads a store forward from a position, and waits for it to grow."""

    @property
    def rewrites(self) -> int:
        """How many times the store was found rewritten (compacted) since the follower began;
        it only counts up, and a reader that saw it change folds again from the start."""
        ...

    @property
    def position(self) -> int:
        """The position after the last post handed out."""
        ...

    def batches(self) -> Iterator[list[tuple[int, Post]]]:
        """Every post after `position` as (position, post), a batch at a time."""
        ...

    def records(self, interest: Interest | None = None) -> Iterator[list[tuple[int, Post, bytes]]]:
        """As `batches`, with each post's payload as stored, byte for byte (what a signature
        covers). With *interest*, a store may leave out the records it does not need
        (state/interest.py: the file log does; NATS hands out every one)."""
        ...

    async def wait_changed(self) -> None:
        """Return once the store may have grown (woken by the kernel or the server,
        never a poll)."""
        ...

    def close(self) -> None: ...


class Log(Protocol):
    """A board's posts, in order."""

    sealer: Sealer | None  # when set, every post appended is signed with its sender's key

    @property
    def where(self) -> str:
        """The store as messages name it (a path, or a URL without credentials)."""
        ...

    @property
    def label(self) -> str:
        """The store in a few words, for a status line."""
        ...

    def append(self, posts: Sequence[Post], *, limit: OpenLimit | None = None) -> list[int]:
        """Store *posts* durably, in order; their positions.

        With *limit*, the one post is a prompt, stored only if its sender then has fewer than
        the limit's open prompts for each recipient (`BadInput` otherwise). The check and the
        write are one step: no other post lands between them, from any process or machine.
        """
        ...

    def append_encoded(
        self, payloads: Sequence[bytes], *, limit: OpenLimit | None = None
    ) -> list[int]:
        """As `append`, for posts already encoded, stored as these exact bytes (`post`'s path,
        which skips msgspec on the file log)."""
        ...

    def read_all(self) -> list[tuple[int, Post]]: ...

    def follow(self, position: int) -> Follower: ...

    def has_posts(self) -> bool:
        """False only when the board certainly held nothing as the store was opened."""
        ...

    def identity(self) -> str:
        """What a checkpoint must match to describe this store ("" while it is empty)."""
        ...

    def accepts(self, position: int) -> bool:
        """True if *position* is one this store's history has (a checkpoint may start there)."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class PresenceStore(Protocol):
    """Who listens on a board, as the store tells it beside the panes' own files."""

    @property
    def ttl(self) -> float:
        """Seconds a record lives unless put again (``math.inf``: as long as the pane)."""
        ...

    @property
    def shared(self) -> bool:
        """True where listeners on other machines put records too: read it again now and then,
        since no local file changes when they do."""
        ...

    def put(self, agent: str, data: bytes) -> None:
        """Say that *agent*'s listener is here (*data*: its presence record, JSON)."""
        ...

    def read(self) -> dict[str, bytes]:
        """agent -> presence record, for the listeners the store has seen within the TTL."""
        ...


class Store(Log, Protocol):
    """A board's log, with its presence."""

    @property
    def presence(self) -> PresenceStore: ...


@runtime_checkable
class Compactable(Protocol):
    """A store that can rewrite its log keeping only what is still open."""

    def compact(self, now: float, archive: Path | None = None) -> Compacted:
        """Rewrite the board keeping only open prompts; the old log goes to *archive*."""
        ...


@runtime_checkable
class HealthReport(Protocol):
    """A store that can tell `doctor` how it is."""

    def health(self) -> Check:
        """What reading the whole board, and asking its server, found."""
        ...
