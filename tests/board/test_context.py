"""A command's `Context`: it closes the store it opened, and opens it again to reconnect."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

from paneboard.board.context import Context
from testing.helpers import NatsServer


def test_context_closes_its_store_and_reopens_it_to_reconnect(
    home: Path, nats_server: NatsServer
) -> None:
    """A store opened without reconnecting is opened again when asked to reconnect; leaving
    the context closes it, and its event loop's thread is gone."""
    from paneboard.state.nats.store import NatsStore

    url = f"{nats_server.url}/t{uuid.uuid4().hex[:12]}"
    before = set(threading.enumerate())
    with Context(home, "test", "alice", store_url=url) as ctx:
        first = ctx.store()
        again = ctx.store(reconnect=True)
        assert isinstance(again, NatsStore)
        attempts = again.nc.options["max_reconnect_attempts"]
        assert (False, -1, again) == (first is again, attempts, ctx.store(reconnect=True))
    assert set() == set(threading.enumerate()) - before
