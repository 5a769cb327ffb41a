"""`paneboard top` driven by Textual's own pilot: the panes show the board, follow it, and the
keys act. Posts come from real `paneboard` processes and listeners; the screen is read as
text from Textual's compositor."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO

import anyio
import pytest
from rich.console import Console
from textual.pilot import Pilot

from paneboard.board.context import Context
from paneboard.protocol.posts import Cancel, Prompt
from paneboard.state.filelog.log import append_posts
from paneboard.state.filelog.store import FileStore
from paneboard.state.nats.url import parse_url
from paneboard.state.trust.policy import Policy, write_policy
from paneboard.top.app import TopApp
from testing.helpers import ROOT, Listening, NatsServer, cli_env, run_cli, wait_until_async

pytestmark = pytest.mark.anyio
SIZE = (150, 40)


def post(home: Path, *args: str) -> str:
    done = run_cli(home, "post", *args)
    assert 0 == done.returncode, done.stderr
    return done.stdout.strip()


def screen(app: TopApp) -> str:
    console = Console(width=app.size.width, file=io.StringIO(), record=True, force_terminal=True)
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


async def until(
    pilot: Pilot[None],
    app: TopApp,
    seen: Callable[[str], bool],
    within: float = 10,
) -> str:
    """The screen, once *seen* holds for it (bounded: fails with the screen shown)."""

    async def shown() -> str | None:
        await pilot.pause()
        text = screen(app)
        return text if seen(text) else None

    what = "the screen shows it"
    return await wait_until_async(shown, what, within, lambda: screen(app), every=0.02)


def top(home: Path, agent: str = "alice", stale: float = 300.0, store: str = "") -> TopApp:
    return TopApp(Context.resolve(str(home), "test", agent, store=store), stale=stale)


def line_of(text: str, needle: str) -> str:
    return next(line for line in text.splitlines() if needle in line)


async def test_panes_show_the_board(home: Path) -> None:
    """Agents with their listener, open prompts with each recipient's stage, and the posts."""
    first = post(home, "--as", "alice", "--to", "bob", "--to", "carol", "review fetch.py")
    done = post(home, "--as", "alice", "--to", "carol", "closed already")
    assert 0 == run_cli(home, "answer", "--as", "carol", done, "all green").returncode
    with Listening(home, "bob", "--door", "stdout") as bob:
        bob.line()
        app = top(home)
        async with app.run_test(size=SIZE) as pilot:
            text = await until(pilot, app, lambda t: "delivered" in t and "listening" in t)
            assert f"pid {bob.proc.pid}" in line_of(text, "bob ")
            assert "door stdout" in line_of(text, "bob ")
            assert "no listener" in line_of(text, "carol ")
            row = line_of(text, first[:12])
            shown = " ".join(row.split())
            assert re.search(r"alice → bob delivered \d+s carol posted \d+s", shown), shown
            assert "open prompts 1" in text
            assert done[:12] not in text.split("posts")[0]  # closed: not among the open prompts
            assert "answer" in line_of(text, "all green")


async def test_posts_arriving_update_the_panes(home: Path, store_url: str) -> None:
    """A prompt and its answer, posted by other processes, show as they come (on each store)."""
    app = top(home, store=store_url)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app, lambda t: "open prompts 0" in t)
        pid = post(home, "--as", "alice", "--to", "bob", "deploy the fix")
        text = await until(pilot, app, lambda t: "open prompts 1" in t)
        assert "posted" in line_of(text, pid[:12])
        where = parse_url(store_url).shown if store_url else "file log"
        assert f"  ·  {where}  │  " in line_of(text, "open prompts 1")  # the status line
        assert "open 1" in line_of(text, "bob ")
        assert 0 == run_cli(home, "answer", "--as", "bob", pid, "deployed at 14:02").returncode
        text = await until(pilot, app, lambda t: "open prompts 0" in t)
        assert "deployed at 14:02" in text
        assert "open 0" in line_of(text, "bob ")


async def test_a_compacted_log_is_read_again_from_its_start(home: Path) -> None:
    """`paneboard compact` replaces the log: top folds it again and goes on following it."""
    first = post(home, "--as", "alice", "--to", "bob", "first")
    post(home, "--as", "alice", "--to", "bob", "second")
    assert 0 == run_cli(home, "answer", "--as", "bob", first, "done").returncode
    app = top(home)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app, lambda t: "open prompts 1" in t and "done" in t)
        compacted = run_cli(home, "compact")
        assert 0 == compacted.returncode, compacted.stderr
        await until(pilot, app, lambda t: "done" not in t)  # the answered prompt is gone
        post(home, "--as", "carol", "--to", "bob", "third")
        text = await until(pilot, app, lambda t: "open prompts 2" in t)
        assert "third" in line_of(text, "carol → bob")


