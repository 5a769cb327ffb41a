"""What users install is what is tested: the built wheel, in a fresh venv, outside the checkout.

The rest of the suite runs on an editable install, which can hide a module the wheel lacks
(it did: `listener.hooks`). These tests build the wheel, install it into a new venv without
any extra, and run the commands a user runs, from a folder that is not the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import setup
from testing.helpers import ROOT

PACKAGES = tuple(setup.TOPS)  # protocol, state, …: installed as paneboard.protocol, …
ROOT_PACKAGE = "root"  # installed as `paneboard` itself: `python -m paneboard`


class Installed:
    """A venv holding only the wheel and its runtime dependencies."""

    def __init__(self, folder: Path, wheel: Path) -> None:
        self.folder, self.wheel = folder, wheel
        self.bin = folder / "venv" / "bin"
        self.home = folder / "home"
        self.cwd = folder / "work"
        self.cwd.mkdir()

    def run(
        self, *args: str, input: str | None = None, timeout: float = 60, **env: str
    ) -> subprocess.CompletedProcess[str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith(("PANEBOARD_", "PYTHON"))}
        base.update(PANEBOARD_HOME=str(self.home), PANEBOARD_BOARD="wheel", **env)
        return subprocess.run(
            [str(self.bin / "paneboard"), *args],
            input=input,
            capture_output=True,
            text=True,
            cwd=self.cwd,
            env=base,
            timeout=timeout,
            check=False,
        )


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    folder = tmp_path_factory.mktemp("wheel")
    clone = folder / "clone"  # the tracked files only, as a fresh clone has them (no build/)
    for name in _tracked():
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, clone / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(folder), str(clone)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = folder.glob("paneboard-*.whl")
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True, timeout=120)
    pip = [str(folder / "venv" / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)]
    subprocess.run(pip, check=True, capture_output=True, timeout=300)
    yield Installed(folder, wheel)


def _tracked() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return [name for name in listed.stdout.splitlines() if (ROOT / name).is_file()]


def _tree_files() -> set[str]:
    files = [name for name in _tracked() if not name.endswith((".md", ".txt"))]
    packages = {f"paneboard/{name}" for name in files if name.split("/")[0] in PACKAGES}
    root = {
        name.replace(ROOT_PACKAGE, "paneboard", 1) for name in files if name.startswith("root/")
    }
    return packages | root


def test_every_package_of_the_tree_is_found() -> None:
    """The folders installed (setup.py's one list) are exactly those holding an `__init__.py`, the
    tests, their counterparts (testing/) and the benchmarks aside: a new one is found without a
    list to keep."""
    tops = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    assert {*PACKAGES, ROOT_PACKAGE, "tests", "testing", "bench"} == tops


def test_the_wheel_holds_every_module_of_the_tree_and_no_other(installed: Installed) -> None:
    """The wheel's paneboard/ is exactly root/, protocol/, state/ and listener/: every module
    (and the OpenCode plugin), nothing left over from an earlier build."""
    names = {n for n in zipfile.ZipFile(installed.wheel).namelist() if n.startswith("paneboard/")}
    assert _tree_files() == names


def test_the_wheel_installs_nothing_but_paneboard(installed: Installed) -> None:
    """No top-level `protocol`, `state` or `listener` lands in a user's site-packages."""
    tops = {name.split("/")[0] for name in zipfile.ZipFile(installed.wheel).namelist()}
    assert {"paneboard"} == {t for t in tops if not t.endswith(".dist-info")}


def test_python_m_paneboard_runs_the_command_line(installed: Installed) -> None:
    """`python -m paneboard` is the command line, as the `paneboard` script is."""
    done = subprocess.run(
        [str(installed.bin / "python"), "-m", "paneboard", "--version"],
        capture_output=True,
        text=True,
        cwd=installed.cwd,
        timeout=60,
        check=False,
    )
    assert (0, "paneboard 0.1.0\n") == (done.returncode, done.stdout), done.stderr


def test_installed_round_trip(installed: Installed) -> None:
    """--version; post -> listen -> ack, from the installed command."""
    version = installed.run("--version")
    assert (0, "paneboard 0.1.0\n") == (version.returncode, version.stdout), version.stderr
    posted = installed.run("post", "--as", "alice", "--to", "bob", "hello from the wheel")
    assert 0 == posted.returncode, posted.stderr
    pid = posted.stdout.strip()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PANEBOARD_", "PYTHON"))}
    env.update(PANEBOARD_HOME=str(installed.home), PANEBOARD_BOARD="wheel")
    listener = subprocess.Popen(
        [str(installed.bin / "paneboard"), "listen", "--as", "bob", "--door", "stdout"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=installed.cwd,
    )
    try:
        assert listener.stdout is not None
        assert pid == json.loads(listener.stdout.readline())["id"]
    finally:
        listener.terminate()
        assert 0 == listener.wait(timeout=10)
        listener.stdout.close()  # type: ignore[union-attr]
    assert 0 == installed.run("ack", pid, "--as", "bob").returncode
    status = json.loads(installed.run("status", pid, "--json").stdout)
    assert "acked" == status["recipients"]["bob"]["stage"]


def test_installed_hooks_and_doctor(installed: Installed) -> None:
    """The agent integration runs from the wheel: install, session-start, stop, uninstall,
    doctor."""
    project = installed.folder / "project"
    project.mkdir()
    done = installed.run(
        "hook", "install", "--mode", "stop", "--as", "bob", "claude", "--project", str(project)
    )
    assert 0 == done.returncode, done.stderr
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert "Stop" in settings["hooks"]
    hook_input = json.dumps({"session_id": "s1", "cwd": str(project)})
    started = installed.run(
        "hook", "session-start", "--as", "bob", "--mode", "stop", input=hook_input
    )
    assert 0 == started.returncode, started.stderr
    assert "bob" in json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    pid = installed.run("post", "--as", "alice", "--to", "bob", "at your stop").stdout.strip()
    stopped = installed.run("hook", "stop", "--as", "bob", input=hook_input)
    assert 0 == stopped.returncode, stopped.stderr
    assert pid in json.loads(stopped.stdout)["reason"]
    doctor = installed.run("doctor", "--as", "bob")
    assert "internal error" not in doctor.stderr
    assert "Traceback" not in doctor.stderr
    removed = installed.run("hook", "uninstall", "claude", "--project", str(project))
    assert 0 == removed.returncode, removed.stderr
    assert "hooks" not in json.loads((project / ".claude" / "settings.local.json").read_text())


def test_top_without_the_extra_names_the_fix(installed: Installed) -> None:
    """Without Textual, `paneboard top` says in one line what to install."""
    done = installed.run("top")
    assert 1 == done.returncode
    assert (
        "paneboard: `paneboard top` needs the `tui` extra (textual is not installed): "
        "pip install 'paneboard[tui]'\n"
    ) == done.stderr


def test_mcp_without_the_extra_names_the_fix(installed: Installed) -> None:
    """Without the MCP SDK, `paneboard mcp` says in one line what to install."""
    done = installed.run("mcp", "--as", "bob", input="")
    assert (1, "") == (done.returncode, done.stdout)
    assert (
        "paneboard: `paneboard mcp` needs the `mcp` extra (mcp is not installed): "
        "pip install 'paneboard[mcp]'\n"
    ) == done.stderr


COMMANDS_ON_A_STORE = [
    ["post", "--to", "bob", "hi"],
    ["open"],
    ["ack", "0123456789ab"],
    ["answer", "0123456789ab", "x"],
    ["cancel", "0123456789ab"],
    ["status", "0123456789ab"],
    ["read", "0123456789ab"],
    ["log"],
    ["log", "--follow"],
    ["wait", "0123456789ab", "--timeout", "1"],
    ["ask", "--to", "bob", "hi", "--timeout", "1"],
    ["who"],
    ["listen", "--door", "stdout"],
    ["hook", "stop", "--as", "bob"],
]


@pytest.mark.parametrize("argv", COMMANDS_ON_A_STORE, ids=lambda argv: " ".join(argv[:2]))
def test_a_nats_store_without_the_extra_names_the_fix(
    installed: Installed, argv: list[str]
) -> None:
    """Without nats-py, every command given a NATS store says in one line what to install."""
    done = installed.run(*argv, "--store", "nats://127.0.0.1:4222", input="{}")
    assert 1 == done.returncode, done.stderr
    assert (
        "paneboard: a board on NATS (--store nats://…) needs the `nats` extra "
        "(nats is not installed): pip install 'paneboard[nats]'\n"
    ) == done.stderr
