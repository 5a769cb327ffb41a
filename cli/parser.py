"""The parser: every command, its options, and where its code lives (imported only when run).

`COMMANDS` is the one list of commands: each has its help, a function adding its own options,
and the ``module:function`` that runs it. Options may stand before or after a command's
positional words, as in git (`hook install --mode stop claude` = `hook install claude --mode
stop`); after `--` every word is positional.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from paneboard.protocol.words import KINDS, PRIORITIES, WAIT_UNTIL

TYPE_CHECKING = False  # typing's own import is a cost `post` does not pay
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    words: list[str] | None = None  # what it is built to parse; None: every option's help
    later: dict[argparse.Action, Callable[[], str]] | None = None  # help made when shown

    def format_help(self) -> str:
        for action, make in (self.later or {}).items():
            action.help = make()
        return super().format_help()

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse asks shutil for the terminal width on every add_argument; os answers
        # without shutil's import, which `paneboard post` would otherwise pay for.
        return argparse.HelpFormatter(prog=self.prog, width=_terminal_width() - 2)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see `{self.prog} --help`)")


def _terminal_width() -> int:
    import os

    try:
        columns = os.environ.get("COLUMNS", "")
        return int(columns) or os.get_terminal_size(sys.stdout.fileno()).columns
    except (ValueError, OSError):
        return 80


def _flag(p: argparse._ActionsContainer, name: str, help_: str) -> None:
    """An option that is on or off."""
    p.add_argument(name, action="store_true", help=help_)


def _common() -> _Parser:
    common = _Parser(add_help=False)
    g = common.add_argument_group("where and who")
    g.add_argument("--home", help="folder holding every board (env PANEBOARD_HOME)")
    g.add_argument(
        "--board", help="board name (env PANEBOARD_BOARD; default: the git repository's name)"
    )
    g.add_argument(
        "--as",
        dest="agent",
        metavar="AGENT",
        help="act as this agent (env PANEBOARD_AGENT; default: login name)",
    )
    _flag(g, "--json", "machine output: one JSON object per line")
    g.add_argument(
        "--store",
        metavar="URL",
        help="nats://HOST:PORT[/PREFIX]: keep the board on NATS JetStream (env PANEBOARD_STORE)",
    )
    g.add_argument("--nats-creds", metavar="FILE", help="NATS credentials file")
    g.add_argument("--nats-tls-ca", metavar="FILE", help="CA certificate for NATS over TLS")
    _flag(g, "--verbose", "show tracebacks")
    return common


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds")
    return value


def _pid(text: str) -> int:
    """A process id: 1 up to the system's largest (Linux's pid_max; 2^22 where it is unknown)."""
    try:
        with open("/proc/sys/kernel/pid_max") as f:
            largest = int(f.read())
    except (OSError, ValueError):
        largest = 1 << 22
    if not text.isdigit() or not 1 <= int(text) <= largest:
        raise argparse.ArgumentTypeError(f"{text!r} is not a process id (1 to {largest})")
    return int(text)


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def _backoff(text: str) -> tuple[float, ...]:
    return tuple(_seconds(part) for part in text.split(",")) if text.strip() else ()


def _text(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("text", nargs="+", metavar="TEXT", help=f"the {what} (`-` reads stdin)")


def _id(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", metavar="ID")


def _timeout(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=_seconds, metavar="S", help="give up after S seconds (exit 3)")


def _post_options(p: argparse.ArgumentParser) -> None:
    to = "recipient (repeat for several)"
    p.add_argument("--to", action="append", required=True, metavar="AGENT", help=to)
    p.add_argument("--priority", default="normal", choices=PRIORITIES)
    p.add_argument("--thread", metavar="NAME")
    p.add_argument("--reply-to", metavar="ID")
    p.add_argument("--ttl", type=_seconds, metavar="S", help="expire after S seconds")
    p.add_argument(
        "--max-open",
        type=_count,
        default=1000,
        metavar="N",
        help="refuse if you already have N prompts open for a recipient (default 1000)",
    )
    _notice(p)
    _text(p, "prompt")


def _notice(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--notice",
        action="store_true",
        help="only a notice reaches the recipient (sender, id, size); it reads the body "
        "with `paneboard read`",
    )


def _ack_options(p: argparse.ArgumentParser) -> None:
    _id(p)
    p.add_argument("--note", metavar="TEXT")


def _answer_options(p: argparse.ArgumentParser) -> None:
    _id(p)
    _text(p, "answer")


def _log_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kind", action="append", choices=KINDS)
    p.add_argument("--after", metavar="ID", help="only the posts after this one")
    p.add_argument(
        "--limit", type=_count, metavar="N", help="the first N after --after, else the newest N"
    )
    _flag(p, "--follow", "keep printing new posts until interrupted")


def _wait_options(p: argparse.ArgumentParser) -> None:
    _id(p)
    p.add_argument("--until", choices=WAIT_UNTIL, default="closed")
    _timeout(p)


def _ask_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--to", required=True, metavar="AGENT")
    p.add_argument("--priority", default="normal", choices=PRIORITIES)
    _notice(p)
    _timeout(p)
    _text(p, "prompt")


LISTENER_DOORS = ("stdout", "exec", "maildir")  # the doors the listener has of its own


def _listen_options(p: argparse.ArgumentParser) -> None:
    """The listener's own options, and each agent's door's, as its record declares them.

    Parsing words that name `--door`, only that door's record is read (its agent's module
    imported alone); for the help, or a word none of those options is, every record's."""
    from paneboard.agents import agent_doors, door_options, seeing_doors

    p.add_argument("--door", required=True, choices=(*LISTENER_DOORS, *agent_doors()))
    p.add_argument("--maildir", metavar="ROOT", help="maildir: the inbox root")
    p.add_argument(
        "--door-timeout",
        type=_seconds,
        default=30.0,
        metavar="S",
        help="time limit of one delivery (default 30)",
    )
    p.add_argument(
        "--backoff",
        type=_backoff,
        metavar="S,S,…",
        help="waits between attempts (default 1,2,5,15,30,60,120,300)",
    )
    p.add_argument(
        "--one-per-text",
        action="store_true",
        help="hand each prompt over in a text of its own (one turn each), never several in one",
    )
    parent = p.add_argument("--parent-pid", type=_pid, metavar="PID")
    transcript = p.add_argument("--transcript", metavar="PATH")
    p.add_argument(
        "--session",
        metavar="ID",
        help="the agent's own session id, which a wake resumes (default: what the door's "
        "agent reads from its options or conversation file)",
    )
    door = _door_named(p, _words(p))
    declared = door_options(door)

    def told(flag: str, generic: str = "") -> str:
        notes = [f"{door}: {option.help}" for door, option in declared.get(flag, [])]
        return "; ".join([generic, *notes] if generic else notes)

    parent.help = told("--parent-pid", "stop when process PID (the agent) exits")
    seeing = ", ".join(seeing_doors())
    transcript.help = told(
        "--transcript", f"{seeing}: the agent's conversation file, followed to post `seen`"
    )
    own = [flag for flag in declared if flag not in p._option_string_actions]
    p.set_defaults(door_flags=tuple(own))  # the agents' doors' own, which listening.py checks
    for flag in own:
        option = declared[flag][0][1]
        if option.metavar is None:
            _flag(p, flag, told(flag))
        else:
            p.add_argument(flag, metavar=option.metavar, default=option.default, help=told(flag))
    p.add_argument("command", nargs="*", metavar="-- CMD ARG", help="exec: the command to run")


