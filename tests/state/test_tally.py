"""The open-prompt tally: named only from a checked name, never written through a link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paneboard.protocol.errors import BadInput, BoardIOError
from paneboard.state.filelog import tally


@pytest.mark.parametrize("sender", ["../../../target/remote", "a/b", ".hidden", "x\ny", ""])
def test_a_sender_that_is_not_a_name_never_becomes_a_path(tmp_path: Path, sender: str) -> None:
    """`path_for` refuses it (BadInput), so nothing is built from it."""
    with pytest.raises(BadInput):
        tally.path_for(tmp_path / "board", sender)


def test_a_senders_folder_that_is_a_link_is_refused(tmp_path: Path) -> None:
    """The tally is never written into a folder a link points at."""
    board, elsewhere = tmp_path / "board", tmp_path / "elsewhere"
    board.mkdir()
    elsewhere.mkdir()
    (board / "senders").symlink_to(elsewhere)
    path = tally.path_for(board, "alice")
    with pytest.raises(BoardIOError) as caught:
        tally.write(path, {"bob": [("0" * 26, None)]})
    assert f"cannot update {path}: {board / 'senders'} is a symlink" == str(caught.value)
    assert [] == os.listdir(elsewhere)


def test_a_tally_that_is_a_fifo_reads_as_empty(tmp_path: Path) -> None:
    """Reading never blocks on a FIFO planted in place of the tally."""
    path = tmp_path / "alice.open"
    os.mkfifo(path, 0o600)
    assert {} == tally.read(path, 0.0)
