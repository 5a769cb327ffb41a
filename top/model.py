"""What `paneboard top` shows, kept up to date post by post: no Textual, no I/O, no clock.

The fold (`state.fold`) holds each prompt's stage per recipient; this model adds what a
person looks at: the open prompts in catch-up order (kept sorted as they come and go, so a
post costs a bisect, never a sort of the board), how many prompts are open for each agent,
every post about each prompt (its receipts, acks and answers), the threads prompts belong
to, and the last posts. Stages are always read through `state.fold.stage`, so a stage the
fold learns later (`seen`) shows without a change here. The fold is the one `status` makes:
only verified posts move a stage, and those that do not are marked (`not_counted`).

A thread is the prompts sharing a `thread` name; a prompt without one belongs to the thread
of the prompt it replies to, or starts its own.
"""

from __future__ import annotations

import bisect
import collections
import heapq
from collections.abc import Iterable, Iterator, Mapping

from paneboard.protocol.posts import PRIORITY_RANK, Post, Prompt
from paneboard.state.fold import BoardState, PromptState, is_open, stage
from paneboard.state.trust.policy import RATE, rate_waits

RowKey = tuple[int, int, str]  # (priority rank, log position, prompt id): catch-up order
STALE_STAGES: frozenset[str] = frozenset(
    {"delivered", "seen", "read"}
)  # handed over, not yet closed
RECENT = 2000  # posts kept for the posts pane


def row_key(ps: PromptState) -> RowKey:
    return PRIORITY_RANK[ps.prompt.priority], ps.position, ps.prompt.id


class Rows:
    """Prompt ids in catch-up order; adding or removing one is a bisect and a list move."""

    def __init__(self, keys: Iterable[RowKey] = ()) -> None:
        self.keys = sorted(keys)

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, index: int) -> str:
        return self.keys[index][2]

    def __iter__(self) -> Iterator[str]:
        return (key[2] for key in self.keys)

    def index(self, key: RowKey) -> int | None:
        i = bisect.bisect_left(self.keys, key)
        return i if i < len(self.keys) and self.keys[i] == key else None

    def add(self, key: RowKey) -> None:
        if self.index(key) is None:
            bisect.insort(self.keys, key)

    def discard(self, key: RowKey) -> None:
        i = self.index(key)
        if i is not None:
            del self.keys[i]


class Filter:
    """Which prompts and posts are shown: those of one agent, of one thread, or all."""

    __slots__ = ("agent", "thread")

    def __init__(self, agent: str | None = None, thread: str | None = None) -> None:
        self.agent = agent
        self.thread = thread

    def __bool__(self) -> bool:
        return self.agent is not None or self.thread is not None


