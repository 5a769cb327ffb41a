"""Imports go one way, down: each layer imports only the layers below it, never one above.

| layer | holds | may import |
| --- | --- | --- |
| protocol | the wire: posts, ids, names, the vocabulary, compose | nothing of ours |
| state | the log, stores, fold, locks, checkpoints, paths | protocol |
| board | the operations every front end shares, the view of a board, the context | + state |
| listener | the listener proper: listen, seen, doors/ | + board |
| agents | one module per agent: hook files, hook input, door, `seen` source, checks | + listener |
| hooks | what the hooks run: session start and end, the Stop-hook door | + agents |
| cli, mcpserver, top | front ends: parse, call `board/`, show; never each other | + hooks |

Inside `state/`, each concern is a sub-package: `trust/` (keys, seals, verdicts, policy) knows no
store; the file log (`filelog/`) and NATS (`nats/`) never import each other; `panes/` (a pane's
own files) reads the file log's regular-file opener. The flat modules (the store interface, the
fold, paths, files, processes, the watch) are open to all of them.

The front ends name each other only as strings (the parser runs `top` and `mcp` by name).
The MCP server is `mcpserver/`: a folder `mcp/` in the checkout would hide the MCP SDK (`mcp`)
from any code run there.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import setup
from testing.helpers import ROOT

_ORDER = ("protocol", "state", "board", "listener", "agents", "hooks")
FRONT_ENDS = ("cli", "mcpserver", "top")
ALLOWED = {layer: set(_ORDER[:i]) for i, layer in enumerate(_ORDER)} | {
    front: set(_ORDER) for front in FRONT_ENDS
}
# `python -m paneboard` runs the command line; the root package holds nothing else.
ENTRY_POINTS = {"root/__main__.py"}
PACKAGES = setup.TOPS  # the installed folders, as setup.py finds them


def test_every_installed_package_has_a_layer() -> None:
    """A folder added beside the others is placed in the order before anything may import it."""
    assert sorted(ALLOWED) == PACKAGES


# Each concern of state/, with the other concerns it may import.
STATE_CONCERNS = {
    "trust": set(),
    "filelog": {"trust"},
    "panes": {"trust", "filelog"},
    "nats": {"trust", "panes"},
}


def _layer(module: str) -> str | None:
    """`paneboard.cli.parser` -> `cli`; None for what is not ours."""
    parts = module.split(".")
    if parts[0] != "paneboard" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in ALLOWED else None


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


@pytest.mark.parametrize("package", PACKAGES)
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


def _imported_concerns(path: Path) -> set[str]:
    """The concerns of state/ (its sub-packages) that the module at *path* imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        for parts in (name.split(".") for name in names):
            if parts[:2] == ["paneboard", "state"] and len(parts) > 2:
                found.add(parts[2])
    return found & set(STATE_CONCERNS)


def test_every_sub_package_of_state_has_its_rule() -> None:
    """A concern added to state/ says which others it may import before it imports any."""
    folders = [p.name for p in (ROOT / "state").iterdir() if (p / "__init__.py").is_file()]
    assert sorted(STATE_CONCERNS) == sorted(folders)


@pytest.mark.parametrize("concern", sorted(STATE_CONCERNS))
def test_a_concern_of_state_imports_only_the_concerns_it_may(concern: str) -> None:
    """trust/ imports no store; the file log, NATS and panes only what STATE_CONCERNS allows."""
    bad = {}
    for path in (ROOT / "state" / concern).rglob("*.py"):
        other = _imported_concerns(path) - STATE_CONCERNS[concern] - {concern}
        if other:
            bad[str(path.relative_to(ROOT))] = sorted(other)
    assert {} == bad


def test_the_file_log_and_nats_never_import_each_other() -> None:
    """Two stores side by side: what both need (the fold, the limit, seals) lives below them."""
    crossing = {
        str(path.relative_to(ROOT)): sorted(_imported_concerns(path) & {"filelog", "nats"})
        for concern, other in (("filelog", "nats"), ("nats", "filelog"))
        for path in (ROOT / "state" / concern).rglob("*.py")
        if other in _imported_concerns(path)
    }
    assert {} == crossing


def _imported_tops(folder: str) -> dict[str, set[str]]:
    """Each module of *folder* (a top-level folder of the checkout), with the top-level names it
    imports."""
    found = {}
    for path in (ROOT / folder).rglob("*.py"):
        tops = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                tops |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                tops.add(node.module.split(".")[0])
        found[str(path.relative_to(ROOT))] = tops
    return found


def test_the_benchmarks_and_the_counterparts_never_import_the_tests() -> None:
    """bench/ and testing/ (the counterparts both share) never import tests/; no installed
    package imports any of the three, which the wheel does not hold."""
    bad = {}
    for folder in ("bench", "testing", *PACKAGES, "root"):
        banned = {"tests"} if folder in ("bench", "testing") else {"tests", "testing", "bench"}
        for module, tops in _imported_tops(folder).items():
            if tops & banned:
                bad[module] = sorted(tops & banned)
    assert {} == bad


def test_no_relative_imports() -> None:
    """Absolute imports only, so a module's layer is visible in every import line."""
    relative = [
        str(path.relative_to(ROOT))
        for package in PACKAGES
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


def test_board_operations_never_print() -> None:
    """board/ returns results; the front ends show them (no print, no sys.stdout or stderr)."""
    shown = {
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in (ROOT / "board").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if (isinstance(node, ast.Name) and node.id == "print")
        or (isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr"))
    }
    assert set() == shown
