"""A NATS store's secrets: `tls://` means TLS, and a password or token is never shown."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paneboard.state.nats.url import FORM
from testing.helpers import PANEBOARD, Listening, NatsServer, SocketServer, cli_env, run_cli
from tests.contract.test_nats import _certs
from tests.hooks.test_hooks import PARENT

pytestmark = [
    pytest.mark.nats,
    pytest.mark.skipif(
        shutil.which("nats-server") is None,
        reason="nats-server is missing (Debian package nats-server)",
    ),
]

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


def test_doctor_hides_a_password_in_installed_hooks(
    home: Path, tmp_path: Path, auth_server: NatsServer
) -> None:
    """Hook files written with a password (by hand, or an older paneboard), and a password in
    `--store`: doctor shows none of them."""
    url, bare = _secret_url(auth_server)
    project = tmp_path / "project"
    project.mkdir()
    install = ("hook", "install", "claude", "--mcp", "--project", str(project))
    assert 0 == run_cli(home, *install, "--store", bare, "--as", "bob").returncode
    for written in (project / ".claude" / "settings.local.json", project / ".mcp.json"):
        written.write_text(written.read_text().replace(bare, url))
    doctor = [*PANEBOARD, "doctor", "--as", "bob", "--store", url]
    env = cli_env(home)
    done = subprocess.run(doctor, cwd=project, env=env, capture_output=True, text=True, check=False)
    assert PW not in done.stdout + done.stderr
    [board] = [line for line in done.stdout.splitlines() if line.split()[1] == "board"]
    assert board.startswith(f"ok    board    `test` on {bare}: 0 posts;")
    [hooks] = [line for line in done.stdout.splitlines() if "claude hooks use" in line]
    assert f"store {bare}" in hooks
    [mcp] = [line for line in done.stdout.splitlines() if line.startswith("ok    mcp      claude")]
    assert f"--store {bare}" in mcp


def _own_address() -> str:
    """This machine's address on its network (not loopback), or a skip."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks a route
        except OSError:
            pytest.skip("no network interface besides loopback")
        address = str(s.getsockname()[0])
    if address.startswith("127."):
        pytest.skip("no network interface besides loopback")
    return address


def test_doctor_warns_of_an_open_store_off_this_machine(home: Path, tmp_path: Path) -> None:
    """`nats://` to a non-loopback server without credentials: `doctor` warns; loopback: not."""
    address = _own_address()
    server = NatsServer(tmp_path / "nats", "-a", "0.0.0.0")
    try:
        remote = f"nats://{address}:{server.port}"
        done = run_cli(home, "doctor", "--as", "bob", "--store", remote)
        warning = (
            f"warn  store    {remote}: no credentials on a server off this machine: any client "
            "that reaches it reads, forges and answers every post (docs/machines.md: accounts, "
            "TLS)"
        )
        assert warning in done.stdout.splitlines()
        local = run_cli(home, "doctor", "--as", "bob", "--store", server.url)
        assert [] == [line for line in local.stdout.splitlines() if " store " in line]
    finally:
        server.stop()


