"""The codec: every post round-trips, and the fast writer matches msgspec byte for byte."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given

from paneboard.protocol.posts import Ack, Post, Prompt, decode, encode, from_json, to_json
from paneboard.protocol.wire import pack_post
from tests.strategies import posts, prompts


@given(posts)
def test_every_post_round_trips_msgpack(post: Post) -> None:
    """Any post decodes to itself from its encoding."""
    assert post == decode(encode(post))


@given(posts)
def test_every_post_round_trips_json(post: Post) -> None:
    """Any post decodes to itself from its JSON."""
    assert post == from_json(to_json(post))


@given(prompts)
def test_fast_writer_matches_msgspec(prompt: Prompt) -> None:
    """`post`'s stdlib msgpack writer writes exactly msgspec's bytes."""
    fields = {"kind": "prompt", **msgspec.structs.asdict(prompt)}
    fields["to"] = list(prompt.to)
    assert encode(prompt) == pack_post(fields)


def test_unknown_fields_from_a_newer_writer_are_skipped() -> None:
    """A field added by a later version does not stop an older reader."""
    newer = msgspec.msgpack.encode(
        {
            "kind": "ack",
            "id": "x" * 26,
            "board": "b",
            "sender": "s",
            "ts": 1.0,
            "prompt": "y" * 26,
            "note": None,
            "added_later": [1, 2],
        }
    )
    assert Ack(id="x" * 26, board="b", sender="s", ts=1.0, prompt="y" * 26) == decode(newer)


def test_json_field_names_are_stable() -> None:
    """The JSON names users script against."""
    p = Prompt(id="i", board="b", sender="s", ts=1.0, to=("r",), body="x")
    expected = [
        "kind",
        "id",
        "board",
        "sender",
        "ts",
        "to",
        "body",
        "priority",
        "thread",
        "reply_to",
        "expires",
    ]
    assert expected == list(msgspec.json.decode(to_json(p)))


def test_an_unknown_kind_is_a_decode_error() -> None:
    """A kind this version does not know is refused by the decoder (the reader skips it)."""
    with pytest.raises(msgspec.DecodeError):
        decode(msgspec.msgpack.encode({"kind": "future", "id": "x"}))
