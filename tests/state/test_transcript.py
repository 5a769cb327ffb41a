"""Following a conversation file: only what is new, any damage skipped, woken by the kernel."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from paneboard.protocol.errors import BadInput
from paneboard.state import watch as watching
from paneboard.state.panes.transcript import (
    MAX_LINE,
    FileWatch,
    LineReader,
    Mark,
    SharedLines,
    load_mark,
    save_mark,
    watch_file,
)

NEEDLE = b"[pb]"


def line(n: int, text: str = "[pb]") -> bytes:
    return json.dumps({"n": n, "text": text}).encode() + b"\n"


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def numbers(reader: LineReader) -> list[int]:
    return [r["n"] for r in reader.read_new()]


def test_reads_only_appended_complete_lines_holding_the_needle(tmp_path: Path) -> None:
    """A line still being written waits; lines without the needle are not parsed."""
    path = tmp_path / "t.jsonl"
    append(path, line(1) + line(2, "other") + line(3)[:-5])
    reader = LineReader(path, NEEDLE)
    assert [1] == numbers(reader)
    append(path, line(3)[-5:] + line(4))
    assert [3, 4] == numbers(reader)
    assert [] == numbers(reader)


def test_malformed_and_overlong_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    long = b'{"text": "[pb]' + b"x" * (MAX_LINE + 10) + b'"}\n'
    append(path, b"[pb] not json\n" + line(1) + long + b'["[pb]"]\n' + line(2))
    reader = LineReader(path, NEEDLE)
    assert [1, 2] == numbers(reader)
    assert 2 == reader.skipped


def test_from_a_mark_the_lines_before_it_are_not_read_again(tmp_path: Path) -> None:
    """A 100 MB transcript: a reader given the mark reads only what follows it."""
    path = tmp_path / "t.jsonl"
    append(path, line(1))
    with open(path, "r+b") as f:
        f.truncate(100 << 20)  # a sparse hole: 100 MB without writing them
    append(path, b"\n" + line(2))
    first = LineReader(path, NEEDLE)
    assert [1, 2] == numbers(first)
    assert first.mark is not None
    save_mark(tmp_path / "mark", first.mark)
    append(path, line(3))
    later = LineReader(path, NEEDLE, load_mark(tmp_path / "mark"))
    assert [3] == numbers(later)


def test_a_mark_for_another_file_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    append(path, line(1))
    mark = Mark(str(tmp_path / "other.jsonl"), os.stat(path).st_ino, 10**6)
    assert [1] == numbers(LineReader(path, NEEDLE, mark))


def test_replaced_truncated_and_deleted_files_are_followed_again(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    append(path, line(1) + line(2))
    reader = LineReader(path, NEEDLE)
    assert [1, 2] == numbers(reader)
    path.write_bytes(line(3))  # truncated in place, shorter than the offset
    assert [3] == numbers(reader)
    fresh = tmp_path / "new.jsonl"
    fresh.write_bytes(line(4) + line(5) + line(6))
    fresh.replace(path)  # rotated: another inode, longer than the offset
    assert [4, 5, 6] == numbers(reader)
    path.unlink()
    assert [] == numbers(reader)
    append(path, line(7))
    assert [7] == numbers(reader)


def _open_on(path: Path) -> int:
    """How many of this process's descriptors are open on *path*."""
    fds = Path("/proc/self/fd")
    return sum(1 for fd in fds.iterdir() if os.path.realpath(fd) == str(path.resolve()))


def test_two_followers_of_one_file_share_one_reader(tmp_path: Path) -> None:
    """A tap from the start and a tap from a mark read what a reader of their own would (the
    tap from the mark: what follows it, then what is appended), through one open file."""
    path = tmp_path / "t.jsonl"
    append(path, line(1) + line(2))
    before = LineReader(path, NEEDLE)
    assert [1, 2] == numbers(before)
    assert before.mark is not None
    append(path, line(3))
    shared = SharedLines(path, NEEDLE)
    whole, after = shared.tap(), shared.tap(before.mark)
    before.close()
    assert ([3], [1, 2, 3]) == (
        [r["n"] for r in after.read_new()],
        [r["n"] for r in whole.read_new()],
    )
    append(path, line(4) + line(5, "other"))
    assert ([4], [4]) == ([r["n"] for r in whole.read_new()], [r["n"] for r in after.read_new()])
    assert 1 == _open_on(path)
    from_mark = LineReader(path, NEEDLE, after.mark)
    assert [] == numbers(from_mark)  # the mark is where the tap read to
    from_mark.close()
    whole.close()
    assert 1 == _open_on(path)  # the other tap still reads
    after.close()
    assert 0 == _open_on(path)


