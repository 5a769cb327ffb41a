"""Qwen Code's record: `hook install qwen` on a real project folder, `--trust` asked on a real
terminal (a pty) and refused without one, its listener's arguments, door and session file,
and its doctor lines."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import time
from pathlib import Path
from typing import Any, TypeVar

import pytest

from paneboard.agents import DoorRequest, qwen_inbox
from paneboard.agents.qwen import QWEN, controller_path
from paneboard.protocol.errors import BadInput
from paneboard.state.files import write_atomic
from testing.clients import PINNED
from testing.helpers import PANEBOARD, cli_env, run, run_cli

T = TypeVar("T")
TOKEN = "qpc_" + "d" * 64
QWEN_BIN = PINNED["qwen"].path


def needs_qwen(test: T) -> T:
    """A test that runs the real Qwen Code: in the `real` tier, skipped where it is missing."""
    skip = pytest.mark.skipif(not QWEN_BIN.exists(), reason=PINNED["qwen"].missing)
    return pytest.mark.real(skip(test))


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A private HOME (so its Qwen home is tmp_path/home/.qwen), the real `qwen` on PATH."""
    path = f"{QWEN_BIN.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    (tmp_path / "home").mkdir(exist_ok=True)
    return cli_env(tmp_path / "pb", HOME=str(tmp_path / "home"), PATH=path, **extra)


def _project(tmp_path: Path, settings: dict[str, Any] | None = None) -> Path:
    project = tmp_path / "proj"
    (project / ".qwen").mkdir(parents=True)
    if settings is not None:
        (project / ".qwen" / "settings.json").write_text(json.dumps(settings))
    return project


def _install(project: Path, *extra: str) -> list[str]:
    return ["hook", "install", "qwen", "--project", str(project), "--as", "bob", *extra]


