"""`write_atomic`: one new random temporary, nothing written through a link."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from paneboard.protocol.errors import BadInput
from paneboard.state.files import refuse_links, write_atomic

WHY = "is a symlink; paneboard does not write through it, nothing written"


def test_a_symlinked_target_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    """The link stays a link, the file it names keeps its bytes."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    (tmp_path / "f").symlink_to(victim)
    with pytest.raises(BadInput) as info:
        write_atomic(tmp_path / "f", b"new")
    assert f"{tmp_path / 'f'} {WHY}" == str(info.value)
    assert (b"precious", ["f", "victim"]) == (victim.read_bytes(), sorted(os.listdir(tmp_path)))


def test_a_symlinked_folder_is_refused(tmp_path: Path) -> None:
    """The file's own folder, or (with a root) any folder below the root, may not be a link."""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(BadInput) as info:
        write_atomic(tmp_path / "link" / "f", b"x")
    assert f"{tmp_path / 'link'} {WHY}" == str(info.value)
    with pytest.raises(BadInput) as info:
        write_atomic(tmp_path / "link" / "sub" / "f", b"x", root=tmp_path)
    assert f"{tmp_path / 'link'} {WHY}" == str(info.value)
    assert [] == os.listdir(tmp_path / "real")


def test_refuse_links_names_the_first_link_below_the_root(tmp_path: Path) -> None:
    """Checked before a command writes anything: the folder, then the file."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f").symlink_to(tmp_path / "elsewhere")
    refuse_links(tmp_path / "a" / "missing", tmp_path)
    with pytest.raises(BadInput) as info:
        refuse_links(tmp_path / "a" / "f", tmp_path)
    assert f"{tmp_path / 'a' / 'f'} {WHY}" == str(info.value)


def test_temporaries_are_new_random_files_and_go_on_failure(tmp_path: Path) -> None:
    """A link planted under every old fixed temporary name is left alone; a failed rename (the
    target a folder) leaves no temporary behind."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    for name in (".f.paneboard-tmp", f".f.{os.getpid()}.tmp"):
        (tmp_path / name).symlink_to(victim)
    write_atomic(tmp_path / "f", b"new")
    assert (b"new", b"precious") == ((tmp_path / "f").read_bytes(), victim.read_bytes())
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError):
        write_atomic(tmp_path / "d", b"x")
    expected = sorted([".f.paneboard-tmp", f".f.{os.getpid()}.tmp", "d", "f", "victim"])
    assert expected == sorted(os.listdir(tmp_path))


def test_modes_are_explicit_under_umask_000(tmp_path: Path) -> None:
    """The file gets the mode asked for and folders made below a root *folder_mode*."""
    old = os.umask(0)
    try:
        write_atomic(tmp_path / "home-file", b"x")
        write_atomic(tmp_path / "a" / "b" / "f", b"x", mode=0o644, root=tmp_path)
    finally:
        os.umask(old)
    modes = [
        stat.S_IMODE(os.lstat(p).st_mode)
        for p in (tmp_path / "home-file", tmp_path / "a", tmp_path / "a" / "b", tmp_path / "a/b/f")
    ]
    assert [0o600, 0o755, 0o755, 0o644] == modes
