"""The model stand-in for Hermes Agent 0.19.0, whose shell tool is `terminal`
(shell_stand_in.py).

Run as `python -m testing.hermes_stand_in PORT LOG`.
"""

from __future__ import annotations

from testing import shell_stand_in, stand_in

if __name__ == "__main__":
    stand_in.serve(shell_stand_in.handler("terminal", lambda command: {"command": command}))
