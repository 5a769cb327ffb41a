"""`paneboard log` marks each post's verdict as `status` counts it: a forged or unsigned post
ends with `[forged]` or `[unsigned]`, and `--json` adds `verdict` after a post's fields."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from testing.helpers import PANEBOARD, cli_env, run_cli
from tests.forgeries import Forged, forged_board


def _lines(home: Path, *args: str) -> list[str]:
    done = run_cli(home, "log", *args)
    assert (0, "") == (done.returncode, done.stderr)
    return done.stdout.splitlines()


def _expected(board: Forged, ids: list[str]) -> dict[str, str]:
    """Every post's verdict: those `forged_board` spoiled, the rest verified."""
    return {pid: board.posts.get(pid, "verified") for pid in ids}


def test_log_marks_posts_that_are_not_verified(home: Path, tmp_path: Path, store_url: str) -> None:
    board = forged_board(home, tmp_path / "other")
    rows = [json.loads(line) for line in _lines(home, "--json")]
    ids = [row["id"] for row in rows]
    assert _expected(board, ids) == {row["id"]: row["verdict"] for row in rows}
    assert all(list(row)[-1] == "verdict" for row in rows)  # added after the post's own fields
    shown = _lines(home)
    marks = {line.split()[2]: line.rsplit("  ", 1)[-1] for line in shown}
    assert {pid: f"[{v}]" for pid, v in board.posts.items()} == {
        pid: mark for pid, mark in marks.items() if mark.startswith("[")
    }
    assert 11 == len(shown)  # five prompts, bob's answer, five spoiled posts
    verified = [line for line in shown if line.split()[2] not in board.posts]
    assert [False] * 6 == [line.endswith(("[forged]", "[unsigned]")) for line in verified]
    newest = _lines(home, "--limit", "2", "--json")
    assert ["unsigned", "unsigned"] == [json.loads(line)["verdict"] for line in newest]


def test_log_follow_marks_posts_as_they_come(home: Path, tmp_path: Path, store_url: str) -> None:
    """`log --follow` marks the posts already there and the ones appended while it runs."""
    board = forged_board(home, tmp_path / "other")
    argv = [*PANEBOARD, "log", "--follow", "--json"]
    pipe = subprocess.PIPE
    proc = subprocess.Popen(argv, stdout=pipe, stderr=pipe, env=cli_env(home), text=True)
    try:
        assert proc.stdout is not None
        rows = [json.loads(proc.stdout.readline()) for _ in range(11)]
        answered = run_cli(home, "answer", "--as", "bob", board.unsigned, "done now")
        assert 0 == answered.returncode, answered.stderr
        rows.append(json.loads(proc.stdout.readline()))
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
    assert (0, "", "") == (proc.returncode, out, err)
    assert _expected(board, [row["id"] for row in rows]) == {r["id"]: r["verdict"] for r in rows}
    assert ("answer", "verified") == (rows[-1]["kind"], rows[-1]["verdict"])
