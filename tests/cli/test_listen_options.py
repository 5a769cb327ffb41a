"""`listen`'s door options and the hooks' help come from the agents' records: every option a
record declares is in the parser with its note, a record added is all `listen` needs, nothing
in cli/ names an agent, and a door's option given with another door is refused in one line."""

from __future__ import annotations

import argparse
import ast
import inspect
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from paneboard.agents import AGENTS, Agent, DoorRequest, ListenOption, agent_doors
from paneboard.board.context import Context
from paneboard.cli import listening
from paneboard.cli import parser as cli_parser
from paneboard.cli.listening import door_values, make_door
from paneboard.cli.parser import LISTENER_DOORS, command_parser, options_first
from paneboard.listener.doors import Door, StdoutDoor
from paneboard.protocol.errors import BadInput
from paneboard.state.panes import presence
from testing.helpers import ROOT, Listening, SocketServer, run_cli

LISTENER_FLAGS = ("--parent-pid", "--transcript")  # the listener's own, whatever the door


def _actions(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {flag: action for action in parser._actions for flag in action.option_strings}


def test_listen_has_every_door_and_door_option_the_records_declare() -> None:
    """Each agent's door is a `--door` choice; each option it declares is an option of
    `listen`, spelled, shown and defaulted as declared, and its help says it for that door."""
    parser = command_parser("listen")
    actions = _actions(parser)
    assert (*LISTENER_DOORS, *agent_doors()) == tuple(actions["--door"].choices or ())
    declared = [(a.door, o) for a in AGENTS.values() if a.door for o in a.listen_options]
    assert {"--socket", "--thread", "--codex-bin", "--until-unloaded"} <= {
        o.flag for _, o in declared
    }
    for door, option in declared:
        action = actions[option.flag]
        assert f"{door}: {option.help}" in (action.help or ""), option.flag
        if option.flag in LISTENER_FLAGS:
            continue
        if option.metavar is None:  # on or off
            assert (0, False) == (action.nargs, action.default), option.flag
        else:
            assert (option.metavar, option.default) == (action.metavar, action.default)


def test_one_flag_many_doors_agree_on_its_shape() -> None:
    """Doors that take the same flag (`--socket`) declare it alike: one option serves them;
    none declares an option of the listener's other than those it may note."""
    parser = command_parser("listen")
    own = set(parser.get_default("door_flags"))
    generic = set(_actions(parser)) - own
    declared = {o.flag for a in AGENTS.values() for o in a.listen_options}
    assert declared & generic == set(LISTENER_FLAGS)
    shapes: dict[str, set[tuple[str | None, str | None]]] = {}
    for agent in AGENTS.values():
        for option in agent.listen_options:
            shapes.setdefault(option.flag, set()).add((option.metavar, option.default))
    assert dict.fromkeys(shapes, 1) == {flag: len(shape) for flag, shape in shapes.items()}


@dataclass(frozen=True)
class Crush(Agent):
    """An agent added as one record: its door takes `--crush-port`."""

    requests: list[DoorRequest] | None = None

    def open_door(self, request: DoorRequest) -> Door:
        assert self.requests is not None
        self.requests.append(request)
        return StdoutDoor()


def test_a_new_agent_record_is_all_listen_needs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A record added to `AGENTS` brings its door and its option into `listen`, with its help;
    the door is opened with the value given; with another door, the option is refused."""
    requests: list[DoorRequest] = []
    port = ListenOption("--crush-port", "the port of its inbox", "PORT", "7070")
    crush = Crush(
        kind="crush",
        title="Crush",
        modes=("listen",),
        default_mode="listen",
        hooks_file=None,
        events={},
        door="crush-inbox",
        listen_options=(port,),
        requests=requests,
    )
    monkeypatch.setitem(AGENTS, "crush", crush)
    parser = command_parser("listen")
    assert "crush-inbox: the port of its inbox" in parser.format_help()
    ctx = Context(tmp_path, "test", "bob")

    def door(*words: str) -> Door:
        args = parser.parse_args(options_first(parser, list(words)))
        return make_door(
            ctx, args.door, options=door_values(args), maildir=None, timeout=3.0, command=()
        )

    assert "stdout" == door("--door", "crush-inbox", "--crush-port", "9").name
    assert "stdout" == door("--door", "crush-inbox").name
    assert ["9", "7070"] == [r.value("--crush-port") for r in requests]
    with pytest.raises(
        BadInput, match=r"^--crush-port goes with --door crush-inbox, not --door stdout$"
    ):
        door("--door", "stdout", "--crush-port", "9")


def test_hook_help_names_every_agent_from_its_record() -> None:
    """`hook`'s kinds, `--agent` choices, `--mode` and `--trust` help come from the records."""
    actions = _actions(command_parser("hook"))
    assert tuple(AGENTS) == tuple(actions["--agent"].choices or ())
    modes = actions["--mode"].help or ""
    assert all(re.search(rf"\b{kind}\b", modes) for kind in AGENTS), modes
    for agent in AGENTS.values():
        if agent.trusts:
            assert f"install {agent.kind}: {agent.trust_help}" in (actions["--trust"].help or "")
        if agent.mcp is not None:
            assert agent.mcp.file in (actions["--mcp"].help or "")


def _strings(source: str) -> list[str]:
    """The string constants a module's code uses (its docstrings are not code)."""
    tree = ast.parse(source)
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def test_nothing_in_cli_names_an_agent() -> None:
    """No string of cli/'s code spells an agent's kind, title or door; no door's own option is
    spelled in `listen`'s code."""
    names = set()
    for agent in AGENTS.values():
        names |= {agent.kind, agent.title, *([agent.door] if agent.door else [])}
    flags = {o.flag for a in AGENTS.values() for o in a.listen_options} - set(LISTENER_FLAGS)
    listen_code = [
        inspect.getsource(cli_parser._listen_options),
        inspect.getsource(listening),
    ]
    for path in sorted((ROOT / "cli").glob("*.py")):
        strings = _strings(path.read_text())
        found = [
            n for n in names for s in strings if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", s)
        ]
        assert [] == found, path.name
    for code in listen_code:
        assert [] == [f for f in flags if f in code]


@pytest.mark.parametrize(
    ("door", "option", "takers"),
    [
        (("--door", "stdout"), ("--socket", "/x.sock"), None),
        (("--door", "claude-inbox", "--socket", "/x.sock"), ("--thread", "t"), ["codex-queue"]),
        (("--door", "maildir", "--maildir", "m"), ("--codex-bin", "/bin/codex"), ["codex-queue"]),
    ],
)
def test_a_door_option_with_another_door_is_refused_in_one_line(
    home: Path, door: tuple[str, ...], option: tuple[str, str], takers: list[str] | None
) -> None:
    """The option names the doors that take it and the door given; no listener runs, and
    nothing is written."""
    takers = takers or [
        a.door
        for a in AGENTS.values()
        if a.door and any(o.flag == option[0] for o in a.listen_options)
    ]
    done = run_cli(home, "listen", "--as", "bob", *door, *option)
    message = (
        f"paneboard: {option[0]} goes with --door {' or '.join(takers)}, not --door {door[1]}\n"
    )
    assert (1, message, "") == (done.returncode, done.stderr, done.stdout)
    assert [] == list(home.rglob("*"))


def test_the_listener_keeps_its_agent_process_and_transcript_in_its_presence(
    home: Path, tmp_path: Path
) -> None:
    """What a session start reads to tell its own listener, in the record, not in argv."""
    server = SocketServer(tmp_path / "inbox.sock")
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("")
    door = ("--door", "claude-inbox", "--socket", str(server.path))
    where = home / "test" / "panes" / "bob.presence"
    try:
        with Listening(
            home, "bob", *door, "--parent-pid", str(os.getpid()), "--transcript", str(transcript)
        ) as bob:
            record = presence.read(where)
            bob.stop()
        with Listening(home, "bob", *door) as bare:
            plain = presence.read(where)
            bare.stop()
    finally:
        server.close()
    assert record is not None and plain is not None
    assert (bob.proc.pid, os.getpid(), str(transcript)) == (
        record.pid,
        record.parent,
        record.transcript,
    )
    assert (bare.proc.pid, None, None) == (plain.pid, plain.parent, plain.transcript)
