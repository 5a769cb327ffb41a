"""The deliverer: what a refresh returns, the ids it vouches for, one order for the listener
and the Stop hook, and the door it delivers through swapped while it runs."""

from __future__ import annotations

import contextlib
import io
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from paneboard.board.context import Context
from paneboard.listener.deliverer import Composer, Deliverer
from paneboard.listener.listen import Listener, Settings
from paneboard.listener.seen import HEADER
from paneboard.listener.stop import StopDoor, deliver_at_stop
from paneboard.protocol.posts import Delivered, Prompt, encode
from paneboard.state.filelog.append import append_payloads
from paneboard.state.filelog.compact import compact
from paneboard.state.filelog.log import append_posts, read_posts
from paneboard.state.filelog.store import FileStore
from paneboard.state.panes.delivered import DeliveredKeys
from paneboard.state.panes.pane import Pane
from paneboard.state.paths import BoardPaths
from paneboard.state.trust.sealing import Sealer
from tests.factories import prompt


class RecordingDoor:
    """A door that takes every text, noting the ids of the prompts in it (their headers);
    *taken* is set once it has the *until*-th."""

    def __init__(self, name: str, until: int) -> None:
        self.name = name
        self.until = until
        self.ids: list[str] = []
        self.texts: list[str] = []
        self.taken: anyio.Event | None = None  # made inside the event loop

    def check(self) -> None:
        pass

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> str:
        before = len(self.ids)
        self.texts.append(text)
        self.ids += HEADER.findall(text)
        if before < self.until <= len(self.ids):
            assert self.taken is not None
            self.taken.set()
        return "accepted"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "b").mkdir()
    return tmp_path


def _append(home: Path, *prompts: Prompt) -> None:
    """Append *prompts* signed, as alice's commands in *home* write them."""
    sealer = Sealer(home, "alice")
    append_payloads(home / "b" / "log", [sealer.seal(encode(p)) for p in prompts])


def _prompts() -> list[Prompt]:
    """Four prompts, two of them urgent, a second apart, just written (a test that starts long
    after its module was imported still has them within the reader's time limit)."""
    now = time.time()
    return [
        prompt(n, ts=now - 10 + n, priority="urgent" if n % 2 == 0 else "normal")
        for n in (1, 2, 3, 4)
    ]


@contextlib.contextmanager
def _deliverer(home: Path) -> Iterator[Deliverer[RecordingDoor]]:
    """Bob's deliverer on board `b`, open, its pane lock held."""
    pane = Pane(BoardPaths(home, "b"), "bob", FileStore(home / "b"))
    pane.take_lock()
    try:
        with Deliverer(pane, RecordingDoor("stdout", 0), Composer("paneboard", home, "bob")) as d:
            yield d
    finally:
        pane.release()


def test_refresh_returns_the_new_posts_once(home: Path) -> None:
    """Each refresh returns the posts appended since the last, in log order; none twice."""
    p1, p2, p3, _ = _prompts()
    _append(home, p1, p2)
    with _deliverer(home) as deliverer:
        first = deliverer.refresh()
        _append(home, p3)
        second = deliverer.refresh()
        third = deliverer.refresh()
    assert ([p1.id, p2.id], False) == ([p.id for _, p in first.posts], first.replaced)
    assert ([p3.id], False) == ([p.id for _, p in second.posts], second.replaced)
    assert ([], False) == (third.posts, third.replaced)


def test_a_compaction_is_returned_once_with_a_new_fold(home: Path) -> None:
    """After the log is compacted, the next refresh says so and holds the new log's posts from
    its start, in a fold of its own; the one after says nothing of it."""
    p1, p2, p3, _ = _prompts()
    _append(home, p1, p2)
    with _deliverer(home) as deliverer:
        deliverer.refresh()
        before = deliverer.state
        compact(home / "b" / "log", time.time())
        _append(home, p3)
        after = deliverer.refresh()
        again = deliverer.refresh()
        state = deliverer.state
    assert (True, [p1.id, p2.id, p3.id]) == (after.replaced, [p.id for _, p in after.posts])
    assert state is not before
    assert [p1.id, p2.id, p3.id] == sorted(state.prompts)
    assert (False, []) == (again.replaced, again.posts)


