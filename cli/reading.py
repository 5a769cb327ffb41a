"""Reading the board: `open`, `status`, `log` and `log --follow`."""

from __future__ import annotations

import signal
import time
from argparse import Namespace
from collections.abc import Sequence

import anyio
import msgspec

from paneboard.board.context import Context
from paneboard.board.trust import doubt_line
from paneboard.cli.board import clock, emit, find_prompt, load, print_posts, summary
from paneboard.listener.view import BoardView
from paneboard.protocol.errors import BadInput
from paneboard.protocol.posts import Prompt
from paneboard.protocol.visible import one_line
from paneboard.protocol.words import HANDED_STAGES, SEEING_DOORS
from paneboard.state.abc import Compactable, Store
from paneboard.state.fold import PromptState, Recipient, open_for, stage


def open_prompts(ctx: Context) -> list[Prompt]:
    """The prompts open for the context's agent, in catch-up order."""
    _, state = load(ctx)
    return [ps.prompt for ps in open_for(state, ctx.agent, time.time())]


def run_open(ctx: Context) -> None:
    _, state = load(ctx)
    prompts = open_for(state, ctx.agent, time.time())
    held = {ps.prompt.id: ps.recipients[ctx.agent].stage == "held" for ps in prompts}
    for p in (ps.prompt for ps in prompts):
        if ctx.json:
            emit(p)
        else:
            mark = "  [held]" if held.get(p.id) else ""
            print(
                one_line(f"{p.id}  {p.priority:<6}  from {p.sender:<12}  {clock(p.ts)}  ")
                + summary(p.body)
                + mark
            )


def prompt_status(ctx: Context, ref: str) -> tuple[PromptState, dict[str, Recipient]]:
    """Prompt *ref* and, per recipient, where it stands now (its `stage` filled in)."""
    ps, _ = find_prompt(ctx, ref)
    now = time.time()
    stages = {
        name: msgspec.structs.replace(r, stage=stage(ps, name, now))
        for name, r in ps.recipients.items()
    }
    return ps, stages


def status_object(ps: PromptState, stages: dict[str, Recipient]) -> dict[str, object]:
    """`status --json`: the prompt's fields and its recipients' stages."""
    return {**msgspec.to_builtins(ps.prompt), "recipients": msgspec.to_builtins(stages)}


def run_status(ctx: Context, ref: str) -> None:
    ps, stages = prompt_status(ctx, ref)
    if ctx.json:
        emit(status_object(ps, stages))
        return
    for line in status_lines(ps, stages):
        print(line)


def status_lines(
    ps: PromptState, stages: dict[str, Recipient], now: float | None = None
) -> list[str]:
    """`status` for people: the prompt, then one line per recipient (as of *now*)."""
    now = time.time() if now is None else now
    p = ps.prompt
    head = f"prompt {p.id} from {p.sender} on board {p.board}, priority {p.priority}"
    lines = [one_line(f"{head}, posted {clock(p.ts)}")]
    for name, r in stages.items():
        extra = ""
        if r.stage == "answered" and r.answer is not None:
            extra = f"  answer: {summary(r.answer)}"
        elif r.stage == "acked" and r.note:
            extra = f"  note: {summary(r.note)}"
        elif r.stage in HANDED_STAGES:
            extra = (
                f"  via {r.door}"
                + (f" ({r.outcome})" if r.outcome == "unknown" else "")
                + (f": {r.reason}" if r.reason else "")
                + not_seen_yet(r, now)
            )
        elif r.stage == "seen":
            extra = f"  via {r.door}, in {r.source}" + seen_after(r)
        elif r.stage == "held" and r.ts is not None:
            extra = f"  {held_line(r, now)}"
        elif r.stage == "refused":
            extra = f"  {r.reason}"
        when = (
            clock(p.expires)
            if r.stage == "expired" and p.expires
            else clock(ps.cancelled)
            if r.stage == "cancelled" and ps.cancelled
            else clock(r.ts)
            if r.ts
            else ""
        )
        lines.append(one_line(f"  {name:<16} {r.stage:<11} {when}{extra}"))
    return lines + [one_line(doubt_line(d)) for d in ps.doubted]


def held_line(r: Recipient, now: float) -> str:
    """ "held by the agent (crossSessionInbound: hold) since 12:01:03 (40 s ago), via …"."""
    since = f"since {clock(r.ts)} ({ago(now - r.ts)})" if r.ts is not None else ""
    return f"held by the {r.held_by or 'agent'} ({r.reason}) {since}, via {r.door}"


def not_seen_yet(r: Recipient, now: float) -> str:
    """How long a prompt has been delivered through a door that can prove `seen`, and not seen."""
    if r.stage != "delivered" or r.door not in SEEING_DOORS or r.ts is None:
        return ""
    return f"  (delivered {ago(now - r.ts)}, not yet seen)"


def seen_after(r: Recipient) -> str:
    if r.seen_at is None or r.delivered_at is None or r.seen_at < r.delivered_at:
        return ""
    return f" ({r.seen_at - r.delivered_at:.1f} s after delivery)"


def ago(seconds: float) -> str:
    """A person's reading of a duration: "40 s ago", "12 min ago", "3 h ago", "2 days ago"."""
    s = int(max(0.0, seconds))
    if s < 60:
        return f"{s} s ago"
    if s < 3600:
        return f"{s // 60} min ago"
    return f"{s // 3600} h ago" if s < 2 * 86400 else f"{s // 86400} days ago"


def run_log(ctx: Context, kinds: Sequence[str] | None) -> None:
    print_posts(ctx, ctx.store().read_all(), kinds)


def run_follow(ctx: Context, kinds: Sequence[str] | None) -> None:
    async def follow() -> None:
        with (
            BoardView(ctx.store()) as view,
            anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals,
        ):
            async with anyio.create_task_group() as tg:

                async def stop() -> None:
                    async for _ in signals:
                        tg.cancel_scope.cancel()

                tg.start_soon(stop)
                while True:
                    print_posts(ctx, view.refresh(), kinds)
                    await view.wait_changed()

    ctx.paths.ensure()
    anyio.run(follow)


def open_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        run_open(ctx)


def status_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        run_status(ctx, args.id)


def log_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        if args.follow:
            run_follow(ctx, args.kind)
        else:
            run_log(ctx, args.kind)


def compact_command(args: Namespace) -> None:
    """Rewrite the board's log keeping only open prompts and the posts about them."""
    with Context.from_args(args) as ctx:
        _compact(ctx, args.archive)


def _compact(ctx: Context, archived: bool) -> None:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    archive = ctx.paths.dir / "archive" / f"log-{stamp}" if archived else None
    done = compactable(ctx.store()).compact(time.time(), archive)
    if ctx.json:
        emit(done)
    else:
        total = done.kept + done.dropped
        print(
            f"board `{ctx.board}`: kept {done.kept} of {total} posts, "
            f"{done.before_bytes:,} -> {done.after_bytes:,} bytes, in {done.seconds:.2f} s"
        )


def compactable(store: Store) -> Compactable:
    """*store*, if it can compact its log; `BadInput` if not."""
    if not isinstance(store, Compactable):
        raise BadInput(
            "compact rewrites the file log; on NATS, bound the board's stream with JetStream's "
            "own limits (max age, max messages)"
        )
    return store
