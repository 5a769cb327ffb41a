"""`paneboard spawn KIND --as NAME` and `paneboard stop NAME`: a new session of an agent with
paneboard's hooks, and its end through the agent's own stop.

spawn checks everything before it writes: the kind can be spawned, the name is free (no live
listener, no spawned session still running), the project is a folder, `--first` is a valid
body, and the project's hooks, if it has paneboard's already, act as NAME on this home and
board (hooks acting for another name are the person's and are left alone: spawn refuses).
Then it installs the hooks as `hook install KIND --as NAME --home … --board …` does, starts the
session through the agent (`Agent.spawn`), keeps its record (`state/panes/spawned.py`), and waits
until the session's listener holds NAME's pane. A spawn that fails puts the project's files
back as they were and ends a session it started.

`--first TEXT` is posted to NAME as a prompt from the caller once the listener holds the pane,
not given to the agent as its first turn: so it has an id, goes through the door like any
prompt, gets its `delivered` and `seen` receipts, carries the command that answers it, and
`paneboard wait ID` ends with the answer.
"""

from __future__ import annotations

import os
import sys
import time
from argparse import Namespace
from pathlib import Path

import msgspec

from paneboard.agents import Agent, Change, Setup, Spawned, SpawnRequest, by_kind
from paneboard.agents.hookfile import acting_for, write_project_file
from paneboard.agents.spawning import hooks_acting
from paneboard.board.context import Context, executable, login_name
from paneboard.board.post import PromptRequest, append
from paneboard.cli.hooks import project_folder
from paneboard.cli.posting import read_text
from paneboard.protocol.errors import BadInput, PaneLocked
from paneboard.protocol.names import check_body, check_name, to_name
from paneboard.state.files import read_private, refuse_links
from paneboard.state.panes import spawned
from paneboard.state.panes.lock import holder
from paneboard.state.paths import PaneFiles
from paneboard.state.proc import alive
from paneboard.state.stores import refuse_secret

GONE_WITHIN = 15.0  # seconds `stop` waits for the session's process and listener to end


class SpawnReport(msgspec.Struct, frozen=True):
    """What `spawn --json` prints."""

    agent: str
    kind: str
    session: str
    attach: str
    listener: int
    pid: int | None = None
    first: str | None = None  # the first prompt's id


class StopReport(msgspec.Struct, frozen=True):
    """What `stop --json` prints."""

    agent: str
    kind: str
    session: str
    said: str
    listener: int | None = None  # the listener still holding the pane (asleep), if one does


def spawn_command(args: Namespace) -> None:
    if not args.agent:
        raise BadInput(f"say the new agent's name: paneboard spawn {args.kind} --as NAME")
    agent = by_kind(args.kind)
    if type(agent).spawn is Agent.spawn:
        kinds = ", ".join(a.kind for a in _spawnable())
        raise BadInput(f"{agent.title} cannot be spawned (spawn takes {kinds})")
    refuse_secret(args.store)  # the hooks would carry it in plain text
    first = (
        None if args.first is None else check_body("--first", read_text([args.first], "--first"))
    )
    with Context.from_args(args) as ctx:
        pane = ctx.paths.pane(ctx.agent)
        _refuse_taken(ctx, pane)
        sender = ctx.acting_as(check_name("agent", _caller()))
        setup = _setup(ctx, agent, project_folder(args.project))
        _refuse_other_hooks(agent, setup, ctx.agent)
        changes, started = _start(ctx, agent, setup, pane, args.timeout)
        prompt = None if first is None else append(sender, PromptRequest([ctx.agent], first)).id
    listener = holder(pane.lock) or 0
    report = SpawnReport(
        ctx.agent, agent.kind, started.session, started.attach, listener, started.pid, prompt
    )
    _print_spawned(args.json, changes, report, agent)


