"""The packages are found, not listed: every folder of the tree beside this file that holds an
`__init__.py` (the tests, their counterparts in `testing/` and the benchmarks aside) is
installed under the one namespace `paneboard.*`. This is the one list: the Makefile, the layering
test and the wheel test read `TOPS` from here (`import setup` runs no build).

The repository keeps them as top-level folders (`protocol/`, `state/`, `listener/`, …);
installed, `protocol/` is `paneboard.protocol`, and `root/` is `paneboard` itself (a folder named
`paneboard/` in the checkout would hide the installed packages from code run in the checkout).
The editable install (`make compile`) maps each `paneboard.X` to the folder X itself, so a module
added to a folder imports at once; only a new top-level folder needs `make compile` again.
Everything else about the build is in pyproject.toml.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
NOT_INSTALLED = {"tests", "testing", "bench", "root"}
# The installed top-level folders, `protocol` … `top` (`root` is the package `paneboard` itself).
TOPS = sorted(
    p.name for p in HERE.iterdir() if (p / "__init__.py").is_file() and p.name not in NOT_INSTALLED
)
PACKAGES = ["paneboard"] + [
    "paneboard." + ".".join(init.parent.relative_to(HERE).parts)
    for top in TOPS
    for init in sorted((HERE / top).rglob("__init__.py"))
]
PACKAGE_DIR = {"paneboard": "root", **{f"paneboard.{top}": top for top in TOPS}}

if __name__ == "__main__":  # as setuptools runs it (pip, `python -m build`)
    from setuptools import setup

    setup(packages=PACKAGES, package_dir=PACKAGE_DIR)
