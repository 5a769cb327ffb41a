"""`paneboard listen`: one agent's listener.

It holds the agent's pane lock, catches up on the prompts open for the agent (urgent
first, then oldest first), then follows the log, handing each prompt over through its
door exactly once: the delivered key is recorded after the door takes it, then a
`delivered` receipt is posted. A failed delivery is retried with backoff, and holds
back the prompts behind it; when the waits run out (or at once, for a door that
cannot exist) an `undelivered` notice goes on the board and the prompt stays open
for a later listener. A door whose agent holds the prompt for its person (`HeldByAgent`)
has handed it over: the key is recorded, a `held` receipt posted instead, and the prompts
behind it go on; where the agent says later what became of it (`Settles`), that is posted
too: `delivered`, or `undelivered` with the agent's reason. A prompt past the rate waits
(`PolicyScreen.waits`): the prompts behind it go on, and the listener wakes itself when the
window lets it out; so does one its door says must wait (`DoorWaits`: an asleep agent's wake
budget). Under `--wake resume` the end of the agent's session puts the listener to sleep rather
than stopping it (sleep.py). SIGINT or SIGTERM: the delivery in flight finishes, then exit.

The pane, the fold, the policy and the door are one `Deliverer` (listener/deliverer.py, the
Stop hook's too); the loop here decides when to hand over. `use_door` swaps the door the
deliverer delivers through, from the next handover on.
"""

from __future__ import annotations

import heapq
import os
import signal
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

import anyio
import msgspec
from anyio.abc import TaskStatus

from paneboard.board.context import header
from paneboard.listener.deliverer import Composer, Deliverer, Handover, coalesces
from paneboard.listener.doors import Door, DoorWaits, HeldByAgent, Outcome, Settles
from paneboard.listener.seen import SeenTask, Sighting
from paneboard.listener.sleep import Sleeper, WakeDoor, take_over
from paneboard.protocol.errors import BoardIOError, DoorFailed, DoorUnavailable
from paneboard.protocol.posts import Approved, Delivered, Post, Prompt, Undelivered
from paneboard.state.abc import Store
from paneboard.state.failpoint import failpoint
from paneboard.state.fold import PromptState, is_open, order_key
from paneboard.state.panes import presence
from paneboard.state.panes.pane import Pane
from paneboard.state.paths import BoardPaths
from paneboard.state.proc import wait_process_gone

DEFAULT_BACKOFF = (1.0, 2.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0)
CHECKPOINT_EVERY = 10.0
SETTLE = 0.01  # seconds of quiet on the board before a text goes out (a burst being written)
SETTLE_MAX = 0.1  # the most a text waits for that quiet


class Settings(msgspec.Struct, frozen=True):
    """What a listener needs to know: its board and agent, where they live, and how to retry.

    *exe* is the paneboard command written into composed texts; *store* the board's store.
    """

    board: str
    agent: str
    home: Path
    store: Store
    exe: str
    backoff: tuple[float, ...] = DEFAULT_BACKOFF
    store_options: tuple[tuple[str, str], ...] = ()  # how a command names the store (compose)
    # The wall clock, for expiry and receipts. Waits (backoff, retries) use anyio's clock, so a
    # test running the listener on trio with a MockClock passes a `now` that follows it, and
    # backoff, expiry and giving up happen in virtual time, without sleeping.
    now: Callable[[], float] = time.time
    coalesce: bool = True  # several prompts due at once go in one text (`listen --one-per-text`)


