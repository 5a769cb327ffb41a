"""A person's decisions on the prompts held for an agent: what they decide on, and writing it.

A front end first finds what is decided (`held_for`, `held_from`: the id resolved and the
board read, refused in one line when the prompt is not held for the agent, or the agent is not
a recipient), shows it (`question_lines`: sender, what was checked of the sender's key, who
held it and why, the first lines of the body, all made visible), asks, and only then writes
(`approve`, `refuse`), checking again that nothing was decided meanwhile.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence

import msgspec

from paneboard.board.context import Context, header
from paneboard.board.lookup import match_ref
from paneboard.board.trust import verdicts_for
from paneboard.protocol.compose import FINGERPRINT_SHOWN
from paneboard.protocol.errors import BadInput
from paneboard.protocol.names import TEXT_MAX, check_name
from paneboard.protocol.posts import Approved, Post, Prompt, Refused
from paneboard.protocol.visible import one_line
from paneboard.protocol.words import OPEN_STAGES
from paneboard.state.fold import BoardState, LazyVerdict, fold_checked, order_key, stage
from paneboard.state.trust.verdicts import checked

__all__ = [
    "BODY_LINES",
    "OnHold",
    "approve",
    "approve_all",
    "check_reason",
    "held_for",
    "held_from",
    "question",
    "question_lines",
    "refuse",
]

BODY_LINES = 5  # lines of a prompt's body a person is shown before deciding on it
LINE_SHOWN = 160  # characters of each line shown


class OnHold(msgspec.Struct, frozen=True):
    """A prompt a person decides on for *agent*: where it stands, what paneboard checked of
    its sender's key (`verdict`, and the key when verified), and who holds it and why."""

    prompt: Prompt
    agent: str
    stage: str
    verdict: str
    fingerprint: str | None = None
    held_by: str | None = None
    reason: str | None = None


def held_for(ctx: Context, ref: str, stages: Sequence[str] = ("held",)) -> OnHold:
    """Prompt *ref*, which must be in one of *stages* for the context's agent (held, by
    default); `BadInput` in one line otherwise, or when the agent is not a recipient."""
    board = _Board(ctx)
    pid = match_ref(ctx, board.state.prompts, ref, "prompts")
    found = board.mine(pid)
    if found is None:
        raise BadInput(
            f"agent `{ctx.agent}` is not a recipient of prompt {pid} "
            f"(sent to {', '.join(board.state.prompts[pid].prompt.to)})"
        )
    if found.stage not in stages:
        if tuple(stages) == ("held",):
            raise BadInput(f"prompt {pid} is {found.stage} for `{ctx.agent}`, not held")
        raise BadInput(f"prompt {pid} is already {found.stage} for `{ctx.agent}`")
    return found


def held_from(ctx: Context, sender: str) -> list[OnHold]:
    """Every prompt from *sender* held for the context's agent, in catch-up order; `BadInput`
    when there is none."""
    check_name("agent", sender)
    held = _Board(ctx).held(sender)
    if not held:
        raise BadInput(
            f"no prompt from `{sender}` is held for `{ctx.agent}` on board `{ctx.board}`"
        )
    return held


def approve(ctx: Context, ref: str) -> Approved:
    """Let prompt *ref*, held for the context's agent, through: its listener then delivers it."""
    return approve_all(ctx, [held_for(ctx, ref).prompt.id])[0]


def approve_all(ctx: Context, ids: Sequence[str]) -> list[Approved]:
    """Let each prompt of *ids* (full ids) through in one append, if every one of them is still
    held for the context's agent; `BadInput` and nothing written otherwise."""
    board = _Board(ctx)
    for pid in ids:
        if (now := board.stage(pid)) != "held":
            raise BadInput(f"prompt {pid} is {now} for `{ctx.agent}` now, not held")
    posts = [Approved(**header(ctx.board, ctx.agent), prompt_id=pid) for pid in ids]
    ctx.store().append(posts)
    return posts


def check_reason(reason: str) -> str:
    """*reason* for a refusal, if it fits; `BadInput` if not."""
    if len(reason.encode()) > TEXT_MAX:
        raise BadInput(f"the reason is over {TEXT_MAX} bytes, the limit")
    return reason


def refuse(ctx: Context, ref: str, reason: str) -> Refused:
    """End prompt *ref* for the context's agent; the sender's `wait` names *reason*."""
    check_reason(reason)
    found = held_for(ctx, ref, OPEN_STAGES)
    post = Refused(**header(ctx.board, ctx.agent), prompt_id=found.prompt.id, reason=reason)
    ctx.store().append([post])
    return post


