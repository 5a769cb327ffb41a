"""One agent's deliverer on one board, built once for the listener and the Stop hook alike.

A `Deliverer` is a pane (its lock, keys, checkpoint and receipts: state/panes/pane.py), the fold it
delivers from (a `BoardView` with the agent's verdicts and traffic), the policy over it
(`PolicyScreen`), how a prompt is composed for the agent (`Composer`), and the door it
delivers through, one replaceable value (`use_door`): the loops around it (listen.py, stop.py)
decide only when to hand over, and through what.

Values pass between them, nothing is shared: `refresh()` returns what changed (`Refresh`: the
new posts, and whether the log was compacted), hands the view the ids of the posts the pane
wrote since the last one (to vouch for), and `state` is the view's fold as of now.

**One text for many prompts.** `gather()` makes a `Handover` of the prompts due at once: each
admitted by the policy in catch-up order (urgent first, then oldest), composed apart (a body,
or a notice as the policy and the sender say: `takes_notice`), up to `BATCH_BYTES` of text (a
single prompt larger than that goes alone) and, for notices, `NOTICE_LIST` of them; the rest
wait for the next text. The rate counts the handover once per sender in it (one turn started in
the agent), and every prompt in it gets its own receipts.

**One unread notice.** While a notice this pane handed over is unread (`notice_waits`), no new
text goes out: the next one, once the agent read, acked or answered a prompt since (any: it is
reading the board), or `NOTICE_AGAIN` seconds after the notice, lists what waits, urgent first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, Protocol, Self, TypeVar

import msgspec

from paneboard.board.screen import PolicyScreen
from paneboard.board.view import BoardView, Refresh
from paneboard.protocol.compose import Provenance, coalesce, compose, notice
from paneboard.protocol.posts import Ack, Answer, Prompt, Read
from paneboard.state.fold import BoardState, PromptState, is_open
from paneboard.state.panes.pane import Pane
from paneboard.state.trust.policy import Traffic, takes_notice
from paneboard.state.trust.verdicts import Verdicts

__all__ = [
    "BATCH_BYTES",
    "NOTICE_AGAIN",
    "NOTICE_LIST",
    "Composer",
    "Deliverer",
    "Handover",
    "Named",
    "Refresh",
    "coalesces",
]

# The most text one handover carries. Every door takes it: Claude Code's inbox reads lines of up
# to 1 MiB, one argument to `codex queue` or a resume is at most 128 KiB, and the Stop hook's
# reason is bounded at 64 KiB already. 64 KiB is about 16,000 tokens: a burst of 60 short
# prompts (about 600 bytes each, with their commands) fits in one text.
BATCH_BYTES = 64 * 1024
NOTICE_LIST = 30  # notices one text lists; the rest are counted, and listed in the next one
NOTICE_AGAIN = 600.0  # seconds after an unread notice that the next may go out anyway


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

    def __call__(
        self,
        prompt: Prompt,
        provenance: Provenance,
        now: float | None = None,
        *,
        as_notice: bool = False,
    ) -> str:
        """*prompt*'s body as the agent reads it, or its notice (*now*: the reader's clock)."""
        exe, home, agent, store = self.exe, str(self.home), self.agent, self.store
        if as_notice:
            when = prompt.ts if now is None else now
            return notice(
                prompt,
                exe=exe,
                home=home,
                agent=agent,
                store=store,
                provenance=provenance,
                now=when,
            )
        return compose(
            prompt, exe=exe, home=home, agent=agent, store=store, provenance=provenance, now=now
        )


def coalesces(door: object) -> bool:
    """Whether *door* takes several prompts in one text: every door that starts an agent's
    turn; not those whose record is one prompt's (`stdout`'s line, `exec`'s environment,
    `maildir`'s file), which say so (``coalesces = False``)."""
    return bool(getattr(door, "coalesces", True))


