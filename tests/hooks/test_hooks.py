"""Agent integration: hook files, the Stop-hook door, session start and end, doctor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paneboard.state.panes.lock import holder
from testing.helpers import (
    PANEBOARD,
    Listening,
    LoadedThread,
    SocketServer,
    cli_env,
    post,
    run_cli,
    run_hook,
    wait_until,
)

UNRELATED = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
    },
}


def _settings(project: Path, agent: str) -> Path:
    return project / (".claude/settings.local.json" if agent == "claude" else ".codex/hooks.json")


@pytest.mark.parametrize("agent", ["claude", "codex"])
@pytest.mark.parametrize("start", ["missing", "unrelated"])
def test_install_twice_then_uninstall(home: Path, tmp_path: Path, agent: str, start: str) -> None:
    """Install adds our hooks and keeps the rest; again changes nothing; uninstall restores the
    original."""
    project = tmp_path / "proj"
    project.mkdir()
    path = _settings(project, agent)
    if start == "unrelated":
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(UNRELATED))
    done = run_cli(home, "hook", "install", agent, "--project", str(project), "--mode", "both")
    assert 0 == done.returncode, done.stderr
    first = path.read_text()
    data = json.loads(first)
    ours = {
        event: [
            h["hooks"][0]["command"] for h in entries if "paneboard" in h["hooks"][0]["command"]
        ]
        for event, entries in data["hooks"].items()
    }
    expected_events = (
        {"SessionStart", "Stop", "SessionEnd"} if agent == "claude" else {"SessionStart", "Stop"}
    )
    assert expected_events == {e for e, cmds in ours.items() if cmds}
    assert all(cmd.split()[0].startswith("/") for cmds in ours.values() for cmd in cmds)
    if start == "unrelated":
        assert ("opus", ["Bash(ls:*)"]) == (data["model"], data["permissions"]["allow"])
        assert {"type": "command", "command": "say done"} == data["hooks"]["Stop"][0]["hooks"][0]
        assert UNRELATED["hooks"]["PreToolUse"] == data["hooks"]["PreToolUse"]
    again = run_cli(home, "hook", "install", agent, "--project", str(project), "--mode", "both")
    assert 0 == again.returncode and "already installed" in again.stdout
    assert first == path.read_text()
    assert 0 == run_cli(home, "hook", "uninstall", agent, "--project", str(project)).returncode
    assert (UNRELATED if start == "unrelated" else {}) == json.loads(path.read_text())


def test_a_malformed_settings_file_is_refused_and_untouched(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    path = _settings(project, "claude")
    path.parent.mkdir(parents=True)
    path.write_text('{"hooks": {"Stop": [')
    done = run_cli(home, "hook", "install", "claude", "--project", str(project))
    assert 1 == done.returncode
    assert (
        f"paneboard: {path} is not valid JSON (line 1: Expecting value); "
        "fix or move it, nothing was changed\n" == done.stderr
    )
    assert '{"hooks": {"Stop": [' == path.read_text()
    path.write_text('{"hooks": {"Stop": "not a list"}}')
    assert 1 == run_cli(home, "hook", "install", "claude", "--project", str(project)).returncode
    assert '{"hooks": {"Stop": "not a list"}}' == path.read_text()


def stop_hook(
    home: Path, agent: str = "claude", *extra: str, active: bool = False, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    payload = {
        "session_id": "s1",
        "transcript_path": "/x.jsonl",
        "cwd": str(cwd or home),
        "hook_event_name": "Stop",
        "stop_hook_active": active,
    }
    return run_hook(home, "stop", agent, payload, "--as", "bob", *extra)


def test_stop_hook_blocks_with_the_open_prompts_once(home: Path) -> None:
    """The reason carries the prompts in catch-up order; the next stop, with nothing new, is
    silent."""
    normal = post(home, "--to", "bob", "normal work")
    urgent = post(home, "--to", "bob", "--priority", "urgent", "urgent work")
    first = stop_hook(home)
    assert 0 == first.returncode, first.stderr
    reply = json.loads(first.stdout)
    assert "block" == reply["decision"]
    assert reply["reason"].index(urgent) < reply["reason"].index(normal)
    assert "> urgent work" in reply["reason"]
    second = stop_hook(home, active=True)
    assert (0, "") == (second.returncode, second.stdout)
    later = post(home, "--to", "bob", "something new")
    third = stop_hook(home, active=True)
    assert (
        later in json.loads(third.stdout)["reason"]
        and normal not in json.loads(third.stdout)["reason"]
    )
    status = json.loads(run_cli(home, "status", urgent, "--json").stdout)
    assert ("delivered", "stop-hook") == (
        status["recipients"]["bob"]["stage"],
        status["recipients"]["bob"]["door"],
    )


def test_stop_hook_with_nothing_open(home: Path) -> None:
    """Claude Code: no output; Codex: {"continue": true}."""
    post(home, "--to", "carol", "not for bob")
    quiet = stop_hook(home)
    assert (0, "") == (quiet.returncode, quiet.stdout)
    assert {"continue": True} == json.loads(stop_hook(home, "codex").stdout)


def test_stop_hook_is_silent_while_a_listener_holds_the_pane(home: Path) -> None:
    with Listening(home, "bob", "--door", "exec", "--backoff", "60", "--", "false") as bob:
        pid = post(home, "--to", "bob", "listener's job")
        bob.wait_err(f"retry 2/2 of {pid}")
        assert "" == stop_hook(home).stdout


def test_stop_hook_cooldown(home: Path) -> None:
    post(home, "--to", "bob", "first")
    assert stop_hook(home, "claude", "--cooldown", "60").stdout
    post(home, "--to", "bob", "second")
    assert "" == stop_hook(home, "claude", "--cooldown", "60").stdout
    assert "second" in stop_hook(home, "claude", "--cooldown", "0").stdout


def test_a_prompt_the_stop_hook_delivered_is_never_delivered_by_a_listener(home: Path) -> None:
    by_hook = post(home, "--to", "bob", "taken at stop")
    assert by_hook in stop_hook(home).stdout
    with Listening(home, "bob", "--door", "stdout") as bob:
        fresh = post(home, "--to", "bob", "taken by the listener")
        assert fresh == json.loads(bob.line())["id"]


def test_stop_hook_limits_the_reason(home: Path) -> None:
    """About 64 KiB of prompts per stop; the rest wait for the next one."""
    ids = [
        post(home, "--to", "bob", "-", input=(f"{i} " + "x" * 30_000).encode()) for i in range(4)
    ]
    first = json.loads(stop_hook(home).stdout)["reason"]
    second = json.loads(stop_hook(home).stdout)["reason"]
    assert [i for i in ids if i in first] == ids[:2]
    assert [i for i in ids if i in second] == ids[2:]


PARENT = """
import json, subprocess, sys, time
done = subprocess.run(sys.argv[1:], input=json.dumps({"hook_event_name": "SessionStart", \
"cwd": sys.argv[-1] if False else ".", "source": "startup"}), capture_output=True, text=True)
print(done.returncode, flush=True)
print(done.stdout.strip(), flush=True)
time.sleep(120)
"""


def test_session_start_runs_a_detached_listener_that_ends_with_its_agent(
    home: Path, tmp_path: Path
) -> None:
    """With a real parent process and a socket: the listener delivers, carries no CLAUDE_CODE_
    variables, and exits when the parent dies."""
    server = SocketServer(tmp_path / "cc.sock")
    env = cli_env(
        home,
        CLAUDE_CODE_MESSAGING_SOCKET=str(server.path),
        CLAUDE_CODE_MESSAGING_TOKEN="secret",
        PANEBOARD_AGENT="bob",
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, *PANEBOARD, "hook", "session-start", "--agent", "claude"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert parent.stdout is not None
        assert "0" == parent.stdout.readline().strip()
        context = json.loads(parent.stdout.readline())["hookSpecificOutput"]["additionalContext"]
        assert "you are `bob` on board `test`" in context and "listener pid" in context
        listener_pid = int(context.split("listener pid ")[1].split()[0])
        pid = post(home, "--to", "bob", "through the socket")
        assert pid in json.loads(server.lines.get(timeout=15))["message"]["content"]
        environ = Path(f"/proc/{listener_pid}/environ").read_bytes().split(b"\0")
        assert [] == [v for v in environ if v.startswith(b"CLAUDE_CODE_")]
        parent.kill()
        parent.wait()
        wait_until(lambda: not _running(listener_pid), "the listener ends with its agent")
        assert "agent process" in (home / "test" / "panes" / "bob.log").read_text()
    finally:
        parent.kill()
        parent.wait()
        if parent.stdout:
            parent.stdout.close()
        server.close()


def _running(pid: int) -> bool:
    try:
        return b"Z" not in Path(f"/proc/{pid}/stat").read_bytes().split(b")")[1][:3]
    except OSError:
        return False


@pytest.mark.parametrize("agent", ["codex", "qwen"])
def test_a_woken_headless_turn_starts_no_listener_and_leaves_the_asleep_one(
    home: Path, agent: str
) -> None:
    """A turn a wake started (its environment says so) has no door of its own: its
    session-start hook starts nothing, and the pane's holder stays."""
    session = "01a233d6-bb1f-7ce1-952b-40ba5391234c"
    event = {"hook_event_name": "SessionStart", "session_id": session, "cwd": str(home)}
    with Listening(home, "bob", "--door", "stdout") as bob:
        lock = home / "test" / "panes" / "bob.lock"
        held = holder(lock)
        done = run_cli(
            home,
            "hook",
            "session-start",
            "--agent",
            agent,
            "--as",
            "bob",
            input=json.dumps(event).encode(),
            PANEBOARD_WOKEN=session,
        )
        assert 0 == done.returncode, done.stderr
        context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        assert f"a woken turn of session {session}: its asleep listener keeps the pane" in context
        time.sleep(1)  # a listener started would have taken over by now
        assert held == holder(lock) and bob.proc.poll() is None


