"""The Store interface, on both stores: exact bytes, the open-prompt limit, capabilities,
closing."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from paneboard.protocol.errors import BadInput
from paneboard.protocol.posts import Prompt, encode
from paneboard.protocol.signing import VERIFIED, seal
from paneboard.state.abc import Compactable, HealthReport, Store
from paneboard.state.filelog.store import FileStore
from paneboard.state.limit import OpenLimit
from paneboard.state.trust.keys import open_key
from paneboard.state.trust.verdicts import Verdicts
from testing.helpers import NatsServer
from tests.factories import prompt


@pytest.fixture(params=["file", "nats"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """The file log in a folder of this test's own, or a stream of its own on one server."""
    if request.param == "file":
        folder = tmp_path / "test"  # a board's folder is named after it
        folder.mkdir()
        with FileStore(folder) as store:
            yield store
        return
    from paneboard.state.nats.store import NatsStore

    server: NatsServer = request.getfixturevalue("nats_server")
    with NatsStore(f"{server.url}/t{uuid.uuid4().hex[:12]}", "test") as nats:
        yield nats


def _prompt(n: int) -> Prompt:
    return prompt(n, board="test", ts=1.0, body=f"job {n}")


def _limit(post: Prompt, most: int, folder: Path) -> OpenLimit:
    fields = {"board": post.board, "sender": post.sender, "id": post.id, "to": list(post.to)}
    return OpenLimit({**fields, "expires": post.expires}, most, folder)


def test_append_encoded_keeps_the_bytes_given(home: Path, store: Store) -> None:
    """A signed post appended encoded reads back beside its payload, byte for byte, and the
    payload verifies."""
    post = _prompt(1)
    pair = open_key(home, "alice")
    payload = seal(encode(post), pair.public, pair.sign)
    [position] = store.append_encoded([payload])
    follower = store.follow(0)
    try:
        records = [record for batch in follower.records() for record in batch]
    finally:
        follower.close()
    assert [(position, post, payload)] == records
    assert VERIFIED == Verdicts(home / post.board).verdict("alice", records[0][2])


def test_a_limit_refuses_the_prompt_beyond_it(store: Store, home: Path) -> None:
    """With a limit of two, the third open prompt for bob is refused with the limit's message
    and not stored."""
    for n in (1, 2):
        store.append_encoded([encode(_prompt(n))], limit=_limit(_prompt(n), 2, home))
    with pytest.raises(BadInput) as refused:
        store.append_encoded([encode(_prompt(3))], limit=_limit(_prompt(3), 2, home))
    message = (
        "board `test`: `alice` already has 2 open prompts for `bob` (the --max-open limit); "
        "wait for some to be closed, or cancel some"
    )
    assert (message, [_prompt(1), _prompt(2)]) == (
        str(refused.value),
        [post for _, post in store.read_all()],
    )


def test_capabilities_are_what_each_store_can_do(store: Store) -> None:
    """The file log compacts and reports its health; NATS reports its health and cannot
    compact."""
    can = (isinstance(store, Compactable), isinstance(store, HealthReport))
    assert {"file": (True, True), "nats": (False, True)}[_kind(store)] == can


def test_closing_a_nats_store_stops_its_event_loop(nats_server: NatsServer) -> None:
    """A NATS store closed stops the thread its event loop ran in."""
    from paneboard.state.nats.store import NatsStore

    before = set(threading.enumerate())
    with NatsStore(f"{nats_server.url}/t{uuid.uuid4().hex[:12]}", "test") as store:
        started = set(threading.enumerate()) - before
        store.read_all()
    assert (1, set()) == (len(started), set(threading.enumerate()) - before)


def _kind(store: Store) -> str:
    return "file" if isinstance(store, FileStore) else "nats"
