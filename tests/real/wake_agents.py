"""Agents other than Claude Code woken end to end by their asleep listener, on the real CLIs
offline, against the tests' model stand-ins: Codex 0.169.0 (`codex exec resume`), pi 0.73.1
(`pi -p --session`), Qwen Code 0.24.4 (`qwen --resume`), Hermes Agent 0.19.0 (`hermes chat
--resume -Q --query`).

Each test starts a session as its person would, with paneboard's hooks (or extension, or
plugin) and the policy `--wake resume`; the session does one turn, and its person ends it. Its
listener goes asleep instead of leaving; a prompt posted then wakes the session through the
agent's own resume door: the model gets the text once, `delivered` names the session it woke,
`status` says so, and the woken agent answers from its shell (`paneboard answer`), which ends
the sender's `wait`. A woken turn is one headless process: once it ends, the pane's listener is
asleep again, and the next prompt wakes the session again. A woken turn has no door of its own
(`codex queue` does not reach `codex exec`, a headless Qwen Code has no inbox, `pi -p` no
extension door, `hermes chat -q` no plugin door): its session-start hook starts no listener,
and the asleep one keeps the pane. A person who reopens the session in its TUI gets the pane:
its own listener takes it over from the asleep one.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest

from paneboard.agents.pi import PI
from paneboard.agents.qwen import QWEN
from paneboard.agents.qwen_inbox import read_session, session_file
from paneboard.board.context import Context, header
from paneboard.protocol.posts import Delivered, Prompt, Seen, Undelivered
from paneboard.state.filelog.log import read_posts
from paneboard.state.panes.lock import holder
from paneboard.state.trust.policy import Policy, write_policy
from testing.clients import PINNED, free_port
from testing.codex_session import CodexHome, CodexTui, StandIn
from testing.helpers import ScriptServer, cli_env, run_cli, wait_until
from testing.hermes_session import HermesSession
from testing.pi_session import PiSession
from testing.qwen_session import QwenSession
from testing.sessions import TmuxSession, stage, user_records
from tests.real.live import UNTIMED

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is missing")
# What a module of one agent takes (`from tests.real.wake_agents import *`): the tests, the
# mark, and the fixture's maker.
__all__ = [
    "pytestmark",
    "test_a_listener_killed_once_it_recorded_the_wake_wakes_the_session_once_when_started_again",
    "test_a_person_reopening_the_asleep_session_gets_the_pane_and_nothing_twice",
    "test_a_prompt_the_policy_holds_wakes_nothing",
    "test_a_prompt_wakes_the_ended_session_whose_agent_answers_it_and_a_later_one_again",
    "test_prompts_posted_behind_a_wake_wake_the_session_again_once_its_turn_has_ended",
    "test_the_wake_budget_spent_prompts_wait_and_status_says_why",
    "test_three_prompts_posted_together_while_asleep_cause_one_wake_and_one_turn",
    "woken_fixture",
]
BOARD = "test"
UNLOAD_S = 2  # the Codex daemon unloads an idle thread this long after its last TUI left
ASK = "what is six times seven?\nMOCK-ANSWER: {answer}"


def _installed(kind: str) -> Path:
    """The pinned CLI of agent *kind*; the test is skipped, saying why, where it is missing."""
    binary = PINNED[kind].installed()
    if binary is None:
        pytest.skip(PINNED[kind].missing)
    return binary


class Board:
    """The paneboard home of one test: the asleep agent's pane, its posts and receipts."""

    def __init__(self, home: Path, agent: str) -> None:
        self.home, self.agent = home, agent
        home.mkdir(mode=0o700, exist_ok=True)
        (home / BOARD / "panes").mkdir(mode=0o700, parents=True, exist_ok=True)
        write_policy(home / BOARD, agent, Policy(wake="resume", rate=0))

    @property
    def panes(self) -> Path:
        return self.home / BOARD / "panes"

    def presence(self) -> dict[str, Any]:
        try:
            return dict(json.loads((self.panes / f"{self.agent}.presence").read_text()))
        except (OSError, ValueError):
            return {}

    def pane_log(self) -> str:
        log = self.panes / f"{self.agent}.log"
        return log.read_text() if log.exists() else ""

    def holder(self) -> int | None:
        return holder(self.panes / f"{self.agent}.lock")

    def wait_asleep(self, timeout: float = 90, pid: int | None = None) -> int:
        """Until the pane's listener (*pid*, when given) says it is asleep; its pid."""
        wait_until(
            lambda: (
                self.presence().get("sleep") == "asleep"
                and pid in (None, self.presence().get("pid"))
            ),
            "asleep",
            timeout,
            lambda: self.pane_log()[-4000:],
        )
        return int(self.presence()["pid"])

    def wait_delivered(self, ids: list[str], timeout: float = 120) -> None:
        """Until each of *ids* has its `delivered` receipt."""
        for pid in ids:
            wait_until(
                lambda pid=pid: any(d.prompt_id == pid for d in self.posts(Delivered)),
                f"{pid} delivered",
                timeout,
                lambda: self.pane_log()[-4000:],
            )

    def post(self, body: str) -> str:
        done = run_cli(self.home, "post", "--as", "alice", "--to", self.agent, "--", body)
        assert 0 == done.returncode, done.stderr
        return done.stdout.strip()

    def burst(self, count: int) -> list[str]:
        """*count* prompts from alice appended in one write (a burst, as a script posts it)."""
        store = Context.resolve(str(self.home), BOARD, "alice").store()
        prompts = [
            Prompt(**header(BOARD, "alice"), to=(self.agent,), body=f"task {n} of {count}")
            for n in range(count)
        ]
        store.append(prompts)
        return [p.id for p in prompts]

    def stage(self, pid: str) -> str:
        return stage(self.home, pid, self.agent, "outcome")[0]

    def wait(self, pid: str, timeout: float = 150) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "paneboard", "wait", pid, "--as", "alice"]
        return subprocess.run(
            [*argv, "--timeout", str(timeout)],
            env=cli_env(self.home),
            capture_output=True,
            text=True,
            timeout=timeout + 30,
            check=False,
        )

    def posts(self, kind: type) -> list[Any]:
        return [p for _, p in read_posts(self.home / BOARD / "log") if isinstance(p, kind)]

    def seen(self, pid: str) -> list[tuple[str, str]]:
        """The door and source of each `seen` receipt of *pid*."""
        return [(s.door, s.source) for s in self.posts(Seen) if s.prompt_id == pid]

    def status(self, pid: str) -> str:
        done = run_cli(self.home, "status", "--as", "alice", pid)
        assert 0 == done.returncode, done.stderr
        return done.stdout

    def wakes(self) -> list[Any]:
        path = self.panes / f"{self.agent}.wakes"
        return list(json.loads(path.read_text())) if path.exists() else []

    def stop_listener(self) -> None:
        """End the pane's listener, asleep or not (it outlives its session): SIGTERM."""
        pid = self.holder()
        if pid is not None and pid > 0:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            wait_until(lambda: not self.holder(), "the listener to end", 15, self.pane_log)


