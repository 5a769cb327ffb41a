"""The asleep listener, with a stand-in resume door (tests/listener/wake_stand_in.py): real
listener processes, a real "agent" process whose end puts the listener to sleep, real signals.

The policy, the budget, the receipts and the handover; the real Claude Code's wake is in
tests/real/test_wake.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from paneboard.protocol.posts import Delivered, Held, Seen, Undelivered
from paneboard.state.filelog.log import read_posts
from paneboard.state.panes.lock import holder
from paneboard.state.trust.policy import Policy, write_policy
from testing.helpers import ROOT, Listening, cli_env, post, run_cli, wait_until

AGENT = "bob"
SEP = "\n\x1e\n"


class Asleep:
    """The stand-in listener beside a real agent process (`sleep`), in *folder*."""

    def __init__(
        self,
        home: Path,
        folder: Path,
        transcript: Path | None = None,
        *,
        wait: bool = True,
        ended: bool = False,
        **env: str,
    ) -> None:
        """*transcript*: the agent's conversation file, for `seen`; unless *wait*, it returns
        before the listener holds the pane; *ended*: the agent's process has ended already
        (the listener starts asleep); *env*: the listener's environment beside its home."""
        self.home, self.folder = home, folder
        folder.mkdir(exist_ok=True)
        self.agent = subprocess.Popen(["true" if ended else "sleep", "300"])
        if ended:
            self.agent.wait()
        argv = [sys.executable, "-m", "tests.listener.wake_stand_in"]
        argv += [str(home), AGENT, str(self.agent.pid), str(folder)]
        argv += [] if transcript is None else [str(transcript)]
        self.log = (folder / "listener.log").open("w")
        self.proc = subprocess.Popen(argv, cwd=ROOT, env=cli_env(home, **env), stderr=self.log)
        if wait:
            wait_until(lambda: self.said("listening via"), "the listener started", 20, self.text)

    def text(self) -> str:
        return (self.folder / "listener.log").read_text()

    def said(self, words: str) -> bool:
        return words in self.text()

    def end_session(self) -> None:
        """The agent's process ends."""
        self.agent.kill()
        self.agent.wait()

    def wakes(self) -> list[str]:
        path = self.folder / "wakes.txt"
        return [t for t in path.read_text().split(SEP) if t] if path.exists() else []

    def presence(self) -> dict[str, object]:
        data = json.loads((self.home / "test" / "panes" / f"{AGENT}.presence").read_text())
        return dict(data)

    def close(self) -> None:
        for proc in (self.proc, self.agent):
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        pid = self.folder / "session.pid"
        if pid.exists():
            try:
                os.kill(int(pid.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.log.close()


@pytest.fixture
def asleep(home: Path, tmp_path: Path) -> Iterator[Asleep]:
    (home / "test" / "panes").mkdir(mode=0o700, parents=True)
    write_policy(home / "test", AGENT, Policy(wake="resume"))
    one = Asleep(home, tmp_path)
    try:
        yield one
    finally:
        one.close()


def receipts(home: Path, kind: type) -> list:  # type: ignore[type-arg]
    return [p for _, p in read_posts(home / "test" / "log") if isinstance(p, kind)]


def fall_asleep(one: Asleep) -> None:
    one.end_session()
    wait_until(lambda: one.presence().get("sleep") == "asleep", "presence asleep", 20, one.text)


def test_a_listener_whose_policy_says_never_stops_with_its_agent(
    home: Path, tmp_path: Path
) -> None:
    (home / "test" / "panes").mkdir(parents=True, exist_ok=True)
    one = Asleep(home, tmp_path)
    try:
        one.end_session()
        assert 0 == one.proc.wait(timeout=20)
        assert one.said("is gone: stopping")
        assert holder(home / "test" / "panes" / f"{AGENT}.lock") is None
    finally:
        one.close()


def test_the_session_ends_the_listener_keeps_the_pane_asleep_and_who_says_so(
    asleep: Asleep, home: Path
) -> None:
    fall_asleep(asleep)
    assert asleep.proc.poll() is None
    assert asleep.proc.pid == holder(home / "test" / "panes" / f"{AGENT}.lock")
    who = run_cli(home, "who", "--as", "alice")
    assert f"asleep     pid {asleep.proc.pid}" in who.stdout, who.stdout


def test_prompts_posted_during_a_wake_wake_nothing_more_and_the_new_listener_takes_them(
    asleep: Asleep, home: Path
) -> None:
    """(Prompts posted together before the wake go in its one text: tests/real.)"""
    fall_asleep(asleep)
    ids = [post(home, "--to", AGENT, "--", "task 0")]
    wait_until(lambda: asleep.wakes(), "a wake", 20, asleep.text)
    ids += [post(home, "--to", AGENT, "--", f"task {n}") for n in (1, 2)]
    wait_until(lambda: receipts(home, Delivered), "the woken prompt's receipt", 20, asleep.text)
    [woke] = receipts(home, Delivered)
    assert (ids[0], "sess-1") == (woke.prompt_id, woke.woke)
    assert 1 == len(asleep.wakes()) and ids[0] in asleep.wakes()[0]
    status = run_cli(home, "status", "--as", "alice", ids[0])
    assert "woke sess-1 at" in status.stdout, status.stdout
    # The woken session's own listener takes the pane over; the prompts behind go to it.
    with Listening(home, AGENT, "--door", "stdout") as new:
        assert 0 == asleep.proc.wait(timeout=20)
        got = [new.line(), new.line()]
        wait_until(lambda: len(receipts(home, Delivered)) == 3, "3 receipts", 30, asleep.text)
    assert [ids[1], ids[2]] == [json.loads(line)["id"] for line in got]
    assert 1 == len(asleep.wakes())
    assert sorted(ids) == sorted(d.prompt_id for d in receipts(home, Delivered))


def test_a_prompt_the_policy_holds_wakes_nothing(asleep: Asleep, home: Path) -> None:
    write_policy(home / "test", AGENT, Policy(wake="resume", others="hold"))
    fall_asleep(asleep)
    pid = post(home, "--to", AGENT, "--", "held work")
    wait_until(lambda: receipts(home, Held), "the held receipt", 20, asleep.text)
    assert [pid] == [h.prompt_id for h in receipts(home, Held)]
    assert [] == asleep.wakes()
    assert "asleep" == asleep.presence().get("sleep")


def test_the_woken_session_ends_the_listener_sleeps_again_and_the_budget_bounds_the_wakes(
    asleep: Asleep, home: Path
) -> None:
    write_policy(home / "test", AGENT, Policy(wake="resume", wake_limit=1))
    fall_asleep(asleep)
    first = post(home, "--to", AGENT, "--", "first")
    wait_until(lambda: asleep.said("woke sess-1"), "the wake", 20, asleep.text)
    os.kill(int((asleep.folder / "session.pid").read_text()), signal.SIGKILL)
    wait_until(lambda: asleep.presence().get("sleep") == "asleep", "asleep again", 20, asleep.text)
    second = post(home, "--to", AGENT, "--", "second")
    wait_until(lambda: asleep.said(f"{second} from alice waits until"), "the wait", 20, asleep.text)
    assert 1 == len(asleep.wakes()) and first in asleep.wakes()[0]
    status = run_cli(home, "status", "--as", "alice", second)
    assert "wake budget: 1 wakes in the last hour spent" in status.stdout, status.stdout
    assert [first] == [d.prompt_id for d in receipts(home, Delivered)]


def test_a_failed_wake_is_undelivered_in_the_agents_words_and_the_agent_stays_asleep(
    asleep: Asleep, home: Path
) -> None:
    (asleep.folder / "fail").write_text("no conversation found with session id sess-1\n")
    fall_asleep(asleep)
    pid = post(home, "--to", AGENT, "--", "lost work")
    wait_until(lambda: receipts(home, Undelivered), "the undelivered notice", 20, asleep.text)
    [notice] = receipts(home, Undelivered)
    assert pid == notice.prompt_id
    assert "no conversation found with session id sess-1" in notice.reason
    assert "asleep" == asleep.presence().get("sleep")
    assert [] == receipts(home, Delivered)


def test_wake_by_hand_posts_a_prompt_the_asleep_listener_wakes_for(
    asleep: Asleep, home: Path
) -> None:
    live = run_cli(home, "wake", "--as", "alice", AGENT)
    assert 1 == live.returncode and "is not asleep (live)" in live.stderr, live.stderr
    fall_asleep(asleep)
    done = run_cli(home, "wake", "--as", "alice", AGENT)
    assert 0 == done.returncode, done.stderr
    wait_until(lambda: asleep.wakes(), "a wake", 20, asleep.text)
    assert done.stdout.strip() in asleep.wakes()[0]
    assert "woke you by hand" in asleep.wakes()[0]


def _turn(text: str) -> str:
    """A user turn of Claude Code's transcript holding *text*, as one line."""
    return json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"


def test_a_turn_the_woken_session_answers_before_the_handover_ends_is_seen_once(
    home: Path, tmp_path: Path
) -> None:
    """The woken session's listener asks the asleep one to stop while its resume is still
    under way; the turn then shows in the conversation file and the agent answers at once,
    before the new listener has read the board or the file. The turn is still `seen`, once."""
    (home / "test" / "panes").mkdir(mode=0o700, parents=True)
    write_policy(home / "test", AGENT, Policy(wake="resume"))
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(_turn("an earlier turn"))
    asleep = Asleep(home, tmp_path / "asleep", transcript)
    new: Asleep | None = None
    try:
        (asleep.folder / "hold").touch()
        fall_asleep(asleep)
        pid = post(home, "--to", AGENT, "--", "what is six times seven?")
        wait_until(lambda: asleep.wakes(), "the resume", 20, asleep.text)
        # The woken session starts, and its listener takes the pane over.
        new = Asleep(home, tmp_path / "woken", transcript, wait=False)
        wait_until(lambda: asleep.said("SIGTERM: stopping"), "the handover", 20, asleep.text)
        with transcript.open("a") as f:
            f.write(_turn(asleep.wakes()[0]))
        done = run_cli(home, "answer", "--as", AGENT, pid, "42")
        assert 0 == done.returncode, done.stderr
        (asleep.folder / "go").touch()
        assert 0 == asleep.proc.wait(timeout=20)
        wait_until(lambda: new.said("listening via"), "the new listener", 20, new.text)
        # Both listeners have read the file by now: the one stopping, and the new one's start.
        assert [pid] == [s.prompt_id for s in receipts(home, Seen)], asleep.text() + new.text()
        assert [pid] == [d.prompt_id for d in receipts(home, Delivered)]
    finally:
        asleep.close()
        if new is not None:
            new.close()


def kept_wakes(home: Path) -> list[list[object]]:
    path = home / "test" / "panes" / f"{AGENT}.wakes"
    return list(json.loads(path.read_text())) if path.exists() else []


def stage_of(home: Path, pid: str) -> str:
    done = run_cli(home, "status", "--as", "alice", "--json", pid)
    assert 0 == done.returncode, done.stderr
    return str(json.loads(done.stdout.splitlines()[0])["recipients"][AGENT]["stage"])


@pytest.mark.parametrize(
    "restart",
    ["asleep", pytest.param("live, then the session ends", marks=pytest.mark.slow)],
)
def test_a_listener_killed_between_the_wake_record_and_the_resume_leaves_one_wake(
    home: Path, tmp_path: Path, restart: str
) -> None:
    """SIGKILL once the wake is recorded, before the resume runs: the prompt stays open, and
    the listener started again wakes the session for it once, under the same record (one
    wake charged), whether it starts asleep or live and falls asleep (after the begun wake's
    `RESUME_WITHIN` wait)."""
    (home / "test" / "panes").mkdir(mode=0o700, parents=True)
    write_policy(home / "test", AGENT, Policy(wake="resume"))
    first = Asleep(home, tmp_path / "first", PANEBOARD_FAILPOINT="wake-recorded")
    again: Asleep | None = None
    try:
        fall_asleep(first)
        pid = post(home, "--to", AGENT, "--", "woken once")
        assert -signal.SIGKILL == first.proc.wait(timeout=20)
        assert ([pid], []) == ([w[2] for w in kept_wakes(home)], first.wakes())
        assert ("posted", []) == (stage_of(home, pid), receipts(home, Delivered))
        again = Asleep(home, tmp_path / "again", ended=restart == "asleep")
        if restart != "asleep":
            fall_asleep(again)
        wait_until(lambda: receipts(home, Delivered), "the wake's receipt", 40, again.text)
        assert [(pid, "sess-1")] == [(d.prompt_id, d.woke) for d in receipts(home, Delivered)]
        assert 1 == len(again.wakes()) and pid in again.wakes()[0]
        assert [pid] == [w[2] for w in kept_wakes(home)]
        assert not (again.folder / "live.txt").exists()
    finally:
        first.close()
        if again is not None:
            again.close()


@pytest.mark.parametrize("store_url", ["nats"], indirect=True)
def test_wake_by_hand_on_nats_from_another_machine(
    home: Path, tmp_path: Path, store_url: str
) -> None:
    """On NATS, `paneboard wake` run from another home (another machine) finds the agent
    asleep through the store's presence, and its prompt wakes the session there (a sender
    whose key this home has not met yet is let through, as a person would after pinning it)."""
    (home / "test" / "panes").mkdir(mode=0o700, parents=True)
    write_policy(home / "test", AGENT, Policy(wake="resume", first_contact="deliver"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    asleep = Asleep(home, tmp_path / "listener")
    try:
        live = run_cli(elsewhere, "wake", "--as", "alice", AGENT)
        assert 1 == live.returncode and "is not asleep (live)" in live.stderr, live.stderr
        fall_asleep(asleep)
        done = run_cli(elsewhere, "wake", "--as", "alice", AGENT)
        assert 0 == done.returncode, done.stderr
        pid = done.stdout.strip()
        wait_until(lambda: asleep.wakes(), "a wake", 20, asleep.text)
        assert 1 == len(asleep.wakes()) and pid in asleep.wakes()[0]
        assert "woke you by hand" in asleep.wakes()[0]

        def status() -> str:
            return run_cli(elsewhere, "status", "--as", "alice", pid).stdout

        wait_until(lambda: "woke sess-1 at" in status(), "the wake's receipt", 20, status)
        gone = run_cli(elsewhere, "wake", "--as", "alice", "nobody")
        assert 1 == gone.returncode and "is not asleep (no listener)" in gone.stderr, gone.stderr
    finally:
        asleep.close()


def test_the_mark_stays_before_a_turn_whose_delivery_is_not_recorded_yet(
    home: Path, tmp_path: Path
) -> None:
    """The turn shows in the conversation file while the resume is still under way (its
    delivery not recorded): the listener killed then leaves the pane's mark before that turn,
    so the next listener reads it again and owes its `seen`."""
    from paneboard.listener.seen import SAVE_EVERY

    (home / "test" / "panes").mkdir(mode=0o700, parents=True)
    write_policy(home / "test", AGENT, Policy(wake="resume"))
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(_turn("an earlier turn"))
    before = transcript.stat().st_size
    asleep = Asleep(home, tmp_path / "asleep", transcript)
    started = time.monotonic()
    try:
        (asleep.folder / "hold").touch()
        fall_asleep(asleep)
        post(home, "--to", AGENT, "--", "what is six times seven?")
        wait_until(lambda: asleep.wakes(), "the resume", 20, asleep.text)
        time.sleep(max(0.0, started + SAVE_EVERY + 0.5 - time.monotonic()))  # a save is due
        with transcript.open("a") as f:
            f.write(_turn(asleep.wakes()[0]))
        with transcript.open("a") as f:  # a later line: the listener has read past the turn
            f.write(_turn("later"))
        time.sleep(1.0)  # the listener has read both lines by now (it follows the file)
        asleep.proc.kill()
        asleep.proc.wait()
        mark = home / "test" / "panes" / f"{AGENT}.transcript"
        assert before == json.loads(mark.read_text())["offset"]
    finally:
        asleep.close()


def test_a_listener_killed_after_its_record_leaves_the_seen_of_an_answered_turn_to_the_next(
    home: Path, tmp_path: Path
) -> None:
    """SIGKILL just after the woken prompt's delivered key (no receipt, no last read): the
    agent has answered before the next listener starts, whose fold has closed the prompt; it
    still finds the turn in the file and posts its `seen`."""
    (home / "test" / "panes").mkdir(mode=0o700, parents=True)
    write_policy(home / "test", AGENT, Policy(wake="resume"))
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(_turn("an earlier turn"))
    first = Asleep(home, tmp_path / "first", transcript, PANEBOARD_FAILPOINT="after-record")
    again: Asleep | None = None
    try:
        (first.folder / "hold").touch()
        fall_asleep(first)
        pid = post(home, "--to", AGENT, "--", "what is six times seven?")
        wait_until(lambda: first.wakes(), "the resume", 20, first.text)
        with transcript.open("a") as f:
            f.write(_turn(first.wakes()[0]))
        done = run_cli(home, "answer", "--as", AGENT, pid, "42")
        assert 0 == done.returncode, done.stderr
        (first.folder / "go").touch()
        assert -signal.SIGKILL == first.proc.wait(timeout=20)
        assert ([], []) == (receipts(home, Delivered), receipts(home, Seen))
        again = Asleep(home, tmp_path / "again", transcript)
        wait_until(lambda: receipts(home, Seen), "seen", 10, again.text)
        assert [pid] == [s.prompt_id for s in receipts(home, Seen)]
        assert 1 == len(first.wakes()) and not (again.folder / "wakes.txt").exists()
    finally:
        first.close()
        if again is not None:
            again.close()
