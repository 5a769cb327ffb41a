"""`paneboard top` in a real terminal (tmux): `O` lets every prompt held for top's agent from the
selected prompt's sender through with one question, naming the sender, the count and the
reasons, as `paneboard approve --from SENDER` does; prompts from others stay held."""

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


def _stages(home: Path, ids: list[str]) -> list[str]:
    stages = []
    for pid in ids:
        done = run_cli(home, "status", pid, "--json")
        assert 0 == done.returncode, done.stderr
        stages.append(json.loads(done.stdout)["recipients"]["bob"]["stage"])
    return stages


def test_O_approves_every_prompt_held_from_the_selected_senders_after_one_yes(
    term: Tmux, home: Path
) -> None:
    ids = [post(home, "--to", "bob", f"job {n}") for n in range(2)]
    other = post(home, "--to", "bob", "dave's", sender="dave")
    for pid in [*ids, other]:
        _hold(home, pid)
    top = shlex.join([sys.executable, "-m", "paneboard", "top", "--as", "bob"])
    term.type(f"{top}; echo top-exit=$?")
    term.wait(lambda t: "open prompts 3" in t)
    term.run("send-keys", "-t", "0", "O")  # the first row, alice's oldest, is selected
    question = "approve all 2 prompts from `alice` held for `bob` on board `test`?"
    shown = term.wait(lambda t: question in t and "y: yes   n: no" in t)
    assert f"held:  by policy: {WHY} (2)" in shown
    assert "(asked on this terminal: whoever types here answers" in shown
    term.run("send-keys", "-t", "0", "y")
    term.wait(lambda t: "approved 2 prompts" in t)
    assert ["approved", "approved", "held"] == _stages(home, [*ids, other])
    term.run("send-keys", "-t", "0", "q")
    term.wait(lambda t: "top-exit=0" in t)