def test_doctor_warns_of_a_password_in_clear_off_this_machine(home: Path, tmp_path: Path) -> None:
    """A password in clear to a non-loopback server: `doctor` warns it crosses the network."""
    address = _own_address()
    server = NatsServer(tmp_path / "nats", "-a", "0.0.0.0", "--user", "u1", "--pass", PW)
    try:
        remote = f"nats://{address}:{server.port}"
        url = remote.replace("nats://", f"nats://u1:{PW}@")
        done = run_cli(home, "doctor", "--as", "bob", "--store", url)
        warning = (
            f"warn  store    {remote}: plaintext to a server off this machine: credentials and "
            "posts cross the network in clear (tls:// and --nats-tls-ca; docs/machines.md)"
        )
        assert warning in done.stdout.splitlines()
        assert PW not in done.stdout + done.stderr
    finally:
        server.stop()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt(issuer: Any, subject: str, name: str, nats: dict[str, object]) -> str:
    """A NATS JWT: *issuer* (an nkeys pair) signs the claims about *subject*."""
    claims: dict[str, object] = {
        "iat": int(time.time()),
        "iss": issuer.public_key.decode(),
        "name": name,
        "sub": subject,
        "nats": {**nats, "version": 2},
    }
    digest = hashlib.sha256(json.dumps(claims, sort_keys=True).encode()).digest()
    claims["jti"] = base64.b32encode(digest).decode().rstrip("=")
    head = _b64(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    body = _b64(json.dumps(claims).encode())
    return f"{head}.{body}.{_b64(issuer.sign(f'{head}.{body}'.encode()))}"


def _operator_mode(folder: Path) -> tuple[Path, Path]:
    """A server config in operator mode (an operator, a system account, an account with
    JetStream) and a creds file of a user of that account."""
    import nkeys

    def pair(prefix: int) -> Any:
        return nkeys.from_seed(nkeys.encode_seed(os.urandom(32), prefix))

    operator, system = pair(nkeys.PREFIX_BYTE_OPERATOR), pair(nkeys.PREFIX_BYTE_ACCOUNT)
    account, user = pair(nkeys.PREFIX_BYTE_ACCOUNT), pair(nkeys.PREFIX_BYTE_USER)
    limits: dict[str, object] = dict.fromkeys(
        ("subs", "data", "payload", "imports", "exports", "conn", "leaf"), -1
    )
    stored = dict.fromkeys(("mem_storage", "disk_storage", "streams", "consumer"), -1)
    accounts = {
        system.public_key.decode(): _jwt(
            operator, system.public_key.decode(), "SYS", {"type": "account", "limits": limits}
        ),
        account.public_key.decode(): _jwt(
            operator,
            account.public_key.decode(),
            "boards",
            {"type": "account", "limits": {**limits, **stored}},
        ),
    }
    folder.mkdir()
    (folder / "operator.jwt").write_text(
        _jwt(operator, operator.public_key.decode(), "op", {"type": "operator"})
    )
    preload = ", ".join(f'{key}: "{jwt}"' for key, jwt in accounts.items())
    config = folder / "server.conf"
    config.write_text(
        f'operator: "{folder / "operator.jwt"}"\nresolver: MEMORY\n'
        f"system_account: {system.public_key.decode()}\nresolver_preload: {{ {preload} }}\n"
    )
    user_jwt = _jwt(
        account,
        user.public_key.decode(),
        "bob",
        {"type": "user", "pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1},
    )
    creds = folder / "bob.creds"
    creds.write_text(
        f"-----BEGIN NATS USER JWT-----\n{user_jwt}\n------END NATS USER JWT------\n\n"
        f"-----BEGIN USER NKEY SEED-----\n{user.seed.decode()}\n------END USER NKEY SEED------\n"
    )
    creds.chmod(0o600)
    return config, creds


def test_a_creds_file_connects_in_operator_mode(home: Path, tmp_path: Path) -> None:
    """`--nats-creds FILE` (a user JWT and its seed) on a server in operator/JWT mode."""
    config, creds = _operator_mode(tmp_path / "op")
    server = NatsServer(tmp_path / "nats", "-c", str(config))
    try:
        posted = run_cli(
            home,
            "post",
            "--as",
            "alice",
            "--to",
            "bob",
            "signed in",
            "--store",
            server.url,
            "--nats-creds",
            str(creds),
        )
        assert (0, "") == (posted.returncode, posted.stderr)
        shown = run_cli(
            home, "log", "--json", PANEBOARD_STORE=server.url, PANEBOARD_NATS_CREDS=str(creds)
        )
        assert ["signed in"] == [json.loads(line)["body"] for line in shown.stdout.splitlines()]
        anonymous = run_cli(home, "log", "--store", server.url)
        said = f"paneboard: cannot reach NATS at {server.url}: nats: 'Authorization Violation'\n"
        assert (1, said) == (anonymous.returncode, anonymous.stderr)
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("creds", "problem"),
    [
        (
            "/nonexistent/bob.creds",
            "--nats-creds /nonexistent/bob.creds: No such file or directory",
        ),
        (
            "/etc/passwd",
            "--nats-creds /etc/passwd is not a NATS credentials file (a user JWT and seed)",
        ),
    ],
)
def test_a_bad_creds_file_is_refused_in_one_line(
    home: Path, auth_server: NatsServer, creds: str, problem: str
) -> None:
    done = run_cli(home, "log", "--store", auth_server.url, "--nats-creds", creds)
    assert (1, f"paneboard: {problem}\n") == (done.returncode, done.stderr)


def test_an_exec_door_acts_through_the_kept_secret(
    home: Path, tmp_path: Path, auth_server: NatsServer
) -> None:
    """The door's command gets the URL without the secret, and answers through the home's."""
    url, bare = _secret_url(auth_server)
    seen = tmp_path / "store-seen"
    script = (
        f"printenv PANEBOARD_STORE > {seen}; cat > /dev/null; "
        f'{" ".join(PANEBOARD)} answer "$PANEBOARD_ID" done-by-door'
    )
    env = cli_env(home, PANEBOARD_STORE=url)
    with Listening(home, "bob", "--door", "exec", "--", "sh", "-c", script, env=env):
        pid = run_cli(home, "post", "--as", "alice", "--to", "bob", "hi", "--store", bare)
        waited = run_cli(
            home, "wait", pid.stdout.strip(), "--as", "alice", "--timeout", "20", "--store", bare
        )
    assert (0, "done-by-door\n") == (waited.returncode, waited.stdout)
    assert f"{bare}\n" == seen.read_text()


def test_a_hook_started_listener_carries_no_password(
    home: Path, tmp_path: Path, auth_server: NatsServer
) -> None:
    """A session whose environment holds the password: the listener its SessionStart hook
    starts has neither it in argv nor in its environment, and delivers through the home's."""
    url, bare = _secret_url(auth_server)
    inbox = SocketServer(tmp_path / "cc.sock")
    env = cli_env(
        home,
        CLAUDE_CODE_MESSAGING_SOCKET=str(inbox.path),
        PANEBOARD_AGENT="bob",
        PANEBOARD_STORE=url,
    )
    hook = [*PANEBOARD, "hook", "session-start", "--agent", "claude"]
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, *hook], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert parent.stdout is not None
        assert "0" == parent.stdout.readline().strip()
        context = json.loads(parent.stdout.readline())["hookSpecificOutput"]["additionalContext"]
        listener = int(context.split("listener pid ")[1].split()[0])
        posted = run_cli(home, "post", "--as", "alice", "--to", "bob", "hi", "--store", bare)
        text = json.loads(inbox.lines.get(timeout=15))["message"]["content"]
        assert posted.stdout.strip() in text
        process = Path(f"/proc/{listener}/cmdline").read_bytes()
        process += Path(f"/proc/{listener}/environ").read_bytes()
        assert [] == [where for where in (text, context, process.decode()) if PW in where]
    finally:
        parent.kill()
        parent.wait()
        if parent.stdout:
            parent.stdout.close()
        inbox.close()