def _words(p: argparse.ArgumentParser) -> list[str] | None:
    """The words *p* is built to parse (before a `--`); None: build it whole (its help)."""
    words = p.words if isinstance(p, _Parser) else None
    return None if words is None else words[: words.index("--")] if "--" in words else words


def _door_named(p: argparse.ArgumentParser, words: list[str] | None) -> str | None:
    """The `--door` *words* name, when every other option word is one *p* has or that door's
    record may declare: then only that door's record is read. None: read every record."""
    if words is None:
        return None
    door = None
    for i, word in enumerate(words):
        if word == "--door" and i + 1 < len(words):
            door = words[i + 1]
        elif word.startswith("--door="):
            door = word.removeprefix("--door=")
    if door is None or door in LISTENER_DOORS:
        mine: set[str] = set()
    else:
        from paneboard.agents import by_door

        agent = by_door(door)
        if agent is None:
            return None
        mine = {option.flag for option in agent.listen_options}
    known = {*p._option_string_actions, *mine} - {"-h", "--help"}
    for word in words:
        if word.startswith("-") and word.split("=", 1)[0] not in known:
            return None  # --help, a prefix, another door's option: every record, as before
    return door


def _kinds() -> tuple[str, ...]:
    from paneboard.agents import AGENTS

    return tuple(AGENTS)


