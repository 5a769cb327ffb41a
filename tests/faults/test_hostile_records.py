"""Hostile records on both stores: every reader and the listener skip each with a warning that
names it, still hand over the next legitimate prompt, and write nothing outside the home."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from paneboard.state.filelog.append import append_payloads
from paneboard.state.nats.store import NatsStore
from testing.helpers import Listening, post, run_cli, run_hook
from tests.faults.hostile import (
    CORPUS,
    PRESENCE,
    PRESENCE_REASON,
    TRAVERSAL,
    file_warning,
    nats_warning,
    publish,
    put_presence,
)

STOP = {"hook_event_name": "Stop", "stop_hook_active": False}


class Board:
    """A board holding a closed seed prompt, the whole corpus, then one open legitimate prompt."""

    def __init__(self, home: Path, url: str) -> None:
        self.home, self.url = home, url
        self.seed = post(home, "--to", "bob", "seed")
        self.warnings = store_corpus(home, url)
        self.presence = store_presence(home, url)
        self.after: str = ""

    def close_seed_and_post_after(self) -> None:
        acked = run_cli(self.home, "ack", "--as", "bob", self.seed)
        assert (0, self.warnings) == (acked.returncode, warning_lines(acked.stderr))
        self.after = post(self.home, "--to", "bob", "after the corpus")


def store_corpus(home: Path, url: str) -> set[str]:
    """Store every hostile payload on the board; the warning lines a reader prints for them."""
    payloads = [entry.payload for entry in CORPUS]
    if not url:
        log = home / "test" / "log"
        offsets = append_payloads(log, payloads)
        return {file_warning(str(log), o, e) for o, e in zip(offsets, CORPUS, strict=True)}
    store = NatsStore(url, "test")
    stream, subject = store.stream, store.subject
    store.close()
    seqs = publish(_server(url), subject, payloads)
    return {nats_warning(stream, s, e) for s, e in zip(seqs, CORPUS, strict=True)}


def store_presence(home: Path, url: str) -> set[str]:
    """A hostile presence for bob in the pane folder (and for carol on NATS); their warnings."""
    path = home / "test" / "panes" / "bob.presence"
    path.parent.mkdir(mode=0o700, exist_ok=True)
    path.write_bytes(PRESENCE)
    size = len(PRESENCE)
    lines = {f"paneboard: warning: {path}: skipped {size} damaged bytes at offset 0 ("}
    if url:
        store = NatsStore(url, "test")
        bucket, key = store.presence.bucket, f"{store.stream}.carol"
        store.close()
        put_presence(_server(url), bucket, key, PRESENCE)
        where = "presence of `carol`"
        lines.add(f"paneboard: warning: {where}: skipped {size} damaged bytes at offset 0 (")
    return {f"{line}{PRESENCE_REASON})" for line in lines}


def _server(url: str) -> str:
    return url[: url.rindex("/")]


def warning_lines(stderr: str) -> set[str]:
    return set(stderr.splitlines())


class Snapshot(NamedTuple):
    files: frozenset[str]


def outside(tmp_path: Path, home: Path) -> Snapshot:
    """Every path under the test's folder that is not in the home."""
    found = set()
    for root, dirs, files in os.walk(tmp_path):
        if Path(root) == home:
            dirs.clear()
            continue
        found.update(os.path.join(root, name) for name in [*dirs, *files])
    return Snapshot(frozenset(found - {str(home)}))


@pytest.fixture
def board(home: Path, store_url: str, tmp_path: Path) -> Iterator[Board]:
    before = outside(tmp_path, home)
    made = Board(home, store_url)
    made.close_seed_and_post_after()
    yield made
    assert before == outside(tmp_path, home)


def test_open_lists_only_the_legitimate_prompt(board: Board) -> None:
    """`open` survives every hostile record, names each in a warning, lists the real prompt."""
    done = run_cli(board.home, "open", "--as", "bob", "--json")
    assert (0, board.warnings) == (done.returncode, warning_lines(done.stderr))
    assert [board.after] == [json.loads(line)["id"] for line in done.stdout.splitlines()]