class Woken(Protocol):
    """One agent's session, ended by its person, whose listener sleeps on its pane."""

    board: Board
    sid: str  # the agent's own id of the session a wake resumes
    slow: str  # what in a prompt makes the stand-in take {n} seconds over its answer
    source: str  # the `seen` source: the agent's own conversation file
    door: str  # the door of the agent's live session
    conversation: str  # the session's conversation file (or id), as the agent names it

    def end(self) -> None: ...

    def reopen(self) -> str: ...

    def model_saw(self, pid: str) -> int: ...

    def recorded(self, pid: str) -> int: ...

    def turns_with(self, ids: list[str]) -> int: ...

    def close(self) -> None: ...


def chat_turns(stand_in: ScriptServer, *ids: str) -> int:
    """How many turns of a Chat Completions stand-in began with a text holding any of prompts
    *ids* as their input: the requests whose last message is the user's, ending with a prompt's
    text (the same turn's request after a tool call ends with the tool's result; a memory pass
    quotes the conversation inside a text of its own; Qwen Code puts its reminders before the
    text, and wraps what its inbox delivered in a cross-session message)."""
    headers = [f"[paneboard] prompt {pid} from" for pid in ids]
    return sum(
        any(h in r["user"] for h in headers)
        and unwrapped(r["user"]).rstrip().endswith("-- 'YOUR ANSWER'")
        and r["body"]["messages"][-1].get("role") == "user"
        for r in stand_in.records()
    )


def unwrapped(text: str) -> str:
    """A user text as paneboard's door gave it: Qwen Code gives what its inbox delivered to a
    live session as ``<cross_session_message …>TEXT</cross_session_message>``, a note on the
    sender's authority after it."""
    if not text.startswith("<cross_session_message "):
        return text
    return text.partition(">")[2].partition("</cross_session_message>")[0]


