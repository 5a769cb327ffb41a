"""Faults in processes: writers and listeners killed, lock races, load."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

from paneboard.protocol.posts import Prompt
from paneboard.state.filelog.log import read_posts
from testing.helpers import Listening, cli_env, wait_until

WRITER = """
import os, sys, time
from pathlib import Path
from paneboard.protocol.posts import Prompt
from paneboard.state.filelog.log import append_posts
log, me = Path(sys.argv[1]), sys.argv[2]
i = 0
while True:
    pid = f"{me}{os.getpid():010d}{i:014d}"
    append_posts(log, [Prompt(id=pid, board="test", sender=me, ts=time.time(), to=("bob",), \
body=str(i))])
    print(pid, flush=True)  # reported: append_posts returned, so it is on disk
    i += 1
"""


@pytest.mark.slow
def test_writers_killed_200_times(home: Path, rng: random.Random) -> None:
    """Four writers; one SIGKILLed at a random moment 200 times and restarted:
    every reported post is there, once."""
    log = home / "test" / "log"
    log.parent.mkdir(mode=0o700)

    def start(k: int) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", WRITER, str(log), f"w{k}"],
            stdout=subprocess.PIPE,
            text=True,
            env=cli_env(home),
        )

    writers = [start(k) for k in range(4)]
    reported: list[str] = []
    for _ in range(200):
        k = rng.randrange(4)
        time.sleep(rng.uniform(0, 0.03))
        writers[k].kill()
        out, _ = writers[k].communicate()
        reported += out.split()
        writers[k] = start(k)
    for w in writers:
        w.kill()
        out, _ = w.communicate()
        reported += out.split()
    ids = [p.id for _, p in read_posts(log)]
    assert len(ids) == len(set(ids))
    assert set(reported) <= set(ids)
    assert len(reported) > 200


def test_ten_listeners_for_one_pane_at_once(home: Path) -> None:
    """Started together: exactly one runs, the other nine exit 4."""
    (home / "test" / "panes").mkdir(parents=True, mode=0o700)
    gate = home / "go"
    script = (
        f"import os, sys, time\nwhile not os.path.exists({str(gate)!r}): time.sleep(0.001)\n"
        "from paneboard.cli import main\n"
        "sys.exit(main(['listen', '--as', 'bob', '--door', 'stdout']))"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(home),
        )
        for _ in range(10)
    ]
    gate.touch()
    wait_until(
        lambda: sum(p.poll() is not None for p in procs) >= 9,
        "nine of the ten listeners have exited",
        30,
        every=0.05,
    )
    losers = [p for p in procs if p.returncode is not None]
    assert 9 == len(losers)
    assert all(p.returncode == 4 for p in losers)
    [winner] = [p for p in procs if p.returncode is None]
    winner.terminate()
    assert 0 == winner.wait(timeout=10)
    for p in procs:
        p.communicate()


# signed as the sender's commands sign (a listener holds an unsigned prompt)
SENDER = """
import sys, time
from pathlib import Path
from paneboard.protocol.ids import new_id
from paneboard.protocol.posts import Prompt, encode
from paneboard.state.filelog.append import append_payloads
from paneboard.state.trust.sealing import Sealer
import os
log, me, n, listeners = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sealer = Sealer(Path(os.environ["PANEBOARD_HOME"]), me)
for i in range(n):
    ts = time.time()
    p = Prompt(id=new_id(ts, os.urandom(10)), board="test", sender=me, ts=ts, \
to=(f"l{i % listeners}",), body=f"{me} {i}")
    append_payloads(log, [sealer.seal(encode(p))])
"""


@pytest.mark.slow
def test_load_20_senders_250_posts_10_listeners(home: Path) -> None:
    """Every prompt delivered exactly once, in each sender's order for each recipient."""
    log = home / "test" / "log"
    listeners = [Listening(home, f"l{k}", "--door", "stdout") for k in range(10)]
    try:
        senders = [
            subprocess.Popen(
                [sys.executable, "-c", SENDER, str(log), f"s{k:02d}", "250", "10"],
                env=cli_env(home),
            )
            for k in range(20)
        ]
        assert [0] * 20 == [s.wait(timeout=120) for s in senders]
        got: dict[str, list[str]] = {}
        for k, lis in enumerate(listeners):
            got[f"l{k}"] = [json.loads(lis.line(timeout=120))["body"] for _ in range(500)]
    finally:
        for lis in listeners:
            lis.stop()
            lis.__exit__()
    for name, bodies in got.items():
        assert len(bodies) == len(set(bodies)) == 500
        by_sender: dict[str, list[int]] = defaultdict(list)
        for body in bodies:
            sender, i = body.split()
            by_sender[sender].append(int(i))
        assert all(seq == sorted(seq) for seq in by_sender.values()), name
    prompts = [p for _, p in read_posts(log) if isinstance(p, Prompt)]
    assert 5_000 == len(prompts)
