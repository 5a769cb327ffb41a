"""A recipient's policy: whose prompts start a turn, and the decision for one prompt.

Stored per (home, agent, board) at ``HOME/BOARD/panes/AGENT.policy`` (JSON, 0600, replaced
whole); an agent without one has the default. `decide` is a pure function: the listener, the
Stop hook and every other door ask it the same question with the same facts.

The decision for a prompt, in order:

1. a prompt that is not verified is held (``unverified``; the reason names a key conflict) or
   refused, as ``unverified`` says;
2. a sender whose name looks like another this home knows (``lookalike``: by case,
   ``l``/``I``/``1``, ``0``/``O`` or trailing punctuation; state/verdicts.py) is held, the reason
   naming the other; a sender on a store other machines write to (NATS) whose key neither this
   home owns nor a person pinned (*first contact*) gets ``first_contact`` (``hold`` by default;
   ``deliver`` turns it off). Both reasons start ``first key seen for NAME``; a person's
   `trust` of that key lets the held prompts through (board/trust.py);
3. a sender not on the allow list gets ``others`` (``deliver`` by default; held or refused:
   ``not allowed``);
4. a sender past ``rate`` prompts to this recipient in the last minute is held (``rate``);
5. a reply chain between the two agents deeper than ``loop`` is held (``loop``).

``rate`` or ``loop`` 0 turns that limit off.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal, Protocol, TypeAlias

import msgspec

from paneboard.protocol.errors import BoardIOError
from paneboard.protocol.names import check_name
from paneboard.protocol.posts import Name, Prompt
from paneboard.state.files import read_private, write_atomic
from paneboard.state.fold import BoardState, Verdict
from paneboard.state.paths import PaneFiles

__all__ = [
    "FIRST_KEY",
    "Decision",
    "Facts",
    "Policy",
    "Traffic",
    "chain_depth",
    "decide",
    "facts_for",
    "policy_path",
    "read_policy",
    "recent_count",
    "write_policy",
]

Action: TypeAlias = Literal["deliver", "hold", "refuse"]
Reason: TypeAlias = Literal["unverified", "first key seen", "not allowed", "rate", "loop"]
FIRST_KEY = "first key seen for"  # how a first-contact or lookalike hold's reason starts
RATE = 30  # prompts a minute from one sender to one recipient
LOOP = 10  # replies back and forth between the same two agents
WINDOW = 60.0  # the rate's minute, in seconds
Limit: TypeAlias = Annotated[int, msgspec.Meta(ge=0, le=1_000_000)]  # 0: no limit


class Policy(msgspec.Struct, frozen=True, forbid_unknown_fields=False):
    """Whose prompts start a turn in one agent (see the module's docstring)."""

    allow: tuple[Name, ...] = ()
    others: Action = "deliver"
    unverified: Literal["hold", "refuse"] = "hold"
    rate: Limit = RATE
    loop: Limit = LOOP
    first_contact: Action = "hold"


class Facts(msgspec.Struct, frozen=True):
    """What the board says about one prompt, for `decide`."""

    verdict: Verdict
    recent: int  # earlier prompts from this sender to this recipient in the last minute
    depth: int  # how many replies deep the prompt is in a chain between the two agents
    conflict: str | None = None  # the pinned key's fingerprint, when another key signed it
    first_contact: bool = False  # a shared store, and a key no person pinned nor the home owns
    lookalike: str | None = None  # the known name the sender's looks like


class Decision(msgspec.Struct, frozen=True):
    action: Action
    reason: str | None = None  # why it is held or refused (a `held` post's reason)


DELIVER = Decision("deliver")


def decide(policy: Policy, prompt: Prompt, facts: Facts) -> Decision:
    """Deliver, hold or refuse *prompt* under *policy*, given the *facts* (no I/O, no clock)."""
    if facts.verdict != "verified":
        return _unverified(policy, facts)
    if facts.lookalike is not None:
        return Decision("hold", f"{FIRST_KEY} {prompt.sender}, a name like {facts.lookalike}'s")
    if facts.first_contact and policy.first_contact != "deliver":
        return Decision(policy.first_contact, f"{FIRST_KEY} {prompt.sender}")
    if prompt.sender not in policy.allow and policy.others != "deliver":
        return Decision(policy.others, "not allowed")
    if policy.rate and facts.recent >= policy.rate:
        return Decision("hold", f"rate: over {policy.rate} prompts a minute from {prompt.sender}")
    if policy.loop and facts.depth > policy.loop:
        return Decision("hold", f"loop: a reply chain {facts.depth} deep (limit {policy.loop})")
    return DELIVER


def _unverified(policy: Policy, facts: Facts) -> Decision:
    why = f"unverified: the post is {facts.verdict}"
    if facts.conflict is not None:
        why += f" (key conflict: another key than the pinned {facts.conflict[:8]} signed it)"
    return Decision(policy.unverified, why)


def recent_count(state: BoardState, prompt: Prompt, recipient: str) -> int:
    """Earlier prompts from *prompt*'s sender to *recipient* within the minute before it."""
    since = prompt.ts - WINDOW
    return sum(
        1
        for ps in state.prompts.values()
        if ps.prompt.id != prompt.id
        and ps.prompt.sender == prompt.sender
        and recipient in ps.prompt.to
        and since <= ps.prompt.ts <= prompt.ts
    )


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


def chain_depth(prompts: Mapping[str, Linked], prompt: Linked, recipient: str) -> int:
    """How many links of ``reply_to`` lead back from *prompt* through prompts passed between
    its sender and *recipient* alone (a cycle of forged ids ends the walk).

    *prompts* must hold both directions of the chain: a fold kept for one recipient holds
    only the prompts sent to it, not the ones it sent back.
    """
    pair = {prompt.sender, recipient}
    depth, seen, at = 0, {prompt.id}, prompt.reply_to
    while at is not None and at not in seen:
        earlier = prompts.get(at)
        if earlier is None or {earlier.sender, *earlier.to} != pair:
            break
        depth, at = depth + 1, earlier.reply_to
        seen.add(earlier.id)
    return depth


def facts_for(
    state: BoardState,
    prompt: Prompt,
    recipient: str,
    verdict: Verdict,
    conflict: str | None = None,
) -> Facts:
    """The facts `decide` needs about *prompt*, from a fold that kept the board's prompts."""
    prompts = {pid: ps.prompt for pid, ps in state.prompts.items()}
    return Facts(
        verdict,
        recent_count(state, prompt, recipient),
        chain_depth(prompts, prompt, recipient),
        conflict,
    )


class Link(msgspec.Struct, frozen=True, array_like=True):
    """A prompt as the loop limit follows it: who to whom, and what it replies to."""

    id: str
    sender: str
    to: tuple[str, ...]
    reply_to: str | None


class Traffic:
    """The prompts to and from one agent, as its deliverer read them: the facts `decide` needs
    for a prompt that its fold alone cannot give (the fold keeps neither the prompts the agent
    sent nor the ones it closed). The oldest are forgotten past *keep* prompts."""

    def __init__(self, agent: str, keep: int = 100_000) -> None:
        self.agent = agent
        self.keep = keep
        self.links: dict[str, Link] = {}
        self.times: dict[str, list[float]] = {}  # sender -> the times of its prompts to the agent

    def note(self, prompt: Prompt) -> None:
        """Remember *prompt* if it is to or from the agent (a repeated id is ignored)."""
        if prompt.id in self.links or (prompt.sender != self.agent and self.agent not in prompt.to):
            return
        if len(self.links) >= self.keep:
            del self.links[next(iter(self.links))]
        self.links[prompt.id] = Link(prompt.id, prompt.sender, prompt.to, prompt.reply_to)
        if self.agent in prompt.to:
            bisect.insort(self.times.setdefault(prompt.sender, []), prompt.ts)

    def recent(self, prompt: Prompt) -> int:
        """Earlier prompts from *prompt*'s sender to the agent within the minute before it."""
        times = self.times.get(prompt.sender, [])
        within = bisect.bisect_right(times, prompt.ts) - bisect.bisect_left(
            times, prompt.ts - WINDOW
        )
        return max(0, within - (1 if prompt.id in self.links else 0))

    def facts(self, prompt: Prompt, verdict: Verdict, conflict: str | None = None) -> Facts:
        return Facts(
            verdict,
            self.recent(prompt),
            chain_depth(self.links, prompt, self.agent),
            conflict,
        )


def policy_path(board_dir: Path, agent: str) -> Path:
    return PaneFiles(board_dir / "panes", check_name("agent", agent)).policy


def read_policy(board_dir: Path, agent: str) -> Policy:
    """*agent*'s policy on the board, or the default where it has none."""
    path = policy_path(board_dir, agent)
    data = read_private(path)
    if data is None:
        return Policy()
    try:
        return msgspec.json.decode(data, type=Policy)
    except msgspec.DecodeError as exc:
        raise BoardIOError(f"policy file {path} is damaged: {exc}") from None


def write_policy(board_dir: Path, agent: str, policy: Policy) -> None:
    write_atomic(policy_path(board_dir, agent), msgspec.json.encode(policy), durable=True)