def _kind(word: str) -> str:
    """An agent kind; argparse hands a positional's absent default through here too."""
    kinds = _kinds()
    if word != argparse.SUPPRESS and word not in kinds:
        raise argparse.ArgumentTypeError(
            f"invalid choice: {word!r} (choose from {', '.join(map(repr, kinds))})"
        )
    return word


def _help_of(p: argparse.ArgumentParser, action: argparse.Action, make: Callable[[], str]) -> None:
    """*action*'s help, which reads every agent's record: made now for a parser built whole,
    else only if its help is shown (a `hook stop --agent claude` imports one agent's module)."""
    if isinstance(p, _Parser) and p.words is not None:
        p.later = {**(p.later or {}), action: make}
    else:
        action.help = make()


def _hook_options(p: argparse.ArgumentParser) -> None:
    from paneboard.agents import AGENTS, DEFAULT_KIND

    kinds = tuple(AGENTS)
    p.add_argument(
        "action", choices=("install", "uninstall", "session-start", "session-end", "stop")
    )
    p.add_argument(
        "kind",
        nargs="?",
        type=_kind,
        default=argparse.SUPPRESS,  # absent: --agent's value stands
        metavar="|".join(kinds),
        help="install/uninstall: which agent",
    )
    p.add_argument(
        "--agent",
        dest="kind",
        choices=kinds,
        default=None,
        help=f"session-start/session-end/stop: which agent runs it (default {DEFAULT_KIND})",
    )
    p.add_argument(
        "--project",
        type=Path,
        default=None,
        metavar="DIR",
        help="install/uninstall: the project (default: here)",
    )
    _help_of(p, p.add_argument("--mode", choices=_MODES, default=None), _modes_help)
    p.add_argument(
        "--cooldown",
        type=_seconds,
        default=0.0,
        metavar="S",
        help="stop: check at most every S seconds",
    )

    def trusts() -> str:
        return "; ".join(f"install {a.kind}: {a.trust_help}" for a in AGENTS.values() if a.trusts)

    def files() -> str:
        named = " or ".join(a.mcp.file for a in AGENTS.values() if a.mcp is not None)
        return f"install: also register `paneboard mcp` in {named}"

    _help_of(p, p.add_argument("--trust", action="store_true"), trusts)
    _help_of(p, p.add_argument("--mcp", action="store_true"), files)

    _flag(
        p,
        "--wake",
        "install: set the agent's policy to --wake resume (confirmed): a prompt for it after its "
        "session ended starts that session again",
    )


_MODES = ("listen", "stop", "both")


def _modes_help() -> str:
    """What each `--mode` does, and each agent's default or only mode, from the records."""
    from paneboard.agents import AGENTS

    groups: dict[str, list[str]] = {}
    for agent in AGENTS.values():
        only = len(agent.modes) == 1
        key = f"{agent.modes[0]} only" if only else f"default {agent.default_mode}"
        groups.setdefault(key, []).append(agent.kind)
    each = "; ".join(f"{', '.join(kinds)}: {key}" for key, kinds in groups.items())
    return f"listen: a listener per session; stop: deliver at each Stop; both ({each})"


def _compact_options(p: argparse.ArgumentParser) -> None:
    _flag(p, "--archive", "keep the old log as HOME/BOARD/archive/log-TIME")


def _doctor_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--socket",
        metavar="PATH",
        help="the agent session's inbox socket to check (default: the one its session names)",
    )
    _flag(p, "--probe", "send a harmless test prompt through the agent's door and wait for it")


def _top_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--stale",
        type=_seconds,
        default=300.0,
        metavar="S",
        help="mark a prompt delivered, or seen, and not closed for S seconds (default 300)",
    )


def _mcp_options(p: argparse.ArgumentParser) -> None:
    named = "without --as: act as `<folder>-<agent>`, the name this agent's hooks use"
    p.add_argument("--agent", dest="kind", choices=_kinds(), help=named)


def _no_options(p: argparse.ArgumentParser) -> None:
    pass


def _limit(text: str) -> int:
    if not text.isdigit() or int(text) > 1_000_000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 0 (off) to 10^6")
    return int(text)