def test_the_panes_own_receipts_are_vouched_for_and_no_one_elses(home: Path) -> None:
    """A receipt the pane wrote moves its prompt's stage when read back, unsigned as it is
    here; the same receipt written by another writer, unsigned, moves nothing."""
    p1, p2, _, _ = _prompts()
    _append(home, p1, p2)
    with _deliverer(home) as deliverer:
        deliverer.refresh()
        stage = deliverer.state.prompts[p2.id].recipients["bob"].stage
        deliverer.pane.record([p1], "stdout")
        forged = Delivered(
            id="f" * 26, board="b", sender="bob", ts=time.time(), prompt_id=p2.id, door="x"
        )
        append_posts(home / "b" / "log", [forged])
        deliverer.refresh()
        stages = [deliverer.state.prompts[p.id].recipients["bob"].stage for p in (p1, p2)]
    assert ["delivered", stage] == stages


def _delivered_at_stop(home: Path) -> list[str]:
    out = io.StringIO()
    assert deliver_at_stop(Context(home, "b", "bob"), StopDoor(out, None), 0.0)
    reason = json.loads(out.getvalue())["reason"]
    return re.findall(r"^\[paneboard\] prompt ([0-9a-z]{26}) from ", reason, re.MULTILINE)


async def _delivered_by_listener(home: Path, door: RecordingDoor) -> list[str]:
    settings = Settings("b", "bob", home, FileStore(home / "b"), "paneboard")
    listener = Listener(settings, door)
    door.taken = anyio.Event()
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(listener.run)
            await door.taken.wait()
            tg.cancel_scope.cancel()
    return door.ids


@pytest.mark.anyio
async def test_the_listener_and_the_stop_hook_hand_over_in_one_order_with_one_key_each(
    tmp_path: Path,
) -> None:
    """The same board, delivered by a listener in one home and by a Stop hook in another: the
    same catch-up order (urgent first, then oldest) and the same delivered keys."""
    homes = tmp_path / "listener", tmp_path / "stop"
    for home in homes:
        (home / "b").mkdir(parents=True)
        _append(home, *_prompts())
    by_listener = await _delivered_by_listener(homes[0], RecordingDoor("stdout", 4))
    at_stop = await anyio.to_thread.run_sync(_delivered_at_stop, homes[1])
    p1, p2, p3, p4 = _prompts()
    assert [p2.id, p4.id, p1.id, p3.id] == by_listener == at_stop
    keys = [DeliveredKeys(BoardPaths(home, "b").pane("bob").delivered).keys for home in homes]
    assert 4 == len(keys[0])
    assert keys[0] == keys[1]


@pytest.mark.anyio
async def test_a_swapped_door_takes_the_next_prompts_and_names_itself_in_their_receipts(
    home: Path,
) -> None:
    """`use_door` while the listener runs: what was delivered stays the first door's; the next
    prompts go through the new one, and their receipts name it."""
    p1, p2, _, _ = _prompts()
    first, second = RecordingDoor("one", 1), RecordingDoor("two", 1)
    first.taken, second.taken = anyio.Event(), anyio.Event()
    _append(home, p1)
    listener = Listener(Settings("b", "bob", home, FileStore(home / "b"), "paneboard"), first)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(listener.run)
            await first.taken.wait()
            listener.use_door(second)
            _append(home, p2)
            await second.taken.wait()
            tg.cancel_scope.cancel()
    receipts = [p for _, p in read_posts(home / "b" / "log") if isinstance(p, Delivered)]
    assert ([p1.id], [p2.id]) == (first.ids, second.ids)
    assert [(p1.id, "one"), (p2.id, "two")] == [(r.prompt_id, r.door) for r in receipts]
    assert second is listener.door


@pytest.mark.anyio
async def test_a_listener_on_a_home_not_made_yet_makes_it_and_listens(tmp_path: Path) -> None:
    """Building the deliverer reads and writes nothing: the pane lock makes the home, then
    opening reads the agent's key (made there) and the board."""
    home = tmp_path / "new"
    settings = Settings("b", "bob", home, FileStore(home / "b"), "paneboard")
    listener = Listener(settings, RecordingDoor("stdout", 1))
    assert not home.exists()
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(listener.run)
            tg.cancel_scope.cancel()
    assert (home / "b" / "panes" / "bob.lock").exists()