def test_session_end_stops_the_listener(home: Path) -> None:
    with Listening(home, "bob", "--door", "stdout") as bob:
        done = run_hook(
            home, "session-end", "claude", {"hook_event_name": "SessionEnd"}, "--as", "bob"
        )
        assert 0 == done.returncode, done.stderr
        assert 0 == bob.proc.wait(timeout=10)


def test_session_start_derives_a_name_from_the_project(home: Path, tmp_path: Path) -> None:
    """Without --as or PANEBOARD_AGENT: `<project folder>-<agent>`, said in the context line."""
    project = tmp_path / "web app"
    project.mkdir()
    event = {"hook_event_name": "SessionStart", "cwd": str(project)}
    done = run_hook(home, "session-start", "codex", event, "--mode", "stop")
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert (
        "you are `web-app-codex`" in context and "name derived from the project folder" in context
    )


def test_doctor_healthy_and_broken(home: Path, tmp_path: Path) -> None:
    """ok lines and exit 0 with a live listener and a good socket; fail lines and exit 1 with a
    bad socket."""
    server = SocketServer(tmp_path / "cc.sock")
    try:
        post(home, "--to", "bob", "hi")
        with Listening(home, "bob", "--door", "stdout") as bob:
            bob.line()
            runtime = str(tmp_path / "run")  # no OpenCode door of another test in sight
            healthy = run_cli(
                home,
                *["doctor", "--as", "bob", "--socket"],
                str(server.path),
                "--probe",
                XDG_RUNTIME_DIR=runtime,
            )
            assert 0 == healthy.returncode, healthy.stdout + healthy.stderr
            lines = healthy.stdout.splitlines()
            agents = ["claude", "hooks", "mcp", "codex", "hooks", "mcp"]  # one agent after another
            more = ["gemini", "copilot", "opencode", "opencode", "qwen", "hooks", "qwen", "qwen"]
            more += ["pi", "pi", "droid"]  # pi: no extension, no door up; Droid: no hooks
            more += ["hermes", "hermes"]  # no plugin, no door up
            more += ["kilo", "kilo"]  # Kilo Code: no plugin, no door up
            more += ["qoder", "hooks"]  # Qoder CLI: no inbox socket, no hooks
            assert [ln.split()[1] for ln in lines] == [
                "home",
                "board",
                "pane",
                *agents,
                *more,
                "probe",
            ]
            assert (
                lines[2].startswith("ok    pane     `bob`: listener pid")
                and "door stdout" in lines[2]
            )
            assert lines[-1].startswith("ok    probe    delivered through the door in")
        (tmp_path / "notasocket").write_text("")
        broken = run_cli(
            home, "doctor", "--as", "bob", "--socket", str(tmp_path / "notasocket"), "--probe"
        )
        assert 1 == broken.returncode
        assert (
            f"fail  claude   {tmp_path / 'notasocket'} is not a socket"
            in broken.stdout.splitlines()
        )
        assert (
            "fail  probe    no listener holds `bob`'s pane: nothing to probe"
            in broken.stdout.splitlines()
        )
        assert "paneboard: doctor: 2 check(s) failed\n" == broken.stderr
    finally:
        server.close()


