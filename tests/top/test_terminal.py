"""`paneboard top` in a real terminal (tmux): the screen, read with capture-pane, follows
posts written by another process; `q` and SIGTERM end it with exit 0 and leave the terminal
as it was (modes, alternate screen, cursor, mouse)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from testing.helpers import cli_env, run_cli, wait_until

# A real terminal: the `real` tier (tmux), skipped where tmux is missing.
pytestmark = [
    pytest.mark.real,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is missing"),
]
MODES = "#{alternate_on} #{cursor_flag} #{mouse_any_flag} #{mouse_sgr_flag} #{keypad_flag}"


class Tmux:
    """A tmux server of the test's own, with one 120x36 shell pane."""

    def __init__(self, env: dict[str, str]) -> None:
        self.socket = f"pb-top-{uuid.uuid4().hex[:8]}"
        self.env = {**env, "TERM": "xterm-256color", "PS1": "$ "}
        self.run("new-session", "-d", "-x", "120", "-y", "36", "bash --norc --noprofile")

    def run(self, *args: str) -> str:
        argv = ["tmux", "-L", self.socket, "-f", "/dev/null", *args]
        done = subprocess.run(
            argv,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        assert 0 == done.returncode, done.stderr
        return done.stdout

    def type(self, line: str) -> None:
        self.run("send-keys", "-t", "0", "-l", line)
        self.run("send-keys", "-t", "0", "Enter")

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "0")

    def wait(self, seen: Callable[[str], bool], within: float = 20) -> str:
        """The screen once *seen* holds for it; bounded, failing with the screen shown."""

        def shown() -> str | None:
            text = self.screen()
            return text if seen(text) else None

        return wait_until(shown, "the terminal shows it", within, self.screen, every=0.05)

    def modes(self) -> str:
        return self.run("display-message", "-p", "-t", "0", MODES).strip()

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)


@pytest.fixture
def tmux(home: Path, tmp_path: Path) -> Iterator[Tmux]:
    term = Tmux(cli_env(home))
    try:
        yield term
    finally:
        term.kill()


def start_top(tmux: Tmux, tmp_path: Path) -> int:
    """Run top in the shell between two snapshots of the terminal's modes; return its pid."""
    top = shlex.join([sys.executable, "-m", "paneboard", "top", "--as", "alice"])
    pidfile = tmp_path / "top.pid"
    tmux.type(f"stty -g > {tmp_path}/before; echo before-$((6*7))")  # the output, not the echo
    tmux.wait(lambda t: "before-42" in t)
    after = f"echo top-exit=$?; stty -g > {tmp_path}/after"
    tmux.type(f"bash -c 'echo $$ > {pidfile}; exec {top}'; {after}")
    tmux.wait(lambda t: "open prompts" in t)
    return int(pidfile.read_text())


def assert_restored(tmux: Tmux, tmp_path: Path, modes: str) -> None:
    text = tmux.wait(lambda t: re.search(r"top-exit=\d", t) is not None)
    assert "top-exit=0" in text
    assert "before-42" in text  # the shell's own screen is back: top drew on the alternate one
    assert "open prompts" not in text
    tmux.wait(lambda t: (tmp_path / "after").exists() and (tmp_path / "after").stat().st_size > 0)
    assert (tmp_path / "before").read_text() == (tmp_path / "after").read_text()
    assert modes == tmux.modes()


def test_follows_posts_and_quits_on_q(tmux: Tmux, home: Path, tmp_path: Path) -> None:
    """Posts from another process show on the screen, the recipient's stage with its age
    (`read` once bob read it); `q` exits 0, the terminal as it was."""
    modes = tmux.modes()
    start_top(tmux, tmp_path)
    done = run_cli(home, "post", "--as", "alice", "--to", "bob", "rebuild the index")
    assert 0 == done.returncode, done.stderr
    text = tmux.wait(lambda t: "open prompts 1" in t and "rebuild the index" in t)
    assert done.stdout.strip()[:12] in text
    assert "1" == tmux.modes().split()[0]  # on the alternate screen while it runs
    assert 0 == run_cli(home, "read", "--as", "bob", done.stdout.strip()).returncode
    tmux.wait(lambda t: re.search(r"→ bob read \d+s", t) is not None)
    answer = run_cli(home, "answer", "--as", "bob", done.stdout.strip(), "index rebuilt")
    assert 0 == answer.returncode, answer.stderr
    tmux.wait(lambda t: "open prompts 0" in t and "index rebuilt" in t)
    tmux.run("send-keys", "-t", "0", "q")
    assert_restored(tmux, tmp_path, modes)


def test_sigterm_ends_it_cleanly(tmux: Tmux, tmp_path: Path) -> None:
    """SIGTERM: exit 0 and the terminal restored, as with `q`."""
    modes = tmux.modes()
    pid = start_top(tmux, tmp_path)
    os.kill(pid, signal.SIGTERM)
    assert_restored(tmux, tmp_path, modes)


def test_a_board_that_breaks_top_ends_it_with_one_line_and_exit_1(
    tmux: Tmux, home: Path, tmp_path: Path
) -> None:
    """top on a board it can no longer read (its log replaced by a FIFO while it runs) leaves the
    alternate screen, prints one line naming the problem, and exits 1."""
    said = _top_ends(tmux, home, _replace_by_fifo)
    assert f"paneboard: cannot read {home / 'test' / 'log'}: not a regular file" == said


def test_a_failure_no_reader_expects_ends_top_with_one_line_and_exit_1(
    tmux: Tmux, home: Path, tmp_path: Path
) -> None:
    """Any exception while top reads the board (a bug, injected by the fault suite's failpoint)
    leaves the alternate screen, prints one line (no traceback), and exits 1, not 0."""
    said = _top_ends(
        tmux,
        home,
        lambda log: run_cli(home, "post", "--as", "alice", "--to", "bob", "wake top"),
        "PANEBOARD_FAILPOINT=top-refresh ",
    )
    expected = "paneboard: internal error: RuntimeError: failpoint top-refresh: a failure no "
    assert said.startswith(expected), said


def _replace_by_fifo(log: Path) -> None:
    fifo = log.with_name("fifo")
    os.mkfifo(fifo, 0o600)
    fifo.rename(log)  # a rename into the folder wakes top's watch on it


def _top_ends(tmux: Tmux, home: Path, breaks: Callable[[Path], object], env: str = "") -> str:
    """Start top on a board of one prompt, break it with *breaks*, and return what top said
    once it ended with exit 1 (one message, however the terminal wrapped it); the terminal's
    modes are as before."""
    modes = tmux.modes()
    assert 0 == run_cli(home, "post", "--as", "alice", "--to", "bob", "hello").returncode
    top = shlex.join([sys.executable, "-m", "paneboard", "top", "--as", "alice"])
    tmux.type("clear")
    tmux.type(f"echo start-$((6*7)); {env}{top}; echo top-exit=$?")  # the outputs, not the echo
    tmux.wait(lambda t: "open prompts 1" in t)
    breaks(home / "test" / "log")
    text = tmux.wait(lambda t: re.search(r"top-exit=\d", t) is not None)
    shown = [line for line in text.splitlines() if line.strip()]
    assert "top-exit=1" in shown, text
    said = "".join(shown[shown.index("start-42") + 1 : shown.index("top-exit=1")])
    assert 1 == said.count("paneboard: "), text
    assert modes == tmux.modes()
    return said
