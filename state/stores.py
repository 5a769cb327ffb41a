"""Choosing a board's store from a `--store` URL: the file log, or NATS JetStream."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

TYPE_CHECKING = False  # typing's import is a cost `paneboard post` does not pay
if TYPE_CHECKING:
    from paneboard.state.abc import Store


def check_url(url: str) -> str:
    """*url* if it names a store ("" is the file log); `BadInput` otherwise."""
    if url:
        from paneboard.state.natsurl import parse_url

        parse_url(url)  # every part checked before anything is written
    return url


def open_store(
    url: str, folder: Path, board: str, nats: Mapping[str, str], *, reconnect: bool = False
) -> Store:
    """The store *url* names ("": the file log in *folder*).

    A command fails at once when NATS is unreachable; a listener (*reconnect*) keeps trying.
    """
    if not url:
        from paneboard.state.filestore import FileStore

        return FileStore(folder)
    from paneboard.protocol.lazy import require_extra

    require_extra("nats", "nats", "a board on NATS (--store nats://…)")
    from paneboard.state.natsstore import NatsStore

    return NatsStore(
        url, board, creds=nats.get("creds"), tls_ca=nats.get("tls_ca"), reconnect=reconnect
    )


def store_options(url: str, nats: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The options naming this store on a command line (none for the file log)."""
    if not url:
        return ()
    return (("--store", url), *((f"--nats-{k.replace('_', '-')}", v) for k, v in nats.items()))


def store_environment(url: str, nats: Mapping[str, str]) -> dict[str, str]:
    """The environment naming this store for a paneboard process (none for the file log)."""
    if not url:
        return {}
    return {"PANEBOARD_STORE": url, **{f"PANEBOARD_NATS_{k.upper()}": v for k, v in nats.items()}}