def test_codex_queue_to_a_thread_nobody_runs_is_undelivered(home: Path, tmp_path: Path) -> None:
    """A lock file nobody holds: `thread not running`; a process holding it lets it through."""
    from testing.helpers import fake_codex, notices
    from tests.listener.test_doors import _codex_env

    fake_codex(tmp_path / "bin", "print('Queued message m1 for thread th-1.')")
    env = _codex_env(home, tmp_path)
    stale = LoadedThread(tmp_path / "codex-home")
    stale.release()
    assert stale.lock.exists()
    args = ("--door", "codex-queue", "--thread", stale.thread)
    with Listening(home, "bob", *args, "--backoff", "60", env=env) as bob:
        dead = post(home, "--to", "bob", "to a dead thread")
        bob.wait_err(f"undelivered {dead}")
    reason = f"thread not running: no Codex process has thread {stale.thread} loaded "
    reason += f"(no lock on {stale.lock})"
    assert [reason] == [n.reason for n in notices(home)]
    assert not (tmp_path / "codex.log").exists()
    with (
        LoadedThread(tmp_path / "codex-home", stale.thread),
        Listening(home, "bob", *args, env=env) as bob,
    ):
        bob.wait_err(f"delivered {dead}")


def test_options_stand_before_or_after_the_agent(home: Path, tmp_path: Path) -> None:
    """`hook install --mode stop --as bob claude` writes what `hook install claude --mode …`
    does."""
    written = []
    for argv in (
        ["hook", "install", "--mode", "stop", "--as", "bob", "claude"],
        ["hook", "install", "claude", "--mode", "stop", "--as", "bob"],
        ["hook", "--as", "bob", "install", "--mode=stop", "claude"],
    ):
        project = tmp_path / f"p{len(written)}"
        project.mkdir()
        done = run_cli(home, *argv, "--project", str(project))
        assert 0 == done.returncode, done.stderr
        written.append(_settings(project, "claude").read_text())
    assert 1 == len(set(written))
    assert "--mode stop --as bob" in written[0]


