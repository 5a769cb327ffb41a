"""Send cost, append throughput, size on disk, and concurrent writers."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.harness import PY, env_for, listener, summary, wait_ready
from bench.latency import prompt
from paneboard.protocol.posts import encode
from paneboard.state.filelog.append import append_payloads
from paneboard.state.filelog.framing import OVERHEAD
from paneboard.state.filelog.log import read_posts


def _wall(argv: list[str], env: dict[str, str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def post_cli(home: Path, runs: int, baselines: dict[str, Any]) -> dict[str, Any]:
    """`paneboard post` against `python -c pass` (interleaved), and post -> door end to end."""
    env = env_for(home, PANEBOARD_AGENT="alice")
    bare, post = [], []
    for _ in range(runs):
        bare += _wall([PY, "-c", "pass"], env, 1)
        post += _wall([PY, "-m", "paneboard", "post", "--to", "nobody", "hi"], env, 1)
    lis = listener(home, "bob")
    end_to_end = []
    try:
        wait_ready(home, "bob")
        for _ in range(max(5, runs // 2)):
            t0 = time.perf_counter()
            subprocess.run(
                [PY, "-m", "paneboard", "post", "--to", "bob", "hi"],
                env=env,
                stdout=subprocess.DEVNULL,
                check=True,
            )
            lis.readline()
            end_to_end.append((time.perf_counter() - t0) * 1000)
    finally:
        lis.stop()
    out: dict[str, Any] = {
        "python_pass_ms": summary(bare),
        "post_ms": summary(post),
        "post_to_door_ms": summary(end_to_end),
    }
    out["ratio_post_to_pass"] = out["post_ms"]["median"] / out["python_pass_ms"]["median"]
    for name, box in baselines.items():
        times = []
        for i in range(max(5, runs // 2)):
            t0 = time.perf_counter()
            box.send("bob", f"message {i}")
            times.append((time.perf_counter() - t0) * 1000)
        out[f"{name}_send_ms"] = summary(times)
    return out


def append_rate(home: Path, n: int, batch: int) -> dict[str, Any]:
    """Durable posts/s through the Python API, one by one and batched,
    against SQLite's durable insert."""
    log = home / "append.log"
    payloads = [encode(prompt(("bob",), f"message {i}")) for i in range(n)]
    t0 = time.perf_counter()
    for p in payloads:
        append_payloads(log, [p])
    one = n / (time.perf_counter() - t0)
    log.unlink()
    many = [encode(prompt(("bob",), f"message {i}")) for i in range(n * 20)]
    t0 = time.perf_counter()
    for i in range(0, len(many), batch):
        append_payloads(log, many[i : i + batch])
    batched = len(many) / (time.perf_counter() - t0)
    db = sqlite3.connect(home / "append.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute(
        "CREATE TABLE messages(id INTEGER PRIMARY KEY, recipient TEXT, body TEXT, "
        "read INTEGER DEFAULT 0)"
    )
    t0 = time.perf_counter()
    for i in range(n):
        db.execute("INSERT INTO messages(recipient, body) VALUES(?, ?)", ("bob", f"message {i}"))
    sqlite_rate = n / (time.perf_counter() - t0)
    db.close()
    return {
        "one_by_one_per_s": one,
        "batched_per_s": batched,
        "batch": batch,
        "sqlite_wal_full_per_s": sqlite_rate,
        "ratio_one_by_one_to_sqlite": one / sqlite_rate,
    }


def size(home: Path, n: int) -> dict[str, Any]:
    """Bytes on disk per post against the encoded post."""
    log = home / "size.log"
    payloads = [
        encode(prompt(("bob",), f"please review the change in file{i}.py")) for i in range(n)
    ]
    append_payloads(log, payloads)
    encoded = sum(map(len, payloads)) / n
    return {
        "encoded_bytes": encoded,
        "on_disk_bytes": log.stat().st_size / n,
        "frame_overhead_bytes": OVERHEAD,
    }


WRITER = """
import sys
from pathlib import Path
from bench.latency import prompt
from paneboard.protocol.posts import encode
from paneboard.state.filelog.append import append_payloads
log, me, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for i in range(n):
    append_payloads(log, [encode(prompt(("bob",), f"{me} {i}"))])
"""


def concurrency(home: Path, writers: int, each: int) -> dict[str, Any]:
    """*writers* processes appending at once: posts/s, and every post there exactly once."""
    log = home / "conc.log"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    t0 = time.perf_counter()
    procs = [
        subprocess.Popen([PY, "-c", WRITER, str(log), f"w{k}", str(each)], env=env)
        for k in range(writers)
    ]
    codes = [p.wait() for p in procs]
    took = time.perf_counter() - t0
    bodies = [p.body for _, p in read_posts(log)]  # type: ignore[union-attr]
    return {
        "writers": writers,
        "posts": writers * each,
        "posts_per_s": writers * each / took,
        "exit_codes_ok": codes == [0] * writers,
        "all_present_once": sorted(bodies)
        == sorted(f"w{k} {i}" for k in range(writers) for i in range(each)),
    }
