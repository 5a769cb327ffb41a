"""Hermes Agent woken end to end by its asleep listener, on the real CLI offline: the tests of
wake_agents.py, for Hermes Agent alone (a module per agent: `make test`'s workers take the
agents side by side)."""

from __future__ import annotations

import shutil

import pytest

from tests.real.wake_agents import (  # noqa: F401  (collected here, with this module's `woken`)
    test_a_listener_killed_once_it_recorded_the_wake_wakes_the_session_once_when_started_again,
    test_a_person_reopening_the_asleep_session_gets_the_pane_and_nothing_twice,
    test_a_prompt_the_policy_holds_wakes_nothing,
    test_a_prompt_wakes_the_ended_session_whose_agent_answers_it_and_a_later_one_again,
    test_prompts_posted_behind_a_wake_wake_the_session_again_once_its_turn_has_ended,
    test_the_wake_budget_spent_prompts_wait_and_status_says_why,
    test_three_prompts_posted_together_while_asleep_cause_one_wake_and_one_turn,
    woken_fixture,
)

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is missing")

woken = woken_fixture("hermes")
