"""How the kernels are compiled and cached: :func:`cached_njit`, ``numba.njit(cache=True)``
with an on-disk cache that notices an edit to any module the kernel's module imports.

The problem. Numba keeps a cached kernel while the *kernel's own* source file is
unchanged (its index file stores a hash of that one file). What the kernel compiled in
from other files is not part of that check, yet the cache holds it frozen into the
machine code:

- the ``register_jitable`` row pieces of :mod:`perceptrons._kernels._rows`, compiled into
  the epochs of ``perceptron``, ``logistic``, ``romma`` and ``strategies``;
- ``register_jitable`` helpers of another module (``hashing`` inlines
  :func:`perceptrons._kernels.parse.fast_float`, and with it ``parse``'s tables);
- jitted functions of another module (``argmax_lowest`` of ``perceptron``, called by
  ``strategies`` and ``voted``): a cached caller links its callees' code into its own;
- module-level constants and arrays of another module that such code reads (Numba
  freezes globals into the machine code).

So after an edit to ``_rows.py`` the kernels of the other modules went on loading the
old pieces from the cache.

The fix: every cached kernel of the package is made by :func:`cached_njit`, whose cache
index is stamped with the kernel's own source *and* every module of this package that
the kernel's module imports, transitively (read from the ``import`` statements, function
level ones included). Numba discards an index whose stamp differs from the current one
(stale entries are dropped and their data files reused), so an edit to ``_rows.py``
recompiles the kernels of the modules that import it, directly or not, on their next
call, and no other (an edit to ``romma.py`` leaves ``strategies``' kernels cached).
Everything a kernel can reach by name is a global of its module, and every global from
another file of the package arrives by one of those imports, so the stamp covers all the
cross-file dependencies listed above; it errs on the safe side at module granularity (an
edit to ``perceptron.py`` recompiles ``strategies`` though only ``argmax_lowest`` is
used). This module is itself imported by every kernel module, so a change to the
stamping invalidates every cache. Libraries (NumPy, Numba) are not stamped: Numba keys
its cache on its own version already.

Why not the alternatives:

- Moving the shared pieces into each module that uses them would duplicate them (four
  modules use ``_rows``), and the next shared helper would bring the problem back.
- Making the pieces cached ``njit`` functions of their own does not help: a cached
  caller links its callees' code into its own cache entry without checking them either
  (the ``argmax_lowest`` case), and it would compile every piece once more per layout.
- Deleting the cache files at import when some fingerprint changed needs to know where
  Numba put them (in-tree ``__pycache__``, ``NUMBA_CACHE_DIR`` or the user-wide cache)
  and races with another process loading or writing them; the stamp is checked by
  Numba's own index logic, which already copes with concurrent readers and writers.

The compiled code is unchanged (the pieces are still inlined ``register_jitable``
functions, with no dispatcher or cache files of their own, which keeps cold
compilation short). The cost is reading, parsing and hashing the package's kernel
sources once per process, when the kernel modules are imported: about 20 ms.

Numba has no public hook for the stamp. :func:`cached_njit` plugs in through the
pieces ``numba.core.caching`` is built from (a ``FunctionCache`` subclass whose
implementation wraps the locator Numba chose), set on the dispatcher as
``Dispatcher.enable_caching`` does; ``tests/test_kernel_cache.py`` edits a copy of the
package to check that an edit is seen and that an unedited run loads the cache.

Where the cache lives: where Numba's own locators put it (``NUMBA_CACHE_DIR``, the
package's ``__pycache__``, the user's cache directory), else, for a read-only
installation run with an unwritable ``HOME``, a directory of the user's own in the
temporary directory (:class:`_TemporaryCacheLocator`), else nowhere: the kernels are
then compiled in every process, silently, rather than failing with Numba's "no locator
available" at import.
"""

import ast
import functools
import gc
import hashlib
import inspect
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numba
from numba.core.caching import CompileResultCacheImpl, FunctionCache, UserProvidedCacheLocator


