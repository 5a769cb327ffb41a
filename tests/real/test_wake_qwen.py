"""Qwen Code woken end to end by its asleep listener, on the real CLI offline: the tests of
wake_agents.py, for Qwen Code alone (a module per agent: `make test`'s workers take the agents side
by side)."""

from __future__ import annotations

from tests.real.wake_agents import *  # the tests, collected here with this `woken`

woken = woken_fixture("qwen")
