"""`listen`: the door named on the command line, and the listener run until a signal."""

from __future__ import annotations

import os
import sys
import time
from argparse import Namespace
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path

import anyio

from paneboard.agents import DoorRequest, WakeRequest, by_door, door_options, seeing_doors
from paneboard.agents.base import DoorValue
from paneboard.board.context import Context, executable
from paneboard.listener.doors import Door, ExecDoor, MaildirDoor, StdoutDoor
from paneboard.listener.doors.process import child_env
from paneboard.listener.listen import Listener, Settings, run_listener
from paneboard.listener.seen import Sighting
from paneboard.listener.sleep import Sleeper, WakeDoor
from paneboard.protocol.errors import BadInput
from paneboard.state.trust.policy import read_policy


def door_values(args: Namespace) -> dict[str, DoorValue]:
    """The agents' door options `listen` was given (or defaults to), by flag: those the
    parser made from the records (a flag the listener has for every door is not one)."""
    # argparse's own name for a long option's value (`ListenOption.dest`)
    return {flag: getattr(args, flag[2:].replace("-", "_")) for flag in args.door_flags}


def make_door(
    ctx: Context,
    name: str,
    *,
    options: Mapping[str, DoorValue],
    maildir: str | None,
    timeout: float,
    command: Sequence[str],
    pid: int | None = None,
    transcript: str | None = None,
) -> Door:
    """The door named on the command line, with its options checked."""
    if command and name != "exec":
        raise BadInput(f"a command after `--` goes with --door exec, not --door {name}")
    _check_door_options(name, options)
    env = child_env(os.environ)
    agent = by_door(name)
    if agent is not None:
        request = DoorRequest(
            timeout, os.environ, Path.cwd(), dict(options), transcript, pid, ctx.home
        )
        return agent.open_door(request)
    if name == "exec":
        if not command:
            raise BadInput("--door exec needs a command: paneboard listen --door exec -- CMD ARG…")
        return ExecDoor(command, {**env, **ctx.child_env()}, timeout)
    if name == "maildir":
        if not maildir:
            raise BadInput("--door maildir needs --maildir ROOT")
        return MaildirDoor(Path(maildir).absolute())
    if name == "stdout":
        return StdoutDoor()
    raise BadInput(f"no door `{name}`")


def _check_door_options(name: str, options: Mapping[str, DoorValue]) -> None:
    """Refuse an agent's door option given with a door that does not take it."""
    agent = by_door(name)
    mine = {option.flag for option in agent.listen_options} if agent is not None else set()
    for flag, value in options.items():
        if flag in mine or value in (None, False):
            continue
        declared = door_options()  # every record: only for an option not of this door
        doors = [door for door, _ in declared[flag]]
        if value != declared[flag][0][1].default:
            raise BadInput(f"{flag} goes with --door {' or '.join(doors)}, not --door {name}")


def make_sighting(ctx: Context, door: Door, transcript: str | None) -> Sighting | None:
    """What `listen` follows to post `seen`: the agent's conversation file, if its door has one."""
    agent = by_door(door.name)
    if agent is None or agent.seen_source is None:
        if transcript:
            raise BadInput(
                f"--transcript goes with --door {' or '.join(seeing_doors())}; "
                f"--door {door.name} has no conversation file to prove `seen` from"
            )
        return None
    if transcript and os.path.isdir(transcript):
        raise BadInput(f"--transcript {transcript} is a folder: give the conversation file")
    mark = ctx.paths.pane(ctx.agent).mark
    return agent.sighting(mark, door, Path(transcript).absolute() if transcript else None)


def make_sleeper(
    ctx: Context, door: Door, session: str | None, transcript: str | None, timeout: float
) -> Sleeper | None:
    """What lets the listener outlive its session (`--wake resume`): *door* beside the agent's
    resume door for *session*; None where the agent has none, or no session is known."""
    agent = by_door(door.name)
    if agent is None or session is None:
        return None
    seen_in = str(Path(transcript).absolute()) if transcript else None
    request = WakeRequest(session, Path.cwd(), os.environ, ctx.home, timeout, seen_in)
    wake = agent.wake_door(request)
    if wake is None:
        return None
    files = ctx.paths.pane(ctx.agent)
    policy = partial(read_policy, ctx.paths.dir, ctx.agent)
    return Sleeper(WakeDoor(door, wake, session, files, policy, time.time))


def session_of(args: Namespace) -> str | None:
    """The agent's own session id: `--session`, else what its record reads from the door's
    options and conversation file (Claude Code names the file after the session)."""
    if args.session:
        return str(args.session)
    agent = by_door(args.door)
    if agent is None:
        return None
    request = DoorRequest(
        args.door_timeout,
        os.environ,
        Path.cwd(),
        door_values(args),
        args.transcript,
        pid=args.parent_pid,
    )
    return agent.wake_session(request)


def run_listen(
    ctx: Context,
    door: Door,
    backoff: Sequence[float],
    parent_pid: int | None = None,
    seen: Sighting | None = None,
    transcript: str | None = None,
    sleeper: Sleeper | None = None,
    coalesce: bool = True,
) -> None:
    settings = Settings(
        ctx.board,
        ctx.agent,
        ctx.home,
        ctx.store(reconnect=True),
        executable(),
        tuple(backoff),
        ctx.store_options(),
        coalesce=coalesce,
    )
    agent = by_door(door.name)
    until = None if agent is None else agent.until_session_over(door)
    listener = Listener(
        settings,
        door if sleeper is None else sleeper.door,
        seen=seen,
        parent=parent_pid,
        transcript=transcript,
    )
    anyio.run(run_listener, listener, parent_pid, until, sleeper)


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
        options=door_values(args),
        maildir=args.maildir,
        timeout=args.door_timeout,
        command=args.command,
        pid=args.parent_pid,
        transcript=args.transcript,
    )
    seen = make_sighting(ctx, door, args.transcript)
    agent = by_door(door.name)
    if seen is None and agent is not None and agent.seen_source is not None:
        print(
            f"paneboard listen {ctx.agent}@{ctx.board}: no --transcript: prompts will show as "
            f"delivered, never as seen{agent.no_transcript}",
            file=sys.stderr,
            flush=True,
        )
    backoff = DEFAULT_BACKOFF if args.backoff is None else args.backoff
    sleeper = make_sleeper(ctx, door, session_of(args), args.transcript, args.door_timeout)
    with ctx:
        run_listen(
            ctx,
            door,
            backoff,
            args.parent_pid,
            seen,
            args.transcript,
            sleeper,
            coalesce=not args.one_per_text,
        )
