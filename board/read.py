"""Reading the board: the prompts open for an agent, one prompt's status, the log by pages,
and compacting the log (which rewrites it)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence

import msgspec

from paneboard.board.context import Context
from paneboard.board.find import find_prompt, match_id
from paneboard.board.trust import verdicts_for
from paneboard.protocol.compose import Provenance, provenance_lines
from paneboard.protocol.errors import BadInput
from paneboard.protocol.posts import Post, Prompt
from paneboard.state.abc import Compactable, Store
from paneboard.state.compact import Compacted
from paneboard.state.fold import (
    BoardState,
    Doubt,
    PromptState,
    Recipient,
    fold_checked,
    open_for,
    stage,
)
from paneboard.state.verdicts import checked


class OpenPrompt(msgspec.Struct, frozen=True):
    """A prompt open for the agent, and whether its agent (or policy) holds it for a person:
    who holds it and why, or whether a person approved it after it was held."""

    prompt: Prompt
    held: bool = False
    held_by: str | None = None
    reason: str | None = None
    approved: bool = False
    told: tuple[str, ...] = ()  # paneboard's lines on what it checked of the sender (compose's)


class Status(Prompt, frozen=True, tag="prompt"):
    """A prompt's fields, and where it stands for each recipient now.

    Each recipient's `ts` is when it reached its stage: for a cancelled or expired prompt,
    when it was cancelled or expired.
    """

    recipients: dict[str, Recipient] = msgspec.field(default_factory=dict)
    doubted: list[Doubt] = msgspec.field(default_factory=list)  # posts that moved nothing


class LogPage(msgspec.Struct, frozen=True):
    """Posts of the log in order, and how many more follow them."""

    posts: list[Post]
    more: int = 0


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
    rows = []
    checks = {position: check for position, _, check in records if position in mine}
    for ps in open_for(state, ctx.agent, time.time()):
        r = ps.recipients[ctx.agent]
        at = ps.position
        seal = verdicts.told(checks[at](), mine[at])  # the verdict the fold asked for, kept
        told = Provenance(seal.verdict, seal.fingerprint, r.stage == "approved")
        lines = tuple(provenance_lines(ps.prompt.sender, told))
        if r.stage == "held":
            rows.append(OpenPrompt(ps.prompt, True, r.held_by or "agent", r.reason, told=lines))
        else:
            rows.append(OpenPrompt(ps.prompt, approved=told.approved, told=lines))
    return rows


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
    ps, _ = find_prompt(ctx, ref)
    return status_of(ps, time.time())


def status_of(ps: PromptState, now: float) -> Status:
    """*ps* as of *now*: each recipient with its stage, and the time it reached it."""
    recipients = {}
    for name, r in ps.recipients.items():
        now_stage = stage(ps, name, now)
        ts = {"cancelled": ps.cancelled, "expired": ps.prompt.expires}.get(now_stage, r.ts)
        recipients[name] = msgspec.structs.replace(r, stage=now_stage, ts=ts)
    fields = msgspec.structs.asdict(ps.prompt)
    return Status(**fields, recipients=recipients, doubted=list(ps.doubted))


def read_log(
    ctx: Context,
    kinds: Sequence[str] = (),
    after: str | None = None,
    limit: int | None = None,
) -> LogPage:
    """The log's posts of *kinds* (every kind if none): up to *limit* of them (all if None),
    the first after post *after*, else the newest."""
    everything = ctx.store().read_all()
    start = 0
    if after is not None:
        pid = match_id(ctx, everything, after)
        start = next(i for i, (_, p) in enumerate(everything) if p.id == pid) + 1
    posts = [p for _, p in everything[start:] if not kinds or p.__struct_config__.tag in kinds]
    if limit is None:
        return LogPage(posts)
    if after is None:
        return LogPage(posts[-limit:])
    return LogPage(posts[:limit], max(0, len(posts) - limit))


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
