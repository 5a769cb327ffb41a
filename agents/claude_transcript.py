"""Claude Code's transcript: whether a session admitted, held or dropped a peer message, and
which records put a prompt before the model (`user_texts`, for `seen`).

Claude Code 2.1.328 admits the peer messages its inbox socket receives through a token
bucket per sender: 30 at once, then one every 2 s (a sender that is not a session of its own,
paneboard's listener among them, is told apart by its process id: ``pid:N``). It queues at
most 50 peer messages not yet taken. What it did with a line shows only in the session's
transcript:

- admitted: a ``queue-operation`` ``enqueue`` line whose ``content`` is the text (or, later,
  the text before the model: a user turn, or a mid-turn ``queued_command`` attachment);
- held for its person (``crossSessionInbound: hold``): a ``system`` ``informational`` record
  ``Held peer message — … preview: «TEXT…» — not delivered to Claude …``, and no enqueue;
- dropped (rate limit, duplicate, full queue, …): one ``system`` ``informational`` record
  ``Dropped a peer message from …: REASON.`` for a whole run of drops within a minute;
- refused (``crossSessionInbound: refuse``): nothing at all.

`Intake` follows the transcript (inotify, through `FileWatch`) and answers, per prompt id,
what the session did (the listener's `seen` reads the file through the same reader); `Pace`
keeps one listener's sends inside the bucket.
"""

from __future__ import annotations

import json
import re
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, TypeAlias

import anyio

from paneboard.listener.seen import HEADER, NEEDLE, content_texts, field, prompt_ids
from paneboard.state.panes.transcript import FileWatch, SharedLines, watch_file

AdmissionVerdict: TypeAlias = Literal["admitted", "held"]
BUCKET = 30  # Claude Code's peer-message bucket: this many at once ...
REFILL = 0.5  # ... then this many a second
# Claude Code counts a line's token when it reads it, a little after it was sent, and that
# lag varies; keeping half a token in hand (one second, once) absorbs it.
RESERVE = 0.5
ADMIT_WITHIN = 3.0  # an admitted line is enqueued within milliseconds; a dropped one never
DROP_RUN = 60.0  # Claude Code records one drop per sender and reason a minute
INFORMATIONAL = b'"informational"'  # the subtype of Claude Code's notes on peer messages
# The preview drops the header's brackets: «paneboard prompt ID from alice on board …».
_HELD = re.compile(r"preview: «\[?paneboard\]? prompt ([0-9a-z]{26}) from ")
DROP_REASONS = {  # Claude Code's own words for why it dropped a peer message, and its code
    "sender exceeded the peer message rate limit": "rate-limited",
    "identical to the previous message from this sender": "duplicate",
    "message has already passed through this session": "hop-loop",
    "peer relay chain is too long": "hop-runaway",
    "this session has too many undelivered peer messages queued": "queue-full",
}


def drop_reason(content: str) -> str | None:
    """``CODE (Claude Code's words)`` for a "Dropped a peer message" record, else None."""
    if not content.startswith("Dropped a peer message"):
        return None
    for words, code in DROP_REASONS.items():
        if words in content:
            return f"{code} ({words})"
    return "dropped (" + content.split(": ", 1)[-1].rstrip(".")[:200] + ")"


def held_reason(content: str) -> str:
    """Why a "Held peer message" record says the message is held: ``crossSessionInbound:
    hold`` for that setting, else Claude Code's own first sentence about it."""
    why = content.split(" held). ", 1)[-1].split(" (", 1)[0].split(";", 1)[0].strip()
    if '"crossSessionInbound" to "hold"' in why:
        return "crossSessionInbound: hold"
    return why[:200] or "held for its person"


def inbound_setting(project: Path) -> tuple[str, Path] | None:
    """Where Claude Code's settings for *project* (its own, then the user's) set
    ``crossSessionInbound`` to hold or refuse."""
    folders = (project / ".claude", Path.home() / ".claude")
    files = ("settings.local.json", "settings.json")
    for path in (folder / name for folder in folders for name in files):
        try:
            value = json.loads(path.read_text()).get("crossSessionInbound")
        except (OSError, ValueError, AttributeError):
            continue
        if value in ("hold", "refuse"):
            return str(value), path
    return None


def user_texts(record: dict[str, Any]) -> list[str]:
    """A ``user`` record of its transcript (a peer message, or the Stop hook's block reason as
    the next user turn; not a compacted session's summary, ``isCompactSummary``), or an
    ``attachment`` of type ``queued_command`` (a message that arrived while a tool ran, put
    before the model in that same turn, one attachment per message). ``queue-operation`` lines
    say a message is queued, not seen: they are not among them."""
    kind = record.get("type")
    if kind == "user" and not record.get("isCompactSummary"):
        return content_texts(field(record, "message").get("content"))
    attachment = field(record, "attachment")
    if kind == "attachment" and attachment.get("type") == "queued_command":
        return content_texts(attachment.get("prompt"))
    return []


