"""What only the NATS store has to show: two machines, a server restart, deduplication,
lost connections."""

from __future__ import annotations

import json
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from paneboard.state.nats.store import NatsStore
from paneboard.state.nats.url import FORM
from paneboard.state.trust.keys import Pins
from testing.helpers import Listening, NatsServer, cli_env, run_cli
from tests.contract.test_contract import REFUSED, posting_at_once
from tests.factories import prompt

pytestmark = [
    pytest.mark.nats,
    pytest.mark.skipif(
        shutil.which("nats-server") is None,
        reason="nats-server is missing (Debian package nats-server)",
    ),
]


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[NatsServer]:
    """A server of this test's own, to stop and start."""
    server = NatsServer(tmp_path / "nats")
    yield server
    if server.proc.poll() is None:
        server.stop()


def _url(server: NatsServer) -> str:
    return f"{server.url}/t{uuid.uuid4().hex[:12]}"


def test_two_machines_share_a_board(tmp_path: Path, nats_server: NatsServer) -> None:
    """A listener with one home, a sender with another whose key the listener's home pinned:
    delivered, and `who` on the sender's side sees it."""
    url = _url(nats_server)
    laptop, buildbox = tmp_path / "laptop", tmp_path / "buildbox"
    own = run_cli(buildbox, "keys", "--own", "--as", "alice", PANEBOARD_STORE=url)
    (laptop / "test").mkdir(mode=0o700, parents=True)
    Pins(laptop / "test").trust("alice", own.stdout.strip())  # what `paneboard trust` writes
    with Listening(laptop, "bob", "--door", "stdout", env=_env(laptop, url)) as bob:
        done = run_cli(
            buildbox,
            *["post", "--as", "alice", "--to", "bob"],
            "from the build box",
            PANEBOARD_STORE=url,
        )
        assert 0 == done.returncode, done.stderr
        assert done.stdout.strip() == json.loads(bob.line())["id"]
        rows = {
            r["agent"]: r
            for r in map(
                json.loads,
                run_cli(buildbox, "who", "--json", PANEBOARD_STORE=url).stdout.splitlines(),
            )
        }
        assert (True, bob.proc.pid, "stdout") == (
            rows["bob"]["listening"],
            rows["bob"]["pid"],
            rows["bob"]["door"],
        )
    assert not (buildbox / "test" / "log").exists()


def _env(home: Path, url: str) -> dict[str, str]:
    from testing.helpers import cli_env

    return cli_env(home, PANEBOARD_STORE=url)


def test_server_restart_mid_run_loses_and_repeats_nothing(
    home: Path, own_server: NatsServer
) -> None:
    url = _url(own_server)
    posted, seen = [], []
    with Listening(home, "bob", "--door", "stdout", env=_env(home, url)) as bob:
        posted += [
            run_cli(
                home, "post", "--as", "alice", "--to", "bob", f"before {i}", PANEBOARD_STORE=url
            ).stdout.strip()
            for i in range(3)
        ]
        seen += [json.loads(bob.line())["id"] for _ in range(3)]
        own_server.stop()
        down = run_cli(
            home, "post", "--as", "alice", "--to", "bob", "while down", PANEBOARD_STORE=url
        )
        assert (1, "") == (down.returncode, down.stdout)
        assert (
            down.stderr.startswith(f"paneboard: cannot reach NATS at {own_server.url}")
            and down.stderr.count("\n") == 1
        )
        own_server.start()
        for i in range(3):
            done = run_cli(
                home, "post", "--as", "alice", "--to", "bob", f"after {i}", PANEBOARD_STORE=url
            )
            assert 0 == done.returncode, done.stderr
            posted.append(done.stdout.strip())
        seen += [json.loads(bob.line(timeout=30))["id"] for _ in range(3)]
        bob.wait_err(f"delivered {posted[-1]}")  # recorded: the SIGKILL below is past the window
    with Listening(home, "bob", "--door", "stdout", env=_env(home, url)) as again:
        last = run_cli(
            home,
            *["post", "--as", "alice", "--to", "bob"],
            "after a listener restart",
            PANEBOARD_STORE=url,
        ).stdout.strip()
        assert last == json.loads(again.line())["id"]
    assert posted == seen
    ids = [
        json.loads(line)["id"]
        for line in run_cli(
            home, "log", "--json", "--kind", "prompt", PANEBOARD_STORE=url
        ).stdout.splitlines()
    ]
    assert [*posted, last] == ids