class Listener:
    """The loop around one `Deliverer`: each prompt for its pane, through its door."""

    def __init__(
        self,
        settings: Settings,
        door: Door,
        *,
        seen: Sighting | None = None,
        parent: int | None = None,
        transcript: str | None = None,
    ) -> None:
        self.settings = settings
        self.backoff = settings.backoff
        self.store = settings.store
        paths = BoardPaths(settings.home, settings.board)
        self.pane = Pane(paths, settings.agent, settings.store, now=settings.now)
        composer = Composer(settings.exe, settings.home, settings.agent, settings.store_options)
        self.deliverer = Deliverer(self.pane, door, composer)
        self.given_up: set[str] = set()
        self._told_waits: set[str] = set()  # prompts whose wait for the rate was logged
        self._checkpointed = 0.0
        self._queue: list[tuple[int, int, str]] = []  # a heap of (priority rank, log position, id)
        self._parked: list[tuple[float, tuple[int, int, str]]] = []  # (until, entry): the rate
        self._parked_ids: set[str] = set()
        self._held_texts: dict[str, list[str]] = {}  # a held text's first prompt -> its prompts
        self._told_gate: float | None = None  # the unread notice's wait last logged
        self._presence = presence.Presence(
            os.getpid(),
            door.name,
            self.settings.now(),
            host=socket.gethostname(),
            parent=parent,  # the agent process and its conversation file (hooks/session.py)
            transcript=transcript,
        )
        self.seen = None if seen is None else SeenTask(self.deliverer, seen, log=self.log)

    @property
    def door(self) -> Door:
        """The door the deliverer delivers through now."""
        return self.deliverer.door

    def use_door(self, door: Door) -> None:
        """Deliver through *door* from the next handover on (a delivery in flight finishes
        through the door it began with), warning now if it cannot exist."""
        self.deliverer.use_door(door)
        self._check_door()

    def log(self, message: str) -> None:
        from paneboard.protocol.visible import one_line  # one line per message, whatever it holds

        print(
            one_line(f"paneboard listen {self.settings.agent}@{self.settings.board}: {message}"),
            file=sys.stderr,
            flush=True,
        )

    def take_lock(self) -> None:
        """Take the pane lock now (`PaneLocked` if another listener holds it)."""
        self.pane.take_lock()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run until cancelled; report readiness once caught up and watching."""
        self.pane.take_lock()
        try:
            with self.deliverer:
                await self.deliverer.refresh_async()
                self._checkpoint(force=True)
                self._announce()
                self._check_door()
                try:
                    async with anyio.create_task_group() as tg:
                        if self.seen is not None:
                            await tg.start(self.seen.run)
                        live = self.door.live if isinstance(self.door, WakeDoor) else self.door
                        if isinstance(live, Settles):  # a door beside a wake door settles too
                            await tg.start(live.follow, self._settled)
                        self.log(f"listening via {self.door.name} (pid {os.getpid()})")
                        task_status.started()
                        await self._loop()
                finally:
                    if self.seen is not None:  # the delivery in flight is recorded by now
                        self.seen.finish()
                    self._checkpoint(force=True)
        finally:
            self.pane.release()

    def _check_door(self) -> None:
        try:
            self.door.check()
        except DoorUnavailable as exc:
            self.log(f"warning: {exc} (prompts will be reported undelivered until it exists)")

    async def _loop(self) -> None:
        self._queue_up(ps.prompt for ps in self.deliverer.undelivered())
        while True:
            self._unpark()
            gate = self.deliverer.notice_waits()
            if gate is None and self._coalescing() and self._next() is not None:
                await self._settle()
            pending = [] if gate is not None else self._take()
            self._tell_gate(gate)
            if not pending:
                failpoint("idle")
                await self._wait_changed_or_due(gate)
                self._refresh()
                self._checkpoint()
            else:
                await self._deliver(pending)
                self._refresh()

    def _coalescing(self) -> bool:
        return self.settings.coalesce and coalesces(self.door)

    async def _settle(self) -> None:
        """Fold what else comes within `SETTLE` s of the last change (at most `SETTLE_MAX` s in
        all), so that a burst still being written goes in one text: a reader can see a long
        append part written."""
        deadline = anyio.current_time() + SETTLE_MAX
        while anyio.current_time() < deadline:
            with anyio.move_on_after(SETTLE) as quiet:
                await self.deliverer.wait_changed()
            if quiet.cancelled_caught:
                return
            self._refresh()

    def _tell_gate(self, gate: float | None) -> None:
        """Log once per unread notice that prompts wait for it to be read."""
        if gate is None or gate == self._told_gate or self._next() is None:
            return
        self._told_gate = gate
        at = time.strftime("%H:%M:%S", time.localtime(gate))
        self.log(f"a notice is unread: the prompts behind it wait until it is read, or {at}")

    async def _wait_changed_or_due(self, gate: float | None = None) -> None:
        """Until the board changes, the first prompt waiting for the rate is due, or the unread
        notice's wait (*gate*) is over, where there is a queued prompt to send then."""
        due = [self._parked[0][0]] if self._parked else []
        if gate is not None and self._next() is not None:
            due.append(gate)
        if not due:
            await self.deliverer.wait_changed()
            return
        with anyio.move_on_after(max(0.0, min(due) - self.settings.now())):
            await self.deliverer.wait_changed()

    def _park(self, entry: tuple[int, int, str], until: float) -> None:
        """Set a prompt that waits for the rate aside until *until*."""
        if entry[2] not in self._parked_ids:
            self._parked_ids.add(entry[2])
            heapq.heappush(self._parked, (until, entry))

    def _unpark(self) -> None:
        """Once the first prompt's wait for the rate is over, queue again every one set aside:
        those a place now lets out go in one text with it."""
        if not self._parked or self._parked[0][0] > self.settings.now():
            return
        for _, entry in self._parked:
            heapq.heappush(self._queue, entry)
        self._parked, self._parked_ids = [], set()

    def _refresh(self) -> None:
        """Fold what is new; queue the new prompts for this agent (all of them again after a
        compaction)."""
        changed = self.deliverer.refresh()
        if changed.replaced:
            self._queue = []
            self.log("the log was compacted: folded it again")
            self._queue_up(ps.prompt for ps in self.deliverer.undelivered())
            return
        self._queue_up(self._prompt_of(post) for _, post in changed.posts)

    def _prompt_of(self, post: Post) -> Prompt | None:
        """The prompt *post* makes deliverable: a new one for this agent, or one it approved."""
        if isinstance(post, Prompt):
            return post if self.settings.agent in post.to else None
        if isinstance(post, Approved) and post.sender == self.settings.agent:
            ps = self.deliverer.state.prompts.get(post.prompt_id)
            return None if ps is None else ps.prompt
        return None

    def _queue_up(self, prompts: Iterable[Prompt | None]) -> None:
        for prompt in prompts:
            if prompt is None:
                continue
            ps = self.deliverer.state.prompts.get(prompt.id)
            if ps is not None and not self.pane.handed_over(prompt):
                heapq.heappush(self._queue, (*order_key(ps), prompt.id))

    def _wanted(self, prompt_id: str) -> PromptState | None:
        ps = self.deliverer.state.prompts.get(prompt_id)
        if (
            ps is None
            or not is_open(ps, self.settings.agent, self.settings.now())
            or self.pane.handed_over(ps.prompt)
            or self.deliverer.waiting(ps)
        ):
            return None
        return ps

    def _next(self) -> PromptState | None:
        """The first queued prompt still wanted (urgent first, then oldest); closed ones are
        dropped."""
        while self._queue:
            prompt_id = self._queue[0][2]
            ps = self._wanted(prompt_id)
            if ps is not None and not (prompt_id in self.given_up or prompt_id in self._parked_ids):
                return ps
            heapq.heappop(self._queue)
        return None

    def _take(self) -> list[PromptState]:
        """The queued prompts still wanted, in order, taken off the queue: all of them for a door
        that takes several in one text, else the first."""
        taken: list[PromptState] = []
        while (ps := self._next()) is not None:
            heapq.heappop(self._queue)
            taken.append(ps)
            if not self._coalescing():
                break
        return taken

    def _queue_again(self, prompts: Iterable[PromptState]) -> None:
        for ps in prompts:
            heapq.heappush(self._queue, (*order_key(ps), ps.prompt.id))

    async def _deliver(self, pending: list[PromptState]) -> None:
        handover = self.deliverer.gather(pending)
        for ps in handover.declined:
            self._declined(ps)
        going = set(handover.ids)
        declined = {ps.prompt.id for ps in handover.declined}
        self._queue_again(
            ps for ps in pending if ps.prompt.id not in going and ps.prompt.id not in declined
        )
        if not handover.prompts:
            return
        text = handover.text
        waits = (0.0, *self.backoff)
        failure: DoorFailed | None = None
        what = _what(handover)
        for attempt, wait in enumerate(waits, 1):
            if wait:
                self.log(f"retry {attempt}/{len(waits)} of {what} in {wait:g} s after: {failure}")
                if await self._closed_while_waiting(handover.ids, wait):
                    closed = ", ".join(i for i in handover.ids if self._wanted(i) is None)
                    self.log(f"{closed} was closed while waiting to retry; not delivered")
                    self._not_handed(handover)
                    return
            if any(self._wanted(pid) is None for pid in handover.ids):
                self._not_handed(handover)  # not handed over: no place in the minute
                return
            door = self.door  # the one this attempt goes through, whatever a swap does meanwhile
            try:
                with anyio.CancelScope(
                    shield=True
                ):  # a delivery in flight finishes, and is recorded
                    failpoint("before-door")
                    outcome = await door.deliver(handover.shown, text, self.settings.agent)
                    failpoint("after-door")
                    self._record(handover, door.name, outcome)
                return
            except HeldByAgent as exc:
                self._record_held(handover, door.name, exc)
                return
            except DoorWaits as exc:  # an asleep agent's wake budget, or a wake under way
                self.deliverer.take_back(handover.key)
                for prompt in handover.prompts:
                    self._log_waits(prompt, exc.reason, exc.until)
                    held = self.deliverer.state.prompts.get(prompt.id)
                    if held is not None:
                        self._park((*order_key(held), prompt.id), exc.until)
                return
            except DoorUnavailable as exc:
                failure = exc
                break
            except DoorFailed as exc:
                failure = exc
                failpoint("not-taken")
        assert failure is not None
        self._give_up(handover, failure)

    def _not_handed(self, handover: Handover) -> None:
        """*handover* did not go: no place in the minute; its prompts still wanted queue again."""
        self.deliverer.take_back(handover.key)
        wanted = (self._wanted(pid) for pid in handover.ids)
        self._queue_again(ps for ps in wanted if ps is not None)

    def _declined(self, ps: PromptState) -> None:
        """The policy did not let *ps* through now: set aside for the rate, or held/refused."""
        prompt = ps.prompt
        rated = self.deliverer.screen.waits.get(prompt.id)
        if rated is not None and rated.until is not None:
            self._log_waits(prompt, rated.reason, rated.until)
            self._park((*order_key(ps), prompt.id), rated.until)
        self._log_decided(prompt)

    def _log_waits(self, prompt: Prompt, reason: str | None, until: float) -> None:
        if prompt.id not in self._told_waits:
            self._told_waits.add(prompt.id)
            at = time.strftime("%H:%M:%S", time.localtime(until))
            self.log(f"{prompt.id} from {prompt.sender} waits until {at}: {reason}")

    def _log_decided(self, prompt: Prompt) -> None:
        decision = self.deliverer.screen.decided.get(prompt.id)
        if decision is not None:
            done = "held" if decision.action == "hold" else "refused"
            self.log(f"{done} {prompt.id} from {prompt.sender} by policy: {decision.reason}")

    async def _closed_while_waiting(self, prompt_ids: list[str], wait: float) -> bool:
        with anyio.move_on_after(wait):
            while True:
                await self.deliverer.wait_changed()
                self._refresh()
                if any(self._wanted(pid) is None for pid in prompt_ids):
                    return True
        return False

    def _record(self, handover: Handover, door: str, outcome: Outcome) -> None:
        lead = handover.lead
        woke = self.door.woke.pop(lead.id, None) if isinstance(self.door, WakeDoor) else None
        several = len(handover.prompts) > 1
        self.pane.record(
            handover.prompts,
            door,
            outcome,
            warn=self._warn,
            woke=woke,
            handover=handover.key if several else None,
            notices=handover.notices,
        )
        self._presence.last_delivery = self.settings.now()
        presence.write(self.pane.files.presence, self._presence)  # the bucket: at the next refresh
        self.log(
            f"delivered {_what(handover)} via {door}"
            + (" (outcome unknown: timed out)" if outcome == "unknown" else "")
        )
        if self.seen is not None:
            self.seen.check()  # the agent may have recorded it already

    def _record_held(self, handover: Handover, door: str, held: HeldByAgent) -> None:
        """The agent has the text and holds it for its person: never send it again."""
        self.pane.record(handover.prompts, door, held_because=held.reason, warn=self._warn)
        if len(handover.prompts) > 1:  # the agent's later word names the text's first prompt
            self._held_texts[handover.key] = handover.ids
        self.log(f"held {_what(handover)}: the agent holds it ({held.reason})")

    def _settled(self, prompt_id: str, failure: DoorFailed | None) -> None:
        """The agent's later word on a text it held (named by its first prompt): `delivered`,
        or `undelivered` naming its reason, for each prompt in it (the keys stay: the agent has
        had the text)."""
        name = self.door.name

        def notice(pid: str) -> Post:
            head = header(self.settings.board, self.settings.agent, self.settings.now())
            if failure is None:
                return Delivered(**head, prompt_id=pid, door=name)
            return Undelivered(**head, prompt_id=pid, door=name, reason=failure.reason)

        try:
            self.pane.post([notice(pid) for pid in self._held_texts.pop(prompt_id, [prompt_id])])
        except BoardIOError as exc:
            what = "delivered" if failure is None else "undelivered"
            self._warn(f"could not post the {what} notice for {prompt_id}: {exc}")
            return
        if failure is not None:
            self.log(f"undelivered {prompt_id}, held until now: {failure.reason}")
            return
        self.log(f"delivered {prompt_id} via {name}, held until now")
        if self.seen is not None:
            self.seen.check()

    def set_sleep(self, state: presence.Sleep) -> None:
        """Say in the pane's presence that the listener is asleep, woken, or live ("")."""
        self._presence.sleep = state
        self._announce()

    def _warn(self, message: str) -> None:
        self.log(f"warning: {message}")

    def _announce(self) -> None:
        """Write this pane's presence: a local file, and the store's presence bucket where it has
        one."""
        presence.write(self.pane.files.presence, self._presence)
        try:
            self.store.presence.put(self.settings.agent, msgspec.json.encode(self._presence))
        except BoardIOError as exc:
            self.log(f"warning: could not refresh presence: {exc}")

    async def keep_announcing(self, every: float) -> None:
        """Refresh presence before its time-to-live runs out (never, where it lasts as long as
        the pane: *every* is infinite)."""
        while True:
            await anyio.sleep(every)
            await anyio.to_thread.run_sync(self._announce)

    def _give_up(self, handover: Handover, failure: DoorFailed) -> None:
        self.given_up.update(handover.ids)
        self.deliverer.take_back(handover.key)
        notices = [
            Undelivered(
                **header(self.settings.board, self.settings.agent, self.settings.now()),
                prompt_id=prompt.id,
                door=self.door.name,
                reason=failure.reason,
            )
            for prompt in handover.prompts
        ]
        try:
            self.pane.post(notices)
        except BoardIOError as exc:
            self._warn(f"could not post the undelivered notice: {exc}")
        self.log(f"undelivered {_what(handover)}: {failure.reason}")

    def _checkpoint(self, *, force: bool = False) -> None:
        now = anyio.current_time()
        if not force and now - self._checkpointed < CHECKPOINT_EVERY:
            return
        self._checkpointed = now
        try:
            self.deliverer.save_checkpoint()
        except OSError as exc:
            self.log(f"warning: could not write the checkpoint: {exc}")