def _keys_options(p: argparse.ArgumentParser) -> None:
    _flag(p, "--own", "print only your own key's fingerprint in this home (--as), made if missing")


def _trust_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="AGENT")
    p.add_argument("fingerprint", metavar="FINGERPRINT")


def _policy_options(p: argparse.ArgumentParser) -> None:
    allowed = p.add_mutually_exclusive_group()
    allowed.add_argument("--allow", action="extend", nargs="+", metavar="AGENT")
    allowed.add_argument("--allow-none", action="store_true", help="empty the allow list")
    p.add_argument("--others", choices=("deliver", "hold", "refuse"))
    p.add_argument("--unverified", choices=("hold", "refuse"))
    p.add_argument("--rate", type=_limit, metavar="N", help="prompts a minute per sender (0: off)")
    p.add_argument("--loop", type=_limit, metavar="N", help="reply-chain depth (0: off)")
    p.add_argument(
        "--first-contact",
        choices=("hold", "deliver", "refuse"),
        help="a name's first key on a store other machines write to (NATS)",
    )
    p.add_argument(
        "--wake",
        choices=("never", "resume"),
        help="resume: the listener outlives the session and starts it again for a prompt",
    )
    p.add_argument("--wake-limit", type=_limit, metavar="N", help="wakes an hour (0: off)")
    p.add_argument(
        "--deliver",
        choices=("body", "notice", "auto"),
        help="how prompts reach the agent: the body, a notice (read with `paneboard read`), "
        "or auto (a notice for a body over 4 KiB or a burst of more than 10)",
    )


def _wake_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="NAME", help="the asleep agent to wake")


def _approve_options(p: argparse.ArgumentParser) -> None:
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("id", metavar="ID", nargs="?")
    which.add_argument(
        "--from", dest="sender", metavar="SENDER", help="every prompt held from SENDER"
    )


def _refuse_options(p: argparse.ArgumentParser) -> None:
    _id(p)
    p.add_argument("--reason", default="no reason given", metavar="TEXT")


# --- spawn and stop: a new agent session with paneboard's hooks, and its end -----------------


def _spawn_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("kind", type=_kind, metavar="|".join(_kinds()), help="which agent")
    p.add_argument(
        "--project",
        type=Path,
        default=None,
        metavar="DIR",
        help="the folder the session runs in, where its hooks go (default: here)",
    )
    p.add_argument(
        "--first",
        metavar="TEXT",
        help="post TEXT to the new agent as its first prompt (`-` reads stdin)",
    )
    p.add_argument(
        "--timeout",
        type=_seconds,
        default=60.0,
        metavar="S",
        help="give up when no listener holds the pane after S seconds (default 60)",
    )


def _stop_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", metavar="NAME", help="the spawned (or woken) agent")


SPAWNING: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], str]] = {
    "spawn": (
        "start a new session of an agent with paneboard's hooks, as --as NAME",
        _spawn_options,
        "spawning:spawn_command",
    ),
    "stop": (
        "end a spawned or woken session through the agent's own stop",
        _stop_options,
        "spawning:stop_command",
    ),
}


