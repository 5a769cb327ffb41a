"""What `spawn` and `stop` share across agents: the agent's command on the session's PATH, the
hooks a project already has and whom they act for, and a session in a tmux server of its own.

A session run in tmux gets a private server, ``tmux -L paneboard-NAME`` (its socket in
``$TMUX_TMPDIR``, else /tmp, under ``tmux-UID/``), started by the spawn with the spawn's
environment, so the agent sees exactly that environment (a server that runs already would
give its own). Its one window runs the agent's command itself, no shell; the window's process
is the agent. Stopping it asks the agent to quit its own way where it has one (pi: through
paneboard's extension, `ctx.shutdown`), else sends SIGTERM, then closes the server.
"""

from __future__ import annotations

import itertools
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from paneboard.agents.base import Agent, Spawned, SpawnRequest
from paneboard.agents.hookfile import HookFileAgent, our_commands
from paneboard.agents.script import ScriptAgent
from paneboard.protocol.errors import BadInput, DoorFailed
from paneboard.state.proc import alive

QUIT_WITHIN = 10.0  # seconds an agent has to end after its quit signal
TMUX_SIZE = ("-x", "200", "-y", "50")  # a detached server's window has no terminal to size it


def command(name: str, env: Mapping[str, str], title: str) -> str:
    """The agent's command *name* on the session's PATH; `BadInput` where it is not there."""
    found = shutil.which(name, path=env.get("PATH", os.defpath))
    if found is None:
        raise BadInput(f"no `{name}` on PATH: {title} cannot be spawned")
    return found


def hooks_acting(agent: Agent, project: Path) -> dict[str, str] | None:
    """The where-and-who options (`--as`, `--home`, `--board`, `--store`, …) and `--mode` of
    paneboard's session-start hook already in *project* for *agent*; None where it has none."""
    if isinstance(agent, ScriptAgent):
        text = agent.own.current(project / agent.own.path)
        if text is None:
            return None
        line = next((ln for ln in text.splitlines() if ln.startswith(_COMMAND)), "")
        try:
            words = json.loads(line.removeprefix(_COMMAND).rstrip(";"))
        except ValueError:
            words = []
        return _options([str(word) for word in words])
    if isinstance(agent, HookFileAgent):
        commands = our_commands(agent.path(project))
        start = commands.get(agent.events.get("session-start", ""))
        if start is None:
            return {"--mode": "stop"} if commands else None
        return _options(shlex.split(start))
    return None


_COMMAND = "const COMMAND = "  # the line of a script that holds its hook's command
_WRITTEN = ("--as", "--home", "--board", "--store", "--nats-creds", "--nats-tls-ca", "--mode")


def _options(words: list[str]) -> dict[str, str]:
    return {word: value for word, value in itertools.pairwise(words) if word in _WRITTEN}


def tmux_server(name: str) -> str:
    """The name of the private tmux server of agent *name*'s spawned session."""
    return f"paneboard-{name}"


def in_tmux(agent: Agent, argv: list[str], request: SpawnRequest) -> Spawned:
    """Run *argv* (the agent's command) in a new private tmux server, in the project, with the
    request's environment; `BadInput` where tmux is missing or the server runs already."""
    tmux = shutil.which("tmux", path=request.env.get("PATH", os.defpath))
    if tmux is None:
        raise BadInput(f"tmux is missing: {agent.title} runs in a terminal, and cannot be spawned")
    server = tmux_server(request.name)
    env = {k: v for k, v in request.env.items() if k not in ("TMUX", "TMUX_PANE")}
    if _tmux(tmux, server, env, "has-session").returncode == 0:
        raise BadInput(
            f"a tmux server `{server}` runs already: `tmux -L {server} attach`, or end it with"
            f" `tmux -L {server} kill-server`"
        )
    new = ("new-session", "-d", "-s", "paneboard", "-c", str(request.project), *TMUX_SIZE)
    done = _tmux(tmux, server, env, *new, "-P", "-F", "#{pane_pid}", *argv)
    if done.returncode != 0 or not done.stdout.strip().isdigit():
        said = (done.stderr or done.stdout).strip() or f"exit {done.returncode}"
        raise BadInput(f"tmux could not start {agent.title}: {said}")
    return Spawned(server, f"tmux -L {server} attach", int(done.stdout.strip()))


def stop_tmux(
    agent: Agent, server: str, env: Mapping[str, str], ask_quit: Quit | None = None
) -> str:
    """End the agent in tmux server *server*: its own quit where it has one (*ask_quit*, given
    the agent's pid), else SIGTERM; then the server closed. What happened, in words; `BadInput`
    where no such server runs."""
    tmux = shutil.which("tmux", path=env.get("PATH", os.defpath)) or "tmux"
    shown = _tmux(tmux, server, env, "display-message", "-p", "#{pane_pid}")
    if shown.returncode != 0 or not shown.stdout.strip().isdigit():
        raise BadInput(f"no tmux server `{server}` runs: the {agent.title} session has ended")
    pid = int(shown.stdout.strip())
    how = _asked(ask_quit, pid)
    if how is None:
        os.kill(pid, signal.SIGTERM)
        how = "SIGTERM"
    deadline = time.monotonic() + QUIT_WITHIN
    while alive(pid, zombie=False) and time.monotonic() < deadline:
        time.sleep(0.05)
    ended = "ended" if not alive(pid, zombie=False) else f"did not end within {QUIT_WITHIN:g} s"
    _tmux(tmux, server, env, "kill-server")  # gone with its window when the agent has ended
    return f"{agent.title} pid {pid} {ended} ({how}); tmux server {server} closed"


Quit = Callable[[int], str]  # asks the agent process *pid* to quit; what it did, in words


def _asked(ask_quit: Quit | None, pid: int) -> str | None:
    try:
        return None if ask_quit is None else ask_quit(pid)
    except (OSError, ValueError, TypeError, DoorFailed):
        return None  # its quit cannot be asked for: the signal it is


def ask_line(path: Path, line: bytes, timeout: float = 5.0) -> dict[str, object]:
    """Write *line* to the Unix socket *path* and read one JSON object back."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(str(path))
        conn.sendall(line)
        data = b""
        while b"\n" not in data and len(data) < 64 * 1024:
            chunk = conn.recv(4096)
            if not chunk:
                break
            data += chunk
    answer = json.loads(data.split(b"\n", 1)[0])
    if not isinstance(answer, dict):
        raise TypeError(f"not a JSON object: {data[:200]!r}")
    return answer


def _tmux(
    tmux: str, server: str, env: Mapping[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    argv = [tmux, "-L", server, *args]
    return subprocess.run(
        argv,
        check=False,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
