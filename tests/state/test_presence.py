"""Presence records are input: checked as they decode, never followed through a link or a FIFO."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest

from paneboard.protocol.errors import DamagedRecord
from paneboard.state.filelog.store import FileStore
from paneboard.state.panes import checkpoint, presence


def test_a_presence_is_read_back() -> None:
    """What a listener writes, a reader gets."""
    written = presence.Presence(4242, "claude-inbox", 1.7e9, 1.7e9 + 5, "box")
    assert written == presence.parse(
        "x",
        json.dumps(
            {
                "pid": 4242,
                "door": "claude-inbox",
                "started": 1.7e9,
                "last_delivery": 1.7e9 + 5,
                "host": "box",
            }
        ).encode(),
    )


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        (
            {"door": "claude-inbox\x1b]0;T\x07"},
            "presence: `door`: Expected `str` of the allowed form",
        ),
        ({"last_delivery": 1e300}, "presence: `last_delivery`: Expected `float` <= 253402300799.0"),
        ({"started": -1.0}, "presence: `started`: Expected `float` >= 0.0"),
        ({"pid": 2**40}, "presence: `pid`: Expected `int` <= 2147483647"),
        ({"host": "h" * 300}, "presence: `host`: Expected `str` of length <= 255"),
    ],
)
def test_a_hostile_presence_is_skipped_with_a_warning(
    record: dict[str, object], reason: str
) -> None:
    """Escapes in the door, a time of 1e300 or below zero, a huge pid or host: a warning."""
    good = {"pid": 1, "door": "stdout", "started": 1.0, "last_delivery": None, "host": ""}
    data = json.dumps({**good, **record}).encode()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DamagedRecord)
        assert presence.parse("presence of `bob`", data) is None
    assert [f"presence of `bob`: skipped {len(data)} damaged bytes at offset 0 ({reason})"] == [
        str(w.message) for w in caught
    ]


def test_a_presence_file_that_is_a_fifo_or_a_link_is_not_read(tmp_path: Path) -> None:
    """Neither blocks nor follows: None for both, the link's target untouched."""
    fifo, link, target = tmp_path / "fifo.presence", tmp_path / "link.presence", tmp_path / "t"
    os.mkfifo(fifo, 0o600)
    target.write_bytes(b'{"pid": 1, "door": "stdout", "started": 1.0}')
    link.symlink_to(target)
    assert (None, None) == (presence.read(fifo), presence.read(link))


def test_a_checkpoint_that_is_a_fifo_means_a_cold_fold(tmp_path: Path) -> None:
    """A FIFO in place of the checkpoint is never opened for a blocking read."""
    (tmp_path / "b").mkdir()
    store = FileStore(tmp_path / "b")
    os.mkfifo(tmp_path / "cp", 0o600)
    assert checkpoint.load(tmp_path / "cp", store) is None
