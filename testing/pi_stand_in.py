"""The model stand-in for pi 0.73.1, whose shell tool is `bash` (shell_stand_in.py).

Run as `python -m testing.pi_stand_in PORT LOG`.
"""

from __future__ import annotations

from testing import shell_stand_in, stand_in

if __name__ == "__main__":
    stand_in.serve(shell_stand_in.handler("bash", lambda command: {"command": command}))