def test_install_writes_the_options_it_was_given(home: Path, tmp_path: Path) -> None:
    """--home/--board/--store/--nats-* given at install go into every hook; doctor names them."""
    project = tmp_path / "proj"
    project.mkdir()
    other = tmp_path / "elsewhere"
    store = "nats://127.0.0.1:4999/pfx"
    done = run_cli(
        home,
        *["hook", "install", "claude", "--project"],
        str(project),
        "--mode",
        "both",
        "--home",
        str(other),
        "--board",
        "team",
        "--store",
        store,
        "--nats-creds",
        "my.creds",
    )
    assert 0 == done.returncode, done.stderr
    hooks = json.loads(_settings(project, "claude").read_text())["hooks"]
    commands = [entry["hooks"][0]["command"] for entries in hooks.values() for entry in entries]
    assert 3 == len(commands)
    for command in commands:
        assert f"--home {other} --board team --store {store}" in command
        assert f"--nats-creds {tmp_path / 'my.creds'}" in command
    bare = tmp_path / "bare"
    bare.mkdir()
    assert 0 == run_cli(home, "hook", "install", "claude", "--project", str(bare)).returncode
    bare_text = _settings(bare, "claude").read_text()
    assert ("--home" not in bare_text, "--store" not in bare_text) == (True, True)
    doctor = subprocess.run(
        [*PANEBOARD, "doctor"],
        capture_output=True,
        text=True,
        env=cli_env(home),
        cwd=project,
        check=False,
    )
    assert (
        f"ok    hooks    claude hooks use agent named by the session, home {other}, "
        f"board team, store {store}"
    ) in doctor.stdout.splitlines()


