"""A listener killed at each point of delivery ten times, in a random order:
duplicates only in the documented window."""

from __future__ import annotations

import functools
import random
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from testing.helpers import cli_env, run_cli, wait_until

# The door: record the prompt's id (the door "took" it), slowly enough to be killed inside.
DOOR = (
    "import os, sys, time; sys.stdin.read(); open(os.environ['STARTED'], 'a').write('x'); "
    "time.sleep(float(os.environ['SLOW'])); "
    "open(os.environ['OUT'], 'a').write(os.environ['PANEBOARD_ID'] + '\\n')"
)
POINTS = ["before-door", "in-door", "after-door", "after-record"]
# bob's listener, delivering through an exec door running DOOR
LISTEN = ["-m", "paneboard", "listen", "--as", "bob", "--door", "exec", "--"]
LISTEN = [sys.executable, *LISTEN, sys.executable, "-c", DOOR]


def _in_door(proc: subprocess.Popen[bytes], started: Path, before: str) -> bool:
    """The door has started (it wrote to *started*), or the listener ended first."""
    return proc.poll() is not None or (started.read_text() if started.exists() else "") != before


@pytest.mark.slow
def test_listener_killed_40_times(home: Path, tmp_path: Path, rng: random.Random) -> None:
    out, started = tmp_path / "delivered", tmp_path / "started"
    posted: list[str] = []
    kills: Counter[str] = Counter()
    points = POINTS * 10  # every point as often as the others: a random pick could miss one
    rng.shuffle(points)
    for point in points:
        done = run_cli(home, "post", "--as", "alice", "--to", "bob", f"job {len(posted)}")
        posted.append(done.stdout.strip())
        env = cli_env(
            home, OUT=str(out), STARTED=str(started), SLOW="0.2" if point == "in-door" else "0"
        )
        if point != "in-door":
            env["PANEBOARD_FAILPOINT"] = point
        before = started.read_text() if started.exists() else ""
        proc = subprocess.Popen(
            LISTEN,
            env=env,
            stderr=subprocess.DEVNULL,
        )
        if point == "in-door":
            in_door = functools.partial(_in_door, proc, started, before)
            wait_until(in_door, "the door started (or the listener ended)", 30)
            proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL, point
        kills[point] += 1
    finish = subprocess.run(
        LISTEN,
        env=cli_env(home, OUT=str(out), STARTED=str(started), SLOW="0", PANEBOARD_FAILPOINT="idle"),
        stderr=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert -signal.SIGKILL == finish.returncode
    counts = Counter(out.read_text().split())
    assert set(posted) == set(counts), "a prompt was lost"
    duplicates = sum(n - 1 for n in counts.values())
    print(f"kills {dict(kills)}; duplicates {duplicates}")
    assert duplicates <= kills["after-door"] + kills["in-door"]
