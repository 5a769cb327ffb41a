"""What a pane's reader acts on, told from a record's head without decoding the post.

A pane's fold (state/fold.py, ``recipient`` set) keeps the prompts addressed to its agent and
moves them with the posts about them; its deliverer also notes its agent's own prompts and
receipts (the traffic: state/trust/policy.py) and the first signed record of every name it has
no pin for (state/trust/verdicts.py). Every other record changes nothing for it. A cold catch-up
of a long board is mostly such records: a reader given an `Interest` decodes each record's
`Head` (three fields; msgspec skips the rest of the map without building it) and decodes,
checks and hands out only the records the interest `needs`.

Why the head is enough: a field's value is the same string in the head as in the post (one
msgpack map, read twice by one decoder), so a post the fold would act on has a head the
interest needs. A record whose head cannot be read (not msgpack, a field of another type) is
needed too, so it is decoded and, damaged, skipped and counted as before. What a skipped record
is not: checked. A post about other agents that breaks a constraint (a name of the wrong form,
a body too long) is damaged for a reader that reads it whole, and for a pane's reader it is one
more record about someone else, skipped uncounted; its frame and checksum are checked all the
same (state/filelog/skim.py), so a record damaged on disk is counted by every reader.
"""

from __future__ import annotations

from collections.abc import Container

import msgspec


class Head(msgspec.Struct, frozen=True, gc=False):
    """The fields of a record that tell whether a pane's reader needs it: who wrote it, to
    whom (a prompt), about which prompt (every other kind)."""

    sender: str = ""
    to: tuple[str, ...] = ()
    prompt: str = ""  # the wire name of `prompt_id`


class Named(msgspec.Struct, frozen=True, gc=False):
    """A record's id, read from a record the interest needs for its `to`."""

    id: str = ""


decode_head = msgspec.msgpack.Decoder(Head).decode
decode_named = msgspec.msgpack.Decoder(Named).decode


class Interest:
    """The records agent *agent*'s pane reads: its prompts, its own posts, the posts about the
    prompts its fold keeps (*prompts*, read as it changes), and every record of a name not in
    *settled* (the names whose pins are taken; None: the reader takes no pins).

    A reader adds to `pending` the id of each prompt to the agent it hands out, so the posts
    about it that follow in the same read are needed before the fold keeps it; the fold's
    owner clears it once the batch is folded.
    """

    __slots__ = ("agent", "pending", "prompts", "settled")

    def __init__(
        self, agent: str, prompts: Container[str], settled: Container[str] | None = None
    ) -> None:
        self.agent = agent
        self.prompts = prompts
        self.settled = settled
        self.pending: set[str] = set()

    def needs(self, head: Head) -> bool:
        """Whether a record of *head* may change what the pane knows (the readers inline it)."""
        settled = self.settled
        return (
            head.sender == self.agent
            or self.agent in head.to
            or head.prompt in self.prompts
            or head.prompt in self.pending
            or (settled is not None and head.sender not in settled)
        )
