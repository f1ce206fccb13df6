"""Check a release's two archives, as ``python -m build`` wrote them, before anyone installs them.

Usage: ``python .ci/check_dist.py DIST_DIR`` (the directory holding one sdist and one wheel).

The wheel: the whole package (every module of ``src/perceptrons``, ``py.typed``, the
command-line package), the ``perceptrons`` console script, metadata of the version in
``src/perceptrons/_version.py`` with the license and classifiers PyPI knows, and nothing
else: no tests, benchmarks, docs, virtual environments, bytecode or Numba caches, which a
working tree that has run the tests is full of. The sdist: what building the wheel needs
(``pyproject.toml``, ``README.md``, ``LICENSE``, the package) and the test suite, under
one ``perceptrons-VERSION/`` folder, of the same version. Prints what each holds; exits
with a message naming every problem found.
"""

from __future__ import annotations

import ast
import configparser
import email.parser
import sys
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

import trove_classifiers

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "perceptrons"
# Folders and files a release never holds, wherever they are in it.
JUNK_DIRS = {"tests", "benchmarks", "docs", "_build", ".venv", "__pycache__", ".git", "build"}
JUNK_SUFFIXES = {".nbi", ".nbc", ".pyc", ".pyo"}
# The sdist's own junk: the wheel's list less the test suite, which the sdist ships.
SDIST_JUNK_DIRS = JUNK_DIRS - {"tests"}


def source_version() -> str:
    """``__version__`` of ``_version.py`` read from its text, as setuptools reads it."""
    tree = ast.parse((PACKAGE / "_version.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__version__" for target in node.targets
        ):
            return str(ast.literal_eval(node.value))
    raise SystemExit(f"no __version__ = '...' in {PACKAGE / '_version.py'}")


def package_modules() -> set[str]:
    """The package's modules and data files as the archives name them (``perceptrons/...``),
    caches left out."""
    return {
        path.relative_to(PACKAGE.parent).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in JUNK_SUFFIXES
    }


def junk(names: list[str], junk_dirs: set[str]) -> list[str]:
    return [
        name
        for name in names
        if junk_dirs & set(PurePosixPath(name).parts[:-1])
        or PurePosixPath(name).suffix in JUNK_SUFFIXES
    ]


def summary(kind: str, path: Path, names: list[str]) -> None:
    """One line per folder of the archive: how many files, named where they are few."""
    folders: dict[str, list[str]] = {}
    for name in names:
        folders.setdefault(str(PurePosixPath(name).parent), []).append(PurePosixPath(name).name)
    print(f"{kind} {path.name}: {path.stat().st_size / 1024:.0f} KiB, {len(names)} files")
    for folder, files in sorted(folders.items()):
        shown = ", ".join(sorted(files)) if len(files) <= 6 else "..."
        print(f"  {len(files):4d}  {folder}/  {shown}")


def check_wheel(path: Path, version: str, problems: list[str]) -> None:
    with zipfile.ZipFile(path) as wheel:
        names = [name for name in wheel.namelist() if not name.endswith("/")]
        dist_info = f"perceptrons-{version}.dist-info"

        def read(name: str) -> str:
            return wheel.read(f"{dist_info}/{name}").decode("utf-8")

        summary("wheel", path, names)
        if path.name != f"perceptrons-{version}-py3-none-any.whl":
            problems.append(f"wheel: {path.name} is not perceptrons-{version}-py3-none-any.whl")
        # The three named as well: a package found empty (a wrong path) must not pass.
        required = {
            "perceptrons/__init__.py",
            "perceptrons/py.typed",
            "perceptrons/cli/__init__.py",
        }
        if missing := (package_modules() | required) - set(names):
            problems.append(f"wheel: lacks {sorted(missing)}")
        outside = [n for n in names if n.split("/")[0] not in {"perceptrons", dist_info}]
        if outside:
            problems.append(f"wheel: files outside the package: {outside}")
        if found := junk(names, JUNK_DIRS):
            problems.append(f"wheel: junk {found}")
        if f"{dist_info}/licenses/LICENSE" not in names:
            problems.append("wheel: lacks the LICENSE file (licenses/LICENSE)")

        entry_points = configparser.ConfigParser()
        entry_points.read_string(read("entry_points.txt"))
        script = entry_points.get("console_scripts", "perceptrons", fallback=None)
        if script != "perceptrons.cli:main":
            problems.append(
                f"wheel: console script perceptrons = {script!r}, not perceptrons.cli:main"
            )
        check_metadata("wheel", read("METADATA"), version, problems)


def check_sdist(path: Path, version: str, problems: list[str]) -> None:
    top = f"perceptrons-{version}"
    with tarfile.open(path) as sdist:
        members = sdist.getmembers()
        names = [m.name for m in members if m.isfile()]
        summary("sdist", path, names)
        if path.name != f"{top}.tar.gz":
            problems.append(f"sdist: {path.name} is not {top}.tar.gz")
        if not all(PurePosixPath(m.name).parts[0] == top for m in members):
            problems.append(f"sdist: not everything lies under {top}/")
        inside = {name.removeprefix(f"{top}/") for name in names}
        required = {"pyproject.toml", "README.md", "LICENSE", "PKG-INFO", "tests/conftest.py"}
        required |= {f"src/{module}" for module in package_modules()}
        if missing := required - inside:
            problems.append(f"sdist: lacks {sorted(missing)}")
        if found := junk(sorted(inside), SDIST_JUNK_DIRS):
            problems.append(f"sdist: junk {found}")
        metadata = sdist.extractfile(f"{top}/PKG-INFO")
        if metadata is not None:
            check_metadata("sdist", metadata.read().decode("utf-8"), version, problems)


def check_metadata(kind: str, text: str, version: str, problems: list[str]) -> None:
    metadata = email.parser.Parser().parsestr(text)
    expected = {
        "Name": "perceptrons",
        "Version": version,
        "License-Expression": "BSD-3-Clause",
        "License-File": "LICENSE",
        "Author": "the perceptrons developers",
    }
    for field, value in expected.items():
        if metadata.get(field) != value:
            problems.append(f"{kind}: metadata {field} is {metadata.get(field)!r}, not {value!r}")
    classifiers = metadata.get_all("Classifier") or []
    if unknown := [c for c in classifiers if c not in trove_classifiers.classifiers]:
        problems.append(
            f"{kind}: classifiers PyPI does not know (it refuses the upload): {unknown}"
        )
    if "Typing :: Typed" not in classifiers:
        problems.append(f"{kind}: no 'Typing :: Typed' classifier (py.typed ships)")


def main(dist_dir: str) -> int:
    version = source_version()
    wheels = sorted(Path(dist_dir).glob("*.whl"))
    sdists = sorted(Path(dist_dir).glob("*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        print(f"{dist_dir}: want one wheel and one sdist, found {wheels + sdists}", file=sys.stderr)
        return 1
    problems: list[str] = []
    check_wheel(wheels[0], version, problems)
    check_sdist(sdists[0], version, problems)
    for problem in problems:
        print(f"check_dist: {problem}", file=sys.stderr)
    if not problems:
        print(f"check_dist: wheel and sdist of perceptrons {version} hold what a release needs")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    sys.exit(main(sys.argv[1]))
