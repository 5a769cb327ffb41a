"""The `paneboard` command line: one parser, lazy imports per command, one exit-code map."""

from __future__ import annotations

import argparse
import sys

from listener import exitcodes

TYPE_CHECKING = False  # typing's own import is a cost `post` does not pay
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

COMMANDS = frozenset({"post", "ack", "answer", "cancel", "open", "status", "log"})
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


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (for speed) one holding only the command *only*."""
    parser = _Parser(prog="paneboard", description="Hand work between coding agents through a shared board.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = [_common()]
    dummy = _Parser(add_help=False)

    def add(name: str, help_: str, run: Callable[[argparse.Namespace], None]) -> argparse.ArgumentParser:
        if only is not None and name != only:
            return dummy
        p = sub.add_parser(name, help=help_, description=help_, parents=common)
        p.set_defaults(run=run)
        return p

    p = add("post", "post a prompt; prints its id", _post)
    p.add_argument("--to", action="append", required=True, metavar="AGENT", help="recipient (repeat for several)")
    p.add_argument("--priority", default="normal", choices=("low", "normal", "high", "urgent"))
    p.add_argument("--thread", metavar="NAME")
    p.add_argument("--reply-to", metavar="ID")
    p.add_argument("--ttl", type=_seconds, metavar="S", help="expire after S seconds")
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
    return parser


def _ctx(args: argparse.Namespace) -> Any:
    from listener.context import Context

    return Context.resolve(args.home, args.board, args.agent, args.json)


def _post(args: argparse.Namespace) -> None:
    from listener.post import run_post

    run_post(_ctx(args), args.to, args.text, args.priority, args.thread, args.reply_to, args.ttl)


def _ack(args: argparse.Namespace) -> None:
    from listener.board import run_ack

    run_ack(_ctx(args), args.id, args.note)


def _answer(args: argparse.Namespace) -> None:
    from listener.board import run_answer
    from listener.post import read_text

    ctx = _ctx(args)
    run_answer(ctx, args.id, read_text(args.text, "answer"))


def _cancel(args: argparse.Namespace) -> None:
    from listener.board import run_cancel

    run_cancel(_ctx(args), args.id)


def _open(args: argparse.Namespace) -> None:
    from listener.board import run_open

    run_open(_ctx(args))


def _status(args: argparse.Namespace) -> None:
    from listener.board import run_status

    run_status(_ctx(args), args.id)


def _log(args: argparse.Namespace) -> None:
    from listener.board import run_log

    ctx = _ctx(args)
    run_log(ctx, args.kind)


def main(argv: list[str] | None = None) -> int:
    """Run one paneboard command; return its exit code."""
    argv = sys.argv[1:] if argv is None else argv
    first = argv[0] if argv else None
    parser = build_parser(first if first in COMMANDS else None)
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        print(exc, file=sys.stderr)
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
        from protocol.errors import PaneboardError

        if args.verbose:
            import traceback

            traceback.print_exc()
        if isinstance(exc, PaneboardError):
            print(f"paneboard: {exc}", file=sys.stderr)
        elif isinstance(exc, OSError):
            print(f"paneboard: {exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else ""), file=sys.stderr)
        else:
            if not args.verbose:
                print(f"paneboard: internal error: {type(exc).__name__}: {exc} (run with --verbose for details)", file=sys.stderr)  # fmt: skip
            return exitcodes.FAILED
        return exitcodes.for_exception(exc)
    return exitcodes.OK


def _show_warnings_once_each() -> None:
    """Print each warning (a damaged record, say) as one line on stderr."""
    import warnings

    def show(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
        print(f"paneboard: warning: {message}", file=sys.stderr)

    warnings.showwarning = show
    warnings.simplefilter("always")
