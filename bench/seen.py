"""`seen`: delivered → seen on the real Claude Code, and what a long transcript costs to follow.

`burst()` appends 60 prompts at once for the same kind of session and reads how long until
all are `seen`, the turns they took, how many never are (lost) and how many reached the model
twice (the transcript's user turns and mid-turn attachments per prompt id); coalesced, or one
per text. `notice_bytes()` counts what the model is sent for one prompt as its body and as
its notice (the API stand-in's byte count of the turn's user text).

`claude()` runs a real, offline Claude Code session (as tests/real does: its API stand-in,
testing/api_stand_in.py, answers every turn at once) with a
`paneboard listen --door claude-inbox --transcript …`, posts one prompt at a time into the
idle session, and reads the board's own timestamps: the prompt's append, its `delivered`
receipt (the door latency: the listener woke and wrote the line to the session's socket) and
its `seen` receipt (Claude Code wrote the user turn to its transcript and the listener read
it). `transcript()` times the follower on a 100 MB transcript: reading
all of it once, then only a new line from the mark.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.harness import PY, Proc, env_for, signed, summary, unlimited, wait_ready
from paneboard.agents.claude_transcript import user_texts
from paneboard.listener.deliverer import NOTICE_LIST
from paneboard.listener.seen import NEEDLE, prompt_ids
from paneboard.protocol.ids import new_id
from paneboard.protocol.posts import Delivered, Prompt, Read, Seen
from paneboard.state.filelog.append import append_payloads
from paneboard.state.filelog.log import read_posts
from paneboard.state.panes.transcript import LineReader
from paneboard.state.trust.policy import Policy, write_policy
from testing.clients import ClaudeSession, free_port
from testing.helpers import ScriptServer, wait_until

ROOT = Path(__file__).resolve().parent.parent
# One sample at a time, each into an idle session (so each is one idle turn's latency). The
# listener keeps to Claude Code's peer-message bucket itself (30 at once, then one every 2 s):
# `burst()` measures 60 at once: in one text (bench/RESULTS.md: all 60 seen in 0.92 s, 1 turn),
# or one per text (61.5 s, 60 turns, 0 lost, 0 twice).
PACE = 2.5
BURST = 60
SETTLE = 5.0  # seconds a notice burst is watched after its notice was seen


def clients_bin() -> Path | None:
    """The folder holding the real `claude`, as the tests find it (None when it is not there)."""
    default = ROOT / ".ci" / "tools" / "clients" / "node_modules" / ".bin"
    found = Path(os.environ.get("PANEBOARD_CLIENTS_BIN", default))
    return found if (found / "claude").exists() and shutil.which("tmux") else None


def _turns(transcript: Path) -> int:
    """How many turns the transcript shows finished."""
    return transcript.read_text().count('"turn_duration"') if transcript.exists() else 0


@contextlib.contextmanager
def _listening_session(
    home: Path, *options: str, deliver: str = "body"
) -> Iterator[tuple[ClaudeSession, Path]]:
    """A real Claude Code session past its first turn (a first turn starts slowly: not what is
    measured), with bob's listener (`listen` *options* too) on its socket and transcript;
    yields (session, transcript). The listener's stderr goes to HOME/listener.log, the API
    stand-in's log to HOME/api.log; bob's policy delivers as *deliver* says (`body`, `notice`).
    The session may run Bash (the stand-in's model runs
    `paneboard read` from it when HOME/api.log.reads says so)."""
    bin_dir = clients_bin()
    assert bin_dir is not None
    api = ScriptServer("testing.api_stand_in", free_port(), home / "api.log")
    project = home / "proj"
    (project / ".claude").mkdir(parents=True)
    allow = {"permissions": {"allow": ["Bash"], "defaultMode": "default"}}
    (project / ".claude" / "settings.local.json").write_text(json.dumps(allow))
    session = ClaudeSession(
        bin_dir, home / "claude", project, api.port, {"PATH": os.environ["PATH"]}
    )
    lis: Proc | None = None
    try:
        transcript = _transcript(session)
        socket_path = str(session.registry["messagingSocketPath"])
        door = ("--door", "claude-inbox", "--socket", socket_path, "--transcript", str(transcript))
        argv = [PY, "-m", "paneboard", "listen", "--as", "bob", *door, *options]
        unlimited(home, "bob")  # the burst is past 30 a minute: Claude Code's own bucket paces it
        if deliver != "body":
            write_policy(home / "bench", "bob", Policy(rate=0, deliver=deliver))  # type: ignore[arg-type]
        with open(home / "listener.log", "wb") as err:  # the child keeps its own copy
            lis = Proc(argv, env_for(home), stderr=err.fileno())
        wait_ready(home, "bob")
        session.type("hello")
        wait_until(lambda: _turns(transcript), "a first turn", 60, every=0.05)
        yield session, transcript
    finally:
        if lis is not None:
            lis.stop()
        session.close()
        _wait_gone(int(str(session.registry["pid"])))  # it writes its last files as it exits
        api.close()


def claude(home: Path, samples: int) -> dict[str, Any]:
    with _listening_session(home) as (session, transcript):
        for i in range(samples):
            start = time.monotonic()
            _one(home, session, transcript, i)
            time.sleep(max(0.0, PACE - (time.monotonic() - start)))
        return _latencies(home / "bench" / "log")


def burst(
    home: Path, count: int = BURST, *, one_per_text: bool = False, deliver: str = "body"
) -> dict[str, Any]:
    """*count* prompts appended at once to one idle session: time until all are seen, the
    turns they took, lost, duplicated, and the drops Claude Code recorded; coalesced (the
    listener's way), or *one_per_text* (`listen --one-per-text`: a turn each). Under
    *deliver* ``notice`` the first notice lists `NOTICE_LIST` of them and counts the rest, which
    wait until one is read: the figures are those listed, `seen`, and the turns started within
    `SETTLE` s after the last of them (the rest start none while the notice is unread)."""
    options = ("--one-per-text",) if one_per_text else ()
    with _listening_session(home, *options, deliver=deliver) as (_, transcript):
        ts = time.time()
        prompts = [
            Prompt(
                id=new_id(ts, os.urandom(10)),
                board="bench",
                sender="bench",
                ts=ts,
                to=("bob",),
                body=f"burst {i} of {count}",
            )
            for i in range(count)
        ]
        append_payloads(home / "bench" / "log", signed(home, prompts))
        ids = {p.id for p in prompts}
        log = home / "bench" / "log"
        if deliver == "notice":
            listed = {p.id for p in prompts[:NOTICE_LIST]}
            seen = wait_until(lambda: _all_seen(log, listed), "the notice's seen", 600, every=0.1)
            time.sleep(SETTLE)  # what the unread notice holds back starts no turn meanwhile
            figures = _burst_figures(transcript, listed, ts, seen)
            rest = ids - listed
            rest_turns = _burst_figures(transcript, rest, ts, {})["turns"] if rest else 0
            return {
                **figures,
                "counted_in_the_notice": len(rest),  # "N more wait": told of, not yet listed
                "turns_of_the_rest": rest_turns,
                "rest_seen": len(_seen_ids(log, rest)),
            }
        seen = wait_until(lambda: _all_seen(log, ids), f"all {count} seen", 600, every=0.1)
        figures = _burst_figures(transcript, ids, ts, seen)
        retries = (home / "listener.log").read_text().count(" retry ")
        return {**figures, "retries": retries}


def _seen_ids(log: Path, ids: set[str]) -> set[str]:
    return {p.prompt_id for _, p in read_posts(log) if isinstance(p, Seen) and p.prompt_id in ids}


def _all_seen(log: Path, ids: set[str]) -> dict[str, float] | None:
    seen = {
        p.prompt_id: p.ts for _, p in read_posts(log) if isinstance(p, Seen) and p.prompt_id in ids
    }
    return seen if len(seen) == len(ids) else None


def _burst_figures(
    transcript: Path, ids: set[str], ts: float, seen: dict[str, float]
) -> dict[str, Any]:
    taken: dict[str, int] = dict.fromkeys(ids, 0)
    drops: list[str] = []
    turns = 0  # user turns and mid-turn attachments that carried any of them
    for line in transcript.read_text().splitlines():
        record = json.loads(line)
        if str(record.get("content", "")).startswith("Dropped a peer message"):
            drops.append(str(record["content"]))
        found = [pid for pid in prompt_ids([record], user_texts) if pid in taken]
        turns += bool(found)
        for pid in found:
            taken[pid] += 1
    return {
        "prompts": len(ids),
        "turns": turns,
        "all_seen_s": max(seen.values()) - ts if seen else None,
        "lost": sum(n == 0 for n in taken.values()),
        "duplicated": sum(n > 1 for n in taken.values()),
        "drops_recorded": drops,  # Claude Code records one per run of drops
    }


def notice_bytes(
    home: Path, sizes: tuple[int, ...] = (200, 50_000), reads: int = 5
) -> dict[str, Any]:
    """Bytes the model is sent for one prompt of each of *sizes*, as its body and as its
    notice (`post --notice`): the turn's user text the API stand-in received; and post →
    seen for each. Then *reads* notices, one at a time, each read by the model: it runs the
    notice's `paneboard read ID` from its Bash tool (the stand-in does when HOME/api.log.reads
    holds 1): post → seen (the notice reached the model) and seen → read (the body reached it,
    the `read` receipt's time), from the board's own timestamps."""
    out: dict[str, Any] = {}
    log = home / "bench" / "log"
    with _listening_session(home) as (_, transcript):
        for size in sizes:
            for how in ("body", "notice"):
                pid, ts = _post_sized(home, size, notice=how == "notice")
                seen = _wait_seen(log, pid)
                sent = _turn_bytes(home / "api.log", pid)
                out[f"{how}_{size}"] = {"model_bytes": sent, "post_to_seen_ms": (seen - ts) * 1e3}
                if how == "notice":
                    _read_receipt(home, pid)  # the unread notice's wait ends
        _settled(transcript)
        samples = [_notice_read(home, transcript) for _ in range(reads)]
    out["notice_read"] = {
        "samples": len(samples),
        "post_to_seen_ms": summary([s[0] * 1e3 for s in samples]),
        "seen_to_read_ms": summary([s[1] * 1e3 for s in samples]),
        "post_to_read_ms": summary([(s[0] + s[1]) * 1e3 for s in samples]),
    }
    return out


def _settled(transcript: Path) -> None:
    """Until the session's finished turns stay the same for 1.5 s (the turns before are over)."""
    last = -1
    while (now := _turns(transcript)) != last:
        last = now
        time.sleep(1.5)


def _notice_read(home: Path, transcript: Path) -> tuple[float, float]:
    """One notice to the idle session, read by its model: (post → seen, seen → read) s."""
    log = home / "bench" / "log"
    turns = _turns(transcript)
    (home / "api.log.reads").write_text("1")
    pid, ts = _post_sized(home, 200, notice=True)
    seen = _wait_seen(log, pid)
    read = wait_until(lambda: _read_at(log, pid), f"{pid} read", 60, every=0.02)
    wait_until(lambda: _turns(transcript) > turns, "the reading turn's end", 60, every=0.05)
    return seen - ts, read - seen


def _read_at(log: Path, pid: str) -> float | None:
    return next(
        (
            p.ts
            for _, p in read_posts(log)
            if isinstance(p, Read) and p.prompt_id == pid and p.sender == "bob"
        ),
        None,
    )


def _post_sized(home: Path, size: int, *, notice: bool) -> tuple[str, float]:
    ts = time.time()
    pid = new_id(ts, os.urandom(10))
    body = ("x" * 79 + "\n") * (size // 80) + "x" * (size % 80)
    prompt = Prompt(
        id=pid, board="bench", sender="bench", ts=ts, to=("bob",), body=body, notice=notice
    )
    append_payloads(home / "bench" / "log", signed(home, [prompt]))
    return pid, ts


def _wait_seen(log: Path, pid: str) -> float:
    return wait_until(lambda: _seen_at(log, pid), f"{pid} seen", 60, every=0.02)


def _seen_at(log: Path, pid: str) -> float | None:
    return next(
        (p.ts for _, p in read_posts(log) if isinstance(p, Seen) and p.prompt_id == pid), None
    )


def _turn_bytes(api_log: Path, pid: str) -> int:
    """The bytes of the user text of the first turn the stand-in was sent carrying *pid*."""
    mark = f"[paneboard] prompt {pid} from"
    for line in api_log.read_text().splitlines():
        record = json.loads(line)
        if record.get("tools") and mark in record.get("turn", ""):
            return int(record["turn_bytes"])
    raise LookupError(f"no model request carried {pid}")


def _read_receipt(home: Path, pid: str) -> None:
    """bob's `read` of *pid*, signed with bob's key, as `paneboard read` posts it."""
    read = Read(
        id=new_id(time.time(), os.urandom(10)),
        board="bench",
        sender="bob",
        ts=time.time(),
        prompt_id=pid,
        via="cli",
    )
    append_payloads(home / "bench" / "log", signed(home, [read]))


def _wait_gone(pid: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def _transcript(session: ClaudeSession) -> Path:
    """Where the session's transcript will be (its folder is made at the first turn)."""
    mangled = "".join(c if c.isalnum() else "-" for c in str(session.project))
    name = f"{session.registry['sessionId']}.jsonl"
    return session.home / ".claude" / "projects" / mangled / name


def _one(home: Path, session: ClaudeSession, transcript: Path, i: int) -> None:
    """Post one prompt to the idle session; return once it is seen and its turn has ended."""
    turns = _turns(transcript)
    ts = time.time()
    pid = new_id(ts, os.urandom(10))
    prompt = Prompt(id=pid, board="bench", sender="bench", ts=ts, to=("bob",), body=f"note {i}")
    append_payloads(home / "bench" / "log", signed(home, [prompt]))
    deadline = time.monotonic() + 60
    while not _has_seen(home / "bench" / "log", pid):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{pid} not seen within 60 s")
        time.sleep(0.01)
    wait_until(lambda: _turns(transcript) > turns, f"a turn for {pid}", 60, every=0.05)


def _has_seen(log: Path, pid: str) -> bool:
    return any(isinstance(p, Seen) and p.prompt_id == pid for _, p in read_posts(log))


def _latencies(log: Path) -> dict[str, Any]:
    posts = [p for _, p in read_posts(log)]
    posted = {p.id: p.ts for p in posts if isinstance(p, Prompt)}
    delivered = {p.prompt_id: p.ts for p in posts if isinstance(p, Delivered)}
    seen = {p.prompt_id: p.ts for p in posts if isinstance(p, Seen)}
    door = [(delivered[k] - posted[k]) * 1000 for k in seen]
    to_seen = [(seen[k] - delivered[k]) * 1000 for k in seen]
    return {"door_ms": summary(door), "delivered_to_seen_ms": summary(to_seen)}


def transcript(home: Path, megabytes: int = 100) -> dict[str, Any]:
    """Follow a transcript of *megabytes*: all of it from the start, then one new line."""
    path = home / "transcript.jsonl"
    filler = json.dumps({"type": "assistant", "message": {"content": "x" * 2000}}) + "\n"
    turn = {"type": "user", "message": {"role": "user", "content": "[paneboard] prompt "}}
    lines = megabytes * 1_000_000 // len(filler)
    with open(path, "w") as f:
        f.writelines(filler if i % 50 else json.dumps(turn) + "\n" for i in range(lines))
    size = path.stat().st_size
    t0 = time.perf_counter()
    reader = LineReader(path, NEEDLE)
    found = len(prompt_ids(reader.read_new(), user_texts))
    cold = time.perf_counter() - t0
    with open(path, "a") as f:
        f.write(json.dumps(turn) + "\n")
    t0 = time.perf_counter()
    later = LineReader(path, NEEDLE, reader.mark)
    new = len(later.read_new())
    warm = time.perf_counter() - t0
    reader.close()
    later.close()
    return {
        "mb": size / 1e6,
        "all_ms": cold * 1000,
        "from_mark_ms": warm * 1000,
        "lines_from_mark": new,
        "ids_in_all": found,
    }
