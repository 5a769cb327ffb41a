"""`wait`, `ask` and `log --follow`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from testing.helpers import Listening, cli_env, post, run_cli


def test_ask_is_answered_by_an_agent_whose_door_runs_paneboard_answer(home: Path) -> None:
    """bob's exec door answers each prompt with `paneboard answer "$PANEBOARD_ID"`:
    alice's ask prints it."""
    script = (
        f'exec {sys.executable} -m paneboard answer "$PANEBOARD_ID" "bob says: $(wc -l) lines read"'
    )
    with Listening(home, "bob", "--door", "exec", "--", "sh", "-c", script):
        done = run_cli(
            home, "ask", "--as", "alice", "--to", "bob", "--timeout", "20", "how many lines?"
        )
    assert (0, "") == (done.returncode, done.stderr)
    assert done.stdout.startswith("bob says: ") and done.stdout.endswith(" lines read\n")


def test_wait_timeout_exits_3(home: Path) -> None:
    pid = post(home, "--to", "bob", "nobody listens")
    done = run_cli(home, "wait", pid, "--timeout", "0.3")
    assert (3, f"paneboard: prompt {pid} was not closed within 0.3 s\n") == (
        done.returncode,
        done.stderr,
    )


def test_wait_until_delivered_and_closed(home: Path) -> None:
    """`--until delivered` returns on the receipt;
    the default waits for the answer and prints it."""
    pid = post(home, "--to", "bob", "hello")
    with Listening(home, "bob", "--door", "stdout") as bob:
        bob.line()
        delivered = run_cli(home, "wait", pid, "--until", "delivered", "--timeout", "10")
        assert (0, "") == (delivered.returncode, delivered.stdout)
    waiter = subprocess.Popen(
        [sys.executable, "-m", "paneboard", "wait", pid, "--timeout", "20"],
        stdout=subprocess.PIPE,
        text=True,
        env=cli_env(home),
    )
    assert 0 == run_cli(home, "answer", "--as", "bob", pid, "all done").returncode
    out, _ = waiter.communicate(timeout=20)
    assert (0, "all done\n") == (waiter.returncode, out)


def test_wait_on_a_cancelled_prompt_fails(home: Path) -> None:
    pid = post(home, "--to", "bob", "never mind")
    assert 0 == run_cli(home, "cancel", "--as", "alice", pid).returncode
    done = run_cli(home, "wait", pid, "--timeout", "5")
    assert (1, f"paneboard: prompt {pid} was cancelled\n") == (done.returncode, done.stderr)


def test_wait_ends_when_the_prompt_expires(home: Path) -> None:
    pid = post(home, "--to", "bob", "--ttl", "0.5", "short-lived")
    done = run_cli(home, "wait", pid, "--timeout", "20")
    assert (1, f"paneboard: prompt {pid} expired\n") == (done.returncode, done.stderr)
