"""What the board commands share: finding posts by id prefix, writing a post, printing posts."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Sequence

from paneboard.board.context import Context
from paneboard.protocol.errors import BadInput, PaneboardError, UnknownPost
from paneboard.protocol.ids import check_ref
from paneboard.protocol.posts import Answer, Held, Post, Prompt, Seen, to_json
from paneboard.protocol.visible import one_line
from paneboard.protocol.words import OPEN_STAGES
from paneboard.state import tally
from paneboard.state.fold import BoardState, PromptState, apply, stage


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
    return match_id(ctx, ctx.store().read_all(), ref)


def find_prompt(ctx: Context, ref: str) -> tuple[PromptState, BoardState]:
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
        rebuild_tally(ctx, state, state.prompts[post.prompt].prompt.sender)
    if ctx.json:
        emit(post)


def rebuild_tally(ctx: Context, state: BoardState, sender: str) -> None:
    """The sender's open prompts per recipient, from the fold (see state/tally.py).

    Best effort: it runs after the post is written, so a tally that cannot be written is a
    warning, never the command's failure.
    """
    try:
        _rebuild_tally(ctx, state, sender)
    except (PaneboardError, OSError) as exc:
        from paneboard.cli import one_line

        print(one_line(f"paneboard: warning: the open-prompt tally: {exc}"), file=sys.stderr)


def _rebuild_tally(ctx: Context, state: BoardState, sender: str) -> None:
    now = time.time()
    fresh: tally.Tally = {}
    for ps in state.prompts.values():
        if ps.prompt.sender == sender:
            for name in ps.recipients:
                if stage(ps, name, now) in OPEN_STAGES:
                    fresh.setdefault(name, []).append((ps.prompt.id, ps.prompt.expires))
    tally.write(tally.path_for(ctx.paths.dir, sender), fresh)


def emit(obj: object) -> None:
    """One JSON line on stdout (a text stream without a buffer, as in tests, gets it decoded)."""
    write_json_line(to_json(obj))


def write_json_line(data: bytes) -> None:
    out = getattr(sys.stdout, "buffer", None)
    if out is None:
        sys.stdout.write(data.decode() + "\n")
    else:
        out.write(data + b"\n")
    sys.stdout.flush()


def describe(post: Post) -> str:
    """One line of `log` for a post."""
    head = f"{clock(post.ts)}  {post.id}  {post.__struct_config__.tag:<11} {post.sender}"
    if isinstance(post, Prompt):
        return f"{head} -> {','.join(post.to)} [{post.priority}]: {summary(post.body)}"
    if isinstance(post, Answer):
        return f"{head} on {post.prompt}: {summary(post.body)}"
    if isinstance(post, Seen):
        return f"{head} on {post.prompt}: {post.door}, in {post.source}"
    if isinstance(post, Held):
        return f"{head} on {post.prompt}: {post.door}, held by the {post.by} ({post.reason})"
    detail = (
        getattr(post, "reason", None) or getattr(post, "note", None) or getattr(post, "door", None)
    )
    return f"{head} on {post.prompt}" + (f": {summary(detail)}" if detail else "")


def print_posts(
    ctx: Context, posts: Sequence[tuple[int, Post]], kinds: Sequence[str] | None
) -> None:
    for _, post in posts:
        if kinds and post.__struct_config__.tag not in kinds:
            continue
        if ctx.json:
            emit(post)
        else:
            print(one_line(describe(post)), flush=True)


def clock(ts: float) -> str:
    """*ts* as local time; a time no clock can show (inf, nan, out of range) as `?`."""
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    except (OverflowError, ValueError, OSError, TypeError):
        return "?"


def summary(text: str, width: int = 72) -> str:
    from paneboard.protocol.compose import visible

    line = visible(text.strip().split("\n", 1)[0])
    return line if len(line) <= width and "\n" not in text.strip() else line[: width - 1] + "…"
