"""`paneboard doctor` reads the home it is given (cli/doctor.py, each agent's `doctor`): with
`--home` pointing elsewhere than `$PANEBOARD_HOME`, every agent's lines are those of that
home, never of the environment's."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from paneboard.agents import AGENTS
from paneboard.agents.qwen import controller_path
from paneboard.state.files import write_atomic
from testing.helpers import PANEBOARD, cli_env, run_cli

TOKEN = "qpc_" + "e" * 64


def _grant(home: Path, ident: str, qwen_home: Path, mode: int) -> Path:
    home.mkdir(mode=0o700, exist_ok=True)
    path = controller_path(home)
    grant = {"id": ident, "token": TOKEN, "qwenHome": str(qwen_home)}
    write_atomic(path, json.dumps(grant).encode(), mode=mode)
    path.chmod(mode)
    return path


def _theirs(kind: str, line: str) -> bool:
    """Whether a doctor line is one of agent *kind*'s checks."""
    what, detail = line.split(maxsplit=2)[1:3]
    return what == kind or detail.startswith((f"{kind}:", f"{kind} hooks"))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("doctor")


@pytest.fixture(scope="module")
def doctor(folder: Path) -> dict[str, list[str]]:
    """Every agent's hooks installed in a project; Qwen Code's controller grant kept in the
    home `--home` names (`given`), and a grant others can read in `$PANEBOARD_HOME` (`decoy`).
    Doctor run there with `--home given` and `$PANEBOARD_HOME` the decoy, and with
    `$PANEBOARD_HOME` given and no `--home`."""
    tmp_path = folder
    project, given, decoy = tmp_path / "proj", tmp_path / "given", tmp_path / "decoy"
    project.mkdir()
    extra = {
        "HOME": str(tmp_path / "user"),  # the agents' own homes (~/.qwen, ~/.codex) are here
        "CODEX_HOME": str(tmp_path / "user" / ".codex"),
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),  # no script's door of another test in sight
    }
    qwen_home = tmp_path / "user" / ".qwen"
    for kind in AGENTS:
        done = run_cli(given, "hook", "install", kind, "--project", str(project), **extra)
        assert 0 == done.returncode, done.stderr
    _grant(given, "c_given", qwen_home, 0o600)
    _grant(decoy, "c_decoy", qwen_home, 0o644)
    runs = {
        "--home": (["--home", str(given)], decoy),
        "$PANEBOARD_HOME": ([], given),
    }
    out = {}
    for name, (args, env_home) in runs.items():
        done = _doctor(project, args, cli_env(env_home, **extra))
        assert (0, "") == (done[0], done[2]), done
        out[name] = done[1].splitlines()
    return out


def _doctor(project: Path, args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """`paneboard doctor --as bob ARGS`, run in *project*."""
    done = subprocess.run(
        [*PANEBOARD, "doctor", "--as", "bob", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def test_doctor_checks_the_home_it_is_given(doctor: dict[str, list[str]], folder: Path) -> None:
    """The home line names the home `--home` gave, as with `$PANEBOARD_HOME`."""
    given = doctor["--home"]
    assert given[0].startswith(f"ok    home     {folder / 'given'} (mode 700")
    assert doctor["$PANEBOARD_HOME"][:3] == given[:3]
    assert not [ln for ln in given if str(folder / "decoy") in ln]


@pytest.mark.parametrize("kind", list(AGENTS))
def test_each_agents_doctor_reads_the_given_home(
    doctor: dict[str, list[str]], kind: str, folder: Path
) -> None:
    """An agent's lines under `--home elsewhere` are those `$PANEBOARD_HOME=elsewhere` gives,
    and name nothing of the environment's home."""
    lines = [ln for ln in doctor["--home"] if _theirs(kind, ln)]
    assert lines, doctor["--home"]
    assert [ln for ln in doctor["$PANEBOARD_HOME"] if _theirs(kind, ln)] == lines
    assert not [ln for ln in lines if str(folder / "decoy") in ln]
    if kind == "qwen":
        kept = controller_path(folder / "given")
        assert f"ok    qwen     controller token c_given in {kept}" in lines


def test_qwen_doctor_fails_on_a_grant_others_can_read_in_the_given_home(tmp_path: Path) -> None:
    """The grant's check is of the given home both ways: a bad grant there fails, whatever
    the environment's home holds."""
    project, given, decoy = tmp_path / "proj", tmp_path / "given", tmp_path / "decoy"
    project.mkdir()
    bad = _grant(given, "c_bad", tmp_path / "q", 0o640)
    _grant(decoy, "c_good", tmp_path / "q", 0o600)
    env = cli_env(decoy, QWEN_HOME=str(tmp_path / "q"), XDG_RUNTIME_DIR=str(tmp_path / "run"))
    code, out, err = _doctor(project, ["--home", str(given)], env)
    why = f"{bad} is readable by others: remove it and run hook install --trust"
    assert (1, "paneboard: doctor: 1 check(s) failed\n") == (code, err)
    assert f"fail  qwen     {why}" in out.splitlines()
    assert "c_good" not in out
    assert os.stat(bad).st_mode & 0o777 == 0o640
