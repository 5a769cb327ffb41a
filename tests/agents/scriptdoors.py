"""What the tests of the agents reached through paneboard's script in them (OpenCode's and Kilo
Code's plugin, pi's extension, Hermes Agent's plugin) share: a socket server standing in for
the script, a listener on the script's door, and the steps the doors' refusals take.

No tests here."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

from testing.helpers import Listening, SocketServer, ended_pid, notices, post, run_cli


class PluginStandIn(SocketServer):
    """Serves the script's socket and registry; answers each line with *reply* (None: never)."""

    def __init__(self, folder: Path, pid: int, reply: dict[str, object] | None) -> None:
        self.socket_path = folder / f"{pid}.sock"
        (folder / f"{pid}.json").write_text(
            json.dumps({"pid": pid, "socket": str(self.socket_path)})
        )
        self.reply = reply
        super().__init__(self.socket_path)

    def handle(self, conn: socket.socket) -> None:
        with conn.makefile("rb") as f:
            line = f.readline()
        if not line:
            conn.close()  # connected and left without a word (doctor's probe)
            return
        self.lines.put(json.loads(line))
        if self.reply is None:
            self.held.append(conn)  # took the line, never answers
            return
        with conn:
            conn.sendall(json.dumps(self.reply).encode() + b"\n")


class Harness:
    """paneboard's script in a process of its own (`proc`), the agent played by a harness that
    writes each text it is given as one JSON line in `sent`."""

    sent: Path
    proc: subprocess.Popen[str]

    def given(self) -> list[dict[str, object]]:
        """What the agent was given, in order."""
        if not self.sent.exists():
            return []
        return [json.loads(line) for line in self.sent.read_text().splitlines()]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe:
                pipe.close()


def listen(home: Path, door: str, socket_path: Path, *extra: str) -> Listening:
    """`listen --as bob` through *door* at *socket_path*, retrying at once."""
    args = ("--door", door, "--socket", str(socket_path), "--backoff", "0.05", *extra)
    return Listening(home, "bob", *args)


def undelivered(home: Path, server: SocketServer, listener: Listening) -> tuple[int, list[str]]:
    """Post to *listener*'s agent, whose script (*server*, closed after) refuses it: it is
    `undelivered`; how many lines *server* was sent, and the notices' reasons."""
    try:
        with listener as bob:
            prompt = post(home, "--to", "bob", "hello")
            bob.wait_err(f"undelivered {prompt}")
    finally:
        server.close()
    return server.lines.qsize(), [n.reason for n in notices(home)]


def undelivered_at_once(home: Path, server: SocketServer, listener: Listening) -> list[str]:
    """Post to *listener*'s agent: it is `undelivered` with no line sent to *server*; the
    notices' reasons."""
    sent, reasons = undelivered(home, server, listener)
    assert 0 == sent
    return reasons


def an_ended_process_is_refused(home: Path, folder: Path, door: str, title: str) -> None:
    """A registry in *folder* naming a process that has ended (a socket left behind by a killed
    *title*): no attempt through *door*, at once `undelivered`, naming the process."""
    pid = ended_pid()
    server = PluginStandIn(folder, pid, {"ok": True})
    reasons = undelivered_at_once(home, server, listen(home, door, server.socket_path))
    assert [f"the {title} process {pid} behind {server.socket_path} has ended"] == reasons


def hook(home: Path, action: str, agent: str, project: Path, name: str) -> tuple[int, str, str]:
    """`hook ACTION AGENT --project PROJECT --as NAME`: its exit code, output and errors."""
    done = run_cli(home, "hook", action, agent, "--project", str(project), "--as", name)
    return done.returncode, done.stdout, done.stderr


def a_foreign_plugin_is_refused(home: Path, project: Path, plugin: str, agent: str) -> None:
    """A file at the plugin's path *plugin* in *project* that paneboard did not write: `hook
    install|uninstall AGENT` refuse it and leave it as it was."""
    path = project / plugin
    path.parent.mkdir(parents=True)
    path.write_text("export const Mine = async () => ({});\n")
    for action in ("install", "uninstall"):
        done = run_cli(home, "hook", action, agent, "--project", str(project))
        assert (
            1,
            f"paneboard: {path} is not paneboard's plugin; move it away, nothing was changed\n",
        ) == (done.returncode, done.stderr)
    assert "export const Mine = async () => ({});\n" == path.read_text()


def door_needs_a_socket(home: Path, door: str, script: str) -> None:
    """`listen --door DOOR` without `--socket` is refused, naming the script that passes it."""
    done = run_cli(home, "listen", "--as", "bob", "--door", door)
    why = f"--door {door} needs --socket PATH (paneboard's {script} passes it)"
    assert (1, f"paneboard: {why}\n") == (done.returncode, done.stderr)
