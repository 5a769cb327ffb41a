"""The board commands other than `post`: ack, answer, cancel, open, status, log."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Sequence

import msgspec

from paneboard.listener.context import Context, header
from paneboard.protocol.errors import BadInput, UnknownPost
from paneboard.protocol.ids import check_ref
from paneboard.protocol.names import check_body
from paneboard.protocol.posts import Ack, Answer, Cancel, Post, Prompt, to_json
from paneboard.state import tally
from paneboard.state.fold import BoardState, PromptState, apply, fold, open_for, stage


def load(ctx: Context) -> tuple[list[tuple[int, Post]], BoardState]:
    posts = ctx.store().read_all()
    return posts, fold(posts)


def match_id(ctx: Context, posts: Sequence[tuple[int, Post]], ref: str) -> str:
    """The full id of the one post whose id starts with *ref*."""
    return match_ref(ctx, {post.id for _, post in posts}, ref, "posts")


def match_ref(ctx: Context, ids: Iterable[str], ref: str, noun: str) -> str:
    """The one id in *ids* that starts with *ref* (at least 4 characters); else one clear refusal."""
    ref = check_ref(ref)
    hits = {i for i in ids if i.startswith(ref)}
    if not hits:
        raise UnknownPost(ctx.board, ref)
    if len(hits) > 1:
        raise BadInput(f"board `{ctx.board}`: id `{ref}` matches {len(hits)} {noun}; give more characters")
    return hits.pop()


def resolve_id(ctx: Context, ref: str) -> str:
    return match_id(ctx, ctx.store().read_all(), ref)


def find_prompt(ctx: Context, ref: str) -> tuple[PromptState, BoardState]:
    posts, state = load(ctx)
    pid = match_id(ctx, posts, ref)
    ps = state.prompts.get(pid)
    if ps is None:
        kind = next(post for _, post in posts if post.id == pid).__struct_config__.tag
        raise BadInput(f"board `{ctx.board}`: post {pid} is {'an' if kind in ('ack', 'answer', 'undelivered') else 'a'} {kind}, not a prompt")  # fmt: skip
    return ps, state


def write(ctx: Context, post: Post, state: BoardState | None = None) -> None:
    """Append *post*; with the board's *state*, rebuild the tally of the prompt's sender after it."""
    ctx.paths.ensure()
    ctx.store().append([post])
    if state is not None and not isinstance(post, Prompt):
        apply(state, state.position, post)
        rebuild_tally(ctx, state, state.prompts[post.prompt].prompt.sender)
    if ctx.json:
        emit(post)


def rebuild_tally(ctx: Context, state: BoardState, sender: str) -> None:
    """The sender's open prompts per recipient, from the fold (see state/tally.py)."""
    now = time.time()
    fresh: tally.Tally = {}
    for ps in state.prompts.values():
        if ps.prompt.sender == sender:
            for name in ps.recipients:
                if stage(ps, name, now) in ("posted", "delivered", "undelivered"):
                    fresh.setdefault(name, []).append((ps.prompt.id, ps.prompt.expires))
    tally.write(tally.path_for(ctx.paths.dir, sender), fresh)


def emit(obj: object) -> None:
    sys.stdout.buffer.write(to_json(obj) + b"\n")
    sys.stdout.flush()


def _closable(ctx: Context, ps: PromptState) -> None:
    pid = ps.prompt.id
    if ctx.agent not in ps.recipients:
        raise BadInput(f"agent `{ctx.agent}` is not a recipient of prompt {pid} (sent to {', '.join(ps.prompt.to)})")
    now_stage = stage(ps, ctx.agent, time.time())
    if now_stage not in ("posted", "delivered", "undelivered"):
        raise BadInput(f"prompt {pid} is already {now_stage} for `{ctx.agent}`")


def run_ack(ctx: Context, ref: str, note: str | None) -> None:
    ps, state = find_prompt(ctx, ref)
    _closable(ctx, ps)
    if note is not None:
        check_body("ack note", note)
    write(ctx, Ack(**header(ctx.board, ctx.agent), prompt=ps.prompt.id, note=note), state)


