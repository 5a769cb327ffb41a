"""The codec: every post round-trips, and the fast writer matches msgspec byte for byte."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from paneboard.protocol.errors import BadInput
from paneboard.protocol.names import check_name, is_name
from paneboard.protocol.posts import (
    Ack,
    Post,
    Prompt,
    damage_reason,
    decode,
    encode,
    from_json,
    to_json,
)
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
    assert Ack(id="x" * 26, board="b", sender="s", ts=1.0, prompt_id="y" * 26) == decode(newer)


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
        "notice",
    ]
    assert expected == list(msgspec.json.decode(to_json(p)))


def test_an_unknown_kind_is_a_decode_error() -> None:
    """A kind this version does not know is refused by the decoder (the reader skips it)."""
    with pytest.raises(msgspec.DecodeError):
        decode(msgspec.msgpack.encode({"kind": "future", "id": "x"}))


GOOD = {
    "kind": "prompt",
    "id": "01m8aaaaaaaaaaaaaaaaaaaaaa",
    "board": "b",
    "sender": "alice",
    "ts": 1.7e9,
    "to": ["bob"],
    "body": "hello",
}


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("sender", "../../../target/remote", "`sender`: Expected `str` of the allowed form"),
        ("sender", "alice\n[paneboard] note", "`sender`: Expected `str` of the allowed form"),
        ("sender", ".hidden", "`sender`: Expected `str` of the allowed form"),
        ("sender", "a" * 65, "`sender`: Expected `str` of the allowed form"),
        ("board", "", "`board`: Expected `str` of the allowed form"),
        ("to", ["bob", "echo x\n"], "`to[1]`: Expected `str` of the allowed form"),
        ("to", [], "`to`: Expected `array` of length >= 1"),
        ("to", ["bob"] * 101, "`to`: Expected `array` of length <= 100"),
        ("id", "x/../../../../escape", "`id`: Expected `str` of the allowed form"),
        ("id", "01m8aaaaaaaaaaaaaaaaaaaaaaa", "`id`: Expected `str` of the allowed form"),
        ("reply_to", "x\n[paneboard] fake", "`reply_to`: Expected `str` of the allowed form"),
        ("thread", "t\x1b[2J", "`thread`: Expected `str` of the allowed form"),
        ("ts", float("inf"), "`ts`: Expected `float` <= 253402300799.0"),
        ("ts", float("nan"), "`ts`: Expected `float` >= 0.0"),
        ("ts", 1e300, "`ts`: Expected `float` <= 253402300799.0"),
        ("ts", -1e20, "`ts`: Expected `float` >= 0.0"),
        ("expires", float("inf"), "`expires`: Expected `float` <= 253402300799.0"),
        ("body", "x" * (256 * 1024 + 1), "`body`: Expected `str` of length <= 262144"),
        ("body", 7, "`body`: Expected `str`, got `int`"),
    ],
)
def test_a_field_that_breaks_the_contract_is_a_decode_error(
    field: str, value: object, reason: str
) -> None:
    """Names, ids, recipients, lengths and finite times are checked as a post decodes."""
    with pytest.raises(msgspec.DecodeError) as caught:
        decode(msgspec.msgpack.encode({**GOOD, field: value}))
    assert reason == damage_reason(caught.value)


def test_a_good_post_with_every_limit_reached_decodes() -> None:
    """The limits themselves are allowed: 64-character names, 100 recipients, 256 KiB."""
    edge = {
        **GOOD,
        "sender": "a" * 64,
        "to": [f"r{i}" for i in range(100)],
        "body": "x" * (256 * 1024),
        "ts": 253402300799.0,
    }
    post = decode(msgspec.msgpack.encode(edge))
    assert (64, 100, 256 * 1024) == (len(post.sender), len(post.to), len(post.body))  # type: ignore[union-attr]


def test_deep_nesting_is_a_decode_error_not_a_recursion_error() -> None:
    """A ~2 KB payload nested 2000 deep in an unknown field is damage, like any other."""
    base = msgspec.msgpack.encode(GOOD)
    payload = bytes([0x88]) + base[1:] + msgspec.msgpack.encode("zz") + b"\x91" * 2000 + b"\xc0"
    with pytest.raises(msgspec.DecodeError) as caught:
        decode(payload)
    assert damage_reason(caught.value).startswith("RecursionError: ")
    with pytest.raises(msgspec.DecodeError):
        from_json(b'{"kind":"prompt","zz":' + b"[" * 2000 + b"]" * 2000 + b"}")


@given(st.text(max_size=70))
def test_the_decoder_accepts_exactly_the_names_check_name_accepts(name: str) -> None:
    """One rule for names: `check_name` and the decoder's pattern agree on every string."""
    try:
        check_name("sender", name)
        accepted = True
    except BadInput:
        accepted = False
    try:
        decode(msgspec.msgpack.encode({**GOOD, "sender": name}))
        decoded = True
    except msgspec.DecodeError:
        decoded = False
    assert (accepted, accepted) == (decoded, is_name(name))


