"""`--max-open`: at most so many prompts open from one sender to each recipient.

Each store holds the limit in one step with the append (`state.abc.Log.append`): the file
log checks its per-sender tally (`state.filelog.tally`) under the log's lock; NATS checks the fold
of the stream and publishes only if no post landed since (JetStream's expected last
sequence), folding again and checking again when one did. Standard library only at import:
`paneboard post` builds one.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's import is a cost `paneboard post` does not pay
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

    from paneboard.state.fold import BoardState

from paneboard.protocol.errors import BadInput

__all__ = ["OpenLimit", "admit_folded", "refusal"]


class OpenLimit:
    """The new prompt (its wire fields: board, sender, id, to, expires), the limit, and the
    board's folder in the sender's home, where a store keeps what the check needs between
    posts (the file log's tally; on NATS, the sender's fold and its position)."""

    __slots__ = ("folder", "most", "prompt")

    def __init__(self, prompt: Mapping[str, Any], most: int, folder: Path) -> None:
        self.prompt = prompt
        self.most = most
        self.folder = folder

    @property
    def kept(self) -> Path:
        """Where a store that checks by folding keeps its fold between posts."""
        return self.folder / "senders" / f"{self.prompt['sender']}.fold"


def refusal(limit: OpenLimit, recipient: str) -> BadInput:
    """The refusal of a prompt whose sender has *limit* open for *recipient* already."""
    board, sender = limit.prompt["board"], limit.prompt["sender"]
    return BadInput(
        f"board `{board}`: `{sender}` already has {limit.most} open prompts for `{recipient}` "
        "(the --max-open limit); wait for some to be closed, or cancel some"
    )


def admit_folded(state: BoardState, limit: OpenLimit, now: float) -> None:
    """Refuse (`BadInput`) if the board *state* holds the limit's open prompts for a recipient."""
    from paneboard.protocol.words import OPEN_STAGES
    from paneboard.state.fold import stage

    sender = limit.prompt["sender"]
    for recipient in limit.prompt["to"]:
        held = sum(
            1
            for ps in state.prompts.values()
            if ps.prompt.sender == sender
            and recipient in ps.recipients
            and stage(ps, recipient, now) in OPEN_STAGES
        )
        if held >= limit.most:
            raise refusal(limit, recipient)
