"""Trust on a board, as operations every front end shares: verdicts, keys, pins.

Pinning a key is a decision (docs/trust.md): the front end that calls `pin` asks first (the
command line on the controlling terminal, board/confirm.py). Approving and refusing held
prompts is board/decide.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from paneboard.board.context import Context, header
from paneboard.protocol.errors import BadInput
from paneboard.protocol.posts import Approved, Post, Prompt
from paneboard.protocol.signing import fingerprint, signed_part
from paneboard.state.fold import BoardState, Doubt, fold_checked
from paneboard.state.paths import open_home
from paneboard.state.trust.keys import open_key, own_keys
from paneboard.state.trust.policy import FIRST_KEY
from paneboard.state.trust.verdicts import Verdicts, checked, read_checked

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
    """This home's verdicts on the context's board (its folder made, to keep the pins), the
    context's agent being one of the home's own (its key made if missing)."""
    ctx.paths.ensure()
    return Verdicts(ctx.paths.dir, own=ctx.agent)


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
    pinned_by: str | None = None  # own (this home's agent) | trusted (a person) | first (log)
    new: bool = False  # pinned by this reading of the board


def key_table(ctx: Context) -> list[KeyRow]:
    """Every agent that posted on the board, as this home sees its keys (the names it had no
    pin for are pinned from their first signed post, as every reader pins them)."""
    verdicts = verdicts_for(ctx)
    keys: dict[str, list[str]] = {}
    follower = ctx.store().follow(0)
    try:
        for batch in follower.records():
            for _, post, payload in batch:
                verdicts.note(post.sender, payload)
                _note_key(post.sender, payload, keys)
    finally:
        follower.close()
    new = {agent for agent, _ in verdicts.taken}
    return [
        _row(agent, keys[agent], verdicts.pin_of(agent), verdicts.pinned_by(agent), agent in new)
        for agent in sorted(keys)
    ]


def _note_key(sender: str, payload: bytes, keys: dict[str, list[str]]) -> None:
    part = signed_part(payload)
    seen = keys.setdefault(sender, [])
    if part is None:
        return
    key = fingerprint(part.key)
    if key not in seen:
        seen.append(key)


def _row(agent: str, seen: Sequence[str], pinned: str | None, by: str | None, new: bool) -> KeyRow:
    others = tuple(k for k in seen if k != pinned)
    if pinned is None:
        return KeyRow(agent, seen[0] if seen else None, "unpinned" if seen else "unsigned")
    return KeyRow(agent, pinned, "conflict" if others else "pinned", others, by, new)


def own_fingerprint(ctx: Context) -> str:
    """The fingerprint of the context's agent's key in its home (made on first use)."""
    open_home(ctx.home)
    return open_key(ctx.home, ctx.agent).fingerprint


def pin(ctx: Context, agent: str, key_fingerprint: str) -> list[Approved]:
    """Pin *key_fingerprint* for *agent* on the board, in place of any earlier pin; the prompts
    of *agent* signed with that key and held for first contact for this home's agents are let
    through (an `approved` each, returned). A home's own agent keeps its own key."""
    key_fingerprint = key_fingerprint.strip().lower()
    verdicts = verdicts_for(ctx)
    own = verdicts.pin_of(agent)
    if verdicts.pinned_by(agent) == "own" and own != key_fingerprint:
        raise BadInput(
            f"`{agent}` is this home's own agent: its key {own} is its pin on every board"
        )
    verdicts.pins.trust(agent, key_fingerprint)
    return _release_first_contact(ctx, verdicts, agent, key_fingerprint)


def _release_first_contact(
    ctx: Context, verdicts: Verdicts, agent: str, key_fingerprint: str
) -> list[Approved]:
    payloads: dict[str, bytes] = {}
    records = []
    follower = ctx.store().follow(0)
    try:
        for batch in follower.records():
            for position, post, payload in batch:
                if isinstance(post, Prompt) and post.sender == agent:
                    payloads.setdefault(post.id, payload)
                records.append((position, post, payload))
    finally:
        follower.close()
    state = fold_checked(checked(verdicts, [records]))
    own = own_keys(ctx.home)
    approvals = []
    for pid, ps in state.prompts.items():
        part = signed_part(payloads.get(pid, b""))
        if part is None or fingerprint(part.key) != key_fingerprint:
            continue
        for name, r in ps.recipients.items():
            held = r.stage == "held" and r.held_by == "policy" and name in own
            if held and (r.reason or "").startswith(f"{FIRST_KEY} {agent}"):
                approvals.append(Approved(**header(ctx.board, name), prompt_id=pid))
    if approvals:
        ctx.store().append(approvals)
    return approvals