# name: (help, the function adding its options, the module:function running it: a module of
# cli/, or a dotted name for a layer above the command line, imported only when run)
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], str]] = {
    "post": ("post a prompt; prints its id", _post_options, "posting:post_command"),
    "ack": ("close a prompt you received", _ack_options, "closing:ack_command"),
    "answer": (
        "close a prompt you received with an answer",
        _answer_options,
        "closing:answer_command",
    ),
    "cancel": ("withdraw a prompt you sent", _id, "closing:cancel_command"),
    "open": ("the prompts open for you, in delivery order", _no_options, "reading:open_command"),
    "status": (
        "a prompt's lifecycle for each recipient, each stage with its time",
        _id,
        "reading:status_command",
    ),
    "read": (
        "print a prompt's text as its recipient, and post `read` (the first time)",
        _id,
        "reading:read_command",
    ),
    "log": ("the board's posts", _log_options, "reading:log_command"),
    "wait": (
        "block until a prompt is delivered, seen or closed for every recipient; print answers",
        _wait_options,
        "waiting:wait_command",
    ),
    "ask": (
        "post a prompt to one agent, wait until it is closed, print the answer",
        _ask_options,
        "waiting:ask_command",
    ),
    "who": (
        "agents on the board, and whether a listener holds each pane",
        _no_options,
        "who:who_command",
    ),
    "listen": (
        "hand this agent's prompts over through its door until SIGINT/SIGTERM",
        _listen_options,
        "listening:listen_command",
    ),
    "hook": (
        "agent hooks: install or uninstall them, or run one (as the agent does)",
        _hook_options,
        "hooks:hook_command",
    ),
    "compact": (
        "rewrite the board's log keeping only open prompts and their posts",
        _compact_options,
        "compacting:compact_command",
    ),
    "doctor": (
        "check this machine, board, pane and agent setup; one line per check",
        _doctor_options,
        "doctor:doctor_command",
    ),
    "top": (
        "a live view of the board: agents, open prompts, posts (needs paneboard[tui])",
        _top_options,
        "paneboard.top:top_command",
    ),
    "keys": ("every agent's key fingerprint and its state", _keys_options, "trust:keys_command"),
    "trust": ("pin another key for an agent (confirmed)", _trust_options, "trust:trust_command"),
    "policy": ("print or change who may start a turn", _policy_options, "trust:policy_command"),
    "wake": (
        "wake an asleep agent: its listener starts its session again",
        _wake_options,
        "waking:wake_command",
    ),
    "approve": (
        "let a held prompt, or all held from one sender, through (confirmed)",
        _approve_options,
        "trust:approve_command",
    ),
    "refuse": ("refuse a prompt for you (confirmed)", _refuse_options, "trust:refuse_command"),
    "mcp": (
        "serve the board as MCP tools on stdin/stdout, acting as --as",
        _mcp_options,
        "paneboard.mcpserver.command:mcp_command",
    ),
    **SPAWNING,
}
DESCRIPTION = "Hand work between coding agents through a shared board."


def command_parser(name: str, words: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of one command, with the options every command takes; given the *words* it
    is to parse, only the agents' records those words need are read (None: all of them)."""
    help_, add_options, run = COMMANDS[name]
    p = _Parser(prog=f"paneboard {name}", description=help_, parents=[_common()])
    p.words = words
    add_options(p)
    p.set_defaults(run=run)
    return p


def top_parser() -> argparse.ArgumentParser:
    """`paneboard --help` and `--version`: the list of commands."""
    parser = _Parser(prog="paneboard", description=DESCRIPTION)
    _flag(parser, "--version", "print paneboard's version")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_, _, _) in COMMANDS.items():
        sub.add_parser(name, help=help_, add_help=False)
    return parser


def parse(argv: list[str]) -> argparse.Namespace:
    """The command's arguments; `UsageError` for anything a user typed wrong."""
    if not argv or argv[0] not in COMMANDS:
        args = top_parser().parse_args(argv)  # --help and --version exit here
        if args.version:
            return argparse.Namespace(run="--version", verbose=False)
        raise UsageError("paneboard: say which command (see `paneboard --help`)")
    parser = command_parser(argv[0], argv[1:])
    return parser.parse_args(options_first(parser, argv[1:]))


def options_first(parser: argparse.ArgumentParser, words: list[str]) -> list[str]:
    """*words* with every option (and its value) moved before the positional words.

    argparse fills a positional as soon as it meets one, so `install --mode stop claude`
    would leave `claude` unrecognized; reordering keeps the meaning and frees the order.
    """
    takes_value = {
        flag: action.nargs != 0 for action in parser._actions for flag in action.option_strings
    }
    options: list[str] = []
    positional: list[str] = []
    rest = iter(words)
    for word in rest:
        if word == "--":
            return options + positional + ["--", *rest]
        flag = _known(takes_value, word.split("=", 1)[0])
        if flag is None:  # a positional word, or an option argparse will name as unknown
            (options if word.startswith("--") else positional).append(word)
            continue
        options.append(word)
        if takes_value[flag] and "=" not in word:
            options.extend(value for value in [next(rest, None)] if value is not None)
    return options + positional


def _known(flags: dict[str, bool], word: str) -> str | None:
    """The option *word* names, written whole or as a unique prefix of a long option."""
    if word in flags:
        return word
    if not word.startswith("--") or word == "--":
        return None
    hits = [flag for flag in flags if flag.startswith(word)]
    return hits[0] if len(hits) == 1 else None
