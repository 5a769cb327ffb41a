"""The wake doors on the real CLIs, offline: a session made by a first headless turn against the
agent's model stand-in (once per agent, for both tests of the module), ended, then continued by
`Agent.wake_door(...).deliver(...)` with a text as its next turn. The stand-in gets the text
once, in that session; the session's own conversation (the file its `seen` follows; OpenCode's
database) has it once; a session that does not exist is refused with the agent's own words."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from paneboard.agents.base import Agent, WakeRequest
from paneboard.agents.codex import CODEX
from paneboard.agents.copilot import COPILOT
from paneboard.agents.gemini import GEMINI
from paneboard.agents.hermes import HERMES
from paneboard.agents.kilo import KILO
from paneboard.agents.opencode import OPENCODE
from paneboard.agents.pi import PI
from paneboard.agents.qwen import QWEN
from paneboard.agents.qwen_inbox import session_file
from paneboard.listener.doors.resume import ResumeDoor
from paneboard.protocol.errors import DoorFailed
from testing.clients import PINNED, free_port
from testing.codex_session import CodexHome
from testing.codex_session import StandIn as CodexStandIn
from testing.kilo_session import kilo_config
from testing.pi_session import pi_agent_dir
from testing.qwen_session import QwenStandIn
from testing.sessions import StandIn, base_env, opencode_config, opencode_env, user_records
from tests.factories import prompt

# No timed check, only the CLIs' own time limits (a first turn 180 s, a resume 120 s to admit
# the text and 120 s to end), which bound a test: `make test` runs the module among its workers.
pytestmark = [pytest.mark.untimed, pytest.mark.timeout(480)]
TEXT = 'wake up: "check the flaky test"\nsecond line'
NOWHERE = 'wake up: "a session that is not there"'  # the text of a wake that must fail


@dataclass
class Case:
    """One agent's ended session: how to reach it, and where its turns are counted."""

    agent: Agent
    project: Path
    env: dict[str, str]
    pb_home: Path
    session: str
    turns: Callable[[str], int]  # the stand-in's turns (not side requests) with the text
    recorded: Callable[[str], int]  # the session's own records of the text as the user's
    missing: str  # a session id of the right form that does not exist
    words: str  # what the agent says of it

    def request(self, session: str) -> WakeRequest:
        return WakeRequest(session, self.project, self.env, self.pb_home, timeout=120)


def _first(argv: list[str], case_env: dict[str, str], project: Path) -> list[dict[str, object]]:
    """A first headless turn: the session the wake continues (its JSON events)."""
    out, _ = _run(argv, case_env, project)
    return [json.loads(ln) for ln in out.splitlines() if ln.startswith("{")]


def _run(argv: list[str], case_env: dict[str, str], project: Path) -> tuple[str, str]:
    """A first headless turn: what it printed on its output and on its errors."""
    done = subprocess.run(
        argv,
        cwd=project,
        env=case_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=180,
        check=False,
    )
    assert 0 == done.returncode, done.stderr[-2000:]
    return done.stdout.decode(), done.stderr.decode()


def _folders(root: Path) -> tuple[Path, Path, dict[str, str]]:
    pb_home, project = root / "pb", root / "proj"
    pb_home.mkdir(mode=0o700)
    project.mkdir()
    binaries = Path(PINNED["codex"].path).parent
    return pb_home, project, base_env(root / "home", binaries, pb_home)


@pytest.fixture(scope="module")
def closing() -> Iterator[list[Callable[[], object]]]:
    """What the agents' fixtures started, closed at the module's end (also when a fixture failed
    after starting something)."""
    todo: list[Callable[[], object]] = []
    yield todo
    for close in reversed(todo):
        close()


def _installed(key: str) -> Path:
    found = PINNED[key].installed()
    if found is None:
        pytest.skip(PINNED[key].missing)
    return found


