"""Reading the board: the prompts open for an agent, one prompt's status, the log by pages,
and compacting the log (which rewrites it)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import msgspec

from paneboard.board.context import Context
from paneboard.board.lookup import find_prompt, match_id
from paneboard.board.trust import verdicts_for
from paneboard.protocol.compose import provenance_lines
from paneboard.protocol.errors import BadInput, BoardIOError
from paneboard.protocol.posts import Post, Prompt
from paneboard.state.abc import Compactable, Store
from paneboard.state.filelog.compact import Compacted
from paneboard.state.fold import (
    BoardState,
    Doubt,
    PromptState,
    Recipient,
    Verdict,
    fold_checked,
    is_open,
    open_for,
    stage,
)
from paneboard.state.panes import presence, wakes
from paneboard.state.panes.lock import holder
from paneboard.state.trust.policy import rate_reason, rate_waits, read_policy
from paneboard.state.trust.verdicts import checked, read_checked


class OpenPrompt(msgspec.Struct, frozen=True):
    """A prompt open for the agent, and whether its agent (or policy) holds it for a person:
    who holds it and why, or whether it was approved at a terminal after it was held."""

    prompt: Prompt
    held: bool = False
    held_by: str | None = None
    reason: str | None = None
    approved: bool = False
    told: tuple[str, ...] = ()  # paneboard's lines on what it checked of the sender (compose's)
    verdict: Verdict = "unsigned"  # on the prompt's signature (protocol/signing.py)
    key: str | None = None  # the signing key's fingerprint, when verified
    until: float | None = None  # past the rate: it waits until then, no person needed (`reason`)


def open_row(row: OpenPrompt) -> dict[str, Any]:
    """A prompt of `open --json` and the MCP `open` tool: its fields, then its ``verdict``, the
    ``key`` that signed it (its fingerprint when verified, else null) and whether a person
    ``approved`` it after it was held."""
    return {**with_verdict(row.prompt, row.verdict), "key": row.key, "approved": row.approved}


class Wait(msgspec.Struct, frozen=True):
    """A prompt past its recipient's rate: when the window lets it out, and why it waits."""

    until: float
    reason: str


class StageTime(msgspec.Struct, frozen=True):
    """One stage a recipient's side of a prompt reached: `at` when, and `after` the seconds
    since the stage before it (None for the first, `posted`)."""

    stage: str
    at: float
    after: float | None = None


class Status(Prompt, frozen=True, tag="prompt"):
    """A prompt's fields, and where it stands for each recipient now.

    Each recipient's `ts` is when it reached its stage: for a cancelled or expired prompt,
    when it was cancelled or expired. `stages` lists, per recipient, every stage it reached
    with its time, in the order they happened (`stage_times`).
    """

    recipients: dict[str, Recipient] = msgspec.field(default_factory=dict)
    doubted: list[Doubt] = msgspec.field(default_factory=list)  # posts that moved nothing
    waits: dict[str, Wait] = msgspec.field(default_factory=dict)  # recipient -> past the rate
    stages: dict[str, list[StageTime]] = msgspec.field(default_factory=dict)


class LogPage(msgspec.Struct, frozen=True):
    """Posts of the log in order, how many more follow them, and each post's verdict (this
    home's, as `status` counts them: only a verified post moves a stage)."""

    posts: list[Post]
    more: int = 0
    verdicts: list[Verdict] = msgspec.field(default_factory=list)

    def marked(self) -> list[dict[str, Any]]:
        """Each post as `log --json` and the MCP `log` tool give it (`with_verdict`)."""
        return [with_verdict(p, v) for p, v in zip(self.posts, self.verdicts, strict=True)]


def with_verdict(post: Post, verdict: Verdict) -> dict[str, Any]:
    """*post*'s fields, then its ``verdict``: verified, unsigned or forged."""
    return {**msgspec.to_builtins(post), "verdict": verdict}


