"""`seen`: finding the prompts an agent's own conversation file shows as a turn's input.

A prompt is seen when its header line, ``[paneboard] prompt ID from …`` (protocol/compose.py:
every body line starts with ``> ``, so a body cannot imitate it), starts a line of the text
of a user-role record of the agent's conversation file. Which records those are is each
agent's own (its module in agents/ gives `user_texts`): queued is not seen.

`Sighting` follows one such file for one pane: it reads only what was appended since its
mark (kept in the pane's ``transcript`` file), and answers which prompt ids turned up. Where
the door follows the same file (Claude Code's admission), the two share its one reader.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from anyio.abc import TaskStatus

from paneboard.board.context import header
from paneboard.protocol.errors import BadInput, BoardIOError
from paneboard.protocol.posts import Prompt, Seen
from paneboard.state.fold import BoardState, PromptState, is_open
from paneboard.state.panes.transcript import (
    FileWatch,
    LineReader,
    Lines,
    SharedLines,
    load_mark,
    save_mark,
    watch_file,
)

if TYPE_CHECKING:
    from paneboard.listener.deliverer import Deliverer

NEEDLE = b"[paneboard] prompt "
HEADER = re.compile(r"^\[paneboard\] prompt ([0-9a-z]{26}) from ", re.MULTILINE)
SAVE_EVERY = 5.0


Texts = Callable[[dict[str, Any]], list[str]]  # a user-role record's texts; [] for another


def content_texts(content: object) -> list[str]:
    """The texts of a message's content: a string, or a list of parts (``text`` or
    ``input_text`` parts; a part with no type, as Gemini CLI writes them, is text)."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    texts = ("text", "input_text")
    parts = (p for p in content if isinstance(p, dict) and p.get("type", "text") in texts)
    return [p["text"] for p in parts if isinstance(p.get("text"), str)]


def field(record: dict[str, Any], name: str) -> dict[str, Any]:
    """*record*'s object *name*; {} when it is missing or not an object."""
    value = record.get(name)
    return value if isinstance(value, dict) else {}


def message_texts(record: dict[str, Any]) -> list[str]:
    """The texts of a ``"type": "message"`` record whose message is the user's, as pi and
    Factory Droid write their session files; [] for another record."""
    message = field(record, "message")
    if record.get("type") != "message" or message.get("role") != "user":
        return []
    return content_texts(message.get("content"))


def prompt_ids(records: Iterable[dict[str, Any]], texts: Texts) -> list[str]:
    """The prompt ids whose header starts a line of a user-role record, in file order."""
    return [pid for r in records for text in texts(r) for pid in HEADER.findall(text)]


class Pending(Protocol):
    """A conversation file not written yet: where it will be, and what to watch until then."""

    def find(self) -> Path | None: ...

    def watch(self) -> FileWatch: ...


class Sighting:
    """One pane's view of its agent's conversation file, from the pane's mark on.

    *path* is the file, or None for one not written yet (a Codex thread's rollout): *pending*
    finds it, looked for again whenever what it watches changes. With *shared*, a reader of
    the same file another follower in this process reads (the door's), it reads through that.
    """

    def __init__(
        self,
        mark_path: Path,
        source: str,
        path: Path | None,
        texts: Texts,
        *,
        pending: Pending | None = None,
        shared: SharedLines | None = None,
    ) -> None:
        self.mark_path = mark_path
        self.source = source
        self.texts = texts
        self.pending = pending
        self.reader: Lines | None = None
        if shared is not None and path == shared.path:
            self.reader = shared.tap(load_mark(mark_path))
        elif path is not None:
            self.reader = self._reader(path)
        self._saved = 0.0

    def _reader(self, path: Path) -> Lines:
        return LineReader(path, NEEDLE, load_mark(self.mark_path))

    @property
    def path(self) -> Path | None:
        return None if self.reader is None else self.reader.path

    def read_new(self) -> list[str]:
        """The prompt ids in what was appended since the last read (blocking file work)."""
        if self.reader is None and self.pending is not None:
            found = self.pending.find()
            self.reader = None if found is None else self._reader(found)
        return [] if self.reader is None else prompt_ids(self.reader.read_new(), self.texts)

    def save(self, *, force: bool = False) -> None:
        """Keep the mark (at most every few seconds unless *force*d); never fails the caller."""
        mark = None if self.reader is None else self.reader.mark
        now = time.monotonic()
        if mark is None or (not force and now - self._saved < SAVE_EVERY):
            return
        self._saved = now
        try:
            save_mark(self.mark_path, mark)
        except (OSError, BadInput):
            pass  # only an optimisation (a planted link is refused): a later reader reads more

    def close(self, *, save: bool = True) -> None:
        if save:
            self.save(force=True)
        if self.reader is not None:
            self.reader.close()

    def watch(self) -> FileWatch:
        if self.reader is not None:
            return watch_file(self.reader.path)
        assert self.pending is not None
        return self.pending.watch()


