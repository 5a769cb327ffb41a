"""The hooks an agent runs: session-start, session-end, and the Stop-hook door.

Each reads the hook's JSON on stdin and answers in the agent's hook format. None of
them ever blocks the agent for long: session-start starts a detached listener and
returns; stop takes the pane lock without waiting and stays silent if a listener
holds it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from paneboard.board.context import Context, executable, header
from paneboard.hooks.agents import STOP_AGENTS
from paneboard.listener import codex
from paneboard.listener.doors.process import child_env
from paneboard.listener.seen import SOURCES, Sighting, due, receipt
from paneboard.board.view import BoardView
from paneboard.protocol.compose import compose
from paneboard.protocol.errors import BadInput, PaneLocked
from paneboard.protocol.names import to_name
from paneboard.protocol.posts import Delivered, Prompt, delivered_key
from paneboard.protocol.words import STOP_HOOK_DOOR
from paneboard.state import checkpoint
from paneboard.state.delivered import DeliveredKeys
from paneboard.state.files import read_private, write_atomic
from paneboard.state.fold import BoardState, open_for, prune
from paneboard.state.panelock import holder, take_pane_lock

REASON_LIMIT = 64 * 1024
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "fish", "ksh", "env", "timeout", "node"})


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


def agent_name(explicit: str | None, agent: str, cwd: str) -> tuple[str, bool]:
    """--as, else PANEBOARD_AGENT, else `<project folder>-<agent type>`; and whether it was
    derived."""
    if explicit:
        return explicit, False
    if os.environ.get("PANEBOARD_AGENT"):
        return os.environ["PANEBOARD_AGENT"], False
    return to_name(f"{Path(cwd).name}-{agent}"), True


def agent_pid(start: int | None = None) -> int:
    """The agent process: the first ancestor that is not a shell (hooks run under `sh -c`)."""
    pid = os.getppid() if start is None else start
    for _ in range(8):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return pid
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        if name not in SHELLS or (name == "node" and _is_agent_cli(pid)):
            return pid
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return pid


def _is_agent_cli(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(part.endswith((b"/claude", b"/codex", b"cli.js")) for part in cmdline[:3])


def context_line(ctx: Context, exe: str, how: str) -> str:
    """What the agent is told at session start: who it is, and the whole `post` command, every
    value quoted for its shell (a home may hold a space, or `$(…)`)."""
    import shlex

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


def session_start(ctx: Context, agent: str, mode: str, derived: bool, data: dict[str, Any]) -> str:
    """Start this session's listener (listen and both modes); return the hook's output."""
    exe = executable()
    how = "prompts arrive at your turn's end" if mode == "stop" else "prompts arrive as messages"
    if mode != "stop":
        how = _start_listener(ctx, agent, exe, data)
    text = context_line(ctx, exe, how) + (
        " (name derived from the project folder; set PANEBOARD_AGENT to choose)" if derived else ""
    )
    if agent in STOP_AGENTS:
        return STOP_AGENTS[agent].context(text)
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    )


def _start_listener(ctx: Context, agent: str, exe: str, data: dict[str, Any]) -> str:
    ctx.paths.ensure()
    transcript = data.get("transcript_path")  # followed by the listener to post `seen`
    transcript = transcript if isinstance(transcript, str) and transcript else None
    held = holder(ctx.paths.pane(ctx.agent, "lock"))
    if held and not _stopped_for_new_transcript(ctx, held, transcript):
        return f"a listener (pid {held}) already holds this pane"
    env = child_env(os.environ)
    if agent == "claude":
        socket = os.environ.get("CLAUDE_CODE_MESSAGING_SOCKET")
        if not socket:
            return "no CLAUDE_CODE_MESSAGING_SOCKET in this session: no listener started"
        door = ["--door", "claude-inbox", "--socket", socket, "--parent-pid", str(agent_pid())]
    elif agent == "opencode":
        socket = os.environ.get("PANEBOARD_OPENCODE_SOCKET")
        if not socket:
            return "no PANEBOARD_OPENCODE_SOCKET from the plugin: no listener started"
        door = ["--door", "opencode", "--socket", socket, "--parent-pid", str(agent_pid())]
    else:
        try:
            door = codex.listen_args(data, env, agent_pid())
        except BadInput as exc:
            return f"{exc}: no listener started"
    env.update(ctx.child_env())
    argv = [exe, "listen", *door] + (["--transcript", transcript] if transcript else [])
    # Handed to the child, and closed here once it has started.
    log = open(ctx.paths.pane(ctx.agent, "log"), "ab")  # noqa: SIM115
    with log:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
    return f"listener pid {proc.pid} hands prompts to this session"


def _stopped_for_new_transcript(ctx: Context, held: int, transcript: str | None) -> bool:
    """Stop the pane's listener if it serves this agent process but an older transcript.

    Claude Code's `/clear` starts a new conversation file in the same process, and runs
    SessionStart again with it; a listener of another process is left alone.
    """
    try:
        argv = Path(f"/proc/{held}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return False
    ours = _option(argv, "--parent-pid") == str(agent_pid())
    if not (transcript and held > 0 and ours and _option(argv, "--transcript") != transcript):
        return False
    session_end(ctx)
    return not holder(ctx.paths.pane(ctx.agent, "lock"))


def _option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv[:-1] else None


def session_end(ctx: Context) -> None:
    """Stop this pane's listener, if one runs."""
    pid = holder(ctx.paths.pane(ctx.agent, "lock"))
    if pid and pid > 0:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and holder(ctx.paths.pane(ctx.agent, "lock")):
            time.sleep(0.05)


