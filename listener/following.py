"""Commands that follow the board as it grows: listen, wait, ask, log --follow, who."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path

import anyio

from paneboard.listener.board import emit, match_ref, print_posts
from paneboard.listener.context import Context, executable
from paneboard.listener.doors import ClaudeInboxDoor, CodexQueueDoor, Door, ExecDoor, MaildirDoor, StdoutDoor
from paneboard.listener.listen import Listener, run_listener
from paneboard.listener.view import BoardView
from paneboard.protocol.errors import BadInput, PromptClosed, WaitTimedOut
from paneboard.state import presence
from paneboard.state.fold import PromptState, stage
from paneboard.state.panelock import holder


def make_door(ctx: Context, name: str, *, socket: str | None, thread: str | None, codex_bin: str, maildir: str | None, timeout: float, command: Sequence[str]) -> Door:  # fmt: skip
    """The door named on the command line, with its options checked."""
    if command and name != "exec":
        raise BadInput(f"a command after `--` goes with --door exec, not --door {name}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_CODE_")}
    if name == "stdout":
        return StdoutDoor()
    if name == "exec":
        if not command:
            raise BadInput("--door exec needs a command: paneboard listen --door exec -- CMD ARG…")
        return ExecDoor(command, {**env, **ctx.child_env()}, timeout)
    if name == "maildir":
        if not maildir:
            raise BadInput("--door maildir needs --maildir ROOT")
        return MaildirDoor(Path(maildir).absolute())
    if name == "claude-inbox":
        path = socket or os.environ.get("CLAUDE_CODE_MESSAGING_SOCKET")
        if not path:
            raise BadInput("--door claude-inbox needs --socket PATH or CLAUDE_CODE_MESSAGING_SOCKET")
        return ClaudeInboxDoor(Path(path), min(timeout, 10.0))
    thread = thread or os.environ.get("CODEX_THREAD_ID")
    if not thread:
        raise BadInput("--door codex-queue needs --thread ID or CODEX_THREAD_ID")
    return CodexQueueDoor(thread, codex_bin, env, timeout)


def run_listen(ctx: Context, door: Door, backoff: Sequence[float], parent_pid: int | None = None) -> None:
    anyio.run(run_listener, Listener(ctx, door, backoff, exe=executable()), parent_pid)


def _find(view: BoardView, ctx: Context, ref: str) -> PromptState:
    return view.state.prompts[match_ref(ctx, view.state.prompts, ref, "prompts")]


def _reached(ps: PromptState, until: str, now: float) -> bool:
    """True when every recipient is at *until*; raises `PromptClosed` if that cannot happen now."""
    wanted = ("acked", "answered") if until == "closed" else ("delivered", "acked", "answered")
    stages = [stage(ps, name, now) for name in ps.recipients]
    for s in stages:
        if s in ("cancelled", "expired"):
            raise PromptClosed(ps.prompt.id, s)
    return all(s in wanted for s in stages)


async def wait_for(ctx: Context, ref: str, until: str, limit: float | None) -> PromptState:
    """Block until prompt *ref* is *until* (``delivered`` or ``closed``) for every recipient."""
    with BoardView(ctx.store()) as view:
        view.refresh()
        ps = _find(view, ctx, ref)
        try:
            with anyio.fail_after(limit):
                while not _reached(ps, until, time.time()):
                    expires = ps.prompt.expires
                    with anyio.move_on_after(None if expires is None else max(0.0, expires - time.time())):
                        await view.wait_changed()
                    view.refresh()
        except TimeoutError:
            raise WaitTimedOut(ps.prompt.id, until, limit or 0) from None
        return ps


def print_outcome(ctx: Context, ps: PromptState) -> None:
    now = time.time()
    for name, r in ps.recipients.items():
        if ctx.json:
            emit({"prompt": ps.prompt.id, "recipient": name, "stage": stage(ps, name, now), "answer": r.answer})
        elif r.answer is not None:
            print(r.answer)


def run_wait(ctx: Context, ref: str, until: str, timeout: float | None) -> None:
    print_outcome(ctx, anyio.run(wait_for, ctx, ref, until, timeout))


def run_ask(ctx: Context, to: str, words: list[str], priority: str, timeout: float | None) -> None:
    from paneboard.listener.post import post_prompt, read_text

    fields = post_prompt(ctx, [to], read_text(words, "prompt body"), priority, None, None, None)
    print_outcome(ctx, anyio.run(wait_for, ctx, str(fields["id"]), "closed", timeout))


def run_follow(ctx: Context, kinds: Sequence[str] | None) -> None:
    async def follow() -> None:
        with BoardView(ctx.store()) as view, anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
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


def _remote_presences(ctx: Context) -> dict[str, presence.Presence]:
    get = getattr(ctx.store(), "presences", None)
    if get is None:
        return {}
    import msgspec

    out = {}
    for name, raw in get().items():
        try:
            out[name] = msgspec.json.decode(raw, type=presence.Presence)
        except msgspec.DecodeError:
            continue
    return out


def run_who(ctx: Context) -> None:
    agents: dict[str, None] = {}
    for _, post in ctx.store().read_all():
        agents[post.sender] = None
        for name in getattr(post, "to", ()):
            agents[name] = None
    if ctx.paths.panes.is_dir():
        for lock in sorted(ctx.paths.panes.glob("*.lock")):
            agents[lock.name[: -len(".lock")]] = None
    remote = _remote_presences(ctx)
    agents.update(dict.fromkeys(remote))
    for name in sorted(agents):
        pid = holder(ctx.paths.pane(name, "lock"))
        seen = presence.read(ctx.paths.pane(name, "presence"))
        if not pid and name in remote:  # a listener on another machine, seen within the presence TTL
            seen = remote[name]
            pid = seen.pid
        row = {
            "agent": name, "listening": pid is not None, "pid": pid if pid and pid > 0 else None,
            "door": seen.door if seen and pid else None, "last_delivery": seen.last_delivery if seen else None,
        }  # fmt: skip
        if ctx.json:
            emit(row)
        else:
            from paneboard.listener.board import clock

            state = f"listening  pid {row['pid']}  door {row['door']}" if pid else "no listener"
            last = f"  last delivery {clock(seen.last_delivery)}" if seen and seen.last_delivery else ""
            print(f"{name:<20} {state}{last}")
