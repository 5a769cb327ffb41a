"""A store's health, for `doctor`."""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

__all__ = ["Health", "Level"]

Level: TypeAlias = Literal["ok", "warn", "fail"]


class Health(msgspec.Struct, frozen=True):
    """What a store found on a look at itself: *level* and one line saying why."""

    level: Level
    text: str