def stop(
    ctx: Context,
    agent: str,
    cooldown: float,
    out: TextIO,
    transcript: str | None = None,
) -> None:
    """The Stop-hook door: write the open, undelivered prompts as a block reason, or nothing.

    Claude Code takes no output as "go ahead and stop"; Codex wants ``{"continue": true}``.
    With *transcript* (the hook input's ``transcript_path``) it first posts `seen` for the
    prompts delivered earlier that the agent's conversation now shows as a user turn (the
    block reason it returned, run as the next turn).
    """
    limit = STOP_AGENTS[agent].per_stop if agent in STOP_AGENTS else None
    if ctx.store().has_posts() and _deliver_at_stop(ctx, agent, cooldown, out, limit, transcript):
        return
    if agent == "codex":
        out.write(json.dumps({"continue": True}) + "\n")
    elif agent in STOP_AGENTS and STOP_AGENTS[agent].idle_reply:
        out.write(STOP_AGENTS[agent].idle_reply + "\n")


def _deliver_at_stop(
    ctx: Context,
    agent: str,
    cooldown: float,
    out: TextIO,
    limit: int | None,
    transcript: str | None,
) -> bool:
    ctx.paths.ensure()  # the pane's lock and keys are local, whatever the store
    try:
        lock = take_pane_lock(ctx.paths.pane(ctx.agent, "lock"), ctx.board, ctx.agent)
    except PaneLocked:
        return False  # a live listener delivers for this pane
    try:
        keys = DeliveredKeys(ctx.paths.pane(ctx.agent, "delivered"))
        state = _note_seen(ctx, agent, Path(transcript), keys) if transcript else None
        if _cooling_down(ctx, cooldown):
            return False
        state = _agent_state(ctx) if state is None else state
        chosen, texts = _take(ctx, state, keys, limit)
        if not chosen:
            return False
        intro = (
            f"paneboard: {len(chosen)} prompt(s) for you, `{ctx.agent}`, "
            f"arrived on board `{ctx.board}`; handle them now."
        )
        out.write(json.dumps({"decision": "block", "reason": "\n\n".join([intro, *texts])}) + "\n")
        out.flush()  # handed over: now record it (a crash here costs a duplicate, never a loss)
        for prompt in chosen:
            keys.record(delivered_key(prompt.board, prompt.sender, prompt.id))
        ctx.store().append(
            [
                Delivered(**header(ctx.board, ctx.agent), prompt=p.id, door=STOP_HOOK_DOOR)
                for p in chosen
            ]
        )
        checkpoint.save(
            ctx.paths.pane(ctx.agent, "checkpoint"), ctx.store(), prune(state, time.time())
        )
        return True
    finally:
        lock.release()


def _note_seen(
    ctx: Context,
    agent: str,
    transcript: Path,
    keys: DeliveredKeys,
) -> BoardState | None:
    """Post `seen` for delivered prompts that *transcript* shows since the pane's mark.

    Returns the agent's state when it had to be read (only when a prompt id turned up).
    """
    source = SOURCES.get(agent, f"{agent}-transcript")
    sighting = Sighting(ctx.paths.pane(ctx.agent, "transcript"), source, transcript.absolute())
    try:
        ids = sighting.read_new()
        if not ids:
            return None
        state = _agent_state(ctx)
        ready, _ = due(state, ctx.agent, ids, lambda p: _key(p) in keys, time.time())
        posts = [receipt(ps, ctx.agent, "stop-hook", source) for ps in ready]
        if posts:
            ctx.store().append(posts)  # folded by the next reader: they follow state.position
        return state
    finally:
        sighting.close()


def _key(prompt: Prompt) -> str:
    return delivered_key(prompt.board, prompt.sender, prompt.id)


def _cooling_down(ctx: Context, cooldown: float) -> bool:
    """True if the last check was less than *cooldown* seconds ago; records this check otherwise."""
    stamp = ctx.paths.pane(ctx.agent, "stopcheck")
    now = time.time()
    try:
        last = float(read_private(stamp, 64) or b"0")
    except (OSError, ValueError):
        last = 0.0
    if cooldown and now - last < cooldown:
        return True
    write_atomic(stamp, f"{now}\n".encode())
    return False


def _agent_state(ctx: Context) -> BoardState:
    state = checkpoint.start_state(ctx.paths.pane(ctx.agent, "checkpoint"), ctx.store(), ctx.agent)
    with BoardView(ctx.store(), state) as view:
        view.refresh(keep=False)
    return view.state


def _take(
    ctx: Context, state: BoardState, keys: DeliveredKeys, limit: int | None
) -> tuple[list[Prompt], list[str]]:
    """The undelivered open prompts in catch-up order, composed, up to the reason's size limit
    (and to *limit* prompts, for the agents that take one per turn end)."""
    exe = executable()
    chosen: list[Prompt] = []
    texts: list[str] = []
    size = 0
    for ps in open_for(state, ctx.agent, time.time()):
        if delivered_key(ps.prompt.board, ps.prompt.sender, ps.prompt.id) in keys:
            continue
        text = compose(
            ps.prompt, exe=exe, home=str(ctx.home), agent=ctx.agent, store=ctx.store_options()
        )
        if chosen and (size + len(text) > REASON_LIMIT or len(chosen) == limit):
            break  # the rest wait for the next stop
        chosen.append(ps.prompt)
        texts.append(text)
        size += len(text)
    return chosen, texts