def test_session_hooks_honour_the_store_option(home: Path) -> None:
    """A hook given --store acts on that store (here one that cannot be reached: it says so)."""
    reply = run_cli(
        home,
        *["hook", "stop", "--as", "bob", "--store", "nats://127.0.0.1:9/x"],
        input=json.dumps({"hook_event_name": "Stop"}).encode(),
    )
    assert 1 == reply.returncode
    assert reply.stderr.startswith("paneboard: cannot reach NATS at nats://127.0.0.1:9"), (
        reply.stderr
    )


BAD_OPTIONS = {
    "--as": "paneboard: agent name '$(touch pwned)' is not valid: use 1-64 of A-Z a-z 0-9 . _ -, "
    "not starting with `.`",
    "--board": "paneboard: board name '$(touch pwned)' is not valid: use 1-64 of A-Z a-z 0-9 . _ "
    "-, not starting with `.`",
    "--store": "paneboard: --store '$(touch pwned)' is not a "
    "nats://HOST:PORT[,HOST:PORT…][/PREFIX][?replicas=N] address",
}


@pytest.mark.parametrize("option", BAD_OPTIONS)
@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "copilot", "opencode"])
def test_install_refuses_an_invalid_as_board_or_store(
    home: Path, tmp_path: Path, agent: str, option: str
) -> None:
    """A value no hook could run with is refused at install: one line, exit 1, nothing written."""
    project = tmp_path / "proj"
    project.mkdir()
    done = run_cli(
        home, "hook", "install", agent, "--project", str(project), option, "$(touch pwned)"
    )
    assert (1, "", BAD_OPTIONS[option] + "\n") == (done.returncode, done.stdout, done.stderr)
    assert [] == list(project.iterdir())


def test_hook_files_and_folders_are_never_writable_by_others_under_umask_000(
    home: Path, tmp_path: Path
) -> None:
    """Every folder `hook install` makes is 0755 and every file 0644, the plugin OpenCode runs
    included, whatever the umask."""
    project = tmp_path / "proj"
    project.mkdir()
    old = os.umask(0)
    try:
        for words in (
            ["claude", "--mcp"],
            ["codex", "--mcp"],
            ["gemini"],
            ["copilot"],
            ["opencode"],
        ):
            done = run_cli(
                home,
                "hook",
                "install",
                *words,
                "--project",
                str(project),
                CODEX_HOME=str(tmp_path / "ch"),
            )
            assert (0, "") == (done.returncode, done.stderr)
    finally:
        os.umask(old)
    modes = {
        str(path.relative_to(project)): oct(path.stat().st_mode & 0o777)
        for path in project.rglob("*")
    }
    folders = [".claude", ".codex", ".gemini", ".github", ".github/hooks", ".opencode"]
    folders.append(".opencode/plugins")
    files = [
        ".claude/settings.local.json",
        ".mcp.json",
        ".codex/hooks.json",
        ".codex/config.toml",
        ".gemini/settings.json",
        ".github/hooks/paneboard.json",
        ".opencode/plugins/paneboard.js",
    ]
    expected = dict.fromkeys(folders, "0o755") | dict.fromkeys(files, "0o644")
    assert expected == modes


def test_the_stop_hooks_stamp_is_never_written_through_a_link(home: Path, tmp_path: Path) -> None:
    """A symlink planted as the pane's cool-down stamp is neither read nor written through: the
    hook refuses in one line and hands nothing over; the link's target is untouched."""
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    pid = post(home, "--to", "bob", "not through a link")
    stamp = home / "test" / "panes" / "bob.stopcheck"
    stamp.symlink_to(victim)
    done = stop_hook(home)
    said = (
        f"paneboard: {stamp} is a symlink; paneboard does not write through it, nothing written\n"
    )
    assert (1, "", said) == (done.returncode, done.stdout, done.stderr)
    assert "precious\n" == victim.read_text()
    stamp.unlink()
    assert pid in stop_hook(home).stdout
