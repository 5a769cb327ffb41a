"""A `paneboard` command imports the one agent's module it is for: `hook stop --agent claude`
runs with Claude Code's record alone, `listen --door codex-queue` parses with Codex's, a door
of the listener's own or a command that names no agent with none; the help, and a door's
option given with another door, still read every record."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from paneboard.agents import RECORDS
from testing.helpers import cli_env

# Runs `paneboard ARGS…` as the console script does, then prints the agents' records whose
# modules it imported (on stderr, after the command's own output).
SCRIPT = """
import atexit, sys
def loaded():
    records = {RECORDS}
    print(json.dumps(sorted(m.rsplit(".", 1)[1] for m in sys.modules
                            if m.rsplit(".", 1)[0] == "paneboard.agents"
                            and m.rsplit(".", 1)[1] in records)), file=sys.stderr)
import json
atexit.register(loaded)
from paneboard.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _imported(tmp_path: Path, *args: str, stdin: str = "") -> tuple[int, list[str], str]:
    """The exit code, the agents' modules imported, and stderr's other lines."""
    script = SCRIPT.replace("{RECORDS}", repr(sorted(RECORDS)))
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        input=stdin,
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=cli_env(tmp_path / "home"),
        timeout=30,
    )
    *rest, last = done.stderr.splitlines()
    return done.returncode, json.loads(last), "\n".join(rest)


@pytest.mark.parametrize("kind", ["claude", "codex", "gemini"])
def test_a_hook_imports_its_own_agent_alone(tmp_path: Path, kind: str) -> None:
    hook_input = json.dumps({"session_id": "s1", "cwd": str(tmp_path)})
    for action in ("session-start", "stop", "session-end"):
        code, imported, err = _imported(tmp_path, "hook", action, "--agent", kind, stdin=hook_input)
        assert (0, "") == (code, err), action
        assert [kind] == imported, action


def test_a_hook_naming_no_agent_imports_the_default_one(tmp_path: Path) -> None:
    code, imported, _ = _imported(tmp_path, "hook", "stop", stdin="{}")
    assert (0, ["claude"]) == (code, imported)


@pytest.mark.parametrize(
    ("words", "kinds"),
    [
        (["listen", "--door", "codex-queue", "--thread", "t1"], ["codex"]),
        (["listen", "--door=pi-extension", "--socket", "/nowhere"], ["pi"]),
        (["listen", "--door", "qoder-inbox"], ["claude", "qoder"]),  # built on Claude Code's
        (["listen", "--door", "stdout"], []),
        (["listen", "--door", "exec", "--", "--socket"], []),
        (["post", "--to", "bob", "hi"], []),
        (["open"], []),
    ],
)
def test_a_parse_reads_the_records_its_words_name(words: list[str], kinds: list[str]) -> None:
    script = (
        "import sys; from paneboard.cli.parser import parse; parse(sys.argv[1:]);"
        f"records = {sorted(RECORDS)!r};"
        "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.rsplit('.', 1)[0] =="
        " 'paneboard.agents' and m.rsplit('.', 1)[1] in records))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *words], capture_output=True, text=True, check=True
    )
    assert repr(kinds) == done.stdout.strip()


def test_help_and_a_door_option_given_elsewhere_read_every_record(tmp_path: Path) -> None:
    code, imported, _ = _imported(tmp_path, "listen", "--help")
    assert (0, sorted(RECORDS)) == (code, imported)
    code, imported, _ = _imported(tmp_path, "hook", "--help")
    assert (0, sorted(RECORDS)) == (code, imported)
    code, imported, err = _imported(tmp_path, "listen", "--door", "stdout", "--thread", "t1")
    assert sorted(RECORDS) == imported
    assert code != 0
    assert "paneboard: --thread goes with --door codex-queue, not --door stdout" == err