class CodexWake:
    """A Codex TUI (through its managed daemon, as a person runs it) with paneboard's hooks
    trusted; the person leaves with `/exit`, and the daemon unloads the thread."""

    agent = "codex-bob"
    slow = "MOCK-SLOW-{n}"  # the stand-in holds its answer back n seconds
    source = "codex-rollout"
    door = "codex-queue"

    def __init__(self, folder: Path) -> None:
        binary = _installed("codex")
        self.board = Board(folder / "pb", self.agent)
        self.stand_in = StandIn(folder / "model.log", free_port())
        self.codex = CodexHome(folder / "codex-home", binary.parent, self.stand_in.port, UNLOAD_S)
        self.tuis: list[CodexTui] = []
        try:
            self._open(folder, binary.parent)
        except BaseException:
            self.close()
            raise

    def _open(self, folder: Path, bin_dir: Path) -> None:
        project = (folder / "proj").resolve()
        project.mkdir()
        self.codex.trust_project(project)
        args = ("hook", "install", "codex", "--project", str(project), "--trust", "--as")
        done = run_cli(self.board.home, *args, self.agent, CODEX_HOME=str(self.codex.folder))
        assert 0 == done.returncode, done.stderr
        user = folder / "user-home"
        user.mkdir()
        path = f"{Path(sys.executable).parent}:{bin_dir}:/usr/local/bin:/usr/bin:/bin"
        env = {"PATH": path, "HOME": str(user), "TERM": "xterm-256color", "LANG": "C.UTF-8"}
        env.update(PANEBOARD_HOME=str(self.board.home), PANEBOARD_BOARD=BOARD)
        self.project, self.env = project, env
        self.tuis.append(CodexTui(self.codex, project, env))
        self.tuis[-1].submit(self.stand_in, "hello")
        [self.sid] = wait_until(self.codex.threads, "the thread", 30)
        self.conversation = str(self.codex.rollout(self.sid))
        wait_until(lambda: (self.board.holder() or 0) > 0, "the listener", 30, self.board.pane_log)

    def end(self) -> None:
        self.tuis[-1].type("/exit")

    def reopen(self) -> str:
        """`codex resume THREAD`, as its person runs it, and a first turn (the reopened
        session's listener starts with its first turn's hook): the thread's rollout."""
        self.tuis.append(CodexTui(self.codex, self.project, self.env, "resume", self.sid))
        self.tuis[-1].submit(self.stand_in, "back again")
        return str(self.codex.rollout(self.sid))

    def model_saw(self, pid: str) -> int:
        """Turns started with the prompt as the newest user text (not the tool call's next)."""
        return len(self.stand_in.requests(f"[paneboard] prompt {pid} from"))

    def turns_with(self, ids: list[str]) -> int:
        headers = [f"[paneboard] prompt {pid} from" for pid in ids]
        turns = [r for r in self.stand_in.records() if r.get("trigger")]
        return sum(any(h in (r.get("text") or "") for h in headers) for r in turns)

    def recorded(self, pid: str) -> int:
        from paneboard.agents.codex import CODEX

        rollout = self.codex.rollout(self.sid)
        return len(user_records(rollout, CODEX.user_texts, f"[paneboard] prompt {pid} from"))

    def close(self) -> None:
        self.board.stop_listener()
        for tui in self.tuis:
            tui.close()
        self.codex.close()
        self.stand_in.close()


class SessionWake:
    """What pi's, Qwen Code's and Hermes's wakes share: a session of testing/ (its TUI in tmux,
    its model stand-in), its one "hello" turn, the person's `/quit`, and the TUIs a person
    reopens."""

    agent: str
    session: PiSession | QwenSession | HermesSession

    def _start(self, session: PiSession | HermesSession) -> None:
        self.session = session
        self.board = Board(session.pb_home, self.agent)
        self.tuis: list[TmuxSession] = []
        try:
            session.tmux.type("hello")
            session.turn("hello")
        except BaseException:
            self.close()
            raise

    def end(self) -> None:
        self.session.tmux.type("/quit")

    def model_saw(self, pid: str) -> int:
        assert self.session.stand_in is not None
        return chat_turns(self.session.stand_in, pid)

    def turns_with(self, ids: list[str]) -> int:
        assert self.session.stand_in is not None
        return chat_turns(self.session.stand_in, *ids)

    def close(self) -> None:
        self.board.stop_listener()
        for tui in self.tuis:
            tui.close()
        self.session.close()


