"""Trust on a board, as operations every front end shares: verdicts, keys, approve, refuse.

What they decide is a person's (docs/trust.md); the front end that calls `pin`, `approve` or
`refuse` confirms with that person first (the command line on the controlling terminal).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import msgspec

from paneboard.board.context import Context, header
from paneboard.protocol.errors import BadInput, UnknownPost
from paneboard.protocol.ids import check_ref
from paneboard.protocol.names import TEXT_MAX
from paneboard.protocol.posts import Approved, Post, Prompt, Refused
from paneboard.protocol.signing import fingerprint, signed_part
from paneboard.protocol.words import OPEN_STAGES
from paneboard.state.fold import BoardState, Doubt, PromptState, fold_checked, stage
from paneboard.state.keys import open_key
from paneboard.state.paths import open_home
from paneboard.state.verdicts import Verdicts, read_checked

__all__ = [
    "KeyRow",
    "approve",
    "doubt_line",
    "key_table",
    "own_fingerprint",
    "pin",
    "read_board",
    "refuse",
    "verdicts_for",
]


def verdicts_for(ctx: Context) -> Verdicts:
    """This home's verdicts on the context's board (its folder made, to keep the pins)."""
    ctx.paths.ensure()
    return Verdicts(ctx.paths.dir)


def read_board(ctx: Context) -> tuple[list[tuple[int, Post]], BoardState]:
    """Every post of the board, and the fold in which only verified posts move stages."""
    records = read_checked(ctx.store(), verdicts_for(ctx))
    return [(position, post) for position, post, _ in records], fold_checked(records)


def doubt_line(d: Doubt) -> str:
    """`status`'s line for a post that moved nothing, and why."""
    why = {"forged": "a bad signature or another key than the pinned one", "unsigned": "unsigned"}
    return f"  not counted: {d.kind} {d.id} by {d.sender} ({d.verdict}: {why[d.verdict]})"


class KeyRow(msgspec.Struct, frozen=True):
    """One agent of `paneboard keys`: its pinned fingerprint, and what its posts carry."""

    agent: str
    fingerprint: str | None  # pinned by this home, or the first key seen where none is
    state: str  # pinned | unsigned | conflict | unpinned (no signature of its checks)
    others: tuple[str, ...] = ()  # fingerprints of other keys its posts were signed with


def key_table(ctx: Context) -> list[KeyRow]:
    """Every agent that posted on the board, as this home sees its keys (first keys pinned)."""
    verdicts = verdicts_for(ctx)
    first: dict[str, tuple[str, bytes] | None] = {}
    keys: dict[str, list[str]] = {}
    follower = ctx.store().follow(0)
    try:
        for batch in follower.records():
            for _, post, payload in batch:
                _note_key(post.sender, payload, first, keys)
    finally:
        follower.close()
    for agent, found in first.items():
        if found is not None and agent not in verdicts.pinned():
            verdicts.of(agent, found[1])  # pins it if its signature checks
    return [_row(agent, keys[agent], verdicts.pinned().get(agent)) for agent in sorted(keys)]


def _note_key(
    sender: str,
    payload: bytes,
    first: dict[str, tuple[str, bytes] | None],
    keys: dict[str, list[str]],
) -> None:
    part = signed_part(payload)
    seen = keys.setdefault(sender, [])
    if part is None:
        first.setdefault(sender, None)
        return
    key = fingerprint(part.key)
    if first.get(sender) is None:
        first[sender] = (key, payload)
    if key not in seen:
        seen.append(key)


def _row(agent: str, seen: Sequence[str], pinned: str | None) -> KeyRow:
    others = tuple(k for k in seen if k != pinned)
    if pinned is None:
        return KeyRow(agent, seen[0] if seen else None, "unpinned" if seen else "unsigned")
    return KeyRow(agent, pinned, "conflict" if others else "pinned", others)


def own_fingerprint(ctx: Context) -> str:
    """The fingerprint of the context's agent's key in its home (made on first use)."""
    open_home(ctx.home)
    return open_key(ctx.home, ctx.agent).fingerprint


def pin(ctx: Context, agent: str, key_fingerprint: str) -> None:
    """Pin *key_fingerprint* for *agent* on the board, in place of any earlier pin."""
    verdicts_for(ctx).pins.trust(agent, key_fingerprint.strip().lower())


def _find(ctx: Context, ref: str) -> tuple[PromptState, BoardState]:
    posts, state = read_board(ctx)
    ref = check_ref(ref)
    hits = {post.id for _, post in posts if post.id.startswith(ref) and isinstance(post, Prompt)}
    if not hits:
        raise UnknownPost(ctx.board, ref)
    if len(hits) > 1:
        raise BadInput(f"board `{ctx.board}`: id `{ref}` matches {len(hits)} prompts")
    return state.prompts[hits.pop()], state


def _for_me(ctx: Context, ps: PromptState) -> str:
    if ctx.agent not in ps.recipients:
        raise BadInput(
            f"agent `{ctx.agent}` is not a recipient of prompt {ps.prompt.id} "
            f"(sent to {', '.join(ps.prompt.to)})"
        )
    return stage(ps, ctx.agent, time.time())


def approve(ctx: Context, ref: str) -> Approved:
    """Let prompt *ref*, held for the context's agent, through: its listener then delivers it."""
    ps, _ = _find(ctx, ref)
    now_stage = _for_me(ctx, ps)
    if now_stage != "held":
        raise BadInput(f"prompt {ps.prompt.id} is {now_stage} for `{ctx.agent}`, not held")
    post = Approved(**header(ctx.board, ctx.agent), prompt=ps.prompt.id)
    ctx.store().append([post])
    return post


def refuse(ctx: Context, ref: str, reason: str) -> Refused:
    """End prompt *ref* for the context's agent; the sender's `wait` names *reason*."""
    if len(reason.encode()) > TEXT_MAX:
        raise BadInput(f"the reason is over {TEXT_MAX} bytes, the limit")
    ps, _ = _find(ctx, ref)
    now_stage = _for_me(ctx, ps)
    if now_stage not in OPEN_STAGES:
        raise BadInput(f"prompt {ps.prompt.id} is already {now_stage} for `{ctx.agent}`")
    post = Refused(**header(ctx.board, ctx.agent), prompt=ps.prompt.id, reason=reason)
    ctx.store().append([post])
    return post
