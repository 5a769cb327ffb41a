"""paneboard's contract for users, run against both stores: the file log and NATS JetStream.

Posting, closing, reading and listening behave the same whichever store holds the board.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from testing.helpers import PANEBOARD, Listening, cli_env, post, run_cli

REFUSED = (
    "paneboard: board `test`: `alice` already has {} open prompts for `bob` "
    "(the --max-open limit); wait for some to be closed, or cancel some\n"
)


def posting_at_once(homes: list[Path], most: int) -> list[tuple[int, str, str]]:
    """(exit code, stdout, stderr) of one `post --max-open MOST` per home, all started at once."""
    procs = [
        subprocess.Popen(
            [*PANEBOARD, "post", "--as", "alice", "--to", "bob", "--max-open", str(most), "job"],
            env=cli_env(home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for home in homes
    ]
    outputs = [p.communicate(timeout=60) for p in procs]
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, outputs, strict=True)]


@pytest.mark.cluster
def test_post_open_ack_answer_cancel_status_log(home: Path, store_url: str) -> None:
    a = post(home, "--to", "bob", "first")
    b = post(home, "--to", "bob", "--to", "carol", "--priority", "urgent", "second")
    c = post(home, "--to", "bob", "third")
    assert [b, a, c] == [
        line.split()[0] for line in run_cli(home, "open", "--as", "bob").stdout.splitlines()
    ]
    assert 0 == run_cli(home, "ack", "--as", "bob", b[:14], "--note", "done").returncode
    assert 0 == run_cli(home, "answer", "--as", "carol", b, "42").returncode
    assert 0 == run_cli(home, "cancel", "--as", "alice", c).returncode
    assert [a] == [
        line.split()[0] for line in run_cli(home, "open", "--as", "bob").stdout.splitlines()
    ]
    status = json.loads(run_cli(home, "status", b, "--json").stdout)
    assert ("acked", "answered", "42") == (
        status["recipients"]["bob"]["stage"],
        status["recipients"]["carol"]["stage"],
        status["recipients"]["carol"]["answer"],
    )
    kinds = [
        json.loads(line)["kind"] for line in run_cli(home, "log", "--json").stdout.splitlines()
    ]
    assert ["prompt", "prompt", "prompt", "ack", "answer", "cancel"] == kinds


def test_bad_input_writes_nothing(home: Path, store_url: str) -> None:
    """An ack by a non-recipient, a cancel by a non-sender and a bad name: exit 1, the message
    naming the problem, and nothing written."""
    pid = post(home, "--to", "bob", "x")
    before = run_cli(home, "log", "--json").stdout
    refusals = [
        (
            ("ack", "--as", "carol", pid),
            f"agent `carol` is not a recipient of prompt {pid} (sent to bob)",
        ),
        (
            ("cancel", "--as", "bob", pid),
            f"agent `bob` did not send prompt {pid} (`alice` did); only its sender can cancel it",
        ),
        (
            ("post", "--as", "alice", "--to", "../x", "hi"),
            (
                "recipient name '../x' is not valid: use 1-64 of A-Z a-z 0-9 . _ -, "
                "not starting with `.`"
            ),
        ),
    ]
    for words, message in refusals:
        done = run_cli(home, *words)
        assert (1, f"paneboard: {message}\n") == (done.returncode, done.stderr), words
    assert before == run_cli(home, "log", "--json").stdout


def test_listener_catches_up_in_order_then_delivers_live(home: Path, store_url: str) -> None:
    low = post(home, "--to", "bob", "--priority", "low", "later")
    urgent = post(home, "--to", "bob", "--priority", "urgent", "now")
    with Listening(home, "bob", "--door", "stdout") as bob:
        assert [urgent, low] == [json.loads(bob.line())["id"] for _ in range(2)]
        live = post(home, "--to", "bob", "live")
        assert live == json.loads(bob.line())["id"]
        bob.wait_err(f"delivered {live}")
    stage = json.loads(run_cli(home, "status", live, "--json").stdout)["recipients"]["bob"]["stage"]
    assert "delivered" == stage


@pytest.mark.cluster
def test_exactly_once_across_restarts(home: Path, store_url: str) -> None:
    seen, posted = [], []
    for sig in (signal.SIGTERM, signal.SIGKILL, signal.SIGTERM):
        posted.append(post(home, "--to", "bob", "while down"))
        with Listening(home, "bob", "--door", "stdout") as bob:
            seen.append(json.loads(bob.line())["id"])
            posted.append(post(home, "--to", "bob", "while up"))
            seen.append(json.loads(bob.line())["id"])
            bob.wait_err(f"delivered {posted[-1]}")
            bob.stop(sig)
    assert sorted(posted) == sorted(seen)
    assert len(set(seen)) == len(seen)


def test_ask_and_wait(home: Path, store_url: str) -> None:
    script = f'exec {sys.executable} -m paneboard answer "$PANEBOARD_ID" "pong"'
    with Listening(home, "bob", "--door", "exec", "--", "sh", "-c", script):
        done = run_cli(home, "ask", "--as", "alice", "--to", "bob", "--timeout", "20", "ping")
    assert (0, "pong\n") == (done.returncode, done.stdout), done.stderr
    pid = post(home, "--to", "carol", "nobody home")
    assert 3 == run_cli(home, "wait", pid, "--timeout", "0.5").returncode


@pytest.mark.cluster
def test_who_sees_the_listener(home: Path, store_url: str) -> None:
    with Listening(home, "bob", "--door", "stdout") as bob:
        rows = {
            r["agent"]: r
            for r in map(json.loads, run_cli(home, "who", "--json").stdout.splitlines())
        }
        assert (True, bob.proc.pid) == (rows["bob"]["listening"], rows["bob"]["pid"])


def test_max_open_holds_for_posters_at_once(home: Path, store_url: str) -> None:
    """Eight posters at once with --max-open 3: three prompts stored, five refused with the
    limit's message."""
    done = posting_at_once([home] * 8, 3)
    stored = [out.strip() for code, out, _ in done if code == 0]
    refused = [(code, err) for code, _, err in done if code != 0]
    assert (3, [(1, REFUSED.format(3))] * 5) == (len(stored), refused)
    logged = [json.loads(line) for line in run_cli(home, "log", "--json").stdout.splitlines()]
    assert sorted(stored) == sorted(p["id"] for p in logged if p["kind"] == "prompt")