class PiWake(SessionWake):
    """pi's TUI with paneboard's extension (its listener reads the session id from the file
    name); the person quits with `/quit`. `pi -p` starts no listener: no handover."""

    session: PiSession
    agent = "pi-bob"
    slow = "STAND-IN-SLOW-{n}"
    source = "pi-session"
    door = "pi-extension"

    def __init__(self, folder: Path) -> None:
        binary = _installed("pi")
        self._start(PiSession(folder, binary, self.agent))
        self.file = Path(self.session.registry["sessionFile"])
        self.sid = self.file.stem.rpartition("_")[2]
        self.conversation = str(self.file)

    def reopen(self) -> str:
        """`pi --continue` in the project, as its person runs it (the folder's newest session);
        the session file the reopened pi's extension names."""
        ended, s = self.session.pid, self.session
        argv = [str(s.bin), "--provider", "pb", "--model", "stand-in", "--continue"]
        self.tuis.append(TmuxSession(s.project, argv, s.env))
        record = wait_until(
            lambda: reopened(s.registries(), ended),
            "the reopened pi's door",
            60,
            self.tuis[-1].screen,
        )
        return str(record["sessionFile"])

    def recorded(self, pid: str) -> int:
        return len(user_records(self.file, PI.user_texts, f"[paneboard] prompt {pid} from"))


class QwenWake(SessionWake):
    """Qwen Code's TUI with paneboard's hooks and a controller grant; its headless turns run
    their shell tool under the person's own setting (`tools.approvalMode`, here `yolo`); the
    person quits with `/quit`."""

    session: QwenSession
    agent = "qwen-hooked"
    slow = "STAND-IN-SLOW-{n}"
    source = "qwen-session"
    door = "qwen-inbox"

    def __init__(self, folder: Path) -> None:
        binary = _installed("qwen")
        self.session = QwenSession(folder, binary)
        self.board = Board(self.session.pb_home, self.agent)
        self.tuis: list[TmuxSession] = []
        try:
            settings = self.session.qwen_home / "settings.json"
            written = json.loads(settings.read_text())
            settings.write_text(json.dumps({**written, "tools": {"approvalMode": "yolo"}}))
            self.session.type("hello")
            self.session.turn("hello")
            wait_until(
                lambda: (self.board.holder() or 0) > 0, "the listener", 30, self.board.pane_log
            )
        except BaseException:
            self.close()
            raise
        self.sid = self.session.session().session_id
        self.conversation = str(session_file(self.session.qwen_home, self.sid))

    def reopen(self) -> str:
        """`qwen --continue` in the project, as its person runs it (the project's newest
        session); the session file of the session the reopened Qwen Code's registry names."""
        s, ended = self.session, self.session.pid
        argv = [str(s.bin), "--auth-type", "openai", "--approval-mode", "yolo", "--continue"]
        self.tuis.append(TmuxSession(s.project, argv, s.env))

        def record() -> Path | None:
            for path in (s.qwen_home / "sessions").glob("*.json"):
                with contextlib.suppress(ValueError, OSError):
                    if path.stem != str(ended) and json.loads(path.read_text()).get("ipcPath"):
                        return path
            return None

        found = wait_until(record, "the reopened Qwen Code's record", 90, self.tuis[-1].screen)
        return str(session_file(s.qwen_home, read_session(found).session_id))

    def recorded(self, pid: str) -> int:
        path = session_file(self.session.qwen_home, self.sid)
        return len(user_records(path, QWEN.user_texts, f"[paneboard] prompt {pid} from"))