def run_answer(ctx: Context, ref: str, body: str) -> None:
    ps, state = find_prompt(ctx, ref)
    _closable(ctx, ps)
    write(ctx, Answer(**header(ctx.board, ctx.agent), prompt=ps.prompt.id, body=check_body("answer", body)), state)


def run_cancel(ctx: Context, ref: str) -> None:
    ps, state = find_prompt(ctx, ref)
    pid = ps.prompt.id
    if ps.prompt.sender != ctx.agent:
        raise BadInput(f"agent `{ctx.agent}` did not send prompt {pid} (`{ps.prompt.sender}` did); only its sender can cancel it")  # fmt: skip
    now = time.time()
    if not any(stage(ps, name, now) in ("posted", "delivered", "undelivered") for name in ps.recipients):
        raise BadInput(f"prompt {pid} is already closed for every recipient")
    write(ctx, Cancel(**header(ctx.board, ctx.agent), prompt=pid), state)


def run_open(ctx: Context) -> None:
    _, state = load(ctx)
    for ps in open_for(state, ctx.agent, time.time()):
        if ctx.json:
            emit(ps.prompt)
        else:
            p = ps.prompt
            print(f"{p.id}  {p.priority:<6}  from {p.sender:<12}  {clock(p.ts)}  {summary(p.body)}")


def run_status(ctx: Context, ref: str) -> None:
    ps, _ = find_prompt(ctx, ref)
    now = time.time()
    stages = {name: msgspec.structs.replace(r, stage=stage(ps, name, now)) for name, r in ps.recipients.items()}
    if ctx.json:
        emit({**msgspec.to_builtins(ps.prompt), "recipients": stages})
        return
    p = ps.prompt
    print(f"prompt {p.id} from {p.sender} on board {p.board}, priority {p.priority}, posted {clock(p.ts)}")
    for name, r in stages.items():
        extra = ""
        if r.stage == "answered" and r.answer is not None:
            extra = f"  answer: {summary(r.answer)}"
        elif r.stage == "acked" and r.note:
            extra = f"  note: {summary(r.note)}"
        elif r.stage in ("delivered", "undelivered"):
            extra = f"  via {r.door}" + (f" ({r.outcome})" if r.outcome == "unknown" else "") + (f": {r.reason}" if r.reason else "")  # fmt: skip
        when = clock(p.expires) if r.stage == "expired" and p.expires else clock(ps.cancelled) if r.stage == "cancelled" and ps.cancelled else clock(r.ts) if r.ts else ""  # fmt: skip
        print(f"  {name:<16} {r.stage:<11} {when}{extra}")


def describe(post: Post) -> str:
    """One line of `log` for a post."""
    head = f"{clock(post.ts)}  {post.id}  {post.__struct_config__.tag:<11} {post.sender}"
    if isinstance(post, Prompt):
        return f"{head} -> {','.join(post.to)} [{post.priority}]: {summary(post.body)}"
    if isinstance(post, Answer):
        return f"{head} on {post.prompt}: {summary(post.body)}"
    detail = getattr(post, "reason", None) or getattr(post, "note", None) or getattr(post, "door", None)
    return f"{head} on {post.prompt}" + (f": {summary(detail)}" if detail else "")


def print_posts(ctx: Context, posts: Sequence[tuple[int, Post]], kinds: Sequence[str] | None) -> None:
    for _, post in posts:
        if kinds and post.__struct_config__.tag not in kinds:
            continue
        if ctx.json:
            emit(post)
        else:
            print(describe(post), flush=True)


def run_log(ctx: Context, kinds: Sequence[str] | None) -> None:
    print_posts(ctx, ctx.store().read_all(), kinds)


def clock(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def summary(text: str, width: int = 72) -> str:
    from paneboard.protocol.compose import visible

    line = visible(text.strip().split("\n", 1)[0])
    return line if len(line) <= width and "\n" not in text.strip() else line[: width - 1] + "…"
