"""The `paneboard` command line: `main` runs one command and maps its errors to exit codes."""

from __future__ import annotations

import sys

from paneboard.cli import exitcodes
from paneboard.cli.parser import UsageError, parse

__all__ = ["main", "one_line"]


def main(argv: list[str] | None = None) -> int:
    """Run one paneboard command; return its exit code."""
    try:
        args = parse(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        print(one_line(str(exc)), file=sys.stderr)
        return exitcodes.USAGE
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else exitcodes.USAGE
    if args.run == "--version":
        from importlib.metadata import version

        print(f"paneboard {version('paneboard')}")
        return exitcodes.OK
    _show_warnings_once_each()
    try:
        _run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        sys.stderr.close()  # a reader such as `head` went away: nothing left to say
        return exitcodes.OK
    # The top level turns every error into a message and an exit code.
    except Exception as exc:  # noqa: BLE001
        return _report(exc, verbose=args.verbose)
    return exitcodes.OK


def _run(args: object) -> None:
    import importlib

    module, function = str(args.run).split(":")  # type: ignore[attr-defined]  # set by the parser
    where = module if "." in module else f"paneboard.cli.{module}"
    getattr(importlib.import_module(where), function)(args)


def _report(exc: BaseException, *, verbose: bool) -> int:
    """Say what went wrong in one line on stderr; return the exit code for it."""
    from paneboard.board.errors import error_message, unwrap

    exc = unwrap(exc)
    if verbose:
        import traceback

        traceback.print_exception(exc)
    message = error_message(exc)
    if message is not None:
        print(message, file=sys.stderr)
        return exitcodes.for_exception(exc)
    if not verbose:
        what = f"{type(exc).__name__}: {exc}"
        print(
            one_line(f"paneboard: internal error: {what} (run with --verbose for details)"),
            file=sys.stderr,
        )
    return exitcodes.FAILED


def one_line(text: str) -> str:
    """*text* as one line, as protocol/visible.py shows it (imported here only when a message
    is printed: `paneboard post` does not pay for it)."""
    from paneboard.protocol.visible import one_line as shown

    return shown(text)


def _show_warnings_once_each() -> None:
    """Print each of paneboard's warnings (a damaged record, say) as one line on stderr."""
    import warnings

    from paneboard.protocol.errors import DamagedRecord

    def show(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
        print(one_line(f"paneboard: warning: {message}"), file=sys.stderr)

    warnings.showwarning = show
    warnings.simplefilter("always", DamagedRecord)
