"""Choosing a board's store from a `--store` URL: the file log, or NATS JetStream.

A NATS URL's secret (``USER:PASSWORD@`` or ``TOKEN@``) is given once: a command that connects
with it keeps it in the home's `SECRETS` file (0600, never followed through a link), keyed by
the URL's servers, and every command names only the URL without it. Composed texts, hook
files, command lines and messages carry that secret-free URL and the home, where a later
command finds the secret. `--nats-creds FILE` is the other way.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

TYPE_CHECKING = False  # typing's import is a cost `paneboard post` does not pay
if TYPE_CHECKING:
    from paneboard.state.abc import Store
    from paneboard.state.trust.sealing import Sealer


SECRETS = ".nats-secrets"  # in the home: a board's name never starts with "."


def check_url(url: str) -> str:
    """*url* if it names a store ("" is the file log); `BadInput` otherwise."""
    if url:
        from paneboard.state.nats.url import parse_url

        parse_url(url)  # every part checked before anything is written
    return url


def open_store(
    url: str,
    folder: Path,
    board: str,
    nats: Mapping[str, str],
    *,
    sealer: Sealer | None,
    reconnect: bool = False,
) -> Store:
    """The store *url* names ("": the file log in *folder*), sealing every post it appends
    with *sealer* (asked of every caller: None appends the bytes as given).

    A command fails at once when NATS is unreachable; a listener (*reconnect*) keeps trying.
    """
    if not url:
        from paneboard.state.filelog.store import FileStore

        return FileStore(folder, sealer)
    from paneboard.protocol.lazy import require_extra

    require_extra("nats", "nats", "a board on NATS (--store nats://…)")
    from paneboard.state.nats.store import NatsStore

    return NatsStore(
        url,
        board,
        creds=nats.get("creds"),
        tls_ca=nats.get("tls_ca"),
        reconnect=reconnect,
        sealer=sealer,
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


def split_secret(url: str) -> tuple[str, str]:
    """*url* without its secret, and the secret ("" for none, and for the file log)."""
    if not url:
        return "", ""
    from paneboard.state.nats.url import split_secret

    return split_secret(url)


def refuse_secret(url: str | None) -> None:
    """`BadInput` if *url* holds a secret, which `hook install` would write into project files."""
    if url and split_secret(url)[1]:
        from paneboard.protocol.errors import BadInput
        from paneboard.state.nats.url import shown

        raise BadInput(
            f"--store holds a password or token, which hooks would write into project files and "
            f"command lines: connect once with it (PANEBOARD_STORE=URL paneboard doctor) to "
            f"keep it in the home's {SECRETS} (0600), or use --nats-creds FILE; then install "
            f"with --store {shown(url)}"
        )


def connect_url(home: Path, url: str, secret: str) -> str:
    """The URL to connect with: *url* with *secret*, or with the one kept for its servers."""
    if not url:
        return url
    from paneboard.state.nats.url import with_secret

    return with_secret(url, secret or recall_secret(home, url))


def recall_secret(home: Path, url: str) -> str:
    """The secret kept in *home* for the servers of *url* ("" if none is)."""
    return _read_secrets(home).get(_servers(url), "")


def remember_secret(home: Path, url: str, secret: str) -> None:
    """Keep *secret* in *home* for the servers of *url*: a new 0600 file renamed over the old."""
    import json
    import os
    import tempfile

    kept = _read_secrets(home)
    if kept.get(_servers(url)) == secret:
        return
    kept[_servers(url)] = secret
    fd, temporary = tempfile.mkstemp(prefix=f"{SECRETS}.", dir=home)  # 0600, O_EXCL|O_NOFOLLOW
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(json.dumps(kept, indent=1, sort_keys=True).encode())
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, home / SECRETS)  # replaces a link itself, never its target
    except BaseException:
        os.unlink(temporary)
        raise


def _servers(url: str) -> str:
    from paneboard.state.nats.url import parse_url

    return parse_url(url).shown


def _read_secrets(home: Path) -> dict[str, str]:
    """The home's secrets; `BadInput` for a file that is a link, not ours, or readable by others."""
    import errno
    import json
    import os

    from paneboard.protocol.errors import BadInput

    path = home / SECRETS
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BadInput(f"{path} is a symbolic link, not a secrets file") from exc
        raise BadInput(f"{path} cannot be read: {exc.strerror}") from exc
    with os.fdopen(fd, "rb") as file:
        st = os.fstat(file.fileno())
        if st.st_uid != os.getuid() or st.st_mode & 0o077:
            mode = f"mode {st.st_mode & 0o777:o}, owner uid {st.st_uid}"
            raise BadInput(f"{path} must be yours and 0600 ({mode}): chmod 600 {path}")
        try:
            kept = json.loads(file.read())
        except ValueError:
            kept = None
    if not isinstance(kept, dict) or not all(isinstance(v, str) for v in kept.values()):
        raise BadInput(f"{path} is not a JSON object of secrets")
    return kept


def exposure(home: Path, url: str, secret: str, nats: Mapping[str, str]) -> str:
    """What a plaintext store off this machine exposes ("" for none: the file log, loopback,
    or TLS with credentials), for `doctor`."""
    if not url:
        return ""
    from paneboard.state.nats.url import parse_url

    address = parse_url(url)
    remote = [s for s in address.servers if not _loopback(s)]
    if not remote:
        return ""
    signed_in = bool(nats.get("creds") or secret or recall_secret(home, url))
    plain = url.startswith("nats://") and not nats.get("tls_ca")
    if not signed_in:
        return (
            f"{address.shown}: no credentials on a server off this machine: any client that "
            f"reaches it reads, forges and answers every post (docs/machines.md: accounts, TLS)"
        )
    if plain:
        return (
            f"{address.shown}: plaintext to a server off this machine: credentials and posts "
            f"cross the network in clear (tls:// and --nats-tls-ca; docs/machines.md)"
        )
    return ""


def _loopback(server: str) -> bool:
    """Whether *server* (``SCHEME://[SECRET@]HOST[:PORT]``) is this machine's loopback."""
    import ipaddress

    host = server.partition("://")[2].rpartition("@")[2]
    if host.startswith("["):
        host = host[1 : host.find("]")]
    elif host.count(":") == 1:
        host = host.partition(":")[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name: not known to be this machine
        return False


def shown_word(word: str) -> str:
    """A command-line word as messages show it: a store URL without its secret."""
    if "://" not in word:
        return word
    from paneboard.state.nats.url import shown

    return shown(word)
