"""Board state from posts: small functions with no clock, no I/O and no logging.

`apply` updates a `BoardState` with one post and returns it (updated in place: a
board of a million posts cannot afford a copy per post). Questions that depend on
time (is it expired? is it open?) take ``now`` as an argument.

Prompt ids are unique on a board: writers draw 80 random bits per id. A second prompt
record with an id the fold knows is damaged, whatever it says (a copy, republished
byte for byte, or another body under that id): ignored, so every reader keeps the first
record and what it says, body and signature alike. The fold knows the prompts it keeps
and, in a pane's fold (``keep_closed=False`` with a ``recipient``), the ids of the
prompts it dropped once finished (`BoardState.finished`): a closed prompt published
again is never new to it. The pane keeps those ids across restarts (state/panes/pane.py)
without relying on any store's own dedupe, which on NATS is the publisher's header. Such a
fold also keeps, a while, the prompts its recipient closed before any `seen` of theirs
(`BoardState.unseen`): an agent can answer before its listener has read the turn in its
conversation file, and that listener still owes the `seen`.

A post that does not fit the rules (an ack by someone who is not a recipient, a
cancel by someone who is not the sender, anything about an unknown prompt) changes
nothing: the commands refuse to write such posts, and the fold ignores forged ones.

A post about a prompt moves its stage only if its signature is *verified* (protocol/signing.py).
The verdict comes in as a `LazyVerdict`, called only once the post would move something (so a reader
verifies the posts it acts on, never its history); one that is not verified is kept on the
prompt as a `Doubt` for `status` to show apart. A reader without the posts' bytes passes no
check: it vouches for them (the posts this process has just written itself).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal, TypeAlias

import msgspec

from paneboard.protocol.posts import (
    PRIORITY_RANK,
    Ack,
    Answer,
    Approved,
    Cancel,
    Delivered,
    Held,
    Post,
    Prompt,
    Read,
    Refused,
    Seen,
    Undelivered,
)
from paneboard.protocol.signing import VERIFIED
from paneboard.protocol.words import CLOSED_STAGES, OPEN_STAGES

Stage: TypeAlias = Literal[
    "posted",
    "held",
    "approved",
    "delivered",
    "undelivered",
    "seen",
    "read",
    "acked",
    "answered",
    "cancelled",
    "expired",
    "refused",
]
Verdict: TypeAlias = Literal["verified", "unsigned", "forged"]  # protocol/signing.py's words
AboutPrompt: TypeAlias = (
    Ack | Answer | Cancel | Delivered | Undelivered | Seen | Held | Approved | Refused | Read
)
# The verdict on the post being applied, computed late.
LazyVerdict: TypeAlias = Callable[[], Verdict]
CLOSED = frozenset(CLOSED_STAGES)
FINAL = CLOSED | {"refused"}  # a recipient's stages that nothing after them changes
UNSEEN_MAX = 64  # prompts a pane's fold keeps for a `seen` owed after their close, at most
UNSEEN_FOR = 600.0  # seconds after its close a checkpoint keeps one (a turn shows in seconds)


class Recipient(msgspec.Struct):
    """One recipient's side of a prompt."""

    stage: Stage = "posted"
    ts: float | None = None  # when the stage was reached
    door: str | None = None
    outcome: str | None = None
    reason: str | None = None
    answer: str | None = None
    note: str | None = None
    delivered_at: float | None = None  # the last `delivered` receipt's time
    seen_at: float | None = None  # the first `seen` receipt's time
    source: str | None = None  # the conversation file `seen` was read from
    read_at: float | None = None  # the first `read` receipt's time: the body reached the agent
    read_via: str | None = None  # the command that printed it (`cli`, `mcp`)
    held_by: str | None = None  # who holds it back (`agent` or `policy`), while held
    approved_at: float | None = None  # when a person let it through, after it was held
    woke: str | None = None  # the session this prompt started again, and when
    woke_at: float | None = None
    held_at: float | None = None  # when it was last held for a person (kept after an approval)
    handover: str | None = None  # the first prompt of the text it was delivered in, if others
    notice: bool = False  # delivered as a notice: the body did not reach the agent


class Doubt(msgspec.Struct, frozen=True):
    """A post about the prompt that moved nothing because its signature is not verified."""

    id: str
    kind: str
    sender: str
    verdict: Verdict


class PromptState(msgspec.Struct):
    prompt: Prompt
    position: int = msgspec.field(name="seq")  # in the log: catch-up order within a priority
    recipients: dict[str, Recipient]
    cancelled: float | None = None
    doubted: list[Doubt] = msgspec.field(default_factory=list)


