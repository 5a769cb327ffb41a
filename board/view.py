"""A board followed as it grows: the log reader, the fold, and the watcher together.

`refresh()` returns what changed (`Refresh`); the view owns its fold (`state`) and the ids its
reader vouches for (`vouch`), and shares neither.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Self

import anyio
import msgspec

from paneboard.protocol.posts import Delivered, Post, Prompt
from paneboard.protocol.signing import VERIFIED
from paneboard.state.abc import Store
from paneboard.state.fold import BoardState, PromptState, apply
from paneboard.state.interest import Interest
from paneboard.state.trust.policy import WINDOW, Traffic
from paneboard.state.trust.verdicts import Verdicts


class Refresh(msgspec.Struct, frozen=True):
    """What one `BoardView.refresh` read: the new posts as (position, post), in log order (none
    unless kept), and whether the log was replaced (compacted), so the state is a new fold of
    it from its start."""

    posts: list[tuple[int, Post]]
    replaced: bool


class BoardView:
    """The state of one board, brought up to date by `refresh()`.

    Open it (`with BoardView(...) as view`) before the first `refresh()`, so no
    append between the read and the wait is ever missed.

    With *verdicts*, only verified posts move a stage (a forged answer ends no `wait`), and
    the stored bytes of each prompt the fold keeps for its recipient are kept beside it
    (`payload`), so a deliverer checks the signature of what it hands over, and of nothing
    else. Every record is noted in log order (state/trust/verdicts.py: how a name's key is pinned).
    *verify* narrows the checks to the posts about the prompts it accepts (the one a `wait`
    follows); the others move stages unchecked, for a reader that looks at none of them.
    With *traffic*, every prompt read is noted there (the loop limit, and when it arrived), and
    so is every verified `delivered` receipt of the traffic's agent (the rate).

    A pane's fold (a *state* with a recipient, dropping closed prompts) read without keeping
    the posts (`refresh(keep=False)`: a listener's catch-up) reads only the records it acts on
    (state/interest.py): its agent's prompts and posts, the posts about the prompts it keeps,
    and the records of names not pinned yet; the store skips the rest undecoded.
    """

    def __init__(
        self,
        store: Store,
        state: BoardState | None = None,
        verdicts: Verdicts | None = None,
        traffic: Traffic | None = None,
        verify: Callable[[str], bool] | None = None,
    ) -> None:
        self.store = store
        self.state = state if state is not None else BoardState()
        self.verdicts = verdicts
        self.traffic = traffic
        self.verify = verify
        self.follower = store.follow(self.state.position)
        self._rewrites = self.follower.rewrites  # the rewrites the fold has followed
        self.payloads: dict[str, bytes] = {}  # prompt id -> its bytes as stored (see above)
        # Ids of posts this process wrote itself (`vouch`): read back, they move stages unchecked.
        self._vouched: set[str] = set()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.follower.close()

    def vouch(self, ids: Iterable[str]) -> None:
        """Take *ids* as posts this process wrote itself: read back, they move stages unchecked
        (each once)."""
        self._vouched.update(ids)

    def refresh(self, *, keep: bool = True) -> Refresh:
        """Read and fold every post appended since the last refresh; what changed.

        If the log was replaced (compacted), the state is folded again from its start (a new
        `state`) and the result says so.
        """
        if self.traffic is not None:
            self.traffic.reading()
        changed = self._read(keep)
        if self.traffic is not None:
            self.traffic.read()
        return changed

    def _read(self, keep: bool) -> Refresh:
        records = self._records() if keep else self._needed()
        first = next(records, None)  # opening the log tells whether it was replaced
        replaced = self.follower.rewrites != self._rewrites
        if replaced:
            self._rewrites = self.follower.rewrites
            self.state = msgspec.structs.replace(self.state, prompts={}, position=0)
            self.payloads = {}
        new: list[tuple[int, Post]] = []
        for batch in itertools.chain([] if first is None else [first], records):
            self._fold(batch)
            if keep:
                new += [(position, post) for position, post, _ in batch]
        self.state.position = self.follower.position
        if len(self.payloads) > len(self.state.prompts):
            self.payloads = {k: v for k, v in self.payloads.items() if k in self.state.prompts}
        return Refresh(new, replaced)

    def _records(self) -> Iterator[list[tuple[int, Post, bytes | None]]]:
        if self.verdicts is None:
            for batch in self.follower.batches():
                yield [(position, post, None) for position, post in batch]
        else:
            yield from self.follower.records()  # type: ignore[misc]  # bytes fit bytes | None

    def _needed(self) -> Iterator[list[tuple[int, Post, bytes | None]]]:
        """As `_records`, leaving out what a pane's fold does not act on, when this is one."""
        state, traffic = self.state, self.traffic
        if (
            state.recipient is None
            or state.keep_closed
            or self.verify is not None
            or (traffic is not None and traffic.agent != state.recipient)
        ):
            yield from self._records()
            return
        settled = None
        if self.verdicts is not None:
            self.verdicts.pinned()  # the pins read now: their names' records can be skipped
            settled = self.verdicts.settled
        interest = Interest(state.recipient, state.prompts, settled)
        for batch in self.follower.records(interest):
            if self.verdicts is None:
                yield [(position, post, None) for position, post, _ in batch]
            else:
                yield batch  # type: ignore[misc]  # bytes fit bytes | None
            interest.prompts = self.state.prompts  # folded: a compacted log's fold is new
            interest.pending.clear()

    def _fold(self, batch: list[tuple[int, Post, bytes | None]]) -> None:
        state, verdicts, mine = self.state, self.verdicts, self.state.recipient
        settled: set[str] = set() if verdicts is None else verdicts.settled
        for position, post, payload in batch:
            if self.traffic is not None and isinstance(post, Prompt):
                self.traffic.note(post)
            if verdicts is None or payload is None:
                apply(state, position, post)
                continue
            if post.sender not in settled:
                verdicts.note(post.sender, payload)  # every record, in log order: the pins
            if isinstance(post, Prompt):
                apply(state, position, post)
                kept = state.prompts.get(post.id)
                if mine is not None and kept is not None and kept.position == position:
                    self.payloads[post.id] = payload  # the record the fold kept, not a copy
            elif post.id in self._vouched:
                self._vouched.discard(post.id)
                apply(state, position, post)
            elif self.verify is not None and not self.verify(post.prompt_id):
                apply(state, position, post)
            else:
                apply(state, position, post, verdicts.lazy(post, payload))
            if self.traffic is not None and isinstance(post, Delivered):
                self._handed(post, payload)

    def _handed(self, post: Delivered, payload: bytes | None) -> None:
        """Note a `delivered` receipt of the traffic's agent that the fold took (or, for a prompt
        the fold no longer keeps, one that verifies): not a forged one, nor one for a prompt a
        person approved (that is the person's decision, outside the rate)."""
        traffic = self.traffic
        assert traffic is not None
        if post.sender != traffic.agent:
            return
        ps = self.state.prompts.get(post.prompt_id)
        if ps is not None:
            r = ps.recipients.get(post.sender)
            if r is not None and r.delivered_at == post.ts and r.approved_at is None:
                traffic.handed_over(ps.prompt.sender, _turn(post), post.ts, traffic.began)
            return
        link = traffic.links.get(post.prompt_id)
        if link is None or post.ts <= traffic.began - WINDOW:
            return  # not a prompt to the agent, or out of the minute already: nothing to check
        if payload is None or self.verdicts is None:
            trusted = True
        else:
            trusted = self.verdicts.lazy(post, payload)() == VERIFIED
        if trusted:
            traffic.handed_over(link.sender, _turn(post), post.ts, traffic.began)

    def payload(self, ps: PromptState) -> bytes | None:
        """The bytes *ps*'s prompt is stored as: kept from the read, or read again at its
        position (a prompt folded before a checkpoint); None if the store no longer has it."""
        found = self.payloads.get(ps.prompt.id)
        if found is not None:
            return found
        follower = self.store.follow(ps.position)
        recipient = self.state.recipient  # read the prompt, not every record after it
        only = None if recipient is None else Interest(recipient, ())
        try:
            for batch in follower.records(only):
                for _, post, payload in batch:
                    if post.id == ps.prompt.id:
                        self.payloads[post.id] = payload
                        return payload
                    return None
        finally:
            follower.close()
        return None

    async def refresh_async(self) -> Refresh:
        """As `refresh`, in a worker thread, without keeping the posts (a cold catch-up may be
        long)."""
        if self.traffic is not None:
            self.traffic.reading()  # the clock is read here, in the event loop (a test's clock)
        changed = await anyio.to_thread.run_sync(lambda: self._read(keep=False))
        if self.traffic is not None:
            self.traffic.read()
        return changed

    async def wait_changed(self) -> None:
        await self.follower.wait_changed()


def _turn(post: Delivered) -> str:
    """The handover a receipt counts in for the rate: one text, one turn started."""
    return post.handover or post.prompt_id
