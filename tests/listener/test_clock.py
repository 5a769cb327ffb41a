"""Backoff, giving up and expiry, in virtual time: the listener runs in-process on trio with a
MockClock that jumps whenever every task waits, so minutes of backoff take no real time."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest
import trio.testing

from paneboard.listener.listen import Listener, Settings
from paneboard.protocol.errors import DoorFailed
from paneboard.protocol.posts import Delivered, Prompt, Undelivered, encode
from paneboard.state.filelog.append import append_payloads
from paneboard.state.filelog.log import read_posts
from paneboard.state.filelog.store import FileStore
from paneboard.state.trust.sealing import Sealer
from tests.factories import prompt

START = 1_800_000_000.0  # the virtual wall clock's start


class FlakyDoor:
    """A door that fails its first *failures* attempts, noting when (virtual seconds) each came."""

    name = "stdout"

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.attempts: list[float] = []
        self.accepted: anyio.Event | None = None  # made inside the event loop

    def check(self) -> None:
        pass

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> str:
        self.attempts.append(anyio.current_time())
        if len(self.attempts) <= self.failures:
            raise DoorFailed(self.name, f"attempt {len(self.attempts)} refused")
        assert self.accepted is not None
        self.accepted.set()
        return "accepted"

    async def wait_accepted(self) -> None:
        assert self.accepted is not None
        await self.accepted.wait()


def _run(main: Callable[[], Awaitable[None]]) -> None:
    # The clock jumps to the next deadline once every task has waited 0.2 s of real time;
    # at 0 it would also jump while the listener reads the log in a worker thread.
    clock = trio.testing.MockClock(autojump_threshold=0.2)
    anyio.run(main, backend="trio", backend_options={"clock": clock})


def _listener(home: Path, door: FlakyDoor, backoff: tuple[float, ...]) -> Listener:
    def now() -> float:
        return START + anyio.current_time()

    store = FileStore(home / "b")
    return Listener(Settings("b", "bob", home, store, "paneboard", backoff, now=now), door)


def _prompt(ttl: float | None = None) -> Prompt:
    return prompt(id="p" * 26, ts=START, expires=None if ttl is None else START + ttl)


async def _until(listener: Listener, done: Callable[[], Awaitable[None]]) -> None:
    async with anyio.create_task_group() as tg:  # a hang is bounded by pytest's timeout
        await tg.start(listener.run)
        await done()
        tg.cancel_scope.cancel()


def _append(home: Path, p: Prompt) -> None:
    """Append *p* signed, as alice's commands in *home* write it (a listener holds it unsigned)."""
    append_payloads(home / "b" / "log", [Sealer(home, p.sender).seal(encode(p))])


def _receipts(home: Path) -> list[object]:
    return [p for _, p in read_posts(home / "b" / "log") if not isinstance(p, Prompt)]


@pytest.fixture
def board(tmp_path: Path) -> Path:
    (tmp_path / "b").mkdir()
    return tmp_path


def test_the_default_backoff_waits_1_2_5_15_seconds_between_attempts(board: Path) -> None:
    """Four refusals, then accepted: attempts at 0, 1, 3, 8 and 23 s after the first."""
    door = FlakyDoor(failures=4)
    _append(board, _prompt())

    async def main() -> None:
        door.accepted = anyio.Event()
        listener = _listener(board, door, (1.0, 2.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0))
        await _until(listener, door.wait_accepted)

    _run(main)
    first = door.attempts[0]
    assert [0.0, 1.0, 3.0, 8.0, 23.0] == [round(t - first, 6) for t in door.attempts]
    [receipt] = _receipts(board)
    assert isinstance(receipt, Delivered)
    assert round(receipt.ts - START - first, 6) == 23.0


def test_after_the_last_wait_it_gives_up_with_a_notice_and_the_prompt_stays_open(
    board: Path,
) -> None:
    """Nine refusals over 533 s: one `undelivered` notice, posted at the last attempt."""
    door = FlakyDoor(failures=100)
    _append(board, _prompt())
    listeners = []

    async def main() -> None:
        listener = _listener(board, door, (1.0, 2.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0))
        listeners.append(listener)

        await _until(listener, lambda: anyio.sleep(600))  # past the last of 533 s of waits
        assert "p" * 26 in listener.given_up

    _run(main)
    assert 9 == len(door.attempts)
    assert 533.0 == round(door.attempts[-1] - door.attempts[0], 6)
    [notice] = _receipts(board)
    assert isinstance(notice, Undelivered)
    assert "attempt 9 refused" == notice.reason
    assert "undelivered" == listeners[0].deliverer.state.prompts["p" * 26].recipients["bob"].stage


def test_a_prompt_that_expires_during_its_backoff_is_dropped_without_a_notice(
    board: Path,
) -> None:
    """Expiry at 10 s falls inside the 15 s wait: no fourth attempt, no receipt, no notice."""
    door = FlakyDoor(failures=100)
    _append(board, _prompt(ttl=10.0))

    async def main() -> None:
        listener = _listener(board, door, (1.0, 2.0, 15.0))
        await _until(listener, lambda: anyio.sleep(60))  # well past the expiry and every wait

    _run(main)
    assert 3 == len(door.attempts)
    assert [] == _receipts(board)