def test_a_held_receipt_is_checked_like_every_other_receipt() -> None:
    """A `held` receipt whose prompt is not an id, or whose door is empty, is a decode error."""
    import msgspec

    from paneboard.protocol.posts import Held, decode, encode

    good = Held(
        id="0" * 26,
        board="b",
        sender="bob",
        ts=1.0,
        prompt_id="1" * 26,
        door="d",
        by="agent",
        reason="r",
    )
    assert good == decode(encode(good))
    for bad in ({"prompt_id": "../x"}, {"door": ""}):
        payload = msgspec.msgpack.encode(msgspec.structs.replace(good, **bad))
        with pytest.raises(msgspec.DecodeError):
            decode(payload)


def test_approved_and_refused_are_checked_like_every_other_post() -> None:
    """They round-trip; a prompt that is not an id, or a reason over the limit, is damage."""
    from paneboard.protocol.names import TEXT_MAX
    from paneboard.protocol.posts import Approved, Refused, decode, encode

    about = {"id": "0" * 26, "board": "b", "sender": "bob", "ts": 1.0, "prompt_id": "1" * 26}
    approved, refused = Approved(**about), Refused(**about, reason="not from you")
    assert [approved, refused] == [decode(encode(approved)), decode(encode(refused))]
    assert "no reason given" == decode(encode(Refused(**about))).reason  # type: ignore[union-attr]
    for bad in (
        msgspec.structs.replace(approved, prompt_id="../x"),
        msgspec.structs.replace(refused, reason="x" * (TEXT_MAX + 1)),
    ):
        with pytest.raises(msgspec.DecodeError):
            decode(msgspec.msgpack.encode(bad))


def test_a_post_about_a_prompt_names_it_prompt_on_the_wire() -> None:
    """``prompt_id`` is the attribute; the wire's field is ``prompt``, in the same place as
    before the attribute was named so: the bytes are those of the map written by hand."""
    from paneboard.protocol.posts import Answer, to_json

    head = {"id": "x" * 26, "board": "b", "sender": "s", "ts": 1.0}
    ack = Ack(**head, prompt_id="y" * 26, note="done")  # type: ignore[arg-type]
    answer = Answer(**head, prompt_id="y" * 26, body="yes")  # type: ignore[arg-type]
    by_hand = msgspec.msgpack.encode({"kind": "ack", **head, "prompt": "y" * 26, "note": "done"})
    assert by_hand == encode(ack)
    assert b'{"kind":"answer","id":"' + b"x" * 26 + b'","board":"b","sender":"s","ts":1.0,' + (
        b'"prompt":"' + b"y" * 26 + b'","body":"yes"}'
    ) == to_json(answer)
    assert ack == decode(by_hand)