def stop_command(args: Namespace) -> None:
    if not args.name:
        raise BadInput("say which agent: paneboard stop NAME")
    with Context.from_args(args, agent=args.name) as ctx:
        pane = ctx.paths.pane(check_name("agent", args.name))
        record = spawned.read(pane.spawned)
        if record is None:
            raise BadInput(
                f"board `{ctx.board}`: no session of `{ctx.agent}` that paneboard spawned or woke"
                f" (paneboard spawn KIND --as {ctx.agent} starts one)"
            )
        agent = by_kind(record.kind)
        try:
            said = agent.stop_session(record.session, os.environ)
        except BadInput as exc:
            if record.pid is None or alive(record.pid, zombie=False):
                raise
            spawned.remove(pane.spawned)  # its process has ended: the record points nowhere
            raise BadInput(f"{exc}; the session's process {record.pid} had ended") from None
        spawned.remove(pane.spawned)
        left = _wait_gone(record.pid, pane)
    report = StopReport(ctx.agent, agent.kind, record.session, said, left)
    if args.json:
        from paneboard.cli.show import emit

        emit(report)
        return
    after = "its listener has ended" if left is None else f"its listener pid {left} keeps the pane"
    print(f"stopped `{report.agent}` ({agent.title} session {record.session}): {said}; {after}")


def _spawnable() -> list[Agent]:
    from paneboard.agents import AGENTS

    return [a for a in AGENTS.values() if type(a).spawn is not Agent.spawn]


def _caller() -> str:
    """Who posts `--first`: the caller as `post` without `--as` names it."""
    return os.environ.get("PANEBOARD_AGENT") or to_name(login_name())


def _refuse_taken(ctx: Context, pane: PaneFiles) -> None:
    """`PaneLocked` for a name a live listener holds; `BadInput` for one whose spawned
    session still runs."""
    pid = holder(pane.lock)
    if pid:
        raise PaneLocked(ctx.board, ctx.agent, pid if pid > 0 else None)
    record = spawned.read(pane.spawned)
    if record is not None and record.pid and alive(record.pid, zombie=False):
        raise BadInput(
            f"board `{ctx.board}`: `{ctx.agent}` is a spawned {record.kind} session still running"
            f" (pid {record.pid}): paneboard stop {ctx.agent}"
        )


def _setup(ctx: Context, agent: Agent, project: Path) -> Setup:
    """The install `hook install KIND --as NAME --home HOME --board BOARD [--store …]` makes:
    the name, home and board are written into the hooks, since an agent's background sessions
    may not run in this command's environment (Claude Code's run under a daemon, started with
    the environment of whichever `claude --bg` came first)."""
    options = (
        ("--as", ctx.agent),
        ("--home", str(ctx.home)),
        ("--board", ctx.board),
        *ctx.store_options(),
    )
    return Setup(project, executable(), agent.check_mode(None), options, env=os.environ)


def _refuse_other_hooks(agent: Agent, setup: Setup, name: str) -> None:
    """`BadInput` where the project has paneboard's hooks already, acting for someone else
    (another name, home, board or store) or with no listener: the person's, left alone."""
    files = agent.files(setup, "install")
    for path in files:
        refuse_links(path, setup.project)  # a cloned repository may plant one: refuse first
    there = hooks_acting(agent, setup.project)
    if there is None:
        return
    wanted = dict(setup.options)
    mode = there.get("--mode", agent.default_mode)
    where = ("--as", "--home", "--board", "--store")
    if mode != "stop" and all(there.get(flag) == wanted.get(flag) for flag in where):
        return
    how = "start no listener (--mode stop)" if mode == "stop" else f"act for {acting_for(there)}"
    raise BadInput(
        f"{files[0]} has paneboard's hooks, which {how}, not as `{name}` on board"
        f" `{wanted['--board']}` of {wanted['--home']}: leave them, or run `paneboard hook"
        f" uninstall {agent.kind} --project {setup.project}` first; nothing written"
    )


