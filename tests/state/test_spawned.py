"""The spawn record of a pane (`panes/AGENT.spawned`): private, atomic, checked as it decodes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paneboard.protocol.errors import BoardIOError
from paneboard.state.panes import spawned


def test_a_record_round_trips_and_is_private(tmp_path: Path) -> None:
    path = tmp_path / "helper.spawned"
    record = spawned.record("claude", "3f2a1b9c", "claude attach 3f2a1b9c", 4121)
    spawned.write(path, record)
    assert record == spawned.read(path)
    assert 0o600 == path.stat().st_mode & 0o777
    assert [path] == list(tmp_path.iterdir())  # no temporary left beside it
    spawned.remove(path)
    assert spawned.read(path) is None


def test_a_symlink_in_its_place_is_neither_followed_nor_written_through(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("{}")
    path = tmp_path / "helper.spawned"
    path.symlink_to(target)
    with pytest.raises(BoardIOError, match="is a symlink"):
        spawned.read(path)
    with pytest.raises(ValueError, match="is a symlink"):
        spawned.write(path, spawned.record("pi", "s", "a", None))
    assert "{}" == target.read_text()


def test_a_record_others_can_write_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "helper.spawned"
    spawned.write(path, spawned.record("pi", "s", "a", None))
    os.chmod(path, 0o622)
    with pytest.raises(BoardIOError, match=r"can be written by others \(mode 622\)"):
        spawned.read(path)


@pytest.mark.parametrize(
    "data",
    [
        b"not json",
        b'{"kind": "pi"}',
        b'{"kind": "../x", "session": "s", "attach": "a", "started": 1}',
        b'{"kind": "pi", "session": "", "attach": "a", "started": 1}',
        b'{"kind": "pi", "session": "s", "attach": "a", "started": 1, "pid": 0}',
    ],
)
def test_a_damaged_record_is_named(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "helper.spawned"
    path.write_bytes(data)
    path.chmod(0o600)
    with pytest.raises(BoardIOError, match=rf"^spawn record {path} is damaged \(.+\); remove it$"):
        spawned.read(path)
