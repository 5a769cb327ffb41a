"""Imports a command pays for only when it runs: the check that an extra is installed.

`TYPE_CHECKING = False` stands where `typing` would be imported, in this module and the others
on `paneboard post`'s path: typing's import is a cost that command does not pay.
"""

from __future__ import annotations


def require_extra(module: str, extra: str, feature: str) -> None:
    """Refuse in one line, naming the install that fixes it, when an extra's *module* is missing."""
    from importlib.util import find_spec

    from paneboard.protocol.errors import MissingExtra

    if find_spec(module) is None:
        raise MissingExtra(module, extra, feature)
