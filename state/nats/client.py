"""Connecting to NATS with nats-py: credentials, TLS that is never skipped, which failures are
worth a retry, and messages that never show a secret."""

from __future__ import annotations

import asyncio
import logging
import ssl
from pathlib import Path
from typing import Any

from nats import errors as nats_errors

from paneboard.protocol.errors import BadInput, BoardIOError
from paneboard.state.nats.url import NatsAddress

__all__ = ["CONNECT_WITHIN", "RECONNECT_WAIT", "NotTls", "connect", "quiet", "transient"]

RECONNECT_WAIT = 0.25
CONNECT_WITHIN = 5.0  # the first connection, every seed tried


def _orderly_tls_close(record: logging.LogRecord) -> bool:
    """False for the line asyncio logs on every orderly close of a TLS stream (its stream
    protocol asks to keep the half-closed connection, which TLS cannot): it tells a user of
    a closed store nothing."""
    return not record.getMessage().startswith("returning true from eof_received()")


logging.getLogger("asyncio").addFilter(_orderly_tls_close)


async def connect(address: NatsAddress, creds: str | None, tls_ca: str | None) -> Any:
    """A nats-py client connected to one of *address*'s servers; `BoardIOError` if none
    answers within `CONNECT_WITHIN` seconds."""
    # nats-py bounds its first connection only by a positive max_reconnect_attempts:
    # every seed is tried twice, then the command fails.
    options: dict[str, Any] = {
        "connect_timeout": 2,
        "allow_reconnect": True,
        "max_reconnect_attempts": 1,
        "reconnect_time_wait": RECONNECT_WAIT,
    }
    if creds:
        options["user_credentials"] = _check_creds(creds)
    tls = address.servers[0].startswith("tls://") or bool(tls_ca)
    if tls:
        options["tls"] = _tls_context(tls_ca)

    seen: list[Exception] = []

    async def heard(exc: Exception) -> None:
        seen.append(exc)  # nats-py's default prints every reconnect; failures surface below

    client = _tls_only_client() if tls else _client()
    try:
        # Bounded here: nats-py may keep trying a server whose TLS handshake fails.
        connecting = client.connect(list(address.servers), error_cb=heard, **options)
        await asyncio.wait_for(connecting, CONNECT_WITHIN)
    except Exception as exc:  # nats-py raises several unrelated types for "cannot connect"
        detail = quiet(exc, address.servers[0])
        if isinstance(exc, TimeoutError):
            detail = f"no answer within {CONNECT_WITHIN:g} s"
        if seen and isinstance(exc, TimeoutError | nats_errors.NoServersError):
            detail = quiet(_why(seen), address.servers[0])
        if refused := [str(e) for e in seen if isinstance(e, NotTls)]:
            detail = refused[-1]  # the reason, whatever other seeds answered
        raise BoardIOError(f"cannot reach NATS at {address.shown}: {detail}") from exc
    return client


class NotTls(nats_errors.Error):  # a nats-py Error: on a reconnection, nats-py tries the next
    """A server that did not start TLS where the address or a CA requires it."""

    def __str__(self) -> str:
        return (
            "the server did not start TLS, which tls:// and --nats-tls-ca require; "
            "nothing was sent to it"
        )


def _check_creds(path: str) -> str:
    """*path* if it reads as a NATS credentials file (a user JWT and its seed); `BadInput` if not.

    nats-py reads it again as it connects; a file it cannot use fails here, in one line.
    """
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as exc:
        raise BadInput(f"--nats-creds {path}: {exc.strerror}") from exc
    if "BEGIN NATS USER JWT" not in text or "BEGIN USER NKEY SEED" not in text:
        raise BadInput(f"--nats-creds {path} is not a NATS credentials file (a user JWT and seed)")
    return path


def _why(seen: list[Exception]) -> Exception:
    """The failure that says why a connection failed: the server's word over a reset socket.

    A server that refuses a client (a wrong password) says so, then closes: the reset may
    reach nats-py after the refusal.
    """
    said = [e for e in seen if isinstance(e, nats_errors.Error)]
    return (said or seen)[-1]


def _client() -> Any:
    from nats.aio.client import Client

    return Client()


def _tls_only_client() -> Any:
    """A nats-py client that refuses to send CONNECT (and its credentials) over plaintext.

    nats-py starts TLS only when the server's INFO asks for it, and builds CONNECT right before
    sending it, on every connection and reconnection: so the check goes there.
    """
    from nats.aio.client import Client

    class TlsOnly(Client):
        def _connect_command(self) -> bytes:
            writer = getattr(self._transport, "_io_writer", None)
            if writer is None or writer.get_extra_info("ssl_object") is None:
                raise NotTls
            return super()._connect_command()

    return TlsOnly()


def transient(exc: BaseException) -> bool:
    """Whether *exc* is what a leader election or a server going away causes: worth a retry."""
    from nats import errors
    from nats.js.errors import NoStreamResponseError, ServiceUnavailableError

    transient = (
        TimeoutError,  # nats-py's TimeoutError is asyncio's, and so the built-in
        errors.NoRespondersError,
        NoStreamResponseError,
        ServiceUnavailableError,
        errors.StaleConnectionError,
        errors.ConnectionReconnectingError,
        errors.OutboundBufferLimitError,
    )
    return isinstance(exc, transient)


def quiet(exc: BaseException, server: str) -> str:
    """An exception's text, with the server's credentials (if the URL has any) taken out."""
    text = str(exc) or type(exc).__name__
    secret = server.partition("://")[2].rpartition("@")[0]
    return text.replace(secret, "***") if secret else text


def _tls_context(ca: str | None) -> ssl.SSLContext:
    """A client context checking the server against *ca* (None: the system's CAs)."""
    try:
        return ssl.create_default_context(cafile=ca)
    except ssl.SSLError:
        raise BadInput(f"--nats-tls-ca {ca} holds no CA certificate in PEM form") from None
    except OSError as exc:
        raise BadInput(f"--nats-tls-ca {ca}: {exc.strerror}") from None
