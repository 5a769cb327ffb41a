"""A module's live session of an agent CLI, as a pytest fixture: opened once for the module's
tests, skipped (saying why) where the CLI is not installed, closed after them."""

from __future__ import annotations

import functools
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest

S = TypeVar("S", bound="Closes")


class Closes(Protocol):
    def close(self) -> None: ...


def live(session: Callable[[Path], S], found: Path | None, missing: str) -> Iterator[S]:
    """A module's live session of the CLI at *found*, closed after its tests; the tests skip,
    saying *missing*, where the CLI is not installed."""
    if found is None:
        pytest.skip(missing)
    s = session(found)
    try:
        yield s
    finally:
        s.close()


NEEDS_TMUX = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is missing: no session")
# A live test whose checks only wait (within their time limits), none on a turn's timing:
# `make test` runs it among its workers. A module whose session also serves a timed test (a
# prompt delivered during a 3 s turn) opens that session once in each run.
UNTIMED = pytest.mark.untimed


def live_fixture(
    session: Callable[..., S], find: Callable[[], Path | None], name: str, missing: str
) -> Any:
    """A module-scoped fixture: one live session of the CLI *find* gives, as agent *name*, for
    the module's tests (skipped, saying *missing*, where the CLI is not installed)."""

    @pytest.fixture(scope="module", name="session")
    def live_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S]:
        folder = tmp_path_factory.mktemp(name)
        yield from live(functools.partial(session, folder, name=name), find(), missing)

    return live_session
