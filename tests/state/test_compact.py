"""Compaction: only open prompts stay; safe with writers appending and listeners running."""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path

from paneboard.protocol.posts import Ack, Cancel, Prompt
from paneboard.state.filelog.compact import compact
from paneboard.state.filelog.log import append_posts, read_posts
from paneboard.state.fold import fold, open_for
from paneboard.state.trust.policy import Policy, write_policy
from testing.helpers import Listening, cli_env, post, run_cli
from tests.factories import prompt


def _id(tag: str) -> str:
    """A valid post id standing for *tag*."""
    return f"{zlib.crc32(tag.encode()):026d}"


def _p(pid: str, *, expires: float | None = None) -> Prompt:
    return prompt(id=_id(pid), ts=1.0, to=("bob", "carol"), body="x", expires=expires)


def test_compaction_keeps_open_prompts_and_their_posts(tmp_path: Path) -> None:
    """Closed, cancelled and expired prompts go; open ones keep every post about them, in order."""
    (tmp_path / "b").mkdir()
    log = tmp_path / "b" / "log"  # board `b`'s log: compaction drops another board's records

    def ack(who: str, pid: str) -> Ack:
        return Ack(id=_id(f"a-{who}-{pid}"), board="b", sender=who, ts=2.0, prompt_id=_id(pid))

    append_posts(
        log,
        [
            _p("open"),
            _p("closed"),
            _p("gone"),
            _p("old", expires=5.0),
            ack("bob", "open"),
            ack("bob", "closed"),
            ack("carol", "closed"),
            Cancel(id=_id("c1"), board="b", sender="alice", ts=2.0, prompt_id=_id("gone")),
        ],
    )
    before = fold(read_posts(log))
    done = compact(log, now=10.0)
    after = [p for _, p in read_posts(log)]
    assert [_id("open"), _id("a-bob-open")] == [p.id for p in after]
    assert (2, 6) == (done.kept, done.dropped)
    assert [ps.prompt.id for ps in open_for(before, "carol", 10.0)] == [
        ps.prompt.id for ps in open_for(fold(read_posts(log)), "carol", 10.0)
    ]


# alice's prompts, signed as her commands sign them (a listener holds unsigned ones)
WRITER = """
import os, sys, time
from pathlib import Path
from paneboard.protocol.posts import Prompt, encode
from paneboard.state.filelog.append import append_payloads
from paneboard.state.trust.sealing import Sealer
log, n = Path(sys.argv[1]), int(sys.argv[2])
sealer = Sealer(Path(os.environ["PANEBOARD_HOME"]), "alice")
for i in range(n):
    p = Prompt(id=f"w{i:025d}", board="test", sender="alice", ts=time.time(), to=("bob",), \
body=str(i))
    append_payloads(log, [sealer.seal(encode(p))])
"""


def test_compaction_while_writing_and_listening_loses_and_repeats_nothing(home: Path) -> None:
    """A writer appends and a listener delivers throughout five compactions:
    every post arrives once (the posts kept, signatures and all, as they were written)."""
    log = home / "test" / "log"
    first = post(home, "--to", "bob", "before")
    (home / "test" / "panes").mkdir(exist_ok=True)
    write_policy(home / "test", "bob", Policy(rate=0))  # 400 prompts from alice at once
    with Listening(home, "bob", "--door", "stdout") as bob:
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(log), "400"], env=cli_env(home)
        )
        compactions = 0
        while writer.poll() is None or compactions < 5:
            assert 0 == run_cli(home, "compact").returncode
            compactions += 1
        assert 0 == writer.wait()
        got = [json.loads(bob.line())["id"] for _ in range(401)]
    assert sorted([first, *(f"w{i:025d}" for i in range(400))]) == sorted(got)
    assert len(got) == len(set(got))
    assert 401 == len([p for _, p in read_posts(log) if isinstance(p, Prompt)])


def test_compact_command_reports_and_archives(home: Path) -> None:
    pid = post(home, "--to", "bob", "done soon")
    assert 0 == run_cli(home, "ack", "--as", "bob", pid).returncode
    done = run_cli(home, "compact", "--archive", "--json")
    report = json.loads(done.stdout)
    assert (0, 0, 2) == (done.returncode, report["kept"], report["dropped"])
    [archived] = (home / "test" / "archive").iterdir()
    assert 2 == len(read_posts(archived))
    assert [] == read_posts(home / "test" / "log")
