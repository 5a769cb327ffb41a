"""Signed posts: the signature covers the exact bytes, and every reader still reads them."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from paneboard.protocol import ed25519
from paneboard.protocol.posts import Post, decode, encode
from paneboard.protocol.signing import (
    FORGED,
    TRAILER,
    UNSIGNED,
    VERIFIED,
    board_of,
    fingerprint,
    is_fingerprint,
    seal,
    signed_part,
    verdict,
)
from paneboard.protocol.wire import pack_post
from paneboard.state.filelog.log import LogReader
from paneboard.state.trust.keys import verify
from tests.factories import prompt
from tests.strategies import posts

seeds = st.binary(min_size=32, max_size=32)
# Every example signs in pure Python, on machines shared with other work: no per-example deadline.
slow = settings(deadline=None)
BOARD = "b"  # the board of tests.factories' posts
ALICE = bytes(range(32))
MALLORY = bytes(range(1, 33))


def sealed(payload: bytes, seed: bytes = ALICE) -> bytes:
    public = ed25519.public_key(seed)
    return seal(payload, public, lambda message: ed25519.sign(seed, public, message))


def pin(seed: bytes) -> str:
    return fingerprint(ed25519.public_key(seed))


# RFC 8032 7.1, tests 1-3: (secret key, public key, message, signature).
RFC8032 = [
    (
        "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        "",
        (
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
            "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        ),
    ),
    (
        "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
        "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
        "72",
        (
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
            "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
        ),
    ),
    (
        "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
        "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
        "af82",
        (
            "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac"
            "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"
        ),
    ),
]


@pytest.mark.parametrize(("secret", "public", "message", "signature"), RFC8032)
def test_signer_meets_rfc8032(secret: str, public: str, message: str, signature: str) -> None:
    """The stdlib signer gives RFC 8032's public keys and signatures."""
    seed = bytes.fromhex(secret)
    assert bytes.fromhex(public) == ed25519.public_key(seed)
    assert bytes.fromhex(signature) == ed25519.sign(
        seed, bytes.fromhex(public), bytes.fromhex(message)
    )


@slow
@given(seeds, st.binary(max_size=2000))
def test_signer_matches_cryptography(seed: bytes, message: bytes) -> None:
    """For any seed and message, the stdlib signer writes cryptography's exact signature."""
    theirs = Ed25519PrivateKey.from_private_bytes(seed)
    public = theirs.public_key().public_bytes_raw()
    assert public == ed25519.public_key(seed)
    assert theirs.sign(message) == ed25519.sign(seed, public, message)


def test_base_table_is_made_from_the_base_point() -> None:
    """The stored table of the base point's multiples is the one `base_table()` computes."""
    from paneboard.protocol._ed25519_table import TABLE

    assert ed25519.base_table() == TABLE


