"""The `qwen-inbox` door against a real Unix socket serving Qwen Code's inbox protocol."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import anyio
import pytest

from paneboard.agents import qwen_inbox as qwen
from paneboard.agents.qwen import QWEN
from paneboard.board.context import Context, header
from paneboard.listener.doors import HeldByAgent
from paneboard.protocol.errors import DoorFailed, DoorUnavailable
from paneboard.protocol.posts import Delivered, Held, Prompt, Undelivered
from paneboard.state.filelog.log import read_posts
from testing.helpers import Listening, SocketServer, cli_env, run_cli
from testing.sessions import post
from tests.factories import prompt

TOKEN = "ab" * 32


class Inbox(SocketServer):
    """A session's inbox: takes one connection at a time, keeps its lines, and answers each
    frame on the sender's `from` with the receipt `status` (None: no receipt)."""

    def __init__(self, folder: Path, status: str | None, **extra: Any) -> None:
        self.status, self.extra = status, extra
        self.frames: list[dict[str, Any]] = []
        self.auths: list[str] = []
        super().__init__(folder / "inbox.sock")

    def handle(self, conn: socket.socket) -> None:
        with conn:
            data = _read_all(conn)
        auth, frame = (json.loads(line) for line in data.splitlines())
        self.auths.append(auth["token"])
        self.frames.append(frame)
        if self.status:
            self.receipt(frame, self.status, **self.extra)

    def receipt(self, frame: dict[str, Any], status: str, token: str = "", **extra: Any) -> None:
        """Connect back to the frame's `from`, as Qwen Code does, with one delivery_status."""
        auth = {"msgV": 1, "type": "auth", "token": token or frame["replyToken"]}
        receipt = {"msgV": 1, "type": "control", "action": "delivery_status", "status": status}
        receipt.update(origMsgId=frame["msgId"], reason=f"the reason for {status}", **extra)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as back:
            back.connect(frame["from"])
            back.sendall(f"{json.dumps(auth)}\n{json.dumps(receipt)}\n".encode())


def _read_all(conn: socket.socket) -> bytes:
    data = b""
    while chunk := conn.recv(65536):
        data += chunk
    return data


def _record(folder: Path, inbox: Path, pid: int | None = None, **extra: Any) -> Path:
    pid = pid or os.getpid()
    path = folder / "sessions" / f"{pid}.json"
    path.parent.mkdir(mode=0o700, exist_ok=True)
    data = {"schemaVersion": 1, "pid": pid, "procStart": qwen._proc_start(pid), "cwd": "/x"}
    data.update(sessionId="s-1", ipcPath=str(inbox), ipcToken=TOKEN, **extra)
    path.write_text(json.dumps(data))
    return path


def _prompt(n: int = 0) -> Prompt:
    return prompt(id=f"01m8rp7wcafb32ff9twwjh5c{n:02d}", board="test", ts=1.0, body="hello")


def _door(tmp_path: Path, inbox: Inbox, timeout: float = 5.0, **kw: Any) -> qwen.QwenInboxDoor:
    return qwen.QwenInboxDoor(_record(tmp_path, inbox.path), timeout, tmp_path / "me.sock", **kw)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path


def _deliver(door: qwen.QwenInboxDoor, n: int = 0) -> str:
    async def run() -> str:
        with anyio.fail_after(10):
            return await door.deliver(_prompt(n), "TEXT", "bob")

    return anyio.run(run)


def test_a_delivered_receipt_is_accepted_and_the_frame_is_qwens(folder: Path) -> None:
    """Auth line with the record's token; a `user` frame whose msgId is the prompt's id."""
    inbox = Inbox(folder, "delivered")
    door = _door(folder, inbox)
    assert "accepted" == _deliver(door)
    [frame] = inbox.frames
    assert [TOKEN] == inbox.auths
    assert (_prompt().id, "user", "s-1", str(folder / "me.sock")) == (
        frame["msgId"],
        frame["type"],
        frame["toSessionId"],
        frame["from"],
    )
    assert {"role": "user", "content": "TEXT"} == frame["message"]
    assert "fromMode" not in frame
    door.close()


def test_a_controller_token_goes_on_the_auth_line(folder: Path) -> None:
    """With a controller token the door presents it instead of the record's ipcToken."""
    inbox = Inbox(folder, "delivered")
    controller = "qpc_" + "c" * 64
    door = _door(folder, inbox, controller=controller)
    assert "accepted" == _deliver(door)
    assert [controller] == inbox.auths
    door.close()


def test_held_is_handed_over_and_a_retry_sends_nothing(folder: Path) -> None:
    """`held` raises QwenHeld, a HeldByAgent with Qwen Code's reason; a second try sends no
    copy (Qwen Code would drop it as a duplicate) and repeats what Qwen Code said."""
    inbox = Inbox(folder, "held")
    door = _door(folder, inbox)
    with pytest.raises(qwen.QwenHeld) as held:
        _deliver(door)
    assert isinstance(held.value, HeldByAgent)
    assert ("qwen-inbox", "the reason for held") == (held.value.door, held.value.reason)
    with pytest.raises(qwen.QwenHeld):
        _deliver(door)
    assert 1 == len(inbox.frames)
    door.close()


