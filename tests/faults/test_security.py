"""Who can read and write a board, and what a planted symlink can do (nothing)."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from paneboard.state.panes import presence
from testing.helpers import Listening, post, run_cli


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_folders_0700_files_0600(tmp_path: Path) -> None:
    """Created so, whatever the umask says."""
    home = tmp_path / "new-home"
    old = os.umask(0)
    try:
        pid = post(home, "--to", "bob", "hi")
        with Listening(home, "bob", "--door", "stdout") as bob:
            bob.line()
            bob.wait_err(f"delivered {pid}")
    finally:
        os.umask(old)
    board = home / "test"
    assert [0o700, 0o700, 0o700] == [_mode(home), _mode(board), _mode(board / "panes")]
    files = [board / "log", *(board / "panes").iterdir()]
    assert {f.name: 0o600 for f in files} == {f.name: _mode(f) for f in files}


@pytest.mark.parametrize("target", ["log", "panes/bob.lock", "panes/bob.delivered"])
def test_planted_symlinks_are_not_followed(home: Path, tmp_path: Path, target: str) -> None:
    """A symlink in place of the log, the pane lock or the delivered-key log
    is refused, and its target untouched."""
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (home / "test" / "panes").mkdir(parents=True, mode=0o700)
    (home / "test" / target).symlink_to(victim)
    if target == "log":
        done = run_cli(home, "post", "--as", "alice", "--to", "bob", "hi")
    else:
        done = run_cli(home, "listen", "--as", "bob", "--door", "stdout", timeout=20)
    path = home / "test" / target
    expected = {
        "log": f"board `test`: log {path} is a symlink; refusing to follow it",
        "panes/bob.lock": f"cannot open pane lock {path}: Too many levels of symbolic links",
        "panes/bob.delivered": f"cannot read {path}: Too many levels of symbolic links",
    }[target]
    assert (1, f"paneboard: {expected}\n") == (done.returncode, done.stderr)
    assert "precious\n" == victim.read_text()


def test_a_board_folder_that_is_a_symlink_is_refused(home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / "test").symlink_to(elsewhere)
    done = run_cli(home, "post", "--as", "alice", "--to", "bob", "hi")
    assert (
        1,
        f"paneboard: board `test`: {home / 'test'} is a symlink; refusing to follow it\n",
    ) == (
        done.returncode,
        done.stderr,
    )
    assert [] == list(elsewhere.iterdir())


def test_a_maildir_inbox_that_is_a_symlink_is_refused(home: Path, tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "inbox", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (root / "bob").symlink_to(elsewhere)
    with Listening(
        home, "bob", "--door", "maildir", "--maildir", str(root), "--backoff", "60"
    ) as bob:
        pid = post(home, "--to", "bob", "hi")
        bob.wait_err(f"undelivered {pid}")
    assert [] == list(elsewhere.iterdir())


def test_max_open_limits_one_sender_per_recipient(home: Path) -> None:
    """Beyond N open prompts for one recipient, `post` refuses with one line and writes nothing;
    closing, cancelling or expiry makes room; other recipients and senders are not affected."""
    ids = [post(home, "--to", "bob", "--max-open", "3", f"job {i}") for i in range(3)]
    log = home / "test" / "log"
    before = log.read_bytes()
    refused = run_cli(
        home, "post", "--as", "alice", "--to", "bob", "--max-open", "3", "one too many"
    )
    message = (
        "paneboard: board `test`: `alice` already has 3 open prompts for `bob` "
        "(the --max-open limit); wait for some to be closed, or cancel some\n"
    )
    assert (1, message) == (refused.returncode, refused.stderr)
    assert before == log.read_bytes()
    assert (
        0
        == run_cli(
            home, "post", "--as", "alice", "--to", "carol", "--max-open", "3", "carol is fine"
        ).returncode
    )
    assert (
        0
        == run_cli(
            home, "post", "--as", "dave", "--to", "bob", "--max-open", "3", "dave is fine"
        ).returncode
    )
    assert 0 == run_cli(home, "ack", "--as", "bob", ids[0]).returncode
    post(home, "--to", "bob", "--max-open", "3", "room after an ack")
    assert 0 == run_cli(home, "cancel", "--as", "alice", ids[1]).returncode
    post(home, "--to", "bob", "--max-open", "3", "--ttl", "2", "room after a cancel")
    expires = time.time() + 2  # no earlier than its expiry; 2 s: the next post still sees it
    assert (
        1
        == run_cli(
            home, "post", "--as", "alice", "--to", "bob", "--max-open", "3", "full again"
        ).returncode
    )
    time.sleep(max(0.0, expires - time.time()) + 0.05)  # waits for the clock: the expiry
    post(home, "--to", "bob", "--max-open", "3", "room after expiry")


def test_a_planted_presence_link_is_not_read(tmp_path: Path) -> None:
    """A pane's presence file that is a symlink reads as no presence; the file itself does."""
    real = tmp_path / "elsewhere.json"
    presence.write(real, presence.Presence(pid=1, door="forged", started=1.0))
    link = tmp_path / "bob.presence"
    link.symlink_to(real)
    assert ("forged", None) == (getattr(presence.read(real), "door", None), presence.read(link))
