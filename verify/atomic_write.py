"""Writes that cannot lose a file: every report, sample, plot, baseline and JUnit file goes through here.

A file is written to a temporary file in its own folder (``.<name>.semidp-<pid>-<random>.tmp<suffix>``),
flushed and ``fsync``-ed, then renamed over the target with :func:`os.replace` (atomic on POSIX and Windows
within one file system). A reader therefore sees the previous file or the new one, never a truncated one: a
full disk, an unwritable folder or a process killed mid-write (even by SIGKILL) leaves the previous file as it
was. A failed write raises :class:`WriteError` (a ``ValueError`` naming the path: exit 2, never a traceback).

Temporary files of processes that are no longer alive (killed mid-write) are removed by the next write to the
same folder (:func:`remove_stale_temporaries`).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from semidp.accountant.core.errors import ToolkitError

_TEMP = re.compile(r"^\..+\.semidp-(\d+)-[0-9a-f]+\.tmp")


class WriteError(ToolkitError, ValueError):
    """A file could not be written (no permission, a full disk, not a folder); the previous file is intact."""


def write_text(path: Path, text: str, *, what: str = "", parents: bool = False) -> Path:
    """Atomically write ``text`` (UTF-8) to ``path``; ``what`` names the option in the error (e.g. ``--junit``),
    ``parents``: create the missing folders."""
    return write_with(path, lambda f: f.write(text.encode("utf-8")), what=what, parents=parents)


def write_bytes(path: Path, data: bytes, *, what: str = "", parents: bool = False) -> Path:
    """Atomically write ``data`` to ``path`` (see :func:`write_text`)."""
    return write_with(path, lambda f: f.write(data), what=what, parents=parents)


def write_with(path: Path, fill: Callable[[IO[bytes]], object], *, what: str = "", parents: bool = False) -> Path:
    """Atomically write the file ``fill(binary_file)`` writes (e.g. ``lambda f: np.save(f, a)``) to ``path``."""
    path = Path(path)
    with atomic_path(path, what=what, parents=parents) as tmp, open(tmp, "wb") as f:
        fill(f)
        f.flush()
        os.fsync(f.fileno())
    return path


@contextlib.contextmanager
def atomic_path(path: Path, *, what: str = "", parents: bool = False) -> Iterator[Path]:
    """A temporary path next to ``path`` (same suffix) for a writer that wants a file name (e.g. ``savefig``).

    On leaving the block without an error the temporary file is ``fsync``-ed and renamed to ``path``; on an
    error it is removed and ``path`` keeps its previous content. ``OSError`` becomes :class:`WriteError`.
    """
    path = Path(path)
    folder = path.parent
    tmp = folder / f".{path.name}.semidp-{os.getpid()}-{secrets.token_hex(4)}.tmp{path.suffix}"
    try:
        if parents:
            folder.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(folder)
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        _sync_folder(folder)
    except OSError as e:
        _remove(tmp)
        raise WriteError(_message(path, e, what)) from None
    except BaseException:
        _remove(tmp)
        raise


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Remove the temporary files of our writers in ``folder`` whose process is gone; returns them."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        m = _TEMP.match(entry.name)
        if m and not _alive(int(m.group(1))):
            _remove(Path(entry.path))
            removed.append(Path(entry.path))
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. EPERM: it exists
        return True
    try:  # a zombie (killed, not yet reaped) is gone for our purpose
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _sync_folder(folder: Path) -> None:
    """Make the rename durable (POSIX); best effort where a folder cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove(p: Path) -> None:
    with contextlib.suppress(OSError):
        p.unlink()


def _message(path: Path, e: OSError, what: str) -> str:
    why = e.strerror or type(e).__name__
    prefix = f"{what} {str(path)!r}: " if what else ""
    return f"{prefix}cannot write {path}: {why}; the previous file (if any) is unchanged"


__all__ = ["WriteError", "atomic_path", "remove_stale_temporaries", "write_bytes", "write_text", "write_with"]