async def test_a_listener_that_dies_is_shown_gone(home: Path) -> None:
    """SIGKILL on a listener: its pane lock is released and the agents pane says so."""
    post(home, "--as", "alice", "--to", "bob", "hello")
    with Listening(home, "bob", "--door", "stdout") as bob:
        app = top(home)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, app, lambda t: "listening" in line_of(t, "bob "))
            bob.stop(9)
            text = await until(pilot, app, lambda t: "no listener" in line_of(t, "bob "))
            assert "last delivery" in line_of(text, "bob ")


async def test_a_listener_on_another_machine_shows_through_the_store(
    home: Path, tmp_path: Path, nats_server: NatsServer
) -> None:
    """On NATS, a listener with another home (another machine) is listening, by its presence."""
    url = f"{nats_server.url}/t{uuid.uuid4().hex[:12]}"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    env = cli_env(elsewhere, PANEBOARD_STORE=url)
    with Listening(elsewhere, "bob", "--door", "stdout", env=env) as bob:
        app = top(home, store=url)
        async with app.run_test(size=SIZE) as pilot:
            text = await until(pilot, app, lambda t: "listening" in line_of(t, "bob "))
            assert f"pid {bob.proc.pid}" in line_of(text, "bob ")
            assert "door stdout" in line_of(text, "bob ")


async def test_delivered_and_not_closed_for_long_stands_out(home: Path) -> None:
    """A delivered prompt's stage shows how long it has been delivered; past the threshold,
    marked `!`."""
    pid = post(home, "--as", "alice", "--to", "bob", "look at this")
    with Listening(home, "bob", "--door", "stdout") as bob:
        bob.line()
        app = top(home, stale=3)
        async with app.run_test(size=SIZE) as pilot:
            late = re.compile(r"delivered \d+s!")  # past the threshold: marked, in the row
            text = await until(pilot, app, lambda t: "delivered" in line_of(t, pid[:12]))
            assert re.search(r"delivered [0-2]s ", line_of(text, pid[:12])), text
            await until(pilot, app, lambda t: late.search(line_of(t, pid[:12])) is not None)


async def test_an_expired_prompt_leaves_the_open_prompts(home: Path) -> None:
    """A prompt's expiry removes it at its time, with no post to wake the view (posted once
    the view is up: on a loaded machine a start could outlast the prompt)."""
    app = top(home)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app, lambda t: "open prompts 0" in t)
        post(home, "--as", "alice", "--to", "bob", "--ttl", "3", "short-lived")
        await until(pilot, app, lambda t: "open prompts 1" in t)
        await until(pilot, app, lambda t: "open prompts 0" in t, within=8)


async def test_enter_opens_the_whole_thread(home: Path) -> None:
    """A prompt opens to its thread: bodies, stages, receipts, acks and answers."""
    first = post(home, "--as", "alice", "--to", "bob", "--thread", "retry", "review the retry")
    reply = post(home, "--as", "bob", "--to", "alice", "--reply-to", first, "which timeout?")
    assert 0 == run_cli(home, "answer", "--as", "alice", reply, "thirty seconds").returncode
    assert 0 == run_cli(home, "ack", "--as", "bob", first, "--note", "merged").returncode
    last = post(home, "--as", "alice", "--to", "bob", "--thread", "retry", "and the docs")
    post(home, "--as", "carol", "--to", "bob", "another thread")
    app = top(home)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app, lambda t: "open prompts 2" in t)
        await pilot.press("enter")  # the first row: the oldest open prompt, in thread retry
        text = await until(pilot, app, lambda t: f"thread of prompt {last}" in t)
        shown = ("review the retry", "which timeout?", "thirty seconds", "merged", "and the docs")
        assert [] == [s for s in shown if s not in text]
        assert "bob: acked" in text
        assert "another thread" not in text
        assert 0 == run_cli(home, "answer", "--as", "bob", last, "docs updated").returncode
        await until(pilot, app, lambda t: "docs updated" in t)  # the open thread follows
        await pilot.press("escape")
        await until(pilot, app, lambda t: "open prompts 1" in t)
        await pilot.press("tab", "enter")  # the posts pane: its last post, the answer
        await until(pilot, app, lambda t: f"thread of prompt {last}" in t)


