"""An asleep-capable listener with a stand-in resume door, as a real process.

`python -m tests.listener.wake_stand_in HOME AGENT PARENT_PID FOLDER [TRANSCRIPT]`: a listener as
AGENT on board `test`, stopping (or falling asleep, as AGENT's policy says) when PARENT_PID ends.
Its live door appends each text to FOLDER/live.txt. Its resume door, for session `sess-1`, appends
the text to FOLDER/wakes.txt and starts the "woken session", a `sleep` process whose pid it
writes to FOLDER/session.pid, unless FOLDER/fail exists: then it fails with that file's words.
Where FOLDER/hold exists, the resume door returns only once FOLDER/go does (a resume whose turn
takes a while to show). With TRANSCRIPT, a file of Claude Code's transcript lines, it posts
`seen` from it as a Claude Code listener does.
"""

from __future__ import annotations

import sys
import time
from functools import partial
from pathlib import Path

import anyio

from paneboard.agents.base import Spawned
from paneboard.agents.claude import CLAUDE
from paneboard.board.context import Context
from paneboard.listener.listen import Listener, Settings, run_listener
from paneboard.listener.seen import Sighting
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
        if (self.folder / "hold").exists():
            while not (self.folder / "go").exists():  # noqa: ASYNC110  # a file, not an event
                await anyio.sleep(0.05)
        return "accepted"


def main(home: str, agent: str, parent: str, folder: str, transcript: str = "") -> None:
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
    seen = None
    if transcript:
        mark = ctx.paths.pane(agent).mark
        seen = Sighting(mark, "claude-transcript", Path(transcript), CLAUDE.user_texts)
    listener = Listener(settings, door, seen=seen)
    anyio.run(run_listener, listener, int(parent), None, Sleeper(door))


if __name__ == "__main__":
    main(*sys.argv[1:6])
