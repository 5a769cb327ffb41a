"""Imports go listener -> state -> protocol, never back (STYLE.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

ALLOWED = {"protocol": set(), "state": {"protocol"}, "listener": {"protocol", "state"}}


def _room(module: str) -> str:
    """`paneboard.state.log` -> `state`; anything else -> its top-level name."""
    parts = module.split(".")
    return parts[1] if parts[0] == "paneboard" and len(parts) > 1 else parts[0]


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            roots |= {_room(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(_room(node.module))
    return roots


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_imports_only_go_down(package: str) -> None:
    """No module imports a package above its own layer."""
    ours = set(ALLOWED)
    bad = {
        str(path.relative_to(ROOT)): sorted((_imported_roots(path) & ours) - ALLOWED[package] - {package})
        for path in (ROOT / package).rglob("*.py")
    }
    assert {} == {k: v for k, v in bad.items() if v}


def test_protocol_does_no_io() -> None:
    """protocol imports nothing that reads files, sockets, processes or the clock."""
    forbidden = {"os", "io", "socket", "subprocess", "time", "pathlib", "anyio", "asyncio"}
    used = {str(p.relative_to(ROOT)): sorted(_imported_roots(p) & forbidden) for p in (ROOT / "protocol").rglob("*.py")}
    assert {} == {k: v for k, v in used.items() if v}
