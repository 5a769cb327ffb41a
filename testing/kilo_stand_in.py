"""The model stand-in for Kilo Code 7.7.9, whose shell tool is `bash` (shell_stand_in.py), which
also takes a description of the command.

Run as `python -m testing.kilo_stand_in PORT LOG`.
"""

from __future__ import annotations

from typing import Any

from testing import shell_stand_in, stand_in


def bash(command: str) -> dict[str, Any]:
    return {"command": command, "description": "Answer the paneboard prompt"}


if __name__ == "__main__":
    stand_in.serve(shell_stand_in.handler("bash", bash))