@pytest.fixture(scope="module")
def codex(
    tmp_path_factory: pytest.TempPathFactory, closing: list[Callable[[], object]]
) -> Iterator[Case]:
    binary = _installed("codex")
    root = tmp_path_factory.mktemp("codex")
    pb_home, project, env = _folders(root)
    stand_in = CodexStandIn(root / "model.log", free_port())
    closing.append(stand_in.close)
    home = CodexHome(root / "codex", binary.parent, stand_in.port)
    closing.append(home.close)
    home.trust_project(project)
    env.update(CODEX_HOME=str(home.folder), MOCK_OPENAI_API_KEY="sk-dummy")
    argv = [str(binary), "exec", "--json", "--skip-git-repo-check", "the first turn"]
    [thread] = [e["thread_id"] for e in _first(argv, env, project) if e["type"] == "thread.started"]
    assert isinstance(thread, str)
    missing = "01a233d6-0000-7000-8000-000000000000"
    yield Case(
        CODEX,
        project,
        env,
        pb_home,
        thread,
        lambda text: len(stand_in.requests(text)),
        lambda text: len(user_records(home.rollout(thread), CODEX.user_texts, text)),
        missing,
        f"no rollout found for thread id {missing}",
    )


def _opencode_like(
    root: Path, agent: Agent, key: str, closing: list[Callable[[], object]]
) -> Iterator[Case]:
    """OpenCode, or its fork Kilo Code: the stand-in as its one provider, its database."""
    binary = _installed(key)
    pb_home, project, env = _folders(root)
    env["PATH"] = f"{binary.parent}:{env['PATH']}"
    stand_in = StandIn(root)
    closing.append(stand_in.close)
    if agent is KILO:
        kilo_config(root / "home", stand_in.port)
        env.update(opencode_env("KILO"))
    else:
        config = root / "home" / ".config" / "opencode"
        config.mkdir(parents=True)
        opencode_config(config / "opencode.json", stand_in.port)
        env.update(opencode_env("OPENCODE"))
    argv = [str(binary), "run", "--format", "json", "the first turn"]
    session = str(_first(argv, env, project)[0]["sessionID"])
    database = root / "home" / ".local" / "share" / agent.kind / f"{agent.kind}.db"

    def turns(text: str) -> int:  # the session's turns offer tools; its title's request none
        return sum(text in r["user"] and bool(r["body"].get("tools")) for r in stand_in.records())

    def recorded(text: str) -> int:
        with sqlite3.connect(database) as db:
            rows = db.execute(
                "SELECT m.data, p.data FROM part p JOIN message m ON p.message_id = m.id"
                " WHERE p.session_id = ?",
                (session,),
            ).fetchall()
        return sum(
            json.loads(m)["role"] == "user" and json.loads(p).get("text") == text for m, p in rows
        )

    yield Case(
        agent,
        project,
        env,
        pb_home,
        session,
        turns,
        recorded,
        "ses_00000000000000000000000000",
        "Session not found",
    )


@pytest.fixture(scope="module")
def opencode(
    tmp_path_factory: pytest.TempPathFactory, closing: list[Callable[[], object]]
) -> Iterator[Case]:
    root = tmp_path_factory.mktemp("opencode")
    yield from _opencode_like(root, OPENCODE, "opencode", closing)


@pytest.fixture(scope="module")
def kilo(
    tmp_path_factory: pytest.TempPathFactory, closing: list[Callable[[], object]]
) -> Iterator[Case]:
    root = tmp_path_factory.mktemp("kilo")
    yield from _opencode_like(root, KILO, "kilo", closing)


