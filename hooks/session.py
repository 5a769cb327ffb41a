"""The session hooks an agent runs: the hook's input, the agent's name, session start and end.

session-start starts a detached listener for the session (in the listen modes) and returns
the context line the agent is told; session-end stops that listener. Neither blocks the
agent for long.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from paneboard.agents import Agent
from paneboard.board.context import Context, executable
from paneboard.listener.doors.process import WOKEN_ENV, child_env
from paneboard.listener.sleep import asleep_holder
from paneboard.protocol.errors import BadInput, BoardIOError
from paneboard.protocol.names import to_name
from paneboard.state import proc
from paneboard.state.panes import presence
from paneboard.state.panes.lock import holder
from paneboard.state.trust.policy import read_policy


def read_hook_input() -> dict[str, Any]:
    """The hook's JSON from stdin ({} when there is none)."""
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    raw = sys.stdin.read()
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BadInput(f"the hook's input is not JSON: {exc.msg}") from None
    return data if isinstance(data, dict) else {}


def agent_name(explicit: str | None, kind: str, cwd: str) -> tuple[str, bool]:
    """--as, else PANEBOARD_AGENT, else `<project folder>-<kind>`; and whether it was derived."""
    if explicit:
        return explicit, False
    if os.environ.get("PANEBOARD_AGENT"):
        return os.environ["PANEBOARD_AGENT"], False
    return to_name(f"{Path(cwd).name}-{kind}"), True


def agent_pid(agent: Agent) -> int:
    """The process of *agent* this hook runs under (the first ancestor that is not a shell,
    `node` running its CLI counted as not one)."""
    return proc.agent_pid(agent.cli_argv_suffixes)


def context_line(ctx: Context, exe: str, how: str) -> str:
    """What the agent is told at session start: who it is, and the whole `post` command, every
    value quoted for its shell (a home may hold a space, or `$(…)`)."""
    from paneboard.protocol.compose import where_options
    from paneboard.protocol.visible import one_line

    where = where_options(
        home=str(ctx.home), board=ctx.board, agent=ctx.agent, store=ctx.store_options()
    )
    post = one_line(f"{shlex.quote(exe)} post {where} --to NAME -- 'TEXT'")
    return (
        f"paneboard: you are `{ctx.agent}` on board `{ctx.board}` ({how}). "
        f"Post work to another agent with `{post}`; "
        "prompts for you arrive as `[paneboard] prompt …` messages: "
        "close each with the ack or answer command it gives."
    )


def session_start(
    ctx: Context, agent: Agent, mode: str, derived: bool, data: dict[str, Any]
) -> str:
    """Start this session's listener (listen and both modes); return the hook's output."""
    exe = executable()
    how = "prompts arrive at your turn's end" if mode == "stop" else "prompts arrive as messages"
    if mode != "stop":
        how = _start_listener(ctx, agent, exe, data)
    text = context_line(ctx, exe, how) + (
        " (name derived from the project folder; set PANEBOARD_AGENT to choose)" if derived else ""
    )
    return agent.context(text)


def _start_listener(ctx: Context, agent: Agent, exe: str, data: dict[str, Any]) -> str:
    woken = os.environ.get(WOKEN_ENV)
    if woken:
        # A headless turn a wake started: it has no door of its own (`codex queue` does not
        # reach `codex exec`; `qwen --resume -o …` has no inbox). The asleep listener keeps the
        # pane, and falls asleep again once the turn's process has ended.
        return f"a woken turn of session {woken}: its asleep listener keeps the pane"
    ctx.paths.ensure()
    transcript = agent.transcript(data)  # followed by the listener to post `seen`
    held = holder(ctx.paths.pane(ctx.agent).lock)
    # An asleep listener (its session ended) is taken over by the one started here.
    taken_over = held and _asleep(ctx, held)
    if held and not taken_over and not _stopped_for_new_transcript(ctx, agent, held, transcript):
        return f"a listener (pid {held}) already holds this pane"
    try:
        door, extra = agent.listen_args(data, os.environ, agent_pid(agent))
    except BadInput as exc:
        return f"{exc}: no listener started"
    env = {**child_env(os.environ), **extra, **ctx.child_env()}
    argv = [exe, "listen", *door] + (["--transcript", transcript] if transcript else [])
    # Handed to the child, and closed here once it has started.
    log = open(ctx.paths.pane(ctx.agent).log, "ab")  # noqa: SIM115
    with log:
        child = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
    return f"listener pid {child.pid} hands prompts to this session"


def _asleep(ctx: Context, held: int) -> bool:
    """Whether listener *held* is asleep: its presence says so, or the agent process it was
    started for has ended (it outlives it only when asleep)."""
    if asleep_holder(ctx.paths.pane(ctx.agent)) == held:
        return True
    record = presence.read(ctx.paths.pane(ctx.agent).presence)
    parent = None if record is None or record.pid != held else record.parent
    return parent is not None and not proc.alive(parent, zombie=False)


def _stopped_for_new_transcript(
    ctx: Context, agent: Agent, held: int, transcript: str | None
) -> bool:
    """Stop the pane's listener if it serves this agent process but an older transcript.

    Claude Code's `/clear` starts a new conversation file in the same process, and runs
    SessionStart again with it; a listener of another process is left alone, and so is one
    whose presence record does not say (an earlier version's: it stops with its process).
    """
    record = _presence_of(ctx, held)
    if record is None or record.parent is None:
        return False
    ours = record.parent == agent_pid(agent)
    if not (transcript and held > 0 and ours and record.transcript != transcript):
        return False
    stop_listener(ctx)
    return not holder(ctx.paths.pane(ctx.agent).lock)


def _presence_of(ctx: Context, held: int) -> presence.Presence | None:
    """The presence record of listener *held*, which writes it once it has read the board: a
    listener started a moment ago is given 2 s."""
    files = ctx.paths.pane(ctx.agent)
    deadline = time.monotonic() + 2
    while (record := presence.read(files.presence)) is None or record.pid != held:
        if time.monotonic() > deadline or holder(files.lock) != held:
            return None
        time.sleep(0.05)
    return record


def revive(ctx: Context, agent: Agent, data: dict[str, Any]) -> str | None:
    """At a turn's end: start the session's listener again where none holds the pane (it died:
    killed, crashed, out of memory). One probe of the lock, which starts nothing while a
    listener lives; returns what was done, or None."""
    if holder(ctx.paths.pane(ctx.agent).lock) is not None:
        return None
    return _start_listener(ctx, agent, executable(), data)


def session_end(ctx: Context) -> None:
    """The session ended: stop this pane's listener, unless the agent's policy says `--wake
    resume` (the listener then falls asleep as the agent's process ends: listener/sleep.py)."""
    try:
        if read_policy(ctx.paths.dir, ctx.agent).wake == "resume":
            return
    except BoardIOError:
        pass  # a policy that cannot be read wakes nothing: stop it
    stop_listener(ctx)


def stop_listener(ctx: Context) -> None:
    """Stop this pane's listener, if one runs."""
    pid = holder(ctx.paths.pane(ctx.agent).lock)
    if pid and pid > 0:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and holder(ctx.paths.pane(ctx.agent).lock):
            time.sleep(0.05)