@dataclass
class Handover:
    """What one text hands over: the prompts (catch-up order), which of them are notices, the
    composed parts, and how many more wait beyond them; *key* names it (its first prompt)."""

    key: str
    prompts: list[Prompt] = field(default_factory=list)
    notices: set[str] = field(default_factory=set)
    texts: list[str] = field(default_factory=list)
    more: int = 0
    declined: list[PromptState] = field(default_factory=list)  # not let through now

    @property
    def text(self) -> str:
        return coalesce(self.texts, notices=len(self.notices), more=self.more)

    @property
    def lead(self) -> Prompt:
        return self.prompts[0]

    @property
    def shown(self) -> Prompt:
        """The first prompt as its door is handed it: a notice's without its body and thread
        (the `stdout` door's line carries the prompt's fields, `exec`'s environment and
        `maildir`'s front matter its thread), so no byte of them leaves with a notice."""
        lead = self.prompts[0]
        return (
            msgspec.structs.replace(lead, body="", thread=None) if lead.id in self.notices else lead
        )

    @property
    def ids(self) -> list[str]:
        return [p.id for p in self.prompts]


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
        self.acted = 0.0  # the latest read, ack or answer of the agent's this process read

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
        changed = self.view.refresh(keep=keep)
        for _, post in changed.posts:
            if isinstance(post, Ack | Answer | Read) and post.sender == self.pane.agent:
                self.acted = max(self.acted, post.ts)
        return changed

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

    def take_back(self, turn: str) -> None:
        """Handover *turn* was admitted but not handed over: it takes no place in the rate."""
        self.traffic.take_back(turn)

    def gather(
        self,
        pending: Sequence[PromptState],
        *,
        limit: int | None = None,
        bound: int = BATCH_BYTES,
    ) -> Handover:
        """The handover of *pending* (catch-up order) the policy lets through now, as one text
        of at most *bound* characters (a first prompt larger goes alone) and *limit* prompts;
        those the policy holds, refuses or makes wait are `declined`."""
        policy, now = self.screen.policy(), self.pane.now()
        handover = Handover("")
        size = 0
        for i, ps in enumerate(pending):
            prompt = ps.prompt
            if len(handover.prompts) == limit:
                handover.more = len(pending) - i
                break
            as_notice = takes_notice(policy, prompt, len(pending))
            if as_notice and len(handover.notices) == NOTICE_LIST:
                handover.more = len(pending) - i
                break
            provenance = self.screen.admit(ps, self.door.name, handover.key or prompt.id)
            if provenance is None:
                handover.declined.append(ps)
                continue
            text = self.compose(prompt, provenance, now, as_notice=as_notice)
            if handover.prompts and size + len(text) > bound:
                self._untake(handover, prompt)
                handover.more = len(pending) - i
                break
            handover.key = handover.key or prompt.id
            handover.prompts.append(prompt)
            handover.texts.append(text)
            if as_notice:
                handover.notices.add(prompt.id)
            size += len(text) + 1
        return handover

    def _untake(self, handover: Handover, prompt: Prompt) -> None:
        """*prompt* was counted in *handover* and does not go: its sender's place goes with it
        unless another of its prompts is in."""
        if not any(p.sender == prompt.sender for p in handover.prompts):
            self.traffic.take_back(handover.key or prompt.id, prompt.sender)

    def notice_waits(self) -> float | None:
        """Until when no new text may go out (a notice this pane handed over is unread, and the
        agent read, acked and answered nothing since); None if one may go now."""
        state, agent, now = self.state, self.pane.agent, self.pane.now()
        acted, latest = self.acted, None
        for ps in state.prompts.values():
            r = ps.recipients.get(agent)
            if r is None:
                continue
            if r.read_at is not None:
                acted = max(acted, r.read_at)
            elif r.notice and r.delivered_at is not None and is_open(ps, agent, now):
                latest = r.delivered_at if latest is None else max(latest, r.delivered_at)
        if latest is None or latest <= acted or now >= latest + NOTICE_AGAIN:
            return None
        return latest + NOTICE_AGAIN

    def save_checkpoint(self) -> None:
        self.pane.save_checkpoint(self.state, self.traffic)