class Intake:
    """What one Claude Code session did with the lines sent to it, read from its transcript."""

    def __init__(self, transcript: Path, project: Path | None = None) -> None:
        self.transcript = transcript
        self.project = project
        self.lines = SharedLines(transcript, (NEEDLE, INFORMATIONAL))  # `seen` reads it too
        self.reader = self.lines.tap()
        self.verdicts: dict[str, AdmissionVerdict] = {}
        self.held_why: dict[str, str] = {}  # why Claude Code holds a prompt, in short
        self.last_drop: tuple[float, str] | None = None  # (its time, the reason)
        self._watch: FileWatch | None = None

    def scan(self) -> None:
        """Read what the transcript gained (blocking file work)."""
        for record in self.reader.read_new():
            self._note(record)

    def _note(self, record: dict[str, Any]) -> None:
        # Before the model already: taken, whatever came first.
        for pid in prompt_ids([record], user_texts):
            self.verdicts[pid] = "admitted"
        content = record.get("content")
        if not isinstance(content, str):
            return
        kind = record.get("type")
        if kind == "queue-operation" and record.get("operation") == "enqueue":
            for pid in HEADER.findall(content):
                self.verdicts[pid] = "admitted"
        elif kind == "system" and record.get("subtype") == "informational":
            if content.startswith("Held peer message"):
                for pid in _HELD.findall(content):
                    self.verdicts.setdefault(pid, "held")
                    self.held_why.setdefault(pid, held_reason(content))
            elif (reason := drop_reason(content)) is not None:
                self.last_drop = (_when(record), reason)

    async def catch_up(self) -> None:
        """Watch the transcript from now on, and read what it holds so far."""
        if self._watch is None:
            self._watch = watch_file(self.transcript)
        await anyio.to_thread.run_sync(self.scan)

    async def wait_verdict(
        self, prompt_id: str, within: float = ADMIT_WITHIN
    ) -> AdmissionVerdict | None:
        """What the session did with *prompt_id*, once the transcript shows it; None when it
        shows nothing within *within* seconds (`catch_up` first: the watch is armed there)."""
        assert self._watch is not None
        with anyio.move_on_after(within):
            while prompt_id not in self.verdicts:
                await self._watch.wait_changed()
                await anyio.to_thread.run_sync(self.scan)
        await anyio.to_thread.run_sync(self.scan)
        return self.verdicts.get(prompt_id)

    def why_not(self, sent_at: float, within: float = ADMIT_WITHIN) -> tuple[str, bool]:
        """Why a line sent at *sent_at* (wall clock) shows nothing: (reason, whether it is for
        good). A drop recorded since, or within Claude Code's minute of one record per run."""
        if self.last_drop is not None and self.last_drop[0] > sent_at - DROP_RUN:
            return f"Claude Code dropped it: {self.last_drop[1]}", False
        setting = None if self.project is None else inbound_setting(self.project)
        if setting is not None and setting[0] == "refuse":
            return (
                f"Claude Code refuses peer messages (crossSessionInbound: refuse in {setting[1]})",
                True,
            )
        return (
            f"Claude Code did not take it: no enqueue in its transcript within {within:g} s",
            False,
        )

    def close(self) -> None:
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        self.reader.close()


def _when(record: dict[str, Any]) -> float:
    """A record's ``timestamp`` (ISO 8601, UTC) as a wall-clock time; now if it has none."""
    stamp = record.get("timestamp")
    try:
        return datetime.fromisoformat(str(stamp)).timestamp()
    except ValueError:
        return time.time()


class Pace:
    """Claude Code's bucket as this sender sees it: *capacity* at once, then *refill* a second
    (less the reserve).

    `take()` waits for a token; `empty()` follows a drop for the rate limit (the session's
    bucket was spent, by this listener or another sender).
    """

    def __init__(self, capacity: float = BUCKET, refill: float = REFILL) -> None:
        self.capacity, self.refill = capacity, refill
        self.tokens = capacity
        self._at: float | None = None

    def _fill(self) -> None:
        now = anyio.current_time()
        if self._at is not None:
            self.tokens = min(self.capacity, self.tokens + (now - self._at) * self.refill)
        self._at = now

    async def take(self) -> None:
        self._fill()
        need = min(self.capacity, 1 + RESERVE)
        if self.tokens < need:
            await anyio.sleep((need - self.tokens) / self.refill)
            self._fill()
        self.tokens -= 1

    def empty(self) -> None:
        self._fill()
        self.tokens = 0.0
