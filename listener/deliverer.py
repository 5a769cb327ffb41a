"""One agent's deliverer on one board, built once for the listener and the Stop hook alike.

A `Deliverer` is a pane (its lock, keys, checkpoint and receipts: state/panes/pane.py), the fold it
delivers from (a `BoardView` with the agent's verdicts and traffic), the policy over it
(`PolicyScreen`), how a prompt is composed for the agent (`Composer`), and the door it
delivers through, one replaceable value (`use_door`): the loops around it (listen.py, stop.py)
decide only when to hand over, and through what.

Values pass between them, nothing is shared: `refresh()` returns what changed (`Refresh`: the
new posts, and whether the log was compacted), hands the view the ids of the posts the pane
wrote since the last one (to vouch for), and `state` is the view's fold as of now.
"""

from __future__ import annotations

from pathlib import Path
from typing import Generic, Protocol, Self, TypeVar

import msgspec

from paneboard.board.screen import PolicyScreen
from paneboard.board.view import BoardView, Refresh
from paneboard.protocol.compose import Provenance, compose
from paneboard.protocol.posts import Prompt
from paneboard.state.fold import BoardState, PromptState
from paneboard.state.panes.pane import Pane
from paneboard.state.trust.policy import Traffic
from paneboard.state.trust.verdicts import Verdicts

__all__ = ["Composer", "Deliverer", "Named", "Refresh"]


class Named(Protocol):
    """What a deliverer needs of its door: the name its posts give it."""

    @property
    def name(self) -> str: ...


D = TypeVar("D", bound=Named)


class Composer(msgspec.Struct, frozen=True):
    """The text an agent reads for a prompt (protocol/compose.py), with the commands that close
    the loop: *exe* is the paneboard command, *store* the options that name the store."""

    exe: str
    home: Path
    agent: str
    store: tuple[tuple[str, str], ...] = ()

    def __call__(self, prompt: Prompt, provenance: Provenance) -> str:
        return compose(
            prompt,
            exe=self.exe,
            home=str(self.home),
            agent=self.agent,
            store=self.store,
            provenance=provenance,
        )


class Deliverer(Generic[D]):
    """The deliverer of *pane* through *door*; open it (`with deliverer:`) before the first
    `refresh()`.

    Nothing is read or written before it is opened; the pane lock is the caller's to take
    first.
    """

    def __init__(self, pane: Pane, door: D, composer: Composer) -> None:
        self.pane = pane
        self.door = door
        self.compose = composer
        self._view: BoardView | None = None
        self._screen: PolicyScreen | None = None
        self._traffic: Traffic | None = None

    def use_door(self, door: D) -> None:
        """Deliver through *door* from the next handover on (the posts name it from then)."""
        self.door = door

    # -- open and closed ---------------------------------------------------------------------

    def open(self) -> None:
        """Read the agent's key and pins, start from the pane's checkpoint, and follow the
        board from there (the pane's folder exists once its lock is taken)."""
        verdicts = Verdicts(self.pane.paths.dir, own=self.pane.agent)
        state, self._traffic = self.pane.start()
        self._view = BoardView(self.pane.store, state, verdicts, self._traffic)
        self._screen = PolicyScreen(self.pane, self._view)

    def close(self) -> None:
        if self._view is not None:
            self._view.__exit__()

    @property
    def opened(self) -> bool:
        return self._view is not None

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def view(self) -> BoardView:
        if self._view is None:
            raise RuntimeError("the deliverer is not open")
        return self._view

    @property
    def screen(self) -> PolicyScreen:
        if self._screen is None:
            raise RuntimeError("the deliverer is not open")
        return self._screen

    @property
    def traffic(self) -> Traffic:
        if self._traffic is None:
            raise RuntimeError("the deliverer is not open")
        return self._traffic

    @property
    def state(self) -> BoardState:
        """The agent's fold as of the last refresh."""
        return self.view.state

    # -- reading -----------------------------------------------------------------------------

    def refresh(self, *, keep: bool = True) -> Refresh:
        """Fold what is new on the board; what changed (the new posts if *keep*)."""
        self.view.vouch(self.pane.take_written())
        return self.view.refresh(keep=keep)

    async def refresh_async(self) -> Refresh:
        """As `refresh(keep=False)`, in a worker thread (a cold catch-up may be long)."""
        self.view.vouch(self.pane.take_written())
        return await self.view.refresh_async()

    def catch_up(self) -> None:
        """Fold the board up to now and keep the ids of the prompts it saw finished (a Stop
        hook's start: one pass, no checkpoint yet)."""
        self.refresh(keep=False)
        self.pane.remember_finished(self.state)

    async def wait_changed(self) -> None:
        await self.view.wait_changed()

    def undelivered(self) -> list[PromptState]:
        """The prompts open for the agent and not handed over yet, in catch-up order."""
        return self.pane.undelivered(self.state)

    # -- deciding and handing over -----------------------------------------------------------

    def waiting(self, ps: PromptState) -> bool:
        """Whether *ps* waits for a person (held by the policy)."""
        return self.screen.waiting(ps)

    def admit(self, ps: PromptState) -> Provenance | None:
        """What the door tells the agent about *ps*, if the policy lets it through now; None
        if it is held or refused (posted, naming the door) or waits for the rate."""
        return self.screen.admit(ps, self.door.name)

    def take_back(self, prompt_id: str) -> None:
        """*prompt_id* was admitted but not handed over: it takes no place in the rate."""
        self.traffic.take_back(prompt_id)

    def save_checkpoint(self) -> None:
        self.pane.save_checkpoint(self.state, self.traffic)