def question(verb: str, held: Sequence[OnHold]) -> str:
    """The question a person answers to *verb* (approve, refuse) what *held* holds."""
    first = held[0]
    where = f"for `{first.agent}` on board `{first.prompt.board}`"
    if len(held) == 1:
        return one_line(f"{verb} prompt {first.prompt.id} {where}?")
    return one_line(f"{verb} all {len(held)} prompts from `{first.prompt.sender}` held {where}?")


def question_lines(held: Sequence[OnHold]) -> list[str]:
    """What a person reads before deciding on *held*: one prompt's sender, what was checked
    of the sender's key, who holds it and why, and the first lines of its body; for several
    from one sender, their count and reasons. Every line is made visible."""
    first = held[0]
    if len(held) == 1:
        lines = [f"  from:  {one_line(first.prompt.sender)} ({_key(first)}), {first.stage}"]
        if first.stage == "held":
            lines.append(f"  held:  {_held(first)}")
        return [*lines, *_body(first.prompt.body)]
    lines = [f"  from:  {one_line(first.prompt.sender)}, {len(held)} prompts held"]
    for why, count in _reasons(held).items():
        lines.append(f"  held:  {why} ({count})")
    return lines


def _key(h: OnHold) -> str:
    if h.verdict == "verified" and h.fingerprint:
        return f"key checked: {h.fingerprint[:FINGERPRINT_SHOWN]}…"
    return f"key not checked: the prompt is {h.verdict}"


def _held(h: OnHold) -> str:
    return _cut(one_line(f"by {h.held_by or 'agent'}: {h.reason or '(no reason given)'}"))


def _body(body: str) -> list[str]:
    lines = body.splitlines() or [""]
    shown = [f"  > {_cut(one_line(line))}" for line in lines[:BODY_LINES]]
    if len(lines) > BODY_LINES:
        shown.append(f"  > … {len(lines) - BODY_LINES} more lines")
    return shown


def _cut(line: str) -> str:
    return line if len(line) <= LINE_SHOWN else line[: LINE_SHOWN - 1] + "…"


def _reasons(held: Iterable[OnHold]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for h in held:
        counts[_held(h)] = counts.get(_held(h), 0) + 1
    return counts


class _Board:
    """The board as a decision reads it: every prompt, folded so that only verified posts move
    stages; the verdict on a prompt's own signature is checked only for those shown."""

    def __init__(self, ctx: Context) -> None:
        self.agent = ctx.agent
        self.verdicts, self.payloads = verdicts_for(ctx), dict[str, bytes]()
        follower = ctx.store().follow(0)
        try:
            records = list(checked(self.verdicts, _keeping(follower.records(), self.payloads)))
        finally:
            follower.close()
        self.checks: dict[str, LazyVerdict] = {}
        for _, post, check in records:
            if isinstance(post, Prompt):
                self.checks.setdefault(post.id, check)  # the record the fold keeps: the first
        self.state = fold_checked(records, BoardState())
        self.now = time.time()

    def mine(self, pid: str) -> OnHold | None:
        """Prompt *pid* as the agent's decision sees it; None if the agent is not a recipient."""
        ps = self.state.prompts[pid]
        r = ps.recipients.get(self.agent)
        if r is None:
            return None
        told = self.verdicts.provenance(
            ps.prompt, self.payloads.get(pid), verdict=self.checks[pid]()
        )
        held = (r.held_by or "agent", r.reason) if r.stage == "held" else (None, None)
        now_stage = stage(ps, self.agent, self.now)
        return OnHold(ps.prompt, self.agent, now_stage, told.verdict, told.fingerprint, *held)

    def held(self, sender: str | None = None) -> list[OnHold]:
        """The prompts held for the agent (from *sender*, if given), in catch-up order."""
        found = []
        for ps in sorted(self.state.prompts.values(), key=order_key):
            if sender is not None and ps.prompt.sender != sender:
                continue
            if self.stage(ps.prompt.id) == "held" and (h := self.mine(ps.prompt.id)):
                found.append(h)
        return found

    def stage(self, pid: str) -> str:
        """Where prompt *pid* stands for the agent: `gone` if it is not on the board or the
        agent is not its recipient."""
        ps = self.state.prompts.get(pid)
        if ps is None or self.agent not in ps.recipients:
            return "gone"
        return stage(ps, self.agent, self.now)


def _keeping(
    batches: Iterable[list[tuple[int, Post, bytes]]], payloads: dict[str, bytes]
) -> Iterator[list[tuple[int, Post, bytes]]]:
    """*batches* as they are, keeping the stored bytes of each prompt's first record."""
    for batch in batches:
        for _, post, payload in batch:
            if isinstance(post, Prompt):
                payloads.setdefault(post.id, payload)
        yield batch