@pytest.fixture(scope="module")
def qwen(
    tmp_path_factory: pytest.TempPathFactory, closing: list[Callable[[], object]]
) -> Iterator[Case]:
    binary = _installed("qwen")
    root = tmp_path_factory.mktemp("qwen")
    pb_home, project, env = _folders(root)
    env["PATH"] = f"{binary.parent}:{env['PATH']}"
    stand_in = QwenStandIn(root)
    closing.append(stand_in.close)
    qwen_home = root / "home" / ".qwen"
    qwen_home.mkdir(parents=True)
    settings = {"ui": {"hideTips": True}, "security": {"auth": {"selectedType": "openai"}}}
    (qwen_home / "settings.json").write_text(json.dumps(settings))
    (root / "tmp").mkdir()
    env.update(
        OPENAI_API_KEY="stand-in",
        OPENAI_BASE_URL=f"http://127.0.0.1:{stand_in.port}/v1",
        OPENAI_MODEL="stand-in",
        TMPDIR=str(root / "tmp"),
    )
    argv = [str(binary), "-o", "stream-json", "the first turn"]
    session = str(_first(argv, env, project)[0]["session_id"])

    def turns(text: str) -> int:  # a turn's newest user text ends with it; a memory pass quotes it
        return sum(r["user"].rstrip().endswith(text) for r in stand_in.records())

    def recorded(text: str) -> int:
        path = session_file(qwen_home, session)
        return len(user_records(path, lambda r: [t.strip() for t in QWEN.user_texts(r)], text))

    missing = "471cc586-0000-4000-8000-000000000000"
    yield Case(
        QWEN,
        project,
        env,
        pb_home,
        session,
        turns,
        recorded,
        missing,
        f"No saved session found with ID {missing}",
    )


@pytest.fixture(scope="module")
def pi(
    tmp_path_factory: pytest.TempPathFactory, closing: list[Callable[[], object]]
) -> Iterator[Case]:
    binary = _installed("pi")
    root = tmp_path_factory.mktemp("pi")
    pb_home, project, env = _folders(root)
    env["PATH"] = f"{binary.parent}:{env['PATH']}"
    env.update(PI_OFFLINE="1", PI_SKIP_VERSION_CHECK="1", PI_TELEMETRY="0")
    stand_in = StandIn(root, "testing.pi_stand_in")
    closing.append(stand_in.close)
    agent_dir = pi_agent_dir(root / "home", stand_in.port)
    argv = [str(binary), "--provider", "pb", "--model", "stand-in", "--mode", "json"]
    session = str(_first([*argv, "-p", "the first turn"], env, project)[0]["id"])

    def recorded(text: str) -> int:
        [path] = (agent_dir / "sessions").glob(f"*/*_{session}.jsonl")
        return len(user_records(path, PI.user_texts, text))

    missing = "01a233e1-0000-7000-8000-000000000000"
    yield Case(
        PI,
        project,
        env,
        pb_home,
        session,
        lambda text: len(stand_in.turns_with(text)),
        recorded,
        missing,
        f"No session found matching '{missing}'",
    )


@pytest.fixture(scope="module")
def gemini(
    tmp_path_factory: pytest.TempPathFactory, closing: list[Callable[[], object]]
) -> Iterator[Case]:
    binary = _installed("gemini")
    root = tmp_path_factory.mktemp("gemini")
    pb_home, project, env = _folders(root)
    stand_in = StandIn(root)
    closing.append(stand_in.close)
    settings = {
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "ide": {"enabled": False, "hasSeenNudge": True},
        "model": {"name": "gemini-2.5-flash"},
    }
    folder = root / "home" / ".gemini"
    folder.mkdir(parents=True)
    (folder / "settings.json").write_text(json.dumps(settings))
    env.update(
        GEMINI_API_KEY="stand-in", GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{stand_in.port}"
    )
    argv = [str(binary), "-o", "stream-json", "-p", "the first turn"]
    session = str(_first(argv, env, project)[0]["session_id"])
    # the file of the first turn, which the session's `seen` follows (a resume in a later
    # minute starts a file of its own holding only the session's header, and writes its turn
    # to this one)
    [path] = folder.glob(f"tmp/*/chats/session-*-{session[:8]}.jsonl")

    def recorded(text: str) -> int:
        return len(user_records(path, GEMINI.user_texts, text))

    missing = "65ff62bf-0000-4000-8000-000000000000"
    yield Case(
        GEMINI,
        project,
        env,
        pb_home,
        session,
        lambda text: len(stand_in.turns_with(text)),
        recorded,
        missing,
        f'Error resuming session: Invalid session identifier "{missing}"',
    )


