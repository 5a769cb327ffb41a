"""The listener as a real process: catch-up, order, live tail, exactly once, the pane lock."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from paneboard.state.filelog.log import read_posts
from testing.helpers import Listening, post, run_cli


def delivered_ids(listener: Listening, n: int) -> list[str]:
    return [json.loads(listener.line())["id"] for _ in range(n)]


def test_catch_up_is_urgent_first_then_oldest_first(home: Path) -> None:
    """Prompts posted before the listener starts arrive by priority, then in log order."""
    ids = {
        p: post(home, "--to", "bob", "--priority", p, p)
        for p in ("low", "normal", "high", "urgent")
    }
    second_normal = post(home, "--to", "bob", "normal again")
    post(home, "--to", "carol", "not for bob")
    with Listening(home, "bob", "--door", "stdout") as bob:
        got = delivered_ids(bob, 5)
        assert [ids["urgent"], ids["high"], ids["normal"], second_normal, ids["low"]] == got
        assert 0 == bob.stop()


def test_live_prompts_arrive_with_composed_text(home: Path) -> None:
    """A listener started first hands over each prompt as it is posted,
    with the closing commands."""
    with Listening(home, "bob", "--door", "stdout") as bob:
        pid = post(home, "--to", "bob", "--thread", "t1", "hello $(whoami) `x`")
        line = json.loads(bob.line())
        assert (pid, "hello $(whoami) `x`", "t1") == (line["id"], line["body"], line["thread"])
        assert f"ack {pid} --home {home} --board test --as bob" in line["text"]
        bob.wait_err(f"delivered {pid}")
    posts = [p for _, p in read_posts(home / "test" / "log")]
    receipt = posts[-1]
    assert ("delivered", "bob", pid, "stdout", "accepted") == (
        receipt.__struct_config__.tag,
        receipt.sender,
        receipt.prompt_id,
        receipt.door,
        receipt.outcome,
    )  # type: ignore[union-attr]


def test_exactly_once_across_restarts_by_sigterm_and_sigkill(home: Path) -> None:
    """Five restarts, killed both ways: every prompt arrives once, none twice."""
    seen: list[str] = []
    posted: list[str] = []
    for round_, sig in enumerate(
        [signal.SIGTERM, signal.SIGKILL, signal.SIGTERM, signal.SIGKILL, signal.SIGTERM]
    ):
        posted += [post(home, "--to", "bob", f"before {round_} #{i}") for i in range(3)]
        with Listening(home, "bob", "--door", "stdout") as bob:
            seen += delivered_ids(bob, 3)
            posted.append(post(home, "--to", "bob", f"live {round_}"))
            seen += delivered_ids(bob, 1)
            bob.wait_err(f"delivered {posted[-1]}")
            assert (0 if sig == signal.SIGTERM else -signal.SIGKILL) == bob.stop(sig)
    assert sorted(posted) == sorted(seen)
    assert len(seen) == len(set(seen))
    with Listening(home, "bob", "--door", "stdout") as bob:
        last = post(home, "--to", "bob", "after all restarts")
        assert [last] == delivered_ids(bob, 1)


def test_a_second_listener_for_the_pane_exits_4(home: Path) -> None:
    """The second names board, agent and holder pid;
    after the first is SIGKILLed a new one starts."""
    with Listening(home, "bob", "--door", "stdout") as first:
        second = run_cli(home, "listen", "--as", "bob", "--door", "stdout")
        expected = (
            f"paneboard: board `test`: agent `bob` is held by listener pid {first.proc.pid}\n"
        )
        assert (4, expected) == (second.returncode, second.stderr)
        first.proc.kill()
        first.proc.wait()
    with Listening(home, "bob", "--door", "stdout") as third:
        pid = post(home, "--to", "bob", "still works")
        assert [pid] == delivered_ids(third, 1)


def test_who_shows_the_listening_pane(home: Path) -> None:
    """`who` names each agent, whether a listener holds its pane, its pid and door."""
    post(home, "--to", "bob", "hi")
    with Listening(home, "bob", "--door", "stdout") as bob:
        bob.line()
        bob.wait_err("delivered")
        rows = [json.loads(line) for line in run_cli(home, "who", "--json").stdout.splitlines()]
        by_agent = {r["agent"]: r for r in rows}
        assert (True, bob.proc.pid, "stdout") == (
            by_agent["bob"]["listening"],
            by_agent["bob"]["pid"],
            by_agent["bob"]["door"],
        )
        assert by_agent["bob"]["last_delivery"] is not None
        assert (False, None) == (by_agent["alice"]["listening"], by_agent["alice"]["pid"])


def test_the_pane_lock_is_portalockers_lock(home: Path) -> None:
    """A pane held through portalocker (as on other platforms) is held for paneboard too,
    and the other way round."""
    import portalocker

    from paneboard.protocol.errors import PaneLocked
    from paneboard.state.panes.lock import take_pane_lock

    path = home / "pane.lock"
    exclusive = portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING
    with open(path, "a+") as held:
        portalocker.lock(held, exclusive)
        with pytest.raises(PaneLocked):
            take_pane_lock(path, "b", "bob")
        portalocker.unlock(held)
    lock = take_pane_lock(path, "b", "bob")
    with open(path, "a+") as other, pytest.raises(portalocker.AlreadyLocked):
        portalocker.lock(other, exclusive)
    lock.release()


def test_asking_who_holds_a_pane_creates_and_writes_nothing(home: Path) -> None:
    """`holder` only reads: no lock file is made for a pane nobody took, a held one is named by its
    pid without a write-close event on its folder (which would wake `top`), and a lock planted as
    a symlink is refused."""
    from paneboard.protocol.errors import BoardIOError
    from paneboard.state import watch
    from paneboard.state.panes.lock import holder, take_pane_lock

    path = home / "pane.lock"
    assert (None, False) == (holder(path), path.exists())
    lock = take_pane_lock(path, "b", "bob")
    fd = watch.inotify_watch(home, watch.IN_CLOSE_WRITE)
    assert fd is not None
    try:
        assert os.getpid() == holder(path)
        assert [] == watch.read_events(fd)
    finally:
        os.close(fd)
    lock.release()
    assert holder(path) is None
    (home / "planted.lock").symlink_to(path)
    with pytest.raises(BoardIOError, match=r"cannot open pane lock .*planted\.lock"):
        holder(home / "planted.lock")
