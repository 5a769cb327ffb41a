"""`who` counts the prompts held for each agent as `status` does: a forged or unsigned `held`
holds nothing, and a forged answer does not end a genuine hold."""

from __future__ import annotations

import json
from pathlib import Path

from paneboard.board.context import header
from paneboard.protocol.posts import Answer, Held
from testing.helpers import run_cli
from tests.forgeries import append_as, forged_board


def _held(pid: str) -> Held:
    return Held(**header("test", "bob"), prompt_id=pid, door="exec", by="policy", reason="rate")


def test_who_counts_only_verified_holds(home: Path, tmp_path: Path, store_url: str) -> None:
    forged_board(home, tmp_path / "other")  # pins alice and bob
    other = tmp_path / "other"
    kept, forged, unsigned = (
        run_cli(home, "post", "--as", "alice", "--to", "bob", f"held {n}").stdout.strip()
        for n in range(3)
    )
    append_as(home, "bob", _held(kept), home)
    append_as(home, "bob", Answer(**header("test", "bob"), prompt_id=kept, body="x"), other)
    append_as(home, "bob", _held(forged), other)
    append_as(home, "bob", _held(unsigned), None)
    done = run_cli(home, "who", "--json")
    assert (0, "") == (done.returncode, done.stderr)
    rows = {row["agent"]: row for row in map(json.loads, done.stdout.splitlines())}
    assert (1, 0) == (rows["bob"]["held"], rows["alice"]["held"])
    status = run_cli(home, "status", kept).stdout
    assert "held by the policy (rate)" in status, status
