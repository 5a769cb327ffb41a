"""The lines a person reads for the board's results, shared by the front ends: a post in the
log (marked when it is not verified), a prompt's status, an agent of `who`. Every value from a
post is shown with its escapes visible (`protocol.visible`), never obeyed by a terminal."""

from __future__ import annotations

import time

from paneboard.board.read import OpenPrompt, StageTime, Status
from paneboard.board.trust import doubt_line
from paneboard.board.who import WhoRow
from paneboard.protocol.posts import Answer, Held, Post, Prompt, Read, Seen
from paneboard.protocol.signing import VERIFIED
from paneboard.protocol.visible import one_line
from paneboard.protocol.words import HANDED_STAGES, SEEING_DOORS
from paneboard.state.fold import Recipient


def clock(ts: float) -> str:
    """*ts* as local time; a time no clock can show (inf, nan, out of range) as `?`."""
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    except (OverflowError, ValueError, OSError, TypeError):
        return "?"


def summary(text: str, width: int = 72) -> str:
    """The first line of *text*, escapes shown, cut to *width* with `…` if there is more."""
    from paneboard.protocol.compose import visible

    line = visible(text.strip().split("\n", 1)[0])
    return line if len(line) <= width and "\n" not in text.strip() else line[: width - 1] + "…"


def describe(post: Post) -> str:
    """One line of `log` for a post."""
    head = f"{clock(post.ts)}  {post.id}  {post.__struct_config__.tag:<11} {post.sender}"
    if isinstance(post, Prompt):
        return f"{head} -> {','.join(post.to)} [{post.priority}]: {summary(post.body)}"
    if isinstance(post, Answer):
        return f"{head} on {post.prompt_id}: {summary(post.body)}"
    if isinstance(post, Seen):
        return f"{head} on {post.prompt_id}: {post.door}, in {post.source}"
    if isinstance(post, Read):
        return f"{head} on {post.prompt_id}: body read via {post.via}"
    if isinstance(post, Held):
        return f"{head} on {post.prompt_id}: {post.door}, held by the {post.by} ({post.reason})"
    detail = (
        getattr(post, "reason", None) or getattr(post, "note", None) or getattr(post, "door", None)
    )
    return f"{head} on {post.prompt_id}" + (f": {summary(detail)}" if detail else "")


def log_line(post: Post, verdict: str) -> str:
    """One line of `log`: the post (`describe`), then, for a post that is not verified, its
    verdict (`[forged]`, `[unsigned]`): it moved no stage, as `status` does not count it."""
    return one_line(describe(post)) + ("" if verdict == VERIFIED else f"  [{verdict}]")


def open_line(row: OpenPrompt) -> str:
    """One line of `open` for a prompt open for the agent."""
    p = row.prompt
    head = one_line(f"{p.id}  {p.priority:<6}  from {p.sender:<12}  {clock(p.ts)}  ")
    return head + summary(p.body) + open_mark(row)


def open_mark(row: OpenPrompt) -> str:
    """What `open` adds after a held or approved prompt: who holds it and why."""
    if row.held:
        return one_line(f"  [held by the {row.held_by}: {row.reason}]")
    if row.until is not None:
        return one_line(f"  [waits until {clock(row.until)}: {row.reason}]")
    return "  [approved at a terminal]" if row.approved else ""


def status_lines(status: Status, now: float | None = None) -> list[str]:
    """`status` for people: the prompt, then one line per recipient (as of *now*)."""
    now = time.time() if now is None else now
    head = (
        f"prompt {status.id} from {status.sender} on board {status.board}, "
        f"priority {status.priority}"
    )
    lines = [one_line(f"{head}, posted {clock(status.ts)}")]
    for name, r in status.recipients.items():
        when = clock(r.ts) if r.ts else ""
        lines.append(one_line(f"  {name:<16} {r.stage:<11} {when}{_detail(r, now)}"))
        if r.woke is not None and r.woke_at is not None:
            lines.append(one_line(f"  {'':<16} woke {r.woke} at {clock(r.woke_at)}"))
        wait = status.waits.get(name)
        if wait is not None:
            lines.append(one_line(f"  {'':<16} waits until {clock(wait.until)}: {wait.reason}"))
        lines += [one_line(line) for line in stage_lines(status.stages.get(name, []))]
    return lines + [one_line(doubt_line(d)) for d in status.doubted]