def due(
    state: BoardState,
    agent: str,
    ids: Iterable[str],
    delivered: Callable[[Prompt], bool],
    now: float,
) -> tuple[list[PromptState], list[str]]:
    """Of the prompt ids found: those to receipt now, and those found before their delivery.

    Prompts that are not *agent*'s, already seen, or closed but by the agent itself are
    dropped: one it acked or answered still gets its `seen` (a woken agent can answer before
    its listener has read its turn in the file; the fold records a late `seen` without
    undoing the close). A pane's fold has dropped such a prompt: it keeps it in `unseen`.
    """
    ready: list[PromptState] = []
    early: list[str] = []
    for pid in dict.fromkeys(ids):
        ps = state.prompts.get(pid) or state.unseen.get(pid)
        r = None if ps is None else ps.recipients.get(agent)
        if ps is None or r is None or r.seen_at is not None:
            continue
        if not is_open(ps, agent, now) and r.stage not in ("acked", "answered"):
            continue
        if delivered(ps.prompt):
            ready.append(ps)
        else:
            early.append(pid)
    return ready, early


def receipt(ps: PromptState, agent: str, door: str, source: str) -> Seen:
    """The `seen` receipt for *ps*, naming the door that delivered it when the board knows it."""
    r = ps.recipients[agent]
    door = r.door or door
    return Seen(**header(ps.prompt.board, agent), prompt_id=ps.prompt.id, door=door, source=source)


class SeenTask:
    """A follower of the agent's conversation file for *deliverer*'s pane, posting `seen`
    receipts.

    A prompt found in the file is receipted once the pane recorded its delivery: `check()`
    runs after each delivery, since the agent may show a prompt before its delivery was
    recorded. The deliverer's door names it in a receipt when the board does not know it;
    *log*, if given, hears of each receipt and of a receipt that could not be posted.

    The mark is never kept past a prompt still waiting for its delivery to be recorded (a
    listener stopped then leaves it to the next one to find), and `finish()`, once the
    delivery in flight is recorded at a listener's stop, reads the file a last time: a
    listener handing the pane over owes the `seen` of the turn it delivered.
    """

    def __init__(
        self,
        deliverer: Deliverer[Any],
        sighting: Sighting,
        *,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.deliverer = deliverer
        self.pane = deliverer.pane
        self.sighting = sighting
        self.log = log
        self.waiting: dict[str, None] = {}  # found before their delivery was recorded
        self.posted: set[str] = set()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Catch up on the file, then follow it; report readiness once watching."""
        watch = self.sighting.watch()
        try:
            where = self.sighting.path or "the thread's rollout, once Codex writes it"
            self._say(f"following {where} for seen")
            self.found(await anyio.to_thread.run_sync(self.sighting.read_new))
            self._save(force=True)
            task_status.started()
            while True:
                await watch.wait_changed()
                had = self.sighting.path
                self.found(await anyio.to_thread.run_sync(self.sighting.read_new))
                self._save()
                if self.sighting.path != had:  # the rollout appeared: watch it from now on
                    watch.close()
                    watch = self.sighting.watch()
                    self.found(await anyio.to_thread.run_sync(self.sighting.read_new))
        finally:
            watch.close()

    def finish(self) -> None:
        """The last read of the file, at the listener's stop (after the delivery in flight is
        recorded): the `seen` of what it shows is posted, then the mark kept; never raises
        for the file (a receipt not posted is told to *log*)."""
        try:
            self.found(self.sighting.read_new())
        except OSError as exc:
            self._say(f"warning: could not read {self.sighting.path} a last time: {exc}")
        finally:
            self._save(force=True)
            self.sighting.close(save=False)

    def _save(self, *, force: bool = False) -> None:
        """Keep the mark, unless a prompt read before it waits for its delivery's record."""
        if not self.waiting:
            self.sighting.save(force=force)

    def found(self, ids: list[str]) -> None:
        """Note the prompt ids the file showed, and receipt those whose delivery is recorded."""
        self.waiting.update(dict.fromkeys(ids))
        self.check()

    def check(self) -> None:
        """Post `seen` for the waiting prompts whose delivery is recorded.

        A receipt that cannot be posted is told to *log*, or raised without one.
        """
        if not self.waiting:
            return
        fresh = (pid for pid in self.waiting if pid not in self.posted)
        agent, state = self.pane.agent, self.deliverer.state
        ready, early = due(state, agent, fresh, self.pane.handed_over, self.pane.now())
        self.waiting = dict.fromkeys(early)
        if not ready:
            return
        self.posted.update(ps.prompt.id for ps in ready)
        try:
            door = self.deliverer.door.name
            self.pane.post([receipt(ps, agent, door, self.sighting.source) for ps in ready])
        except BoardIOError as exc:
            if self.log is None:
                raise
            self.log(f"warning: could not post the seen notice: {exc}")
        for ps in ready:
            self._say(f"seen {ps.prompt.id} in {self.sighting.source}")
        self._save(force=True)

    def _say(self, message: str) -> None:
        if self.log is not None:
            self.log(message)
