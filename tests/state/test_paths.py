"""Homes and default names."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import platformdirs
import pytest

from paneboard.protocol.errors import BadInput, BoardIOError
from paneboard.state.paths import default_board, git_common_dir, open_home, user_data_dir
from testing.helpers import run_cli


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


def _modes(*paths: Path) -> list[str]:
    return [oct(stat.S_IMODE(os.lstat(p).st_mode)) for p in paths]


def test_home_parents_are_created_private_under_umask_000(tmp_path: Path) -> None:
    """Each missing parent of the home is made 0700 too, whatever the umask."""
    old = os.umask(0)
    try:
        open_home(tmp_path / "um0" / "x" / "y" / "home")
    finally:
        os.umask(old)
    um0 = tmp_path / "um0"
    assert ["0o700"] * 4 == _modes(um0, um0 / "x", um0 / "x" / "y", um0 / "x" / "y" / "home")


def test_the_default_home_under_a_fresh_home_leaves_no_world_writable_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`~/.local/share/paneboard` made under umask 000: `.local` and `share` are 0700."""
    monkeypatch.setenv("HOME", str(tmp_path / "fakehome"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    (tmp_path / "fakehome").mkdir()
    old = os.umask(0)
    try:
        home = open_home(user_data_dir())
    finally:
        os.umask(old)
    local = tmp_path / "fakehome" / ".local"
    assert local / "share" / "paneboard" == home
    assert ["0o700"] * 3 == _modes(local, local / "share", home)


def _chown_away(path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a folder another user owns needs root")
    os.chown(path, 65534, 65534)


def test_a_home_another_user_owns_is_refused_by_readers_and_writers(tmp_path: Path) -> None:
    """A home of uid 65534, even 0700: one line, for `open` and `doctor` as well."""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o700)
    _chown_away(shared)
    expected = (
        f"home {shared} belongs to uid 65534, not to this user (uid {os.geteuid()}); "
        "use a private folder of your own (--home or PANEBOARD_HOME)"
    )
    for create in (False, True):
        with pytest.raises(BadInput) as info:
            open_home(shared, create=create)
        assert expected == str(info.value)
    for command in ("open", "doctor"):
        done = run_cli(shared, command, "--as", "bob")
        assert (1, "", f"paneboard: {expected}\n") == (done.returncode, done.stdout, done.stderr)


def test_a_shared_sticky_home_is_refused_with_advice_that_makes_sense(tmp_path: Path) -> None:
    """A home like /tmp (mode 1777) is refused without advising to chmod it."""
    shared = tmp_path / "tmpish"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    done = run_cli(shared, "post", "--as", "alice", "--to", "bob", "hi")
    expected = (
        f"paneboard: home {shared} is writable by others (mode 1777); "
        "use a private folder of your own (--home or PANEBOARD_HOME)\n"
    )
    assert (1, expected) == (done.returncode, done.stderr)
    assert [] == os.listdir(shared)


@pytest.mark.parametrize(
    ("rel", "mode"), [("test", 0o777), ("test/panes", 0o770), ("test/log", 0o666)]
)
def test_a_board_folder_or_log_others_can_write_is_refused_and_doctor_fails_it(
    tmp_path: Path, rel: str, mode: int
) -> None:
    """`post` refuses with one line saying how to fix it, nothing appended; `doctor` fails it."""
    home = tmp_path / "home"
    assert 0 == run_cli(home, "post", "--as", "alice", "--to", "bob", "hi").returncode
    size = (home / "test" / "log").stat().st_size
    os.chmod(home / rel, mode)
    kind, fix = ("log", 600) if rel.endswith("log") else ("folder", 700)
    problem = (
        f"board `test`: {kind} {home / rel} is writable by others (mode {mode:o}); "
        f"fix it with: chmod {fix} {home / rel}"
    )
    done = run_cli(home, "post", "--as", "alice", "--to", "bob", "again")
    assert (1, "", f"paneboard: {problem}\n") == (done.returncode, done.stdout, done.stderr)
    assert size == (home / "test" / "log").stat().st_size
    doctor = run_cli(home, "doctor", "--as", "bob")
    assert 1 == doctor.returncode
    assert f"fail  board    {problem}" in doctor.stdout.splitlines()


def test_a_board_folder_another_user_owns_is_refused(tmp_path: Path) -> None:
    """A board folder of uid 65534 inside the home: one line, nothing written."""
    home = tmp_path / "home"
    (home / "test").mkdir(parents=True, mode=0o700)
    os.chmod(home, 0o700)
    _chown_away(home / "test")
    done = run_cli(home, "post", "--as", "alice", "--to", "bob", "hi")
    expected = (
        f"paneboard: board `test`: folder {home / 'test'} belongs to uid 65534, "
        f"not to this user (uid {os.geteuid()}); move it away\n"
    )
    assert (1, expected) == (done.returncode, done.stderr)
    assert [] == os.listdir(home / "test")
