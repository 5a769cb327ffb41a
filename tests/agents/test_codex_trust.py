"""Codex's hook trust (agents/codex_trust.py): `hook install codex --trust` and `doctor`,
through the real command line, on real files."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from paneboard.agents.codex_trust import handler_hash
from testing.helpers import run_cli


def test_codex_hook_hash_is_codexs_own() -> None:
    """The trust hash Codex 0.169 wrote for one handler (event, command, timeout 30)."""
    handler = {
        "type": "command",
        "command": "/work/shared/real-clients/codex/hook-dump.sh Stop /tmp/clx/hk",
    }
    expected = "sha256:c843c245d40e9f1bbcae02a479a2eec4cbd521051d4210a05c33be4674c455a8"
    assert expected == handler_hash("Stop", {}, handler | {"timeout": 30})


def _install(home: Path, project: Path, codex_home: Path, *args: str) -> tuple[int, str, str]:
    env = {"CODEX_HOME": str(codex_home)}
    done = run_cli(home, "hook", "install", "codex", "--project", str(project), *args, **env)
    return done.returncode, done.stdout, done.stderr


def _trust_tables(config: Path) -> dict[str, str]:
    state = tomllib.loads(config.read_text())["hooks"]["state"]
    return {key: entry["trusted_hash"] for key, entry in state.items()}


def test_install_trust_writes_codexs_entries_once(home: Path, tmp_path: Path) -> None:
    """--trust writes one table per paneboard handler, keeps every other line, and a changed
    hook command replaces its hash instead of adding a second table."""
    project, codex_home = tmp_path / "proj", tmp_path / "ch"
    project.mkdir()
    codex_home.mkdir()
    config = codex_home / "config.toml"
    config.write_text(f'model = "m"\n\n[projects."{project}"]\ntrust_level = "trusted"\n')
    assert 0 == _install(home, project, codex_home, "--as", "bob", "--trust")[0]
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())
    [[handler]] = [g["hooks"] for g in hooks["hooks"]["SessionStart"]]
    key = f"{project}/.codex/hooks.json:session_start:0:0"
    assert {key: handler_hash("SessionStart", {}, handler)} == _trust_tables(config)
    assert config.read_text().startswith(
        f'model = "m"\n\n[projects."{project}"]\ntrust_level = "trusted"\n'
    )
    again = _install(home, project, codex_home, "--as", "bob", "--trust")
    assert (0, f"already trusted: 1 paneboard hook(s) in {config}") == (
        again[0],
        again[1].splitlines()[-1],
    )
    assert 0 == _install(home, project, codex_home, "--as", "carol", "--trust")[0]
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())
    [[handler]] = [g["hooks"] for g in hooks["hooks"]["SessionStart"]]
    assert {key: handler_hash("SessionStart", {}, handler)} == _trust_tables(config)
    assert 1 == config.read_text().count("[hooks.state.")


def test_uninstall_removes_the_trust_it_wrote_and_nothing_else(home: Path, tmp_path: Path) -> None:
    """`hook uninstall codex` drops paneboard's trust tables; the rest of config.toml, a table
    of another hook, and a key trusted for another command since, are kept as they were."""
    project, codex_home = tmp_path / "proj", tmp_path / "ch"
    project.mkdir()
    codex_home.mkdir()
    config = codex_home / "config.toml"
    theirs = '[hooks.state."/elsewhere/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:00"\n'
    before = f'model = "m"\n\n[projects."{project}"]\ntrust_level = "trusted"\n\n{theirs}'
    config.write_text(before)
    assert 0 == _install(home, project, codex_home, "--mode", "both", "--trust")[0]
    assert 3 == len(_trust_tables(config))
    env = {"CODEX_HOME": str(codex_home)}
    args = ("hook", "uninstall", "codex", "--project", str(project))
    done = run_cli(home, *args, **env)
    assert 0 == done.returncode, done.stderr
    assert f"removed the trust of 2 paneboard hook(s) from {config}" in done.stdout.splitlines()
    assert before == config.read_text()
    again = run_cli(home, *args, **env)
    assert (0, "") == (again.returncode, again.stderr)
    assert "trust" not in again.stdout
    assert before == config.read_text()

    assert 0 == _install(home, project, codex_home, "--as", "bob", "--trust")[0]
    key = f"{project}/.codex/hooks.json:session_start:0:0"
    other = config.read_text().replace(_trust_tables(config)[key], "sha256:11")
    config.write_text(other)  # trusted again by Codex for a command of somebody else's
    assert 0 == run_cli(home, *args, **env).returncode
    assert other == config.read_text()


def test_install_says_codex_will_ask_and_refuses_a_broken_config(
    home: Path, tmp_path: Path
) -> None:
    """Without --trust it says Codex will ask; a config that is not TOML is refused, untouched."""
    project, codex_home = tmp_path / "proj", tmp_path / "ch"
    project.mkdir()
    codex_home.mkdir()
    code, out, _ = _install(home, project, codex_home)
    assert 0 == code and '"Hooks need review"' in out and "codex_hooks" not in out
    assert f"Codex reads {project}/.codex/hooks.json only in a trusted project" in out
    (project / ".codex" / "hooks.json").unlink()
    config = codex_home / "config.toml"
    config.write_text("model = \n")
    code, out, err = _install(home, project, codex_home, "--trust")
    assert (1, "") == (code, out)
    assert err.startswith(f"paneboard: {config} is not valid TOML (") and err.count("\n") == 1
    assert ("model = \n", False) == (
        config.read_text(),
        (project / ".codex" / "hooks.json").exists(),
    )
    refused = run_cli(home, "hook", "install", "claude", "--project", str(project), "--trust")
    assert (1, "paneboard: --trust goes with `paneboard hook install codex or qwen`\n") == (
        refused.returncode,
        refused.stderr,
    )


def test_doctor_reports_untrusted_and_changed_codex_hooks(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hooks Codex has not trusted, a project it does not trust, hooks changed since trusted."""
    project, codex_home = tmp_path / "proj", tmp_path / "ch"
    project.mkdir()
    codex_home.mkdir()
    env = {"CODEX_HOME": str(codex_home)}
    assert 0 == _install(home, project, codex_home, "--mode", "both")[0]

    def trust_lines() -> list[str]:
        done = run_cli(home, "doctor", "--as", "bob", **env)
        return [ln for ln in done.stdout.splitlines() if ln.split()[1] == "trust"]

    monkeypatch.chdir(project)
    config = codex_home / "config.toml"
    fix = "Codex asks to review them at its next start, or: hook install codex --trust"
    untrusted = f"codex: paneboard hooks not trusted in {config}: "
    untrusted += f"session_start untrusted, stop untrusted ({fix})"
    not_project = (
        f"codex: {project} is not a trusted project: Codex skips its {project}/.codex/hooks.json"
    )
    assert [f"warn  trust    {untrusted}", f"warn  trust    {not_project}"] == trust_lines()
    config.write_text(f'[projects."{project}"]\ntrust_level = "trusted"\n')
    assert 0 == _install(home, project, codex_home, "--mode", "both", "--trust")[0]
    assert [f"ok    trust    codex: paneboard's 2 hook(s) trusted in {config}"] == trust_lines()
    path = project / ".codex" / "hooks.json"
    path.write_text(path.read_text().replace("--mode both", "--mode both --cooldown 5"))
    changed = f"codex: paneboard hooks not trusted in {config}: "
    changed += f"session_start changed, stop changed ({fix})"
    assert [f"warn  trust    {changed}"] == trust_lines()