def _follow_through(door: qwen.QwenInboxDoor, inbox: Inbox, decisions: list[str]) -> list[Any]:
    """Deliver prompts 0 and 1 (both held) with `follow` running, have the session decide each
    in turn (*decisions*), and return what `follow` settled, in order."""
    settled: list[tuple[str, str | None]] = []

    async def run() -> None:
        done = anyio.Event()

        def settle(msg_id: str, failure: DoorFailed | None) -> None:
            settled.append((msg_id, None if failure is None else failure.reason))
            if len(settled) == len(decisions):
                done.set()

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                await tg.start(door.follow, settle)
                for n in (0, 1):
                    with pytest.raises(qwen.QwenHeld):
                        await door.deliver(_prompt(n), f"TEXT {n}", "bob")
                for frame, status in zip(inbox.frames, decisions, strict=True):
                    await anyio.to_thread.run_sync(inbox.receipt, frame, status)
                await done.wait()
                tg.cancel_scope.cancel()

    anyio.run(run)
    return settled


def test_follow_hears_the_persons_decision_on_each_held_prompt(folder: Path) -> None:
    """Once Qwen Code's person accepts one held prompt and denies the other in `/peers`, its
    receipts reach `follow`: delivered (None), and denied with Qwen Code's reason."""
    inbox = Inbox(folder, "held")
    door = _door(folder, inbox)
    settled = _follow_through(door, inbox, ["delivered", "denied"])
    expected = [
        (_prompt(0).id, None),
        (_prompt(1).id, "Qwen Code answered `denied`: the reason for denied"),
    ]
    assert expected == settled
    door.close()


def test_with_follow_running_a_delivery_reads_its_receipt_from_it(folder: Path) -> None:
    """`follow` is the one reader of the inbox; `deliver` waits for what it hears."""
    inbox = Inbox(folder, "delivered")
    door = _door(folder, inbox)

    async def run() -> str:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                await tg.start(door.follow, lambda msg_id, failure: None)
                outcome = await door.deliver(_prompt(), "TEXT", "bob")
                tg.cancel_scope.cancel()
        return outcome

    assert "accepted" == anyio.run(run)
    door.close()


@pytest.mark.parametrize("status", ["denied", "refused", "expired"])
def test_a_final_no_is_unavailable(folder: Path, status: str) -> None:
    """`denied`, `refused`, `expired`: QwenRefused, a DoorUnavailable (not retried)."""
    door = _door(folder, Inbox(folder, status))
    with pytest.raises(qwen.QwenRefused) as refused:
        _deliver(door)
    assert isinstance(refused.value, DoorUnavailable)
    assert f"Qwen Code answered `{status}`: the reason for {status}" == refused.value.reason
    door.close()


def test_dropped_is_retried_and_settles_the_ids_it_lists(folder: Path) -> None:
    """`dropped` is a DoorFailed naming its dropReason; a retry sends the frame again."""
    inbox = Inbox(folder, "dropped", dropReason="rate-limited")
    door = _door(folder, inbox)
    with pytest.raises(DoorFailed) as dropped:
        _deliver(door)
    assert not isinstance(dropped.value, DoorUnavailable)
    assert (
        "Qwen Code answered `dropped`: dropped (rate-limited): the reason for dropped"
        == dropped.value.reason
    )
    inbox.status = "delivered"
    assert "accepted" == _deliver(door)
    assert 2 == len(inbox.frames)
    door.close()


def test_a_receipt_with_another_token_is_ignored(folder: Path) -> None:
    """A receipt not authenticated with the door's replyToken counts for nothing: `unknown`."""
    inbox = Inbox(folder, "delivered", token="f" * 64)
    door = _door(folder, inbox, timeout=0.5)
    assert "unknown" == _deliver(door)
    assert {} == door.receipts.state
    door.close()


def test_a_record_of_an_ended_process_is_unavailable(folder: Path) -> None:
    """The registry names a pid that is gone: DoorUnavailable naming it, no frame sent."""
    inbox = Inbox(folder, "delivered")
    record = _record(folder, inbox.path, pid=2**22 + 1)
    door = qwen.QwenInboxDoor(record, 1.0, folder / "me.sock")
    with pytest.raises(DoorUnavailable) as gone:
        _deliver(door)
    assert f"the Qwen Code process {2**22 + 1} has ended" == gone.value.reason
    assert [] == inbox.frames
    door.close()


def test_no_record_is_unavailable(folder: Path) -> None:
    """No registry file: DoorUnavailable naming the path."""
    door = qwen.QwenInboxDoor(folder / "sessions" / "7.json", 1.0, folder / "me.sock")
    with pytest.raises(DoorUnavailable) as missing:
        _deliver(door)
    path = folder / "sessions" / "7.json"
    assert f"no registry {path} (has Qwen Code ended?)" == missing.value.reason
    door.close()