def stage_lines(stages: list[StageTime]) -> list[str]:
    """A recipient's stages under its line of `status`, each with its time and how long after
    the one before it: "· seen        2026-12-02 02:12:58  390 ms after delivered"."""
    out, before = [], None
    for st in stages:
        after = "" if st.after is None or before is None else f"  {span(st.after)} after {before}"
        out.append(f"  {'':<16} · {st.stage:<11} {clock(st.at)}{after}")
        before = st.stage
    return out


def span(seconds: float) -> str:
    """A duration as a person reads it, precise where it is short: "12 ms", "4.2 s",
    "3 min 5 s", "2 h 10 min", "3 days"."""
    s = max(0.0, seconds)
    if s < 1:
        return f"{round(s * 1000)} ms"
    if s < 60:
        return f"{s:.1f} s"
    whole = int(s)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    if whole < 2 * 86400:
        return f"{whole // 3600} h {whole % 3600 // 60} min"
    return f"{whole // 86400} days"


READ_VIA_SHOWN = {"cli": "`paneboard read`", "mcp": "the MCP `read` tool"}


def _detail(r: Recipient, now: float) -> str:
    """What follows a recipient's stage in `status`: its answer, note, door or holder."""
    if r.stage == "answered" and r.answer is not None:
        return f"  answer: {summary(r.answer)}"
    if r.stage == "acked" and r.note:
        return f"  note: {summary(r.note)}"
    if r.stage in HANDED_STAGES:
        return (
            f"  via {r.door}"
            + (f" ({r.outcome})" if r.outcome == "unknown" else "")
            + (f": {r.reason}" if r.reason else "")
            + not_seen_yet(r, now)
        )
    if r.stage == "seen":
        return f"  via {r.door}, in {r.source}" + seen_after(r)
    if r.stage == "read":
        by = READ_VIA_SHOWN.get(r.read_via or "", r.read_via)
        return (f"  via {r.door}, " if r.door else "  ") + f"body read with {by}"
    if r.stage == "held" and r.ts is not None:
        return f"  {held_line(r, now)}"
    if r.stage == "refused":
        return f"  {r.reason}"
    return ""


def held_line(r: Recipient, now: float) -> str:
    """ "held by the agent (crossSessionInbound: hold) since 12:01:03 (40 s ago), via …"."""
    since = f"since {clock(r.ts)} ({ago(now - r.ts)})" if r.ts is not None else ""
    return f"held by the {r.held_by or 'agent'} ({r.reason}) {since}, via {r.door}"


def not_seen_yet(r: Recipient, now: float) -> str:
    """How long a prompt has been delivered through a door that can prove `seen`, and not seen."""
    if r.stage != "delivered" or r.door not in SEEING_DOORS or r.ts is None:
        return ""
    return f"  (delivered {ago(now - r.ts)}, not yet seen)"


def seen_after(r: Recipient) -> str:
    """How long after its delivery the agent's model had the prompt."""
    if r.seen_at is None or r.delivered_at is None or r.seen_at < r.delivered_at:
        return ""
    return f" ({r.seen_at - r.delivered_at:.1f} s after delivery)"


def ago(seconds: float) -> str:
    """A person's reading of a duration: "40 s ago", "12 min ago", "3 h ago", "2 days ago"."""
    s = int(max(0.0, seconds))
    if s < 60:
        return f"{s} s ago"
    if s < 3600:
        return f"{s // 60} min ago"
    return f"{s // 3600} h ago" if s < 2 * 86400 else f"{s // 86400} days ago"


def who_line(row: WhoRow) -> str:
    """One line of `who` for an agent."""
    state = f"listening  pid {row.pid}  door {row.door}" if row.listening else "no listener"
    if row.listening and row.sleep:
        state = f"{row.sleep:<9}  pid {row.pid}  door {row.door}"
    last = f"  last delivery {clock(row.last_delivery)}" if row.last_delivery else ""
    last += f"  last read {clock(row.last_read)}" if row.last_read else ""
    waiting = f"  {row.held} held for a person" if row.held else ""
    attach = f"  attach: {row.attach}" if row.attach else ""
    return one_line(f"{row.agent:<20} {state}{last}{waiting}{attach}")