async def test_keys_filter_by_agent_and_by_thread(home: Path) -> None:
    """`a` picks an agent, `t` the selected prompt's thread, escape shows everything again."""
    post(home, "--as", "alice", "--to", "bob", "--thread", "t1", "for bob in t1")
    post(home, "--as", "alice", "--to", "carol", "--thread", "t1", "for carol in t1")
    post(home, "--as", "alice", "--to", "carol", "--thread", "t2", "for carol in t2")
    app = top(home)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app, lambda t: "open prompts 3" in t)
        await pilot.press("a")
        await until(pilot, app, lambda t: "every agent" in t)
        await pilot.press("down", "down", "enter")  # every agent, alice, bob
        text = await until(pilot, app, lambda t: "open prompts 1" in t)
        assert "agent bob" in text
        assert "for bob in t1" in text
        assert "for carol" not in text
        await pilot.press("escape")
        await until(pilot, app, lambda t: "open prompts 3" in t)
        await pilot.press("end", "t")  # the last row: carol's prompt in t2
        text = await until(pilot, app, lambda t: "open prompts 1" in t)
        assert "thread #t2" in text
        assert "for carol in t2" in text
        await pilot.press("t")
        await until(pilot, app, lambda t: "open prompts 3" in t)


async def test_c_cancels_a_prompt_you_sent(home: Path) -> None:
    """`c` then `y` writes a cancel for your own prompt; another's prompt is refused, unwritten."""
    mine = post(home, "--as", "alice", "--to", "bob", "mine")
    post(home, "--as", "carol", "--to", "bob", "--priority", "low", "not mine")
    store = FileStore(home / "test")
    app = top(home)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app, lambda t: "open prompts 2" in t)
        await pilot.press("end", "c")  # carol's, last in catch-up order (low)
        await pilot.pause()
        assert "cancel prompt" not in screen(app)
        await pilot.press("home", "c")
        await until(pilot, app, lambda t: f"cancel prompt {mine} to bob?" in t)
        await pilot.press("y")
        await until(pilot, app, lambda t: "open prompts 1" in t)
    cancels = [p for _, p in store.read_all() if isinstance(p, Cancel)]
    assert [(mine, "alice")] == [(c.prompt_id, c.sender) for c in cancels]


async def test_p_posts_a_prompt(home: Path) -> None:
    """`p` opens a form; enter posts the prompt as the agent top runs as."""
    store = FileStore(home / "test")
    app = top(home)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app, lambda t: "open prompts 0" in t)
        await pilot.press("p")
        await until(pilot, app, lambda t: "post a prompt as alice" in t)
        await pilot.press(*"bob, carol", "tab", "tab", *"t9", "tab", *"run the tests", "enter")
        await until(pilot, app, lambda t: "open prompts 1" in t)
        await pilot.press("p")
        await until(pilot, app, lambda t: "post a prompt as alice" in t)
        await pilot.press(*"no/body", "tab", "tab", "tab", *"x", "enter")
        text = await until(pilot, app, lambda t: "recipient name 'no/body' is not valid" in t)
        await pilot.press("escape")
    prompts = [p for _, p in store.read_all() if isinstance(p, Prompt)]
    got = [(p.to, p.thread, p.body, p.sender) for p in prompts]
    assert [(("bob", "carol"), "t9", "run the tests", "alice")] == got
    assert "post a prompt as alice" in text  # the form stays open on a refusal


async def test_control_characters_and_markup_from_a_post_are_shown_as_text(home: Path) -> None:
    """A post's escapes are drawn escaped and its brackets as brackets, never obeyed (names
    cannot hold either: a post whose names do is damaged, and skipped)."""
    forged = Prompt(
        id="0" * 26,
        board="test",
        sender="mallory",
        ts=time.time(),
        to=("bob",),
        body="hi\x1b]0;owned\x07 m\x1b[2J[b]x",
        thread="t1",
    )
    (home / "test").mkdir()
    append_posts(home / "test" / "log", [forged])
    app = top(home)
    async with app.run_test(size=SIZE) as pilot:
        text = await until(pilot, app, lambda t: "open prompts 1" in t)
        assert re.search(r"mallory → bob posted \d+[smhd]", " ".join(text.split()))
        assert "hi\\x1b]0;owned\\x07 m\\x1b[2J[b]x" in text
        await pilot.press("enter")
        text = await until(pilot, app, lambda t: "thread of prompt" in t)
        assert "hi\\x1b]0;owned\\x07 m\\x1b[2J[b]x" in text
        assert "\x1b" not in text


