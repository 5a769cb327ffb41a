"""One watch: woken by inotify for a matching name, by a slow poll where there is none."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from paneboard.state import watch as watching
from paneboard.state.watch import Watch


async def _woken(watch: Watch, limit: float = 5) -> bool:
    with anyio.move_on_after(limit):
        await watch.wait_changed()
        return True
    return False


@pytest.fixture(params=["inotify", "poll"])
def kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs with inotify, then as on a system without it."""
    if request.param == "poll":
        monkeypatch.setattr(watching, "inotify_watch", lambda folder, mask: None)
    return str(request.param)


@pytest.mark.anyio
async def test_a_write_to_a_matching_file_wakes_and_another_does_not(
    tmp_path: Path, kind: str
) -> None:
    watch = Watch(tmp_path, lambda name: name.endswith(".log"))
    try:
        assert (kind == "inotify") == watch.uses_inotify
        (tmp_path / "other.txt").write_bytes(b"x")
        assert not await _woken(watch, 3 * watching.POLL_INTERVAL)
        (tmp_path / "a.log").write_bytes(b"x")
        assert await _woken(watch)
        assert not watch.gone
    finally:
        watch.close()


@pytest.mark.anyio
async def test_the_folder_going_away_wakes_and_says_so(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    watch = Watch(folder, lambda name: name == "log")
    try:
        os.rmdir(folder)
        assert await _woken(watch)
        assert watch.gone
    finally:
        watch.close()


@pytest.mark.anyio
async def test_a_folder_that_cannot_be_watched_is_polled(tmp_path: Path) -> None:
    """A missing folder is no error: it is looked at until it appears with the file."""
    folder = tmp_path / "later"
    watch = Watch(folder, lambda name: name == "log")
    try:
        assert not watch.uses_inotify
        folder.mkdir()
        (folder / "log").write_bytes(b"x")
        assert await _woken(watch)
    finally:
        watch.close()


def test_inotify_refuses_a_missing_folder_by_name(tmp_path: Path) -> None:
    with pytest.raises(OSError, match=f"cannot watch {tmp_path / 'missing'}: No such file"):
        watching.inotify_watch(tmp_path / "missing")


def test_drained_reads_every_event_and_says_whether_one_concerns(tmp_path: Path) -> None:
    fd = watching.inotify_watch(tmp_path)
    assert fd is not None
    try:
        (tmp_path / "a").write_bytes(b"x")
        (tmp_path / "b").write_bytes(b"x")
        assert not watching.drained(fd, lambda name: name == b"c")
        assert [] == watching.read_events(fd)
        (tmp_path / "c").write_bytes(b"x")
        assert watching.drained(fd, lambda name: name == b"c")
    finally:
        os.close(fd)
