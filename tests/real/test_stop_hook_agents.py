"""Gemini CLI and Copilot CLI, live and offline: the Stop-hook door (`hook install`, mode stop)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.helpers import wait_until
from testing.sessions import AgentSession, CopilotSession, GeminiSession, post, status

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is missing: no live agent session"
)

SESSIONS = {"gemini": GeminiSession, "copilot": CopilotSession}


@pytest.fixture(scope="module", params=["gemini", "copilot"])
def agent(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, clients_bin: Path
) -> Iterator[AgentSession]:
    """One live session per CLI, shared by this module's tests, with paneboard's hooks installed."""
    session = SESSIONS[request.param](
        tmp_path_factory.mktemp(request.param), clients_bin, f"{request.param}-bob"
    )
    try:
        yield session
    finally:
        session.close()


def _stop_hook_ran_after(session: AgentSession, ts: float) -> bool:
    """The Stop hook stamps each check it makes (`--cooldown`'s clock)."""
    stamp = session.pb_home / "test" / "panes" / f"{session.name}.stopcheck"
    return stamp.exists() and stamp.stat().st_mtime > ts


def test_a_posted_prompt_reaches_the_model_at_the_next_turn_end_once(agent: AgentSession) -> None:
    """Posted from another process; handed over as the person's turn ends; not after the next."""
    assert "(mode stop)" in agent.installed
    pid = post(agent.pb_home, agent.name, "check the flaky test")
    agent.type("first turn")
    turn_end = agent.turn("first turn")
    handed = agent.turn(pid)
    assert handed >= turn_end
    assert ("stop-hook", "accepted") == tuple(
        status(agent.pb_home, pid, agent.name)[k] for k in ("door", "outcome")
    )
    assert agent.contexts(f"paneboard: you are `{agent.name}` on board `test`") >= 1
    agent.type("second turn")
    second = agent.turn("second turn")
    wait_until(
        lambda: _stop_hook_ran_after(agent, second),
        "no Stop hook after the second turn",
        30,
        agent.screen,
    )
    assert [handed] == agent.stand_in.turns_with(pid)
    # The Stops after the reason's turn found it in the agent's own conversation file.
    got = status(agent.pb_home, pid, agent.name)
    assert ("seen", f"{agent.agent}-transcript") == (got["stage"], got["source"])


def test_two_open_prompts_go_one_per_turn_end_urgent_first(agent: AgentSession) -> None:
    """Each turn end hands over one prompt; the urgent one, posted later, goes first."""
    normal = post(agent.pb_home, agent.name, "the normal one")
    urgent = post(agent.pb_home, agent.name, "--priority", "urgent", "the urgent one")
    agent.type("third turn")
    first, second = agent.turn(urgent), agent.turn(normal)
    assert first < second
    users = [r["user"] for r in agent.stand_in.requests()]
    assert [] == [u for u in users if urgent in u and normal in u]
    assert ["stop-hook", "stop-hook"] == [
        status(agent.pb_home, p, agent.name)["door"] for p in (urgent, normal)
    ]