async def test_a_board_it_cannot_reach_ends_it_with_the_reason(home: Path) -> None:
    """A NATS store nobody answers on: top stops with exit code 1 and the store's one line."""
    app = top(home, store="nats://127.0.0.1:1")
    async with app.run_test(size=SIZE) as pilot:
        with anyio.fail_after(20):
            while app.is_running:
                await pilot.pause(0.05)
    assert 1 == app.return_code
    assert str(app.error).startswith("cannot reach NATS at nats://127.0.0.1:1")


def test_without_a_terminal_it_says_so(home: Path) -> None:
    """No terminal (input from a pipe): one line, exit 1, nothing drawn."""
    done = run_cli(home, "top", input=b"")
    assert (1, "") == (done.returncode, done.stdout)
    assert (
        "paneboard: `paneboard top` needs a terminal (its input and standard error)\n"
        == done.stderr
    )


async def test_q_quits(home: Path) -> None:
    """`q` ends the app with exit code 0."""
    app = top(home)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app, lambda t: "open prompts 0" in t)
        await pilot.press("q")
        with anyio.fail_after(5):
            while app.is_running:
                await pilot.pause(0.01)
    assert 0 == app.return_code


def agent_line(text: str, agent: str) -> str:
    """*agent*'s line of the agents pane ("" while it is not shown)."""
    return next((line for line in text.splitlines() if f"{agent} " in line), "")


def start_asleep(home: Path, agent: str, folder: Path, log: IO[str]) -> subprocess.Popen[bytes]:
    """The stand-in listener of *agent* under `--wake resume`, its agent's process gone."""
    (home / "test" / "panes").mkdir(mode=0o700, parents=True, exist_ok=True)
    write_policy(home / "test", agent, Policy(wake="resume"))
    ended = subprocess.Popen(["true"])
    ended.wait()
    argv = [sys.executable, "-m", "tests.listener.wake_stand_in", str(home), agent]
    argv += [str(ended.pid), str(folder)]
    return subprocess.Popen(argv, cwd=ROOT, env=cli_env(home), stderr=log)


async def test_an_asleep_listener_shows_asleep_then_woken(home: Path, tmp_path: Path) -> None:
    """A listener whose session ended (`--wake resume`, the stand-in of
    tests/listener/wake_stand_in.py, its agent's process gone) is asleep in the agents pane, not
    listening; the prompt that wakes its session turns it to woken."""
    log = (tmp_path / "listener.log").open("w")
    listener = start_asleep(home, "bob", tmp_path, log)
    try:
        app = top(home)
        async with app.run_test(size=SIZE) as pilot:
            text = await until(pilot, app, lambda t: "asleep" in agent_line(t, "bob"), 20)
            assert f"pid {listener.pid}" in agent_line(text, "bob")
            assert "listening" not in agent_line(text, "bob")
            await until(pilot, app, lambda t: "agents 1, listening 0, asleep 1" in t)
            post(home, "--as", "alice", "--to", "bob", "wake up")
            await until(pilot, app, lambda t: "woken" in agent_line(t, "bob"), 20)
    finally:
        listener.kill()
        listener.wait()
        log.close()
        session = tmp_path / "session.pid"
        if session.exists():
            os.kill(int(session.read_text()), signal.SIGKILL)


async def test_a_read_prompt_shows_read_and_its_age_at_that_stage(home: Path) -> None:
    """bob reads the prompt with `paneboard read`: its row says `read`, and how long ago, and
    the posts pane shows the receipt `via cli`."""
    pid = post(home, "--as", "alice", "--to", "bob", "read me")
    app = top(home)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, app, lambda t: "posted" in line_of(t, pid[:12]))
        assert 0 == run_cli(home, "read", "--as", "bob", pid).returncode
        text = await until(pilot, app, lambda t: "→ bob read" in line_of(t, pid[:12]))
        assert re.search(r"→ bob read \d+s ", line_of(text, pid[:12]))
        assert re.search(r"read\s+bob on \S+\s+cli", text), text
