"""The tests' warm start (testing/forkserver.py): each command a process of its own, as a fresh
one would be, and no module of the package that reads its environment when imported."""

from __future__ import annotations

import ast
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.forkserver import ForkServer, WarmProcess
from testing.helpers import ROOT, cli_env, package_modules, run_cli, wait_until


@pytest.fixture(scope="module")
def server() -> Iterator[ForkServer]:
    found = ForkServer()
    yield found
    found.close()


class _ImportTime(ast.NodeVisitor):
    """Reads of os.environ or os.getenv that run when the module is imported: not in the body
    of a function or a lambda (their decorators and defaults do run)."""

    def __init__(self) -> None:
        self.lines: list[int] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for part in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
            if part is not None:
                self.visit(part)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for part in [*node.args.defaults, *node.args.kw_defaults]:
            if part is not None:
                self.visit(part)

    def visit_Call(self, node: ast.Call) -> None:
        if ast.unparse(node.func) in ("os.getenv", "os.environ.get", "os.environ.copy"):
            self.lines.append(node.lineno)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if ast.unparse(node.value) == "os.environ":
            self.lines.append(node.lineno)
        self.generic_visit(node)


def _import_time_reads(tree: ast.Module) -> list[int]:
    seen = _ImportTime()
    seen.visit(tree)
    return seen.lines


def test_no_module_the_server_loads_reads_the_environment_when_imported() -> None:
    """A child forked from the server would see the server's value (`top` and the MCP server
    are not loaded ahead: they may)."""
    read = {
        inside: lines
        for inside, path in package_modules()
        if not inside.startswith(("top/", "mcpserver/"))
        if (lines := _import_time_reads(ast.parse(path.read_text())))
    }
    assert {} == read


def test_a_warm_command_has_its_own_environment_folder_stdin_and_exit(
    server: ForkServer, home: Path, tmp_path: Path
) -> None:
    env = cli_env(home, PANEBOARD_AGENT="carol")
    os.chdir(tmp_path)
    try:
        code, out, err = server.run(["post", "--to", "bob", "-"], env, b"from stdin", 10)
        installed = server.run(["hook", "install", "claude"], env, None, 10)  # into the folder
    finally:
        os.chdir(ROOT)
    assert (0, b"") == (code, err)
    shown = run_cli(home, "log", "--json").stdout
    assert f'"id":"{out.decode().strip()}"' in shown
    assert '"sender":"carol"' in shown and '"body":"from stdin"' in shown
    assert 0 == installed[0]
    assert (tmp_path / ".claude" / "settings.local.json").is_file()
    code, _, err = server.run(["bogus"], env, None, 10)
    assert 2 == code
    assert err.decode().startswith("paneboard: argument COMMAND: invalid choice: 'bogus'")


def test_warm_and_fresh_say_the_same(home: Path) -> None:
    prompt = run_cli(home, "post", "--as", "alice", "--to", "bob", "hello").stdout.strip()
    warm = run_cli(home, "status", prompt)
    fresh = run_cli(home, "status", prompt, fresh=True)
    assert (fresh.returncode, fresh.stdout, fresh.stderr) == (
        warm.returncode,
        warm.stdout,
        warm.stderr,
    )


def test_a_warm_process_is_signalled_and_its_death_reported(server: ForkServer, home: Path) -> None:
    proc = server.start(["listen", "--as", "bob", "--door", "stdout"], cli_env(home))
    assert isinstance(proc, WarmProcess)
    wait_until(lambda: "listening via" in proc.stderr.readline(), "the listener's line")
    assert None is proc.poll()
    proc.send_signal(signal.SIGKILL)
    assert -signal.SIGKILL == proc.wait(timeout=10)
    follows = server.start(["log", "--follow"], cli_env(home))
    with pytest.raises(subprocess.TimeoutExpired):
        follows.wait(timeout=0.3)
    follows.terminate()  # `log --follow` ends cleanly on SIGTERM, as in a fresh process
    assert 0 == follows.wait(timeout=10)
    for stream in (proc.stdout, proc.stderr, follows.stdout, follows.stderr):
        stream.close()
