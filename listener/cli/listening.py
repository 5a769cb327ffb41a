"""`listen`: the door named on the command line, and the listener run until a signal."""

from __future__ import annotations

import functools
import os
import sys
from argparse import Namespace
from collections.abc import Sequence
from pathlib import Path

import anyio

from paneboard.listener import codex
from paneboard.listener.codex import check_thread_id
from paneboard.listener.context import Context, executable
from paneboard.listener.doors import (
    ClaudeInboxDoor,
    CodexQueueDoor,
    Door,
    ExecDoor,
    MaildirDoor,
    OpenCodeDoor,
    StdoutDoor,
)
from paneboard.listener.doors.process import child_env
from paneboard.listener.listen import Listener, Settings, run_listener
from paneboard.listener.seen import DOOR_AGENTS, SOURCES, Sighting, find_rollout
from paneboard.protocol.errors import BadInput


def make_door(
    ctx: Context,
    name: str,
    *,
    socket: str | None,
    thread: str | None,
    codex_bin: str,
    maildir: str | None,
    timeout: float,
    command: Sequence[str],
) -> Door:
    """The door named on the command line, with its options checked."""
    if command and name != "exec":
        raise BadInput(f"a command after `--` goes with --door exec, not --door {name}")
    env = child_env(os.environ)
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
    if name == "opencode":
        if not socket:
            raise BadInput(
                "--door opencode needs --socket PATH (paneboard's OpenCode plugin passes it)"
            )
        return OpenCodeDoor(Path(socket), min(timeout, 10.0))
    if name == "claude-inbox":
        path = socket or os.environ.get("CLAUDE_CODE_MESSAGING_SOCKET")
        if not path:
            raise BadInput(
                "--door claude-inbox needs --socket PATH or CLAUDE_CODE_MESSAGING_SOCKET"
            )
        return ClaudeInboxDoor(Path(path), min(timeout, 10.0))
    thread = thread or os.environ.get("CODEX_THREAD_ID")
    if not thread:
        raise BadInput("--door codex-queue needs --thread ID or CODEX_THREAD_ID")
    return CodexQueueDoor(check_thread_id(thread), codex_bin, env, timeout)


def make_sighting(ctx: Context, door: Door, transcript: str | None) -> Sighting | None:
    """What `listen` follows to post `seen`: the agent's conversation file, if its door has one."""
    agent = DOOR_AGENTS.get(door.name)
    if agent is None:
        if transcript:
            raise BadInput(
                "--transcript goes with --door claude-inbox or codex-queue; "
                f"--door {door.name} has no conversation file to prove `seen` from"
            )
        return None
    mark = ctx.paths.pane(ctx.agent, "transcript")
    if transcript:
        return Sighting(mark, SOURCES[agent], Path(transcript).absolute())
    if isinstance(door, CodexQueueDoor):
        thread = door.codex_thread()
        found = find_rollout(thread.home, thread.id)
        return Sighting(mark, SOURCES[agent], found, rollouts=(thread.home, thread.id))
    return None


def run_listen(
    ctx: Context,
    door: Door,
    backoff: Sequence[float],
    parent_pid: int | None = None,
    until_unloaded: bool = False,
    seen: Sighting | None = None,
) -> None:
    settings = Settings(
        ctx.board,
        ctx.agent,
        ctx.home,
        ctx.store(reconnect=True),
        executable(),
        tuple(backoff),
        ctx.store_options(),
    )
    until = None
    if until_unloaded:
        if not isinstance(door, CodexQueueDoor):
            raise BadInput("--until-unloaded goes with --door codex-queue")
        until = functools.partial(codex.until_unloaded, door.codex_thread())
    anyio.run(run_listener, Listener(settings, door, seen=seen), parent_pid, until)


def listen_command(args: Namespace) -> None:
    from paneboard.listener.listen import DEFAULT_BACKOFF

    ctx = Context.from_args(args)
    door = make_door(
        ctx,
        args.door,
        socket=args.socket,
        thread=args.thread,
        codex_bin=args.codex_bin,
        maildir=args.maildir,
        timeout=args.door_timeout,
        command=args.command,
    )
    seen = make_sighting(ctx, door, args.transcript)
    if seen is None and door.name in DOOR_AGENTS:
        print(
            f"paneboard listen {ctx.agent}@{ctx.board}: no --transcript: prompts will show as "
            "delivered, never as seen",
            file=sys.stderr,
            flush=True,
        )
    backoff = DEFAULT_BACKOFF if args.backoff is None else args.backoff
    with ctx:
        run_listen(ctx, door, backoff, args.parent_pid, args.until_unloaded, seen)