def open_prompts(ctx: Context) -> list[OpenPrompt]:
    """The prompts open for the context's agent, in catch-up order (only the posts about its
    own prompts are verified). Each is the record the fold kept (of two with one id, the
    first), shown with that record's own verdict."""
    verdicts, mine = verdicts_for(ctx), dict[int, bytes]()
    follower = ctx.store().follow(0)
    try:
        records = list(checked(verdicts, _keeping(follower.records(), ctx.agent, mine)))
    finally:
        follower.close()
    state = fold_checked(records, BoardState(recipient=ctx.agent))
    waits = waits_for(ctx, state, ctx.agent, time.time())
    rows = []
    checks = {position: check for position, _, check in records if position in mine}
    for ps in open_for(state, ctx.agent, time.time()):
        r = ps.recipients[ctx.agent]
        at, pid = ps.position, ps.prompt.id
        # The verdict the fold asked for, kept.
        told = verdicts.provenance(
            ps.prompt, mine[at], verdict=checks[at](), approved=r.stage == "approved"
        )
        lines = tuple(provenance_lines(ps.prompt.sender, told))
        row = OpenPrompt(ps.prompt, told=lines, verdict=checks[at](), key=told.fingerprint)
        if r.stage == "held":
            by = r.held_by or "agent"
            rows.append(msgspec.structs.replace(row, held=True, held_by=by, reason=r.reason))
        else:
            wait = waits.get(pid)
            until, why = (None, None) if wait is None else (wait.until, wait.reason)
            rows.append(
                msgspec.structs.replace(row, reason=why, approved=told.approved, until=until)
            )
    return rows


def waits_for(ctx: Context, state: BoardState, recipient: str, now: float) -> dict[str, Wait]:
    """prompt id -> its wait for *recipient*'s rate (the policy this home keeps for it), from
    a fold that kept the closed prompts: the count the recipient's deliverer makes. A policy
    file that cannot be read shows no wait: its deliverer stops on it (fail closed), and the
    reader still shows where each prompt stands."""
    try:
        rate = read_policy(ctx.paths.dir, recipient).rate
    except BoardIOError:
        return {}
    waits = rate_waits(state, recipient, rate, now)
    out = {
        pid: Wait(until, rate_reason(rate, state.prompts[pid].prompt.sender))
        for pid, until in waits.items()
    }
    return _wake_waits(ctx, state, recipient, now) | out


def _wake_waits(ctx: Context, state: BoardState, recipient: str, now: float) -> dict[str, Wait]:
    """prompt id -> its wait for an asleep *recipient*'s wake budget, spent
    (state/panes/wakes.py)."""
    try:
        files = ctx.paths.pane(recipient)
        limit = read_policy(ctx.paths.dir, recipient).wake_limit
    except (BoardIOError, ValueError):
        return {}
    held = holder(files.lock)  # no listener, none asleep: its presence file is not read
    record = None if held is None else presence.read(files.presence)
    if record is None or record.sleep != "asleep" or held != record.pid:
        return {}
    until = wakes.spent_until(wakes.read(files.wakes), limit, now)
    if until is None:
        return {}
    return {
        pid: Wait(until, wakes.budget_reason(limit))
        for pid, ps in state.prompts.items()
        if recipient in ps.recipients
        and ps.recipients[recipient].stage in ("posted", "undelivered")
        and is_open(ps, recipient, now)
    }


def _keeping(
    batches: Iterable[list[tuple[int, Post, bytes]]], agent: str, mine: dict[int, bytes]
) -> Iterator[list[tuple[int, Post, bytes]]]:
    """*batches* as they are, keeping in *mine* the stored bytes of each prompt to *agent*, by
    its position."""
    for batch in batches:
        mine.update(
            (position, payload)
            for position, post, payload in batch
            if isinstance(post, Prompt) and agent in post.to
        )
        yield batch


