"""Finding posts by id prefix, and writing a post with what follows from it (the tally)."""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterable, Sequence

from paneboard.board.context import Context
from paneboard.protocol.errors import BadInput, PaneboardError, UnknownPost
from paneboard.protocol.ids import check_ref
from paneboard.protocol.posts import Post, Prompt
from paneboard.protocol.words import OPEN_STAGES
from paneboard.state import tally
from paneboard.state.fold import BoardState, PromptState, apply, stage


class TallyNotWritten(UserWarning):
    """The open-prompt tally could not be rebuilt after a post was written (best effort)."""


def load(ctx: Context) -> tuple[list[tuple[int, Post]], BoardState]:
    from paneboard.board.trust import read_board  # only verified posts move stages

    return read_board(ctx)


def match_id(ctx: Context, posts: Sequence[tuple[int, Post]], ref: str) -> str:
    """The full id of the one post whose id starts with *ref*."""
    return match_ref(ctx, {post.id for _, post in posts}, ref, "posts")


def match_ref(ctx: Context, ids: Iterable[str], ref: str, noun: str) -> str:
    """The one id in *ids* that starts with *ref* (at least 4 characters);
    else one clear refusal."""
    ref = check_ref(ref)
    hits = {i for i in ids if i.startswith(ref)}
    if not hits:
        raise UnknownPost(ctx.board, ref)
    if len(hits) > 1:
        raise BadInput(
            f"board `{ctx.board}`: id `{ref}` matches {len(hits)} {noun}; give more characters"
        )
    return hits.pop()


def resolve_id(ctx: Context, ref: str) -> str:
    """The full id of the post *ref* names on the board."""
    return match_id(ctx, ctx.store().read_all(), ref)


def find_prompt(ctx: Context, ref: str) -> tuple[PromptState, BoardState]:
    """Prompt *ref*, folded, and the board's state; `BadInput` if *ref* is another kind."""
    posts, state = load(ctx)
    pid = match_id(ctx, posts, ref)
    ps = state.prompts.get(pid)
    if ps is None:
        kind = next(post for _, post in posts if post.id == pid).__struct_config__.tag
        raise BadInput(
            f"board `{ctx.board}`: post {pid} is "
            f"{'an' if kind in ('ack', 'answer', 'undelivered') else 'a'} {kind}, not a prompt"
        )
    return ps, state


def write(ctx: Context, post: Post, state: BoardState | None = None) -> None:
    """Append *post*; with the board's *state*, rebuild the tally of the prompt's sender
    after it."""
    ctx.paths.ensure()
    ctx.store().append([post])
    if state is not None and not isinstance(post, Prompt):
        apply(state, state.position, post)
        rebuild_tally(ctx, state, state.prompts[post.prompt_id].prompt.sender)


def rebuild_tally(ctx: Context, state: BoardState, sender: str) -> None:
    """The sender's open prompts per recipient, from the fold (see state/tally.py).

    Best effort: it runs after the post is written, so a tally that cannot be written is a
    warning (`TallyNotWritten`), never the operation's failure.
    """
    try:
        _rebuild_tally(ctx, state, sender)
    except (PaneboardError, OSError) as exc:
        warnings.warn(f"the open-prompt tally: {exc}", TallyNotWritten, stacklevel=2)


def _rebuild_tally(ctx: Context, state: BoardState, sender: str) -> None:
    now = time.time()
    fresh: tally.Tally = {}
    for ps in state.prompts.values():
        if ps.prompt.sender == sender:
            for name in ps.recipients:
                if stage(ps, name, now) in OPEN_STAGES:
                    fresh.setdefault(name, []).append((ps.prompt.id, ps.prompt.expires))
    tally.write(tally.path_for(ctx.paths.dir, sender), fresh)