class BoardState(msgspec.Struct):
    """The prompts of a board, as of log position `position`.

    With ``keep_closed=False`` a prompt is dropped once no recipient can still
    receive it (every one closed it, or it was cancelled); with ``recipient`` set,
    only prompts addressed to that agent are kept: what a listener needs. Such a pane's
    fold remembers the ids it dropped in ``finished`` (`prune` leaves them out: the pane
    keeps them, state/panes/pane.py).
    """

    prompts: dict[str, PromptState] = msgspec.field(default_factory=dict)
    position: int = 0
    keep_closed: bool = True
    recipient: str | None = None
    finished: set[str] = msgspec.field(default_factory=set)
    # In a pane's fold: finished prompts its recipient closed (acked, answered) with no `seen`
    # yet, oldest first, for the `seen` its listener may still find (listener/seen.py `due`).
    unseen: dict[str, PromptState] = msgspec.field(default_factory=dict)


def fold(posts: Iterable[tuple[int, Post]], state: BoardState | None = None) -> BoardState:
    """Apply each (position, post) in order, vouching for every one (see the docstring)."""
    state = BoardState() if state is None else state
    for position, post in posts:
        apply(state, position, post)
    return state


def fold_checked(
    posts: Iterable[tuple[int, Post, LazyVerdict]], state: BoardState | None = None
) -> BoardState:
    """Apply each (position, post, check) in order."""
    state = BoardState() if state is None else state
    for position, post, check in posts:
        apply(state, position, post, check)
    return state


def apply(
    state: BoardState, position: int, post: Post, check: LazyVerdict | None = None
) -> BoardState:
    """Update *state* with the post at *position* in the log (*check*: its verdict, asked late)."""
    if isinstance(post, Prompt):
        if (
            (state.recipient is None or state.recipient in post.to)
            and post.id not in state.prompts
            and post.id not in state.finished
        ):
            state.prompts[post.id] = PromptState(
                post, position, {name: Recipient(ts=post.ts) for name in post.to}
            )
    else:
        ps = state.prompts.get(post.prompt_id)
        if ps is not None:
            _apply_to(ps, post, check)
            if not state.keep_closed and _finished(ps):
                del state.prompts[post.prompt_id]
                if state.recipient is not None:
                    state.finished.add(post.prompt_id)
                    _keep_unseen(state, ps)
        elif post.prompt_id in state.unseen:
            kept = state.unseen[post.prompt_id]
            _apply_to(kept, post, check)  # a late `delivered` names its door, a `seen` ends it
            if _owes_seen(kept, state.recipient) is None:
                del state.unseen[post.prompt_id]
    state.position = max(state.position, position + 1)
    return state


def _owes_seen(ps: PromptState, agent: str | None) -> Recipient | None:
    """*agent*'s side of *ps* if *agent* closed it themself and no `seen` of theirs is in."""
    r = None if agent is None else ps.recipients.get(agent)
    if r is None or r.seen_at is not None or r.stage not in CLOSED:
        return None
    return r


def _keep_unseen(state: BoardState, ps: PromptState) -> None:
    """Keep *ps*, just dropped, if its recipient closed it before its `seen` (a bounded few)."""
    if _owes_seen(ps, state.recipient) is None:
        return
    state.unseen[ps.prompt.id] = ps
    while len(state.unseen) > UNSEEN_MAX:
        del state.unseen[next(iter(state.unseen))]


def _trusted(ps: PromptState, post: AboutPrompt, check: LazyVerdict | None) -> bool:
    """Whether *post* may move the prompt: verified, or vouched for; else it is doubted."""
    verdict = VERIFIED if check is None else check()
    if verdict != VERIFIED:
        ps.doubted.append(Doubt(post.id, str(post.__struct_config__.tag), post.sender, verdict))
    return verdict == VERIFIED


def _apply_to(ps: PromptState, post: AboutPrompt, check: LazyVerdict | None) -> None:
    if isinstance(post, Cancel):
        if post.sender == ps.prompt.sender and ps.cancelled is None and _trusted(ps, post, check):
            ps.cancelled = post.ts
        return
    r = ps.recipients.get(post.sender)
    if r is None or not _trusted(ps, post, check):
        return
    if isinstance(post, Seen):
        _seen(r, post, ps.cancelled is None)
        return
    if isinstance(post, Delivered):
        _delivered(r, post, ps.cancelled is None)
        return
    if isinstance(post, Read):
        _read(r, post, ps.cancelled is None)
        return
    if r.stage in FINAL or ps.cancelled is not None:
        return
    if isinstance(post, Refused):
        r.stage, r.ts, r.reason, r.held_by = "refused", post.ts, post.reason, None
    elif isinstance(post, Approved):
        if r.stage == "held":  # a person lets it through; the listener then delivers it
            r.stage, r.ts, r.reason, r.held_by = "approved", post.ts, None, None
            r.approved_at = post.ts
    elif isinstance(post, Ack):
        r.stage, r.ts, r.note = "acked", post.ts, post.note
    elif isinstance(post, Answer):
        r.stage, r.ts, r.answer = "answered", post.ts, post.body
    elif isinstance(post, Held):
        if r.stage in ("posted", "undelivered"):  # held before it reached the model
            r.stage, r.ts, r.door, r.reason = "held", post.ts, post.door, post.reason
            r.held_by, r.held_at = post.by, post.ts
    elif r.stage not in ("delivered", "seen", "read"):
        r.stage, r.ts, r.door, r.reason = "undelivered", post.ts, post.door, post.reason
        r.held_by = None


