"""The user's own configuration kept as links by a dotfiles manager (state/ownfiles.py, through
`hook install|uninstall codex --trust`): the user's own link is written through, keeping it;
every other link is refused, naming why, with nothing written; a project's links stay refused."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from paneboard.agents.codex_trust import handler_hash
from paneboard.state.ownfiles import write_own
from testing.helpers import run_cli

NOBODY = 65534
BEFORE = 'model = "m"  # kept in the dotfiles repository\n'


@dataclass
class Stowed:
    """A stow-like layout: `$CODEX_HOME/config.toml` a relative link into `~/dotfiles`."""

    project: Path
    codex_home: Path
    link: Path
    target: Path

    def hook(self, home: Path, action: str, *args: str) -> tuple[int, str, str]:
        done = run_cli(
            home,
            *("hook", action, "codex", "--project", str(self.project), *args),
            CODEX_HOME=str(self.codex_home),
        )
        return done.returncode, done.stdout, done.stderr

    def files(self) -> list[Path]:
        """Every file and link under the user's and the project's folders."""
        roots = (self.codex_home.parent, self.project)
        return sorted(p for root in roots for p in root.rglob("*") if not p.is_dir())


@pytest.fixture
def stowed(tmp_path: Path) -> Stowed:
    user = tmp_path / "user"
    package = user / "dotfiles" / "codex" / ".codex"
    package.mkdir(parents=True)
    codex_home = user / ".codex"
    codex_home.mkdir()
    for folder in (user, user / "dotfiles", package.parent, package, codex_home):
        folder.chmod(0o755)
    target = package / "config.toml"
    target.write_text(BEFORE)
    target.chmod(0o640)
    link = codex_home / "config.toml"
    link.symlink_to("../dotfiles/codex/.codex/config.toml")
    project = tmp_path / "proj"
    project.mkdir()
    return Stowed(project, codex_home, link, target)


def test_install_and_uninstall_write_through_the_users_own_link(home: Path, stowed: Stowed) -> None:
    """Install writes the trust into the file the link points to, in its own folder, and says
    so in one line; uninstall takes exactly that out again; the link stays the same link and
    the file keeps its permissions."""
    files = stowed.files()
    code, out, err = stowed.hook(home, "install", "--as", "bob", "--trust")
    assert (0, "") == (code, err)
    via = f"{stowed.target} (through the link {stowed.link})"
    assert f"trusted 1 paneboard hook(s) in {via}" in out.splitlines()
    assert "../dotfiles/codex/.codex/config.toml" == os.readlink(stowed.link)
    text = stowed.target.read_text()
    hooks = json.loads((stowed.project / ".codex" / "hooks.json").read_text())
    [[handler]] = [g["hooks"] for g in hooks["hooks"]["SessionStart"]]
    key = f"{stowed.project}/.codex/hooks.json:session_start:0:0"
    digest = handler_hash("SessionStart", {}, handler)
    assert f'{BEFORE}\n[hooks.state."{key}"]\ntrusted_hash = "{digest}"\n' == text
    assert 0o640 == stat.S_IMODE(stowed.target.stat().st_mode)
    assert sorted([*files, stowed.project / ".codex" / "hooks.json"]) == stowed.files()

    again = stowed.hook(home, "install", "--as", "bob", "--trust")
    assert f"already trusted: 1 paneboard hook(s) in {stowed.link}" in again[1].splitlines()
    assert text == stowed.target.read_text()

    code, out, err = stowed.hook(home, "uninstall")
    assert (0, "") == (code, err)
    assert f"removed the trust of 1 paneboard hook(s) from {via}" in out.splitlines()
    assert "../dotfiles/codex/.codex/config.toml" == os.readlink(stowed.link)
    assert BEFORE == stowed.target.read_text()
    assert 0o640 == stat.S_IMODE(stowed.target.stat().st_mode)


def _to_folder(s: Stowed) -> str:
    s.target.unlink()
    s.target.mkdir()
    return f"{s.target} is not a regular file"


def _to_fifo(s: Stowed) -> str:
    s.target.unlink()
    os.mkfifo(s.target)
    return f"{s.target} is not a regular file"


def _dangling(s: Stowed) -> str:
    s.target.unlink()
    return f"{s.target} does not exist"


def _to_a_link(s: Stowed) -> str:
    real = s.target.with_name("real.toml")
    s.target.rename(real)
    s.target.symlink_to(real)
    return f"{s.target} is another link (paneboard follows one)"


def _target_of_another_user(s: Stowed) -> str:
    os.chown(s.target, NOBODY, -1)
    return f"{s.target} is uid {NOBODY}'s, not yours"


def _link_of_another_user(s: Stowed) -> str:
    os.lchown(s.link, NOBODY, -1)
    return f"the link is uid {NOBODY}'s, not yours"


def _target_folder_others_write(s: Stowed) -> str:
    s.target.parent.chmod(0o777)
    return f"others can write its folder {s.target.parent} (mode 777)"


def _target_folder_group_writes(s: Stowed) -> str:
    s.target.parent.chmod(0o775)
    return f"others can write its folder {s.target.parent} (mode 775)"


def _target_folder_of_another_user(s: Stowed) -> str:
    os.chown(s.target.parent, NOBODY, -1)
    return f"its folder {s.target.parent} is uid {NOBODY}'s, not yours"


def _link_folder_others_write(s: Stowed) -> str:
    s.codex_home.chmod(0o777)
    return f"others can write the link's folder {s.codex_home} (mode 777)"


def _link_folder_of_another_user(s: Stowed) -> str:
    os.chown(s.codex_home, NOBODY, -1)
    return f"the link's folder {s.codex_home} is uid {NOBODY}'s, not yours"


REFUSED: list[Callable[[Stowed], str]] = [
    _to_folder,
    _to_fifo,
    _dangling,
    _to_a_link,
    _target_of_another_user,
    _link_of_another_user,
    _target_folder_others_write,
    _target_folder_group_writes,
    _target_folder_of_another_user,
    _link_folder_others_write,
    _link_folder_of_another_user,
]


def _snapshot(s: Stowed) -> tuple[str, bytes | None]:
    target = s.target.read_bytes() if s.target.is_file() and not s.target.is_fifo() else None
    return os.readlink(s.link), target


@pytest.mark.parametrize("make", REFUSED, ids=[f.__name__.strip("_") for f in REFUSED])
def test_install_refuses_every_other_link_and_writes_nothing(
    home: Path, stowed: Stowed, make: Callable[[Stowed], str]
) -> None:
    """A link to something else than a regular file, to a file or into a folder another user
    owns or others can write, or a link of another user's or in such a folder: refused in one
    line naming why, before anything is written (not even the project's hooks.json)."""
    why = make(stowed)
    before, files = _snapshot(stowed), stowed.files()
    code, out, err = stowed.hook(home, "install", "--as", "bob", "--trust")
    target = os.path.normpath(stowed.link.parent / os.readlink(stowed.link))
    expected = (
        f"paneboard: {stowed.link} is a symlink to {target}, and {why}; "
        "paneboard does not write through it, nothing written\n"
    )
    assert (1, "", expected) == (code, out, err)
    assert (before, files) == (_snapshot(stowed), stowed.files())


def test_uninstall_refuses_a_link_gone_bad_and_writes_nothing(home: Path, stowed: Stowed) -> None:
    """Installed through a good link, then the file it points to changes hands: uninstall is
    refused before it touches the project's hooks.json or the trust."""
    assert 0 == stowed.hook(home, "install", "--trust")[0]
    hooks = (stowed.project / ".codex" / "hooks.json").read_bytes()
    trusted = stowed.target.read_bytes()
    os.chown(stowed.target, NOBODY, -1)
    code, out, err = stowed.hook(home, "uninstall")
    assert (1, "") == (code, out)
    why = f"{stowed.target} is uid {NOBODY}'s, not yours"
    expected = (
        f"paneboard: {stowed.link} is a symlink to {stowed.target}, and {why}; "
        "paneboard does not write through it, nothing written\n"
    )
    assert expected == err
    assert (hooks, trusted) == (
        (stowed.project / ".codex" / "hooks.json").read_bytes(),
        stowed.target.read_bytes(),
    )


def test_a_projects_link_stays_refused_even_into_the_users_own_files(
    home: Path, stowed: Stowed
) -> None:
    """The same kind of link as the project's hooks.json (a cloned repository can bring one):
    refused, the file it points to untouched."""
    (stowed.project / ".codex").mkdir()
    planted = stowed.project / ".codex" / "hooks.json"
    planted.symlink_to(stowed.target)
    code, out, err = stowed.hook(home, "install")
    expected = f"paneboard: {planted} is a symlink; paneboard does not write through it"
    assert (1, "") == (code, out) and err.startswith(expected)
    assert BEFORE == stowed.target.read_text()


def test_write_own_writes_a_plain_file_in_place_keeping_its_mode(tmp_path: Path) -> None:
    """No link: the file is replaced where it is, with its permissions; a new one is 0600."""
    plain = tmp_path / "config.toml"
    plain.write_text("old\n")
    plain.chmod(0o644)
    assert plain == write_own(plain, b"new\n")
    assert (b"new\n", 0o644) == (plain.read_bytes(), stat.S_IMODE(plain.stat().st_mode))
    fresh = tmp_path / "fresh.toml"
    assert fresh == write_own(fresh, b"x\n")
    assert 0o600 == stat.S_IMODE(fresh.stat().st_mode)


@pytest.fixture
def folded(stowed: Stowed) -> Stowed:
    """Stow's folded layout: `$CODEX_HOME` itself a link to the package's folder (what Stow
    makes when the folder does not exist yet), config.toml a plain file in it."""
    stowed.link.unlink()
    stowed.codex_home.rmdir()
    stowed.codex_home.symlink_to("dotfiles/codex/.codex")
    return stowed


def test_a_folded_folder_is_followed_as_the_users_own_link(home: Path, folded: Stowed) -> None:
    """Install and uninstall write config.toml in the folder the link points to; the link
    stays; the file ends as it began."""
    code, out, err = folded.hook(home, "install", "--trust")
    assert (0, "") == (code, err)
    config = folded.codex_home / "config.toml"
    assert f"trusted 1 paneboard hook(s) in {folded.target} (through the link {config})" in (
        out.splitlines()
    )
    assert "dotfiles/codex/.codex" == os.readlink(folded.codex_home)
    assert folded.target.read_text().startswith(BEFORE + "\n[hooks.state.")
    assert 0 == folded.hook(home, "uninstall")[0]
    assert ("dotfiles/codex/.codex", BEFORE) == (
        os.readlink(folded.codex_home),
        folded.target.read_text(),
    )


def _package_others_write(s: Stowed) -> str:
    s.target.parent.chmod(0o777)
    return f"others can write {s.target.parent} (mode 777)"


def _folder_link_of_another_user(s: Stowed) -> str:
    os.lchown(s.codex_home, NOBODY, -1)
    return f"the link is uid {NOBODY}'s, not yours"


def _folder_link_among_others(s: Stowed) -> str:
    s.codex_home.parent.chmod(0o777)
    return f"others can write the link's folder {s.codex_home.parent} (mode 777)"


def _folder_link_dangling(s: Stowed) -> str:
    s.target.unlink()
    s.target.parent.rmdir()
    return f"{s.target.parent} does not exist"


def _folder_link_to_a_file(s: Stowed) -> str:
    s.target.unlink()
    s.target.parent.rmdir()
    s.target.parent.write_text("")
    return f"{s.target.parent} is not a folder"


def _folder_link_to_a_link(s: Stowed) -> str:
    package = s.target.parent
    package.rename(package.with_name("real"))
    package.symlink_to("real")
    return f"{package} is another link (paneboard follows one)"


FOLDED_REFUSED: list[Callable[[Stowed], str]] = [
    _package_others_write,
    _folder_link_of_another_user,
    _folder_link_among_others,
    _folder_link_dangling,
    _folder_link_to_a_file,
    _folder_link_to_a_link,
]


@pytest.mark.parametrize(
    "make", FOLDED_REFUSED, ids=[f.__name__.strip("_") for f in FOLDED_REFUSED]
)
def test_a_folded_folder_refuses_every_other_link_and_writes_nothing(
    home: Path, folded: Stowed, make: Callable[[Stowed], str]
) -> None:
    """The folder's link is held to the same terms as a file's: refused in one line naming
    why, nothing written."""
    why = make(folded)
    files = folded.files()
    code, out, err = folded.hook(home, "install", "--trust")
    expected = (
        f"paneboard: {folded.codex_home} is a symlink to {folded.target.parent}, and {why}; "
        "paneboard does not write through it, nothing written\n"
    )
    assert (1, "", expected) == (code, out, err)
    assert files == folded.files()
