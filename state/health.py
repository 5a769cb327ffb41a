"""One line of `doctor`: what a store, an agent or the command itself found on a look."""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

__all__ = ["Check", "Level"]

Level: TypeAlias = Literal["ok", "warn", "fail"]


class Check(msgspec.Struct, frozen=True):
    """One line of `doctor`: *level*, what was looked at (*what*: ``board``, ``home``, an
    agent's kind, ...) and one line saying what was found (*detail*)."""

    level: Level
    what: str
    detail: str
