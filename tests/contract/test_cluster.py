"""The board on a three-node JetStream cluster: seeds, replicas, and losing a stream's leader."""

from __future__ import annotations

import contextlib
import json
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paneboard.state.nats.store import RETRY_FOR, NatsStore
from paneboard.state.nats.url import shown
from paneboard.state.trust.policy import Policy, write_policy
from testing.helpers import ROOT, Listening, cli_env, run_cli, wait_until
from testing.natscluster import NAMES, NatsCluster

MISSING = "nats-server is missing (Debian package nats-server)"
pytestmark = pytest.mark.skipif(shutil.which("nats-server") is None, reason=MISSING)

SENDERS = 10
POSTS = 50  # 500 posts in all: each leader loss falls in the middle of posting


@pytest.fixture
def cluster(nats_cluster: NatsCluster) -> Iterator[NatsCluster]:
    """The session's cluster with every node up; whatever this test stops is started again."""
    nats_cluster.start()
    yield nats_cluster
    nats_cluster.start()


def _prefix() -> str:
    return f"t{uuid.uuid4().hex[:12]}"


class Senders:
    """SENDERS processes posting POSTS prompts each to bob and carol, one after another."""

    def __init__(self, home: Path, url: str) -> None:
        self.lines: queue.Queue[tuple[int, dict[str, Any]]] = queue.Queue()
        self.results: dict[int, list[dict[str, Any]]] = {n: [] for n in range(SENDERS)}
        env = cli_env(home, PANEBOARD_STORE=url)
        command = [sys.executable, "-m", "tests.contract.cluster_sender", str(POSTS)]
        self.procs = [
            subprocess.Popen(
                [*command, "--as", f"s{n}", "--to", "bob", "--to", "carol"],
                stdout=subprocess.PIPE,
                text=True,
                env=env,
                cwd=ROOT,
            )
            for n in range(SENDERS)
        ]
        for n in range(SENDERS):
            threading.Thread(target=self._pump, args=(n,), daemon=True).start()

    def _pump(self, n: int) -> None:
        stdout = self.procs[n].stdout
        assert stdout is not None
        with stdout:
            for line in stdout:
                self.lines.put((n, json.loads(line)))

    @property
    def done(self) -> int:
        return sum(len(r) for r in self.results.values())

    def wait_done(self, count: int, timeout: float = 120) -> None:
        """Block until *count* posts have ended (succeeded or failed), in all."""

        def ended() -> bool:
            with contextlib.suppress(queue.Empty):
                n, line = self.lines.get(timeout=0.05)
                self.results[n].append(line)
            return self.done >= count

        wait_until(ended, f"{count} posts ended", timeout, lambda: f"{self.done} ended", every=0)

    def succeeded(self) -> dict[tuple[int, int], str]:
        """(sender, index) -> post id, for every post whose command succeeded."""
        done = [(n, r) for n, rs in self.results.items() for r in rs]
        return {(n, r["i"]): r["out"].strip() for n, r in done if r["rc"] == 0}

    def stop(self) -> None:
        """Kill the senders still running (a test that failed half way)."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()

    def finish(self) -> None:
        self.wait_done(SENDERS * POSTS)
        for proc in self.procs:
            assert 0 == proc.wait(timeout=30)


def _leader(store: NatsStore) -> str:
    """The stream's leader's name, once it has one."""
    return wait_until(lambda: store.stream_report().leader, "a leader elected", 30, every=0.1)


def _deliveries(listener: Listening, ids: set[str], timeout: float = 90) -> list[dict[str, Any]]:
    """The stdout-door lines of *listener* until each of *ids* has come."""
    lines: list[dict[str, Any]] = []

    def all_came() -> bool:
        with contextlib.suppress(queue.Empty):
            lines.append(json.loads(listener.line(timeout=0.05)))
        return ids <= {line["id"] for line in lines}

    def missing() -> str:
        gone = sorted(ids - {line["id"] for line in lines})
        said = "\n".join(_stderr(listener)[-20:])
        return f"{len(gone)} never came, {gone[:5]}…:\n{said}"

    wait_until(all_came, f"each of {len(ids)} posts delivered", timeout, missing, every=0)
    return lines


def _listen(home: Path, agent: str, url: str) -> Listening:
    """*agent*'s listener in *home*, its rate limit off (each sender posts 50 at once), and its
    first-contact hold (the senders' home is another machine's, whose keys it has no pin for)."""
    (home / "test" / "panes").mkdir(mode=0o700, parents=True, exist_ok=True)
    write_policy(home / "test", agent, Policy(rate=0, first_contact="deliver"))
    env = cli_env(home, PANEBOARD_STORE=url)
    return Listening(home, agent, "--door", "stdout", env=env)


def _stderr(listener: Listening) -> list[str]:
    """What *listener* said on stderr so far."""
    while not listener.err.empty():
        line = listener.err.get()
        if line is not None:
            listener.stderr_lines.append(line)
    return listener.stderr_lines


def _check_order(lines: list[dict[str, Any]], senders: Senders) -> None:
    """Each sender's posts came in its order: every one that succeeded, and of those that
    failed only some (a post stored whose acknowledgement was lost), never one twice."""
    ids = [line["id"] for line in lines]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    assert not twice, f"delivered twice: {twice}"
    succeeded = senders.succeeded()
    for n in range(SENDERS):
        mine = [int(line["body"].split()[1]) for line in lines if line["sender"] == f"s{n}"]
        failed = {r["i"] for r in senders.results[n] if r["rc"] != 0}
        why = f"s{n} delivered {mine}; failed {sorted(failed)}"
        assert mine == sorted(mine), f"out of order: {why}"
        ok = [i for i in range(POSTS) if (n, i) in succeeded]
        assert ok == [i for i in mine if (n, i) in succeeded], why
        assert {i for i in mine if (n, i) not in succeeded} <= failed, why


# nats-py leaves the socket of a reconnection that failed (the whole cluster down) to the
# garbage collector, which warns; the test's own client lives through that.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_losing_the_leader_twice_is_a_pause_never_a_loss(
    tmp_path: Path,
    cluster: NatsCluster,
) -> None:
    """10 senders, 50 posts each, to listeners in two homes while the stream's leader is
    SIGKILLed and restarted, twice: each post that succeeded is delivered once, in its sender's
    order; each that failed said so in one line; no listener exits; a whole-cluster restart
    keeps every post."""
    url = cluster.url(_prefix(), replicas=3)
    homes = {name: tmp_path / name for name in ("laptop", "buildbox", "senders")}
    for home in homes.values():
        home.mkdir(mode=0o700)
    admin = NatsStore(url, "test", reconnect=True)
    bob = _listen(homes["laptop"], "bob", url)
    carol = _listen(homes["buildbox"], "carol", url)
    senders = Senders(homes["senders"], url)
    try:
        killed = []
        total = SENDERS * POSTS
        for at in (total // 5, total * 3 // 5):
            senders.wait_done(at)
            killed.append(_leader(admin))
            cluster.node(killed[-1]).kill(signal.SIGKILL)
            senders.wait_done(at + total * 3 // 20)  # posting goes on, on a new leader
            cluster.start()
        senders.finish()

        failed = [r for rs in senders.results.values() for r in rs if r["rc"] != 0]
        for r in failed:
            assert (1, "", 1) == (r["rc"], r["out"], r["err"].count("\n")), r
            assert r["err"].startswith("paneboard: NATS at "), r
        pause = max(r["seconds"] for rs in senders.results.values() for r in rs)
        print(f"\nleaders killed {killed}; {len(failed)} posts failed; longest post {pause:.2f} s")
        assert pause < RETRY_FOR + 8

        succeeded = senders.succeeded()
        seen = {}
        for listener in (bob, carol):
            seen[listener] = _deliveries(listener, set(succeeded.values()))
            _check_order(seen[listener], senders)
            assert listener.proc.poll() is None, _stderr(listener)[-20:]

        cluster.stop()
        cluster.start()
        stored = [p.id for _, p in admin.read_all() if p.sender.startswith("s")]
        assert len(stored) == len(set(stored))
        assert set(succeeded.values()) <= set(stored)
        late = ["post", "--as", "late", "--to", "bob", "--to", "carol", "after the restart"]
        after = run_cli(homes["senders"], *late, PANEBOARD_STORE=url)
        assert 0 == after.returncode, after.stderr
        for listener in (bob, carol):
            seen[listener] += _deliveries(listener, {after.stdout.strip()}, timeout=30)
            _check_order(seen[listener], senders)
            assert 0 == listener.stop()
    finally:
        senders.stop()
        bob.__exit__()
        carol.__exit__()
        admin.close()


def test_seeds_fail_over_and_without_a_quorum_a_post_fails_in_one_line(
    home: Path,
    cluster: NatsCluster,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a node down every post finds another seed; with the stream's leader down too (no
    quorum) a post retries for RETRY_FOR seconds, then fails in one line, exit 1, not stored."""
    url = cluster.url(_prefix(), replicas=3)
    monkeypatch.setenv("PANEBOARD_TEST_STORE", url)
    admin = NatsStore(url, "test")
    try:
        leader = _leader(admin)
    finally:
        admin.close()
    other = next(node for node in cluster.nodes if node.name != leader)
    other.kill()
    ids = []
    for i in range(3):
        done = run_cli(home, "post", "--as", "alice", "--to", "bob", f"one node down {i}")
        assert 0 == done.returncode, done.stderr
        ids.append(done.stdout.strip())
    cluster.node(leader).kill()
    start = time.monotonic()
    down = run_cli(home, "post", "--as", "alice", "--to", "bob", "no quorum")
    took = time.monotonic() - start
    assert (1, "", 1) == (down.returncode, down.stdout, down.stderr.count("\n"))
    said = re.fullmatch(
        r"paneboard: NATS at (\S+): post (\w+) was not acknowledged: .+\n", down.stderr
    )
    assert said is not None, down.stderr
    assert f"nats://{cluster.seeds}" == said[1]
    assert RETRY_FOR - 1 <= took < RETRY_FOR + 6  # retries end a pause early; a slow start
    cluster.start()
    shown = run_cli(home, "log", "--json", "--kind", "prompt", timeout=60)
    assert ids == [json.loads(line)["id"] for line in shown.stdout.splitlines()]


