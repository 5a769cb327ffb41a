"""`seen` on both stores: the listener and the Stop hook read it from the agent's transcript.

The counterpart is a stand-in session: a real Unix socket that takes the inbox door's line and
writes a real transcript file as Claude Code does (an `enqueue` line at once; the user turn when
the session is free). tests/real/test_seen.py runs the same against the real Claude Code.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testing.helpers import Listening, SocketServer, post, run_cli


class Session(SocketServer):
    """An inbox socket and a transcript; *busy* holds each user turn back until `free()`."""

    def __init__(self, folder: Path) -> None:
        self.socket = folder / "inbox.sock"
        self.transcript = folder / "projects" / "-work-proj" / "session.jsonl"  # not there yet
        self.busy = False
        self.waiting: list[str] = []
        self.enqueued = threading.Event()
        self._lock = threading.Lock()
        super().__init__(self.socket)

    def handle(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as lines:
            for raw in lines:
                self._take(json.loads(raw)["message"]["content"])

    def _take(self, text: str) -> None:
        with self._lock:
            self.write({"type": "queue-operation", "operation": "enqueue", "content": text})
            self.enqueued.set()
            if self.busy:
                self.waiting.append(text)
            else:
                self.turn("Another Claude session sent a message:\n" + text)

    def free(self) -> None:
        """The running turn ends: the held messages run as user turns."""
        with self._lock:
            self.busy = False
            for text in self.waiting:
                self.turn("Another Claude session sent a message:\n" + text)
            self.waiting = []

    def turn(self, content: str) -> None:
        self.write({"type": "user", "message": {"role": "user", "content": content}})

    def write(self, record: dict[str, Any]) -> None:
        self.transcript.parent.mkdir(parents=True, exist_ok=True)
        with open(self.transcript, "a") as f:
            f.write(json.dumps(record) + "\n")


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    s = Session(tmp_path)
    yield s
    s.close()


def _listen(home: Path, s: Session) -> Listening:
    door = ("--door", "claude-inbox", "--socket", str(s.socket))
    return Listening(home, "bob", *door, "--transcript", str(s.transcript))


@contextlib.contextmanager
def _busy(home: Path, session: Session, body: str) -> Iterator[tuple[Listening, str]]:
    """bob listening on a busy *session*; *body* posted to bob and handed to the session, which
    holds its turn back until `free()`. Yields the listener and the prompt's id."""
    session.busy = True
    with _listen(home, session) as bob:
        pid = post(home, "--to", "bob", body)
        bob.wait_err(f"delivered {pid}")
        yield bob, pid


def _bob(home: Path, pid: str) -> dict[str, Any]:
    return dict(json.loads(run_cli(home, "status", pid, "--json").stdout)["recipients"]["bob"])


def _kinds(home: Path) -> list[str]:
    return [json.loads(line)["kind"] for line in run_cli(home, "log", "--json").stdout.splitlines()]


def test_seen_when_the_transcript_shows_the_turn(
    home: Path, session: Session, store_url: str
) -> None:
    """The transcript's folder does not exist when the listener starts; `wait --until seen`."""
    with _listen(home, session) as bob:
        pid = post(home, "--to", "bob", "hello")
        done = run_cli(home, "wait", pid, "--until", "seen", "--timeout", "10")
        assert (0, "") == (done.returncode, done.stderr)
        bob.wait_err(f"seen {pid} in claude-transcript")
    got = _bob(home, pid)
    assert ("seen", "claude-inbox", "claude-transcript") == (
        got["stage"],
        got["door"],
        got["source"],
    )
    assert got["delivered_at"] <= got["seen_at"]
    assert ["prompt", "delivered", "seen"] == _kinds(home)
    shown = run_cli(home, "log", "--kind", "seen").stdout
    assert f"on {pid}: claude-inbox, in claude-transcript" in shown


def test_queued_is_not_seen_until_the_turn_runs(
    home: Path, session: Session, store_url: str
) -> None:
    """A busy session's `enqueue` line is not `seen`; status says how long it has waited."""
    with _busy(home, session, "when you are free") as (bob, pid):
        assert session.enqueued.wait(10)
        assert 3 == run_cli(home, "wait", pid, "--until", "seen", "--timeout", "1").returncode
        line = run_cli(home, "status", pid).stdout.splitlines()[1]
        assert line.startswith("  bob              delivered")
        assert re.search(r"via claude-inbox  \(delivered \d+ s ago, not yet seen\)$", line), line
        session.free()
        bob.wait_err(f"seen {pid}")
    assert "seen" == _bob(home, pid)["stage"]


def test_a_listener_started_later_sees_what_was_delivered_before(
    home: Path, session: Session, store_url: str
) -> None:
    """The turn runs while no listener is there; the next one finds it, and reads on from there."""
    with _busy(home, session, "while busy") as (bob, pid):
        bob.stop()
    session.free()
    with _listen(home, session) as bob:  # catches up on the transcript before it is ready
        assert f"paneboard listen bob@test: seen {pid} in claude-transcript" in bob.stderr_lines
        bob.stop()
    mark = json.loads((home / "test" / "panes" / "bob.transcript").read_bytes())
    assert (str(session.transcript), session.transcript.stat().st_size) == (
        mark["path"],
        mark["offset"],
    )
    assert ["prompt", "delivered", "seen"] == _kinds(home)


def _stop(home: Path, transcript: Path, active: bool) -> str:
    payload = {
        "session_id": "s1",
        "transcript_path": str(transcript),
        "hook_event_name": "Stop",
        "stop_hook_active": active,
    }
    args = ("hook", "stop", "--agent", "claude", "--as", "bob")
    done = run_cli(home, *args, input=json.dumps(payload).encode())
    assert (0, "") == (done.returncode, done.stderr)
    return done.stdout


def test_the_stop_hook_sees_its_reason_as_the_next_turn(
    home: Path, session: Session, store_url: str
) -> None:
    pid = post(home, "--to", "bob", "taken at stop")
    reason = json.loads(_stop(home, session.transcript, active=False))["reason"]
    assert "delivered" == _bob(home, pid)["stage"]
    session.turn("Stop hook feedback:\n" + reason)
    assert "" == _stop(home, session.transcript, active=True)
    got = _bob(home, pid)
    assert ("seen", "stop-hook", "claude-transcript") == (got["stage"], got["door"], got["source"])
    assert ["prompt", "delivered", "seen"] == _kinds(home)
