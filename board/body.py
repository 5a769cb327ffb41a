"""Reading a prompt's body as its recipient: `paneboard read` and the MCP `read` tool.

The body comes as the text a door hands over (protocol/compose.py: paneboard's lines, then the
sender's words quoted apart, then the commands that close it), and the first reading posts a
`read` receipt under the recipient's name, signed with its key as an ack is: the stage after
`seen`. Only a recipient reads with a receipt; anyone on the board sees a prompt's fields with
`status` and `log`, which post nothing.

A prompt held for a person is not read: its text waits for the decision, as it waits at the
door. One cancelled, expired or refused for the reader is not read either: it is no longer
work for it. One the reader closed itself (acked, answered) is read again as before; its first
reading still posts the receipt, which the fold records without moving the stage.
"""

from __future__ import annotations

import msgspec

from paneboard.board.context import Context, executable, header
from paneboard.board.lookup import match_id
from paneboard.board.trust import verdicts_for
from paneboard.board.write import write
from paneboard.protocol.compose import compose
from paneboard.protocol.errors import BadInput
from paneboard.protocol.posts import Prompt, Read
from paneboard.protocol.words import ENDED_STAGES
from paneboard.state.fold import PromptState, fold_checked, stage
from paneboard.state.trust.verdicts import Verdicts, checked

__all__ = ["BodyRead", "read_body"]


class BodyRead(msgspec.Struct, frozen=True):
    """What `read` hands its recipient: the prompt, the text a door would hand over, the
    receipt this reading wrote (None when an earlier reading was counted: the fold keeps the
    first), and when the recipient first read it."""

    prompt: Prompt
    text: str
    receipt: Read | None
    read_at: float


def read_body(ctx: Context, ref: str, via: str, now: float) -> BodyRead:
    """Prompt *ref*'s text for the context's agent, one of its recipients; its first reading
    posts a verified `read` receipt naming *via* (``cli``, ``mcp``)."""
    ps, payload, verdicts = _load(ctx, ref)
    readable(ps, ctx.agent, now)
    r = ps.recipients[ctx.agent]
    provenance = verdicts.provenance(ps.prompt, payload, approved=r.approved_at is not None)
    text = compose(
        ps.prompt,
        exe=executable(),
        home=str(ctx.home),
        agent=ctx.agent,
        store=ctx.store_options(),
        provenance=provenance,
        now=now,
    )
    if r.read_at is not None:
        return BodyRead(ps.prompt, text, None, r.read_at)
    receipt = Read(**header(ctx.board, ctx.agent, now), prompt_id=ps.prompt.id, via=via)
    write(ctx, receipt)
    return BodyRead(ps.prompt, text, receipt, receipt.ts)


def readable(ps: PromptState, agent: str, now: float) -> None:
    """`BadInput` unless *agent* may read *ps* now: a recipient, the prompt neither held for a
    person nor ended for it."""
    pid = ps.prompt.id
    if agent not in ps.recipients:
        raise BadInput(
            f"agent `{agent}` is not a recipient of prompt {pid} (sent to "
            f"{', '.join(ps.prompt.to)}): only a recipient reads it; `status {pid}` shows it"
        )
    now_stage = stage(ps, agent, now)
    if now_stage == "held":
        r = ps.recipients[agent]
        raise BadInput(
            f"prompt {pid} is held for a person by the {r.held_by or 'agent'} ({r.reason}): "
            "its text waits for `paneboard approve` at a terminal"
        )
    if now_stage in ENDED_STAGES:
        raise BadInput(f"prompt {pid} is {now_stage} for `{agent}`: there is nothing to read")


def _load(ctx: Context, ref: str) -> tuple[PromptState, bytes | None, Verdicts]:
    """Prompt *ref*, folded as `status` folds it (only verified posts move a stage), with the
    bytes it was stored as and the verdicts that read the board (its pins, in log order)."""
    verdicts = verdicts_for(ctx)
    payloads: dict[str, bytes] = {}
    follower = ctx.store().follow(0)
    try:
        records = []
        for batch in follower.records():
            for position, post, payload in batch:
                if isinstance(post, Prompt):
                    payloads.setdefault(post.id, payload)
                records.append((position, post, payload))
    finally:
        follower.close()
    state = fold_checked(checked(verdicts, [records]))  # a board that keeps closed prompts
    pid = match_id(ctx, [(position, post) for position, post, _ in records], ref)
    ps = state.prompts.get(pid)
    if ps is None:
        kind = next(post for _, post, _ in records if post.id == pid).__struct_config__.tag
        article = "an" if str(kind)[0] in "aeiou" else "a"
        raise BadInput(f"board `{ctx.board}`: post {pid} is {article} {kind}, not a prompt")
    return ps, payloads.get(pid), verdicts
