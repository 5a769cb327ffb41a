"""Qwen Code 0.24.4, live and offline: the `qwen-inbox` door, Qwen Code's own receipts, and
`seen` from its session file."""

from __future__ import annotations

import json
import shutil
import statistics
import time
from collections.abc import Iterator

import pytest

from paneboard.agents import qwen_inbox as qwen
from paneboard.protocol.posts import Delivered, Held, Post, Undelivered
from paneboard.state.filelog.log import read_posts
from paneboard.state.panes import presence
from paneboard.state.panes.lock import holder
from paneboard.state.trust.policy import Policy, write_policy
from testing.clients import PINNED
from testing.helpers import run_cli, wait_until
from testing.qwen_session import QwenSession
from testing.sessions import post, status
from tests.real.live import UNTIMED

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is missing: no live Qwen Code session"
)
# All but the busy session's test (a prompt delivered during a 4 s turn) and the held prompts'
# (released by the person: its `delivered` was not posted within 60 s in four workers at a load
# of 9) only wait: `UNTIMED`.


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QwenSession]:
    """One live Qwen Code TUI for this module's tests."""
    found = PINNED["qwen"].installed()
    if found is None:
        pytest.skip(PINNED["qwen"].missing)
    s = QwenSession(tmp_path_factory.mktemp("qwen"), found)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture(scope="module")
def controller(session: QwenSession) -> dict[str, str]:
    return session.controller()


def _stage(s: QwenSession, prompt: str, agent: str) -> tuple[str, str, str]:
    got = status(s.pb_home, prompt, agent)
    return got["stage"], got.get("door", ""), got.get("outcome", "")


def _posts(s: QwenSession, kind: type[Post], prompt: str) -> list[Post]:
    log = s.pb_home / "test" / "log"
    return [p for _, p in read_posts(log) if isinstance(p, kind) and p.prompt_id == prompt]


def _delivered(s: QwenSession, prompt: str, timeout: float = 60) -> Delivered:
    """The listener's `delivered` receipt for *prompt*, once it is on the board."""
    what = f"{prompt} not delivered"
    [receipt] = wait_until(lambda: _posts(s, Delivered, prompt), what, timeout, s.screen, every=0.1)
    assert isinstance(receipt, Delivered)
    return receipt


def _seen(s: QwenSession, prompt: str, agent: str, timeout: float = 30) -> None:
    """The prompt's stage becomes `seen`, from Qwen Code's session file."""
    got = wait_until(
        lambda: (g := status(s.pb_home, prompt, agent))["stage"] == "seen" and g,
        f"{prompt} not seen",
        timeout,
        s.screen,
        every=0.1,
    )
    assert ("qwen-inbox", "qwen-session") == (got["door"], got["source"])


@UNTIMED
def test_an_idle_session_takes_the_prompt_and_records_it_as_a_user_turn(
    session: QwenSession, controller: dict[str, str]
) -> None:
    """A `delivered` receipt makes it accepted; one model turn; its session file shows it as a
    user turn, and the listener posts `seen` from it."""
    s = session
    with s.listen("qwen-idle", controller=controller):
        prompt = post(s.pb_home, "qwen-idle", "check the flaky test")
        receipt = _delivered(s, prompt)
        assert ("qwen-inbox", "accepted") == (receipt.door, receipt.outcome)
        s.turn(prompt)
        header = f"[paneboard] prompt {prompt} from alice on board test"
        wait_until(lambda: s.user_records(header), "no user record", 30, s.screen)
        _seen(s, prompt, "qwen-idle")
    [record] = s.user_records(header)
    assert "user" == record["message"]["role"]
    assert 1 == len(s.stand_in.turns_with(prompt))
    path = qwen.find_session(s.qwen_home, s.session().session_id)
    assert s.record == path


@UNTIMED
def test_the_session_start_hook_starts_its_listener(session: QwenSession) -> None:
    """`hook install qwen` put SessionStart in the project; Qwen Code ran it, its context line
    is before the model, and the listener it started (the registry's pid, the session file,
    the grant in paneboard's home) delivers a prompt for `qwen-hooked`, which is then seen."""
    s = session
    prompt = post(s.pb_home, "qwen-hooked", "from the hook's listener")
    receipt = _delivered(s, prompt)
    assert ("qwen-inbox", "accepted") == (receipt.door, receipt.outcome)
    s.turn(prompt)
    _seen(s, prompt, "qwen-hooked")
    [request] = [r["body"] for r in s.stand_in.records() if prompt in r["user"]]
    told = "paneboard: you are `qwen-hooked` on board `test` (listener pid "
    assert told in json.dumps(request), "the SessionStart context is not before the model"
    listener = holder(s.pb_home / "test" / "panes" / "qwen-hooked.lock")
    record = presence.read(s.pb_home / "test" / "panes" / "qwen-hooked.presence")
    transcript = qwen.session_file(s.qwen_home, s.session().session_id)
    assert record is not None, "the listener wrote no presence record"
    assert (listener, s.pid, str(transcript)) == (record.pid, record.parent, record.transcript)


def test_a_busy_session_takes_the_prompt_and_runs_it_after_its_turn(
    session: QwenSession, controller: dict[str, str]
) -> None:
    """Accepted while a turn runs (Qwen Code's receipt), not seen then; the model sees it once
    that turn ends, and so does `seen`."""
    s = session
    with s.listen("qwen-busy", controller=controller):
        busy = post(s.pb_home, "qwen-busy", "STAND-IN-SLOW-4 a long turn")
        started = s.turn(busy)
        queued = post(s.pb_home, "qwen-busy", "after the long turn")
        _delivered(s, queued, 30)
        assert s.stand_in.turns_with(queued) == []
        assert "delivered" == status(s.pb_home, queued, "qwen-busy")["stage"]
        assert s.turn(queued) >= started + 4
        _seen(s, queued, "qwen-busy")


