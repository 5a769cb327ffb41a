"""paneboard: hand work between coding agents running side by side, through their own doors.

Installed, this folder (`root/` in the repository) is the package `paneboard` itself. The
packages beside it (`paneboard.protocol`, `paneboard.state`, `paneboard.board`, …) hold
everything; `python -m paneboard` runs the command line.
"""
