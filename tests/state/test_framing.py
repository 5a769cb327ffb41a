"""The log's framing and reader: torn tails, garbage, truncation, repair."""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from paneboard.protocol.errors import DamagedRecord
from paneboard.protocol.posts import Post, encode
from paneboard.state.filelog.append import append_payloads
from paneboard.state.filelog.framing import frame, scan
from paneboard.state.filelog.log import read_posts
from tests.factories import prompt
from tests.strategies import posts

post_lists = st.lists(posts, min_size=1, max_size=12)


def _log_bytes(items: list[Post]) -> bytes:
    return b"".join(frame(encode(p)) for p in items)


def _read(data: bytes) -> tuple[list[Post], list[warnings.WarningMessage]]:
    with tempfile.TemporaryDirectory() as d, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = Path(d) / "log"
        path.write_bytes(data)
        return [p for _, p in read_posts(path)], caught


@given(st.binary(max_size=4000))
def test_any_bytes_yield_only_valid_records(data: bytes) -> None:
    """Random bytes never raise; whatever comes back decoded as a complete record."""
    found = scan(data)
    assert found.end <= len(data)
    for offset, payload in found.frames:
        assert data[offset : offset + 20 + len(payload)] == frame(bytes(payload))
    _read(data)


@given(post_lists, st.data())
def test_any_truncation_yields_a_prefix(items: list[Post], data: st.DataObject) -> None:
    """A log cut at any byte reads as a prefix of its posts, with no warning."""
    raw = _log_bytes(items)
    cut = data.draw(st.integers(0, len(raw)))
    got, caught = _read(raw[:cut])
    assert items[: len(got)] == got
    assert [] == caught


@settings(max_examples=60)
@given(post_lists, st.data(), posts)
def test_append_after_truncation_repairs_the_tail(
    items: list[Post], data: st.DataObject, new: Post
) -> None:
    """The next append cuts a torn tail: the log reads as the prefix plus the new post."""
    raw = _log_bytes(items)
    cut = data.draw(st.integers(0, len(raw)))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "log"
        path.write_bytes(raw[:cut])
        prefix = [p for _, p in read_posts(path)]
        append_payloads(path, [encode(new)])
        assert [*prefix, new] == [p for _, p in read_posts(path)]


@given(post_lists, st.data(), st.binary(min_size=1, max_size=300))
def test_garbage_between_records_is_skipped_with_a_warning(
    items: list[Post], data: st.DataObject, junk: bytes
) -> None:
    """Garbage inserted between two records costs no record, and is reported."""
    frames = [frame(encode(p)) for p in items]
    at = data.draw(st.integers(0, len(frames) - 1))
    raw = b"".join(frames[:at]) + junk + b"".join(frames[at:])
    got, caught = _read(raw)
    assert items == got
    assert all(issubclass(w.category, DamagedRecord) for w in caught)
    assert 1 == len(caught)


def test_garbage_in_the_middle_and_at_the_end(tmp_path: Path) -> None:
    """Every complete post is returned; the middle garbage warns; the tail waits for repair."""
    items = [_post(i) for i in range(6)]
    frames = [frame(encode(p)) for p in items]
    path = tmp_path / "log"
    path.write_bytes(
        b"".join(frames[:3]) + b"\x00garbage\xff" * 7 + b"".join(frames[3:]) + b"torn\xa7PB1\x05"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = [p for _, p in read_posts(path)]
    assert items == got
    assert [f"{path}: skipped 63 damaged bytes at offset {len(b''.join(frames[:3]))}"] == [
        str(w.message) for w in caught
    ]


def test_a_flipped_byte_loses_only_its_record(tmp_path: Path) -> None:
    """A bit flip inside one record's payload skips that record alone."""
    items = [_post(i) for i in range(5)]
    frames = [frame(encode(p)) for p in items]
    raw = bytearray(b"".join(frames))
    raw[len(frames[0]) + len(frames[1]) + 30] ^= 0x40
    path = tmp_path / "log"
    path.write_bytes(bytes(raw))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = [p for _, p in read_posts(path)]
    assert [items[0], items[1], items[3], items[4]] == got
    assert 1 == len(caught)


def _post(i: int) -> Post:
    return prompt(i)
