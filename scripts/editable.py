"""The editable install, as `make compile` keeps it (run with the venv's python).

    python scripts/editable.py check          exit 1 unless every package imports from its folder
    python scripts/editable.py typing DIR     DIR/paneboard: links to root/'s files and each folder

setuptools' editable finder maps `paneboard` to `root/` and each `paneboard.X` to the folder X
(setup.py's `PACKAGE_DIR`), so a module added to a folder imports with no reinstall. A top-level
folder added since the install, or an install of another kind (the links of a strict one), is
not where setup.py says: `check` fails and `make compile` installs again. mypy does not run the
finder; it reads the packages through DIR (pyproject.toml's `mypy_path`), whose links are to the
folders themselves, so a new module is seen there too.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))  # setup.py, the one list of packages (importing it builds nothing)

from setup import PACKAGE_DIR


def misplaced() -> list[str]:
    """Each package that does not import from its own folder, with where it does."""
    wrong = []
    for name, folder in sorted(PACKAGE_DIR.items()):
        spec = importlib.util.find_spec(name)
        where = list(spec.submodule_search_locations or []) if spec else []
        if where != [str(HERE / folder)]:
            wrong.append(f"{name}: {where or 'not installed'} (should be {HERE / folder})")
    return wrong


def link_typing_tree(out: Path) -> None:
    """*out*/paneboard: a link to each file of root/ and to each installed folder."""
    tree = out / "paneboard"
    if tree.exists() or tree.is_symlink():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    for path in sorted(p for p in (HERE / "root").iterdir() if p.is_file()):
        (tree / path.name).symlink_to(path)
    for name, folder in PACKAGE_DIR.items():
        if name != "paneboard":
            (tree / name.removeprefix("paneboard.")).symlink_to(HERE / folder)


def main(argv: list[str]) -> int:
    if argv == ["check"]:
        wrong = misplaced()
        for line in wrong:
            print(f"editable install: {line}", file=sys.stderr)
        return 1 if wrong else 0
    if len(argv) == 2 and argv[0] == "typing":
        link_typing_tree(Path(argv[1]))
        return 0
    print("usage: python scripts/editable.py check | typing DIR", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
