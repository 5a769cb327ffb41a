"""What lives on disk: board logs, the fold of posts into board state, paths, locks.

Names are imported on first use (PEP 562), so `paneboard post` loads only what it needs.
"""

from __future__ import annotations

from paneboard.protocol.lazy import lazy_attributes

_WHERE = {
    "append_payloads": "append",
    "BoardPaths": "paths",
    "open_home": "paths",
    "default_board": "paths",
    "LogReader": "log",
    "read_posts": "log",
    "append_posts": "log",
    "BoardState": "fold",
    "fold": "fold",
    "apply": "fold",
    "open_for": "fold",
}
__all__ = [
    "BoardPaths",
    "BoardState",
    "LogReader",
    "append_payloads",
    "append_posts",
    "apply",
    "default_board",
    "fold",
    "open_for",
    "open_home",
    "read_posts",
]


__getattr__ = lazy_attributes("paneboard.state", _WHERE)