def test_log_lists_only_the_legitimate_posts(board: Board) -> None:
    """`log` (human and JSON) shows the seed, its ack and the next prompt, nothing hostile."""
    done = run_cli(board.home, "log", "--json")
    assert (0, board.warnings) == (done.returncode, warning_lines(done.stderr))
    posts = [json.loads(line) for line in done.stdout.splitlines()]
    assert [("prompt", board.seed), ("ack", board.seed), ("prompt", board.after)] == [
        (p["kind"], p.get("prompt", p["id"])) for p in posts
    ]
    human = run_cli(board.home, "log")
    assert (0, board.warnings, 3) == (
        human.returncode,
        warning_lines(human.stderr),
        len(human.stdout.splitlines()),
    )
    assert "\x1b" not in human.stdout
    assert [] == [word for word in ("mallory", "hostile") if word in human.stdout]


def test_status_and_wait_survive_hostile_records(board: Board) -> None:
    """`status` of the next prompt and `wait` on the closed seed exit 0, with the warnings."""
    status = run_cli(board.home, "status", board.after, "--json")
    assert (0, board.warnings) == (status.returncode, warning_lines(status.stderr))
    assert board.after == json.loads(status.stdout)["id"]
    waited = run_cli(board.home, "wait", board.seed, "--timeout", "5")
    assert (0, board.warnings, "") == (
        waited.returncode,
        warning_lines(waited.stderr),
        waited.stdout,
    )


def test_who_lists_only_checked_names_and_skips_a_hostile_presence(board: Board) -> None:
    """`who` lists alice and bob, never a hostile record's names, and skips a damaged presence
    (escape sequences, a time of 1e300) with a warning."""
    done = run_cli(board.home, "who", "--json")
    assert (0, board.warnings | board.presence) == (done.returncode, warning_lines(done.stderr))
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [("alice", False, None), ("bob", False, None)] == [
        (r["agent"], r["listening"], r["last_delivery"]) for r in rows
    ]


def test_doctor_counts_the_damaged_records(board: Board) -> None:
    """`doctor` reads the whole board, exits 0, and its board line warns with the count."""
    done = run_cli(board.home, "doctor", "--as", "bob")
    [line] = [line for line in done.stdout.splitlines() if " board " in line]
    if board.url:
        assert line.startswith("warn  board    `test` on ")
        assert f": 3 posts, {len(CORPUS)} damaged record(s) skipped; " in line
    else:
        size = (board.home / "test" / "log").stat().st_size
        skipped = f"{len(CORPUS)} damaged span(s) skipped"
        assert f"warn  board    `test`: 3 records, {size} bytes, {skipped}" == line
    local_presence = {w for w in board.presence if "presence of" not in w}
    assert (0, local_presence) == (done.returncode, warning_lines(done.stderr))


# `compact` rewrites the file log only (a NATS stream is bounded by its own limits).
@pytest.mark.parametrize("store_url", ["file"], indirect=True)
def test_compact_drops_the_damaged_records(board: Board) -> None:
    """`compact` survives the corpus and leaves a log that reads without a warning."""
    done = run_cli(board.home, "compact", "--json")
    assert (0, board.warnings) == (done.returncode, warning_lines(done.stderr))
    assert (1, 2) == (json.loads(done.stdout)["kept"], json.loads(done.stdout)["dropped"])
    after = run_cli(board.home, "open", "--as", "bob", "--json")
    assert (0, "") == (after.returncode, after.stderr)
    assert [board.after] == [json.loads(line)["id"] for line in after.stdout.splitlines()]


def test_hook_stop_hands_over_the_next_legitimate_prompt(board: Board) -> None:
    """The Stop hook blocks with the real prompt only, and warns of each damaged record."""
    done = run_hook(board.home, "stop", "claude", STOP, "--as", "bob")
    assert (0, board.warnings) == (done.returncode, warning_lines(done.stderr))
    reason = json.loads(done.stdout)["reason"]
    assert board.after in reason
    assert "hostile" not in reason
    assert "\x1b" not in reason


def test_a_listener_started_on_a_poisoned_board_delivers_the_next_prompt(board: Board) -> None:
    """A listener catching up past every hostile record delivers the real prompt, and keeps
    running (no restart loop on NATS)."""
    with Listening(board.home, "bob", "--door", "stdout") as bob:
        assert board.after == json.loads(bob.line())["id"]
        third = post(board.home, "--to", "bob", "and one more")
        assert third == json.loads(bob.line())["id"]
        assert 0 == bob.stop()
    assert board.warnings <= set(bob.stderr_lines) | _rest(bob)


def _rest(bob: Listening) -> set[str]:
    lines = set()
    while (line := bob.err.get(timeout=10)) is not None:
        lines.add(line)
    return lines


