"""A cloned repository with planted symlinks: no `hook install|uninstall` writes outside it."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from testing.helpers import run_cli

# Every `hook` command that writes in a project, with the files it writes (or removes).
COMMANDS = {
    "install claude": (
        ["install", "claude", "--mcp"],
        [".claude/settings.local.json", ".mcp.json"],
    ),
    "uninstall claude": (["uninstall", "claude"], [".claude/settings.local.json", ".mcp.json"]),
    "install codex": (
        ["install", "codex", "--mcp", "--trust"],
        [".codex/hooks.json", ".codex/config.toml"],
    ),
    "uninstall codex": (["uninstall", "codex"], [".codex/hooks.json", ".codex/config.toml"]),
    "install gemini": (["install", "gemini"], [".gemini/settings.json"]),
    "uninstall gemini": (["uninstall", "gemini"], [".gemini/settings.json"]),
    "install copilot": (["install", "copilot"], [".github/hooks/paneboard.json"]),
    "uninstall copilot": (["uninstall", "copilot"], [".github/hooks/paneboard.json"]),
    "install opencode": (["install", "opencode"], [".opencode/plugins/paneboard.js"]),
    "uninstall opencode": (["uninstall", "opencode"], [".opencode/plugins/paneboard.js"]),
}
# The fixed temporary names paneboard once wrote beside a target before renaming it.
OLD_TEMPS = [
    "..mcp.json.paneboard-tmp",
    ".codex/.config.toml.paneboard-tmp",
    ".opencode/plugins/.paneboard.js.paneboard-tmp",
]
RC_TEXT = b'# victim rc file\nexport PS1="$ "\n'


def _digest(folder: Path) -> dict[str, str]:
    """Every file under *folder* (links not followed), by its content's hash."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath, name)
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                out[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                out[rel] = "folder"
    return out


def _clone(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A repository as a clone leaves it, carrying its own agent files with a `$(…)` in them
    and paneboard's entries (so uninstall edits them); a victim rc file and folder beside it."""
    repo, outside = tmp_path / "evilrepo", tmp_path / "outside"
    outside.mkdir()
    (outside / "victim-bashrc").write_bytes(RC_TEXT)
    (outside / "paneboard.js").write_text("// paneboard: the OpenCode door.\n")
    (outside / "settings.json").write_text('{"hooks": {}}\n')
    for rel in (".codex", ".claude", ".gemini", ".github/hooks", ".opencode/plugins"):
        (repo / rel).mkdir(parents=True)
    pwn = f"$(touch {tmp_path}/PWNED)"
    entry = {"type": "stdio", "command": "paneboard", "args": ["mcp"]}
    mcp = {"note": pwn, "mcpServers": {"paneboard": entry}}
    (repo / ".mcp.json").write_text(json.dumps(mcp))
    toml = f'note = "{pwn}"\n\n[mcp_servers.paneboard]\ncommand = "paneboard"\nargs = ["mcp"]\n'
    (repo / ".codex/config.toml").write_text(toml)
    return repo, outside, tmp_path / "codex-home"


def _run(home: Path, repo: Path, codex_home: Path, words: list[str]) -> tuple[int, str, str]:
    done = run_cli(home, "hook", *words, "--project", str(repo), CODEX_HOME=str(codex_home))
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_planted_old_temporary_names_are_never_written_through(
    home: Path, tmp_path: Path, command: str
) -> None:
    """With a link to an rc file under each fixed temporary name, the command writes its files
    in the project and the rc file stays as it was."""
    repo, outside, codex_home = _clone(tmp_path)
    for rel in OLD_TEMPS:
        (repo / rel).symlink_to(outside / "victim-bashrc")
    before = _digest(outside)
    words, files = COMMANDS[command]
    rc, _, err = _run(home, repo, codex_home, words)
    assert (0, "") == (rc, err)
    assert before == _digest(outside)
    assert not (tmp_path / "PWNED").exists()
    for rel in OLD_TEMPS:
        assert outside / "victim-bashrc" == (repo / rel).readlink()
    for rel in files:
        path = repo / rel
        assert not path.is_symlink()
        if path.exists():
            assert (path.stat().st_mode & 0o022) == 0


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("which", ["target", "folder"])
def test_a_planted_target_or_folder_link_is_refused_with_nothing_written(
    home: Path, tmp_path: Path, command: str, which: str
) -> None:
    """A command's file, or its folder, planted as a link out of the project: one line naming
    it, exit 1, nothing changed inside the project or out."""
    repo, outside, codex_home = _clone(tmp_path)
    words, files = COMMANDS[command]
    folder = next((repo / rel).parent for rel in files if "/" in rel)
    planted = repo / files[-1] if which == "target" else folder
    if which == "target":
        planted.unlink(missing_ok=True)
        planted.symlink_to(
            outside / ("victim-bashrc" if planted.suffix != ".js" else "paneboard.js")
        )
    else:
        for inside in planted.iterdir():
            inside.unlink()
        planted.rmdir()
        planted.symlink_to(outside, target_is_directory=True)
    before, inside_before = _digest(outside), _digest(repo)
    rc, out, err = _run(home, repo, codex_home, words)
    why = "is a symlink; paneboard does not write through it, nothing written"
    assert (1, "", f"paneboard: {planted} {why}\n") == (rc, out, err)
    assert (before, inside_before) == (_digest(outside), _digest(repo))
    assert not codex_home.exists()
    assert not (tmp_path / "PWNED").exists()
