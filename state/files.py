"""Small files written whole (a temporary file beside the target, renamed over it), and read
without following a link.

Nothing is written through a link: the temporary is a new random name opened
``O_CREAT|O_EXCL|O_NOFOLLOW`` in the target's folder, and a target or folder that is a
symlink is refused (`BadInput`). Nothing is read through one either: `read_private` takes a
link or a special file for no file, `read_owned` (a file that decides something, such as a
policy) refuses it, and a file of another user's (`BoardIOError`). Standard library only
(`paneboard post` writes its tally through it). The user's own configuration, outside projects
and the home, follows the user's own links: `ownfiles`.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from paneboard.protocol.errors import BadInput, BoardIOError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_TMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def write_atomic(
    path: Path,
    data: bytes,
    *,
    mode: int = 0o600,
    durable: bool = False,
    root: Path | None = None,
    folder_mode: int = 0o755,
) -> None:
    """Replace *path* with *data*: readers see the old file or the new one, never a part.

    The file gets *mode* (less the umask). With *root* (a project), the folders from *root*
    down to the file's are created *folder_mode* where missing, and none may be a symlink;
    without it, the file's own folder must exist and not be a symlink. A target that is a
    symlink is refused. With *durable*, the data and the rename are on disk before this
    returns.
    """
    dfd = open_folder(path.parent, root=root, mode=folder_mode)
    try:
        refuse_link(path, dfd)
        replace_in(dfd, path, data, mode, durable=durable)
    finally:
        os.close(dfd)


def replace_in(
    dfd: int, path: Path, data: bytes, mode: int, *, durable: bool = False, exact: bool = False
) -> None:
    """Replace the entry `path.name` of the open folder *dfd* with *data*, through a new
    temporary beside it; the file gets *mode* less the umask, or *mode* itself when *exact*."""
    tmp, fd = _create_temp(dfd, path, mode)
    try:
        if exact:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path.name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        _unlink(tmp, dfd)
        raise
    if durable:
        os.fsync(dfd)


def _create_temp(dfd: int, path: Path, mode: int) -> tuple[str, int]:
    """A new file with a random name beside *path* (never an existing name or a link)."""
    for _ in range(100):
        name = f".{path.name}.{os.urandom(6).hex()}.tmp"
        try:
            return name, os.open(name, _TMP_FLAGS, mode, dir_fd=dfd)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def _unlink(name: str, dfd: int) -> None:
    try:
        os.unlink(name, dir_fd=dfd)
    except FileNotFoundError:
        pass


def refuse_link(path: Path, dfd: int | None = None) -> None:
    """`BadInput` if *path* is a symlink (a missing file is fine)."""
    try:
        st = os.lstat(path.name if dfd is not None else path, dir_fd=dfd)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise BadInput(f"{path} is a symlink; paneboard does not write through it, nothing written")


def refuse_links(path: Path, root: Path) -> None:
    """`BadInput` naming the first of *path*'s folders below *root*, or *path*, that is a
    symlink: checked before a command writes anything."""
    here = root
    for part in path.relative_to(root).parts:
        here = here / part
        refuse_link(here)


def open_folder(folder: Path, *, root: Path | None = None, mode: int = 0o755) -> int:
    """A file descriptor of *folder*, opened without following a link (`BadInput` if one is).

    With *root*, each folder below *root* is created *mode* when missing and checked.
    """
    if root is None:
        return _open_dir(folder, None, folder)
    try:
        parts = folder.relative_to(root).parts
    except ValueError:
        raise BadInput(f"{folder} is not inside {root}; nothing written") from None
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    here = root
    for part in parts:
        here = here / part
        try:
            try:
                os.mkdir(part, mode, dir_fd=fd)
            except FileExistsError:
                pass
            nxt = _open_dir(here, fd, part)
        finally:
            os.close(fd)
        fd = nxt
    return fd


def _open_dir(folder: Path, dfd: int | None, name: str | Path) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dfd)
    except OSError:
        st = _lstat(name, dfd)
        if st is not None and stat.S_ISLNK(st.st_mode):
            why = "is a symlink; paneboard does not write through it"
            raise BadInput(f"{folder} {why}, nothing written") from None
        if st is not None and not stat.S_ISDIR(st.st_mode):
            raise BadInput(f"{folder} is not a folder; nothing written") from None
        raise


def _lstat(name: str | Path, dfd: int | None) -> os.stat_result | None:
    try:
        return os.lstat(name, dir_fd=dfd)
    except OSError:
        return None


def sync_dir(folder: Path) -> None:
    """Make a folder's entries (a new or renamed file) durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_private(path: Path, limit: int = 1 << 20) -> bytes | None:
    """The first *limit* bytes of the regular file at *path*; None where there is none: it is
    missing, a symlink (never followed), or not a regular file (a FIFO never blocks the reader)."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read(limit)
    finally:
        os.close(fd)


def read_owned(path: Path, what: str, limit: int = 1 << 20) -> bytes | None:
    """The first *limit* bytes of the regular file at *path*, this user's and writable by no
    one else; None only where it is missing. Anything else at *path* (a symlink, never
    followed; a FIFO or other special file, never blocked on; a file of another user's, or one
    others may write) is `BoardIOError` naming *what* and why: a file that says who may do what
    is never read as absent."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        why = "is a symlink" if exc.errno == errno.ELOOP else f"cannot be read ({exc.strerror})"
        raise BoardIOError(f"{what} {path} {why}; fix or remove it") from None
    try:
        wrong = _not_owned(os.fstat(fd))
        if wrong is not None:
            raise BoardIOError(f"{what} {path} {wrong}; fix or remove it")
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read(limit)
    finally:
        os.close(fd)


def _not_owned(st: os.stat_result) -> str | None:
    """Why a file with status *st* is no private file of this user's; None if it is one."""
    if not stat.S_ISREG(st.st_mode):
        kinds = {stat.S_IFIFO: "a FIFO", stat.S_IFDIR: "a folder", stat.S_IFSOCK: "a socket"}
        return f"is {kinds.get(stat.S_IFMT(st.st_mode), 'not a regular file')}"
    if st.st_uid != os.geteuid():
        return f"belongs to uid {st.st_uid}, not to this user (uid {os.geteuid()})"
    if st.st_mode & 0o022:
        return f"can be written by others (mode {stat.S_IMODE(st.st_mode):o})"
    return None
