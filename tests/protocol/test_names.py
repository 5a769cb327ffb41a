"""Names, ids and sizes: what is refused, and the message that says so."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paneboard.protocol.errors import BadInput
from paneboard.protocol.ids import ALPHABET, check_ref, new_id
from paneboard.protocol.names import BODY_MAX, check_body, check_name, to_name
from tests.strategies import names


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "agent name is empty"),
        (
            "../x",
            "agent name '../x' is not valid: use 1-64 of A-Z a-z 0-9 . _ -, not starting with `.`",
        ),
        (
            ".hidden",
            (
                "agent name '.hidden' is not valid: "
                "use 1-64 of A-Z a-z 0-9 . _ -, not starting with `.`"
            ),
        ),
        ("a" * 65, "agent name `aaaaaaaaaaaaaaaaaaaa…` is 65 characters; the limit is 64"),
        (
            "a b",
            "agent name 'a b' is not valid: use 1-64 of A-Z a-z 0-9 . _ -, not starting with `.`",
        ),
    ],
)
def test_bad_names_are_refused(value: str, message: str) -> None:
    """Each bad name gets one line naming the problem."""
    with pytest.raises(BadInput) as caught:
        check_name("agent", value)
    assert message == str(caught.value)


@given(names)
def test_valid_names_pass(name: str) -> None:
    """1-64 allowed characters, no leading dot."""
    assert name == check_name("board", name)


@given(st.text(max_size=200))
def test_to_name_always_gives_a_valid_name(raw: str) -> None:
    """Any string can be made a board name."""
    assert check_name("board", to_name(raw))


def test_body_limit_is_256_kib_encoded() -> None:
    """The limit counts UTF-8 bytes, not characters."""
    assert check_body("body", "a" * BODY_MAX)
    with pytest.raises(BadInput, match=r"^body is 262146 bytes; the limit is 262144 \(256 KiB\)$"):
        check_body("body", "é" * (BODY_MAX // 2 + 1))


def test_ids_sort_by_time_and_use_safe_characters() -> None:
    """Later ids sort after earlier ones; every character is lower-case base32."""
    a, b = new_id(1000.0, bytes(10)), new_id(1000.001, b"\xff" * 10)
    assert a < b
    assert 26 == len(a)
    assert set(a + b) <= set(ALPHABET)


def test_id_refs_need_four_characters() -> None:
    """Prefixes shorter than four characters are refused."""
    with pytest.raises(BadInput, match=r"^id `abc` is too short: give at least 4 characters$"):
        check_ref("abc")
    assert "abcd" == check_ref(" ABCD ")
