"""The public data sets of the benchmarks and tests, read from a shared directory.

The data files are never shipped with the package and never downloaded: they live in a
shared data directory (see :func:`shared_data_dir`).  Every loader raises
:class:`FileNotFoundError` naming the missing path (and how to point
``PERCEPTRONS_DATA`` at the data) and :class:`ValueError` naming a corrupt file and what
is wrong with it.  Each returns the data set's standard train / test split.

The parsers of a user's own files are in :mod:`perceptrons.io.formats`.

Data sets
---------
sentiment
    Multi-domain product reviews, ``sentiment/all_sentiment_shuffled.first5000.txt``
    (:func:`load_sentiment`).
a9a
    LIBSVM "a9a" (UCI Adult, binarized), ``a9a/a9a`` and ``a9a/a9a.t``
    (:func:`load_a9a`).
20 Newsgroups
    "bydate" split, ``20newsgroups/20news-bydate.tar.gz`` (:func:`load_20newsgroups`).
MNIST
    Original IDX files, ``mnist/*-ubyte.gz`` (:func:`load_mnist`).
"""

from __future__ import annotations

import os
import re
import tarfile
import zlib
from pathlib import Path

import numpy as np

from perceptrons._memory import array_bytes, check_allocation
from perceptrons.io.formats import read_data, read_idx

__all__ = [
    "DATA_ENV_VAR",
    "load_20newsgroups",
    "load_a9a",
    "load_mnist",
    "load_sentiment",
    "shared_data_dir",
]

#: Environment variable that overrides the location of the shared data directory.
DATA_ENV_VAR = "PERCEPTRONS_DATA"

_HINT = (
    f"Set the environment variable {DATA_ENV_VAR} to the directory holding the shared "
    f"data sets (e.g. `export {DATA_ENV_VAR}=/path/to/shared/data`), or pass `data_dir=`."
)


def shared_data_dir() -> Path | None:
    """Locate the shared data directory.

    Resolution order:

    1. the environment variable ``PERCEPTRONS_DATA``, if set (non-empty); it is used
       exclusively, so a value pointing to a non-existent directory gives ``None``;
    2. ``../shared/data`` relative to the current working directory;
    3. ``../shared/data`` relative to the source checkout holding this package
       (``<repo root>/../shared/data``).

    Returns
    -------
    pathlib.Path or None
        The first candidate that is an existing directory (resolved), or ``None``
        when no candidate exists.
    """
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        path = Path(env).expanduser()
        return path.resolve() if path.is_dir() else None
    candidates = [
        Path.cwd() / ".." / "shared" / "data",
        Path(__file__).resolve().parents[2] / ".." / "shared" / "data",
    ]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    return None


def _resolve_dir(data_dir: str | os.PathLike[str] | None) -> Path:
    """Return ``data_dir`` as a Path, or the shared data directory, or raise."""
    if data_dir is not None:
        path = Path(data_dir).expanduser()
        if not path.is_dir():
            raise FileNotFoundError(f"Data directory {str(path)!r} does not exist. {_HINT}")
        return path
    found = shared_data_dir()
    if found is None:
        env = os.environ.get(DATA_ENV_VAR)
        where = (
            f"{DATA_ENV_VAR}={env!r} is not a directory"
            if env
            else "no ../shared/data directory was found beside the working directory "
            "or the source checkout"
        )
        raise FileNotFoundError(f"Shared data directory not found: {where}. {_HINT}")
    return found


def _require_file(path: Path) -> Path:
    if not path.is_file():
        raise FileNotFoundError(f"Data file {str(path)!r} not found. {_HINT}")
    return path


def _first_existing(directory: Path, names: list[str]) -> Path:
    """Return the first of ``directory/name`` that exists, else raise for the first."""
    for name in names:
        path = directory / name
        if path.is_file():
            return path
    return _require_file(directory / names[0])


# --------------------------------------------------------------------------- MNIST


