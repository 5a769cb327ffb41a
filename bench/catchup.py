"""Catch-up: a listener starting on a board of N posts, with its checkpoint and without."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.baselines import SqliteMailbox
from bench.harness import listener, peak_rss_mb, summary
from paneboard.protocol.posts import Ack, Answer, Delivered, Post, Prompt, encode
from paneboard.protocol.signing import seal
from paneboard.state.filelog.append import append_payloads
from paneboard.state.filelog.compact import compact

AGENTS = [f"agent{i}" for i in range(20)]


def signer() -> Callable[[Post], bytes]:
    """Encode and seal a post as its sender's paneboard would (a key per agent), signing with
    cryptography: the standard library's signer would take most of an hour for a million."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    keys: dict[str, tuple[Any, bytes]] = {}

    def seal_post(post: Post) -> bytes:
        if post.sender not in keys:
            private = Ed25519PrivateKey.generate()
            keys[post.sender] = (private, private.public_key().public_bytes_raw())
        private, public = keys[post.sender]
        return seal(encode(post), public, private.sign)

    return seal_post


def make_board(
    log: Path, n: int, open_for_bob: int = 300, seal_post: Callable[[Post], bytes] = encode
) -> None:
    """A realistic history of *n* posts: prompts among 20 agents, each delivered and closed,
    with *open_for_bob* prompts to bob left open, spread through the log (each post written
    as *seal_post* makes it: encoded, or signed too)."""
    every = max(1, n // 3 // open_for_bob)  # a closed prompt takes three posts
    batch: list[bytes] = []
    i = k = 0
    while i < n:
        k += 1
        ts = 1.7e9 + i
        sender, to = AGENTS[i % 20], AGENTS[(i + 7) % 20]
        pid = f"{i:026d}"
        if k % every == 0:
            posts: list[Post] = [
                Prompt(
                    id=pid, board="bench", sender=sender, ts=ts, to=("bob",), body=f"open work {i}"
                )
            ]
        else:
            about: dict[str, Any] = {"board": "bench", "sender": to, "ts": ts, "prompt_id": pid}
            body = f"please look at item {i} " + "x" * 60
            closing: Post = (
                Ack(id=f"a{i:025d}", **about)
                if i % 2
                else Answer(id=f"a{i:025d}", body="done, see commit abc123", **about)
            )
            posts = [
                Prompt(id=pid, board="bench", sender=sender, ts=ts, to=(to,), body=body),
                Delivered(id=f"d{i:025d}", door="claude-inbox", **about),
                closing,
            ]
        batch += [seal_post(p) for p in posts]
        i += len(posts)
        if len(batch) >= 20_000:
            append_payloads(log, batch)
            batch = []
    if batch:
        append_payloads(log, batch)


def first_delivery(home: Path) -> tuple[float, float]:
    """Seconds from starting `listen` to its first delivered line, and its peak RSS (MB) then.

    The delivered-key log is cleared first, so every run has the same open prompts to hand over.
    """
    (home / "bench" / "panes" / "bob.delivered").unlink(missing_ok=True)
    start = time.perf_counter()
    lis = listener(home, "bob")
    try:
        lis.readline(timeout=120)
        took = time.perf_counter() - start
        return took, peak_rss_mb(lis.p.pid)
    finally:
        lis.stop()


def catch_up(home: Path, sizes: list[int], runs: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in sizes:
        board = home / f"n{n}"
        (board / "bench" / "panes").mkdir(parents=True, mode=0o700)
        log = board / "bench" / "log"
        t0 = time.perf_counter()
        # signed, as paneboard writes: a listener counts no unsigned close or receipt
        make_board(log, n, seal_post=signer())
        row: dict[str, Any] = {
            "posts": n,
            "log_mb": log.stat().st_size / 1e6,
            "build_s": time.perf_counter() - t0,
        }
        cold, warm, cold_rss, warm_rss = [], [], [], []
        checkpoint = board / "bench" / "panes" / "bob.checkpoint"
        for _ in range(runs):
            checkpoint.unlink(missing_ok=True)
            t, rss = first_delivery(board)
            cold.append(t * 1000)
            cold_rss.append(rss)
            t, rss = first_delivery(board)  # the run before left its checkpoint
            warm.append(t * 1000)
            warm_rss.append(rss)
        row |= {
            "cold_ms": summary(cold),
            "cold_rss_mb": max(cold_rss),
            "checkpoint_ms": summary(warm),
            "checkpoint_rss_mb": max(warm_rss),
        }
        done = compact(log, time.time())
        checkpoint.unlink(missing_ok=True)
        after, _ = first_delivery(board)
        row["compact"] = {
            "seconds": done.seconds,
            "before_mb": done.before_bytes / 1e6,
            "after_mb": done.after_bytes / 1e6,
            "kept": done.kept,
            "cold_after_ms": after * 1000,
        }
        row["sqlite_poll_ms"] = _sqlite_catch_up(home / f"sq{n}", n, runs)
        _remove_tree(board)
        out[str(n)] = row
    return out


def _sqlite_catch_up(folder: Path, n: int, runs: int) -> dict[str, Any]:
    """The SQLite mailbox receiver's first poll on a table of *n* rows, 300 unread."""
    box = SqliteMailbox(folder, 5.0)
    box.fill(n, "bob", 300)
    times = []
    for _ in range(runs):
        with sqlite3.connect(box.db) as db:
            db.execute("UPDATE messages SET read=0 WHERE recipient='bob'")
        t0 = time.perf_counter()
        box.poll_once("bob")
        times.append((time.perf_counter() - t0) * 1000)
    _remove_tree(folder)
    return summary(times)


def _remove_tree(path: Path) -> None:
    for root, dirs, files in os.walk(path, topdown=False):
        for name in files:
            os.unlink(os.path.join(root, name))
        for name in dirs:
            os.rmdir(os.path.join(root, name))
    os.rmdir(path)
