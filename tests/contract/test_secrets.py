"""A NATS store's secrets: `tls://` means TLS, and a password or token is never shown."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from paneboard.state.natsurl import FORM
from tests.contract.test_nats import _certs
from tests.helpers import Listening, NatsServer, cli_env, run_cli

pytestmark = pytest.mark.skipif(
    shutil.which("nats-server") is None,
    reason="nats-server is missing (Debian package nats-server)",
)

PW = "S3CRETPW"
NOT_TLS = (
    "the server did not start TLS, which tls:// and --nats-tls-ca require; nothing was sent to it"
)


class PlainServer:
    """A plaintext server that says INFO (auth required, no TLS) and keeps what clients send."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = int(self.sock.getsockname()[1])
        self.received: list[bytes] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        info = {"server_id": "plain", "version": "2.9.10", "max_payload": 1048576}
        line = b"INFO " + json.dumps({**info, "proto": 1, "auth_required": True}).encode()
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed: the test is over
                return
            with conn:
                conn.sendall(line + b"\r\n")
                self.received.append(_read_until_closed(conn))

    def close(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(5)


def _read_until_closed(conn: socket.socket) -> bytes:
    conn.settimeout(5)
    data = b""
    try:
        while chunk := conn.recv(4096):
            data += chunk
    except OSError:
        pass
    return data


@pytest.fixture
def plain() -> Iterator[PlainServer]:
    server = PlainServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    """A real nats-server that wants user `u1` with password `PW`."""
    server = NatsServer(tmp_path_factory.mktemp("nats-auth"), "--user", "u1", "--pass", PW)
    yield server
    server.stop()


def _secret_url(server: NatsServer) -> tuple[str, str]:
    """A URL with the password on a board of its own, and the same URL without it."""
    bare = f"nats://127.0.0.1:{server.port}/t{uuid.uuid4().hex[:12]}"
    return bare.replace("nats://", f"nats://u1:{PW}@"), bare


def test_tls_url_refuses_a_plaintext_server(home: Path, plain: PlainServer) -> None:
    """`tls://` to a server that does not start TLS: one line, exit 1, no CONNECT sent."""
    url = f"tls://u1:{PW}@127.0.0.1:{plain.port}"
    done = run_cli(home, "post", "--as", "alice", "--to", "bob", "hi", "--store", url)
    said = f"paneboard: cannot reach NATS at tls://127.0.0.1:{plain.port}: {NOT_TLS}\n"
    assert (1, "", said) == (done.returncode, done.stdout, done.stderr)
    assert plain.received  # the client did connect, and was refused before CONNECT
    assert [b""] * len(plain.received) == plain.received


def test_a_ca_refuses_a_plaintext_server(home: Path, plain: PlainServer) -> None:
    """`nats://` with --nats-tls-ca: TLS or one line, and the password never sent."""
    url = f"nats://u1:{PW}@127.0.0.1:{plain.port}"
    ca = "/etc/ssl/certs/ca-certificates.crt"
    done = run_cli(home, "doctor", "--as", "bob", "--store", url, "--nats-tls-ca", ca)
    board = f"fail  board    cannot reach NATS at nats://127.0.0.1:{plain.port}: {NOT_TLS}"
    assert board in done.stdout.splitlines()
    assert PW not in done.stdout + done.stderr
    assert [b""] * len(plain.received) == plain.received


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is missing: no certificates")
def test_tls_url_with_a_password_works_on_a_tls_server(home: Path, tmp_path: Path) -> None:
    """`tls://USER:PASSWORD@…` and the CA that signed the server: posted and read back."""
    ca, cert, key = _certs(tmp_path / "certs")
    tls = ("--tls", "--tlscert", str(cert), "--tlskey", str(key))
    server = NatsServer(tmp_path / "nats", *tls, "--user", "u1", "--pass", PW)
    try:
        url = f"tls://u1:{PW}@127.0.0.1:{server.port}/t{uuid.uuid4().hex[:8]}"
        posted = run_cli(home, "post", "--as", "alice", "--to", "bob", "over tls", "--store", url)
        assert (1, "") == (posted.returncode, posted.stdout)  # no CA: the system's do not know it
        assert "certificate verify failed" in posted.stderr
        ca_option = ("--nats-tls-ca", str(ca))
        posted = run_cli(
            home, "post", "--as", "alice", "--to", "bob", "over tls", *ca_option, "--store", url
        )
        assert (0, "") == (posted.returncode, posted.stderr)
        bare = url.replace(f"u1:{PW}@", "")
        shown = run_cli(home, "log", "--json", *ca_option, "--store", bare)
        assert ["over tls"] == [json.loads(line)["body"] for line in shown.stdout.splitlines()]
    finally:
        server.stop()


def test_a_password_is_kept_in_the_home_0600(home: Path, auth_server: NatsServer) -> None:
    """Given once in a URL, the secret is kept 0600 in the home, keyed by the servers."""
    url, bare = _secret_url(auth_server)
    done = run_cli(home, "post", "--as", "alice", "--to", "bob", "hi", "--store", url)
    assert 0 == done.returncode, done.stderr
    kept = home / ".nats-secrets"
    assert 0o600 == stat.S_IMODE(kept.lstat().st_mode)
    assert {f"nats://127.0.0.1:{auth_server.port}": f"u1:{PW}"} == json.loads(kept.read_text())
    again = run_cli(home, "log", "--json", "--store", bare)
    assert (0, 1) == (again.returncode, len(again.stdout.splitlines()))


def test_without_the_kept_secret_the_server_refuses(home: Path, auth_server: NatsServer) -> None:
    """The secret-free URL works only through the home's secret (the server does check)."""
    _, bare = _secret_url(auth_server)
    done = run_cli(home, "log", "--store", bare)
    assert 1 == done.returncode
    assert "Authorization Violation" in done.stderr


def test_composed_text_and_command_lines_carry_no_password(
    home: Path, auth_server: NatsServer
) -> None:
    """The close commands name the URL without its secret, and the home that keeps it."""
    url, bare = _secret_url(auth_server)
    env = cli_env(home, PANEBOARD_STORE=url)
    with Listening(home, "bob", "--door", "stdout", env=env) as bob:
        assert PW not in Path(f"/proc/{bob.proc.pid}/cmdline").read_text()
        run_cli(home, "post", "--as", "alice", "--to", "bob", "hi", "--store", bare)
        text = json.loads(bob.line())["text"]
    assert PW not in text
    assert f"--store {bare}" in text


def test_doctor_and_errors_show_no_password(home: Path, auth_server: NatsServer) -> None:
    """`doctor` with a password in the URL shows the URL without it."""
    url, bare = _secret_url(auth_server)
    done = run_cli(home, "doctor", "--as", "bob", "--store", url)
    assert PW not in done.stdout + done.stderr
    [board] = [line for line in done.stdout.splitlines() if " board " in line]
    assert board.startswith(f"ok    board    `test` on {bare}: 0 posts;")


def test_a_wrong_scheme_hides_the_password(home: Path) -> None:
    done = run_cli(home, "post", "--as", "a", "--to", "b", "x", "--store", "http://u1:WRONGPW@h")
    said = f"paneboard: --store 'http://h' is not a {FORM} address\n"
    assert (1, said) == (done.returncode, done.stderr)
    assert [] == list(home.iterdir())


def test_hook_install_refuses_a_password(home: Path, tmp_path: Path) -> None:
    """`hook install --store` with a secret: one line naming what to use, nothing written."""
    project = tmp_path / "project"
    project.mkdir()
    url = f"nats://u1:{PW}@127.0.0.1:4222"
    done = run_cli(
        home, "hook", "install", "claude", "--mcp", "--project", str(project), "--store", url
    )
    said = (
        "paneboard: --store holds a password or token, which hooks would write into project "
        "files and command lines: connect once with it (PANEBOARD_STORE=URL paneboard doctor) "
        "to keep it in the home's .nats-secrets (0600), or use --nats-creds FILE; then install "
        "with --store nats://127.0.0.1:4222\n"
    )
    assert (1, "", said) == (done.returncode, done.stdout, done.stderr)
    assert [] == list(project.iterdir())


def test_a_secrets_file_others_can_read_is_refused(home: Path, auth_server: NatsServer) -> None:
    """A secrets file with group or other bits: refused in one line, naming the fix."""
    _, bare = _secret_url(auth_server)
    kept = home / ".nats-secrets"
    kept.write_text(json.dumps({f"nats://127.0.0.1:{auth_server.port}": f"u1:{PW}"}))
    os.chmod(kept, 0o644)
    done = run_cli(home, "log", "--store", bare)
    said = (
        f"paneboard: {kept} must be yours and 0600 (mode 644, owner uid {os.getuid()}): "
        f"chmod 600 {kept}\n"
    )
    assert (1, said) == (done.returncode, done.stderr)


def test_a_secrets_file_that_is_a_link_is_refused(
    home: Path, tmp_path: Path, auth_server: NatsServer
) -> None:
    """A link planted as the secrets file is neither read nor written through."""
    url, _ = _secret_url(auth_server)
    target = tmp_path / "elsewhere"
    target.write_text("{}")
    (home / ".nats-secrets").symlink_to(target)
    done = run_cli(home, "post", "--as", "alice", "--to", "bob", "hi", "--store", url)
    said = f"paneboard: {home / '.nats-secrets'} is a symbolic link, not a secrets file\n"
    assert (1, said) == (done.returncode, done.stderr)
    assert "{}" == target.read_text()