def load_mnist(
    data_dir: str | os.PathLike[str] | None = None, *, dtype: type | np.dtype = np.float64
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Load MNIST with the standard 60,000 / 10,000 split.

    Parameters
    ----------
    data_dir : str or os.PathLike, optional
        Shared data directory (the one holding ``mnist/``).  Defaults to
        :func:`shared_data_dir`.
    dtype : numpy dtype, default=numpy.float64
        Floating dtype of the pixel arrays (``float64`` or ``float32``).

    Returns
    -------
    X_train : ndarray of shape (60000, 784)
        C-contiguous pixels scaled to ``[0, 1]``.
    y_train : ndarray of shape (60000,), dtype int64
        Digit labels 0-9.
    X_test : ndarray of shape (10000, 784)
    y_test : ndarray of shape (10000,), dtype int64

    Raises
    ------
    FileNotFoundError
        If the directory or one of the four IDX files is missing.
    ValueError
        If a file is corrupt or images and labels disagree.
    """
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise ValueError(f"dtype must be a floating dtype, got {dtype}")
    mnist = _resolve_dir(data_dir) / "mnist"
    out = []
    for split in ("train", "t10k"):
        img_path = _first_existing(
            mnist, [f"{split}-images-idx3-ubyte.gz", f"{split}-images-idx3-ubyte"]
        )
        lab_path = _first_existing(
            mnist, [f"{split}-labels-idx1-ubyte.gz", f"{split}-labels-idx1-ubyte"]
        )
        images = read_idx(img_path)
        labels = read_idx(lab_path)
        if images.ndim != 3 or images.dtype != np.uint8:
            raise ValueError(
                f"{str(img_path)!r}: expected a 3-d uint8 image array, got shape "
                f"{images.shape} of {images.dtype}"
            )
        if labels.ndim != 1 or labels.dtype != np.uint8:
            raise ValueError(
                f"{str(lab_path)!r}: expected a 1-d uint8 label array, got shape "
                f"{labels.shape} of {labels.dtype}"
            )
        if images.shape[0] != labels.shape[0]:
            raise ValueError(
                f"{str(img_path)!r} holds {images.shape[0]} images but {str(lab_path)!r} "
                f"holds {labels.shape[0]} labels"
            )
        n = images.shape[0]
        pixels = images.shape[1] * images.shape[2]
        check_allocation(
            array_bytes(n, pixels, itemsize=dtype.itemsize),
            f"{img_path}: {n:,} images of {pixels:,} pixels as {dtype}",
        )
        X = images.reshape(n, -1).astype(dtype)
        X /= 255.0
        out.append(np.ascontiguousarray(X))
        out.append(labels.astype(np.int64))
    X_train, y_train, X_test, y_test = out
    return X_train, y_train, X_test, y_test


# --------------------------------------------------------------------------- a9a


def load_a9a(
    data_dir: str | os.PathLike[str] | None = None,
) -> tuple[object, np.ndarray, object, np.ndarray]:
    """Load LIBSVM "a9a" with its given train / test split.

    Parameters
    ----------
    data_dir : str or os.PathLike, optional
        Shared data directory (the one holding ``a9a/``).  Defaults to
        :func:`shared_data_dir`.

    Returns
    -------
    X_train : scipy.sparse.csr_matrix of shape (32561, 123), float64
        Sorted int32 indices.
    y_train : ndarray of shape (32561,), dtype int64
        Labels as given in the file, ``-1`` / ``+1``.
    X_test : scipy.sparse.csr_matrix of shape (16281, 123), float64
    y_test : ndarray of shape (16281,), dtype int64

    Raises
    ------
    FileNotFoundError
        If the directory or a file is missing.
    ValueError
        If a file cannot be parsed as svmlight with 123 features (a
        :class:`~perceptrons.io.formats.DataFormatError` naming the line) or its labels
        are not integers.
    """
    directory = _resolve_dir(data_dir) / "a9a"
    out: list = []
    for name in ("a9a", "a9a.t"):
        path = _require_file(directory / name)
        data = read_data(path, "svmlight", labels=True, n_features=123)
        if data.y is None or data.y.dtype != np.int64:
            raise ValueError(f"{str(path)!r}: labels are not all integers")
        out += [data.X, data.y]
    X_train, y_train, X_test, y_test = out
    return X_train, y_train, X_test, y_test


# --------------------------------------------------------------------------- sentiment

_SENTIMENT_FILE = "all_sentiment_shuffled.first5000.txt"


def load_sentiment(
    data_dir: str | os.PathLike[str] | None = None,
) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """Load the multi-domain sentiment reviews (first 5,000 lines).

    Each line is ``domain label id tokens...``; the label is ``pos`` or ``neg``
    and the text is already tokenized and lower-cased.  The standard protocol is
    used: file order, the first 80 % of the lines for training and the last 20 %
    for testing.  Featurization (e.g. a bag of words over the whitespace tokens)
    is left to the caller.

    Parameters
    ----------
    data_dir : str or os.PathLike, optional
        Shared data directory (the one holding ``sentiment/``).  Defaults to
        :func:`shared_data_dir`.

    Returns
    -------
    docs_train : list of str
        The tokens after the id, joined by single spaces (4,000 documents).
    y_train : ndarray of str
        ``"pos"`` / ``"neg"``.
    docs_test : list of str
        1,000 documents.
    y_test : ndarray of str

    Raises
    ------
    FileNotFoundError
        If the directory or file is missing.
    ValueError
        If a line is malformed (fewer than 3 fields or an unknown label) or the
        file is not UTF-8.
    """
    path = _require_file(_resolve_dir(data_dir) / "sentiment" / _SENTIMENT_FILE)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{str(path)!r}: not valid UTF-8 ({exc})") from exc
    docs: list[str] = []
    labels: list[str] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) < 3:
            raise ValueError(
                f"{str(path)!r}, line {lineno}: expected 'domain label id tokens...', "
                f"got {len(fields)} field(s)"
            )
        if fields[1] not in ("pos", "neg"):
            raise ValueError(
                f"{str(path)!r}, line {lineno}: label must be 'pos' or 'neg', got {fields[1]!r}"
            )
        labels.append(fields[1])
        docs.append(" ".join(fields[3:]))
    if not docs:
        raise ValueError(f"{str(path)!r}: no documents")
    n_train = (len(docs) * 4) // 5
    y = np.asarray(labels)
    return docs[:n_train], y[:n_train], docs[n_train:], y[n_train:]


# --------------------------------------------------------------------------- 20 Newsgroups

_NEWS_FILE = "20news-bydate.tar.gz"
_NEWS_MEMBER = re.compile(r"^(?:\./)?20news-bydate-(train|test)/([^/]+)/([^/]+)$")
_NEWS_COUNTS = {"train": 11314, "test": 7532}
_NEWS_CLASSES = 20


def load_20newsgroups(
    data_dir: str | os.PathLike[str] | None = None,
) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """Load 20 Newsgroups ("bydate" split) directly from the original tarball.

    Posts are kept raw (headers, signatures and quotes are not removed, like
    scikit-learn's default ``remove=()``) and decoded as latin-1.  Documents are
    ordered by sorted tar member name, which makes the order deterministic.

    Parameters
    ----------
    data_dir : str or os.PathLike, optional
        Shared data directory (the one holding ``20newsgroups/``).  Defaults to
        :func:`shared_data_dir`.

    Returns
    -------
    docs_train : list of str
        11,314 posts.
    y_train : ndarray of str
        Newsgroup names (20 classes).
    docs_test : list of str
        7,532 posts.
    y_test : ndarray of str

    Raises
    ------
    FileNotFoundError
        If the directory or tarball is missing.
    ValueError
        If the tarball is corrupt or does not hold 11,314 / 7,532 posts in the same
        20 groups.
    """
    path = _require_file(_resolve_dir(data_dir) / "20newsgroups" / _NEWS_FILE)
    posts: dict[str, list[tuple[str, str, str]]] = {"train": [], "test": []}
    try:
        with tarfile.open(path, mode="r:gz") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                match = _NEWS_MEMBER.match(member.name)
                if match is None:
                    continue
                split, group, _ = match.groups()
                fh = tar.extractfile(member)
                if fh is None:  # pragma: no cover - isfile() members always have data
                    continue
                text = fh.read().decode("latin-1")
                posts[split].append((member.name, group, text))
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise ValueError(f"{str(path)!r}: corrupt or unreadable tar.gz archive ({exc})") from exc

    out: list = []
    groups: dict[str, set[str]] = {}
    for split in ("train", "test"):
        items = sorted(posts[split])
        if len(items) != _NEWS_COUNTS[split]:
            raise ValueError(
                f"{str(path)!r}: expected {_NEWS_COUNTS[split]} {split} posts under "
                f"20news-bydate-{split}/<group>/<id>, found {len(items)}"
            )
        labels = np.asarray([group for _, group, _ in items])
        groups[split] = set(labels.tolist())
        if len(groups[split]) != _NEWS_CLASSES:
            raise ValueError(
                f"{str(path)!r}: expected {_NEWS_CLASSES} {split} groups, "
                f"found {len(groups[split])}"
            )
        out += [[text for _, _, text in items], labels]
    if groups["train"] != groups["test"]:
        diff = sorted(groups["train"] ^ groups["test"])
        raise ValueError(f"{str(path)!r}: train and test groups differ: {diff}")
    docs_train, y_train, docs_test, y_test = out
    return docs_train, y_train, docs_test, y_test
