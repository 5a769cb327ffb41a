"""Files of the user's own configuration, outside every project and the home (Codex's
`$CODEX_HOME/config.toml`): written through the user's own link, never through another's.

A dotfiles manager (GNU Stow, chezmoi's symlink mode, home-manager) keeps such a file as a
symbolic link into a folder of the user's. That link is the user's choice, so a write follows
it, one link and no further, when all of these hold, and is refused (`BadInput`, naming which
does not) otherwise:

- the folder holding the link is the user's, and nobody else can write it;
- the link is the user's;
- it points to a regular file (not another link, a folder or a FIFO), which is the user's;
- in a folder that is the user's, and nobody else can write.

The file it points to is then written atomically in its own folder (a new temporary renamed
over it, keeping its permissions), and the link stays as it was. The folder holding the file
may be such a link too (Stow folds a package into one link when the folder is new): it is
followed on the same terms, to a folder that is the user's and nobody else can write. A file
that is no link is written as `files.write_atomic` writes it. A project's files and the
home's keep refusing every link: a cloned repository's links are nobody's choice. Standard
library only.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from paneboard.protocol.errors import BadInput
from paneboard.state.files import open_folder, replace_in

_FOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NOFOLLOW_DIR = _FOLLOW_DIR | os.O_NOFOLLOW
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


def own_target(path: Path) -> Path:
    """The file a write of *path* goes to: *path* itself (a regular file, or none yet), or the
    file its link points to; `BadInput` naming why a write would be refused. Writes nothing."""
    dfd, target = _open_target(path)
    os.close(dfd)
    return target


def write_own(path: Path, data: bytes, *, mode: int = 0o600) -> Path:
    """Replace the file *path* names (itself, or through the user's own link: `own_target`)
    with *data*, atomically; it keeps its permissions (*mode* when new). Returns the file
    written."""
    dfd, target = _open_target(path)
    try:
        st = _lstat(target.name, dfd)
        kept = stat.S_IMODE(st.st_mode) if st is not None else mode
        replace_in(dfd, target, data, kept, exact=st is not None)
    finally:
        os.close(dfd)
    return target


def read_own(path: Path) -> bytes | None:
    """The whole file *path* names, through links (reading the user's own file is harmless
    wherever it lives; a write of it is checked by `write_own`); None where there is none;
    `BadInput` for one that is not a regular file (a FIFO never blocks the reader)."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            own_target(path)  # a link: refused, naming why, as a write would be
            raise BadInput(f"{path} is not a regular file; nothing was changed")
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read()
    finally:
        os.close(fd)


def _open_target(path: Path) -> tuple[int, Path]:
    """The folder (a descriptor) and path of the file a write of *path* replaces, checked."""
    dfd, folder = _open_own_folder(path.parent)
    try:
        st = _lstat(path.name, dfd)
        if st is None or stat.S_ISREG(st.st_mode):
            return os.dup(dfd), folder / path.name
        if not stat.S_ISLNK(st.st_mode):
            raise BadInput(f"{path} is not a regular file; nothing written")
        to = _pointed(folder, os.readlink(path.name, dir_fd=dfd))
        _check_link(path, to, st, dfd, folder)
    finally:
        os.close(dfd)
    return _open_linked(path, to), to


def _check_link(link: Path, to: Path, st: os.stat_result, dfd: int, folder: Path) -> None:
    """Refuse the link *link* (its lstat *st*) to *to* unless its folder *folder* (open as
    *dfd*) is private and the link is the user's."""
    if why := _not_private(dfd, f"the link's folder {folder}"):
        raise _refused(link, to, why)
    if st.st_uid != os.geteuid():
        raise _refused(link, to, f"the link is uid {st.st_uid}'s, not yours")


def _open_own_folder(folder: Path) -> tuple[int, Path]:
    """The folder a file of the user's is in: *folder*, or the folder it links to (a dotfiles
    package a manager folded into one link), checked as the link of a file is."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        st = None
    if st is None or not stat.S_ISLNK(st.st_mode):
        return open_folder(folder), folder
    pfd = os.open(folder.parent, _FOLLOW_DIR)
    try:
        to = _pointed(folder.parent, os.readlink(folder.name, dir_fd=pfd))
        _check_link(folder, to, st, pfd, folder.parent)
    finally:
        os.close(pfd)
    try:
        tfd = os.open(to, _NOFOLLOW_DIR)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            raise
        raise _refused(folder, to, f"{to} {_not_a_folder(to)}") from None
    if why := _not_private(tfd, str(to)):
        os.close(tfd)
        raise _refused(folder, to, why)
    return tfd, to


def _not_a_folder(path: Path) -> str:
    """What *path*, which could not be opened as a folder without following a link, is."""
    try:
        st = os.lstat(path)
    except OSError:
        return "does not exist"
    return (
        "is another link (paneboard follows one)" if stat.S_ISLNK(st.st_mode) else "is not a folder"
    )


def _pointed(folder: Path, link: str) -> Path:
    """Where *link*, read from a link in *folder*, points: from the folder's real path, so
    that a `..` in it goes where the kernel's does."""
    return Path(os.path.normpath(Path(os.path.realpath(folder)) / link))


def _open_linked(path: Path, to: Path) -> int:
    """The folder of *to*, the file *path* links to, once both are the user's own."""
    try:
        tfd = os.open(to.parent, _FOLLOW_DIR)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            raise
        raise _refused(path, to, f"{to} does not exist") from None
    try:
        st = _lstat(to.name, tfd) if to.name else None
        if st is None:
            raise _refused(path, to, f"{to} does not exist")
        if stat.S_ISLNK(st.st_mode):
            raise _refused(path, to, f"{to} is another link (paneboard follows one)")
        if not stat.S_ISREG(st.st_mode):
            raise _refused(path, to, f"{to} is not a regular file")
        if st.st_uid != os.geteuid():
            raise _refused(path, to, f"{to} is uid {st.st_uid}'s, not yours")
        if why := _not_private(tfd, f"its folder {to.parent}"):
            raise _refused(path, to, why)
    except BaseException:
        os.close(tfd)
        raise
    return tfd


def _lstat(name: str, dfd: int) -> os.stat_result | None:
    try:
        return os.lstat(name, dir_fd=dfd)
    except FileNotFoundError:
        return None


def _not_private(dfd: int, what: str) -> str | None:
    """Why the folder *dfd* is not the user's alone to write (None when it is)."""
    st = os.fstat(dfd)
    if st.st_uid != os.geteuid():
        return f"{what} is uid {st.st_uid}'s, not yours"
    if st.st_mode & 0o022:
        return f"others can write {what} (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _refused(path: Path, to: Path, why: str) -> BadInput:
    return BadInput(
        f"{path} is a symlink to {to}, and {why}; paneboard does not write through it, "
        "nothing written"
    )