class HermesWake(SessionWake):
    """Hermes's classic CLI with paneboard's plugin, which names the session to its listener;
    the person quits with `/quit`. A woken turn (`hermes chat -q`) opens no plugin door."""

    session: HermesSession
    agent = "hermes-bob"
    slow = "STAND-IN-SLOW-{n}"
    source = "hermes-db"
    door = "hermes-plugin"

    def __init__(self, folder: Path) -> None:
        binary = _installed("hermes")
        self._start(HermesSession(folder, binary, self.agent))
        self.sid = str(self.session.registry["session"])
        self.conversation = self.sid  # one database holds every session: the id names it
        self.database = Path(self.session.env["HERMES_HOME"]) / "state.db"

    def reopen(self) -> str:
        """`hermes --resume ID`, as its person runs it; the session the reopened plugin names."""
        s, ended = self.session, self.session.pid
        self.tuis.append(TmuxSession(s.project, [str(s.bin), "--resume", self.sid], s.env))
        record = wait_until(
            lambda: reopened(s.registries(), ended),
            "the reopened Hermes's door",
            90,
            self.tuis[-1].screen,
        )
        return str(record["session"])

    def recorded(self, pid: str) -> int:
        """The session's user rows in Hermes's database holding the prompt's header."""
        with contextlib.closing(sqlite3.connect(f"file:{self.database}?mode=ro", uri=True)) as db:
            rows = db.execute(
                "SELECT content FROM messages WHERE session_id = ? AND role = 'user'", (self.sid,)
            ).fetchall()
        return sum(f"[paneboard] prompt {pid} from" in str(content) for (content,) in rows)


def reopened(folder: Path, ended: int) -> dict[str, Any] | None:
    """The record, in an agent's door registry *folder*, of a process other than *ended*."""
    for path in folder.glob("*.json"):
        with contextlib.suppress(ValueError, OSError):
            record = dict(json.loads(path.read_text()))
            if record.get("pid") != ended:
                return record
    return None


WAKEABLE: dict[str, type[CodexWake | HermesWake | PiWake | QwenWake]] = {
    "codex": CodexWake,
    "hermes": HermesWake,
    "pi": PiWake,
    "qwen": QwenWake,
}


def woken_fixture(kind: str) -> Any:
    """The `woken` fixture of a module of agent *kind*: a session of the agent, with `--wake
    resume`, one turn done, ended: its listener asleep. (One module per agent, so `make test`'s
    workers take the agents side by side.)"""

    @pytest.fixture
    def woken(tmp_path: Path) -> Iterator[Woken]:
        one = WAKEABLE[kind](tmp_path)
        try:
            one.end()
            one.board.wait_asleep()
            yield one
        finally:
            one.close()

    return woken


def _wake_and_answer(one: Woken, answer: str) -> float:
    """A prompt posted to the asleep agent; `wait` ends with the woken agent's answer. Checks
    its receipt, status and the model's one turn; returns post → delivered, in seconds."""
    board = one.board
    asleep = board.wait_asleep()
    posted = time.time()
    pid = board.post(ASK.format(answer=answer))
    waited = board.wait(pid)
    assert 0 == waited.returncode, waited.stderr + board.pane_log()[-4000:]
    assert f"{answer}\n" == waited.stdout
    [woke] = [d for d in board.posts(Delivered) if d.prompt_id == pid]
    assert one.sid == woke.woke
    assert f"woke {one.sid} at" in board.status(pid)
    assert 1 == one.model_saw(pid)
    assert 1 == one.recorded(pid)

    # `seen` comes from the session's own conversation file, which the woken turn wrote
    wait_until(lambda: board.seen(pid), "seen", 60, lambda: board.pane_log()[-4000:])
    assert [(woke.door, one.source)] == board.seen(pid), board.pane_log()[-4000:]
    # the woken turn ends; the same listener is asleep again (the turn started none)
    assert asleep == board.wait_asleep(120), board.pane_log()[-4000:]
    return float(woke.ts) - posted


@UNTIMED
def test_a_prompt_wakes_the_ended_session_whose_agent_answers_it_and_a_later_one_again(
    woken: Woken,
) -> None:
    """Two rounds: each prompt wakes the session once, reaches its model once, is answered."""
    first = _wake_and_answer(woken, "forty-two")
    second = _wake_and_answer(woken, "still forty-two")
    assert 2 == len(woken.board.wakes())
    assert 2 == len(woken.board.posts(Delivered))
    print(f"post -> delivered by a wake: {first:.2f} s, {second:.2f} s")