def test_a_retried_publish_is_stored_once(nats_server: NatsServer) -> None:
    """The post id is the message id: JetStream drops the second copy and answers with the
    first's position."""
    store = NatsStore(_url(nats_server), "test")
    try:
        post = prompt(id="01retry0000000000000000000", board="test", ts=time.time(), body="once")
        first = store.append([post])
        again = store.append([post])
        assert first == again
        assert [post] == [p for _, p in store.read_all()]
    finally:
        store.close()


def test_a_bad_store_address_is_refused(home: Path) -> None:
    done = run_cli(home, "post", "--as", "alice", "--to", "bob", "hi", "--store", "http://example")
    assert (
        1,
        f"paneboard: --store 'http://example' is not a {FORM} address\n",
    ) == (
        done.returncode,
        done.stderr,
    )


def test_a_batch_keeps_its_order(nats_server: NatsServer) -> None:
    """Published together, acknowledged together, stored in the order given."""
    store = NatsStore(_url(nats_server), "test")
    try:
        posts = [prompt(i, board="test", ts=1.0, body=str(i)) for i in range(2000)]
        positions = store.append(posts)
        assert positions == sorted(positions)
        assert posts == [p for _, p in store.read_all()]
    finally:
        store.close()


def test_doctor_and_compact_on_nats(home: Path, nats_server: NatsServer) -> None:
    url = _url(nats_server)
    run_cli(home, "post", "--as", "alice", "--to", "bob", "hi", PANEBOARD_STORE=url)
    doctor = run_cli(home, "doctor", "--as", "bob", PANEBOARD_STORE=url)
    stream = f"{url.rpartition('/')[2]}_test: 1 replica(s), one server"
    assert f"ok    board    `test` on {url}: 1 posts; {stream}" in doctor.stdout.splitlines()
    compact = run_cli(home, "compact", PANEBOARD_STORE=url)
    assert 1 == compact.returncode and compact.stderr.startswith(
        "paneboard: compact rewrites the file log; on NATS"
    )


def test_doctor_probe_goes_through_the_store(home: Path, nats_server: NatsServer) -> None:
    """`doctor --probe --store …` posts its probe on that store, where the listener takes it."""
    url = _url(nats_server)
    with Listening(home, "bob", "--door", "stdout", env=cli_env(home, PANEBOARD_STORE=url)) as bob:
        doctor = run_cli(home, "doctor", "--probe", "--as", "bob", "--store", url)
        assert "paneboard doctor probe" in json.loads(bob.line())["body"]
    [probe] = [line for line in doctor.stdout.splitlines() if " probe " in line]
    assert probe.startswith("ok    probe    delivered through the door in "), doctor.stdout


def _certs(folder: Path) -> tuple[Path, Path, Path]:
    """A CA, and a server certificate for 127.0.0.1 signed by it (openssl)."""
    folder.mkdir()
    ca_key, ca, key, csr, cert = (
        folder / n for n in ("ca.key", "ca.pem", "server.key", "server.csr", "server.pem")
    )
    ext = folder / "san.cnf"
    ext.write_text("subjectAltName=IP:127.0.0.1\n")

    def ssl(*args: str) -> None:
        import subprocess

        subprocess.run(["openssl", *args], check=True, capture_output=True)

    ssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        str(ca_key),
        "-out",
        str(ca),
        "-days",
        "1",
        "-subj",
        "/CN=paneboard test CA",
    )
    ssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        str(key),
        "-out",
        str(csr),
        "-subj",
        "/CN=127.0.0.1",
    )
    ssl(
        "x509",
        "-req",
        "-in",
        str(csr),
        "-CA",
        str(ca),
        "-CAkey",
        str(ca_key),
        "-CAcreateserial",
        "-out",
        str(cert),
        "-days",
        "1",
        "-extfile",
        str(ext),
    )
    return ca, cert, key


