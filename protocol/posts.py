"""The wire: every post kind as a frozen, tagged msgspec Struct, and one codec.

Schema evolution (a log written today is read by every later version):

- a new field goes last in its Struct and carries a default;
- a field's name and type never change; a kind is never renamed;
- readers skip fields they do not know (msgspec's default), so an older reader
  reads a newer writer's posts.

The log stores msgpack; ``--json`` output is JSON of the same Structs.
"""

from __future__ import annotations

from typing import Literal, TypeAlias, TypedDict

import msgspec

from paneboard.protocol import words

Priority: TypeAlias = Literal["low", "normal", "high", "urgent"]
Outcome: TypeAlias = Literal["accepted", "unknown"]


class _Post(msgspec.Struct, frozen=True, tag_field="kind"):
    id: str
    board: str
    sender: str
    ts: float


class Prompt(_Post, frozen=True, tag="prompt"):
    """Work for one or more recipients."""

    to: tuple[str, ...]
    body: str
    priority: Priority = "normal"
    thread: str | None = None
    reply_to: str | None = None
    expires: float | None = None


class Ack(_Post, frozen=True, tag="ack"):
    """A recipient closes a prompt."""

    prompt: str
    note: str | None = None


class Answer(_Post, frozen=True, tag="answer"):
    """A recipient closes a prompt with an answer."""

    prompt: str
    body: str


class Cancel(_Post, frozen=True, tag="cancel"):
    """The sender withdraws a prompt."""

    prompt: str


class Delivered(_Post, frozen=True, tag="delivered"):
    """Receipt: a door took the prompt (written under the recipient's name)."""

    prompt: str
    door: str
    outcome: Outcome = "accepted"


class Undelivered(_Post, frozen=True, tag="undelivered"):
    """Notice: no door could take the prompt; it stays open."""

    prompt: str
    door: str
    reason: str


class Seen(_Post, frozen=True, tag="seen"):
    """Receipt: the agent's own conversation file shows the prompt as a turn's input.

    Written under the recipient's name by its listener (or its Stop hook); *source* names
    the file it was read from (``claude-transcript``, ``codex-rollout``, ...).
    """

    prompt: str
    door: str
    source: str


HeldBy: TypeAlias = Literal["agent", "policy"]


class Held(_Post, frozen=True, tag="held"):
    """Receipt: the prompt waits for a person's decision before it reaches the model.

    *by* is ``agent`` (the agent holds it for its person, e.g. Claude Code's
    ``crossSessionInbound: hold``) or ``policy`` (the recipient's paneboard policy).
    """

    prompt: str
    door: str
    by: HeldBy
    reason: str


class Header(TypedDict):
    """The fields every post starts with."""

    id: str
    board: str
    sender: str
    ts: float


# A new kind goes last here and in words.KINDS; an older reader skips its posts, with a warning.
Post: TypeAlias = Prompt | Ack | Answer | Cancel | Delivered | Undelivered | Seen | Held
KINDS = words.KINDS
PRIORITY_RANK = words.PRIORITY_RANK

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Post)
_json_encoder = msgspec.json.Encoder()
_json_decoder = msgspec.json.Decoder(Post)


def encode(post: Post) -> bytes:
    """The msgpack payload of one post, as stored in a log record."""
    return _encoder.encode(post)


def decode(payload: bytes | memoryview) -> Post:
    """One post from its msgpack payload; raises ``msgspec.DecodeError``."""
    return _decoder.decode(payload)


def to_json(obj: object) -> bytes:
    """JSON bytes of a post (or any struct or plain value), no newline."""
    return _json_encoder.encode(obj)


def from_json(data: bytes | str) -> Post:
    return _json_decoder.decode(data)


def delivered_key(board: str, sender: str, prompt_id: str) -> str:
    """The key a listener records once a prompt is handed over: (board, sender, id)."""
    return f"{board} {sender} {prompt_id}"
