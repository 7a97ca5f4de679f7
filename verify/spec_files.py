"""Files a spec names, read confined to the spec's folder (contract: ``specs/README.md``, "Files a spec names").

Specs arrive in pull requests and ``semidp check`` runs them in other people's CI, so a file key
(``mechanism.measurements``, a recorded sample's ``x`` / ``x_prime``) is treated as hostile input:

* it resolves inside the spec's folder (symlinks followed, then checked): an absolute path, a ``..``
  escape or a symlink out of it is refused, unless ``--files-root DIR`` (:func:`files_root`) names
  a wider allowed folder; the resolved file is then opened by walking from the allowed folder's
  descriptor with ``O_NOFOLLOW`` on every component, so a folder swapped for a symlink after the
  check is refused, never followed (:func:`read_bytes`);
* only a regular file is read (never a FIFO, a device, a directory, or a file under ``/proc``,
  ``/sys`` or ``/dev``, whose sizes lie), and at most :data:`MAX_FILE_BYTES`;
* an error names the key and the file as the spec wrote it, never the file's content: a message
  about a cell shows at most :data:`EXCERPT_CHARS` characters of it, escaped (:func:`excerpt`).

Every refusal is a :class:`SpecFileRefused` (a :class:`ValueError`; exit 2 naming the key).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import BinaryIO

from semidp.accountant.core.errors import ToolkitError

#: The largest file a spec may name, in bytes (256 MiB): a measurements file or a recorded sample.
MAX_FILE_BYTES = 256 * 2**20
#: The most characters of a file's cell an error message shows (escaped, :func:`excerpt`).
EXCERPT_CHARS = 40
#: Pseudo-file systems whose files are never read (their sizes lie and their content is the machine's).
PSEUDO_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))

_ROOT: ContextVar[Path | None] = ContextVar("semidp_files_root", default=None)


class SpecFileRefused(ToolkitError, ValueError):
    """A file named by a spec key was not read: outside the allowed folder, not a regular file, too large,
    unreadable or not text. ``key`` is the spec key; the message names it and the file, never its content."""

    def __init__(self, key: str, name: str, why: str) -> None:
        self.key, self.why = key, why
        super().__init__(f"{key} = {excerpt(name)}: {why}")


@contextlib.contextmanager
def files_root(root: str | Path | None) -> Iterator[None]:
    """Within the block, spec files may lie anywhere under ``root`` (``--files-root DIR``); ``None``: the spec's
    folder only (the default)."""
    token = _ROOT.set(Path(root).resolve() if root is not None else None)
    try:
        yield
    finally:
        _ROOT.reset(token)


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` as an escaped Python literal of at most ``limit`` characters of it, ``...`` marking a cut.

    >>> excerpt("a,b")
    "'a,b'"
    >>> excerpt("x" * 50, 4)
    "'xxxx'..."
    >>> excerpt("\\x1b[2J")
    "'\\\\x1b[2J'"
    """
    return repr(text[:limit]) + ("..." if len(text) > limit else "")


def spec_folder(spec_path: str) -> Path:
    """The folder a spec's relative file names start from: the spec file's folder (the working directory for a
    spec given as text)."""
    return Path(spec_path).parent if spec_path not in ("", "<string>") else Path(".")


def resolve(spec_path: str, key: str, name: str) -> Path:
    """The file ``name`` of spec key ``key``, resolved (symlinks followed) and checked to lie in the allowed folder.

    The allowed folder is the spec's folder, or the ``--files-root`` folder (:func:`files_root`). An absolute
    ``name`` is allowed only with ``--files-root``. Raises :class:`SpecFileRefused`.
    """
    return _confined(spec_path, key, name)[1]


def _confined(spec_path: str, key: str, name: str) -> tuple[Path, Path]:
    """``(allowed folder, resolved target)`` of :func:`resolve`."""
    if not name or "\x00" in name:
        raise SpecFileRefused(key, name, "not a file name")
    root = _ROOT.get()
    given = Path(name)
    if given.is_absolute() and root is None:
        raise SpecFileRefused(
            key, name, "an absolute path; files must lie in the spec's folder (or pass --files-root DIR)"
        )
    base = spec_folder(spec_path).resolve()
    allowed = root if root is not None else base
    try:
        target = (base / given).resolve()
    except (OSError, RuntimeError):  # a symlink loop
        raise SpecFileRefused(key, name, "cannot be resolved (a symlink loop?)") from None
    if not target.is_relative_to(allowed):
        where = "the --files-root folder" if root is not None else "the spec's folder"
        raise SpecFileRefused(key, name, f"resolves outside {where} (through '..' or a symlink)")
    if any(target == p or target.is_relative_to(p) for p in PSEUDO_ROOTS):
        raise SpecFileRefused(key, name, "a file of /proc, /sys or /dev is never read")
    return allowed, target


