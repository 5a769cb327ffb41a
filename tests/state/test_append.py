"""Appends from many processes, and writers killed mid-append: real processes, real files."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paneboard.state.filelog.log import read_posts
from testing.helpers import cli_env, run_cli

WRITER = """
import os, sys, time
from pathlib import Path
from paneboard.protocol.posts import Prompt, encode
from paneboard.state.filelog.append import append_payloads
log, me, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for i in range(n):
    p = Prompt(id=f"{me}{i:024d}", board="b", sender=me, ts=time.time(), to=("bob",), \
body=f"{me} {i}")
    append_payloads(log, [encode(p)])
"""


@pytest.mark.slow
def test_four_processes_append_2000_posts_each(tmp_path: Path) -> None:
    """Every post is present exactly once, each writer's posts in its own order."""
    log = tmp_path / "log"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(log), f"w{k}", "2000"])
        for k in range(4)
    ]
    assert [0, 0, 0, 0] == [p.wait(timeout=120) for p in procs]
    ids = [post.id for _, post in read_posts(log)]
    assert 8000 == len(ids) == len(set(ids))
    for k in range(4):
        mine = [i for i in ids if i.startswith(f"w{k}")]
        assert [f"w{k}{i:024d}" for i in range(2000)] == mine


def test_writer_killed_at_random_moments_loses_nothing_reported(home: Path) -> None:
    """Every id `post` printed is in the log; the log reads cleanly; the next post succeeds."""
    rng = random.Random(os.environ.get("PANEBOARD_SEED", "2"))
    print("seed", rng.random())
    reported: list[str] = []
    loop = (
        f"for i in $(seq 1 1000); do {sys.executable} -m paneboard post "
        '--to bob "msg $i" || exit 1; done'
    )
    for _ in range(15):
        proc = subprocess.Popen(
            ["bash", "-c", loop],
            stdout=subprocess.PIPE,
            text=True,
            env=cli_env(home, PANEBOARD_AGENT="alice"),
            start_new_session=True,
        )
        time.sleep(rng.uniform(0.05, 0.4))
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        reported += out.split()
    done = run_cli(home, "post", "--as", "alice", "--to", "bob", "after the kills")
    assert 0 == done.returncode, done.stderr
    ids = [post.id for _, post in read_posts(home / "test" / "log")]
    assert set(reported) <= set(ids)
    assert len(ids) == len(set(ids))
    assert done.stdout.strip() == ids[-1]
