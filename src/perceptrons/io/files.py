"""Writing files atomically, and checking output paths before the work that fills them.

Every file the package writes (model files, plots, evaluation reports, benchmark tables)
goes through :func:`write_atomically`, so that an error or an interruption while writing
leaves what was there before. :func:`check_output_path` tells, before a long training
run, whether its output can be written at all, and refuses an output that is one of the
inputs (``perceptrons train data.svm -o data.svm`` would replace the data by the model).

What an output path may be
--------------------------
- A regular file, or a name that does not exist yet: written to a temporary file in the
  same directory, flushed to disk, then renamed over the name in one step.
- A symbolic link: followed. The file it points to is replaced atomically as above and
  the link itself stays (``ln -s models/v3.npz current.npz`` keeps pointing there); a
  link to a stream (below) writes to the stream.
- A character device or a FIFO (``/dev/null``, ``/dev/stdout``, a terminal, a named pipe
  or bash's ``>(command)``): a stream, written in place, with no temporary file and no
  rename (a rename would replace the device node with a regular file). The content is
  made in memory first and written once it is complete.
- Anything else that exists (a directory, a socket, a block device) is refused with an
  :class:`OutputPathError`, before anything is written.

Temporary files
---------------
They are named ``.{name}.{pid}.{random}.tmp`` beside the target; where that would be
longer than the directory's limit on a name (255 bytes on most file systems), ``{name}``
is cut and ends in ``~`` and a digest of the whole name, so that any name the directory
accepts can be written. An error, Ctrl-C
(``SIGINT``), ``SIGTERM`` or ``SIGHUP`` during the write removes the temporary file (for
the signals, then the process ends as the signal would have ended it, when their
handling was the default one); a ``SIGKILL`` or a power cut cannot, so the next write to
the same target removes the temporary files of that target left by processes that are
no longer running, or older than :data:`STALE_SECONDS`.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO

from perceptrons.io._signals import cleanup_on_signals

__all__ = [
    "STALE_SECONDS",
    "OutputPathError",
    "check_output_path",
    "check_output_paths",
    "remove_stale_temporaries",
    "write_atomically",
    "write_text_atomically",
]

#: A temporary file of a target older than this (seconds since its last write) is
#: stale whoever made it: removed by the next write to that target.
STALE_SECONDS = 3600.0


class OutputPathError(OSError):
    """An output path that cannot or must not be written (one line, naming the path)."""


# ------------------------------------------------------------------- path checks
def _is_stream(mode: int) -> bool:
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _describe(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def _stat(path: str | os.PathLike[str]) -> os.stat_result | None:
    """``os.stat`` (links followed), None when nothing is there (or a dangling link)."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def check_output_path(
    path: str | os.PathLike[str],
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    *,
    make_parents: bool = False,
) -> Path:
    """Check, before any work, that ``path`` can be written and is none of ``inputs``.

    Parameters
    ----------
    path : str or path-like
        The output (see the module documentation for what it may be).
    inputs : iterable of str, path-like or None
        Files the same run reads; ``None``, ``"-"`` (standard input) and names that do
        not exist are skipped. Compared by device and inode, so a hard link, a symbolic
        link or another spelling (``./data.svm``) of an input is caught.
    make_parents : bool, default=False
        Whether the writer creates missing directories (the plots do): then the nearest
        existing one must be writable; else the output's directory must exist.

    Returns
    -------
    path : Path
        ``path``, unchanged.

    Raises
    ------
    OutputPathError
        With one line naming the path: it is an input, a directory or another thing
        that is not a file, its directory is missing or not writable.
    """
    path = Path(path)
    found = _stat(path)
    if found is not None:
        for source in inputs:
            if source is None or os.fspath(source) == "-":
                continue
            other = _stat(source)
            if other is not None and (other.st_dev, other.st_ino) == (
                found.st_dev,
                found.st_ino,
            ):
                raise OutputPathError(
                    f"{path}: the output is the input file {source}; writing it would "
                    "destroy the input (choose another output name)"
                )
        if _is_stream(found.st_mode):
            return path  # written in place: no temporary file, no rename
        if not stat.S_ISREG(found.st_mode):
            raise OutputPathError(f"{path}: is {_describe(found.st_mode)}, not a file name")
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    directory = target.parent
    if make_parents:
        while not directory.exists() and directory != directory.parent:
            directory = directory.parent
    if not directory.is_dir():
        missing = "is not a directory" if directory.exists() else "does not exist"
        raise OutputPathError(f"{path}: {directory} {missing}")
    problem: str | None = None
    if not os.access(directory, os.W_OK | os.X_OK):
        problem = "permission denied"
    else:  # os.access does not know every reason (read-only mounts for root, quotas...)
        try:
            fd, probe = tempfile.mkstemp(
                prefix=_temporary_prefix(target), suffix=".tmp", dir=directory
            )
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            problem = exc.strerror or type(exc).__name__
    if problem is not None:
        raise OutputPathError(f"{path}: cannot write in the directory {directory}: {problem}")
    return path