def test_a_record_whose_pid_disagrees_with_its_name_is_refused(folder: Path) -> None:
    """`pid` in the record must be the pid in its file name."""
    path = folder / "sessions" / "1.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"schemaVersion": 1, "pid": os.getpid(), "sessionId": "s"}))
    with pytest.raises(DoorUnavailable) as bad:
        qwen.read_session(path)
    assert f"the registry {path} names pid {os.getpid()}, not the one in its name" == (
        bad.value.reason
    )


def test_user_texts_reads_qwen_user_records_only() -> None:
    """A user record's parts are its text; an assistant record has none."""
    user = {"type": "user", "message": {"role": "user", "parts": [{"text": "a"}, {"x": 1}]}}
    model = {"type": "assistant", "message": {"role": "model", "parts": [{"text": "b"}]}}
    assert (["a"], []) == (QWEN.user_texts(user), QWEN.user_texts(model))


def test_listen_without_a_pid_is_refused_and_writes_nothing(folder: Path) -> None:
    """`listen --door qwen-inbox` with no --parent-pid: one line, exit 1, no board written."""
    home = folder / "pb"
    done = run_cli(home, "listen", "--as", "bob", "--door", "qwen-inbox")
    expected = "paneboard: --door qwen-inbox needs --parent-pid PID (the Qwen Code process)\n"
    assert (1, expected) == (done.returncode, done.stderr)
    assert not (home / "test").exists()


def test_a_listener_posts_held_goes_on_then_posts_the_decision(folder: Path) -> None:
    """A real `listen` against the inbox: both prompts are `held` (the second not held up by
    the first, no retry); the session's later receipts make one `delivered` and the other
    `undelivered` with Qwen Code's reason; the keys stay, so neither is sent again."""
    home = folder / "pb"
    inbox = Inbox(folder, "held")
    _record(folder, inbox.path)
    env = cli_env(home, QWEN_HOME=str(folder), XDG_CACHE_HOME=str(folder), XDG_RUNTIME_DIR="")
    args = ("--door", "qwen-inbox", "--parent-pid", str(os.getpid()), "--one-per-text")
    with Listening(home, "bob", *args, env=env) as bob:
        kept, denied = (post(home, "bob", f"prompt {n}") for n in (1, 2))
        for prompt_id in (kept, denied):
            bob.wait_err(f"held {prompt_id} from alice: the agent holds it (the reason for held)")
        inbox.receipt(inbox.frames[0], "delivered")
        bob.wait_err(f"delivered {kept} via qwen-inbox, held until now")
        inbox.receipt(inbox.frames[1], "denied")
        bob.wait_err(f"undelivered {denied}, held until now")
    log = [p for _, p in read_posts(home / "test" / "log") if not isinstance(p, Prompt)]
    posts = [(type(p).__name__, getattr(p, "prompt_id", None)) for p in log]
    assert [
        ("Held", kept),
        ("Held", denied),
        ("Delivered", kept),
        ("Undelivered", denied),
    ] == posts
    [notice] = [p for _, p in read_posts(home / "test" / "log") if isinstance(p, Undelivered)]
    assert "Qwen Code answered `denied`: the reason for denied" == notice.reason
    assert [kept, denied] == [f["msgId"] for f in inbox.frames]
    assert [] == [ln for ln in bob.stderr_lines if " retry " in ln]


def test_a_held_text_of_three_prompts_is_settled_for_each_by_its_one_verdict(
    folder: Path,
) -> None:
    """Three prompts appended at once go to Qwen Code as one frame (its `msgId` the first's);
    Qwen Code holds it, then its one later verdict, naming the first prompt, makes each of the
    three `delivered`."""
    home = folder / "pb"
    inbox = Inbox(folder, "held")
    _record(folder, inbox.path)
    env = cli_env(home, QWEN_HOME=str(folder), XDG_CACHE_HOME=str(folder), XDG_RUNTIME_DIR="")
    args = ("--door", "qwen-inbox", "--parent-pid", str(os.getpid()))
    with Listening(home, "bob", *args, env=env) as bob:
        with Context.resolve(str(home), "test", "alice") as ctx:
            ctx.paths.ensure()
            burst = [
                Prompt(**header("test", "alice"), to=("bob",), body=f"part {n}") for n in range(3)
            ]
            ctx.store().append(burst)
        ids = [p.id for p in burst]
        bob.wait_err("the agent holds it (the reason for held)")
        [frame] = inbox.frames
        inbox.receipt(frame, "delivered")
        bob.wait_err(f"delivered {ids[0]} via qwen-inbox, held until now")
    posts = [p for _, p in read_posts(home / "test" / "log") if not isinstance(p, Prompt)]
    content = frame["message"]["content"]
    assert ids[0] == frame["msgId"]
    assert all(f"[paneboard] prompt {pid} from alice" in content for pid in ids), content
    assert sorted(ids) == sorted(p.prompt_id for p in posts if isinstance(p, Held))
    assert sorted(ids) == sorted(p.prompt_id for p in posts if isinstance(p, Delivered))
