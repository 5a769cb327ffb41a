"""Homes and default names."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import platformdirs
import pytest

from paneboard.protocol.errors import BadInput, BoardIOError
from paneboard.state.paths import default_board, git_common_dir, open_home, user_data_dir


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def test_git_common_dir_matches_git_in_worktrees_and_subfolders(tmp_path: Path) -> None:
    """Read from files, the answer is git's own,
    from the main checkout, a subfolder and a worktree."""
    main = tmp_path / "My Repo!"
    main.mkdir()
    _git(main, "init", "-q")
    _git(
        main,
        "-c",
        "user.email=a@b",
        "-c",
        "user.name=a",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    )
    (main / "sub" / "deeper").mkdir(parents=True)
    _git(main, "worktree", "add", "-q", str(tmp_path / "wt"))
    for cwd in (main, main / "sub" / "deeper", tmp_path / "wt"):
        expected = os.path.normpath(os.path.join(cwd, _git(cwd, "rev-parse", "--git-common-dir")))
        assert expected == git_common_dir(str(cwd), {})
        assert "My-Repo-" == default_board(str(cwd), {})


def test_outside_git_the_board_is_default(tmp_path: Path) -> None:
    assert "default" == default_board(str(tmp_path), {})


def test_user_data_dir_is_platformdirs_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hand-computed default home equals platformdirs', with and without XDG_DATA_HOME."""
    assert platformdirs.user_data_dir("paneboard", appauthor=False) == user_data_dir()
    monkeypatch.setenv("XDG_DATA_HOME", "/x/data")
    assert platformdirs.user_data_dir("paneboard", appauthor=False) == user_data_dir()


def test_home_is_created_private_with_parents(tmp_path: Path) -> None:
    """A missing home is made 0700, parents included."""
    home = open_home(tmp_path / "a" / "b" / "home")
    assert 0o700 == home.stat().st_mode & 0o777


def test_a_home_others_can_write_is_refused(tmp_path: Path) -> None:
    """The message says how to fix it."""
    (tmp_path / "h").mkdir()
    os.chmod(tmp_path / "h", 0o777)
    with pytest.raises(BadInput, match=r"writable by others \(mode 777\); fix it with: chmod 700 "):
        open_home(tmp_path / "h")


def test_a_home_that_cannot_be_created_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(BoardIOError, match="cannot be created: Not a directory"):
        open_home(tmp_path / "file" / "home")
