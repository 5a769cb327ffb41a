"""The fixture the tests of `paneboard top` in a real terminal share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.helpers import cli_env
from tests.top.test_terminal import Tmux


@pytest.fixture
def term(home: Path) -> Iterator[Tmux]:
    """A shell in a private tmux server, its environment paneboard's on *home*."""
    shell = Tmux(cli_env(home))
    try:
        yield shell
    finally:
        shell.kill()
