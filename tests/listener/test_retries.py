"""Retries, `undelivered` notices, and prompts closed while they wait behind a retrying one."""

from __future__ import annotations

import json
from pathlib import Path

from paneboard.protocol.posts import Undelivered
from paneboard.state.filelog.log import read_posts
from testing.helpers import Listening, post, python_door, run_cli, wait_until

# An exec door that refuses any prompt whose body says FAIL and records the others' ids.
RECORDER = (
    "import os, sys; text = sys.stdin.read(); sys.exit(1) if 'FAIL' in text else "
    "open(os.environ['OUT'], 'a').write(os.environ['PANEBOARD_ID'] + '\\n')"
)


def recorder(home: Path, tmp_path: Path, *args: str) -> Listening:
    from testing.helpers import cli_env

    env = cli_env(home, OUT=str(tmp_path / "got"))
    return Listening(home, "bob", *python_door(RECORDER, *args), env=env)


def test_a_failing_door_retries_then_posts_undelivered_and_a_restart_delivers(
    home: Path, tmp_path: Path
) -> None:
    """Three attempts, an `undelivered` notice, the prompt open;
    a later listener with a working door delivers it."""
    pid = post(home, "--to", "bob", "the first door is broken")
    with Listening(home, "bob", "--door", "exec", "--backoff", "0.05,0.05", "--", "false") as bob:
        bob.wait_err(f"undelivered {pid}")
        assert 2 == sum("retry" in line for line in bob.stderr_lines)
    [notice] = [p for _, p in read_posts(home / "test" / "log") if isinstance(p, Undelivered)]
    assert (pid, "bob", "exec") == (notice.prompt_id, notice.sender, notice.door)
    assert notice.reason.startswith("`false` exited 1")
    status = json.loads(run_cli(home, "status", pid, "--json").stdout)
    assert "undelivered" == status["recipients"]["bob"]["stage"]
    with recorder(home, tmp_path) as bob:
        bob.wait_err(f"delivered {pid}")
    assert [pid] == (tmp_path / "got").read_text().split()


def test_prompts_closed_while_queued_behind_a_retrying_one_are_never_delivered(
    home: Path, tmp_path: Path
) -> None:
    """Acked, cancelled and expired prompts behind a retrying one are skipped;
    an open one is delivered."""
    stuck = post(home, "--to", "bob", "--priority", "urgent", "FAIL every time")
    acked = post(home, "--to", "bob", "will be acked")
    cancelled = post(home, "--to", "bob", "will be cancelled")
    expiring = post(home, "--to", "bob", "--ttl", "1", "will expire")
    kept = post(home, "--to", "bob", "stays open")
    with recorder(home, tmp_path, "--backoff", "1.5,1.5") as bob:
        bob.wait_err(f"retry 2/3 of {stuck}")
        assert 0 == run_cli(home, "ack", "--as", "bob", acked).returncode
        assert 0 == run_cli(home, "cancel", "--as", "alice", cancelled).returncode
        bob.wait_err(f"undelivered {stuck}")
        bob.wait_err(f"delivered {kept}")
    assert [kept] == (tmp_path / "got").read_text().split()
    assert (
        "expired"
        == json.loads(run_cli(home, "status", expiring, "--json").stdout)["recipients"]["bob"][
            "stage"
        ]
    )


def test_a_prompt_closed_during_its_own_backoff_stops_retrying(home: Path, tmp_path: Path) -> None:
    """Cancel during the wait: the listener drops it at once and posts no notice."""
    pid = post(home, "--to", "bob", "FAIL")
    with recorder(home, tmp_path, "--backoff", "30") as bob:
        bob.wait_err(f"retry 2/2 of {pid}")
        assert 0 == run_cli(home, "cancel", "--as", "alice", pid).returncode
        bob.wait_err(f"{pid} was closed while waiting to retry")
    assert [] == [p for _, p in read_posts(home / "test" / "log") if isinstance(p, Undelivered)]


def test_sigterm_during_a_delivery_lets_it_finish(home: Path, tmp_path: Path) -> None:
    """The delivery in flight returns and is recorded before the listener exits 0."""
    started, release = tmp_path / "started", tmp_path / "release"
    script = (
        f"import os, time; open({str(started)!r}, 'w').close()\n"
        f"while not os.path.exists({str(release)!r}): time.sleep(0.01)"
    )
    with Listening(home, "bob", *python_door(script)) as bob:
        pid = post(home, "--to", "bob", "slow one")
        wait_until(started.exists, "the door's command runs")
        bob.proc.terminate()
        bob.wait_err("SIGTERM: stopping")
        release.touch()
        assert 0 == bob.proc.wait(timeout=10)
        bob.wait_err(f"delivered {pid}")
    assert f"test alice {pid}\n" == (home / "test" / "panes" / "bob.delivered").read_text()
