"""Trust on a board, as operations every front end shares: verdicts, keys, pins.

Pinning a key is a decision (docs/trust.md): the front end that calls `pin` asks first (the
command line on the controlling terminal, board/confirm.py). Approving and refusing held
prompts is board/decide.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from paneboard.board.context import Context
from paneboard.protocol.posts import Post
from paneboard.protocol.signing import fingerprint, signed_part
from paneboard.state.fold import BoardState, Doubt, fold_checked
from paneboard.state.keys import open_key
from paneboard.state.paths import open_home
from paneboard.state.verdicts import Verdicts, read_checked

__all__ = [
    "KeyRow",
    "doubt_line",
    "key_table",
    "own_fingerprint",
    "pin",
    "read_board",
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