def check_output_paths(
    outputs: Iterable[str | os.PathLike[str] | None],
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    *,
    make_parents: bool = False,
) -> list[Path]:
    """:func:`check_output_path` for several outputs of one run, which must also differ.

    Parameters
    ----------
    outputs : iterable of str, path-like or None
        The files the run writes (``None`` skipped).
    inputs : iterable of str, path-like or None
        The files it reads.
    make_parents : bool, default=False
        As for :func:`check_output_path`.

    Returns
    -------
    list of Path
        The outputs checked.

    Raises
    ------
    OutputPathError
        As :func:`check_output_path`, or two outputs are one file (the second write
        would replace the first).
    """
    inputs = list(inputs)
    checked: list[Path] = []
    seen: dict[str, Path] = {}
    for output in outputs:
        if output is None:
            continue
        path = check_output_path(output, inputs, make_parents=make_parents)
        found = _stat(path)
        if found is not None and _is_stream(found.st_mode):
            checked.append(path)  # /dev/null twice is fine
            continue
        key = os.path.realpath(path)
        if key in seen:
            raise OutputPathError(
                f"{path}: written twice in one run (also as {seen[key]}): choose two names"
            )
        seen[key] = path
        checked.append(path)
    return checked


# ---------------------------------------------------------------- temporary files
# What a temporary name adds to its stem: ".", "." the process id (up to 10 digits),
# "." mkstemp's 8 random characters, ".tmp".
_TEMPORARY_OVERHEAD = 1 + 1 + 10 + 1 + 8 + 4
_DEFAULT_NAME_MAX = 255


