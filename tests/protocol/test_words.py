"""The vocabulary is one: the plain tuples the parser uses and the types the checker reads agree."""

from __future__ import annotations

from typing import get_args

from paneboard.cli.parser import COMMANDS, LISTENER_DOORS, command_parser
from paneboard.protocol import posts, words
from paneboard.state import fold


def test_priorities_are_the_types_priorities() -> None:
    """`Priority` and `PRIORITIES` name the same words; the rank orders all of them."""
    assert words.PRIORITIES == get_args(posts.Priority)
    assert set(words.PRIORITIES) == set(words.PRIORITY_RANK)


def test_kinds_are_the_posts_tags() -> None:
    """`KINDS` and the `Kind` type list every post type's tag, in the union's order."""
    tags = tuple(t.__struct_config__.tag for t in get_args(posts.Post))
    assert words.KINDS == tags == get_args(posts.Kind)


def test_stages_and_outcomes_are_the_types() -> None:
    """`OUTCOMES` is the `Outcome` literal; open, closed and handed stages are `Stage`s."""
    stages = set(get_args(fold.Stage))
    assert words.OUTCOMES == get_args(posts.Outcome)
    assert set(words.OPEN_STAGES) < stages
    assert set(words.CLOSED_STAGES) < stages
    assert set(words.HANDED_STAGES) < stages


def test_every_door_is_a_door_class() -> None:
    """The door names `listen --door` takes are the names the door classes give themselves:
    the generic doors' and each agent's own, which its record names."""
    from paneboard.agents import (
        AGENTS,
        claude,
        codex,
        hermes,
        kilo,
        opencode,
        pi,
        qoder,
        qwen_inbox,
    )
    from paneboard.listener import doors

    classes = [getattr(doors, name) for name in doors.__all__ if name.endswith("Door")]
    own_classes = (
        claude.ClaudeInboxDoor,
        codex.CodexQueueDoor,
        opencode.OpenCodeDoor,
        qwen_inbox.QwenInboxDoor,
        pi.PiExtensionDoor,
        hermes.HermesPluginDoor,
        kilo.KiloDoor,
        qoder.QoderInboxDoor,
    )
    own = {cls.name for cls in own_classes}
    assert set(LISTENER_DOORS) == {cls.name for cls in classes if cls is not doors.Door}
    assert own == {agent.door for agent in AGENTS.values() if agent.door}


def test_every_command_has_a_parser_and_a_runner() -> None:
    """Each command in the one list builds its parser and names a function that exists."""
    import importlib

    for name, (_, _, run) in COMMANDS.items():
        module, function = run.split(":")
        where = module if "." in module else f"paneboard.cli.{module}"  # top: above cli
        assert callable(getattr(importlib.import_module(where), function))
        assert run == command_parser(name).get_default("run")


def test_verdicts_and_ended_stages_are_the_types() -> None:
    """`VERDICTS` is the fold's `Verdict`; the stages that end a prompt are `Stage`s."""
    assert words.VERDICTS == get_args(fold.Verdict)
    assert set(words.ENDED_STAGES) < set(get_args(fold.Stage))