@UNTIMED
def test_a_round_trip_wait_prints_the_answer(
    session: QwenSession, controller: dict[str, str]
) -> None:
    """The turn runs the prompt's `paneboard answer` in Qwen Code's shell; `wait` prints it."""
    s = session
    with s.listen("qwen-rt", controller=controller):
        prompt = post(s.pb_home, "qwen-rt", "what is six times seven?\nMOCK-ANSWER: forty-two")
        done = run_cli(s.pb_home, "wait", prompt, "--timeout", "90", timeout=120)
        assert (0, "forty-two\n") == (done.returncode, done.stdout), done.stderr + s.screen()
        assert ("answered", "qwen-inbox") == _stage(s, prompt, "qwen-rt")[:2]


def test_without_a_controller_token_qwen_holds_it_until_its_person_decides(
    session: QwenSession,
) -> None:
    """Each prompt is `held` (by the agent, Qwen Code's reason) and the next goes on, without a
    retry; `/peers accept` makes it `delivered` and then `seen`; `/peers deny`, `undelivered`."""
    s = session
    with s.listen("qwen-hold") as bob:
        kept, denied = (post(s.pb_home, "qwen-hold", f"a prompt for review {n}") for n in (1, 2))
        for prompt in (kept, denied):
            bob.wait_err(f"held {prompt} from alice", 30)
            [held] = _posts(s, Held, prompt)
            assert isinstance(held, Held)
            assert ("agent", "qwen-inbox") == (held.by, held.door)
            assert held.reason.startswith("Your message is held for the"), held.reason
            assert "held" == status(s.pb_home, prompt, "qwen-hold")["stage"]
        assert [] == s.stand_in.turns_with(kept) == s.stand_in.turns_with(denied)
        _review(s, f"accept {kept}")
        receipt = _delivered(s, kept)
        assert ("qwen-inbox", "accepted") == (receipt.door, receipt.outcome)
        s.turn(kept)
        _seen(s, kept, "qwen-hold")
        _review(s, f"deny {denied}")
        bob.wait_err(f"undelivered {denied}", 30)
        bob.stop()
        lines = [*bob.stderr_lines, *iter(bob.err.get, None)]
    [notice] = _posts(s, Undelivered, denied)
    assert isinstance(notice, Undelivered)
    assert notice.reason.startswith("Qwen Code answered `denied`: "), notice.reason
    assert "undelivered" == status(s.pb_home, denied, "qwen-hold")["stage"]
    assert [] == s.stand_in.turns_with(denied)
    assert [] == [ln for ln in lines if " retry " in ln]


def _review(s: QwenSession, decision: str) -> None:
    """The person lists what waits in `/peers`, then decides (Qwen Code wants the list first)."""
    s.type("/peers")
    s.tmux.wait_screen("waiting for your review", 30)
    s.type(f"/peers {decision}")


def _delivered_ids(s: QwenSession) -> set[str]:
    log = s.pb_home / "test" / "log"
    return {p.prompt_id for _, p in read_posts(log) if isinstance(p, Delivered)}


@pytest.mark.timeout(300)
@UNTIMED
def test_a_burst_reaches_the_model_once_each(
    session: QwenSession, controller: dict[str, str]
) -> None:
    """33 prompts caught up at once, more than the bucket of 30 Qwen Code keeps for one sender
    (refilled one each 2 s): each is delivered, and reaches the model, exactly once."""
    s = session
    backoff = ",".join(["1"] * 30)
    # faster than the recipient's default policy of 30 prompts a minute from one sender
    (s.pb_home / "test" / "panes").mkdir(mode=0o700, parents=True, exist_ok=True)
    write_policy(s.pb_home / "test", "qwen-burst", Policy(rate=0))
    ids = [post(s.pb_home, "qwen-burst", f"burst {n}") for n in range(33)]
    start = time.monotonic()
    with s.listen("qwen-burst", "--backoff", backoff, controller=controller) as bob:
        wait_until(lambda: set(ids) <= _delivered_ids(s), "not all delivered", 150, s.screen)
        took = time.monotonic() - start
        for prompt in ids:
            s.turn(prompt, 60)
        bob.stop()
        lines = [*iter(bob.err.get, None)]
        dropped = [ln for ln in lines if "dropped (rate-limited)" in ln]

    def recorded() -> dict[str, int]:
        return {p: len(s.user_records(f"[paneboard] prompt {p} from")) for p in ids}

    wait_until(lambda: all(recorded().values()), "not all in the session file", 30, s.screen)
    assert dict.fromkeys(ids, 1) == recorded()
    print(f"burst of 33: all delivered in {took:.1f} s, {len(dropped)} retries after `dropped`")


@UNTIMED
def test_post_to_model_time(session: QwenSession, controller: dict[str, str]) -> None:
    """Eight prompts to an idle session, one at a time: each reaches the model once."""
    s = session
    times, ids = [], []
    with s.listen("qwen-time", controller=controller):
        for n in range(8):
            t0 = time.time()
            ids.append(post(s.pb_home, "qwen-time", f"timed {n}"))
            times.append(s.turn(ids[-1]) - t0)
    print(f"post -> model: median {statistics.median(times):.3f} s of {len(times)}")
    assert [1] * 8 == [len(s.stand_in.turns_with(p)) for p in ids]
