"""Package attributes imported on first use (PEP 562),
so `paneboard post` loads only what it needs."""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing's import is a cost `paneboard post` does not pay
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def lazy_attributes(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``package.where[name]`` when *name* is first used."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{where[name]}"), name)

    return __getattr__


def require_extra(module: str, extra: str, feature: str) -> None:
    """Refuse in one line, naming the install that fixes it, when an extra's *module* is missing."""
    from importlib.util import find_spec

    from paneboard.protocol.errors import MissingExtra

    if find_spec(module) is None:
        raise MissingExtra(module, extra, feature)
