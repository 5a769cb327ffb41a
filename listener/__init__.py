"""The running process: the listener (`listen`), the doors, the context; the hooks and the CLI.

Rooms (tests/test_layering.py keeps them so): `paneboard.listener` itself holds the listener
proper and the context every command resolves; `hooks/` what agents' hooks run; `cli/` the
parser and one module per group of commands.
"""

from __future__ import annotations

__all__: list[str] = []
