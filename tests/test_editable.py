"""The editable install of a checkout (`make compile`): each package imports from its own folder,
so a module added to a folder imports with no reinstall, and the packages are setup.py's one list.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import setup
from testing.helpers import ROOT


def test_every_package_imports_from_its_own_folder() -> None:
    """`paneboard.state` is the folder state/ itself (not links made at install time), so a
    module added there is found by the import system as it is."""
    where = {
        name: importlib.util.find_spec(name).submodule_search_locations  # type: ignore[union-attr]
        for name in setup.PACKAGE_DIR
    }
    assert where == {name: [str(ROOT / folder)] for name, folder in setup.PACKAGE_DIR.items()}
    assert importlib.import_module("paneboard.state.fold").__file__ == str(ROOT / "state/fold.py")


def test_the_check_fails_for_a_package_installed_elsewhere(tmp_path: Path) -> None:
    """`make compile` installs again when `scripts/editable.py check` fails: for a package that
    imports from anywhere but its folder (here the strict install's links), it does."""
    links = tmp_path / "links" / "paneboard"
    shutil.copytree(ROOT / "root", links, ignore=shutil.ignore_patterns("__pycache__"))
    (links / "state").symlink_to(ROOT / "state")
    code = (
        "import runpy, sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in"
        f" repr(f)]; sys.path.insert(0, {str(links.parent)!r}); sys.argv = ['editable.py',"
        f" 'check']; runpy.run_path({str(ROOT / 'scripts/editable.py')!r}, run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1
    assert f"paneboard: ['{links}'] (should be {ROOT / 'root'})" in done.stderr


@pytest.mark.slow
def test_a_module_added_to_a_copy_imports_with_no_reinstall(tmp_path: Path) -> None:
    """A copy of the checkout (the build files, root/ and protocol/), installed editable as
    `make compile` does: a module written into protocol/ afterwards imports at once."""
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, copy / name)
    for folder in ("root", "protocol"):
        shutil.copytree(ROOT / folder, copy / folder, ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    pip = [str(venv / "bin/python"), "-m", "pip", "install", "-q", "--no-deps"]
    subprocess.run([*pip, "-e", str(copy)], check=True, env=env, timeout=300)
    (copy / "protocol" / "added_since.py").write_text('"""Added after the install."""\n\nX = 42\n')
    done = subprocess.run(
        [str(venv / "bin/python"), "-c", "from paneboard.protocol.added_since import X; print(X)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "42\n"), done.stderr
