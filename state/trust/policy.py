"""A recipient's policy: whose prompts start a turn, and the decision for one prompt.

Stored per (home, agent, board) at ``HOME/BOARD/panes/AGENT.policy`` (JSON, 0600, replaced
whole); an agent without one has the default. `decide` is a pure function: the listener, the
Stop hook and every other door ask it the same question with the same facts.

The decision for a prompt, in order:

1. a prompt that is not verified is held (``unverified``; the reason names a key conflict) or
   refused, as ``unverified`` says;
2. a sender whose name looks like another this home knows (``lookalike``: by case,
   ``l``/``I``/``1``, ``0``/``O`` or trailing punctuation; state/trust/verdicts.py) is held, the
   reason naming the other; a sender on a store other machines write to (NATS) whose key neither
   this home owns nor a person pinned (*first contact*) gets ``first_contact`` (``hold`` by default;
   ``deliver`` turns it off). Both reasons start ``first key seen for NAME``; a person's
   `trust` of that key lets the held prompts through (board/trust.py);
3. a sender not on the allow list gets ``others`` (``deliver`` by default; held or refused:
   ``not allowed``);
4. a prompt whose ``ts`` is more than `SKEW` seconds from the reader's clock when it reached
   the board is held (``time``);
5. a reply chain (or a thread) between the two agents deeper than ``loop`` is held (``loop``);
6. a runaway sender, with `RUNAWAY` minutes of its rate already waiting, is held (``rate``);
7. a sender with ``rate`` handovers to this recipient in the last minute waits: the prompt
   goes out when the window allows (``wait``, with the time), no person needed. A handover is
   one text, one turn started in the agent, whatever number of prompts it carries: a prompt
   joining a text that already counts for its sender (``joins``) takes no place of its own.

How prompts reach the agent is the policy's too (``deliver``): ``body`` (the composed text),
``notice`` (paneboard's fixed notice; the body is read with `paneboard read`), or ``auto`` (a
notice for a body over `AUTO_BODY` bytes, and for a burst of more than `AUTO_BURST` prompts
due at once). A prompt whose sender asked for a notice (``notice``) is one whatever the
policy: a sender can ask for less to reach the agent, never for more.

``rate`` or ``loop`` 0 turns that limit off. Every count is of the board's posts, by the
reader's clock: the minute is the recipient's own `delivered` receipts (their times are its
deliverer's clock), never the senders' ``ts``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Annotated, Literal, Protocol, TypeAlias

import msgspec

from paneboard.protocol.errors import BoardIOError
from paneboard.protocol.names import check_name
from paneboard.protocol.posts import Name, Prompt
from paneboard.state.files import read_owned, write_atomic
from paneboard.state.fold import BoardState, PromptState, Verdict, is_open, order_key
from paneboard.state.paths import PaneFiles

__all__ = [
    "AUTO_BODY",
    "AUTO_BURST",
    "FIRST_KEY",
    "WAKE_LIMIT",
    "Decision",
    "Facts",
    "Policy",
    "Traffic",
    "TrafficState",
    "chain_depth",
    "decide",
    "policy_path",
    "rate_due",
    "rate_reason",
    "rate_waits",
    "read_policy",
    "takes_notice",
    "write_policy",
]

Action: TypeAlias = Literal["deliver", "hold", "refuse"]
Reason: TypeAlias = Literal["unverified", "first key seen", "not allowed", "time", "rate", "loop"]
FIRST_KEY = "first key seen for"  # how a first-contact or lookalike hold's reason starts
RATE = 30  # prompts a minute from one sender to one recipient
LOOP = 10  # replies back and forth between the same two agents
WINDOW = 60.0  # the rate's minute, in seconds
SKEW = 300.0  # how far a prompt's ts may be from the reader's clock (docs/trust.md: time)
RUNAWAY = 10  # minutes of the rate waiting from one sender: a runaway, held for a person
KEEP = 10_000  # prompts to and from the agent the loop limit remembers (a checkpoint too)
WAKE_LIMIT = 6  # wakes an hour of an asleep agent (docs/trust.md: the wake budget)
# `auto`: a body over this many bytes comes as a notice. A notice is about 500 bytes; at 4 KiB
# (about a thousand tokens) the body is eight times that, and reading it costs the agent one
# command; below it the notice saves too little to be worth the extra step.
AUTO_BODY = 4096
AUTO_BURST = 10  # `auto`: more prompts than this due at once come as notices
Limit: TypeAlias = Annotated[int, msgspec.Meta(ge=0, le=1_000_000)]  # 0: no limit


class Policy(msgspec.Struct, frozen=True, forbid_unknown_fields=False):
    """Whose prompts start a turn in one agent (see the module's docstring)."""

    allow: tuple[Name, ...] = ()
    others: Action = "deliver"
    unverified: Literal["hold", "refuse"] = "hold"
    rate: Limit = RATE
    loop: Limit = LOOP
    first_contact: Action = "hold"
    wake: Literal["never", "resume"] = "never"  # whether its listener outlives the session
    wake_limit: Limit = WAKE_LIMIT  # wakes an hour (0: no limit)
    deliver: Literal["body", "notice", "auto"] = "body"  # how prompts reach the agent


def takes_notice(policy: Policy, prompt: Prompt, burst: int) -> bool:
    """Whether *prompt* reaches the agent as a notice under *policy*, with *burst* prompts due
    at once (the sender's ``notice`` asks for one, whatever the policy)."""
    if prompt.notice or policy.deliver == "notice":
        return True
    if policy.deliver == "body":
        return False
    return burst > AUTO_BURST or len(prompt.body.encode()) > AUTO_BODY


class Facts(msgspec.Struct, frozen=True):
    """What the board says about one prompt, for `decide`."""

    verdict: Verdict
    recent: int  # prompts from this sender handed to this recipient in the last minute
    depth: int  # how many replies deep the prompt is in a chain between the two agents
    conflict: str | None = None  # the pinned key's fingerprint, when another key signed it
    times: tuple[float, ...] = ()  # when those `recent` were handed over, oldest first
    waiting: int = 0  # earlier prompts from this sender to this recipient that wait
    skew: float = 0.0  # seconds the ts is ahead of (+) or behind (-) the reader's clock
    now: float = 0.0  # the reader's clock
    first_contact: bool = False  # a shared store, and a key no person pinned nor the home owns
    lookalike: str | None = None  # the known name the sender's looks like
    joins: bool = False  # it goes in a text that already counts for this sender (one turn)


class Decision(msgspec.Struct, frozen=True):
    action: Literal["deliver", "hold", "refuse", "wait"]
    reason: str | None = None  # why it is held, refused or waits (a `held` post's reason)
    until: float | None = None  # when a prompt that waits goes out (the reader's clock)


DELIVER = Decision("deliver")


def decide(policy: Policy, prompt: Prompt, facts: Facts) -> Decision:
    """Deliver, hold, refuse or make wait *prompt* under *policy*, given the *facts* (no I/O,
    no clock: the reader's clock is `facts.now`)."""
    if facts.verdict != "verified":
        return _unverified(policy, facts)
    if facts.lookalike is not None:
        return Decision("hold", f"{FIRST_KEY} {prompt.sender}, a name like {facts.lookalike}'s")
    if facts.first_contact and policy.first_contact != "deliver":
        return Decision(policy.first_contact, f"{FIRST_KEY} {prompt.sender}")
    if prompt.sender not in policy.allow and policy.others != "deliver":
        return Decision(policy.others, "not allowed")
    if abs(facts.skew) > SKEW:
        return Decision("hold", _skewed(facts.skew))
    if policy.loop and facts.depth > policy.loop:
        return Decision("hold", f"loop: a reply chain {facts.depth} deep (limit {policy.loop})")
    if policy.rate and facts.waiting >= RUNAWAY * policy.rate:
        return Decision(
            "hold",
            f"rate: a runaway: {facts.waiting} prompts from {prompt.sender} already wait "
            f"({RUNAWAY} minutes at {policy.rate} a minute)",
        )
    if policy.rate and not facts.joins and facts.recent + facts.waiting >= policy.rate:
        until = rate_due(facts.times, policy.rate, facts.waiting, facts.now)
        if until > facts.now:
            return Decision("wait", rate_reason(policy.rate, prompt.sender), until)
    return DELIVER


def rate_reason(rate: int, sender: str) -> str:
    """Why a prompt past the rate waits."""
    return f"rate: over {rate} prompts a minute from {sender}"


def _unverified(policy: Policy, facts: Facts) -> Decision:
    why = f"unverified: the post is {facts.verdict}"
    if facts.conflict is not None:
        why += f" (key conflict: another key than the pinned {facts.conflict[:8]} signed it)"
    return Decision(policy.unverified, why)


def _skewed(skew: float) -> str:
    where = "ahead of" if skew > 0 else "behind"
    return f"time: its ts is {abs(skew):.0f} s {where} this reader's clock (limit {SKEW:.0f} s)"


def rate_due(times: Iterable[float], rate: int, ahead: int, now: float) -> float:
    """When the minute lets out a prompt with *ahead* prompts of its sender waiting before it:
    *times* are the sender's prompts handed over (oldest first); each of those ahead takes the
    next free place; *now* if one is free now."""
    slots = [t for t in times if t > now - WINDOW]
    for _ in range(ahead + 1):
        slots.append(now if len(slots) < rate else max(now, slots[-rate] + WINDOW))
    return slots[-1]


def rate_waits(state: BoardState, recipient: str, rate: int, now: float) -> dict[str, float]:
    """prompt id -> until when it waits for the rate, for the prompts open for *recipient* in a
    fold that kept its closed prompts (`status`, `open`): the same count a deliverer makes."""
    if not rate:
        return {}
    turns: dict[str, dict[str, float]] = {}
    pending: dict[str, list[PromptState]] = {}
    for ps in state.prompts.values():
        r = ps.recipients.get(recipient)
        if r is None:
            continue
        sender = ps.prompt.sender
        if r.delivered_at is not None and r.approved_at is None and r.delivered_at > now - WINDOW:
            turn = r.handover or ps.prompt.id  # one text, one place in the minute
            turns.setdefault(sender, {})[turn] = min(r.delivered_at, now)
        if r.stage in ("posted", "undelivered") and is_open(ps, recipient, now):
            pending.setdefault(sender, []).append(ps)
    waits = {}
    for sender, waiting in pending.items():
        done = sorted(turns.get(sender, {}).values())
        slots = [t for t in done if t > now - WINDOW]  # as `rate_due` takes them, one pass
        for ahead, ps in enumerate(sorted(waiting, key=order_key)):
            slots.append(now if len(slots) < rate else max(now, slots[-rate] + WINDOW))
            if len(done) + ahead >= rate and slots[-1] > now:
                waits[ps.prompt.id] = slots[-1]  # rate_due(done, rate, ahead, now)
    return waits


class Linked(Protocol):
    """What `chain_depth` reads of a prompt."""

    @property
    def id(self) -> str: ...
    @property
    def sender(self) -> str: ...
    @property
    def to(self) -> tuple[str, ...]: ...
    @property
    def reply_to(self) -> str | None: ...


def _between(link: Linked, a: str, b: str) -> bool:
    """Whether *link* passes between *a* and *b* (each its sender or a recipient; others
    besides them do not matter)."""
    return (link.sender == a or a in link.to) and (link.sender == b or b in link.to)


def chain_depth(prompts: Mapping[str, Linked], prompt: Linked, recipient: str) -> int:
    """How many links of ``reply_to`` lead back from *prompt* through prompts passed between
    its sender and *recipient* (bystanders in ``to`` change nothing; a cycle of forged ids
    ends the walk).

    *prompts* must hold both directions of the chain: a fold kept for one recipient holds
    only the prompts sent to it, not the ones it sent back.
    """
    depth, seen, at = 0, {prompt.id}, prompt.reply_to
    while at is not None and at not in seen:
        earlier = prompts.get(at)
        if earlier is None or not _between(earlier, prompt.sender, recipient):
            break
        depth, at = depth + 1, earlier.reply_to
        seen.add(earlier.id)
    return depth


class Link(msgspec.Struct, frozen=True, array_like=True):
    """A prompt as the loop limit follows it: who to whom, and what it replies to."""

    id: str
    sender: str
    to: tuple[str, ...]
    reply_to: str | None
    thread: str | None = None


class Arrival(msgspec.Struct, frozen=True, array_like=True):
    """When a prompt reached the board, by the reader's clock: not before *after* (0: unknown),
    not after *by* (when the reader had read it)."""

    after: float
    by: float


class TrafficState(msgspec.Struct):
    """What a checkpoint keeps of a `Traffic`, so a deliverer started later counts the same."""

    links: list[Link] = msgspec.field(default_factory=list)
    handed: dict[str, dict[str, float]] = msgspec.field(default_factory=dict)
    arrivals: dict[str, Arrival] = msgspec.field(default_factory=dict)
    floor: float = 0.0


class Traffic:
    """The board's prompts to and from one agent, and its handovers, as its deliverer read
    them: the facts `decide` needs that the deliverer's fold alone cannot give (the fold keeps
    neither the prompts the agent sent nor the ones it closed). Kept in the pane's checkpoint,
    so a deliverer started later (a restarted listener, the Stop hook at a turn's end) knows
    what one that never stopped knows. The oldest links are forgotten past *keep*.

    *now* is the reader's clock. `reading()` and `read()` bracket each read of the board: a
    record not read by then reached the board after the read began (the `floor`).
    """

    def __init__(self, agent: str, keep: int = KEEP, now: Callable[[], float] = time.time) -> None:
        self.agent = agent
        self.keep = keep
        self.now = now
        self.links: dict[str, Link] = {}
        self.threads: dict[str, list[str]] = {}  # thread -> its links' ids, in log order
        self.handed: dict[str, dict[str, float]] = {}  # sender -> handover -> handed over at
        self.arrivals: dict[str, Arrival] = {}  # prompt to the agent -> when it arrived
        self.floor = 0.0  # every record not read yet reached the board after this time
        self.began = 0.0  # when the last read began
        self._read: dict[str, None] = {}  # prompts noted by the read in progress

    def restore(self, kept: TrafficState) -> None:
        """Start from what a checkpoint kept."""
        for link in kept.links:
            self._link(link)
        self.handed = {s: dict(h) for s, h in kept.handed.items()}
        self.arrivals = dict(kept.arrivals)
        self.floor = kept.floor

    def kept(self, state: BoardState) -> TrafficState:
        """What a checkpoint of *state* keeps: the links, the handovers of the last minute,
        the arrivals of the prompts still in *state*, and the floor."""
        since = self.now() - WINDOW
        handed = {s: {p: t for p, t in h.items() if t > since} for s, h in self.handed.items()}
        return TrafficState(
            list(self.links.values()),
            {s: h for s, h in handed.items() if h},
            {p: a for p, a in self.arrivals.items() if p in state.prompts},
            self.floor,
        )

    def reading(self) -> None:
        """A read of the board begins (the clock is not read again until `read`)."""
        self.began = self.now()

    def read(self) -> None:
        """The read that began is done: what it noted arrived by now."""
        now = self.now()
        for pid in self._read:
            self.arrivals[pid] = Arrival(self.floor, now)
        self._read.clear()
        self.floor = max(self.floor, self.began)

    def note(self, prompt: Prompt) -> None:
        """Remember *prompt* if it is to or from the agent (a repeated id is ignored)."""
        if prompt.id in self.links or (prompt.sender != self.agent and self.agent not in prompt.to):
            return
        self._link(Link(prompt.id, prompt.sender, prompt.to, prompt.reply_to, prompt.thread))
        if self.agent in prompt.to and prompt.id not in self.arrivals:
            self._read[prompt.id] = None

    def _link(self, link: Link) -> None:
        if len(self.links) >= self.keep:
            old = self.links.pop(next(iter(self.links)))
            if old.thread is not None and self.threads.get(old.thread, [None])[0] == old.id:
                self.threads[old.thread].pop(0)
                if not self.threads[old.thread]:
                    del self.threads[old.thread]
            self.arrivals.pop(old.id, None)
            self._read.pop(old.id, None)
        self.links[link.id] = link
        if link.thread is not None:
            self.threads.setdefault(link.thread, []).append(link.id)

    def handed_over(self, sender: str, prompt_id: str, at: float, now: float | None = None) -> None:
        """*prompt_id* from *sender* was handed to the agent at *at* (a receipt's time), no
        later than *now* (the clock, read now if not given)."""
        latest = self.now() if now is None else now
        self.handed.setdefault(sender, {})[prompt_id] = min(at, latest)

    def take_back(self, turn: str, sender: str | None = None) -> None:
        """The handover *turn* (its first prompt's id) did not happen after all (a door that
        failed), for every sender or for *sender* only."""
        for name, handed in self.handed.items():
            if sender is None or name == sender:
                handed.pop(turn, None)

    def _minute(self, sender: str) -> dict[str, float]:
        """*sender*'s handovers, those older than the minute dropped from the front (they are
        noted in about the order of their times; `recent` skips any other left behind)."""
        handed = self.handed.get(sender)
        if not handed:
            return {}
        since = self.now() - WINDOW
        while handed:
            pid, at = next(iter(handed.items()))
            if at > since:
                break
            del handed[pid]
        return handed

    def recent(self, sender: str) -> tuple[float, ...]:
        """When the prompts from *sender* handed over in the last minute were, oldest first."""
        since = self.now() - WINDOW
        return tuple(sorted(t for t in self._minute(sender).values() if t > since))

    def skew(self, prompt: Prompt) -> float:
        """How far *prompt*'s ts is outside the time it reached the board, by this reader's
        clock: ahead (+) of when it was read, or behind (-) a time it certainly came after."""
        arrival = self.arrivals.get(prompt.id)
        after, by = (0.0, self.now()) if arrival is None else (arrival.after, arrival.by)
        if prompt.ts > by:
            return prompt.ts - by
        return prompt.ts - after if after and prompt.ts < after else 0.0

    def depth(self, prompt: Prompt) -> int:
        """How deep *prompt* is in a chain between its sender and the agent: by ``reply_to``,
        or by the turns of the two in its thread, whichever is deeper."""
        depth = chain_depth(self.links, prompt, self.agent)
        if prompt.thread is None:
            return depth
        turns, last = 0, prompt.sender
        for pid in reversed(self.threads.get(prompt.thread, [])[-1000:]):  # bounded work
            link = self.links[pid]
            if pid == prompt.id or not _between(link, prompt.sender, self.agent):
                continue
            if link.sender != last:
                turns, last = turns + 1, link.sender
        return max(depth, turns)

    def facts(
        self,
        prompt: Prompt,
        verdict: Verdict,
        conflict: str | None = None,
        waiting: int = 0,
        rate: int | None = None,
        turn: str | None = None,
    ) -> Facts:
        """The facts about *prompt* (*waiting*: its sender's prompts that wait before it; *turn*:
        the handover it would go in); with *rate* 0 (no limit) the handovers are not counted."""
        times = () if rate == 0 else self.recent(prompt.sender)
        joins = turn is not None and turn in self.handed.get(prompt.sender, {})
        return Facts(
            verdict,
            len(times),
            self.depth(prompt),
            conflict,
            times,
            waiting,
            self.skew(prompt),
            self.now(),
            joins=joins,
        )


def policy_path(board_dir: Path, agent: str) -> Path:
    return PaneFiles(board_dir / "panes", check_name("agent", agent)).policy


def read_policy(board_dir: Path, agent: str) -> Policy:
    """*agent*'s policy on the board, or the default where it has no file; `BoardIOError` for a
    file that is there but not this user's own regular file (a symlink, a FIFO, another user's:
    `read_owned`) or does not decode: a reader stops rather than deliver by the default."""
    path = policy_path(board_dir, agent)
    data = read_owned(path, "policy file")
    if data is None:
        return Policy()
    try:
        return msgspec.json.decode(data, type=Policy)
    except msgspec.DecodeError as exc:
        raise BoardIOError(f"policy file {path} is damaged: {exc}") from None


def write_policy(board_dir: Path, agent: str, policy: Policy) -> None:
    write_atomic(policy_path(board_dir, agent), msgspec.json.encode(policy), durable=True)
