"""Finding posts by id prefix: the one post, or the one prompt, a reference names."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from paneboard.board.context import Context
from paneboard.protocol.errors import BadInput, UnknownPost
from paneboard.protocol.ids import check_ref
from paneboard.protocol.posts import Post
from paneboard.state.fold import BoardState, PromptState


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