def test_curve_constants_are_their_definitions() -> None:
    """d is -121665/121666 and the square root of -1 is 2**((p-1)/4), modulo p."""
    p = 2**255 - 19
    assert -121665 * pow(121666, p - 2, p) % p == ed25519._D
    assert pow(2, (p - 1) // 4, p) == ed25519._SQRT_M1


def test_signer_refuses_a_short_seed() -> None:
    """A seed that is not 32 bytes is refused with its length named."""
    with pytest.raises(ValueError) as info:
        ed25519.sign(bytes(31), bytes(32), b"x")
    assert "an Ed25519 seed is 32 bytes, not 31" == str(info.value)


@slow
@given(posts)
def test_signed_post_is_verified(post: Post) -> None:
    """Any post, sealed, is verified against its signer's pin and with no pin yet."""
    payload = sealed(encode(post))
    assert VERIFIED == verdict(payload, pin(ALICE), verify, post.board)
    assert VERIFIED == verdict(payload, None, verify, post.board)


@slow
@given(posts)
def test_signed_post_reads_with_todays_decoder(post: Post) -> None:
    """A reader that knows nothing of signatures decodes a signed post to the same post."""
    assert post == decode(sealed(encode(post)))


@slow
@given(posts)
def test_unsigned_record_is_unsigned(post: Post) -> None:
    """A record as every log before signing holds it is unsigned, whatever is pinned."""
    assert UNSIGNED == verdict(encode(post), pin(ALICE), verify, post.board)
    assert UNSIGNED == verdict(encode(post), None, verify, post.board)


@slow
@given(posts)
def test_another_key_than_the_pinned_one_is_forged(post: Post) -> None:
    """A good signature by a key other than the pinned one is forged."""
    payload = sealed(encode(post), MALLORY)
    assert VERIFIED == verdict(payload, pin(MALLORY), verify, post.board)
    assert FORGED == verdict(payload, pin(ALICE), verify, post.board)


@slow
@given(posts, st.data())
def test_any_flipped_byte_is_forged(post: Post, data: st.DataObject) -> None:
    """Any byte changed outside the trailer's entry names makes the post forged."""
    payload = sealed(encode(post))
    names = {*range(len(payload) - TRAILER, len(payload) - TRAILER + 6)}
    names |= {*range(len(payload) - 71, len(payload) - 64)}
    where = data.draw(st.integers(0, len(payload) - 1).filter(lambda i: i not in names))
    mask = data.draw(st.integers(1, 255))
    bent = bytearray(payload)
    bent[where] ^= mask
    assert FORGED == verdict(bytes(bent), None, verify, post.board)


@pytest.mark.parametrize("offset", [*range(-TRAILER, -TRAILER + 6), *range(-71, -64)])
def test_bent_entry_names_are_forged_or_damaged(offset: int) -> None:
    """A changed byte in `key`'s or `sig2`'s name or length: forged if msgpack, else damaged."""
    post = prompt(ts=1.0, body="hi")
    for mask in (0x01, 0x20, 0x80, 0xFF):
        bent = bytearray(sealed(encode(post)))
        bent[offset] ^= mask
        try:
            msgspec.msgpack.decode(bytes(bent), type=dict[str, msgspec.Raw])
        except msgspec.DecodeError:
            with pytest.raises(msgspec.DecodeError):
                verdict(bytes(bent), None, verify, BOARD)
        else:
            assert FORGED == verdict(bytes(bent), None, verify, BOARD)


def test_a_sig_entry_without_the_trailer_is_forged() -> None:
    """A `sig` entry that is not the last entry's exact form is forged, not unsigned."""
    fields = {"kind": "ack", "id": "0" * 26, "board": "b", "sender": "alice", "ts": 1.0}
    payload = msgspec.msgpack.encode({**fields, "prompt": "1" * 26, "sig": "x" * 64})
    assert FORGED == verdict(payload, None, verify, BOARD)


@slow
@given(
    st.dictionaries(
        st.text(max_size=8).filter(lambda k: k not in ("key", "sig", "sig2", "board")),
        st.integers(-(2**63), 2**64 - 1) | st.text(max_size=40),
        max_size=20,
    )
)
def test_any_map_size_seals(entries: dict[str, object]) -> None:
    """Maps of any size (a header of one byte or three) seal, decode and verify."""
    payload = sealed(msgspec.msgpack.encode({"board": BOARD, **entries}))
    public = ed25519.public_key(ALICE)
    decoded = msgspec.msgpack.decode(payload)
    assert {"board": BOARD, **entries, "key": public} == {
        k: v for k, v in decoded.items() if k != "sig2"
    }
    assert VERIFIED == verdict(payload, pin(ALICE), verify, BOARD)


@pytest.mark.parametrize("size", [0, 12, 13, 14, 15, 2**16 - 4, 2**16 - 3])
def test_map_header_widths_seal(size: int) -> None:
    """Across the header's 1-, 3- and 5-byte forms, the sealed map has its entries and two more."""
    entries = {"board": BOARD} | {str(i): i for i in range(size)}
    payload = sealed(msgspec.msgpack.encode(entries))
    assert size + 3 == len(msgspec.msgpack.decode(payload))
    assert VERIFIED == verdict(payload, pin(ALICE), verify, BOARD)


@slow
@given(posts)
def test_a_field_added_later_is_covered(post: Post) -> None:
    """A later writer's new field is signed, and today's reader skips it."""
    fields = msgspec.msgpack.decode(encode(post))
    payload = sealed(msgspec.msgpack.encode({**fields, "later": "new"}))
    bent = payload.replace(b"\xa3new", b"\xa3old")
    assert post == decode(payload)
    assert VERIFIED == verdict(payload, pin(ALICE), verify, post.board)
    assert FORGED == verdict(bent, pin(ALICE), verify, post.board)


def test_post_writer_and_msgspec_seal_alike() -> None:
    """`post`'s stdlib writer and msgspec's encoder give the same signed bytes."""
    post = prompt(ts=1.5, body="hi")
    fields = {"kind": "prompt", **msgspec.structs.asdict(post), "to": ["bob"]}
    assert sealed(encode(post)) == sealed(pack_post(fields))


def test_signed_message_is_the_boards_domain_and_every_byte_but_the_signature() -> None:
    """The signed message is the domain naming the board read, then the payload up to the
    signature's 64 bytes."""
    post = prompt(ts=1.5, body="hi")
    payload = sealed(encode(post))
    part = signed_part(payload)
    assert part is not None
    domain = b"paneboard post signature v2\nboard b\n"
    assert (domain + payload[:-64], payload[-64:]) == (part.message("b"), part.sig)
    assert (ed25519.public_key(ALICE), 14) == (part.key, msgspec.msgpack.decode(payload).__len__())


def test_seal_refuses_a_signed_payload() -> None:
    """A payload that is signed already is not sealed again."""
    post = prompt(ts=1.5, body="hi")
    with pytest.raises(ValueError) as info:
        sealed(sealed(encode(post)))
    assert "the payload is signed already" == str(info.value)


def test_fingerprint_is_26_base32_characters() -> None:
    """A fingerprint is the SHA-256 prefix of the key in 26 lowercase base32 characters."""
    printed = fingerprint(ed25519.public_key(ALICE))
    assert (26, True) == (len(printed), is_fingerprint(printed))
    assert not is_fingerprint(printed.upper())
    assert not is_fingerprint(printed[:-1])


@slow
@given(posts)
def test_a_signature_names_the_board_it_was_sealed_for(post: Post) -> None:
    """A post sealed for its board is verified there and forged on any other board."""
    payload = sealed(encode(post))
    other = "x" + post.board[:63]
    assert (VERIFIED, FORGED) == (
        verdict(payload, pin(ALICE), verify, post.board),
        verdict(payload, pin(ALICE), verify, other),
    )


@slow
@given(posts)
def test_board_of_reads_the_board_of_either_writer(post: Post) -> None:
    """The standard-library reader finds the board msgspec's encoder and `post`'s writer wrote."""
    fields = {"kind": post.__struct_config__.tag, **msgspec.structs.asdict(post)}
    assert (post.board, post.board) == (
        board_of(encode(post)),
        board_of(msgspec.msgpack.encode(fields)),
    )


def test_seal_refuses_a_payload_that_names_no_board() -> None:
    """A map whose first entries are not strings naming a board is not sealed."""
    for payload in (msgspec.msgpack.encode({"kind": "ack", "n": 1}), msgspec.msgpack.encode({})):
        with pytest.raises(ValueError) as info:
            sealed(payload)
        assert "a post's payload names its board among its first fields" == str(info.value)


V1 = Path(__file__).parent.parent / "fixtures" / "board-79ca2e6"


def v1_records() -> list[tuple[Post, bytes]]:
    """The records of the board 79ca2e6 signed (tests/fixtures/board-79ca2e6/README.md)."""
    return [
        (post, payload)
        for batch in LogReader(V1 / "log", board="b").records()
        for _, post, payload in batch
    ]


def test_posts_signed_before_signatures_named_the_board_keep_their_verdicts() -> None:
    """Every record of a log 79ca2e6 wrote has the verdict 79ca2e6 gave it; the signed ones
    carry the version-1 trailer."""
    expected = json.loads((V1 / "expected.json").read_text())
    pins = expected["pins"]
    got = [
        {
            "id": post.id,
            "kind": post.__struct_config__.tag,
            "sender": post.sender,
            "verdict": verdict(payload, pins[post.sender], verify, "b"),
        }
        for post, payload in v1_records()
    ]
    assert expected["records"] == got
    versions = {(part := signed_part(payload)) and part.version for _, payload in v1_records()}
    assert {None, 1} == versions


def test_a_version_1_post_cannot_pass_for_version_2() -> None:
    """A version-1 trailer rewritten as version 2 (`sig` renamed `sig2`) is forged."""
    post, payload = v1_records()[0]
    assert "prompt" == post.__struct_config__.tag
    bent = payload[:-70] + b"\xa4sig2" + payload[-66:]
    assert (2, FORGED) == (signed_part(bent).version, verdict(bent, None, verify, "b"))  # type: ignore[union-attr]


def test_posts_about_a_prompt_read_from_79ca2e6s_board_are_the_same_on_the_wire() -> None:
    """The ack and the answer 79ca2e6 wrote decode with their prompt's id as ``prompt_id``, and
    encode again to the map they were stored as (``prompt`` on the wire), entry for entry, then
    the fields added since, last, at their defaults (the schema's rule: protocol/posts.py)."""
    records = v1_records()
    ids = [post.id for post, _ in records if post.__struct_config__.tag == "prompt"]
    about = [(post, payload) for post, payload in records if hasattr(post, "prompt_id")]
    assert [("ack", ids[1]), ("answer", ids[2])] == [
        (post.__struct_config__.tag, post.prompt_id)  # type: ignore[union-attr]
        for post, _ in about
    ]
    for post, payload in records:
        stored = msgspec.msgpack.decode(payload)
        unsigned = {k: v for k, v in stored.items() if k not in ("key", "sig", "sig2")}
        added = [("notice", False)] if post.__struct_config__.tag == "prompt" else []
        assert [*unsigned.items(), *added] == list(msgspec.msgpack.decode(encode(post)).items())
