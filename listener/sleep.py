"""The asleep listener: a listener that outlives its agent's session, and starts it again.

A listener whose agent's policy says ``--wake resume`` does not stop when the agent's process
ends: it keeps the pane, writes its presence ``asleep``, and hands the next prompt it would
deliver to the agent's own resume door (`Agent.wake_door`), which starts the ended session
again with the prompt as its next turn. The rest is the listener's usual path: the policy
screen first (a held or refused prompt wakes nothing), the delivered key after the door took
it, `delivered` once the woken session admitted it (its receipt names the session: ``woke``),
`undelivered` with the agent's words when the resume fails (the agent stays asleep).

- **One wake, then hand over.** Once woken, the session's own hooks start its listener; the
  prompts behind the one that woke it wait (`DoorWaits`) for that listener, which takes the
  pane over (`take_over`): two sessions of one agent never run at once. Where the wake door
  names the woken process, the listener falls asleep again when it ends.
- **The budget.** At most ``wake_limit`` wakes an hour (state/panes/wakes.py); past it the prompts
  wait, and `status` says until when.
- **Exactly once.** Each wake is recorded before the resume runs. A listener that finds a
  wake of the same prompt begun within `RESUME_WITHIN` seconds (its predecessor was killed in
  the middle of it) lets the prompt wait out that time before any door has it: by then the
  woken session shows it in its conversation, and the door finds it there instead of sending
  it again. Asleep, it hands the prompt to the resume door under that same record, which looks
  for the prompt in the session first. A prompt is charged to the budget once: a wake of a
  prompt recorded in the last hour (a predecessor killed before its resume ran, or a resume
  that failed) is not recorded again.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio

from paneboard.listener.doors.base import Door, DoorWaits, Outcome
from paneboard.protocol.errors import DoorUnavailable, PaneLocked
from paneboard.protocol.posts import Prompt
from paneboard.state.failpoint import failpoint
from paneboard.state.panes import presence, wakes
from paneboard.state.panes.lock import holder
from paneboard.state.paths import PaneFiles
from paneboard.state.proc import wait_process_gone
from paneboard.state.trust.policy import Policy

if TYPE_CHECKING:
    from paneboard.listener.listen import Listener

__all__ = ["RESUME_WITHIN", "Sleeper", "WakeDoor", "take_over"]

RESUME_WITHIN = 20.0  # seconds a begun wake may take to show in the session's conversation
WOKEN_WAIT = 5.0  # how often a prompt behind a wake asks again, until the pane is handed over
HANDOVER_WAIT = 120.0  # how long a new listener waits for an asleep one to let the pane go


class WakeDoor:
    """The listener's door, with its agent's resume door beside it.

    Live, prompts go through *live*; a prompt whose wake began within `RESUME_WITHIN` seconds
    waits that out first. Asleep (`fall_asleep`), a prompt goes through *wake* (the budget
    permitting), and once one has, the door is `woken` and the prompts behind it wait.
    """

    def __init__(
        self,
        live: Door,
        wake: Door,
        session: str,
        files: PaneFiles,
        policy: Callable[[], Policy],
        now: Callable[[], float],
    ) -> None:
        self.live, self.wake = live, wake
        self.session = session
        self.files = files
        self.policy = policy
        self.now = now
        self.name = live.name
        self.state: presence.Sleep = ""
        self.woke: dict[str, str] = {}  # prompt id -> the session it woke, for its receipt
        self.changed = anyio.Event()  # set at each change of `state`

    def check(self) -> None:
        (self.wake if self.state else self.live).check()

    def set_state(self, state: presence.Sleep) -> None:
        self.state = state
        self.name = self.wake.name if state else self.live.name
        self.changed.set()
        self.changed = anyio.Event()

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> Outcome:
        now = self.now()
        kept = wakes.read(self.files.wakes)
        of_it = [w for w in wakes.last_hour(kept, now) if w.prompt == prompt.id and w.ts <= now]
        began = next((w for w in of_it if now - RESUME_WITHIN < w.ts), None)
        if not self.state:
            if began is not None:  # a wake of it was under way when its listener stopped
                at = time.strftime("%H:%M:%S", time.localtime(began.ts))
                why = f"a wake of {began.session} for it began at {at}: waiting for it to show"
                raise DoorWaits(self.name, began.ts + RESUME_WITHIN, why)
            return await self.live.deliver(prompt, text, agent)
        if self.state == "woken":
            why = f"{self.session} was woken: its own listener takes the pane over"
            raise DoorWaits(self.name, now + WOKEN_WAIT, why)
        policy = self.policy()
        if policy.wake != "resume":
            raise DoorUnavailable(self.name, "the policy says --wake never: asleep, not woken")
        if not of_it:
            until = wakes.spent_until(kept, policy.wake_limit, now)
            if until is not None:
                raise DoorWaits(self.name, until, wakes.budget_reason(policy.wake_limit))
            wakes.record(self.files.wakes, wakes.Wake(now, self.session, prompt.id))
            failpoint("wake-recorded")
        # With a wake begun, the agent's door looks for the prompt in the session first.
        outcome = await self.wake.deliver(prompt, text, agent)
        self.woke[prompt.id] = self.session
        self.set_state("woken")
        return outcome

    def woken_pid(self) -> int | None:
        """The woken session's process, where the wake door names it."""
        spawned = getattr(self.wake, "spawned", None)  # a door that knows what it started
        pid = getattr(spawned, "pid", None)
        return pid if isinstance(pid, int) else None