def _start(
    ctx: Context, agent: Agent, setup: Setup, pane: PaneFiles, timeout: float
) -> tuple[list[Change], Spawned]:
    """Install the hooks, start the session and wait for its listener; on any failure (an
    interrupt too), the project's files as they were and the session ended."""
    before = _Before(agent.files(setup, "install"), setup.project)
    changes = agent.install(setup)  # says so, and changes nothing, where they are in already
    if not any(change.changed for change in changes):
        before = _Before([], setup.project)  # nothing to put back
    # The name is in the hooks; an agent's daemon (Claude Code's) keeps the environment it was
    # started with for every later background session, where PANEBOARD_AGENT would be wrong.
    env = {k: v for k, v in os.environ.items() if k != "PANEBOARD_AGENT"}
    try:
        # no first turn: --first goes through the board
        started = agent.spawn(SpawnRequest(ctx.agent, setup.project, env, ctx.home))
    except BaseException:
        before.restore()
        raise
    try:
        ctx.paths.ensure()
        record = spawned.record(agent.kind, started.session, started.attach, started.pid)
        spawned.write(pane.spawned, record)
        _wait_listener(agent, started, pane, timeout)
    except BaseException as exc:
        said = _stop_quietly(agent, started)
        spawned.remove(pane.spawned)
        before.restore()
        if isinstance(exc, _NoListener):
            raise BadInput(f"{exc}; {said}") from None
        raise
    return changes, started


class _NoListener(Exception):
    """The session started, and no listener held its pane."""


def _wait_listener(agent: Agent, started: Spawned, pane: PaneFiles, timeout: float) -> None:
    """Until a listener holds *pane*. The wait is a poll of the lock every 0.1 s: a command
    waiting once for a start that takes seconds, not a listener waiting on the board."""
    deadline = time.monotonic() + timeout
    while not holder(pane.lock):
        ended = started.pid is not None and not alive(started.pid, zombie=False)
        if ended or time.monotonic() > deadline:
            what = (
                f"the {agent.title} session ended (pid {started.pid})"
                if ended
                else f"no listener held the pane within {timeout:g} s"
            )
            raise _NoListener(
                f"spawned {agent.title} session {started.session}, but {what}: its session-start"
                f" hook started no listener (see {pane.log})"
            )
        time.sleep(0.1)


def _stop_quietly(agent: Agent, started: Spawned) -> str:
    try:
        return f"stopped it: {agent.stop_session(started.session, os.environ)}"
    except BadInput as exc:
        return f"stopping it failed: {exc}"


def _wait_gone(pid: int | None, pane: PaneFiles) -> int | None:
    """Wait for the session's process, then its listener, to end (each within GONE_WITHIN s);
    the listener still holding the pane after that (one that sleeps through the session's end
    to wake it again), if any."""
    deadline = time.monotonic() + GONE_WITHIN
    while pid is not None and alive(pid, zombie=False) and time.monotonic() < deadline:
        time.sleep(0.05)
    deadline = time.monotonic() + GONE_WITHIN
    while (left := holder(pane.lock)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left or None


class _Before:
    """The project's files a spawn may write, as they were before it, to put back."""

    def __init__(self, files: list[Path], project: Path) -> None:
        self.project = project
        # a file that is there but not regular (read_private gives None) is never touched
        self.files = {path: read_private(path) for path in files}
        self.new = [path for path in files if not os.path.lexists(path)]
        self.missing = [
            folder
            for path in files
            for folder in [*reversed(path.relative_to(project).parents)][1:]
            if not os.path.lexists(project / folder)
        ]

    def restore(self) -> None:
        for path, data in self.files.items():
            if path in self.new:
                path.unlink(missing_ok=True)
            elif data is not None:
                write_project_file(path, data, self.project)
        for folder in sorted(set(self.missing), key=lambda f: -len(f.parts)):
            try:
                (self.project / folder).rmdir()
            except OSError:
                continue  # not empty, or not there


def _print_spawned(as_json: bool, changes: list[Change], report: SpawnReport, agent: Agent) -> None:
    if as_json:
        from paneboard.cli.show import emit

        emit(report)
        return
    for change in changes:
        print(change)
    pid = f", pid {report.pid}" if report.pid else ""
    print(
        f"spawned `{report.agent}`: {agent.title} session {report.session}{pid};"
        f" listener pid {report.listener} holds its pane"
    )
    print(f"attach: {report.attach}")
    print(f"stop: paneboard stop {report.agent}")
    if report.first:
        print(
            f"first prompt {report.first} posted; paneboard wait {report.first} prints the answer"
        )
    sys.stdout.flush()
