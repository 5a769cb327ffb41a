"""`approve` and `refuse` name what they decide on, and read the board before they ask: a prompt
that is not held (or not open) for the agent, or whose recipient the agent is not, is refused in
one line and nothing is asked; the question shows the sender, what was checked of the sender's
key, who held it and why, and the first lines of the body, escaped. `approve --from SENDER`
lets every prompt held from one sender through with one question.

Each command runs on a real pseudo-terminal that a process with no controlling terminal opens
(Python's `pty`), as an agent's tool can.
"""

from __future__ import annotations

import json
from pathlib import Path

from paneboard.board.confirm import NOTE
from paneboard.state.trust.policy import Policy, write_policy
from testing.helpers import PANEBOARD, cli_env, post, run_cli, run_hook
from tests.cli.agentpty import Shown, on_pty

BODY = "line 1\nline 2 \x1b[2J\nline 3\nline 4\nline 5\nline 6\nline 7"


def _pty(home: Path, *args: str, answer: str = "y") -> Shown:
    return on_pty([*PANEBOARD, *args], cli_env(home), answer)


def _hold_for_bob(home: Path) -> None:
    """bob's policy holds what is not from carol; bob's Stop hook reads the board and holds."""
    (home / "test" / "panes").mkdir(parents=True, exist_ok=True)
    write_policy(home / "test", "bob", Policy(allow=("carol",), others="hold"))
    event = {"session_id": "s1", "hook_event_name": "Stop"}
    done = run_hook(home, "stop", "claude", event, "--as", "bob", "--cooldown", "0")
    assert 0 == done.returncode, done.stderr


def _kinds(home: Path) -> list[str]:
    done = run_cli(home, "log", "--json")
    assert 0 == done.returncode, done.stderr
    return [json.loads(line)["kind"] for line in done.stdout.splitlines()]


def _stage(home: Path, pid: str, agent: str = "bob") -> str:
    done = run_cli(home, "status", pid, "--json")
    assert 0 == done.returncode, done.stderr
    return str(json.loads(done.stdout)["recipients"][agent]["stage"])


def test_approve_of_a_prompt_that_is_not_held_is_refused_before_asking(home: Path) -> None:
    """A prompt only posted: one line, exit 1, no question on the terminal, nothing written."""
    pid = post(home, "--to", "bob", "hello")
    shown = _pty(home, "approve", pid[:6], "--as", "bob")
    assert (1, 0) == (shown.returncode, shown.asked), shown.text
    assert f"paneboard: prompt {pid} is posted for `bob`, not held\n" == shown.text
    assert ["prompt"] == _kinds(home)


def test_approve_by_an_agent_that_is_not_a_recipient_is_refused_before_asking(
    home: Path,
) -> None:
    pid = post(home, "--to", "bob", "hello")
    _hold_for_bob(home)
    shown = _pty(home, "approve", pid, "--as", "carol")
    assert (1, 0) == (shown.returncode, shown.asked), shown.text
    said = f"paneboard: agent `carol` is not a recipient of prompt {pid} (sent to bob)\n"
    assert said == shown.text
    assert ["prompt", "held"] == _kinds(home)


def test_refuse_of_a_closed_prompt_is_refused_before_asking(home: Path) -> None:
    pid = post(home, "--to", "bob", "hello")
    assert 0 == run_cli(home, "ack", pid, "--as", "bob").returncode
    shown = _pty(home, "refuse", pid, "--as", "bob")
    assert (1, 0) == (shown.returncode, shown.asked), shown.text
    assert f"paneboard: prompt {pid} is already acked for `bob`\n" == shown.text


def test_the_question_shows_sender_key_reason_and_the_first_lines_escaped(home: Path) -> None:
    """The sender, the checked key, who held it and why, five lines of the body with the escape
    sequence shown as text, how many more lines; then the question with the whole id."""
    pid = post(home, "--to", "bob", BODY)
    _hold_for_bob(home)
    shown = _pty(home, "approve", pid[:8], "--as", "bob", answer="n")
    keys = run_cli(home, "keys", "--json").stdout.splitlines()
    alice = next(json.loads(k)["fingerprint"] for k in keys if '"alice"' in k)
    assert [
        f"  from:  alice (key checked: {alice[:12]}…), held",
        "  held:  by policy: not allowed",
        "  > line 1",
        "  > line 2 \\x1b[2J",
        "  > line 3",
        "  > line 4",
        "  > line 5",
        "  > … 2 more lines",
        NOTE,
        f"approve prompt {pid} for `bob` on board `test`? [y/N] n",
        f"paneboard: approve prompt {pid} for `bob` on board `test`: not confirmed; nothing "
        + "written",
    ] == shown.text.splitlines()
    assert (1, "held") == (shown.returncode, _stage(home, pid))


def test_refuse_asks_about_what_it_refuses_and_then_writes_it(home: Path) -> None:
    pid = post(home, "--to", "bob", "rm -rf build")
    shown = _pty(home, "refuse", pid, "--as", "bob", "--reason", "not today")
    assert (0, 1) == (shown.returncode, shown.asked), shown.text
    assert "  from:  alice (key checked: " in shown.text
    assert "  > rm -rf build\n" in shown.text
    assert "refused" == _stage(home, pid)


def test_approve_from_lets_every_prompt_held_from_one_sender_through_with_one_question(
    home: Path,
) -> None:
    """Three held from alice, one from dave: one question naming alice, the count and the
    reasons; a yes approves alice's three, in one go; dave's stays held."""
    ids = [post(home, "--to", "bob", f"job {n}") for n in range(3)]
    other = post(home, "--to", "bob", "dave's", sender="dave")
    _hold_for_bob(home)
    shown = _pty(home, "approve", "--from", "alice", "--as", "bob")
    assert (0, 1) == (shown.returncode, shown.asked), shown.text
    assert [
        "  from:  alice, 3 prompts held",
        "  held:  by policy: not allowed (3)",
        NOTE,
        "approve all 3 prompts from `alice` held for `bob` on board `test`? [y/N] y",
    ] == shown.text.splitlines()
    assert ["approved"] * 3 + ["held"] == [_stage(home, pid) for pid in [*ids, other]]


def test_approve_from_a_sender_with_nothing_held_is_refused_before_asking(home: Path) -> None:
    post(home, "--to", "bob", "hello")
    shown = _pty(home, "approve", "--from", "alice", "--as", "bob")
    assert (1, 0) == (shown.returncode, shown.asked), shown.text
    assert "paneboard: no prompt from `alice` is held for `bob` on board `test`\n" == shown.text


def test_approve_takes_an_id_or_from_not_both_nor_neither(home: Path) -> None:
    for args in (("approve",), ("approve", "0123abcd", "--from", "alice")):
        done = run_cli(home, *args, "--as", "bob")
        assert (2, "", 1) == (done.returncode, done.stdout, len(done.stderr.splitlines()))
    bad = run_cli(home, "approve", "--from", "../x", "--as", "bob")
    assert 1 == bad.returncode and 1 == len(bad.stderr.splitlines()), bad.stderr
