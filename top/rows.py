"""What each of `top`'s three tables draws: one line of text per agent, prompt and post.

Text from the board (bodies, names, reasons) is shown through `protocol.visible`, so control
characters in a post can never reach the terminal, and always as plain `Text`, never as
markup.
"""

from __future__ import annotations

import bisect
import socket
import time
from collections.abc import Hashable

from rich.text import Text

from paneboard.board.who import WhoRow
from paneboard.protocol.posts import Answer, Post, Prompt
from paneboard.protocol.visible import visible
from paneboard.state.fold import PromptState, stage
from paneboard.top.model import (
    TopModel,
    age_changes_in,
    age_text,
    not_counted,
    stage_since,
    stale_since,
)

PRIORITY_STYLE = {"urgent": "bold red", "high": "bold yellow", "normal": "", "low": "dim"}
STAGE_STYLE = {
    "posted": "cyan",
    "held": "bold yellow",  # a person has to act
    "delivered": "blue",
    "undelivered": "bold magenta",
    "seen": "green",
    "read": "bold green",
    "acked": "dim green",
    "answered": "dim green",
    "cancelled": "dim",
    "expired": "dim",
}
STALE_STYLE = "bold white on red"
DOUBT_STYLE = "bold red"
KIND_STYLE = {
    "prompt": "bold",
    "answer": "green",
    "ack": "green",
    "undelivered": "magenta",
    "held": "yellow",
}


def fitted(text: str, width: int = 200) -> str:
    """*text* on one line (runs of whitespace as one space, escapes shown), cut to *width*."""
    line = visible(" ".join(text.split()), keep="")
    return line if len(line) <= width else line[: width - 1] + "…"


def time_of_day(ts: float) -> str:
    """*ts* as local hours, minutes and seconds (a time no clock can show: `?`)."""
    try:
        return time.strftime("%H:%M:%S", time.localtime(ts))
    except (OverflowError, ValueError, OSError, TypeError):  # a time no clock can show
        return "?"


SLEEP_LABELS = {  # a listener whose session ended: it wakes the session for the next prompt
    "asleep": ("◐ asleep     ", "bold yellow"),
    "woken": ("◑ woken      ", "bold cyan"),  # it started the session again; its own takes over
}


class AgentSource:
    """One line per agent: listening (or asleep, or woken) or not, pid, door, last delivery,
    open prompts."""

    def __init__(self, model: TopModel) -> None:
        self.model = model
        self.rows: list[WhoRow] = []

    def __len__(self) -> int:
        return len(self.rows)

    def key(self, index: int) -> Hashable:
        return self.rows[index].agent

    def find(self, key: Hashable) -> int | None:
        return next((i for i, row in enumerate(self.rows) if row.agent == key), None)

    def line(self, index: int, now: float) -> Text:
        row = self.rows[index]
        text = Text(f"{fitted(row.agent, 24):<24} ")
        count = self.model.open_count.get(row.agent, 0)
        text.append(f"open {count:<6}", "bold" if count else "dim")
        if row.listening:
            pid = "?" if row.pid is None else str(row.pid)
            label, style = SLEEP_LABELS.get(row.sleep, ("● listening  ", "bold green"))
            text.append(label, style)
            text.append(f"pid {pid:<8} door {fitted(row.door or '?', 14):<14}")
        else:
            text.append(f"{'○ no listener':<45}", "dim")
        last = f"{age_text(now - row.last_delivery)} ago" if row.last_delivery else "never"
        text.append(f"last delivery {last}")
        elsewhere = row.host and row.listening and row.host != socket.gethostname()
        return text.append(f"  on {fitted(row.host or '', 64)}" if elsewhere else "", "dim")

    def stamp(self, index: int, now: float) -> Hashable | None:
        row = self.rows[index]
        last = None if row.last_delivery is None else age_text(now - row.last_delivery)
        return row, self.model.open_count.get(row.agent, 0), last

    def changes_at(self, index: int, now: float) -> float | None:
        last = self.rows[index].last_delivery
        return None if last is None else now + age_changes_in(now - last)