def cached_njit(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """``numba.njit(cache=True, **options)`` whose cache also notices an edit to a module
    of this package that the function's module imports (see the module docstring)."""
    if "cache" in options:
        raise TypeError("cached_njit always caches: do not pass cache")

    def decorate(function: Callable[..., Any]) -> Any:
        dispatcher = numba.njit(**options)(function)
        # What Dispatcher.enable_caching does, with the dependency-aware cache.
        try:
            dispatcher._cache = _KernelCache(dispatcher.py_func)
        except RuntimeError:
            # Numba's "cannot cache function ...: no locator available": no directory
            # to cache in could be written. Compiled in each process instead.
            pass
        return dispatcher

    return decorate


class _StampedLocator:
    """Numba's locator for ``py_func`` (where the cache lives, its file names), with a
    source stamp that also covers the package modules ``py_func``'s module imports."""

    def __init__(self, locator: Any, py_func: Callable[..., Any]) -> None:
        self._locator = locator
        self._module = py_func.__module__
        self._path = Path(inspect.getfile(py_func))

    def get_source_stamp(self) -> Any:
        return self._locator.get_source_stamp(), dependency_stamp(self._module, self._path)

    def __getattr__(self, name: str) -> Any:
        # Everything else (cache path, disambiguator...) is the wrapped locator's.
        return getattr(self._locator, name)


class _TemporaryCacheLocator(UserProvidedCacheLocator):
    """The last resort of the locators: ``perceptrons-numba-UID`` in the temporary
    directory (``TMPDIR``), used only when it is a directory of this user's that no one
    else may write (a cache is unpickled when loaded: a file planted there by someone
    else would run their code)."""

    @classmethod
    def from_function(cls, py_func: Callable[..., Any], py_file: str) -> Any:
        directory = _private_temporary_directory()
        if directory is None or not os.path.exists(py_file):
            return None
        locator = cls(py_func, py_file)
        locator._cache_path = os.path.join(directory, cls.get_suitable_cache_subpath(py_file))
        try:
            locator.ensure_cache_path()
        except OSError:
            return None
        return locator


def _private_temporary_directory() -> str | None:
    """``TMPDIR/perceptrons-numba-UID``, made if missing; None when it is not a
    directory owned by this user and closed to others (or cannot be made)."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # not POSIX: no ownership to check
        return None
    path = os.path.join(tempfile.gettempdir(), f"perceptrons-numba-{getuid()}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        found = os.lstat(path)
    except OSError:
        return None
    private = found.st_uid == getuid() and not found.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return path if stat.S_ISDIR(found.st_mode) and private else None


class _KernelCacheImpl(CompileResultCacheImpl):
    # Numba's locators, then the last resort.
    _locator_classes = [  # noqa: RUF012 (Numba reads it as a class attribute)
        *CompileResultCacheImpl._locator_classes,
        _TemporaryCacheLocator,
    ]

    def __init__(self, py_func: Callable[..., Any]) -> None:
        super().__init__(py_func)
        self._locator = _StampedLocator(self._locator, py_func)


class _KernelCache(FunctionCache):
    _impl_class = _KernelCacheImpl


def dependency_stamp(module: str, path: Path) -> str | None:
    """A hash of the sources of ``module`` (at ``path``) and of every module of its
    top-level package that it imports, transitively; None when ``path`` is not the
    source of ``module`` inside its package (a script, a frozen application)."""
    files = dependency_files(module, path)
    if files is None:
        return None
    digest = hashlib.sha256()
    for name in sorted(files):
        stat = os.stat(files[name])
        digest.update(name.encode() + b"\0")
        digest.update(_file_hash(files[name], stat.st_mtime_ns, stat.st_size))
    return digest.hexdigest()


def dependency_files(module: str, path: Path) -> dict[str, Path] | None:
    """Module name -> source file, for ``module`` and the modules of its top-level
    package that it imports, transitively (None: see :func:`dependency_stamp`)."""
    parts = module.split(".")
    depth = len(parts) if path.name == "__init__.py" else len(parts) - 1
    if not path.is_file() or len(path.parents) <= depth:
        return None
    root = path.parents[depth]
    if _source_of(root, module) != path:
        return None
    files, pending = {module: path}, [module]
    while pending:
        current = pending.pop()
        source = files[current]
        stat = os.stat(source)
        for base, name in _imports(current, source, stat.st_mtime_ns, stat.st_size):
            if base.split(".")[0] != parts[0]:
                continue  # a library
            # ``from a import b``: the module a.b if there is one, else a's name b.
            target = f"{base}.{name}" if name else base
            found = _source_of(root, target) if name else None
            if found is None:
                target, found = base, _source_of(root, base)
            if found is not None and target not in files:
                files[target] = found
                pending.append(target)
    return files


def _source_of(root: Path, module: str) -> Path | None:
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_name(base.name + ".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@functools.cache
def _file_hash(path: Path, mtime_ns: int, size: int) -> bytes:
    # mtime and size are in the key so that a file edited while the process runs is
    # read again (as Numba's own stamp does).
    return hashlib.sha256(path.read_bytes()).digest()


@functools.cache
def _imports(module: str, path: Path, mtime_ns: int, size: int) -> tuple[tuple[str, str], ...]:
    """``(module, name)`` for every ``from module import name`` in ``module`` (source
    ``path``), relative ones made absolute, and ``(module, "")`` for ``import module``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, str]] = []
    # The syntax tree is thousands of short-lived objects without a cycle among them:
    # reference counting frees them all. With the cyclic collector paused meanwhile they
    # do not push a process holding Numba's large object graph into one more full
    # collection (measured: about 70 ms on the first kernel call of `train --stream`).
    collecting = gc.isenabled()
    gc.disable()
    try:
        for node in _statements(ast.parse(path.read_bytes()).body):
            if isinstance(node, ast.Import):
                found += [(alias.name, "") for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{anchor}.{base}" if base else anchor
                found += [(base, alias.name) for alias in node.names]
    finally:
        if collecting:
            gc.enable()
    return tuple(found)


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body``, nested ones (in functions, branches, handlers...)
    included: where an import can be, without visiting every expression."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            yield from _statements(getattr(node, field, []))
