"""Writing files atomically: a reader sees the old file or the new one, never a part.

Every file the package writes (model files, plots, evaluation reports, benchmark tables)
goes through :func:`write_atomically`, so that an error or an interruption while writing
leaves what was there before.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

__all__ = ["write_atomically", "write_text_atomically"]


def write_atomically(path: str | os.PathLike[str], write: Callable[[IO[bytes]], object]) -> Path:
    """Write a file through ``write`` into a temporary file beside ``path``, then rename.

    The temporary file is flushed to disk before the rename, which replaces ``path`` in
    one step; the new file keeps the permissions of the file it replaces (else the
    umask's default). On any error the temporary file is removed and ``path`` is left
    as it was.

    Parameters
    ----------
    path : str or path-like
        The file to write; its directory must exist.
    write : callable
        Called once with the open binary file to fill.

    Returns
    -------
    path : Path
        The file written.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     target = write_atomically(pathlib.Path(folder) / "a.txt", lambda f: f.write(b"hi"))
    ...     target.read_bytes()
    b'hi'
    """
    path = Path(path)
    directory = path.parent
    mode = _new_file_mode(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_directory(directory)
    return path


def write_text_atomically(path: str | os.PathLike[str], text: str) -> Path:
    """:func:`write_atomically` for UTF-8 text."""
    return write_atomically(path, lambda file: file.write(text.encode("utf-8")))


def _new_file_mode(path: Path) -> int:
    """Permissions for the written file: the replaced file's, else the umask default
    (mkstemp creates files readable by their owner only)."""
    with contextlib.suppress(OSError):
        return stat.S_IMODE(path.stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable (POSIX); best effort, as some file systems refuse."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
