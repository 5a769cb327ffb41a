"""Each (home, agent)'s Ed25519 key pair, and the keys a home pins per board.

Files (the home is 0700; nothing here is written or read through a symbolic link)::

    HOME/.keys/AGENT.ed25519   0600: MAGIC, the 32-byte seed, the 32-byte public key
    HOME/BOARD/pins            0600: one ``AGENT FINGERPRINT [trusted]`` line per pin, appended

A key pair is made on the agent's first use of the home and never replaced here. It is
created whole or not at all: written to a temporary file opened ``O_EXCL|O_NOFOLLOW``,
then hard-linked to its name, which fails if anything (a file, a link) is already there.
Signing needs only the standard library (``protocol.ed25519``), so `paneboard post` does
not import ``cryptography``; verifying uses ``cryptography``.

A home's own agents' keys are its pins for those names, on every board, from the moment each
key is made (`own_keys`): nothing in a pins file stands for them. Any other name is pinned in
a board's pins file from its first signed post in log order (``pin_first``, by the reader that
reads it first: state/trust/verdicts.py), or by a person (``trust``, a line ending ``trusted``). The
last line for an agent is its pin. Appends are serialized by ``flock`` on the file.
"""

from __future__ import annotations

import fcntl
import functools
import os
import stat
from pathlib import Path

from paneboard.protocol import ed25519
from paneboard.protocol.errors import BadInput, BoardIOError
from paneboard.protocol.names import check_name
from paneboard.protocol.signing import fingerprint, is_fingerprint

KEYS_DIR = ".keys"
MAGIC = b"paneboard ed25519 v1\n"
_KEY_FILE_SIZE = len(MAGIC) + 64
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


class KeyPair:
    """One agent's signing key in one home."""

    __slots__ = ("public", "seed")

    def __init__(self, seed: bytes, public: bytes) -> None:
        self.seed, self.public = seed, public

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public)

    def sign(self, message: bytes) -> bytes:
        return ed25519.sign(self.seed, self.public, message)


def key_path(home: Path, agent: str) -> Path:
    return home / KEYS_DIR / f"{check_name('agent', agent)}.ed25519"


def open_key(home: Path, agent: str) -> KeyPair:
    """The agent's key pair in *home*, made (0600) on first use."""
    path = key_path(home, agent)
    _private_folder(path.parent)
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    seed = os.urandom(32)
    _create_whole(path, MAGIC + seed + ed25519.public_key(seed))
    return _read_key(path)  # another process may have made it first: its key is the key


def own_keys(home: Path) -> dict[str, str]:
    """agent -> fingerprint of every key made in *home* (its own agents); none makes a key."""
    folder = home / KEYS_DIR
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise BoardIOError(f"cannot read {folder}: {exc.strerror}") from exc
    suffix = ".ed25519"
    own = {}
    for name in sorted(names):
        agent = name[: -len(suffix)]
        if not name.endswith(suffix) or name.startswith("."):  # a key being made: not yet one
            continue
        try:
            check_name("agent", agent)
            own[agent] = _read_key(folder / name).fingerprint
        except (BadInput, FileNotFoundError):
            continue  # no agent's key file
    return own


def stamp(path: Path) -> tuple[int, ...]:
    """What changes when the file or folder *path* changes (empty when it is missing)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return ()
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _private_folder(folder: Path) -> None:
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(folder)
    except OSError as exc:
        raise BoardIOError(f"cannot create {folder}: {exc.strerror}") from exc
    if not stat.S_ISDIR(st.st_mode):
        raise BoardIOError(f"{folder} is not a folder (a symlink?); refusing to use it")
    if st.st_mode & 0o077:
        raise BoardIOError(f"{folder} is open to others (mode {st.st_mode & 0o777:o})")


def _read_key(path: Path) -> KeyPair:
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        raise
    except OSError as exc:  # ELOOP: the name is a symbolic link
        raise BoardIOError(f"key file {path} cannot be opened: {exc.strerror}") from exc
    try:
        st = os.fstat(fd)
        data = os.read(fd, _KEY_FILE_SIZE + 1)
    finally:
        os.close(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o077:
        raise BoardIOError(f"key file {path} must be a file readable only by its owner (0600)")
    if len(data) != _KEY_FILE_SIZE or not data.startswith(MAGIC):
        raise BoardIOError(f"key file {path} is damaged")
    return KeyPair(data[len(MAGIC) : len(MAGIC) + 32], data[len(MAGIC) + 32 :])


def _create_whole(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)  # left by a process of this pid that died mid-way
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path, follow_symlinks=False)
        except FileExistsError:
            pass
    except OSError as exc:
        raise BoardIOError(f"key file {path} cannot be made: {exc.strerror}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def verify(public: bytes, signature: bytes, message: bytes) -> bool:
    """Whether *signature* is *public*'s Ed25519 signature of *message* (``cryptography``), by a
    key only its owner signs for: a weak key (small order, or not canonical) verifies nothing,
    so no post signed by one is verified, and no such key is ever pinned."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if _weak(public):
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