def _in_terminal(argv: list[str], env: dict[str, str], answer: bytes) -> tuple[int, str]:
    """Run *argv* with a pty as its controlling terminal; answer *answer* to its question."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the pty is its controlling terminal
        os.execve(argv[0], argv, env)
    out, answered, deadline = b"", False, time.monotonic() + 60
    while time.monotonic() < deadline:
        if not select.select([fd], [], [], 0.5)[0]:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child has ended
            break
        out += chunk
        if not answered and b"[y/N]" in out:
            os.write(fd, answer)
            answered = True
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def _detached(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run *argv* in a session of its own: no controlling terminal."""
    return subprocess.run(
        argv,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _controllers(env: dict[str, str]) -> list[dict[str, Any]]:
    """What `qwen sessions controllers list --json` says this Qwen home trusts."""
    argv = [str(QWEN_BIN), "sessions", "controllers", "list", "--json"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=True)
    found = json.loads(done.stdout or "[]")
    return found if isinstance(found, list) else [found]


def test_install_writes_session_start_and_end_beside_qwens_own_settings(tmp_path: Path) -> None:
    """SessionStart and SessionEnd run paneboard's hooks; Qwen Code's own keys stay; uninstall
    gives the file back as it was."""
    project = _project(tmp_path, {"ui": {"hideTips": True}})
    done = run_cli(tmp_path / "pb", *_install(project))
    path = project / ".qwen" / "settings.json"
    assert (0, f"installed paneboard hooks in {path} (mode listen)\n") == (
        done.returncode,
        done.stdout,
    )
    data = json.loads(path.read_text())
    assert {"ui", "hooks"} == set(data)
    commands = {
        event: [e["hooks"][0]["command"] for e in entries]
        for event, entries in data["hooks"].items()
    }
    tail = "--agent qwen --mode listen --as bob"
    assert {"SessionStart": ["session-start"], "SessionEnd": ["session-end"]} == {
        event: [c.split(" hook ")[1].split()[0] for c in cmds] for event, cmds in commands.items()
    }
    assert all(c.endswith(tail) for cmds in commands.values() for c in cmds), commands
    gone = run_cli(tmp_path / "pb", "hook", "uninstall", "qwen", "--project", str(project))
    assert (0, f"removed paneboard hooks from {path}\n") == (gone.returncode, gone.stdout)
    assert {"ui": {"hideTips": True}} == json.loads(path.read_text())


def test_a_stop_mode_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    project = _project(tmp_path)
    done = run_cli(tmp_path / "pb", *_install(project, "--mode", "stop"))
    message = "paneboard: Qwen Code is reached through its inbox only: use --mode listen\n"
    assert (1, message) == (done.returncode, done.stderr)
    assert [] == list(project.rglob("*.json"))


@needs_qwen
def test_trust_asks_on_the_terminal_and_keeps_the_minted_token_private(tmp_path: Path) -> None:
    """Yes on the controlling terminal: Qwen Code mints a controller; paneboard keeps its token
    0600 in its home (not in the hook file); a second install mints nothing."""
    project = _project(tmp_path)
    env = _env(tmp_path)
    code, out = _in_terminal([*PANEBOARD, *_install(project, "--trust")], env, b"y\n")
    assert 0 == code, out
    assert "without your review in /peers (hook install qwen --trust)? [y/N]" in out
    kept = controller_path(tmp_path / "pb")
    grant = json.loads(kept.read_text())
    assert 0o600 == kept.stat().st_mode & 0o777
    assert qwen_inbox.CONTROLLER.fullmatch(grant["token"])
    assert str(tmp_path / "home" / ".qwen") == grant["qwenHome"]
    assert [(grant["id"], "paneboard")] == [(c["id"], c["label"]) for c in _controllers(env)]
    assert f"minted Qwen Code controller token {grant['id']} (label paneboard)" in out
    assert grant["token"] not in (project / ".qwen" / "settings.json").read_text()
    assert grant["token"] not in out
    again = _detached([*PANEBOARD, *_install(project, "--trust")], env)  # nothing to ask
    assert 0 == again.returncode, again.stderr
    assert f"a Qwen Code controller token ({grant['id']}) already kept in {kept}" in again.stdout
    assert 1 == len(_controllers(env))


@needs_qwen
def test_trust_answered_no_mints_nothing_and_writes_nothing(tmp_path: Path) -> None:
    project = _project(tmp_path)
    env = _env(tmp_path)
    code, out = _in_terminal([*PANEBOARD, *_install(project, "--trust")], env, b"n\n")
    assert 1 == code
    assert out.rstrip().endswith(
        "without your review in /peers (hook install qwen --trust): not confirmed; nothing written"
    ), out
    assert not controller_path(tmp_path / "pb").exists()
    assert [] == list(project.rglob("*.json"))
    assert [] == _controllers(env)


@needs_qwen
def test_trust_without_a_terminal_is_refused_in_one_line(tmp_path: Path) -> None:
    """No controlling terminal (a new session, as a hook or a script has): nobody to ask."""
    project = _project(tmp_path)
    env = _env(tmp_path)
    done = _detached([*PANEBOARD, *_install(project, "--trust")], env)
    message = (
        "paneboard: let paneboard's listeners deliver prompts to your Qwen Code sessions "
        f"({tmp_path / 'home' / '.qwen'}) without your review in /peers (hook install qwen "
        "--trust): it is asked on the controlling terminal (/dev/tty), and this process has "
        "none; nothing written\n"
    )
    assert (1, "", message) == (done.returncode, done.stdout, done.stderr)
    assert not (tmp_path / "pb").exists()
    assert [] == list(project.rglob("*.json"))
    assert [] == _controllers(env)


def _registry(home: Path, cwd: Path, session_id: str = "s-1") -> Path:
    """A live session's registry record: this test's own process stands in for Qwen Code."""
    pid = os.getpid()
    path = home / "sessions" / f"{pid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"schemaVersion": 1, "pid": pid, "procStart": qwen_inbox._proc_start(pid)}
    data.update(sessionId=session_id, ipcPath=str(home / "in.sock"), cwd=str(cwd))
    path.write_text(json.dumps(data))
    return path


def test_the_listener_is_for_the_registrys_process_of_the_hooks_session(tmp_path: Path) -> None:
    """The hook input's session id finds its registry record; without one, the hook's agent."""
    env = {"QWEN_HOME": str(tmp_path / "q")}
    record = _registry(tmp_path / "q", tmp_path)
    args, extra = QWEN.listen_args({"session_id": "s-1"}, env, 1)
    assert (["--door", "qwen-inbox", "--parent-pid", record.stem], {}) == (args, extra)
    assert ["--parent-pid", "1"] == QWEN.listen_args({"session_id": "s-2"}, env, 1)[0][2:]


def _request(tmp_path: Path, pid: int | None, home: Path | None) -> DoorRequest:
    env = {"QWEN_HOME": str(tmp_path / "q"), "XDG_CACHE_HOME": str(tmp_path)}
    return DoorRequest(5.0, env, tmp_path, pid=pid, home=home)


def test_the_door_uses_the_grant_of_its_qwen_home_only(tmp_path: Path) -> None:
    """The kept token goes on the auth line for the Qwen home it was minted in; a grant of
    another Qwen home is left out (Qwen Code would drop the connection unanswered)."""
    pb = tmp_path / "pb"
    pb.mkdir(mode=0o700)
    grant = {"id": "c_1", "token": TOKEN, "qwenHome": str(tmp_path / "q")}
    write_atomic(controller_path(pb), json.dumps(grant).encode(), mode=0o600)
    door = QWEN.open_door(_request(tmp_path, 7, pb))
    assert isinstance(door, qwen_inbox.QwenInboxDoor)
    assert (TOKEN, tmp_path / "q" / "sessions" / "7.json") == (door.controller, door.record)
    grant["qwenHome"] = str(tmp_path / "other")
    write_atomic(controller_path(pb), json.dumps(grant).encode(), mode=0o600)
    other = QWEN.open_door(_request(tmp_path, 7, pb))
    assert isinstance(other, qwen_inbox.QwenInboxDoor)
    assert other.controller is None
    with pytest.raises(BadInput) as no_pid:
        QWEN.open_door(_request(tmp_path, None, pb))
    assert "--door qwen-inbox needs --parent-pid PID (the Qwen Code process)" == str(no_pid.value)


def test_a_grant_others_can_read_is_refused_and_no_listener_runs(tmp_path: Path) -> None:
    pb = tmp_path / "pb"
    pb.mkdir(mode=0o700)
    kept = controller_path(pb)
    write_atomic(kept, json.dumps({"id": "c", "token": TOKEN, "qwenHome": "/q"}).encode())
    kept.chmod(0o644)
    done = run_cli(pb, "listen", "--as", "bob", "--door", "qwen-inbox", "--parent-pid", "7")
    message = f"paneboard: {kept} is readable by others: remove it and run hook install --trust\n"
    assert (1, message) == (done.returncode, done.stderr)
    assert not (pb / "test").exists()


def test_seen_follows_the_session_file_the_registry_leads_to(tmp_path: Path) -> None:
    """Without --transcript: the registry's session id names the session file, even before
    Qwen Code writes it (its runtime file is there from the start)."""
    home = tmp_path / "q"
    record = _registry(home, tmp_path, "s-9")
    chats = home / "projects" / "-proj" / "chats"
    chats.mkdir(parents=True)
    (chats / "s-9.runtime.json").write_text("{}")
    door = qwen_inbox.QwenInboxDoor(record, 1.0, tmp_path / "me.sock")
    sighting = QWEN.sighting(tmp_path / "mark", door, None)
    assert sighting is not None
    assert (chats / "s-9.jsonl", "qwen-session") == (sighting.path, sighting.source)


def _doctor(tmp_path: Path, project: Path, env: dict[str, str]) -> list[str]:
    done = run([*PANEBOARD, "doctor", "--as", "bob"], project, env)
    return [ln for ln in done.stdout.splitlines() if ln.split()[1:2] == ["qwen"]]


def test_doctor_names_qwen_its_hooks_its_live_session_and_its_grant(tmp_path: Path) -> None:
    project = _project(tmp_path)
    env = _env(tmp_path, QWEN_HOME=str(tmp_path / "q"))
    bare = _doctor(tmp_path, project, env)
    assert [ln.split()[0] for ln in bare] == ["ok" if QWEN_BIN.exists() else "warn", "warn", "warn"]
    assert f"no live Qwen Code session of {project} in {tmp_path / 'q' / 'sessions'}" in bare[1]
    assert "no controller token: Qwen Code holds each prompt for its person (/peers)" in bare[2]
    assert 0 == run_cli(tmp_path / "pb", *_install(project)).returncode
    record = _registry(tmp_path / "q", project)
    (tmp_path / "pb").mkdir(mode=0o700, exist_ok=True)
    kept = controller_path(tmp_path / "pb")
    grant = {"id": "c_7", "token": TOKEN, "qwenHome": str(tmp_path / "q")}
    write_atomic(kept, json.dumps(grant).encode(), mode=0o600)
    lines = _doctor(tmp_path, project, env)
    assert [ln.split()[0] for ln in lines][1:] == ["ok", "ok"]
    assert f"live session {record.stem}: inbox {tmp_path / 'q' / 'in.sock'}" in lines[1]
    assert f"controller token c_7 in {kept}" in lines[2]
