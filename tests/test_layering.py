"""Imports go one way, down: each layer imports only the layers below it, never one above.

| layer | holds | may import |
| --- | --- | --- |
| protocol | the wire: posts, ids, names, the vocabulary, compose | nothing of ours |
| state | the log, stores, fold, locks, checkpoints, paths | protocol |
| listener | the listener proper (listen, view, doors/) and the context | protocol, state |
| listener.hooks | what the agents' hooks run, and their settings files | + listener |
| listener.cli | the parser and one module per group of commands | + listener.hooks |
| listener.top | `paneboard top` (Textual): the parser names it, never imports it | + listener.cli |
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import ROOT

ALLOWED = {
    "protocol": set(),
    "state": {"protocol"},
    "listener": {"protocol", "state"},
    "listener.hooks": {"protocol", "state", "listener"},
    "listener.cli": {"protocol", "state", "listener", "listener.hooks"},
    "listener.top": {"protocol", "state", "listener", "listener.hooks", "listener.cli"},
}
# `python -m paneboard` (and, for scripts written before it, `python -m paneboard.listener`) runs
# the command line; the root package holds nothing else.
ENTRY_POINTS = {"root/__main__.py", "listener/__main__.py"}


def _layer(module: str) -> str | None:
    """`paneboard.listener.cli.parser` -> `listener.cli`; None for what is not ours."""
    parts = module.split(".")
    if parts[0] != "paneboard" or len(parts) < 2:
        return None
    for size in (3, 2):
        name = ".".join(parts[1:size])
        if name in ALLOWED:
            return name
    return None


def _layer_of(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    return _layer("paneboard." + ".".join(rel.parts)) or ""


def _imported_layers(path: Path) -> set[str]:
    layers = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            layers |= {_layer(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            layers.add(_layer(node.module))
            layers |= {_layer(f"{node.module}.{alias.name}") for alias in node.names}
    return {r for r in layers if r}


@pytest.mark.parametrize("package", ["protocol", "state", "listener"])
def test_imports_only_go_down(package: str) -> None:
    """No module imports a layer above its own; relative imports are not used."""
    bad = {}
    for path in (ROOT / package).rglob("*.py"):
        if str(path.relative_to(ROOT)) in ENTRY_POINTS:
            continue
        layer = _layer_of(path)
        upward = _imported_layers(path) - ALLOWED[layer] - {layer}
        if upward:
            bad[str(path.relative_to(ROOT))] = sorted(upward)
    assert {} == bad


def test_no_relative_imports() -> None:
    """Absolute imports only, so a module's layer is visible in every import line."""
    relative = [
        str(path.relative_to(ROOT))
        for package in ("protocol", "state", "listener")
        for path in (ROOT / package).rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.level
    ]
    assert [] == relative


def test_protocol_does_no_io() -> None:
    """protocol imports nothing that reads files, sockets, processes or the clock."""
    forbidden = {"os", "io", "socket", "subprocess", "time", "pathlib", "anyio", "asyncio"}
    used = {}
    for path in (ROOT / "protocol").rglob("*.py"):
        roots = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                roots |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                roots.add(node.module.split(".")[0])
        if roots & forbidden:
            used[str(path.relative_to(ROOT))] = sorted(roots & forbidden)
    assert {} == used
