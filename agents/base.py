"""The record that describes one agent kind, and the requests and reports it deals in.

An `Agent` is frozen data (kind, title, modes, hook file and events, idle reply, `seen`
source, door, MCP file) plus the few methods whose body differs per agent: install and
uninstall, the listener a session start runs, the door, the `seen` follower, the doctor
checks. Each agent's module makes one instance; `paneboard.agents.AGENTS` lists them by kind.

Nothing here parses a command line or prints: install returns the `Change`s it made, doctor
the `Check`s it ran (state/health.py's, the one shape of a `doctor` line), and the front end
shows them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paneboard.listener.doors.base import Door
from paneboard.listener.seen import Sighting
from paneboard.protocol.errors import BadInput
from paneboard.state.health import Check

if TYPE_CHECKING:
    from paneboard.agents.mcpconfig import McpConfig

Options = tuple[tuple[str, str], ...]  # (flag, value): where-and-who options hooks are given


@dataclass(frozen=True)
class Change:
    """One line of what `hook install|uninstall` did, found done, or wants the person to know."""

    text: str
    path: Path | None = None
    changed: bool = False

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Setup:
    """What `hook install|uninstall` was asked: the project, the mode, the options to write.

    *env* is the environment of the command (an agent's own config lives under it:
    `$CODEX_HOME`); *exe* the paneboard command the hooks run.
    """

    project: Path
    exe: str
    mode: str
    options: Options = ()
    mcp: bool = False
    trust: bool = False
    env: Mapping[str, str] = field(default_factory=dict)

    def words(self) -> list[str]:
        return [word for pair in self.options for word in pair]


@dataclass(frozen=True)
class DoctorRequest:
    """What `doctor` checks: the project it runs in, its environment and `--socket`, and the
    paneboard home it was given, resolved as every command resolves it (`--home`, else
    `$PANEBOARD_HOME`, else the default). A check of something kept in the home reads this
    one, never the environment's."""

    project: Path
    env: Mapping[str, str]
    socket: str | None
    home: Path


@dataclass(frozen=True)
class ListenOption:
    """One option `listen` takes for an agent's door, spelled as its hooks write it.

    *help* says what it is for this door; the parser joins the help of every door that takes
    the same *flag*. *metavar* None makes it an on/off flag. A flag the listener has for every
    door (`--parent-pid`, `--transcript`) may be declared too: its help then adds this door's
    note to that option's, and its value comes as the listener's own.
    """

    flag: str  # `--socket`
    help: str
    metavar: str | None = "VALUE"
    default: str | None = None

    @property
    def dest(self) -> str:
        """The attribute argparse keeps the option's value in."""
        return self.flag.removeprefix("--").replace("-", "_")


DoorValue = str | bool | None  # an option's value: its text, True for a flag given, None: absent


@dataclass(frozen=True)
class DoorRequest:
    """What `listen --door NAME` was given for an agent's door: the door's own options, by
    flag, as its record declares them (`Agent.listen_options`), and what every door has."""

    timeout: float
    env: Mapping[str, str]
    project: Path
    options: Mapping[str, DoorValue] = field(default_factory=dict)
    transcript: str | None = None
    pid: int | None = None  # --parent-pid: the agent's process
    home: Path | None = None  # the paneboard home, where a door's private grant is kept

    def value(self, flag: str) -> str | None:
        """The text given for option *flag* (or its default), None when there is none."""
        value = self.options.get(flag)
        return value if isinstance(value, str) else None

    def given(self, flag: str) -> bool:
        """Whether the on/off option *flag* was given."""
        return self.options.get(flag) is True


@dataclass(frozen=True)
class WakeRequest:
    """What a sleeping listener knows of the ended session it would start again.

    *session* is the agent's own session id (its session-start hook's input); *project* the
    folder it ran in; *env* the environment its listener was started with (the agent's own
    config lives under it); *home* the paneboard home; *timeout* how long the agent's resume
    command may take before the wake counts as failed.
    """

    session: str
    project: Path
    env: Mapping[str, str]
    home: Path
    timeout: float
    transcript: str | None = None  # the session's conversation file, where `seen` is read


@dataclass(frozen=True)
class SpawnRequest:
    """What `paneboard spawn KIND --as NAME` asks: a new session of the agent in *project*,
    with paneboard's hooks installed, given *first* as its first prompt."""

    name: str
    project: Path
    env: Mapping[str, str]
    home: Path
    first: str | None = None


@dataclass(frozen=True)
class Spawned:
    """A session `spawn` started (or a wake resumed): its id, and how a person reaches it."""

    session: str  # the agent's own id for it (`claude stop ID` takes it)
    attach: str  # what a person runs to see it: `claude attach 3f2a1b`, `tmux attach -t …`
    pid: int | None = None


def hook_specific(text: str) -> str:
    """A session-start hook's output as Claude Code, Codex and Gemini CLI read it."""
    output = {"hookEventName": "SessionStart", "additionalContext": text}
    return json.dumps({"hookSpecificOutput": output})


def top_level(text: str) -> str:
    """A session-start hook's output as Copilot CLI reads it."""
    return json.dumps({"additionalContext": text})