@functools.lru_cache(maxsize=256)
def _weak(public: bytes) -> bool:
    """``ed25519.is_weak_key``, once per key (a board is signed by a few keys, many times over)."""
    return ed25519.is_weak_key(public)


class Pin:
    """An agent's pin on a board: its key's fingerprint, and whether a person pinned it
    (``trust``) rather than a reader, from the agent's first signed post in log order.
    (A plain class: `paneboard post` imports this module, and not ``typing``.)"""

    __slots__ = ("fingerprint", "trusted")

    def __init__(self, fingerprint: str, trusted: bool = False) -> None:
        self.fingerprint, self.trusted = fingerprint, trusted


class Pins:
    """The fingerprints one home pins for the agents of one board."""

    def __init__(self, board_dir: Path) -> None:
        self.path = board_dir / "pins"

    def read(self) -> dict[str, str]:
        """Every pinned agent and its fingerprint."""
        return {agent: pin.fingerprint for agent, pin in self.entries().items()}

    def entries(self) -> dict[str, Pin]:
        """Every pinned agent and its pin, in the order the agents were first pinned."""
        try:
            fd = os.open(self.path, os.O_RDONLY | _NOFOLLOW)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise BoardIOError(f"pins file {self.path} cannot be opened: {exc.strerror}") from exc
        with os.fdopen(fd, "rb") as f:
            return self._parse(f.read())

    def pin_first(self, agent: str, key_fingerprint: str) -> str:
        """The agent's pin: the one in force, else *key_fingerprint*, pinned now."""
        return self._append(agent, key_fingerprint, replace=False)[0]

    def pin_new(self, agent: str, key_fingerprint: str) -> tuple[str, bool]:
        """`pin_first`, and whether this call wrote the pin (no other process had)."""
        return self._append(agent, key_fingerprint, replace=False)

    def trust(self, agent: str, key_fingerprint: str) -> None:
        """Pin *key_fingerprint* for *agent* in place of any earlier pin (a person's decision)."""
        self._append(agent, key_fingerprint, replace=True)

    def _append(self, agent: str, key_fingerprint: str, *, replace: bool) -> tuple[str, bool]:
        check_name("agent", agent)
        if not is_fingerprint(key_fingerprint):
            raise BadInput(f"fingerprint {key_fingerprint!r} is not 26 of a-z 2-7")
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | _NOFOLLOW
        try:
            fd = os.open(self.path, flags, 0o600)
        except OSError as exc:
            raise BoardIOError(f"pins file {self.path} cannot be opened: {exc.strerror}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = _read_all(fd)
            current = self._parse(data).get(agent)
            if current is not None and not replace:
                return current.fingerprint, False
            end = data.rfind(b"\n") + 1  # a line torn by a crash is cut off first
            if end != len(data):
                os.ftruncate(fd, end)
            line = f"{agent} {key_fingerprint}{' trusted' if replace else ''}\n"
            os.write(fd, line.encode())
            os.fsync(fd)
            return key_fingerprint, True
        finally:
            os.close(fd)

    def _parse(self, data: bytes) -> dict[str, Pin]:
        pins = {}
        lines = data.split(b"\n")[:-1]  # the last piece has no newline: empty, or torn
        for number, line in enumerate(lines, 1):
            agent, _, rest = line.decode(errors="replace").partition(" ")
            value, _, how = rest.partition(" ")
            try:
                check_name("agent", agent)
            except BadInput:
                raise BoardIOError(f"pins file {self.path} line {number} is damaged") from None
            if not is_fingerprint(value) or how not in ("", "trusted"):
                raise BoardIOError(f"pins file {self.path} line {number} is damaged")
            pins[agent] = Pin(value, how == "trusted")  # the agent keeps its first place
        return pins


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)
