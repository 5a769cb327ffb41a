"""What every agent reached through paneboard's script in it does alike (OpenCode's and Kilo
Code's plugin, pi's extension, Hermes Agent's plugin): a door whose registry names an ended
process is refused, and the door needs the script's socket."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agents.scriptdoors import an_ended_process_is_refused, door_needs_a_socket

# The door, the agent's name, and its script's
SCRIPT_DOORS = [
    ("opencode", "OpenCode", "OpenCode plugin"),
    ("kilo", "Kilo Code", "Kilo Code plugin"),
    ("pi-extension", "pi", "pi extension"),
    ("hermes-plugin", "Hermes Agent", "Hermes Agent plugin"),
]


@pytest.mark.parametrize(("door", "title", "script"), SCRIPT_DOORS)
def test_a_registry_naming_an_ended_process_is_refused(
    home: Path, tmp_path: Path, door: str, title: str, script: str
) -> None:
    """A socket left behind by a killed agent: no attempt, at once `undelivered`."""
    an_ended_process_is_refused(home, tmp_path, door, title)


@pytest.mark.parametrize(("door", "title", "script"), SCRIPT_DOORS)
def test_the_door_needs_a_socket(home: Path, door: str, title: str, script: str) -> None:
    door_needs_a_socket(home, door, script)