def test_a_tap_from_a_mark_of_a_file_replaced_or_cut_reads_all_of_it(tmp_path: Path) -> None:
    """As a reader from the mark would: the mark's file gone (another inode), or shorter."""
    path = tmp_path / "t.jsonl"
    append(path, line(1) + line(2) + line(3))
    reader = LineReader(path, NEEDLE)
    numbers(reader)
    assert reader.mark is not None
    reader.close()
    path.write_bytes(line(4))  # cut in place
    assert [4] == [r["n"] for r in SharedLines(path, NEEDLE).tap(reader.mark).read_new()]
    fresh = tmp_path / "new.jsonl"
    fresh.write_bytes(line(5) + line(6) + line(7) + line(8))
    fresh.replace(path)
    assert [5, 6, 7, 8] == [r["n"] for r in SharedLines(path, NEEDLE).tap(reader.mark).read_new()]


def test_a_folder_in_place_of_the_file_reads_nothing(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.mkdir()
    assert [] == numbers(LineReader(path, NEEDLE))


def test_an_unreadable_mark_is_none(tmp_path: Path) -> None:
    (tmp_path / "mark").write_bytes(b"garbage")
    assert None is load_mark(tmp_path / "mark")
    assert None is load_mark(tmp_path / "missing")


def test_a_mark_is_written_whole_and_never_through_a_link(tmp_path: Path) -> None:
    """Kept atomically: the old mark or the new, no temporary left beside it, a planted link
    refused with nothing written through it."""
    mark = Mark(str(tmp_path / "t.jsonl"), 7, 42)
    save_mark(tmp_path / "mark", mark)
    save_mark(tmp_path / "mark", Mark(mark.path, 7, 43))
    assert (Mark(mark.path, 7, 43), ["mark"]) == (
        load_mark(tmp_path / "mark"),
        os.listdir(tmp_path),
    )
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    (tmp_path / "planted").symlink_to(victim)
    with pytest.raises(BadInput, match="planted is a symlink; paneboard does not write through it"):
        save_mark(tmp_path / "planted", mark)
    assert b"keep" == victim.read_bytes()


async def _woken(watch: FileWatch, limit: float = 5) -> bool:
    with anyio.move_on_after(limit):
        await watch.wait_changed()
        return True
    return False


@pytest.mark.anyio
async def test_watch_wakes_on_append_and_not_for_other_files(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    append(path, line(1))
    watch = watch_file(path)
    try:
        append(tmp_path / "other.jsonl", line(1))
        assert not await _woken(watch, 0.3)
        append(path, line(2))
        assert await _woken(watch)
    finally:
        watch.close()


@pytest.mark.anyio
async def test_watch_waits_for_folders_that_do_not_exist_yet(tmp_path: Path) -> None:
    """Claude Code creates the transcript's folder with its first turn, after the listener
    starts."""
    path = tmp_path / "projects" / "-tmp-x" / "t.jsonl"
    watch = watch_file(path)
    reader = LineReader(path, NEEDLE)
    try:
        (tmp_path / "elsewhere").mkdir()  # not on the way to the file: no wake
        assert not await _woken(watch, 0.3)
        path.parent.mkdir(parents=True)
        append(path, line(1))
        with anyio.fail_after(5):
            while not (got := numbers(reader)):
                await watch.wait_changed()
        assert [1] == got
        append(path, line(2))
        assert await _woken(watch)
        assert [2] == numbers(reader)
    finally:
        watch.close()


@pytest.mark.anyio
async def test_watch_misses_no_folder_made_while_it_moves_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`mkdir -p` makes a folder and the next one in the same instant: one made after the
    watch looked for it, before the watch on its parent took hold, still wakes the watch."""
    path = tmp_path / "projects" / "-tmp-x" / "t.jsonl"
    real = watching.inotify_watch

    def late(folder: Path, mask: int) -> int | None:
        if folder == tmp_path / "projects" and not path.parent.exists():
            path.parent.mkdir()  # in the window between the look and the watch
        return real(folder, mask)

    monkeypatch.setattr(watching, "inotify_watch", late)
    watch = watch_file(path)
    reader = LineReader(path, NEEDLE)
    try:
        (tmp_path / "projects").mkdir()
        assert await _woken(watch)  # projects/: the watch moves down, and -tmp-x is made
        assert [] == numbers(reader)
        append(path, line(1))
        assert await _woken(watch)
        assert [1] == numbers(reader)
    finally:
        watch.close()


@pytest.mark.anyio
async def test_watch_follows_a_file_deleted_and_created_again(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    append(path, line(1))
    watch = watch_file(path)
    reader = LineReader(path, NEEDLE)
    try:
        assert [1] == numbers(reader)
        path.unlink()
        append(path, line(2))
        assert await _woken(watch)
        assert [2] == numbers(reader)
    finally:
        watch.close()