@pytest.mark.skipif(
    shutil.which("openssl") is None, reason="openssl is missing: no certificates for the TLS test"
)
def test_tls_with_a_ca_file(home: Path, tmp_path: Path) -> None:
    """A TLS-only server: --nats-tls-ca connects; without it, one line and exit 1, and no
    secret printed."""
    ca, cert, key = _certs(tmp_path / "certs")
    server = NatsServer(tmp_path / "nats", "--tls", "--tlscert", str(cert), "--tlskey", str(key))
    try:
        url = f"{server.url}/t{uuid.uuid4().hex[:8]}"
        ok = run_cli(
            home,
            *["post", "--as", "alice", "--to", "bob"],
            "over tls",
            "--nats-tls-ca",
            str(ca),
            PANEBOARD_STORE=url,
        )
        assert 0 == ok.returncode, ok.stderr
        shown = run_cli(home, "log", "--json", "--nats-tls-ca", str(ca), PANEBOARD_STORE=url)
        assert "over tls" in shown.stdout
        refused = run_cli(
            home,
            *["post", "--as", "alice", "--to", "bob"],
            "no ca",
            PANEBOARD_STORE=url.replace("nats://", "nats://user:s3cret@"),
        )
        assert 1 == refused.returncode and 1 == refused.stderr.count("\n")
        assert "s3cret" not in refused.stderr
    finally:
        server.stop()


def test_max_open_holds_across_machines(
    tmp_path: Path, nats_server: NatsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One sender posting from four homes at once, --max-open 2: the board holds two of its
    prompts, whichever machine each came from."""
    monkeypatch.setenv("PANEBOARD_TEST_STORE", _url(nats_server))
    homes = [tmp_path / f"machine{i}" for i in range(4)]
    for home in homes:
        home.mkdir(mode=0o700)
    done = posting_at_once(homes, 2)
    stored = [out.strip() for code, out, _ in done if code == 0]
    refused = [(code, err) for code, _, err in done if code != 0]
    assert (2, [(1, REFUSED.format(2))] * 2) == (len(stored), refused)
    logged = run_cli(homes[0], "log", "--json").stdout.splitlines()
    assert sorted(stored) == sorted(json.loads(line)["id"] for line in logged)


def test_max_open_folds_what_other_machines_posted_since(
    tmp_path: Path, nats_server: NatsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sender's next post counts the prompts and acks other machines posted since its last
    one: refused at the limit, admitted once one is acked elsewhere."""
    monkeypatch.setenv("PANEBOARD_TEST_STORE", _url(nats_server))
    laptop, buildbox = tmp_path / "laptop", tmp_path / "buildbox"
    for home in (laptop, buildbox):
        home.mkdir(mode=0o700)

    def posting(home: Path) -> tuple[int, str, str]:
        done = run_cli(home, "post", "--as", "alice", "--to", "bob", "--max-open", "2", "job")
        return done.returncode, done.stdout.strip(), done.stderr

    first = posting(laptop)
    second = posting(buildbox)
    assert [(1, "", REFUSED.format(2))] * 2 == [posting(laptop), posting(buildbox)]
    assert 0 == run_cli(buildbox, "ack", "--as", "bob", first[1]).returncode
    third = posting(laptop)
    assert ([0, 0, 0], (1, "", REFUSED.format(2))) == (
        [first[0], second[0], third[0]],
        posting(laptop),
    )
