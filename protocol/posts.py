"""The wire: every post kind as a frozen, tagged msgspec Struct, and one codec.

Schema evolution (a log written today is read by every later version):

- a new field goes last in its Struct and carries a default;
- a field's name and type never change; a kind is never renamed (an attribute may be renamed
  in Python while its wire name stays, with ``msgspec.field(name=...)``: ``prompt_id`` is
  ``prompt`` on the wire);
- readers skip fields they do not know (msgspec's default), so an older reader
  reads a newer writer's posts;
- a field's constraints (the aliases below) are checked as it decodes: a record that breaks
  them is damaged, and readers skip it. A constraint is only ever loosened.

The log stores msgpack; ``--json`` output is JSON of the same Structs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeAlias, TypedDict

import msgspec

from paneboard.protocol import words
from paneboard.protocol.ids import ID_PATTERN
from paneboard.protocol.names import (
    BODY_MAX,
    NAME_MAX,
    NAME_PATTERN,
    RECIPIENTS_MAX,
    TEXT_MAX,
    TIME_MAX,
)

Priority: TypeAlias = Literal["low", "normal", "high", "urgent"]
Outcome: TypeAlias = Literal["accepted", "unknown"]

# What a field may hold, checked by the decoder (one definition each: names.py, ids.py).
Name: TypeAlias = Annotated[str, msgspec.Meta(pattern=NAME_PATTERN)]
Id: TypeAlias = Annotated[str, msgspec.Meta(pattern=ID_PATTERN)]
Time: TypeAlias = Annotated[float, msgspec.Meta(ge=0, le=TIME_MAX)]  # finite: no nan, no inf
Body: TypeAlias = Annotated[str, msgspec.Meta(max_length=BODY_MAX)]
Text: TypeAlias = Annotated[str, msgspec.Meta(max_length=TEXT_MAX)]  # a notice's reason
Word: TypeAlias = Annotated[str, msgspec.Meta(min_length=1, max_length=NAME_MAX)]  # door, source
Recipients: TypeAlias = Annotated[
    tuple[Name, ...], msgspec.Meta(min_length=1, max_length=RECIPIENTS_MAX)
]


class _Post(msgspec.Struct, frozen=True, tag_field="kind"):
    id: Id
    board: Name
    sender: Name
    ts: Time


class Prompt(_Post, frozen=True, tag="prompt"):
    """Work for one or more recipients."""

    to: Recipients
    body: Body
    priority: Priority = "normal"
    thread: Name | None = None
    reply_to: Id | None = None
    expires: Time | None = None
    notice: bool = False  # the sender asks that only a notice reach the agent, never the body


class Ack(_Post, frozen=True, tag="ack"):
    """A recipient closes a prompt."""

    prompt_id: Id = msgspec.field(name="prompt")
    note: Body | None = None


class Answer(_Post, frozen=True, tag="answer"):
    """A recipient closes a prompt with an answer."""

    prompt_id: Id = msgspec.field(name="prompt")
    body: Body


class Cancel(_Post, frozen=True, tag="cancel"):
    """The sender withdraws a prompt."""

    prompt_id: Id = msgspec.field(name="prompt")


class Delivered(_Post, frozen=True, tag="delivered"):
    """Receipt: a door took the prompt (written under the recipient's name)."""

    prompt_id: Id = msgspec.field(name="prompt")
    door: Word
    outcome: Outcome = "accepted"
    woke: Word | None = None  # the agent's session this prompt started again (a wake)
    handover: Id | None = None  # the first prompt of the one text it went in with others
    notice: bool = False  # it reached the agent as a notice (the body not shown)


class Undelivered(_Post, frozen=True, tag="undelivered"):
    """Notice: no door could take the prompt; it stays open."""

    prompt_id: Id = msgspec.field(name="prompt")
    door: Word
    reason: Text


class Seen(_Post, frozen=True, tag="seen"):
    """Receipt: the agent's own conversation file shows the prompt as a turn's input.

    Written under the recipient's name by its listener (or its Stop hook); *source* names
    the file it was read from (``claude-transcript``, ``codex-rollout``, ...).
    """

    prompt_id: Id = msgspec.field(name="prompt")
    door: Word
    source: Word


class Read(_Post, frozen=True, tag="read"):
    """Receipt: the recipient read the prompt's body (`paneboard read`, the MCP `read` tool).

    Written under the recipient's name by the command that printed the body to it; *via*
    names that command (``cli``, ``mcp``). For a prompt that reached the agent as a notice,
    `seen` is the notice reaching the model and `read` the body reaching it.
    """

    prompt_id: Id = msgspec.field(name="prompt")
    via: Word


HeldBy: TypeAlias = Literal["agent", "policy"]


class Held(_Post, frozen=True, tag="held"):
    """Receipt: the prompt waits for a person's decision before it reaches the model.

    *by* is ``agent`` (the agent holds it for its person, e.g. Claude Code's
    ``crossSessionInbound: hold``) or ``policy`` (the recipient's paneboard policy).
    """

    prompt_id: Id = msgspec.field(name="prompt")
    door: Word
    by: HeldBy
    reason: Text


class Approved(_Post, frozen=True, tag="approved"):
    """A held prompt let through: written under the recipient's name by `paneboard approve` or
    `top` after a yes on a terminal (which cannot say who typed it: docs/trust.md), signed with
    the recipient's key; its listener then delivers it."""

    prompt_id: Id = msgspec.field(name="prompt")


class Refused(_Post, frozen=True, tag="refused"):
    """A prompt refused under the recipient's name (`paneboard refuse`, `top`, or the
    recipient's policy): it ends there for that recipient, and *reason* says why (the sender's
    `wait` names it)."""

    prompt_id: Id = msgspec.field(name="prompt")
    reason: Text = "no reason given"


class Header(TypedDict):
    """The fields every post starts with."""

    id: str
    board: str
    sender: str
    ts: float


# A new kind goes last here and in words.KINDS; an older reader skips its posts, with a warning.
Post: TypeAlias = (
    Prompt
    | Ack
    | Answer
    | Cancel
    | Delivered
    | Undelivered
    | Seen
    | Held
    | Approved
    | Refused
    | Read
)
# The posts' tags, as the type a front end's schema reads (tests/protocol/test_words.py).
Kind: TypeAlias = Literal[
    "prompt",
    "ack",
    "answer",
    "cancel",
    "delivered",
    "undelivered",
    "seen",
    "held",
    "approved",
    "refused",
    "read",
]
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
    """One post from its msgpack payload, its constraints checked.

    Raises ``msgspec.DecodeError`` (``ValidationError`` for a broken constraint) and nothing
    else: what a hostile payload makes msgspec raise (``RecursionError`` for deep nesting, ...)
    becomes one, so a reader that skips a damaged record skips this one too.
    """
    return _checked(_decoder.decode, payload)


def decode_on(board: str, payload: bytes | memoryview) -> Post:
    """One post of board *board*, as `decode` reads it; a post that names another board is
    damaged too (``msgspec.ValidationError``): a record copied from one board to another."""
    post = _checked(_decoder.decode, payload)
    if post.board != board:
        raise msgspec.ValidationError(
            f"`{post.board}` is not the board read, `{board}` - at `$.board`"
        )
    return post


def _checked(decode: Callable[[Any], Post], data: Any) -> Post:
    try:
        return decode(data)
    except msgspec.DecodeError:
        raise
    except Exception as exc:  # noqa: BLE001  # any failure to decode one record is damage
        raise msgspec.DecodeError(f"{type(exc).__name__}: {exc}") from None


def damage_reason(exc: Exception) -> str:
    """Why a payload is not a post, short, for the warning that skips it."""
    head, _, where = str(exc).partition(" - at `$.")
    if " matching regex " in head:
        head = head.partition(" matching regex ")[0] + " of the allowed form"
    reason = f"`{where.rstrip('`')}`: {head}" if where else head
    return reason if len(reason) <= 120 else reason[:119] + "…"


def to_json(obj: object) -> bytes:
    """JSON bytes of a post (or any struct or plain value), no newline."""
    return _json_encoder.encode(obj)


def from_json(data: bytes | str) -> Post:
    """One post from JSON, checked as `decode` checks it (and raising as it does)."""
    return _checked(_json_decoder.decode, data)


def delivered_key(board: str, sender: str, prompt_id: str) -> str:
    """The key a listener records once a prompt is handed over: (board, sender, id)."""
    return f"{board} {sender} {prompt_id}"
