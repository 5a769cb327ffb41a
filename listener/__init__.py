"""The running process and the command line: listen, the doors, the hooks, the CLI."""

from __future__ import annotations

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    from paneboard.listener.cli import main as _main

    return _main(argv)
