"""The `paneboard` command line: one parser, lazy imports per command, one exit-code map."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from paneboard.listener import exitcodes

TYPE_CHECKING = False  # typing's own import is a cost `post` does not pay
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

COMMANDS = frozenset(
    {"post", "ack", "answer", "cancel", "open", "status", "log", "listen", "wait", "ask", "who", "hook", "doctor"}
)
DOORS = ("stdout", "exec", "maildir", "claude-inbox", "codex-queue")
KINDS = ("prompt", "ack", "answer", "cancel", "delivered", "undelivered")


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse asks shutil for the terminal width on every add_argument; os answers
        # without shutil's import, which `paneboard post` would otherwise pay for.
        return argparse.HelpFormatter(prog=self.prog, width=_terminal_width() - 2)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see `{self.prog} --help`)")


def _terminal_width() -> int:
    import os

    try:
        return int(os.environ.get("COLUMNS", "")) or os.get_terminal_size(sys.stdout.fileno()).columns
    except (ValueError, OSError):
        return 80


def _common() -> _Parser:
    common = _Parser(add_help=False)
    g = common.add_argument_group("where and who")
    g.add_argument("--home", help="folder holding every board (env PANEBOARD_HOME)")
    g.add_argument("--board", help="board name (env PANEBOARD_BOARD; default: the git repository's name)")
    g.add_argument("--as", dest="agent", metavar="AGENT", help="act as this agent (env PANEBOARD_AGENT; default: login name)")
    g.add_argument("--json", action="store_true", help="machine output: one JSON object per line")
    g.add_argument(
        "--store", metavar="URL", help="nats://HOST:PORT[/PREFIX]: keep the board on NATS JetStream (env PANEBOARD_STORE)"
    )
    g.add_argument("--nats-creds", metavar="FILE", help="NATS credentials file")
    g.add_argument("--nats-tls-ca", metavar="FILE", help="CA certificate for NATS over TLS")
    g.add_argument("--verbose", action="store_true", help="show tracebacks")
    return common


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds")
    return value


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def _backoff(text: str) -> tuple[float, ...]:
    return tuple(_seconds(part) for part in text.split(",")) if text.strip() else ()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (for speed) one holding only the command *only*."""
    parser = _Parser(prog="paneboard", description="Hand work between coding agents through a shared board.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = [_common()]

    def add(name: str, help_: str, run: Callable[[argparse.Namespace], None]) -> argparse.ArgumentParser:
        if only is not None and name != only:
            return _Parser(add_help=False)  # a throwaway: this command is not the one being run
        p = sub.add_parser(name, help=help_, description=help_, parents=common)
        p.set_defaults(run=run)
        return p

    p = add("post", "post a prompt; prints its id", _post)
    p.add_argument("--to", action="append", required=True, metavar="AGENT", help="recipient (repeat for several)")
    p.add_argument("--priority", default="normal", choices=("low", "normal", "high", "urgent"))
    p.add_argument("--thread", metavar="NAME")
    p.add_argument("--reply-to", metavar="ID")
    p.add_argument("--ttl", type=_seconds, metavar="S", help="expire after S seconds")
    p.add_argument("--max-open", type=_count, default=1000, metavar="N", help="refuse if you already have N prompts open for a recipient (default 1000)")  # fmt: skip
    p.add_argument("text", nargs="+", metavar="TEXT", help="the prompt (`-` reads stdin)")

    p = add("ack", "close a prompt you received", _ack)
    p.add_argument("id", metavar="ID")
    p.add_argument("--note", metavar="TEXT")

    p = add("answer", "close a prompt you received with an answer", _answer)
    p.add_argument("id", metavar="ID")
    p.add_argument("text", nargs="+", metavar="TEXT", help="the answer (`-` reads stdin)")

    p = add("cancel", "withdraw a prompt you sent", _cancel)
    p.add_argument("id", metavar="ID")

    add("open", "the prompts open for you, in delivery order", _open)

    p = add("status", "a prompt's lifecycle for each recipient", _status)
    p.add_argument("id", metavar="ID")

    p = add("log", "the board's posts", _log)
    p.add_argument("--kind", action="append", choices=KINDS)
    p.add_argument("--follow", action="store_true", help="keep printing new posts until interrupted")

    p = add("wait", "block until a prompt is delivered or closed for every recipient; print answers", _wait)
    p.add_argument("id", metavar="ID")
    p.add_argument("--until", choices=("delivered", "closed"), default="closed")
    p.add_argument("--timeout", type=_seconds, metavar="S", help="give up after S seconds (exit 3)")

    p = add("ask", "post a prompt to one agent, wait until it is closed, print the answer", _ask)
    p.add_argument("--to", required=True, metavar="AGENT")
    p.add_argument("--priority", default="normal", choices=("low", "normal", "high", "urgent"))
    p.add_argument("--timeout", type=_seconds, metavar="S", help="give up after S seconds (exit 3)")
    p.add_argument("text", nargs="+", metavar="TEXT", help="the prompt (`-` reads stdin)")

    add("who", "agents on the board, and whether a listener holds each pane", _who)

    p = add("listen", "hand this agent's prompts over through its door until SIGINT/SIGTERM", _listen)
    p.add_argument("--door", required=True, choices=DOORS)
    p.add_argument("--socket", metavar="PATH", help="claude-inbox: the session's inbox socket (default $CLAUDE_CODE_MESSAGING_SOCKET)")  # fmt: skip
    p.add_argument("--thread", metavar="ID", help="codex-queue: the thread id (default $CODEX_THREAD_ID)")
    p.add_argument("--codex-bin", default="codex", metavar="PATH", help="codex-queue: the codex executable")
    p.add_argument("--maildir", metavar="ROOT", help="maildir: the inbox root")
    p.add_argument("--door-timeout", type=_seconds, default=30.0, metavar="S", help="time limit of one delivery (default 30)")  # fmt: skip
    p.add_argument("--backoff", type=_backoff, metavar="S,S,…", help="waits between attempts (default 1,2,5,15,30,60,120,300)")  # fmt: skip
    p.add_argument("--parent-pid", type=int, metavar="PID", help="stop when process PID (the agent) exits")
    p.add_argument("command", nargs="*", metavar="-- CMD ARG", help="exec: the command to run")

    p = add("hook", "agent hooks: install or uninstall them, or run one (as the agent does)", _hook)
    p.add_argument("action", choices=("install", "uninstall", "session-start", "session-end", "stop"))
    p.add_argument("target", nargs="?", choices=("claude", "codex"), metavar="claude|codex", help="install/uninstall: which agent")  # fmt: skip
    p.add_argument("--agent", dest="agent_type", choices=("claude", "codex"), default="claude", help="session-start/session-end/stop: which agent runs it")  # fmt: skip
    p.add_argument("--project", type=Path, default=None, metavar="DIR", help="install/uninstall: the project (default: here)")
    p.add_argument("--mode", choices=("listen", "stop", "both"), default="listen", help="listen: a listener per session; stop: deliver at each Stop; both")  # fmt: skip
    p.add_argument("--cooldown", type=_seconds, default=0.0, metavar="S", help="stop: check at most every S seconds")

    p = add("compact", "rewrite the board's log keeping only open prompts and their posts", _compact)
    p.add_argument("--archive", action="store_true", help="keep the old log as HOME/BOARD/archive/log-TIME")

    p = add("doctor", "check this machine, board, pane and agent setup; one line per check", _doctor)
    p.add_argument("--socket", metavar="PATH", help="the Claude Code inbox socket to check (default $CLAUDE_CODE_MESSAGING_SOCKET)")  # fmt: skip
    p.add_argument("--probe", action="store_true", help="send a harmless test prompt through the agent's door and wait for it")
    return parser


def _ctx(args: argparse.Namespace) -> Any:
    from paneboard.listener.context import Context

    nats = {k: v for k, v in (("creds", args.nats_creds), ("tls_ca", args.nats_tls_ca)) if v}
    return Context.resolve(args.home, args.board, args.agent, args.json, args.store, nats)


def _post(args: argparse.Namespace) -> None:
    from paneboard.listener.post import run_post

    run_post(_ctx(args), args.to, args.text, args.priority, args.thread, args.reply_to, args.ttl, args.max_open)


def _ack(args: argparse.Namespace) -> None:
    from paneboard.listener.board import run_ack

    run_ack(_ctx(args), args.id, args.note)


def _answer(args: argparse.Namespace) -> None:
    from paneboard.listener.board import run_answer
    from paneboard.listener.post import read_text

    ctx = _ctx(args)
    run_answer(ctx, args.id, read_text(args.text, "answer"))


def _cancel(args: argparse.Namespace) -> None:
    from paneboard.listener.board import run_cancel

    run_cancel(_ctx(args), args.id)


def _open(args: argparse.Namespace) -> None:
    from paneboard.listener.board import run_open

    run_open(_ctx(args))


def _status(args: argparse.Namespace) -> None:
    from paneboard.listener.board import run_status

    run_status(_ctx(args), args.id)


def _log(args: argparse.Namespace) -> None:
    from paneboard.listener.board import run_log

    ctx = _ctx(args)
    if args.follow:
        from paneboard.listener.following import run_follow

        run_follow(ctx, args.kind)
    else:
        run_log(ctx, args.kind)


def _wait(args: argparse.Namespace) -> None:
    from paneboard.listener.following import run_wait

    run_wait(_ctx(args), args.id, args.until, args.timeout)


def _ask(args: argparse.Namespace) -> None:
    from paneboard.listener.following import run_ask

    run_ask(_ctx(args), args.to, args.text, args.priority, args.timeout)


def _who(args: argparse.Namespace) -> None:
    from paneboard.listener.following import run_who

    run_who(_ctx(args))


def _listen(args: argparse.Namespace) -> None:
    from paneboard.listener.following import make_door, run_listen
    from paneboard.listener.listen import DEFAULT_BACKOFF

    ctx = _ctx(args)
    door = make_door(
        ctx, args.door, socket=args.socket, thread=args.thread, codex_bin=args.codex_bin,
        maildir=args.maildir, timeout=args.door_timeout, command=args.command,
    )  # fmt: skip
    run_listen(ctx, door, DEFAULT_BACKOFF if args.backoff is None else args.backoff, args.parent_pid)


def _hook(args: argparse.Namespace) -> None:
    from paneboard.listener.hooks.cli import run_hook

    run_hook(args)


def _compact(args: argparse.Namespace) -> None:
    import time

    from paneboard.listener.board import emit
    from paneboard.protocol.errors import BadInput
    from paneboard.state.compact import compact

    ctx = _ctx(args)
    if ctx.store_url:
        raise BadInput("compact rewrites the file log; on NATS, bound the board's stream with JetStream's own limits (max age, max messages)")  # fmt: skip
    if not ctx.paths.log.exists():
        raise BadInput(f"board `{ctx.board}` has no log to compact")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    done = compact(ctx.paths.log, time.time(), ctx.paths.dir / "archive" / f"log-{stamp}" if args.archive else None)
    if ctx.json:
        emit(done)
    else:
        print(f"board `{ctx.board}`: kept {done.kept} of {done.kept + done.dropped} posts, {done.before_bytes:,} -> {done.after_bytes:,} bytes, in {done.seconds:.2f} s")  # fmt: skip


def _doctor(args: argparse.Namespace) -> None:
    from paneboard.listener.doctor import run_doctor

    run_doctor(_ctx(args), args.socket, args.probe)


def main(argv: list[str] | None = None) -> int:
    """Run one paneboard command; return its exit code."""
    argv = sys.argv[1:] if argv is None else argv
    first = argv[0] if argv else None
    parser = build_parser(first if first in COMMANDS else None)
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        print(one_line(str(exc)), file=sys.stderr)
        return exitcodes.USAGE
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else exitcodes.USAGE
    _show_warnings_once_each()
    try:
        args.run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        sys.stderr.close()  # a reader such as `head` went away: nothing left to say
        return exitcodes.OK
    except Exception as exc:  # noqa: BLE001  # the top level turns every error into a message and an exit code
        from paneboard.protocol.errors import PaneboardError

        while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]  # a task group's wrapping says nothing to a user
        if args.verbose:
            import traceback

            traceback.print_exc()
        if isinstance(exc, PaneboardError):
            print(one_line(f"paneboard: {exc}"), file=sys.stderr)
        elif isinstance(exc, OSError):
            print(one_line(f"paneboard: {exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")), file=sys.stderr)  # fmt: skip
        else:
            if not args.verbose:
                print(one_line(f"paneboard: internal error: {type(exc).__name__}: {exc} (run with --verbose for details)"), file=sys.stderr)  # fmt: skip
            return exitcodes.FAILED
        return exitcodes.for_exception(exc)
    return exitcodes.OK


def one_line(text: str) -> str:
    """*text* with newlines and other control characters shown as escapes: a message is one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _show_warnings_once_each() -> None:
    """Print each of paneboard's warnings (a damaged record, say) as one line on stderr."""
    import warnings

    def show(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
        print(one_line(f"paneboard: warning: {message}"), file=sys.stderr)

    from paneboard.protocol.errors import DamagedRecord

    warnings.showwarning = show
    warnings.simplefilter("always", DamagedRecord)
