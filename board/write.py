"""Writing a post with what follows from it: the tally of the prompt's sender."""

from __future__ import annotations

import time
import warnings

from paneboard.board.context import Context
from paneboard.protocol.errors import PaneboardError
from paneboard.protocol.posts import Post, Prompt
from paneboard.protocol.words import OPEN_STAGES
from paneboard.state.filelog import tally
from paneboard.state.fold import BoardState, apply, stage


class TallyNotWritten(UserWarning):
    """The open-prompt tally could not be rebuilt after a post was written (best effort)."""


def write(ctx: Context, post: Post, state: BoardState | None = None) -> None:
    """Append *post*; with the board's *state*, rebuild the tally of the prompt's sender
    after it."""
    ctx.paths.ensure()
    ctx.store().append([post])
    if state is not None and not isinstance(post, Prompt):
        apply(state, state.position, post)
        rebuild_tally(ctx, state, state.prompts[post.prompt_id].prompt.sender)


def rebuild_tally(ctx: Context, state: BoardState, sender: str) -> None:
    """The sender's open prompts per recipient, from the fold (see state/filelog/tally.py).

    Best effort: it runs after the post is written, so a tally that cannot be written is a
    warning (`TallyNotWritten`), never the operation's failure.
    """
    try:
        _rebuild_tally(ctx, state, sender)
    except (PaneboardError, OSError) as exc:
        warnings.warn(f"the open-prompt tally: {exc}", TallyNotWritten, stacklevel=2)


def _rebuild_tally(ctx: Context, state: BoardState, sender: str) -> None:
    now = time.time()
    fresh: tally.Tally = {}
    for ps in state.prompts.values():
        if ps.prompt.sender == sender:
            for name in ps.recipients:
                if stage(ps, name, now) in OPEN_STAGES:
                    fresh.setdefault(name, []).append((ps.prompt.id, ps.prompt.expires))
    tally.write(tally.path_for(ctx.paths.dir, sender), fresh)
