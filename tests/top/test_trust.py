"""`paneboard top` in a real terminal (term) shows a held prompt, who holds it and why, and lets
the person approve or refuse it after a yes in the app."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from testing.helpers import post, run_cli
from tests.mcpserver.test_trust import WHY, _hold
from tests.top.test_terminal import Tmux
from tests.top.test_terminal import pytestmark as needs_tmux

pytestmark = needs_tmux


def _kinds(home: Path) -> list[str]:
    done = run_cli(home, "log", "--json")
    assert 0 == done.returncode, done.stderr
    return [json.loads(line)["kind"] for line in done.stdout.splitlines()]


def _top_as_bob(term: Tmux) -> None:
    top = shlex.join([sys.executable, "-m", "paneboard", "top", "--as", "bob"])
    term.type(f"{top}; echo top-exit=$?")
    term.wait(lambda t: "open prompts 1" in t)


def _keys(term: Tmux, *keys: str) -> None:
    for key in keys:
        term.run("send-keys", "-t", "0", key)


def test_top_shows_a_held_prompt_and_approves_it_after_a_yes(term: Tmux, home: Path) -> None:
    """The row says held by the policy and why; `o` asks, `n` writes nothing, `o` `y` writes
    `approved` and the row says so."""
    pid = post(home, "--to", "bob", "deploy")
    _hold(home, pid)
    _top_as_bob(term)
    term.wait(lambda t: f"held by policy ({WHY})" in t)
    _keys(term, "o")
    term.wait(lambda t: f"approve prompt {pid} for `bob` on board `test`?" in t)
    _keys(term, "n")
    term.wait(lambda t: "approve prompt" not in t)
    assert ["prompt", "held"] == _kinds(home)
    _keys(term, "o")
    term.wait(lambda t: "y: yes   n: no" in t)
    _keys(term, "y")
    term.wait(lambda t: "alice → bob approved " in t)
    assert ["prompt", "held", "approved"] == _kinds(home)
    _keys(term, "q")
    term.wait(lambda t: "top-exit=0" in t)


def test_top_refuses_a_prompt_after_a_yes(term: Tmux, home: Path) -> None:
    """`r` `y`: a `refused` post; the sender's `wait` exits 1 naming top's reason."""
    pid = post(home, "--to", "bob", "rm -rf build")
    _hold(home, pid)
    _top_as_bob(term)
    _keys(term, "r")
    term.wait(lambda t: f"refuse prompt {pid} for `bob` on board `test`?" in t)
    _keys(term, "y")
    term.wait(lambda t: "open prompts 0" in t)
    waited = run_cli(home, "wait", pid, "--as", "alice", "--timeout", "10")
    why = "refused in paneboard top (by bob)"
    assert (1, f"paneboard: prompt {pid} was refused: {why}\n") == (
        waited.returncode,
        waited.stderr,
    )
