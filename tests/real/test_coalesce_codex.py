"""One turn for many prompts on a live Codex TUI (0.169.0, offline): a burst of 60 through
`codex queue` in at most 3 queued turns, each prompt `seen` once in the rollout; a burst of 30
to a notice recipient in one turn, with none of their bodies in the rollout; a large body's
notice keeps the model's input small, whether the sender or the recipient asked for it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from paneboard.agents.codex import CODEX
from paneboard.board.context import Context, header
from paneboard.listener.seen import prompt_ids
from paneboard.protocol.posts import Prompt
from paneboard.state.filelog.log import read_posts
from paneboard.state.fold import fold
from paneboard.state.trust.policy import Policy, write_policy
from testing.clients import codex_env, free_port
from testing.codex_session import CodexHome, CodexTui, StandIn
from testing.helpers import Listening, post, run_cli, wait_until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is missing")
AGENT = "codex-bob"
MARKER = "CODEX-BODY-MARKER"


@pytest.fixture
def codex(tmp_path: Path, clients_bin: Path, home: Path) -> Iterator[tuple[Path, Listening]]:
    """A Codex TUI on a fresh thread, its first turn done, and codex-bob's listener on it:
    yields (the rollout, the listener)."""
    with contextlib.ExitStack() as stack:
        stand_in = StandIn(tmp_path / "responses.log", free_port())
        stack.callback(stand_in.close)
        codex_home = CodexHome(tmp_path / "codex-home", clients_bin, stand_in.port)
        stack.callback(codex_home.close)
        project = tmp_path / "codex-project"
        project.mkdir()
        codex_home.trust_project(project)
        tui = CodexTui(codex_home, project, {**os.environ, "TERM": "xterm-256color"})
        stack.callback(tui.close)
        tui.submit(stand_in, "ready")
        [thread] = wait_until(codex_home.threads, "the thread's rollout", 60, tui.screen)
        rollout = codex_home.rollout(thread)
        wait_until(lambda: '"task_complete"' in rollout.read_text(), "the first turn", 60)
        env = codex_env(home, codex_home.folder, clients_bin)
        args = ("--door", "codex-queue", "--thread", thread, "--door-timeout", "60")
        bob = stack.enter_context(Listening(home, AGENT, *args, env=env))
        yield rollout, bob


def _burst(home: Path, count: int, body: str) -> list[str]:
    with Context.resolve(str(home), "test", "alice") as ctx:
        ctx.paths.ensure()
        prompts = [
            Prompt(**header("test", "alice"), to=(AGENT,), body=f"{body} {n} of {count}")
            for n in range(count)
        ]
        ctx.store().append(prompts)
    return [p.id for p in prompts]


def _all_seen(home: Path, ids: list[str]) -> bool:
    state = fold(read_posts(home / "test" / "log"))
    return all(state.prompts[pid].recipients[AGENT].seen_at is not None for pid in ids)


def _turns(rollout: Path, ids: list[str]) -> tuple[int, dict[str, int]]:
    """The rollout's user messages carrying any of *ids*, and how many carry each."""
    each = dict.fromkeys(ids, 0)
    turns = 0
    for line in rollout.read_text().splitlines():
        found = [p for p in prompt_ids([json.loads(line)], CODEX.user_texts) if p in each]
        turns += bool(found)
        for pid in found:
            each[pid] += 1
    return turns, each


def test_a_burst_of_60_is_at_most_three_queued_turns_each_prompt_seen_once(
    home: Path, codex: tuple[Path, Listening]
) -> None:
    """60 prompts at once, the default policy: at most 3 texts through `codex queue`, each
    prompt in the model's input exactly once, each `seen`."""
    rollout, _ = codex
    ids = _burst(home, 60, "burst")
    wait_until(lambda: _all_seen(home, ids), "all 60 seen", 120, every=0.25)
    turns, each = _turns(rollout, ids)
    assert (True, dict.fromkeys(ids, 1)) == (turns <= 3, each)


def test_a_burst_of_30_to_a_notice_recipient_is_one_turn_with_no_body(
    home: Path, codex: tuple[Path, Listening]
) -> None:
    """`--deliver notice`: 30 prompts, one queued turn, each `seen`; no body in the rollout."""
    rollout, _ = codex
    (home / "test" / "panes").mkdir(parents=True, exist_ok=True)
    write_policy(home / "test", AGENT, Policy(deliver="notice"))
    ids = _burst(home, 30, MARKER)
    wait_until(lambda: _all_seen(home, ids), "all 30 seen", 120, every=0.25)
    assert 1 == _turns(rollout, ids)[0]
    assert MARKER not in rollout.read_text()


def _texts_with(rollout: Path, pid: str) -> list[str]:
    """The rollout's user message texts carrying prompt *pid*: what the model was given."""
    out = []
    for line in rollout.read_text().splitlines():
        record = json.loads(line)
        if pid in prompt_ids([record], CODEX.user_texts):
            out.append("".join(CODEX.user_texts(record)))
    return out


def test_a_notice_keeps_the_models_input_small_whoever_asked_for_it(
    home: Path, codex: tuple[Path, Listening]
) -> None:
    """A 50 KB body under a `body` policy reaches the model whole; the same body posted with
    `--notice` reaches it as paneboard's notice of under 2 KB, none of its bytes; then, under a
    `notice` policy, a plain post is a notice too (no sender makes the body reach it)."""
    rollout, _ = codex
    large = f"{MARKER} " + "x" * 50_000
    whole = post(home, "--to", AGENT, "-", input=large.encode())
    wait_until(lambda: _all_seen(home, [whole]), "the body seen", 120, every=0.25)
    [given] = _texts_with(rollout, whole)
    assert (True, True) == (len(given.encode()) > 50_000, MARKER in given)
    asked = post(home, "--to", AGENT, "--notice", "-", input=large.encode())
    wait_until(lambda: _all_seen(home, [asked]), "the sender's notice seen", 120, every=0.25)
    [notice] = _texts_with(rollout, asked)
    assert (True, False) == (len(notice.encode()) < 2_000, MARKER in notice), len(notice)
    assert "a notice: its body is not shown here" in notice
    done = run_cli(home, "read", "--as", AGENT, asked)  # the notice read: the next may go out
    assert (0, True) == (done.returncode, large in done.stdout.replace("> ", ""))
    write_policy(home / "test", AGENT, Policy(deliver="notice"))
    plain = post(home, "--to", AGENT, f"{MARKER} plain")
    wait_until(lambda: _all_seen(home, [plain]), "the recipient's notice seen", 120, every=0.25)
    [chosen] = _texts_with(rollout, plain)
    assert ("a notice: its body is not shown here" in chosen, MARKER in chosen) == (True, False)