def test_a_running_listener_survives_hostile_records(
    home: Path, store_url: str, tmp_path: Path
) -> None:
    """Hostile records arriving while a listener runs are skipped with a warning each; the
    next legitimate prompt is delivered."""
    before = outside(tmp_path, home)
    first = post(home, "--to", "bob", "before")
    with Listening(home, "bob", "--door", "stdout") as bob:
        assert first == json.loads(bob.line())["id"]
        warnings = store_corpus(home, store_url)
        nxt = post(home, "--to", "bob", "after the corpus")
        assert nxt == json.loads(bob.line())["id"]
        assert bob.proc.poll() is None
        assert 0 == bob.stop()
        assert warnings <= set(bob.stderr_lines) | _rest(bob)
    assert before == outside(tmp_path, home)


def test_an_ack_never_turns_a_hostile_sender_into_a_path(
    home: Path, store_url: str, tmp_path: Path
) -> None:
    """The prompt whose sender climbs out of the home is damaged: `ack` of its id finds no
    post, and nothing is written beside the home."""
    before = outside(tmp_path, home)
    post(home, "--to", "bob", "seed")
    store_corpus(home, store_url)
    done = run_cli(home, "ack", "--as", "bob", "01m8hst0000000000000000002")
    assert 1 == done.returncode
    assert (
        "paneboard: board `test`: no post matches `01m8hst0000000000000000002`"
        == (done.stderr.splitlines()[-1])
    )
    assert not (tmp_path / "target").exists()
    assert TRAVERSAL.startswith("../../../target/")
    assert before == outside(tmp_path, home)


@pytest.mark.parametrize("make", [lambda p: os.mkfifo(p, 0o600), lambda p: p.mkdir()])
def test_a_fifo_in_place_of_the_log_is_refused_at_once(
    home: Path, make: Callable[[Path], None]
) -> None:
    """A log that is not a regular file (a FIFO, a folder) is refused in one line naming it; the
    reader never blocks."""
    (home / "test").mkdir(mode=0o700)
    make(home / "test" / "log")
    started = time.monotonic()
    done = run_cli(home, "open", "--as", "bob", timeout=10)
    log = home / "test" / "log"
    assert (1, f"paneboard: cannot read {log}: not a regular file\n") == (
        done.returncode,
        done.stderr,
    )
    assert time.monotonic() - started < 10


def test_a_tally_that_cannot_be_written_warns_after_the_ack(home: Path) -> None:
    """The open-prompt tally is best effort after the ack is written: a warning, exit 0, and
    the ack is on the board once."""
    pid = post(home, "--to", "bob", "hi")
    senders = home / "test" / "senders"
    for entry in senders.iterdir():
        entry.unlink()
    senders.rmdir()
    senders.write_text("not a folder\n")
    done = run_cli(home, "ack", "--as", "bob", pid)
    assert (0, "") == (done.returncode, done.stdout)
    warning = f"paneboard: warning: the open-prompt tally: cannot update {senders}/alice.open"
    assert [f"{warning}: {senders} is not a folder"] == done.stderr.splitlines()
    again = run_cli(home, "ack", "--as", "bob", pid)
    assert 1 == again.returncode
    log = run_cli(home, "log", "--json", "--kind", "ack")
    assert 1 == len(log.stdout.splitlines())


def test_post_refuses_more_than_100_recipients(home: Path) -> None:
    """`post --to` past the limit is one line, exit 1, nothing written."""
    to = [arg for i in range(101) for arg in ("--to", f"r{i}")]
    done = run_cli(home, "post", "--as", "alice", *to, "hi")
    assert (1, "paneboard: 101 recipients; a prompt may have at most 100\n") == (
        done.returncode,
        done.stderr,
    )
    assert not (home / "test" / "log").exists()
    at_limit = run_cli(home, "post", "--as", "alice", *to[:200], "hi")
    assert 0 == at_limit.returncode, at_limit.stderr


@pytest.mark.parametrize("ts", [float("inf"), float("-inf"), float("nan"), 1e300, -1e20])
def test_a_time_no_clock_can_show_is_printed_as_a_question_mark(ts: float) -> None:
    """The command line's and `top`'s clocks never raise on a time (a checkpoint, a presence)."""
    from paneboard.board.text import clock
    from paneboard.top.rows import time_of_day

    assert ("?", "?") == (clock(ts), time_of_day(ts))
