"""A policy file that is there but not this user's own regular file is refused, loudly: a
reader stops rather than deliver by the default policy (fail closed)."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from paneboard.protocol.errors import BoardIOError
from paneboard.state.trust.policy import Policy, policy_path, read_policy, write_policy
from testing.helpers import Listening, post, run_cli

NOBODY = 65534
POLICY = Policy(allow=("alice",), others="hold")


def _stored(board: Path) -> Path:
    (board / "panes").mkdir(parents=True, exist_ok=True)
    write_policy(board, "bob", POLICY)
    return policy_path(board, "bob")


def _symlink(path: Path) -> str:
    """The file replaced by a symlink to a copy of itself (the same policy)."""
    copy = path.with_name("bob.policy.copy")
    shutil.copy(path, copy)
    link = path.with_name("bob.policy.link")
    link.symlink_to(copy)
    link.replace(path)
    return "is a symlink"


def _fifo(path: Path) -> str:
    path.unlink()
    os.mkfifo(path, 0o600)
    return "is a FIFO"


def _nobodys(path: Path) -> str:
    os.chown(path, NOBODY, NOBODY)
    return f"belongs to uid {NOBODY}, not to this user (uid {os.geteuid()})"


def _writable(path: Path) -> str:
    os.chmod(path, 0o622)
    return "can be written by others (mode 622)"


SPOILERS: dict[str, Callable[[Path], str]] = {
    "symlink": _symlink,
    "fifo": _fifo,
    "nobody": _nobodys,
    "writable": _writable,
}


@pytest.mark.parametrize("spoil", SPOILERS.values(), ids=SPOILERS.keys())
def test_read_policy_refuses_the_file_naming_it_and_why(
    tmp_path: Path, spoil: Callable[[Path], str]
) -> None:
    path = _stored(tmp_path)
    why = spoil(path)
    with pytest.raises(BoardIOError) as refused:
        read_policy(tmp_path, "bob")
    assert f"policy file {path} {why}; fix or remove it" == str(refused.value)


def test_no_file_is_the_default_and_a_private_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "panes").mkdir()
    assert Policy() == read_policy(tmp_path, "bob")
    path = _stored(tmp_path)
    os.chmod(path, 0o644)  # others may read it: nothing in it is secret
    assert POLICY == read_policy(tmp_path, "bob")
    assert stat.S_ISREG(os.lstat(path).st_mode)


@pytest.mark.parametrize("spoil", SPOILERS.values(), ids=SPOILERS.keys())
def test_a_listener_stops_with_one_line_and_the_prompt_stays_open(
    home: Path, spoil: Callable[[Path], str]
) -> None:
    """bob's listener delivers alice's prompt; then its policy file is spoiled: mallory's
    prompt is not delivered by the default policy, the listener exits 1 with one line naming
    the file, and the prompt stays posted for bob."""
    path = _stored(home / "test")
    with Listening(home, "bob", "--door", "stdout") as bob:
        first = post(home, "--to", "bob", "from alice")
        assert first in bob.line()
        why = spoil(path)
        second = post(home, "--to", "bob", "from mallory", sender="mallory")
        assert 1 == bob.proc.wait(timeout=10)
        said = [*bob.stderr_lines, *iter(bob.err.get, None)]
        stdout = list(iter(bob.out.get, None))
    delivered = said.index(f"paneboard listen bob@test: delivered {first} from alice via stdout")
    assert [f"paneboard: policy file {path} {why}; fix or remove it"] == said[delivered + 1 :]
    assert [] == stdout
    status = run_cli(home, "status", second)
    assert "  bob              posted" in status.stdout, status.stdout
