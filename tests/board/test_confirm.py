"""The one confirmation every decision uses (board/confirm.py), on real pseudo-terminals: it says
what it checks (a terminal, not who types on it), reads the answer from the terminal and never
from stdin, and without a terminal refuses in one line; `approve`, `refuse`, `trust`, a change of
`policy` and `hook install qwen --trust` all ask and refuse the same way."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from paneboard.board.confirm import NOTE
from testing.helpers import PANEBOARD, cli_env, post
from tests.cli.agentpty import on_pty, through_script

ASK = """
import sys
from paneboard.board.confirm import NotConfirmed, confirm
try:
    confirm("ship it?", ["  from:  alice \\x1b]0;pwned\\x07", "  > line"])
except NotConfirmed as exc:
    sys.exit(f"refused: {exc}")
"""


def test_a_yes_on_a_pseudo_terminal_confirms_and_the_question_says_what_it_checks() -> None:
    """A program that opens a pseudo-terminal can answer: the text says so, above the question;
    the lines shown are one line each, escapes made visible."""
    shown = on_pty([sys.executable, "-c", ASK], {"PATH": "/usr/bin:/bin"})
    assert 0 == shown.returncode, shown.text
    assert [
        "  from:  alice \\x1b]0;pwned\\x07",
        "  > line",
        NOTE,
        "ship it? [y/N] y",
    ] == shown.text.splitlines()
    assert "pseudo-terminal" in NOTE


def test_through_script_the_same_yes_counts() -> None:
    """`script -qec` gives the command a terminal from a pipe: what the confirmation can and
    cannot tell apart, shown."""
    shown = through_script([sys.executable, "-c", ASK], {"PATH": "/usr/bin:/bin"})
    assert (0, 1) == (shown.returncode, shown.asked), shown.text


@pytest.mark.parametrize("answer", ["n", "", "yess", "y" * 300])
def test_anything_but_yes_is_refused_in_one_line(answer: str) -> None:
    shown = on_pty([sys.executable, "-c", ASK], {"PATH": "/usr/bin:/bin"}, answer)
    assert 1 == shown.returncode
    assert "refused: ship it: not confirmed; nothing written" == shown.text.splitlines()[-1]


def test_stdin_is_never_read_and_no_terminal_is_refused() -> None:
    """A yes on stdin, no controlling terminal: refused, naming the terminal it looked for."""
    done = subprocess.run(
        [sys.executable, "-c", ASK],
        input=b"y\n",
        capture_output=True,
        start_new_session=True,
        timeout=30,
        check=False,
    )
    said = (
        "ship it: it is asked on the controlling terminal (/dev/tty), and this process has "
        "none; nothing written"
    )
    assert (1, b"", f"refused: {said}\n".encode()) == (done.returncode, done.stdout, done.stderr)


def _fake_qwen(folder: Path) -> Path:
    """A `qwen` on PATH for `hook install qwen --trust` to find; asked no, it never runs it."""
    folder.mkdir()
    qwen = folder / "qwen"
    qwen.write_text('#!/bin/sh\ntouch "$0.ran"\nexit 1\n')
    qwen.chmod(0o755)
    return qwen


def test_every_decision_asks_the_same_question_and_refuses_a_no_the_same_way(
    home: Path, tmp_path: Path
) -> None:
    """approve, refuse, trust, policy and hook install qwen --trust: the same note above the
    question, the same `[y/N]`, the same one line for a no, and nothing written."""
    pid = post(home, "--to", "bob", "hello")
    qwen = _fake_qwen(tmp_path / "bin")
    project = tmp_path / "proj"
    project.mkdir()
    env = cli_env(home, PATH=f"{qwen.parent}:/usr/bin:/bin", HOME=str(tmp_path))
    fingerprint = "a" * 26
    decisions = {
        f"refuse prompt {pid} for `bob` on board `test`": ("refuse", pid, "--as", "bob"),
        f"pin key {fingerprint} for `carol` on board `test`": ("trust", "carol", fingerprint),
        "change the policy of `bob` on board `test`": ("policy", "--as", "bob", "--rate", "0"),
        "let paneboard's listeners deliver prompts to your Qwen Code sessions "
        f"({tmp_path / '.qwen'}) without your review in /peers (hook install qwen --trust)": (
            "hook",
            "install",
            "qwen",
            "--trust",
            "--project",
            str(project),
        ),
    }
    for subject, args in decisions.items():
        shown = on_pty([*PANEBOARD, *args], env, "n")
        assert 1 == shown.returncode, shown.text
        lines = shown.text.splitlines()
        assert [NOTE, f"{subject}? [y/N] n"] == lines[-3:-1], shown.text
        assert f"paneboard: {subject}: not confirmed; nothing written" == lines[-1]
    assert not (qwen.parent / "qwen.ran").exists()
    assert not (home / "test" / "panes" / "bob.policy").exists()
    assert [] == list(project.rglob("*.json"))