def _temporary_stem(target: Path) -> str:
    """What names the temporary files of ``target``: its name, or, where the temporary
    name would not fit the directory's limit on names, the name cut short, ``~`` and a
    digest of the whole name (the same for every process, so that stale ones are found)."""
    name = target.name
    try:
        name_max = os.pathconf(target.parent if str(target.parent) else ".", "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # no such directory, not POSIX
        name_max = _DEFAULT_NAME_MAX
    room = (name_max if name_max and name_max > 0 else _DEFAULT_NAME_MAX) - _TEMPORARY_OVERHEAD
    if len(os.fsencode(name)) <= room:
        return name
    digest = "~" + hashlib.sha256(os.fsencode(name)).hexdigest()[:12]
    cut = name[:room]  # characters take one byte or more
    while cut and len(os.fsencode(cut + digest)) > room:
        cut = cut[:-1]
    return cut + digest


def _temporary_prefix(target: Path) -> str:
    """``.{stem}.{pid}.``: what :func:`tempfile.mkstemp` starts a temporary name with."""
    return f".{_temporary_stem(target)}.{os.getpid()}."


def _temporary_pattern(target: Path) -> re.Pattern[str]:
    """Temporary files of ``target``: ``.STEM.PID.RANDOM.tmp`` (and, from older
    versions, ``.STEM.RANDOM.tmp``)."""
    stem = re.escape(_temporary_stem(target))
    return re.compile(rf"\.{stem}\.(?:(\d+)\.)?[A-Za-z0-9_]+\.tmp")


def _process_gone(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError, ValueError):
        return False  # someone else's process is running under that number
    except OSError:
        return False
    return False


def remove_stale_temporaries(
    path: str | os.PathLike[str], *, older_than: float = STALE_SECONDS
) -> list[Path]:
    """Remove the temporary files an interrupted write to ``path`` left behind.

    A temporary file of ``path`` (``.{name}.{pid}.*.tmp`` in its directory) is removed
    when the process ``pid`` no longer runs on this machine, or when it was last
    written more than ``older_than`` seconds ago (also for names without a process id,
    from older versions). :func:`write_atomically` calls this before every write.

    Parameters
    ----------
    path : str or path-like
        The target whose temporary files are looked for.
    older_than : float, default=STALE_SECONDS
        Age in seconds past which any temporary file of the target is stale.

    Returns
    -------
    list of Path
        The files removed.
    """
    path = Path(path)
    pattern = _temporary_pattern(path)
    removed = []
    now = time.time()
    try:
        entries = list(os.scandir(path.parent if str(path.parent) else "."))
    except OSError:
        return []
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        pid = match.group(1)
        stale = now - info.st_mtime > older_than or (pid is not None and _process_gone(int(pid)))
        if stale:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


# ------------------------------------------------------------------------ writers
def write_atomically(path: str | os.PathLike[str], write: Callable[[IO[bytes]], object]) -> Path:
    """Write a file through ``write`` into a temporary file beside ``path``, then rename.

    The temporary file is flushed to disk before the rename, which replaces ``path`` in
    one step; the new file keeps the permissions of the file it replaces (else the
    umask's default). On any error, and on SIGINT, SIGTERM or SIGHUP, the temporary
    file is removed and ``path`` is left as it was. A symbolic link is followed (its
    target is replaced; the link stays), a character device or FIFO is written in place
    (``/dev/null`` stays a device), and anything else that is not a regular file is
    refused: see the module documentation. Temporary files that earlier, killed writes
    to ``path`` left are removed first (:func:`remove_stale_temporaries`).

    Parameters
    ----------
    path : str or path-like
        The file to write; its directory must exist.
    write : callable
        Called once with the open binary file to fill.

    Returns
    -------
    path : Path
        The file written (``path`` as given).

    Raises
    ------
    OutputPathError
        ``path`` is a directory, a socket or a block device.
    OSError
        The file cannot be written.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     target = write_atomically(pathlib.Path(folder) / "a.txt", lambda f: f.write(b"hi"))
    ...     target.read_bytes()
    b'hi'
    """
    path = Path(path)
    found = _stat(path)
    if found is not None and not stat.S_ISREG(found.st_mode):
        if not _is_stream(found.st_mode):
            raise OutputPathError(f"{path}: is {_describe(found.st_mode)}, not a file name")
        # A device or a pipe: no rename, no fsync. Written from memory, in one piece
        # after ``write`` has succeeded: writers that seek (zip files) cannot on a
        # pipe, and /dev/null's offsets stay 0.
        buffer = io.BytesIO()
        write(buffer)
        with open(path, "wb") as stream:
            stream.write(buffer.getbuffer())
        return path
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    directory = target.parent
    remove_stale_temporaries(target)
    mode = _new_file_mode(target)
    temporary = None
    with cleanup_on_signals():
        try:
            fd, temporary = tempfile.mkstemp(
                prefix=_temporary_prefix(target), suffix=".tmp", dir=directory
            )
            with os.fdopen(fd, "wb") as file:
                write(file)
                file.flush()
                os.fsync(file.fileno())
            os.chmod(temporary, mode)
            os.replace(temporary, target)
        except BaseException:
            if temporary is not None:
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