def test_prompts_posted_behind_a_wake_wake_the_session_again_once_its_turn_has_ended(
    woken: Woken,
) -> None:
    """A woken headless session is one turn, for the text that woke it: the prompts posted
    behind it (while asleep, and while that turn runs) wait until its process has ended, then
    wake the session again, together in one text; each reaches the model once."""
    board = woken.board
    ids = [board.post(f"task 0 {woken.slow.format(n=6)}"), board.post("task 1")]
    wait_until(
        lambda: any(d.prompt_id == ids[0] for d in board.posts(Delivered)),
        "the first delivered",
        120,
        board.pane_log,
    )
    ids.append(board.post("task 2, during the woken turn"))
    board.wait_delivered(ids)
    # the last turn reaches the model after its `delivered` (the agent's turn had started)
    wait_until(
        lambda: all(woken.model_saw(pid) for pid in ids), "each at the model", 60, board.pane_log
    )
    board.wait_asleep(120)  # every woken turn has ended
    wakes = board.wakes()
    assert 2 == len(wakes), board.pane_log()[-4000:]
    assert ids[0] == wakes[0][2]  # the slow first turn, alone
    [last] = [d for d in board.posts(Delivered) if d.prompt_id == ids[2]]
    assert woken.sid == last.woke
    assert wakes[1][2] == (last.handover or ids[2])  # the second wake carried it
    assert [1, 1, 1] == [woken.model_saw(pid) for pid in ids]
    assert [1, 1, 1] == [woken.recorded(pid) for pid in ids]
    assert [] == board.posts(Undelivered)


@UNTIMED
def test_three_prompts_posted_together_while_asleep_cause_one_wake_and_one_turn(
    woken: Woken,
) -> None:
    """Three prompts appended at once to the asleep agent go to one resume, as one text: one
    wake, each prompt `delivered` once naming the session it woke, one model turn with all
    three in it, each once in the session's conversation."""
    board = woken.board
    ids = board.burst(3)
    board.wait_delivered(ids)
    wait_until(
        lambda: all(woken.model_saw(pid) for pid in ids), "each at the model", 60, board.pane_log
    )
    board.wait_asleep(120)  # the woken turn has ended
    assert 1 == len(board.wakes()), board.pane_log()[-4000:]
    receipts = [d for d in board.posts(Delivered) if d.prompt_id in ids]
    assert sorted(ids) == sorted(d.prompt_id for d in receipts)
    assert [woken.sid] * 3 == [d.woke for d in receipts]
    assert {ids[0]} == {d.handover for d in receipts}
    assert 1 == woken.turns_with(ids)
    assert [1, 1, 1] == [woken.model_saw(pid) for pid in ids]
    assert [1, 1, 1] == [woken.recorded(pid) for pid in ids]
    assert [] == board.posts(Undelivered)


def test_a_prompt_the_policy_holds_wakes_nothing(woken: Woken) -> None:
    board = woken.board
    asleep = board.wait_asleep()
    write_policy(board.home / BOARD, board.agent, Policy(wake="resume", rate=0, others="hold"))
    pid = board.post("held work")
    wait_until(lambda: board.stage(pid) == "held", "held", 30, board.pane_log)
    time.sleep(3)  # a wake would have begun by now
    assert [] == board.wakes()
    assert 0 == woken.model_saw(pid)
    assert [] == board.posts(Delivered)
    assert "asleep" == board.presence().get("sleep")
    assert asleep == board.holder()


@UNTIMED
def test_the_wake_budget_spent_prompts_wait_and_status_says_why(woken: Woken) -> None:
    """`--wake-limit 1`: the first prompt wakes the session; once that turn has ended, the next
    waits asleep, `status` says why, and no model sees it."""
    board = woken.board
    write_policy(board.home / BOARD, board.agent, Policy(wake="resume", rate=0, wake_limit=1))
    first = board.post(ASK.format(answer="forty-two"))
    waited = board.wait(first)
    assert 0 == waited.returncode, waited.stderr + board.pane_log()[-4000:]
    asleep = board.wait_asleep(120)  # the woken turn has ended
    second = board.post("second")
    wait_until(
        lambda: f"{second} from alice waits until" in board.pane_log(),
        "the wait",
        30,
        lambda: board.pane_log()[-4000:],
    )
    status = board.status(second)
    assert "wake budget: 1 wakes in the last hour spent" in status, status
    assert "posted" == board.stage(second)
    assert 1 == len(board.wakes())
    assert 0 == woken.model_saw(second)
    assert asleep == board.holder()
    assert "asleep" == board.presence().get("sleep")


