"""`listen`: the door named on the command line, and the listener run until a signal."""

from __future__ import annotations

import functools
import os
import sys
from argparse import Namespace
from collections.abc import Sequence
from pathlib import Path

import anyio

from paneboard.board.context import Context, executable
from paneboard.listener import codex
from paneboard.listener.codex import check_thread_id
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
from paneboard.listener.doors.qwen import qwen_door
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
    pid: int | None = None,
    transcript: str | None = None,
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
    if name == "qwen-inbox":
        return qwen_door(pid, env, min(timeout, 10.0))
    if name == "claude-inbox":
        path = socket or os.environ.get("CLAUDE_CODE_MESSAGING_SOCKET")
        if not path:
            raise BadInput(
                "--door claude-inbox needs --socket PATH or CLAUDE_CODE_MESSAGING_SOCKET"
            )
        # The session's hooks run in its project folder, and so does a listener they start.
        seen_in = Path(transcript).absolute() if transcript else None
        return ClaudeInboxDoor(Path(path), min(timeout, 10.0), seen_in, Path.cwd())
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
    if transcript and os.path.isdir(transcript):
        raise BadInput(f"--transcript {transcript} is a folder: give the conversation file")
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


def _utf8_home(ctx: Context) -> None:
    """Refuse a home the composed commands cannot name: every text the listener composes
    names it in the commands that close a prompt, each on one line, and a door carries UTF-8."""
    from paneboard.protocol.visible import one_line

    home = str(ctx.home)
    if one_line(home) == home:
        return
    try:
        home.encode()
    except UnicodeEncodeError:
        problem = "is not a UTF-8 path"
    else:
        problem = "holds a control or format character"
    raise BadInput(
        f"home {one_line(home)} {problem}: the commands a prompt's text gives could not "
        "name it; use another --home"
    )


def listen_command(args: Namespace) -> None:
    from paneboard.listener.listen import DEFAULT_BACKOFF

    ctx = Context.from_args(args)
    _utf8_home(ctx)
    door = make_door(
        ctx,
        args.door,
        socket=args.socket,
        thread=args.thread,
        codex_bin=args.codex_bin,
        maildir=args.maildir,
        timeout=args.door_timeout,
        command=args.command,
        pid=args.parent_pid,
        transcript=args.transcript,
    )
    seen = make_sighting(ctx, door, args.transcript)
    if seen is None and door.name in DOOR_AGENTS:
        print(
            f"paneboard listen {ctx.agent}@{ctx.board}: no --transcript: prompts will show as "
            "delivered, never as seen"
            + (
                " (delivered: the line was written; Claude Code's admission is not checked)"
                if door.name == "claude-inbox"
                else ""
            ),
            file=sys.stderr,
            flush=True,
        )
    backoff = DEFAULT_BACKOFF if args.backoff is None else args.backoff
    with ctx:
        run_listen(ctx, door, backoff, args.parent_pid, args.until_unloaded, seen)
