"""One home per idea: the names that were once spelled in several modules are defined in one,
and the paths that once had copies go through it (trio's export test, for our own names)."""

from __future__ import annotations

import ast

from testing.helpers import package_modules


def _definitions() -> dict[str, list[str]]:
    """name -> the modules defining it at their top level (a class, a function or an alias)."""
    found: dict[str, list[str]] = {}
    for where, path in package_modules():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef):
                names = [node.name]
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
            else:
                continue
            for name in names:
                found.setdefault(name, []).append(where)
    return found


def test_a_doctor_line_and_its_level_are_defined_once() -> None:
    """`Check` and `Level` live in state/health.py alone: the stores' health, the agents'
    checks and `doctor`'s own lines are one shape."""
    found = _definitions()
    assert (["state/health.py"], ["state/health.py"]) == (found["Check"], found["Level"])
    assert "Health" not in found


def test_every_new_posts_header_is_built_in_one_place() -> None:
    """Only protocol/ids.py's `header` makes a post id from a clock and entropy: no module of
    the package calls `new_id` but it."""
    callers = set()
    for where, path in package_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "new_id":
                callers.add(where)
    assert {"protocol/ids.py"} == callers
