"""The kernels' on-disk Numba cache is correct after an edit to another file.

Numba checks only a kernel's own source file before loading it from its cache; the
kernels compile in code of other files (the ``register_jitable`` pieces of ``_rows``, a
jitted function of another module), so :mod:`perceptrons._kernels._cache` stamps each
cache with every package module the kernel's module imports. The end-to-end tests copy
the package into a temporary tree, fill its cache in one process, edit the copy and
check in fresh processes that the edit is seen, and that an unedited run loads the
cache instead of compiling again.
"""

import ast
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import perceptrons
from perceptrons._kernels import _cache

PACKAGE = Path(perceptrons.__file__).parent

# Runs one kernel on a one-example problem (its result shows which helper code it ran)
# and reports the result, the cache hits and misses, and where the cache lives.
_CHILD = """
import json, sys
import numpy as np
import perceptrons
from perceptrons._kernels import strategies

assert perceptrons.__file__.startswith(sys.argv[2]), perceptrons.__file__
kernel = getattr(strategies, sys.argv[1])
X = np.array([[1.0, 2.0]])
if sys.argv[1] == "vanilla_binary":
    y, weights = np.array([1.0]), np.zeros(3)
else:
    y, weights = np.array([0]), np.zeros((3, 2))
kernel(X, y, np.array([0]), 1.0, weights)
stats = kernel.stats
print(json.dumps({
    "weights": weights.tolist(),
    "hits": sum(stats.cache_hits.values()),
    "misses": sum(stats.cache_misses.values()),
    "cache_path": stats.cache_path,
}))
"""

