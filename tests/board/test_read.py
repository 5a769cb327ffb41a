"""The board's reading operations, through the real command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from testing.helpers import post, run_cli


def _json(home: Path, *args: str) -> list[Any]:
    done = run_cli(home, *args, "--json")
    assert (0, "") == (done.returncode, done.stderr)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_a_cancelled_recipients_ts_is_when_it_was_cancelled(home: Path) -> None:
    """`status --json` gives each recipient the time it reached its stage: for `cancelled`,
    the cancel's time, and the prompt's own fields beside `recipients`, `doubted` (the
    posts that moved nothing: none here) and `waits` (past the rate: none)."""
    pid = post(home, "--to", "bob", "never mind")
    [cancel] = _json(home, "cancel", "--as", "alice", pid)
    [status] = _json(home, "status", pid)
    [prompt] = _json(home, "log", "--kind", "prompt")
    assert "verified" == prompt.pop("verdict")  # `log` adds each post's verdict to its fields
    mine = {"recipients": {"bob": status["recipients"]["bob"]}, "doubted": [], "waits": {}}
    assert {**prompt, **mine} == status
    assert ("cancelled", cancel["ts"]) == (
        status["recipients"]["bob"]["stage"],
        status["recipients"]["bob"]["ts"],
    )


def test_an_expired_recipients_ts_is_when_the_prompt_expired(home: Path) -> None:
    pid = post(home, "--to", "bob", "--ttl", "0.001", "soon gone")
    [status] = _json(home, "status", pid)
    bob = status["recipients"]["bob"]
    assert ("expired", status["expires"]) == (bob["stage"], bob["ts"])


def test_log_pages_after_an_id_and_says_how_many_more_follow(home: Path) -> None:
    """`log --limit N` is the newest N; with `--after ID`, the first N after that post, and
    stderr says how many more follow and how to read them."""
    ids = [post(home, "--to", "bob", f"prompt {i}") for i in range(5)]
    newest = run_cli(home, "log", "--json", "--limit", "2")
    assert (0, "") == (newest.returncode, newest.stderr)
    assert ids[3:] == [json.loads(line)["id"] for line in newest.stdout.splitlines()]
    page = run_cli(home, "log", "--json", "--after", ids[1], "--limit", "2")
    assert ids[2:4] == [json.loads(line)["id"] for line in page.stdout.splitlines()]
    assert (0, f"paneboard: 1 more posts: log --after {ids[3]}\n") == (
        page.returncode,
        page.stderr,
    )


def test_log_follow_takes_no_page(home: Path) -> None:
    post(home, "--to", "bob", "hi")
    done = run_cli(home, "log", "--follow", "--limit", "1")
    message = "paneboard: log --follow prints every post from the start: drop --after and --limit\n"
    assert (1, "", message) == (done.returncode, done.stdout, done.stderr)