@pytest.fixture(scope="module")
def copilot(
    tmp_path_factory: pytest.TempPathFactory, closing: list[Callable[[], object]]
) -> Iterator[Case]:
    binary = _installed("copilot")
    root = tmp_path_factory.mktemp("copilot")
    pb_home, project, env = _folders(root)
    stand_in = StandIn(root)
    closing.append(stand_in.close)
    folder = root / "home" / ".copilot"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"trustedFolders": [str(project)]}))
    env.update(
        COPILOT_PROVIDER_BASE_URL=f"http://127.0.0.1:{stand_in.port}/v1",
        COPILOT_PROVIDER_TYPE="openai",
        COPILOT_PROVIDER_API_KEY="stand-in",
        COPILOT_MODEL="gpt-4.1",
    )
    argv = [str(binary), "--no-auto-update", "--output-format", "json", "-p", "the first turn"]
    _first(argv, env, project)
    [events] = folder.glob("session-state/*/events.jsonl")
    session = events.parent.name
    missing = "4105beb8-0000-4000-8000-000000000000"
    yield Case(
        COPILOT,
        project,
        env,
        pb_home,
        session,
        lambda text: len(stand_in.turns_with(text)),
        lambda text: len(user_records(events, COPILOT.user_texts, text)),
        missing,
        f"Error: No session, task, or name matched '{missing}'.",
    )


HERMES_CONFIG = """model:
  provider: custom
  base_url: http://127.0.0.1:{port}/v1
  default: stand-in
  api_key: stand-in
auxiliary:
  title_generation:
    enabled: false
"""


@pytest.fixture(scope="module")
def hermes(
    tmp_path_factory: pytest.TempPathFactory, closing: list[Callable[[], object]]
) -> Iterator[Case]:
    binary = _installed("hermes")
    root = tmp_path_factory.mktemp("hermes")
    pb_home, project, env = _folders(root)
    env["PATH"] = f"{binary.parent}:{env['PATH']}"
    stand_in = StandIn(root, "testing.hermes_stand_in")
    closing.append(stand_in.close)
    folder = root / "home" / ".hermes"
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(HERMES_CONFIG.format(port=stand_in.port))
    env["HERMES_HOME"] = str(folder)
    _, said = _run([str(binary), "chat", "-Q", "-q", "the first turn"], env, project)
    [session] = re.findall(r"^session_id: (\S+)$", said, re.MULTILINE)

    def recorded(text: str) -> int:
        with sqlite3.connect(folder / "state.db") as db:
            rows = db.execute(
                "SELECT content FROM messages WHERE session_id = ? AND role = 'user'", (session,)
            ).fetchall()
        return sum(content == text for (content,) in rows)

    yield Case(
        HERMES,
        project,
        env,
        pb_home,
        session,
        lambda text: len(stand_in.turns_with(text)),
        recorded,
        "20261201_000000_000000",
        "Session not found: 20261201_000000_000000",
    )


AGENTS = ["codex", "opencode", "qwen", "kilo", "pi", "gemini", "copilot", "hermes"]


@pytest.fixture(scope="module", params=AGENTS)
def case(request: pytest.FixtureRequest) -> Case:
    """One agent's ended session, made once for both tests (pytest runs them one after the
    other, agent by agent)."""
    made: Case = request.getfixturevalue(request.param)
    return made


def test_a_wake_continues_the_ended_session_with_the_text_once(case: Case) -> None:
    assert 0 == case.turns(TEXT) == case.recorded(TEXT)
    door = case.agent.wake_door(case.request(case.session))
    assert isinstance(door, ResumeDoor)
    assert "accepted" == anyio.run(door.deliver, prompt(1), TEXT, "bob")
    assert door.process is not None
    assert 0 == door.process.wait(timeout=120)
    assert 1 == case.turns(TEXT)
    assert 1 == case.recorded(TEXT)


def test_a_wake_of_a_session_that_does_not_exist_fails_in_the_agents_words(case: Case) -> None:
    door = case.agent.wake_door(case.request(case.missing))
    assert door is not None
    with pytest.raises(DoorFailed, match=re.escape(case.words)):
        anyio.run(door.deliver, prompt(1), NOWHERE, "bob")
    assert 0 == case.turns(NOWHERE)