def prompt_status(ctx: Context, ref: str) -> Status:
    """Prompt *ref* and, per recipient, where it stands now."""
    ps, state = find_prompt(ctx, ref)
    now = time.time()
    status = status_of(ps, now)
    waits = {name: waits_for(ctx, state, name, now).get(ps.prompt.id) for name in ps.recipients}
    return msgspec.structs.replace(
        status, waits={name: w for name, w in waits.items() if w is not None}
    )


def status_of(ps: PromptState, now: float) -> Status:
    """*ps* as of *now*: each recipient with its stage, and the time it reached it."""
    recipients = {}
    for name, r in ps.recipients.items():
        now_stage = stage(ps, name, now)
        ts = {"cancelled": ps.cancelled, "expired": ps.prompt.expires}.get(now_stage, r.ts)
        recipients[name] = msgspec.structs.replace(r, stage=now_stage, ts=ts)
    fields = msgspec.structs.asdict(ps.prompt)
    stages = {name: stage_times(ps.prompt.ts, r) for name, r in recipients.items()}
    return Status(**fields, recipients=recipients, doubted=list(ps.doubted), stages=stages)


# A recipient's stages in the order of the lifecycle, which orders those reached at one time.
_LIFECYCLE = ("posted", "held", "approved", "woke", "undelivered", "delivered", "seen", "read")


def stage_times(posted: float, r: Recipient) -> list[StageTime]:
    """Every stage *r* (its stage as of now, `status_of`'s) reached, with its time, in the order
    they happened: posted, held, approved, woke, delivered (the last receipt), seen and read
    (the first), then where it stands if that is past them (undelivered, acked, answered,
    refused, cancelled, expired). A body can be read before its notice is seen: the order is
    the times', and `after` the seconds since the stage listed before."""
    found = [
        ("posted", posted),
        ("held", r.held_at),
        ("approved", r.approved_at),
        ("woke", r.woke_at),
        ("delivered", r.delivered_at),
        ("seen", r.seen_at),
        ("read", r.read_at),
    ]
    if r.stage not in _LIFECYCLE or r.stage == "undelivered":
        found.append((r.stage, r.ts))
    reached = [(name, at) for name, at in found if at is not None]
    rank = {name: i for i, name in enumerate(_LIFECYCLE)}
    reached.sort(key=lambda item: (item[1], rank.get(item[0], len(rank))))
    out: list[StageTime] = []
    for name, at in reached:
        out.append(StageTime(name, at, None if not out else at - out[-1].at))
    return out


def read_log(
    ctx: Context,
    kinds: Sequence[str] = (),
    after: str | None = None,
    limit: int | None = None,
) -> LogPage:
    """The log's posts of *kinds* (every kind if none): up to *limit* of them (all if None),
    the first after post *after*, else the newest; each with its verdict (only the posts of
    the page are verified)."""
    records = read_checked(ctx.store(), verdicts_for(ctx))
    start = 0
    if after is not None:
        pid = match_id(ctx, [(position, post) for position, post, _ in records], after)
        start = next(i for i, (_, p, _) in enumerate(records) if p.id == pid) + 1
    kept = [(p, c) for _, p, c in records[start:] if not kinds or p.__struct_config__.tag in kinds]
    more = 0
    if limit is not None and after is None:
        kept = kept[-limit:]
    elif limit is not None:
        kept, more = kept[:limit], max(0, len(kept) - limit)
    return LogPage([post for post, _ in kept], more, [check() for _, check in kept])


def compact(ctx: Context, *, archived: bool = False) -> Compacted:
    """Rewrite the board's log keeping only open prompts and the posts about them; with
    *archived*, the old log is kept in the board's `archive/` folder."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    archive = ctx.paths.dir / "archive" / f"log-{stamp}" if archived else None
    return compactable(ctx.store()).compact(time.time(), archive)


def compactable(store: Store) -> Compactable:
    """*store*, if it can compact its log; `BadInput` if not."""
    if not isinstance(store, Compactable):
        raise BadInput(
            "compact rewrites the file log; on NATS, bound the board's stream with JetStream's "
            "own limits (max age, max messages)"
        )
    return store
