"""One agent's pane on one board: the files a deliverer keeps, and the order it writes them.

The deliverer (listener/deliverer.py, for the listener and the Stop hook alike) goes through a
`Pane`, which keeps files, not the fold: the fold is the deliverer's, handed in as a value.

- `take_lock()`: one deliverer per pane at a time (`PaneLocked` otherwise);
- `start()`: the agent's fold and traffic to start from, from the checkpoint when it still fits
  the log, knowing the prompts the pane saw finished (a copy of one is never new: state/fold.py);
- `undelivered(state)`: the open prompts whose key is not recorded, in catch-up order;
- `record(prompts, door)`: each delivered key, durably, then the receipts on the board, so a
  crash between the two costs a missing receipt, never a second delivery;
- `take_written()`: the ids of the posts written since it was last asked (for the reader to vouch);
- `remember_finished(state)`: the ids of the prompts the fold saw finished, durably;
- `save_checkpoint(state, traffic)`: those, then the pruned fold, for a quick start next time.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Sequence

from paneboard.protocol.errors import BoardIOError
from paneboard.protocol.ids import header
from paneboard.protocol.posts import Delivered, Header, Held, Outcome, Post, Prompt, delivered_key
from paneboard.state.abc import Store
from paneboard.state.failpoint import failpoint
from paneboard.state.fold import BoardState, PromptState, open_for, prune
from paneboard.state.panes import checkpoint
from paneboard.state.panes.delivered import DeliveredKeys
from paneboard.state.panes.lock import PaneLock, take_pane_lock
from paneboard.state.paths import BoardPaths
from paneboard.state.trust.policy import Traffic


def key(prompt: Prompt) -> str:
    """The delivered key of *prompt*: recorded once it is handed over."""
    return delivered_key(prompt.board, prompt.sender, prompt.id)


class Pane:
    """Agent *agent*'s pane on the board of *paths*, whose posts are in *store*.

    Its files are `files` (state/paths.py `PaneFiles`). *now* is the wall clock, for expiry and
    receipts.
    """

    def __init__(
        self,
        paths: BoardPaths,
        agent: str,
        store: Store,
        *,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.paths = paths
        self.agent = agent
        self.store = store
        self.now = now
        self.files = paths.pane(agent)
        self._keys: DeliveredKeys | None = None
        self._lock: PaneLock | None = None
        self._written: list[str] = []  # ids of the posts written since `take_written`

    @property
    def board(self) -> str:
        return self.paths.board

    def take_lock(self) -> None:
        """Take the pane lock, without waiting (`PaneLocked` names the holder's pid), and read
        the delivered keys: a key log that cannot be read (a planted link, say) stops the
        deliverer before it hands anything over, not at its first delivery."""
        if self._lock is None:
            self.paths.ensure()  # the lock and the keys are local, whatever the store
            self._lock = take_pane_lock(self.files.lock, self.board, self.agent)
            try:
                _ = self.keys
            except BaseException:
                self.release()
                raise

    def release(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    @property
    def keys(self) -> DeliveredKeys:
        """The delivered-key log, read when the lock is taken (under it: its only writer)."""
        if self._keys is None:
            self._keys = DeliveredKeys(self.files.delivered)
        return self._keys

    def handed_over(self, prompt: Prompt) -> bool:
        """Whether this pane recorded *prompt*'s delivery."""
        return key(prompt) in self.keys

    def start(self) -> tuple[BoardState, Traffic]:
        """The agent's fold to start from (the checkpoint, or an empty fold of its prompts), and
        its traffic (the prompts to and from the agent and its handovers: the rate and the loop
        limit) as the checkpoint kept it."""
        state, kept = checkpoint.start(self.files.checkpoint, self.store, self.agent)
        traffic = Traffic(self.agent, now=self.now)
        traffic.restore(kept)
        state.finished.update(self.keys.closed)
        return state, traffic

    def undelivered(self, state: BoardState) -> list[PromptState]:
        """The prompts of *state* open for the agent and not handed over yet, in catch-up
        order."""
        now = self.now()
        return [ps for ps in open_for(state, self.agent, now) if not self.handed_over(ps.prompt)]

    def record(
        self,
        prompts: Sequence[Prompt],
        door: str,
        outcome: Outcome = "accepted",
        *,
        held_because: str | None = None,
        warn: Callable[[str], None] | None = None,
        woke: str | None = None,
        handover: str | None = None,
        notices: Collection[str] = (),
    ) -> None:
        """Record *prompts* as handed over through *door*: the keys, then the receipts.

        With *held_because* (the agent's reason), the receipts say the agent holds them for
        its person; with *woke* (a session id), that they started that session again; with
        *handover*, that they went in one text, the one of that first prompt; those in
        *notices* went as notices. A key that cannot be recorded raises `BoardIOError`; so does
        a receipt the board refuses, unless *warn* is given, which is told instead (the keys
        stay).
        """
        for prompt in prompts:
            self.keys.record(key(prompt))
        failpoint("after-record")
        given = (handover, notices)
        try:
            self.post([self._receipt(p, door, outcome, held_because, woke, given) for p in prompts])
        except BoardIOError as exc:
            if warn is None:
                raise
            what = "delivered" if held_because is None else "held"
            warn(f"could not post the {what} notice: {exc}")

    def _receipt(
        self,
        prompt: Prompt,
        door: str,
        outcome: Outcome,
        held_because: str | None,
        woke: str | None,
        given: tuple[str | None, Collection[str]] = (None, ()),
    ) -> Post:
        if held_because is not None:
            return Held(
                **self._header(), prompt_id=prompt.id, door=door, by="agent", reason=held_because
            )
        head = self._header()
        handover, notices = given
        return Delivered(
            **head,
            prompt_id=prompt.id,
            door=door,
            outcome=outcome,
            woke=woke,
            handover=handover,
            notice=prompt.id in notices,
        )

    def _header(self) -> Header:
        return header(self.board, self.agent, self.now(), os.urandom(10))

    def post(self, posts: Sequence[Post]) -> None:
        """Append *posts* under the agent's name (nothing for none)."""
        if posts:
            self.store.append(list(posts))
            self._written += [p.id for p in posts]

    def take_written(self) -> list[str]:
        """The ids of the posts written since the last call (their reader vouches for them)."""
        written, self._written = self._written, []
        return written

    def remember_finished(self, state: BoardState) -> None:
        """Record the ids of the prompts *state* dropped once finished, in one write: the
        checkpoint leaves them out, and a copy of one on the board is never new after a restart
        (whatever the store's own dedupe)."""
        self.keys.record_closed(state.finished)

    def save_checkpoint(self, state: BoardState, traffic: Traffic) -> None:
        """Keep *state*, pruned to the prompts still receivable, and *traffic* as the pane's
        checkpoint (the finished ids first: a checkpoint never starts past a close they do not
        hold)."""
        self.remember_finished(state)
        pruned = prune(state, self.now())
        checkpoint.save(self.files.checkpoint, self.store, pruned, traffic.kept(pruned))