@dataclass(frozen=True)
class Agent:
    """One agent kind; its module makes the one instance, and overrides what differs."""

    kind: str  # claude, codex, …: the word `--agent` and `hook install` take
    title: str  # how the person knows it: "Claude Code"
    modes: tuple[str, ...]  # the `--mode`s it has doors for
    default_mode: str
    hooks_file: str | None  # where `hook install` writes, relative to the project
    events: Mapping[str, str]  # hook action -> the agent's event name
    door: str | None = None  # the `listen --door` its session's listener uses
    seen_source: str | None = None  # the `seen` receipts' source: its conversation file
    mcp: McpConfig | None = None  # where `hook install --mcp` registers `paneboard mcp`
    trusts: bool = False  # `hook install --trust` records the person's trust in its hooks
    idle_reply: str = ""  # what `hook stop` prints with nothing to hand over
    per_stop: int | None = None  # prompts handed over per turn end (None: as many as fit)
    cli_argv_suffixes: tuple[
        str, ...
    ] = ()  # how an argument of a `node` process running its CLI ends
    session_key: str = "session_id"  # the hook input's session id
    transcript_key: str = "transcript_path"  # the hook input's conversation file
    no_transcript: str = ""  # what `listen` without --transcript misses, for this door
    listener_runner: str = "its plugin"  # what runs its listener, as a `--mode` refusal names it
    listen_options: tuple[ListenOption, ...] = ()  # what `listen --door` takes for its door
    trust_help: str = ""  # what `hook install --trust` does for it (with `trusts`)

    def check_mode(self, mode: str | None) -> str:
        """*mode*, or the default; `BadInput` for a mode the agent has no door for."""
        if mode is None:
            return self.default_mode
        if mode not in self.modes:
            only = self.modes[0]
            why = "a Stop hook" if only == "stop" else f"a listener, through {self.listener_runner}"
            raise BadInput(f"{self.title} is reached through {why} only: use --mode {only}")
        return mode

    def context(self, text: str) -> str:
        """The session-start hook's output, given the context line."""
        return hook_specific(text)

    def session(self, data: Mapping[str, Any]) -> str | None:
        return _text(data.get(self.session_key))

    def transcript(self, data: Mapping[str, Any]) -> str | None:
        return _text(data.get(self.transcript_key))

    def files(self, setup: Setup, action: str) -> list[Path]:
        """Every file of the project `hook install|uninstall` may write or remove."""
        return [] if self.hooks_file is None else [setup.project / self.hooks_file]

    def install(self, setup: Setup) -> list[Change]:
        raise NotImplementedError

    def uninstall(self, setup: Setup) -> list[Change]:
        raise NotImplementedError

    def listen_args(
        self, data: Mapping[str, Any], environ: Mapping[str, str], parent: int
    ) -> tuple[list[str], dict[str, str]]:
        """`paneboard listen` arguments for the session a hook with input *data* runs in, and
        what the listener's environment adds; `BadInput` saying why no listener can start."""
        raise BadInput(f"{self.title} has no listener")

    def open_door(self, request: DoorRequest) -> Door:
        raise BadInput(f"{self.title} has no door of its own")

    def sighting(self, mark: Path, door: Door, transcript: Path | None) -> Sighting | None:
        """What its listener follows to post `seen`: the conversation file, when known."""
        if self.seen_source is None or transcript is None:
            return None
        return Sighting(mark, self.seen_source, transcript, self.user_texts)

    def user_texts(self, record: dict[str, Any]) -> list[str]:
        """The texts of a record of its conversation file that puts them before the model as
        the user's (a turn's input); [] for every other record."""
        return []

    def until_session_over(self, door: Door) -> Callable[[], Awaitable[str]] | None:
        """What returns once the agent's session has ended, with the reason (`listen
        --until-unloaded`); None for an agent whose end its parent process marks."""
        return None

    def doctor(self, ask: DoctorRequest) -> list[Check]:
        return []

    def wake_session(self, request: DoorRequest) -> str | None:
        """The agent's own id of the session a listener opened with *request* serves (which a
        wake resumes), when its options or conversation file say; None otherwise (`listen
        --session ID` gives it)."""
        return None

    def wake_door(self, request: WakeRequest) -> Door | None:
        """The door that starts the ended session *request.session* again, in the background,
        with a prompt's text as its next turn (the agent's own resume: `claude --bg --resume`,
        `codex exec resume`); None for an agent that has no resume door. Its `deliver` returns
        once the agent admitted the text, and raises `DoorFailed` with the agent's own words
        when the resume fails."""
        return None

    def spawn(self, request: SpawnRequest) -> Spawned:
        """Start a new session of this agent with paneboard's hooks installed (`BadInput` for
        an agent that cannot be started so)."""
        raise BadInput(f"{self.title} cannot be spawned")

    def stop_session(self, session: str, env: Mapping[str, str]) -> str:
        """End a spawned or woken session through the agent's own stop; returns what the agent
        said (`BadInput` for an agent that has no stop of its own)."""
        raise BadInput(f"{self.title} has no stop of its own")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