class Sleeper:
    """What keeps *listener* in its pane once the agent's process ended: asleep, woken, and
    asleep again once the woken process ends (where the door names it)."""

    def __init__(self, door: WakeDoor) -> None:
        self.door = door

    def wanted(self) -> bool:
        """Whether the policy says to sleep rather than stop (asked when the agent ends)."""
        return self.door.policy().wake == "resume"

    async def sleep(self, listener: Listener) -> None:
        """Asleep until cancelled: the door wakes the session; the listener stays."""
        while True:
            self._set(listener, "asleep")
            listener.log(f"the session ended: asleep; a prompt resumes {self.door.session}")
            while self.door.state != "woken":
                await self.door.changed.wait()
            self._set(listener, "woken")
            pid = self.door.woken_pid()
            listener.log(f"woke {self.door.session}" + (f" (pid {pid})" if pid else ""))
            if pid is None:
                await anyio.sleep_forever()  # until the woken session's listener takes over
            else:
                await wait_process_gone(pid)

    def _set(self, listener: Listener, state: presence.Sleep) -> None:
        if self.door.state != state:
            self.door.set_state(state)
        listener.set_sleep(state)


async def take_over(
    take_lock: Callable[[], None], files: PaneFiles, log: Callable[[str], None]
) -> None:
    """Take the pane lock; from an asleep or woken listener of this pane, take it over: ask it
    to stop (SIGTERM: it finishes the delivery in flight and checkpoints) and wait for it to let
    go. `PaneLocked` from a live listener, or one that does not let go in time."""
    try:
        take_lock()
        return
    except PaneLocked as exc:
        sleeping = _sleeping(files)
        if sleeping is None:
            raise
        locked = exc
    pid, state = sleeping
    log(f"the pane is held by {state} listener pid {pid}: taking it over")
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    with anyio.move_on_after(HANDOVER_WAIT):
        while True:
            try:
                take_lock()
                return
            except PaneLocked:
                await anyio.sleep(0.05)
    raise locked


def asleep_holder(files: PaneFiles) -> int | None:
    """The pid of the asleep or woken listener holding the pane (None for none, or a live one)."""
    sleeping = _sleeping(files)
    return None if sleeping is None else sleeping[0]


def _sleeping(files: PaneFiles) -> tuple[int, presence.Sleep] | None:
    """The pane's holder and its state, where the holder is an asleep or woken listener (its
    presence record, written by that same process, says so)."""
    pid = holder(files.lock)
    if not (pid and pid > 0):
        return None
    record = presence.read(files.presence)
    if record is None or record.pid != pid or not record.sleep:
        return None
    return pid, record.sleep