def test_a_project_path_with_a_del_character_is_trusted_whole(home: Path, tmp_path: Path) -> None:
    """A DEL in the project's path is escaped in config.toml: hooks and trust both written."""
    project, codex_home = tmp_path / "odd\x7fproj", tmp_path / "ch"
    project.mkdir()
    rc, _, err = _install(home, project, codex_home, "--as", "bob", "--trust")
    assert (0, "") == (rc, err)
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())
    [[handler]] = [g["hooks"] for g in hooks["hooks"]["SessionStart"]]
    key = f"{project}/.codex/hooks.json:session_start:0:0"
    assert {key: handler_hash("SessionStart", {}, handler)} == _trust_tables(
        codex_home / "config.toml"
    )


def test_trust_a_toml_file_cannot_hold_is_refused_before_any_file_is_written(
    home: Path, tmp_path: Path
) -> None:
    """A project path that is not UTF-8: one line, exit 1, no hooks.json and no config.toml."""
    project = Path(os.fsdecode(bytes(tmp_path) + b"/proj\xff"))
    codex_home = tmp_path / "ch"
    project.mkdir()
    codex_home.mkdir()
    rc, out, err = _install(home, project, codex_home, "--as", "bob", "--trust", "--mcp")
    key = f"{project}/.codex/hooks.json:session_start:0:0"
    expected = f"paneboard: {key!r} is not valid UTF-8, which a TOML file cannot hold; "
    assert (1, "", expected + "nothing was changed\n") == (rc, out, err)
    assert [] == os.listdir(project)
    assert [] == os.listdir(codex_home)
