"""An asleep-capable listener with a stand-in resume door, as a real process.

`python -m tests.listener.wake_stand_in HOME AGENT PARENT_PID FOLDER`: a listener as AGENT on
board `test`, stopping (or falling asleep, as AGENT's policy says) when PARENT_PID ends. Its
live door appends each text to FOLDER/live.txt. Its resume door, for session `sess-1`, appends
the text to FOLDER/wakes.txt and starts the "woken session", a `sleep` process whose pid it
writes to FOLDER/session.pid, unless FOLDER/fail exists: then it fails with that file's words.
"""

from __future__ import annotations

import sys
import time
from functools import partial
from pathlib import Path

import anyio

from paneboard.agents.base import Spawned
from paneboard.board.context import Context
from paneboard.listener.listen import Listener, Settings, run_listener
from paneboard.listener.sleep import Sleeper, WakeDoor
from paneboard.protocol.errors import DoorFailed
from paneboard.protocol.posts import Outcome, Prompt
from paneboard.state.trust.policy import read_policy

SESSION = "sess-1"


class FileDoor:
    name = "stdout"

    def __init__(self, path: Path) -> None:
        self.path = path

    def check(self) -> None:
        pass

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> Outcome:
        with self.path.open("a") as out:
            out.write(text + "\n\x1e\n")
        return "accepted"


class ResumeDoor(FileDoor):
    name = "stand-in-wake"

    def __init__(self, folder: Path) -> None:
        super().__init__(folder / "wakes.txt")
        self.folder = folder
        self.spawned: Spawned | None = None

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> Outcome:
        fail = self.folder / "fail"
        if fail.exists():
            raise DoorFailed(self.name, fail.read_text().strip())
        await super().deliver(prompt, text, agent)
        session = await anyio.open_process(["sleep", "300"], start_new_session=True)
        (self.folder / "session.pid").write_text(f"{session.pid}\n")
        self.spawned = Spawned(SESSION, "stand-in", session.pid)
        return "accepted"


def main(home: str, agent: str, parent: str, folder: str) -> None:
    ctx = Context.resolve(home, "test", agent)
    where = Path(folder)
    settings = Settings(
        "test", agent, ctx.home, ctx.store(), "paneboard", backoff=(0.1,), now=time.time
    )
    policy = partial(read_policy, ctx.paths.dir, agent)
    door = WakeDoor(
        FileDoor(where / "live.txt"),
        ResumeDoor(where),
        SESSION,
        ctx.paths.pane(agent),
        policy,
        time.time,
    )
    listener = Listener(settings, door)
    anyio.run(run_listener, listener, int(parent), None, Sleeper(door))


if __name__ == "__main__":
    main(*sys.argv[1:5])