def read_bytes(spec_path: str, key: str, name: str, *, max_bytes: int | None = None) -> bytes:
    """The content of the regular file named by spec key ``key``, confined to the allowed folder (:func:`resolve`).

    The check and the open are one: after :func:`resolve` the file is opened by walking from a descriptor of the
    allowed folder, one component at a time, each opened with ``O_NOFOLLOW`` (``os.open(..., dir_fd=)``), so a
    folder or file swapped for a symlink between the check and the open is refused, never followed out of the
    folder. Type and size are then checked on the open descriptor (:func:`read_regular`). Where ``dir_fd`` is
    not supported (Windows) the resolved path is opened as :func:`read_regular` does.
    """
    allowed, target = _confined(spec_path, key, name)
    if not _CAN_WALK:
        return read_regular(target, key, name, max_bytes=max_bytes)
    parts = target.relative_to(allowed).parts
    if not parts:
        raise SpecFileRefused(key, name, "not a regular file (a directory)")
    dir_flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(allowed, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise SpecFileRefused(key, name, f"cannot be read: {e.strerror or type(e).__name__}") from None
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, dir_flags, dir_fd=fd)
            except OSError as e:
                raise SpecFileRefused(key, name, _open_error(e, "a folder on its path")) from None
            os.close(fd)
            fd = nxt
        return _read_at(fd, parts[-1], key, name, MAX_FILE_BYTES if max_bytes is None else max_bytes)
    finally:
        os.close(fd)


#: Files are opened relative to a folder descriptor (POSIX ``openat``): :func:`read_bytes` walks the path.
_CAN_WALK = os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")


def _open_error(e: OSError, what: str) -> str:
    if e.errno in (errno.ELOOP, errno.ENOTDIR, getattr(errno, "EMLINK", -1)):
        return f"{what} became a symlink or changed while reading (refused, not followed)"
    return f"cannot be read: {e.strerror or type(e).__name__}"


def _read_at(dir_fd: int, leaf: str, key: str, name: str, limit: int) -> bytes:
    """The regular file ``leaf`` of the folder ``dir_fd``: type checked before opening (a FIFO or a device can
    block or act when opened), opened without following a symlink and without blocking, checked again on the
    descriptor, and read up to ``limit`` bytes."""
    try:
        mode = os.stat(leaf, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError as e:
        raise SpecFileRefused(key, name, f"cannot be read: {e.strerror or type(e).__name__}") from None
    if stat.S_ISLNK(mode):
        raise SpecFileRefused(key, name, "became a symlink or changed while reading (refused, not followed)")
    if not stat.S_ISREG(mode):
        raise SpecFileRefused(key, name, f"not a regular file ({_file_type(mode)})")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(leaf, flags, dir_fd=dir_fd)
    except OSError as e:
        raise SpecFileRefused(key, name, _open_error(e, "the file")) from None
    with os.fdopen(fd, "rb") as f:
        return _read_checked(f, key, name, limit)


def read_regular(target: Path, key: str, name: str, *, max_bytes: int | None = None) -> bytes:
    """The content of ``target`` if it is a regular file of at most ``max_bytes`` bytes (default :data:`MAX_FILE_BYTES`; no confinement: for a
    file the user named, such as the spec itself; spec keys go through :func:`read_bytes`).

    The type is checked before opening (opening a device or a FIFO can act or block), the file is opened
    without following a final symlink and without blocking, and type and size are checked again on the open
    descriptor. Raises :class:`SpecFileRefused` naming ``key`` and ``name``.
    """
    limit = MAX_FILE_BYTES if max_bytes is None else max_bytes
    try:
        mode = os.stat(target).st_mode
    except OSError as e:
        raise SpecFileRefused(key, name, f"cannot be read: {e.strerror or type(e).__name__}") from None
    if not stat.S_ISREG(mode):
        raise SpecFileRefused(key, name, f"not a regular file ({_file_type(mode)})")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(target, flags)
    except OSError as e:
        why = "a symlink changed while reading" if e.errno == errno.ELOOP else (e.strerror or type(e).__name__)
        raise SpecFileRefused(key, name, f"cannot be read: {why}") from None
    with os.fdopen(fd, "rb") as f:
        return _read_checked(f, key, name, limit)


def _read_checked(f: BinaryIO, key: str, name: str, limit: int) -> bytes:
    """The content of the open file ``f`` if its descriptor is a regular file of at most ``limit`` bytes."""
    st = os.fstat(f.fileno())
    if not stat.S_ISREG(st.st_mode):
        raise SpecFileRefused(key, name, f"not a regular file ({_file_type(st.st_mode)})")
    if st.st_size > limit:
        raise SpecFileRefused(key, name, f"{st.st_size} bytes; the limit is {limit} bytes")
    try:
        data = f.read(limit + 1)
    except OSError as e:
        raise SpecFileRefused(key, name, f"cannot be read: {e.strerror or type(e).__name__}") from None
    if len(data) > limit:
        raise SpecFileRefused(key, name, f"more than {limit} bytes, the limit")
    return data


def decode_text(data: bytes, key: str, name: str) -> str:
    """``data`` decoded as UTF-8 (a leading byte-order mark dropped); a byte that is not UTF-8 is refused with its
    line and byte offset, never shown."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise SpecFileRefused(key, name, f"line {line}, byte {e.start}: not UTF-8 text (save it as UTF-8)") from None


def read_text(spec_path: str, key: str, name: str, *, max_bytes: int | None = None) -> str:
    """:func:`read_bytes` decoded by :func:`decode_text`."""
    return decode_text(read_bytes(spec_path, key, name, max_bytes=max_bytes), key, name)


def _file_type(mode: int) -> str:
    for test, noun in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return noun
    return "not a regular file"


__all__ = [
    "EXCERPT_CHARS",
    "MAX_FILE_BYTES",
    "SpecFileRefused",
    "excerpt",
    "decode_text",
    "files_root",
    "read_bytes",
    "read_regular",
    "read_text",
    "resolve",
    "spec_folder",
]