def _what(handover: Handover) -> str:
    """A handover's prompts, as the log names them."""
    first = handover.lead
    if len(handover.prompts) == 1:
        return f"{first.id} from {first.sender}"
    return f"{len(handover.prompts)} prompts in one text ({first.id} first, from {first.sender})"


async def run_listener(
    listener: Listener,
    parent_pid: int | None = None,
    until: Callable[[], Awaitable[str]] | None = None,
    sleeper: Sleeper | None = None,
) -> None:
    """Run *listener* until SIGINT or SIGTERM, until process *parent_pid* is gone, or until
    *until* returns (its result, a reason, is logged). With a *sleeper* whose policy says
    resume, the end of the agent's session puts the listener to sleep instead (sleep.py)."""
    await take_over(listener.take_lock, listener.pane.files, listener.log)

    async def sleep_or_stop(scope: anyio.CancelScope, why: str) -> None:
        if sleeper is not None and sleeper.wanted():
            await sleeper.sleep(listener)
        listener.log(f"{why}: stopping")
        scope.cancel()

    async with anyio.create_task_group() as tg:
        if until is not None:

            async def stop_when_until() -> None:
                await sleep_or_stop(tg.cancel_scope, await until())

            tg.start_soon(stop_when_until)
        if parent_pid is not None:

            async def stop_with_parent() -> None:
                await wait_process_gone(parent_pid)
                await sleep_or_stop(tg.cancel_scope, f"agent process {parent_pid} is gone")

            tg.start_soon(stop_with_parent)

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for signum in signals:
                    listener.log(f"{signal.Signals(signum).name}: stopping")
                    tg.cancel_scope.cancel()
                    return

        tg.start_soon(stop_on_signal)
        tg.start_soon(listener.keep_announcing, listener.store.presence.ttl / 3)
        await listener.run()
        tg.cancel_scope.cancel()
