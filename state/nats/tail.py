"""An ordered consumer of one JetStream stream that starts itself again wherever it stopped.

JetStream's ordered consumer is an ephemeral push consumer (no acks, one replica, in memory)
that the client replaces when it notices a gap: a message whose consumer sequence skips
one, or a heartbeat naming a later one. Here it is also replaced when it falls silent for
`SILENT` seconds (its server died), again and again until a new one is made: on a cluster,
the consumer of a listener resumes on the new leader from the sequence after the last one
it handed on.
Messages of a replaced consumer are dropped, and a sequence already handed on is never
handed on again, so nothing is delivered twice and nothing is skipped.

nats-py has an ordered consumer of its own, but it starts a replacement from sequence 1
when it loses its consumer before the first message came (a whole stream replayed), makes
each replacement once, in a task that may overlap the next one's, and tries again only
two heartbeats later. After a whole cluster restarts, the servers also bring back the old
consumer, which replays the stream from its first sequence: its consumer sequences do not
follow on, so it is replaced like any other. Tested against real servers
(tests/contract/test_cluster.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

HEARTBEAT = 1.0  # the server's idle heartbeat for each consumer
SILENT = 3 * HEARTBEAT  # nothing heard for this long: the consumer is gone, make another
INACTIVE = 30.0  # the server deletes a consumer nobody listens to after this long


class OrderedTail:
    """Hands ``(stream sequence, data)`` to *deliver*, in order, from sequence *start* on, of
    the messages on *where* (stream, subject).

    Runs on the event loop of the client *nc*; `open` makes the first consumer (and raises
    if it cannot), a task then keeps one alive until `close`.
    """

    def __init__(
        self,
        js: Any,
        where: tuple[str, str],
        start: int,
        deliver: Callable[[int, bytes], None],
    ) -> None:
        self.js, self.nc = js, js._nc
        self.stream, self.subject = where
        self.next = start  # the stream sequence wanted next
        self.deliver = deliver
        self._generation = 0
        self._dseq = 0  # the current consumer's last sequence seen
        self._heard = 0.0
        self._broken = asyncio.Event()
        self._sub: Any = None
        self._task: asyncio.Task[None] | None = None

    async def open(self) -> None:
        await self._start()
        self._task = asyncio.create_task(self._supervise())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._drop_subscription()

    async def _drop_subscription(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(Exception):  # the connection may be gone: so is the interest
                await self._sub.unsubscribe()
            self._sub = None

    async def _start(self) -> None:
        """Subscribe a new inbox, then create a consumer delivering to it from `next`."""
        from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

        await self._drop_subscription()
        self._generation += 1
        generation = self._generation
        self._dseq = 0
        self._broken.clear()

        async def arrived(msg: Any) -> None:
            if generation == self._generation:  # else a replaced consumer's: dropped
                await self._arrived(msg)

        inbox = self.nc.new_inbox()
        self._sub = await self.nc.subscribe(inbox, cb=arrived)
        config = ConsumerConfig(
            deliver_subject=inbox,
            deliver_policy=DeliverPolicy.BY_START_SEQUENCE,
            opt_start_seq=self.next,
            filter_subject=self.subject,
            ack_policy=AckPolicy.NONE,
            flow_control=True,
            idle_heartbeat=HEARTBEAT,
            mem_storage=True,
            num_replicas=1,
            inactive_threshold=INACTIVE,
        )
        await self.js.add_consumer(self.stream, config)
        self._heard = asyncio.get_running_loop().time()

    async def _arrived(self, msg: Any) -> None:
        self._heard = asyncio.get_running_loop().time()
        headers = msg.headers or {}
        if headers.get("Status") == "100":  # a control message
            await self._control(msg, headers)
            return
        sequence = msg.metadata.sequence
        if sequence.consumer != self._dseq + 1:
            self._broken.set()  # a gap: a message was lost on the way
            return
        self._dseq = sequence.consumer
        if sequence.stream >= self.next:
            self.next = sequence.stream + 1
            self.deliver(sequence.stream, bytes(msg.data))

    async def _control(self, msg: Any, headers: dict[str, str]) -> None:
        if msg.reply:  # flow control: the server waits for this answer before sending more
            await self.nc.publish(msg.reply)
            return
        stalled = headers.get("Nats-Consumer-Stalled")
        if stalled:
            await self.nc.publish(stalled)
        last = headers.get("Nats-Last-Consumer")
        if last is not None and int(last) != self._dseq:
            self._broken.set()  # the server sent messages this side never saw

    async def _supervise(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._broken.wait(), HEARTBEAT)
            if not self._broken.is_set() and loop.time() - self._heard < SILENT:
                continue
            pause = 0.1
            while True:
                try:
                    await self._start()
                    break
                except Exception:  # noqa: BLE001  # whatever failed, try again: the listener waits
                    await asyncio.sleep(pause)
                    pause = min(2 * pause, 2.0)
