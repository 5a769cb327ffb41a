# paneboard: the Hermes Agent door.
"""paneboard's plugin for Hermes Agent: written by `paneboard hook install hermes` as
``.hermes/plugins/paneboard/__init__.py`` (beside its ``plugin.yaml``), removed by `paneboard
hook uninstall hermes`. Checked with hermes-agent 0.19.0. The standard library only: it runs in
Hermes's own Python, not paneboard's.

In each interactive Hermes process (the classic CLI, once it has given its plugins a reference to
itself; never `hermes chat -q`, which exits once its query is done) it

* serves a private Unix socket ``DIR/<pid>.sock`` beside a registry file ``DIR/<pid>.json``
  ``{"pid", "socket", "cwd", "session"}``, with DIR = ``$XDG_RUNTIME_DIR/paneboard-hermes``, else
  ``$XDG_CACHE_HOME`` (``~/.cache``)``/paneboard-hermes`` (mode 0700; never a name in /tmp,
  which another user could make first), both removed when Hermes exits; a killed process's
  pair is cleared by the next one;
* starts the paneboard listener (`paneboard hook session-start --agent hermes`, told the socket
  in ``$PANEBOARD_HERMES_SOCKET``), which hands prompts to that socket and ends with this
  process;
* for each line ``{"id": ID, "text": TEXT}`` on the socket, puts TEXT on the queue Hermes's own
  input box feeds (the queue `PluginContext.inject_message` uses for an idle session: a turn at
  once when idle, the next turn once the running one has ended when busy; not
  `inject_message` itself, which interrupts a running turn), and answers ``{"ok": true,
  "busy": BOOL, "session": ID}``, else ``{"ok": false, "error": WHY}``;
* tells the listener where Hermes keeps its conversation (its SQLite database, the session
  start's ``transcript_path``), for `seen`;
* adds the listener's context line (who this agent is, how to post) to the session's first
  turn (its ``pre_llm_call`` hook).
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import stat
import subprocess
import threading
import time
from typing import Any

COMMAND = ["paneboard", "hook", "session-start", "--agent", "hermes"]
FOLDER = "paneboard-hermes"
SOCKET_ENV = "PANEBOARD_HERMES_SOCKET"
CLI_WITHIN = 120.0  # seconds for an interactive CLI to show itself after the plugin loads
LINE_LIMIT = 1 << 20


def private_folder() -> str:
    """DIR for the sockets, made 0700; an error if it is not this user's alone."""
    env = os.environ
    base = env.get("XDG_RUNTIME_DIR") or env.get("XDG_CACHE_HOME")
    folder = os.path.join(base or os.path.expanduser("~/.cache"), FOLDER)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        raise OSError(f"{folder} is not a private folder of this user")
    return folder


def sweep(folder: str) -> None:
    """Clear the sockets and registries a killed Hermes process left behind."""
    for name in os.listdir(folder):
        stem, dot, ext = name.partition(".")
        if ext != "json" or not dot or not stem.isdigit() or int(stem) == os.getpid():
            continue
        try:
            os.kill(int(stem), 0)
        except ProcessLookupError:
            for end in (".json", ".sock"):
                try:
                    os.unlink(os.path.join(folder, stem + end))
                except FileNotFoundError:
                    pass
        except OSError:
            continue


def close_door(server: socket.socket, *paths: str) -> None:
    """At Hermes's exit: the socket closed, it and the registry removed."""
    server.close()
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


class Door:
    """The door of one Hermes process: its socket, its listener, its context line."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.cli: Any = None
        self.context = ""
        self.started = threading.Event()

    def known_cli(self) -> Any:
        """The interactive CLI, once it has made itself known to its plugins; else None."""
        cli = getattr(getattr(self.ctx, "_manager", None), "_cli_ref", None)
        return cli if hasattr(cli, "_pending_input") else None

    def wait_for_cli(self) -> None:
        """Open the door once the interactive CLI is up."""
        deadline = time.monotonic() + CLI_WITHIN
        while time.monotonic() < deadline:
            cli = self.known_cli()
            if cli is not None:
                self.cli = cli
                try:
                    self.open()
                except OSError as exc:  # the session runs on without a door
                    self.context = f"paneboard: the Hermes door is closed: {exc}"
                self.started.set()
                return
            time.sleep(0.1)
        self.started.set()

    def open(self) -> None:
        folder = private_folder()
        sweep(folder)
        pid = os.getpid()
        path = os.path.join(folder, f"{pid}.sock")
        registry = os.path.join(folder, f"{pid}.json")
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(16)
        session = str(getattr(self.cli, "session_id", "") or "")
        record = {"pid": pid, "socket": path, "cwd": os.getcwd(), "session": session}
        fd = os.open(registry, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(json.dumps(record) + "\n")
        atexit.register(close_door, server, path, registry)
        threading.Thread(target=self.serve, args=(server,), daemon=True).start()
        self.start_listener(path, session)

    def start_listener(self, path: str, session: str) -> None:
        """Run the session-start hook; keep the context line it answers."""
        data = {"hook_event_name": "SessionStart", "cwd": os.getcwd(), "session_id": session}
        database = getattr(getattr(self.cli, "_session_db", None), "db_path", None)
        if database:  # where Hermes keeps the conversation: the listener reads `seen` there
            data["transcript_path"] = str(database)
        env = {**os.environ, SOCKET_ENV: path}
        try:
            done = subprocess.run(
                COMMAND,
                input=json.dumps(data),
                capture_output=True,
                text=True,
                env=env,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            self.context = f"paneboard: could not start the listener: {exc}"
            return
        try:
            self.context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        except (ValueError, KeyError, TypeError):
            why = done.stderr.strip()
            self.context = f"paneboard: the listener did not start (exit {done.returncode}): {why}"

    def serve(self, server: socket.socket) -> None:
        while True:
            conn, _ = server.accept()
            threading.Thread(target=self.answer, args=(conn,), daemon=True).start()

    def answer(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            data = b""
            try:
                while b"\n" not in data and len(data) < LINE_LIMIT:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                reply = self.hand_over(data.split(b"\n", 1)[0])
                conn.sendall((json.dumps(reply) + "\n").encode())
            except OSError:
                return

    def hand_over(self, line: bytes) -> dict[str, Any]:
        try:
            text = json.loads(line).get("text")
        except (ValueError, AttributeError):
            return {"ok": False, "error": "not a JSON object"}
        if not isinstance(text, str) or not text.strip():
            return {"ok": False, "error": "no text"}
        if getattr(self.cli, "_should_exit", False):
            return {"ok": False, "error": "Hermes is exiting"}
        busy = bool(getattr(self.cli, "_agent_running", False))
        self.cli._pending_input.put(text)
        session = str(getattr(self.cli, "session_id", "") or "")
        return {"ok": True, "busy": busy, "session": session}

    def first_turn(self, **kwargs: Any) -> dict[str, str] | None:
        """The context line, on the session's first turn (Hermes's ``pre_llm_call``)."""
        if not kwargs.get("is_first_turn") or self.known_cli() is None:
            return None  # a later turn, or no interactive CLI (`hermes chat -q`)
        self.started.wait(30)
        return {"context": self.context} if self.context else None


def register(ctx: Any) -> None:
    """Hermes's entry point: the door opens in a thread once the CLI is up."""
    door = Door(ctx)
    ctx.register_hook("pre_llm_call", door.first_turn)
    threading.Thread(target=door.wait_for_cli, daemon=True).start()