def test_replicas_are_asked_for_and_an_existing_stream_is_used_as_it_is(
    home: Path,
    cluster: NatsCluster,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """?replicas=3 creates the stream and the presence bucket with three; a stream created with
    one is used as it is; doctor says what it found."""
    url = cluster.url(_prefix(), replicas=3)
    r3 = NatsStore(url, "test")
    try:
        r3.presence.put("bob", b"{}")
        report = r3.stream_report()
        found = (report.replicas, report.wanted, report.cluster, len(report.peers))
        assert (3, 3, "paneboard", 2) == found
        bucket = r3.run(r3.js.stream_info(f"KV_{r3.presence.bucket}"))
        assert 3 == bucket.config.num_replicas
    finally:
        r3.close()
    doctor = run_cli(home, "doctor", "--as", "bob", PANEBOARD_STORE=url).stdout.splitlines()
    assert set(NAMES) == {report.leader, *(peer.name for peer in report.peers)}
    peers = "".join(f"; {peer.name} lag 0" for peer in report.peers)
    stream = f"{r3.stream}: 3 replica(s), cluster `paneboard`, leader {report.leader}{peers}"
    assert f"ok    board    `test` on {shown(url)}: 0 posts; {stream}" in doctor

    prefix = _prefix()
    NatsStore(cluster.url(prefix, replicas=1), "test").close()
    url = cluster.url(prefix, replicas=3)
    monkeypatch.setenv("PANEBOARD_TEST_STORE", url)
    assert 0 == run_cli(home, "post", "--as", "alice", "--to", "bob", "hi").returncode
    r1 = NatsStore(cluster.url(prefix, replicas=3), "test")
    try:
        report = r1.stream_report()
    finally:
        r1.close()
    assert (1, 3, ()) == (report.replicas, report.wanted, report.peers)
    asked = "1 replica(s) (the address asks for 3)"
    stream = f"{r1.stream}: {asked}, cluster `paneboard`, leader {report.leader}"
    doctor = run_cli(home, "doctor", "--as", "bob").stdout.splitlines()
    assert f"warn  board    `test` on {shown(url)}: 1 posts; {stream}" in doctor