# (kernel, file edited, what is appended to it, weights before the edit, after it).
# vanilla_binary scores with _rows.dot (register_jitable): a score of 1000 instead of 0
# means no update. vanilla_multiclass predicts with perceptron.argmax_lowest (a cached
# njit function of another file): predicting class 1 instead of the tied 0 means an
# update away from it. The redefinition appended at the end of the module replaces the
# original before any kernel is compiled.
CASES = {
    "register_jitable helper": (
        "vanilla_binary",
        "_rows.py",
        "\n\n@register_jitable\ndef dot(rows, i, weights, total):\n    return total + 1000.0\n",
        [1.0, 2.0, 1.0],
        [0.0, 0.0, 0.0],
    ),
    "njit function of another file": (
        "vanilla_multiclass",
        "perceptron.py",
        "\n\n@_jit\ndef argmax_lowest(scores):\n    return scores.shape[0] - 1\n",
        [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
        [[1.0, -1.0], [2.0, -2.0], [1.0, -1.0]],
    ),
}


def _run(root: Path, kernel: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["PYTHONPATH"] = str(root)
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, kernel, str(root)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _cache_files(path: str, kernel: str) -> dict[str, int]:
    """mtime (ns) of each index and data file of ``strategies.<kernel>``."""
    prefix = f"strategies.{kernel}-"
    return {
        entry.name: entry.stat().st_mtime_ns
        for entry in os.scandir(path)
        if entry.name.startswith(prefix) and entry.name.endswith((".nbi", ".nbc"))
    }


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_edit_to_a_dependency_in_another_file_invalidates_the_cache(tmp_path, case):
    kernel, edited, appended, before, after = CASES[case]
    root = tmp_path / "tree"
    shutil.copytree(PACKAGE, root / "perceptrons", ignore=shutil.ignore_patterns("__pycache__"))

    first = _run(root, kernel)
    assert (first["weights"], first["hits"], first["misses"]) == (before, 0, 1)
    written = _cache_files(first["cache_path"], kernel)
    assert any(name.endswith(".nbi") for name in written)
    assert any(name.endswith(".nbc") for name in written)

    # Unedited: loaded from the cache, which is left as it was.
    again = _run(root, kernel)
    assert (again["weights"], again["hits"], again["misses"]) == (before, 1, 0)
    assert _cache_files(again["cache_path"], kernel) == written

    # The kernel's own file is untouched: only the stamp of its dependencies changed.
    with open(root / "perceptrons" / "_kernels" / edited, "a", encoding="utf-8") as file:
        file.write(appended)
    edited_run = _run(root, kernel)
    assert (edited_run["weights"], edited_run["hits"], edited_run["misses"]) == (after, 0, 1)

    # The recompiled kernel is cached in turn.
    last = _run(root, kernel)
    assert (last["weights"], last["hits"], last["misses"]) == (after, 1, 0)


def test_the_stamp_covers_the_modules_a_kernel_module_imports():
    def dependencies(module: str) -> set[str]:
        path = PACKAGE / "_kernels" / f"{module}.py"
        files = _cache.dependency_files(f"perceptrons._kernels.{module}", path)
        assert files is not None
        assert all(file.is_file() for file in files.values())
        return {name.rpartition(".")[2] for name in files}

    assert dependencies("strategies") == {"strategies", "_rows", "perceptron", "_cache"}
    assert dependencies("voted") == {"voted", "perceptron", "_rows", "_cache"}  # transitively
    assert dependencies("hashing") == {"hashing", "parse", "_cache"}
    assert dependencies("scoring") == {"scoring", "_cache"}
    # Not the source of that module inside its package (a script): only Numba's stamp.
    assert _cache.dependency_files("__main__", PACKAGE / "_kernels" / "strategies.py") is None


def test_the_stamp_follows_relative_and_plain_imports(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from pkg.sub.c import VALUE\n")
    (package / "sub" / "c.py").write_text("VALUE = 1\n")
    (package / "b.py").write_text("import numpy\nimport pkg.sub\n")
    (package / "a.py").write_text("def f():\n    from . import b\n    from .sub import VALUE\n")
    files = _cache.dependency_files("pkg.a", package / "a.py")
    assert files == {
        "pkg.a": package / "a.py",
        "pkg.b": package / "b.py",
        "pkg.sub": package / "sub" / "__init__.py",
        "pkg.sub.c": package / "sub" / "c.py",
    }
    stamp = _cache.dependency_stamp("pkg.a", package / "a.py")
    (package / "sub" / "c.py").write_text("VALUE = 22\n")
    assert _cache.dependency_stamp("pkg.a", package / "a.py") != stamp


def test_every_cached_function_uses_the_dependency_aware_cache():
    """``cache=...`` given to any Numba decorator would bring back Numba's own cache,
    which misses edits to other files: only :func:`~perceptrons._kernels._cache.cached_njit`
    may cache."""
    decorators = {"jit", "njit", "vectorize", "guvectorize", "cfunc", "stencil"}
    offenders, seen = [], 0
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(PACKAGE)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Call):
                name = getattr(node.func, "attr", getattr(node.func, "id", None))
                if name == "cached_njit":
                    seen += 1
                elif name in decorators and any(k.arg == "cache" for k in node.keywords):
                    offenders.append(where)
            elif isinstance(node, ast.Attribute) and node.attr == "enable_caching":
                offenders.append(where)
    assert not offenders
    assert seen > 10  # the scan sees the kernels


def _read_only_copy(root: Path) -> None:
    """A copy of the package as a read-only installation: nothing can be written in its
    directories, whoever runs it (for root, whom permissions do not stop, a regular file
    named ``__pycache__`` in each directory keeps Numba and Python from caching there)."""
    shutil.copytree(PACKAGE, root / "perceptrons", ignore=shutil.ignore_patterns("__pycache__"))
    folders = [Path(d) for d, _, _ in os.walk(root / "perceptrons")]
    for folder in folders:
        (folder / "__pycache__").write_bytes(b"")
    for folder in folders:
        for entry in folder.iterdir():
            entry.chmod(0o444)
        folder.chmod(0o555)


def test_a_read_only_installation_with_an_unwritable_home_runs(tmp_path):
    """Numba's ``cache=True`` fails at import when no cache directory can be written
    ("no locator available"): the kernels then cache in a private temporary directory,
    or compile uncached, silently."""
    root = tmp_path / "tree"
    _read_only_copy(root)
    home = tmp_path / "home"  # a file: no ~/.cache beneath it, whoever runs this
    home.write_bytes(b"")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    data = tmp_path / "tiny.svm"  # read by a compiled parser
    data.write_text("1 1:1\n2 2:1\n")
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "XDG_", "PERCEPTRONS_"))
    }
    env.update(PYTHONPATH=str(root), HOME=str(home), TMPDIR=str(temporary))
    try:
        for args in (
            ["--version"],
            ["train", str(data), "-o", str(tmp_path / "m.npz"), "--algorithm", "multinomial-nb"],
        ):
            done = subprocess.run(
                [sys.executable, "-m", "perceptrons", *args],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert (done.returncode, done.stderr) == (0, ""), args
        assert (tmp_path / "m.npz").is_file()
        # The kernels cached in the private temporary directory, and only there.
        (cache,) = temporary.iterdir()
        assert cache.name == f"perceptrons-numba-{os.getuid()}"
        assert stat.S_IMODE(cache.stat().st_mode) == 0o700
        assert any(name.endswith(".nbi") for _, _, names in os.walk(cache) for name in names)
        assert not list((root / "perceptrons").rglob("*.nbi"))
    finally:
        for folder, _, _ in os.walk(root):
            os.chmod(folder, 0o755)


def test_the_temporary_cache_is_used_only_when_private(tmp_path, monkeypatch):
    """A cache is unpickled when loaded: a directory someone else can write (or owns)
    in the shared temporary directory is never used."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made = _cache._private_temporary_directory()
    assert made == str(tmp_path / f"perceptrons-numba-{os.getuid()}")
    assert stat.S_IMODE(os.stat(made).st_mode) == 0o700
    os.chmod(made, 0o777)  # others may write there
    assert _cache._private_temporary_directory() is None
    os.rmdir(made)
    Path(made).write_bytes(b"")  # not a directory
    assert _cache._private_temporary_directory() is None


def test_a_kernel_without_any_cache_directory_compiles_uncached(monkeypatch):
    """No locator at all (Numba's RuntimeError): the kernel is made anyway, uncached."""
    monkeypatch.setattr(_cache._KernelCacheImpl, "_locator_classes", [])

    @_cache.cached_njit()
    def twice(x):
        return 2 * x

    assert twice(21) == 42
    assert not isinstance(twice._cache, _cache._KernelCache)