class Started:
    """How the session's hook started the pane's listener *pid*: its own command line, folder
    and environment (read while it runs), to start it again."""

    def __init__(self, pid: int) -> None:
        proc = Path(f"/proc/{pid}")
        self.argv = [a.decode() for a in (proc / "cmdline").read_bytes().split(b"\0") if a]
        pairs = (e.decode().partition("=") for e in (proc / "environ").read_bytes().split(b"\0"))
        self.env = {k: v for k, _, v in pairs if k}
        self.cwd = os.readlink(proc / "cwd")

    def again(self, board: Board, **env: str) -> subprocess.Popen[bytes]:
        """The listener started again (plus *env*), its output in the pane's log: it takes the
        pane over from an asleep one, or starts asleep."""
        with (board.panes / f"{board.agent}.log").open("ab") as log:
            return subprocess.Popen(
                self.argv,
                cwd=self.cwd,
                env={**self.env, **env},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )


@UNTIMED
def test_a_listener_killed_once_it_recorded_the_wake_wakes_the_session_once_when_started_again(
    woken: Woken,
) -> None:
    """SIGKILL right after the asleep listener recorded the wake, before the resume: the prompt
    stays open and no model saw it; the listener started again resumes the session for it once,
    under the same wake record (one wake charged), and the woken agent's answer ends `wait`."""
    board = woken.board
    started = Started(board.wait_asleep())
    first = started.again(board, PANEBOARD_FAILPOINT="wake-recorded")
    again: subprocess.Popen[bytes] | None = None
    try:
        board.wait_asleep(60, first.pid)
        pid = board.post(ASK.format(answer="forty-two"))
        assert -signal.SIGKILL == first.wait(timeout=60), board.pane_log()[-4000:]
        assert [pid] == [w[2] for w in board.wakes()]
        assert ("posted", []) == (board.stage(pid), board.posts(Delivered))
        assert 0 == woken.model_saw(pid)
        again = started.again(board)
        waited = board.wait(pid)
        assert 0 == waited.returncode, waited.stderr + board.pane_log()[-4000:]
        assert "forty-two\n" == waited.stdout
        [woke] = [d for d in board.posts(Delivered) if d.prompt_id == pid]
        assert woken.sid == woke.woke
        assert 1 == woken.model_saw(pid)
        assert 1 == woken.recorded(pid)
        board.wait_asleep(120, again.pid)
        assert [pid] == [w[2] for w in board.wakes()]
        assert [] == board.posts(Undelivered)
    finally:
        for proc in (first, again):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=15)


@UNTIMED
def test_a_person_reopening_the_asleep_session_gets_the_pane_and_nothing_twice(
    woken: Woken,
) -> None:
    """After a wake, while the listener is asleep, the person reopens the same session in its
    TUI (Codex: `codex resume THREAD`; pi: `pi --continue`; Qwen Code: `qwen --continue`;
    Hermes: `hermes --resume ID`): the reopened session's own listener takes the pane over
    from the asleep one, which ends and wakes nothing; the next prompt goes in through the live
    session's door, once at the model and `seen` once, and the prompt the wake delivered is not
    delivered again: each prompt once at the model, once in the conversation."""
    board = woken.board
    asleep = board.wait_asleep()
    _wake_and_answer(woken, "forty-two")
    [wake_receipt] = board.posts(Delivered)
    followed = board.presence().get("transcript")
    assert woken.conversation == woken.reopen()  # the same conversation, not a new one

    def live() -> bool:
        held, seen = board.holder(), board.presence()
        return held not in (None, asleep) and seen.get("pid") == held and not seen.get("sleep")

    wait_until(live, "the reopened session's listener", 60, lambda: board.pane_log()[-4000:])
    wait_until(lambda: not Path(f"/proc/{asleep}").exists(), "the asleep one gone", 15)
    assert followed == board.presence().get("transcript")
    pid = board.post("after the reopen")
    board.wait_delivered([pid], 60)
    [receipt] = [d for d in board.posts(Delivered) if d.prompt_id == pid]
    assert (woken.door, None) == (receipt.door, receipt.woke)
    wait_until(lambda: board.seen(pid), "seen", 60, lambda: board.pane_log()[-4000:])
    assert [(woken.door, woken.source)] == board.seen(pid)
    wait_until(lambda: woken.model_saw(pid), "at the model", 60, board.pane_log)
    assert [1, 1] == [woken.model_saw(p) for p in (wake_receipt.prompt_id, pid)]
    assert [1, 1] == [woken.recorded(p) for p in (wake_receipt.prompt_id, pid)]
    delivered = [d for d in board.posts(Delivered) if d.prompt_id == wake_receipt.prompt_id]
    assert [wake_receipt] == delivered
    assert 1 == len(board.wakes())
    assert [] == board.posts(Undelivered)
