"""The model stand-in for Factory Droid 0.225.2, whose shell tool is `Execute`, which also wants
a summary and a risk level (shell_stand_in.py).

Run as `python -m tests.real.droid_stand_in PORT LOG`.
"""

from __future__ import annotations

from typing import Any

from testing import shell_stand_in, stand_in


def execute(command: str) -> dict[str, Any]:
    return {
        "summary": "Answer the paneboard prompt",
        "command": command,
        "riskLevelReason": "It records an answer on the local board.",
        "riskLevel": "low",
    }


if __name__ == "__main__":
    stand_in.serve(shell_stand_in.handler("Execute", execute))