class PromptSource:
    """One line per open prompt: id, priority, age, sender → each recipient's stage and how
    long it has been at it (with `!` and the stale style once handed over and not closed for
    `stale` seconds), body."""

    def __init__(self, model: TopModel, stale: float) -> None:
        self.model = model
        self.stale = stale

    def __len__(self) -> int:
        return len(self.model.rows)

    def key(self, index: int) -> Hashable:
        return self.model.rows.keys[index]

    def find(self, key: Hashable) -> int | None:
        return self.model.rows.index(key) if isinstance(key, tuple) else None

    def line(self, index: int, now: float) -> Text:
        ps = self.model.state.prompts[self.model.rows[index]]
        p = ps.prompt
        text = Text(f"{fitted(p.id[:12])}  ")
        text.append(f"{p.priority:<7}", PRIORITY_STYLE[p.priority])
        text.append(f"{age_text(now - p.ts):>4}  {fitted(p.sender, 16)} →")
        for name in ps.recipients:
            s = stage(ps, name, now)
            late = self._late(ps, name, now)
            text.append(f" {fitted(name, 16)} ")
            label: str = s
            if s == "held":  # who holds it and why: what the person decides on
                r = ps.recipients[name]
                label += f" by {r.held_by or 'agent'} ({fitted(r.reason or '', 40)})"
            at = stage_since(ps, name, now)
            label += "" if at is None else f" {age_text(now - at)}" + ("!" if late else "")
            until = self.model.waits_until(ps, name, now)
            if until is not None:  # past the rate: it goes out then, with no one to act
                label = f"waits {time.strftime('%H:%M:%S', time.localtime(until))} (rate)"
            text.append(label, STALE_STYLE if late else STAGE_STYLE.get(s, ""))
            text.append(" ")
        return text.append(f"  {fitted(p.body)}", "italic")

    def _late(self, ps: PromptState, name: str, now: float) -> bool:
        since = stale_since(ps, name, now)
        return since is not None and now - since >= self.stale

    def stamp(self, index: int, now: float) -> Hashable | None:
        """What the row shows: the prompt, its age, and each recipient's stage, its age at that
        stage, and whether it is late."""
        ps = self.model.state.prompts[self.model.rows[index]]
        marks = []
        for name in ps.recipients:
            at = stage_since(ps, name, now)
            age = "" if at is None else age_text(now - at)
            late = self._late(ps, name, now)
            marks.append((stage(ps, name, now), age, late, self.model.waits_until(ps, name, now)))
        return ps.prompt.id, age_text(now - ps.prompt.ts), tuple(marks)

    def changes_at(self, index: int, now: float) -> float | None:
        ps = self.model.state.prompts[self.model.rows[index]]
        times = [now + age_changes_in(now - ps.prompt.ts)]
        for name in ps.recipients:
            until = self.model.waits_until(ps, name, now)
            if until is not None:
                times.append(until)
            at = stage_since(ps, name, now)
            if at is not None:
                times.append(now + age_changes_in(now - at))
            since = stale_since(ps, name, now)
            if since is not None and since + self.stale > now:
                times.append(since + self.stale)
        return min(times)


class PostSource:
    """The last posts the filter shows, oldest first."""

    def __init__(self, keep: int = 1000, model: TopModel | None = None) -> None:
        self.keep = keep  # once full, the table's size stays the same: no layout per post
        self.posts: list[tuple[int, Post]] = []
        self.model = model  # whose fold says which posts it did not count

    def reset(self, posts: list[tuple[int, Post]]) -> None:
        self.posts = posts[-self.keep :]

    def extend(self, posts: list[tuple[int, Post]]) -> None:
        self.posts += posts
        del self.posts[: -self.keep]

    def __len__(self) -> int:
        return len(self.posts)

    def key(self, index: int) -> Hashable:
        return self.posts[index][0]

    def find(self, key: Hashable) -> int | None:
        if not isinstance(key, int):
            return None
        i = bisect.bisect_left(self.posts, key, key=lambda item: item[0])
        return i if i < len(self.posts) and self.posts[i][0] == key else None

    def line(self, index: int, now: float) -> Text:
        post = self.posts[index][1]
        return post_text(post, None if self.model is None else not_counted(post, self.prompts))

    @property
    def prompts(self) -> dict[str, PromptState]:
        return {} if self.model is None else self.model.state.prompts

    def changes_at(self, index: int, now: float) -> float | None:
        return None

    def stamp(self, index: int, now: float) -> Hashable | None:
        return self.posts[index][0]  # a post never changes


def post_text(post: Post, doubt: str | None = None) -> Text:
    """One line for a post: time, kind, sender, what it says, and, for a post that moved no
    stage because it is not verified (*doubt*: forged or unsigned), that it is not counted."""
    text = _post_text(post)
    return text if doubt is None else text.append(f"  [not counted: {doubt}]", DOUBT_STYLE)


def _post_text(post: Post) -> Text:
    kind = post.__struct_config__.tag
    assert isinstance(kind, str)
    text = Text(f"{time_of_day(post.ts)}  ")
    text.append(f"{kind:<11}", KIND_STYLE.get(kind, ""))
    text.append(f" {fitted(post.sender, 24)}")
    if isinstance(post, Prompt):
        text.append(f" → {', '.join(fitted(n, 24) for n in post.to)} [{post.priority}]")
        return text.append(f"  {fitted(post.body)}", "italic")
    text.append(f" on {fitted(str(getattr(post, 'prompt_id', '?'))[:12])}")
    if isinstance(post, Answer):
        return text.append(f"  {fitted(post.body)}", "italic")
    fields = ("door", "source", "outcome", "reason", "note", "via")
    detail = [str(getattr(post, f, None)) for f in fields]
    shown = [d for d in detail if d not in ("None", "accepted")]
    return text.append(f"  {fitted(' '.join(shown))}" if shown else "")
