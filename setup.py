"""The packages are found, not listed: every folder of the tree beside this file that holds an
`__init__.py` (the tests, their counterparts in `testing/` and the benchmarks aside) is
installed under the one namespace `paneboard.*`.

The repository keeps them as top-level folders (`protocol/`, `state/`, `listener/`, …);
installed, `protocol/` is `paneboard.protocol`, and `root/` is `paneboard` itself (a folder named
`paneboard/` in the checkout would hide the installed packages from code run in the checkout).
Everything else about the build is in pyproject.toml.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent
NOT_INSTALLED = {"tests", "testing", "bench", "root"}
TOPS = sorted(
    p.name for p in HERE.iterdir() if (p / "__init__.py").is_file() and p.name not in NOT_INSTALLED
)
PACKAGES = ["paneboard"] + [
    f"paneboard.{name}"
    for top in TOPS
    for name in [top, *(f"{top}.{sub}" for sub in find_packages(top))]
]

setup(
    packages=PACKAGES,
    package_dir={"paneboard": "root", **{f"paneboard.{top}": top for top in TOPS}},
)