class TopModel:
    """The board as `top` shows it; `take()` the posts the fold has just applied."""

    def __init__(self, state: BoardState) -> None:
        self.state = state
        self.filter = Filter()
        self.rows = Rows()
        self.related: dict[str, list[tuple[int, Post]]] = {}
        self.thread_of: dict[str, str] = {}
        self.members: dict[str, list[str]] = {}
        self.agents: dict[str, None] = {}  # every name seen on the board, in order of appearance
        self.open_count: collections.Counter[str] = collections.Counter()
        self.recent: collections.deque[tuple[int, Post]] = collections.deque(maxlen=RECENT)
        self.dirty: list[tuple[RowKey, bool]] = []  # rows changed: (key, added or removed)
        self._open: dict[str, frozenset[str]] = {}  # prompt id -> recipients it is open for
        self._expiries: list[tuple[float, str]] = []  # a heap of (expires, prompt id)
        self.rates: dict[str, int] = {}  # recipient -> its policy's rate, where not the default
        self._waits: tuple[tuple[int, int], dict[str, dict[str, float]]] = ((-1, 0), {})

    def take(self, posts: Iterable[tuple[int, Post]], now: float) -> list[tuple[int, Post]]:
        """Index *posts* (already folded into `state`); return those the filter shows."""
        touched: dict[str, None] = {}
        shown = []
        for position, post in posts:
            self.agents.setdefault(post.sender)
            if isinstance(post, Prompt):
                self.agents.update(dict.fromkeys(post.to))
                self._index_prompt(post)
                touched[post.id] = None
            else:
                pid = getattr(post, "prompt_id", None)
                if isinstance(pid, str) and pid in self.state.prompts:
                    self.related.setdefault(pid, []).append((position, post))
                    touched[pid] = None
            self.recent.append((position, post))
            if self.shows_post(post):
                shown.append((position, post))
        for pid in touched:
            self.update(pid, now)
        return shown

    def reset(self, state: BoardState) -> None:
        """Start again from *state* (the log was replaced), keeping the filter."""
        kept = self.filter
        self.__init__(state)  # type: ignore[misc]  # one place lists every field
        self.filter = kept

    def _index_prompt(self, prompt: Prompt) -> None:
        parent = prompt.reply_to
        if prompt.thread is not None:
            key = f"#{prompt.thread}"
        elif parent is not None and parent in self.thread_of:
            key = self.thread_of[parent]
        else:
            key = prompt.id
        self.thread_of[prompt.id] = key
        self.members.setdefault(key, []).append(prompt.id)
        if prompt.expires is not None:
            heapq.heappush(self._expiries, (prompt.expires, prompt.id))

    def update(self, pid: str, now: float) -> None:
        """Bring the counts and the rows up to date for prompt *pid*."""
        ps = self.state.prompts.get(pid)
        before = self._open.get(pid, frozenset())
        names = () if ps is None else ps.recipients
        after = frozenset(n for n in names if ps is not None and is_open(ps, n, now))
        if before != after:
            self.open_count.subtract(before - after)
            self.open_count.update(after - before)
            if after:
                self._open[pid] = after
            else:
                self._open.pop(pid, None)
        if ps is None:
            return
        key = row_key(ps)
        was = self.rows.index(key) is not None
        if after and self.shows(ps):
            if not was:
                self.rows.add(key)
            self.dirty.append((key, not was))
        elif was:
            self.rows.discard(key)
            self.dirty.append((key, True))

    def changed_rows(self) -> tuple[int | None, list[int]]:
        """Since the last call: the first row that moved (None if none did), rows changed."""
        moved: int | None = None
        changed = []
        for key, shifted in self.dirty:
            index = bisect.bisect_left(self.rows.keys, key)
            if shifted:
                moved = index if moved is None else min(moved, index)
            else:
                changed.append(index)
        self.dirty.clear()
        return moved, changed

    def expire(self, now: float) -> bool:
        """Bring expired prompts up to date; True if any was."""
        hit = False
        while self._expiries and self._expiries[0][0] <= now:
            _, pid = heapq.heappop(self._expiries)
            self.update(pid, now)
            hit = True
        return hit

    def next_expiry(self) -> float | None:
        return self._expiries[0][0] if self._expiries else None

    def waits_until(self, ps: PromptState, name: str, now: float) -> float | None:
        """Until when *ps* waits for *name*'s rate (no person needed), if it does: the count
        `status` makes, done once a second per recipient at most."""
        if ps.recipients[name].stage not in ("posted", "undelivered"):
            return None
        stamp = (self.state.position, int(now))
        if self._waits[0] != stamp:
            self._waits = (stamp, {})
        per = self._waits[1]
        if name not in per:
            per[name] = rate_waits(self.state, name, self.rates.get(name, RATE), now)
        return per[name].get(ps.prompt.id)

    # -- the filter ----------------------------------------------------------------------

    def set_filter(self, agent: str | None, thread: str | None) -> None:
        """Show only prompts and posts of *agent* and of *thread* (a key of `members`)."""
        self.filter = Filter(agent, thread)
        keys = (row_key(self.state.prompts[pid]) for pid in self._open)
        self.rows = Rows(key for key in keys if self.shows(self.state.prompts[key[2]]))

    def shows(self, ps: PromptState) -> bool:
        f = self.filter
        if f.agent is not None and f.agent != ps.prompt.sender and f.agent not in ps.prompt.to:
            return False
        return f.thread is None or self.thread_of.get(ps.prompt.id) == f.thread

    def shows_post(self, post: Post) -> bool:
        if not self.filter:
            return True
        pid = post.id if isinstance(post, Prompt) else getattr(post, "prompt_id", None)
        ps = self.state.prompts.get(pid) if isinstance(pid, str) else None
        return ps is not None and self.shows(ps)

    def shown_posts(self) -> list[tuple[int, Post]]:
        return [(position, post) for position, post in self.recent if self.shows_post(post)]

    # -- threads -------------------------------------------------------------------------

    def thread(self, pid: str) -> list[tuple[int, Post]]:
        """Every prompt of *pid*'s thread and every post about them, in log order."""
        out: list[tuple[int, Post]] = []
        for member in self.members.get(self.thread_of.get(pid, pid), [pid]):
            ps = self.state.prompts.get(member)
            if ps is not None:
                out.append((ps.position, ps.prompt))
                out += self.related.get(member, [])
        return sorted(out, key=lambda item: item[0])


def not_counted(post: Post, prompts: Mapping[str, PromptState]) -> str | None:
    """Why *post* moved no stage, when the fold checked it and it was not verified (`forged`
    or `unsigned`, as `status` lists it); None for a post it counted, or never had to check."""
    pid = getattr(post, "prompt_id", None)
    ps = prompts.get(pid) if isinstance(pid, str) else None
    if ps is None:
        return None
    return next((d.verdict for d in ps.doubted if d.id == post.id), None)


def age_text(seconds: float) -> str:
    """A short age: 42s, 7m, 3h, 2d."""
    s = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{s // size}{unit}"
    return f"{s}s"


def age_changes_in(seconds: float) -> float:
    """Seconds until `age_text(seconds)` reads differently."""
    s = max(0.0, seconds)
    size = 86400 if s >= 86400 else 3600 if s >= 3600 else 60 if s >= 60 else 1
    return size - s % size


def stage_since(ps: PromptState, name: str, now: float) -> float | None:
    """When *name*'s stage as of *now* began: the fold's time of it, or the cancel's, or the
    expiry (None: no time is known)."""
    now_stage = stage(ps, name, now)
    if now_stage == "cancelled":
        return ps.cancelled
    if now_stage == "expired":
        return ps.prompt.expires
    return ps.recipients[name].ts


def stale_since(ps: PromptState, name: str, now: float) -> float | None:
    """When *name*'s stage began, if it is handed over and not closed (delivered, or seen)."""
    r = ps.recipients[name]
    return r.ts if stage(ps, name, now) in STALE_STAGES and r.ts is not None else None
