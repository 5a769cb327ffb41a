"""`paneboard spawn` and `stop` on the real Claude Code 2.1.328 (a background session, `claude
--bg`) and the real pi 0.73.1 (its TUI in a tmux server of its own), offline against the
tests' model stand-ins: a first prompt reaches the model once, the agent answers it from its
shell tool, `who` lists it with its attach line, and `stop` ends it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paneboard.agents.claude_transcript import user_texts as claude_texts
from paneboard.agents.pi import PI
from paneboard.protocol.posts import Seen
from paneboard.state.filelog.log import read_posts
from paneboard.state.panes.lock import holder
from testing.clients import PINNED, free_port
from testing.helpers import PANEBOARD, ROOT, ScriptServer, cli_env, run, wait_until
from testing.pi_session import pi_agent_dir
from testing.sessions import StandIn, base_env, running, user_records

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is missing")
FIRST = "what is six times seven?\nMOCK-ANSWER: forty-two"


def pb(
    pb_home: Path, *args: str, env: dict[str, str], timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    """`paneboard ARGS` in *env* (over the tests' own)."""
    return run([*PANEBOARD, *args], ROOT, cli_env(pb_home, **env), timeout)


def spawn(pb_home: Path, kind: str, project: Path, env: dict[str, str], *more: str) -> Any:
    """`paneboard spawn KIND --as helper --first FIRST` from alice's shell."""
    args = ("spawn", kind, "--as", "helper", "--project", str(project), "--first", FIRST, *more)
    done = pb(pb_home, *args, env=env, timeout=150)
    assert 0 == done.returncode, done.stderr
    return done


def answered(pb_home: Path, prompt: str, env: dict[str, str]) -> None:
    """alice's `wait` on the first prompt prints the answer the agent ran in its shell."""
    done = pb(pb_home, "wait", prompt, "--timeout", "90", env=env, timeout=120)
    assert (0, "forty-two\n") == (done.returncode, done.stdout), done.stderr


def seen(pb_home: Path, prompt: str) -> list[str]:
    """The sources of the `seen` receipts of *prompt*."""
    posts = read_posts(pb_home / "test" / "log")
    return [p.source for _, p in posts if isinstance(p, Seen) and p.prompt_id == prompt]


def who_line(pb_home: Path, env: dict[str, str]) -> str:
    done = pb(pb_home, "who", env=env)
    return next(line for line in done.stdout.splitlines() if line.startswith("helper "))


def stopped(pb_home: Path, env: dict[str, str]) -> str:
    done = pb(pb_home, "stop", "helper", env=env, timeout=60)
    assert 0 == done.returncode, done.stderr
    return done.stdout


def pane(pb_home: Path, suffix: str) -> Path:
    return pb_home / "test" / "panes" / f"helper.{suffix}"


# --- Claude Code ----------------------------------------------------------------------------


def claude_home(home: Path, project: Path) -> None:
    """Claude Code's first-run screens done and the project trusted, as a person's would be."""
    home.mkdir()
    trusted = {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}
    seeded = {
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": PINNED["claude"].version,
        "customApiKeyResponses": {"approved": ["sk-dummy"], "rejected": []},
        "projects": {str(project): {**trusted, "allowedTools": []}},
    }
    (home / ".claude.json").write_text(json.dumps(seeded))


@pytest.fixture
def claude_setup(tmp_path: Path, clients_bin: Path) -> Iterator[tuple[Path, Path, dict[str, str]]]:
    """(paneboard home, project, environment) for a Claude Code spawn: the project's own
    settings allow Bash; the model is the Anthropic API stand-in."""
    pb_home, project = tmp_path / "pb", (tmp_path / "proj").resolve()
    pb_home.mkdir(mode=0o700)
    (project / ".claude").mkdir(parents=True)
    user = {"permissions": {"allow": ["Bash"], "defaultMode": "default"}, "theme": "mine"}
    (project / ".claude" / "settings.local.json").write_text(json.dumps(user))
    claude_home(tmp_path / "claude-home", project)
    api = ScriptServer("testing.api_stand_in", free_port(), tmp_path / "api.log")
    path = f"{Path(sys.executable).parent}:{clients_bin}:/usr/local/bin:/usr/bin:/bin"
    env = {
        "PATH": path,
        "HOME": str(tmp_path / "claude-home"),
        "ANTHROPIC_API_KEY": "sk-dummy",
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{api.port}",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "PANEBOARD_AGENT": "alice",
    }
    try:
        yield pb_home, project, env
    finally:
        for record in (tmp_path / "claude-home" / ".claude" / "sessions").glob("*.json"):
            job = json.loads(record.read_text()).get("jobId")  # a test that failed midway
            if job:
                argv = [str(clients_bin / "claude"), "stop", job]
                subprocess.run(argv, env=cli_env(pb_home, **env), capture_output=True, check=False)
        api.close()


def claude_transcript(env: dict[str, str], job: str) -> Path:
    sessions = Path(env["HOME"]) / ".claude" / "sessions"
    [record] = [
        r for p in sessions.glob("*.json") if (r := json.loads(p.read_text())).get("jobId") == job
    ]
    [found] = (Path(env["HOME"]) / ".claude" / "projects").glob(f"*/{record['sessionId']}.jsonl")
    return found


def test_claude_code_spawned_in_the_background_answers_its_first_prompt_and_stops(
    claude_setup: tuple[Path, Path, dict[str, str]],
) -> None:
    """`claude --bg` with paneboard's hooks merged into the project's own settings; the first
    prompt is delivered through the inbox, seen once, answered from Bash; `who` shows the
    session's attach line; `stop` is `claude stop`, and the session and its listener end."""
    pb_home, project, env = claude_setup
    done = spawn(pb_home, "claude", project, env, "--json")
    report = json.loads(done.stdout)
    job, prompt, pid = report["session"], report["first"], report["pid"]
    assert ("helper", "claude", f"claude attach {job}") == (
        report["agent"],
        report["kind"],
        report["attach"],
    )
    assert holder(pane(pb_home, "lock")) == report["listener"]
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert ({"allow": ["Bash"], "defaultMode": "default"}, "mine") == (
        settings["permissions"],
        settings["theme"],
    )
    [start] = settings["hooks"]["SessionStart"]
    assert f"--as helper --home {pb_home} --board test" in start["hooks"][0]["command"]

    answered(pb_home, prompt, env)
    assert ["claude-transcript"] == seen(pb_home, prompt)
    header = f"[paneboard] prompt {prompt} from alice on board test"
    turns = user_records(claude_transcript(env, job), claude_texts, header)
    assert 1 == len(turns)
    line = who_line(pb_home, env)
    assert f"listening  pid {report['listener']}  door claude-inbox" in line
    assert line.endswith(f"attach: claude attach {job}")

    said = stopped(pb_home, env)
    assert (
        f"stopped `helper` (Claude Code session {job}): stopped {job}; its listener has ended\n"
        == said
    )
    assert not running(pid)
    wait_until(lambda: not running(report["listener"]), "the listener outlived its pane", 5)
    assert holder(pane(pb_home, "lock")) is None
    assert not pane(pb_home, "spawned").exists()
    assert not who_line(pb_home, env).endswith(f"attach: claude attach {job}")


# --- pi -------------------------------------------------------------------------------------


@pytest.fixture
def pi_setup(tmp_path: Path) -> Iterator[tuple[Path, Path, dict[str, str], StandIn]]:
    """(paneboard home, project, environment, stand-in) for a pi spawn: pi's provider and model
    are the stand-in, in its own settings; tmux's sockets in a short private folder."""
    found = PINNED["pi"].installed()
    if found is None:
        pytest.skip(PINNED["pi"].missing)
    pb_home, project = tmp_path / "pb", tmp_path / "proj"
    pb_home.mkdir(mode=0o700)
    project.mkdir()
    env = base_env(tmp_path / "home", found.parent, pb_home)
    stand_in = StandIn(tmp_path, "testing.pi_stand_in")
    agent_dir = pi_agent_dir(tmp_path / "home", stand_in.port)
    (agent_dir / "settings.json").write_text(
        json.dumps({"defaultProvider": "pb", "defaultModel": "stand-in"})
    )
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    sockets = Path(tempfile.mkdtemp(prefix="pbt"))  # a socket's path has at most 107 bytes
    env.update(
        PI_OFFLINE="1",
        PI_SKIP_VERSION_CHECK="1",
        PI_TELEMETRY="0",
        XDG_RUNTIME_DIR=str(runtime),
        TMUX_TMPDIR=str(sockets),
        PANEBOARD_AGENT="alice",
    )
    env.pop("PANEBOARD_HOME")
    env.pop("PANEBOARD_BOARD")
    try:
        yield pb_home, project, env, stand_in
    finally:
        subprocess.run(
            ["tmux", "-L", "paneboard-helper", "kill-server"],
            env=env,
            capture_output=True,
            check=False,
        )
        shutil.rmtree(sockets, ignore_errors=True)
        stand_in.close()


def turns_started_by(stand_in: StandIn, prompt: str) -> list[dict[str, Any]]:
    """The model requests whose newest message is a user turn carrying *prompt* (not the
    requests that carry a tool's result after it)."""
    found = []
    for request in stand_in.requests():
        messages = request["body"].get("messages") or [{}]
        if messages[-1].get("role") == "user" and prompt in json.dumps(messages[-1]):
            found.append(request)
    return found


def test_pi_spawned_in_tmux_answers_its_first_prompt_and_stops(
    pi_setup: tuple[Path, Path, dict[str, str], StandIn],
) -> None:
    """pi's TUI in a tmux server of its own, with the extension `hook install pi` put there
    already (left as it is); the first prompt reaches the model once and is answered from
    pi's bash tool; `who` shows `tmux -L … attach`; `stop` is pi's own quit (SIGTERM), then
    the server closed."""
    pb_home, project, env, stand_in = pi_setup
    options = ("--project", str(project), "--as", "helper", "--home", str(pb_home))
    installed = pb(pb_home, "hook", "install", "pi", *options, "--board", "test", env=env)
    assert 0 == installed.returncode, installed.stderr
    extension = project / ".pi" / "extensions" / "paneboard.ts"
    written = extension.read_bytes()

    out = spawn(pb_home, "pi", project, env).stdout.splitlines()
    assert f"paneboard extension already installed: {extension}" == out[0]
    assert written == extension.read_bytes()
    assert out[1].startswith("spawned `helper`: pi session paneboard-helper, pid ")
    pid = int(out[1].split(", pid ")[1].split(";")[0])
    listener = holder(pane(pb_home, "lock"))
    assert f"; listener pid {listener} holds its pane" in out[1]
    assert ["attach: tmux -L paneboard-helper attach", "stop: paneboard stop helper"] == out[2:4]
    prompt = out[4].split()[2]

    answered(pb_home, prompt, env)
    assert ["pi-session"] == seen(pb_home, prompt)
    [registry] = (Path(env["XDG_RUNTIME_DIR"]) / "paneboard-pi").glob("*.json")
    session_file = Path(json.loads(registry.read_text())["sessionFile"])
    header = f"[paneboard] prompt {prompt} from alice on board test"
    assert 1 == len(user_records(session_file, PI.user_texts, header))
    assert 1 == len(turns_started_by(stand_in, prompt))
    line = who_line(pb_home, env)
    assert f"listening  pid {listener}  door pi-extension" in line
    assert line.endswith("attach: tmux -L paneboard-helper attach")

    said = stopped(pb_home, env)
    own = "its own quit, asked through paneboard's extension"
    quit_ = f"pi pid {pid} ended ({own}); tmux server paneboard-helper closed"
    assert (
        f"stopped `helper` (pi session paneboard-helper): {quit_}; its listener has ended\n" == said
    )
    assert not running(pid)
    assert listener is not None
    wait_until(lambda: not running(listener), "the listener outlived its released pane", 5)
    assert holder(pane(pb_home, "lock")) is None
    has = subprocess.run(["tmux", "-L", "paneboard-helper", "has-session"], env=env, check=False)
    assert 0 != has.returncode
    wait_until(lambda: not registry.exists(), "pi's door registry left behind", 5)


def test_a_project_claude_code_does_not_trust_is_refused_in_its_words_and_left_as_it_was(
    claude_setup: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    """`claude --bg` refuses an untrusted folder: spawn says what Claude Code said, exits 1,
    and the hooks it merged into the project's settings are taken out again."""
    pb_home, _, env = claude_setup
    project = tmp_path / "untrusted"
    (project / ".claude").mkdir(parents=True)
    settings = project / ".claude" / "settings.local.json"
    settings.write_text('{"theme": "mine"}\n')
    args = ("spawn", "claude", "--as", "helper", "--project", str(project))
    done = pb(pb_home, *args, env=env, timeout=90)
    expected = (
        "paneboard: claude --bg failed (exit 1): Workspace not trusted. Run `claude` in"
        f" {project} once and accept the trust prompt, then retry.\n"
    )
    assert (1, "", expected) == (done.returncode, done.stdout, done.stderr)
    assert '{"theme": "mine"}\n' == settings.read_text()
    assert [settings] == list(project.rglob("*.json"))
    assert not pane(pb_home, "spawned").exists()