def _delivered(r: Recipient, post: Delivered, still_open: bool) -> None:
    """A receipt moves an open prompt to `delivered` (a later copy's does not unsee it); one
    written after the recipient closed it (an agent can answer before its listener has seen the
    agent take the prompt) still names the door, and changes no stage."""
    r.delivered_at = post.ts
    r.handover, r.notice = post.handover, post.notice
    if post.woke is not None and r.woke is None:
        r.woke, r.woke_at = post.woke, post.ts
    if still_open and r.stage not in FINAL and r.stage not in ("seen", "read"):
        r.stage, r.ts, r.door, r.reason = "delivered", post.ts, post.door, None
        r.outcome, r.held_by = post.outcome, None
    elif r.door is None:
        r.door, r.outcome = post.door, post.outcome


def _seen(r: Recipient, post: Seen, still_open: bool) -> None:
    """The first `seen` counts; it is recorded even after a close, which it does not undo."""
    if r.seen_at is not None:
        return
    r.seen_at, r.source = post.ts, post.source
    if still_open and r.stage not in FINAL and r.stage != "read":
        r.stage, r.ts, r.door, r.reason = "seen", post.ts, post.door, None
        r.held_by = None


def _read(r: Recipient, post: Read, still_open: bool) -> None:
    """The first `read` counts, and is recorded after a close too; it moves an open prompt to
    `read` from any stage short of a close but `held` (the body can be read before its notice is
    seen; a held prompt waits for a person, whatever its recipient read)."""
    if r.read_at is not None:
        return
    r.read_at, r.read_via = post.ts, post.via
    if still_open and r.stage not in FINAL and r.stage != "held":
        r.stage, r.ts, r.reason, r.held_by = "read", post.ts, None, None


def _finished(ps: PromptState) -> bool:
    return ps.cancelled is not None or all(r.stage in FINAL for r in ps.recipients.values())


def expired(ps: PromptState, now: float) -> bool:
    return ps.prompt.expires is not None and now >= ps.prompt.expires


def stage(ps: PromptState, agent: str, now: float) -> Stage:
    """Where the prompt stands for *agent*:
    cancel and expiry apply to those who had not closed it (or had it refused)."""
    r = ps.recipients[agent]
    if r.stage in FINAL:
        return r.stage
    if ps.cancelled is not None:
        return "cancelled"
    if expired(ps, now):
        return "expired"
    return r.stage


def is_open(ps: PromptState, agent: str, now: float) -> bool:
    """True while *agent* is a recipient and the prompt is not closed, cancelled or expired."""
    return agent in ps.recipients and stage(ps, agent, now) in OPEN_STAGES


def order_key(ps: PromptState) -> tuple[int, int]:
    """Catch-up order: urgent first, then oldest first."""
    return PRIORITY_RANK[ps.prompt.priority], ps.position


def open_for(state: BoardState, agent: str, now: float) -> list[PromptState]:
    """The prompts open for *agent*, in catch-up order."""
    return sorted((ps for ps in state.prompts.values() if is_open(ps, agent, now)), key=order_key)


def prune(state: BoardState, now: float) -> BoardState:
    """A copy of *state* holding only prompts someone can still receive (for a checkpoint);
    its ``finished`` ids are left out (a pane keeps them in its delivered-key log)."""
    keep = {
        pid: ps for pid, ps in state.prompts.items() if not _finished(ps) and not expired(ps, now)
    }
    unseen = {pid: ps for pid, ps in state.unseen.items() if _closed_since(ps, state, now)}
    return BoardState(
        keep, state.position, keep_closed=False, recipient=state.recipient, unseen=unseen
    )


def _closed_since(ps: PromptState, state: BoardState, now: float) -> bool:
    """Whether *ps*'s recipient closed it less than `UNSEEN_FOR` seconds ago."""
    r = _owes_seen(ps, state.recipient)
    return r is not None and r.ts is not None and r.ts > now - UNSEEN_FOR
