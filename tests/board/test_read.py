"""The board's reading operations, through the real command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paneboard.board.context import Context
from paneboard.board.read import StageTime, status_of
from paneboard.protocol.posts import Answer, Approved, Delivered, Held, Read, Seen
from paneboard.state.fold import fold
from paneboard.state.trust.keys import Pins
from testing.helpers import post, run_cli
from tests import factories


def _json(home: Path, *args: str) -> list[Any]:
    done = run_cli(home, *args, "--json")
    assert (0, "") == (done.returncode, done.stderr)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_a_cancelled_recipients_ts_is_when_it_was_cancelled(home: Path) -> None:
    """`status --json` gives each recipient the time it reached its stage: for `cancelled`,
    the cancel's time, and the prompt's own fields beside `recipients`, `doubted` (the
    posts that moved nothing: none here), `waits` (past the rate: none) and `stages` (each
    stage with its time and the seconds since the one before)."""
    pid = post(home, "--to", "bob", "never mind")
    [cancel] = _json(home, "cancel", "--as", "alice", pid)
    [status] = _json(home, "status", pid)
    [prompt] = _json(home, "log", "--kind", "prompt")
    assert "verified" == prompt.pop("verdict")  # `log` adds each post's verdict to its fields
    stages = [
        {"stage": "posted", "at": prompt["ts"], "after": None},
        {"stage": "cancelled", "at": cancel["ts"], "after": cancel["ts"] - prompt["ts"]},
    ]
    mine = {
        "recipients": {"bob": status["recipients"]["bob"]},
        "doubted": [],
        "waits": {},
        "stages": {"bob": stages},
    }
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


V1 = Path(__file__).parent.parent / "fixtures" / "board-79ca2e6"


def test_a_board_signed_before_signatures_named_it_reads_with_its_verdicts(home: Path) -> None:
    """A log paneboard 79ca2e6 wrote (tests/fixtures/board-79ca2e6), read in a home that pins
    the keys of the home that wrote it: each record gets the verdict 79ca2e6 gave it (alice's
    signature verified, the unsigned one unsigned, the other key's forged), bob's open prompts
    are the ones 79ca2e6 listed, and bob's signed ack and answer still close their prompts.

    (Read as bob in a home of its own, bob's old posts would be forged: a home's own agent's key
    is its pin, and this home's bob key is not the one that signed them.)"""
    import time

    from paneboard.state.fold import BoardState, fold_checked, open_for
    from paneboard.state.trust.verdicts import Verdicts, read_checked

    expected = json.loads((V1 / "expected.json").read_text())
    (home / "b").mkdir(mode=0o700)
    (home / "b" / "log").write_bytes((V1 / "log").read_bytes())
    (home / "b" / "log").chmod(0o600)
    pins = Pins(home / "b")
    for agent, fingerprint in expected["pins"].items():
        pins.trust(agent, fingerprint)
    with Context(home, "b", "bob") as ctx:
        store = ctx.store()
        verdicts = Verdicts(home / "b")
        records = read_checked(store, verdicts)
        follower = store.follow(0)
        try:
            payloads = [raw for batch in follower.records() for _, _, raw in batch]
        finally:
            follower.close()
    assert [(r["id"], r["verdict"]) for r in expected["records"]] == [
        (post.id, verdicts.verdict(post.sender, raw))
        for (_, post, _), raw in zip(records, payloads, strict=True)
    ]
    state = fold_checked(records, BoardState(recipient="bob"))
    assert expected["open"] == [ps.prompt.id for ps in open_for(state, "bob", time.time())]
    closed = [r["id"] for r in expected["records"] if r["kind"] == "prompt"][1:3]
    stages = [
        _json(home, "status", pid, "--board", "b")[0]["recipients"]["bob"]["stage"]
        for pid in closed
    ]
    assert ["acked", "answered"] == stages


def test_a_board_signed_before_signatures_named_it_is_damaged_as_another_board() -> None:
    """The same log read as board `c`: every record names `b`, so every one is damaged (a post
    signed before signatures named the board, copied to another, is skipped there)."""
    import warnings

    from paneboard.protocol.errors import DamagedRecord
    from paneboard.state.filelog.log import LogReader

    reader = LogReader(V1 / "log", board="c")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DamagedRecord)
        assert [] == reader.read_new()
    assert (7, 7) == (reader.damaged, len(caught))
    assert all("(`board`: `b` is not the board read, `c`)" in str(w.message) for w in caught)


def test_stage_times_follow_the_times_and_keep_a_held_prompts_hold() -> None:
    """Held, approved, delivered, then read before its notice was seen, then answered: each
    stage with its time in the order they happened, `after` the seconds since the one before;
    the hold's time stays once a person approved it."""
    head = {"board": "b", "sender": "bob"}
    posts = [
        factories.prompt(1, id="p" * 26, ts=10.0),
        Held(id="h", ts=11.0, prompt_id="p" * 26, door="stdout", by="policy", reason="r", **head),
        Approved(id="a", ts=15.0, prompt_id="p" * 26, **head),
        Delivered(id="d", ts=15.5, prompt_id="p" * 26, door="claude-inbox", **head),
        Read(id="r", ts=20.0, prompt_id="p" * 26, via="mcp", **head),
        Seen(id="s", ts=21.0, prompt_id="p" * 26, door="claude-inbox", source="x", **head),
        Answer(id="n", ts=30.0, prompt_id="p" * 26, body="ok", **head),
    ]
    status = status_of(fold(enumerate(posts)).prompts["p" * 26], now=40.0)
    assert [
        StageTime("posted", 10.0),
        StageTime("held", 11.0, 1.0),
        StageTime("approved", 15.0, 4.0),
        StageTime("delivered", 15.5, 0.5),
        StageTime("read", 20.0, 4.5),
        StageTime("seen", 21.0, 1.0),
        StageTime("answered", 30.0, 9.0),
    ] == status.stages["bob"]
