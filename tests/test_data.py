"""Tests of the public data set loaders (:mod:`perceptrons.datasets`) and of
:func:`perceptrons.io.formats.read_idx`.

Tests on the real data skip (with the reason) when the shared data directory or
the data file is absent; the error-path tests use tiny files in ``tmp_path``.
"""

from __future__ import annotations

import gzip
import io
import struct
import tarfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from perceptrons.datasets import (
    DATA_ENV_VAR,
    load_20newsgroups,
    load_a9a,
    load_mnist,
    load_sentiment,
    shared_data_dir,
)
from perceptrons.io.formats import read_idx

# --------------------------------------------------------------------------- helpers


def _require(relpath: str) -> Path:
    """Return the shared data directory, or skip if it or ``relpath`` is absent."""
    root = shared_data_dir()
    if root is None:
        pytest.skip(
            f"shared data directory not found (set {DATA_ENV_VAR} or place it at "
            "<repo root>/../shared/data)"
        )
    if not (root / relpath).exists():
        pytest.skip(f"data file {root / relpath} is absent")
    return root


def _idx_bytes(array: np.ndarray, type_code: int = 0x08) -> bytes:
    header = bytes([0, 0, type_code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.tobytes()


def _write_mnist(directory: Path, n_train: int = 3, n_test: int = 2, n_labels=None) -> None:
    rng = np.random.default_rng(0)
    mnist = directory / "mnist"
    mnist.mkdir(parents=True)
    for split, n in (("train", n_train), ("t10k", n_test)):
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        images[0, 0, 0], images[0, 0, 1] = 0, 255
        labels = rng.integers(0, 10, size=n if n_labels is None else n_labels, dtype=np.uint8)
        (mnist / f"{split}-images-idx3-ubyte.gz").write_bytes(gzip.compress(_idx_bytes(images)))
        (mnist / f"{split}-labels-idx1-ubyte").write_bytes(_idx_bytes(labels))


# --------------------------------------------------------------------------- module fixtures


@pytest.fixture(scope="module")
def sentiment():
    _require("sentiment/all_sentiment_shuffled.first5000.txt")
    return load_sentiment()


@pytest.fixture(scope="module")
def a9a():
    _require("a9a/a9a")
    _require("a9a/a9a.t")
    return load_a9a()


@pytest.fixture(scope="module")
def news():
    _require("20newsgroups/20news-bydate.tar.gz")
    return load_20newsgroups()


@pytest.fixture(scope="module")
def mnist():
    _require("mnist/train-images-idx3-ubyte.gz")
    return load_mnist()


# --------------------------------------------------------------------------- real data


def test_sentiment_real(sentiment):
    docs_train, y_train, docs_test, y_test = sentiment
    assert len(docs_train) == len(y_train) == 4000
    assert len(docs_test) == len(y_test) == 1000
    y = np.concatenate([y_train, y_test])
    assert set(y.tolist()) == {"pos", "neg"}
    assert int(np.sum(y == "pos")) == 2527
    assert int(np.sum(y == "neg")) == 2473
    assert all(isinstance(d, str) and d for d in docs_train[:50])
    # The domain / label / id fields are not part of the text.
    assert not docs_train[0].startswith(("music", "books", "dvd", "camera", "health"))
    assert docs_train[0].startswith("i bought this album")


def test_a9a_real(a9a):
    X_train, y_train, X_test, y_test = a9a
    assert sp.issparse(X_train) and X_train.format == "csr"
    assert sp.issparse(X_test) and X_test.format == "csr"
    assert X_train.shape == (32561, 123)
    assert X_test.shape == (16281, 123)
    assert X_train.dtype == np.float64
    # int32 indices: scikit-learn's SGDClassifier rejects int64-indexed CSR.
    assert X_train.indices.dtype == X_train.indptr.dtype == np.int32
    assert X_train.has_sorted_indices
    assert y_train.shape == (32561,) and y_test.shape == (16281,)
    assert set(np.unique(y_train).tolist()) == {-1, 1}
    assert set(np.unique(y_test).tolist()) == {-1, 1}
    assert set(np.unique(X_train.data).tolist()) == {1.0}


def test_20newsgroups_real(news):
    docs_train, y_train, docs_test, y_test = news
    assert len(docs_train) == len(y_train) == 11314
    assert len(docs_test) == len(y_test) == 7532
    assert len(np.unique(y_train)) == len(np.unique(y_test)) == 20
    assert set(y_train.tolist()) == set(y_test.tolist())
    assert "alt.atheism" in set(y_train.tolist())
    # Raw posts: headers are kept.
    assert docs_train[0].startswith("From:")
    assert sum(d.startswith("From:") for d in docs_test[:100]) >= 90


def test_20newsgroups_deterministic_order(news):
    _, y_train, _, _ = news
    # Sorted member names: groups are contiguous and in sorted order.
    change = np.flatnonzero(y_train[1:] != y_train[:-1])
    assert len(change) == 19
    assert list(y_train[np.r_[0, change + 1]]) == sorted(set(y_train.tolist()))


def test_mnist_real(mnist):
    X_train, y_train, X_test, y_test = mnist
    assert X_train.shape == (60000, 784) and X_test.shape == (10000, 784)
    assert y_train.shape == (60000,) and y_test.shape == (10000,)
    assert X_train.dtype == np.float64 and X_train.flags.c_contiguous
    assert X_test.dtype == np.float64 and X_test.flags.c_contiguous
    assert X_train.min() == 0.0 and X_train.max() == 1.0
    assert X_test.min() >= 0.0 and X_test.max() <= 1.0
    assert np.issubdtype(y_train.dtype, np.integer)
    assert sorted(np.unique(y_train).tolist()) == list(range(10))
    assert y_train[:5].tolist() == [5, 0, 4, 1, 9]
    assert np.bincount(y_test).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


# --------------------------------------------------------------------------- directory lookup


def test_shared_data_dir_env_override(monkeypatch, tmp_path):
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path))
    assert shared_data_dir() == tmp_path.resolve()
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path / "nope"))
    assert shared_data_dir() is None


def test_missing_data_dir_message(monkeypatch, tmp_path):
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError, match=DATA_ENV_VAR):
        load_a9a()


@pytest.mark.parametrize(
    ("loader", "relpath"),
    [
        (load_sentiment, "sentiment/all_sentiment_shuffled.first5000.txt"),
        (load_a9a, "a9a/a9a"),
        (load_20newsgroups, "20newsgroups/20news-bydate.tar.gz"),
        (load_mnist, "mnist/train-images-idx3-ubyte.gz"),
    ],
)
def test_missing_file_message(loader, relpath, tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        loader(data_dir=tmp_path)
    message = str(info.value)
    assert str(tmp_path / relpath) in message
    assert DATA_ENV_VAR in message


def test_missing_file_via_env(monkeypatch, tmp_path):
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path))
    with pytest.raises(FileNotFoundError, match="all_sentiment_shuffled"):
        load_sentiment()


# --------------------------------------------------------------------------- IDX reader


@pytest.mark.parametrize("compress", [False, True])
def test_read_idx_roundtrip(tmp_path, compress):
    array = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    raw = _idx_bytes(array)
    path = tmp_path / "x.idx"
    path.write_bytes(gzip.compress(raw) if compress else raw)
    out = read_idx(path)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, array)


def test_read_idx_big_endian_int(tmp_path):
    array = np.array([[1, -2], [300000, 4]], dtype=">i4")
    path = tmp_path / "x.idx"
    path.write_bytes(_idx_bytes(array, type_code=0x0C))
    out = read_idx(path)
    assert out.dtype.isnative
    np.testing.assert_array_equal(out, array.astype(np.int32))


def test_read_idx_bad_magic(tmp_path):
    path = tmp_path / "bad.idx"
    path.write_bytes(b"\x01\x02\x08\x01" + struct.pack(">I", 2) + b"\x00\x00")
    with pytest.raises(ValueError, match=r"bad\.idx.*magic"):
        read_idx(path)


def test_read_idx_unknown_type_code(tmp_path):
    path = tmp_path / "bad.idx"
    path.write_bytes(b"\x00\x00\x07\x01" + struct.pack(">I", 2) + b"\x00\x00")
    with pytest.raises(ValueError, match="type code"):
        read_idx(path)


@pytest.mark.parametrize("compress", [False, True])
def test_read_idx_truncated_payload(tmp_path, compress):
    raw = _idx_bytes(np.zeros((4, 5), dtype=np.uint8))[:-3]
    path = tmp_path / "short.idx"
    path.write_bytes(gzip.compress(raw) if compress else raw)
    with pytest.raises(ValueError, match=r"short\.idx.*size mismatch.*17 payload bytes"):
        read_idx(path)


def test_read_idx_trailing_bytes(tmp_path):
    path = tmp_path / "long.idx"
    path.write_bytes(_idx_bytes(np.zeros(3, dtype=np.uint8)) + b"\x00")
    with pytest.raises(ValueError, match="size mismatch"):
        read_idx(path)


def test_read_idx_truncated_header(tmp_path):
    path = tmp_path / "hdr.idx"
    path.write_bytes(b"\x00\x00\x08\x03" + struct.pack(">I", 2))
    with pytest.raises(ValueError, match="truncated IDX header"):
        read_idx(path)
    path.write_bytes(b"\x00\x00")
    with pytest.raises(ValueError, match="too short"):
        read_idx(path)


def test_read_idx_corrupt_gzip(tmp_path):
    path = tmp_path / "x.idx.gz"
    path.write_bytes(gzip.compress(_idx_bytes(np.zeros(100, dtype=np.uint8)))[:-10])
    with pytest.raises(ValueError, match="gzip"):
        read_idx(path)


def test_read_idx_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nothing\.idx"):
        read_idx(tmp_path / "nothing.idx")


# --------------------------------------------------------------------------- loaders on tiny files


def test_load_mnist_tiny(tmp_path):
    _write_mnist(tmp_path)
    X_train, y_train, X_test, y_test = load_mnist(tmp_path)
    assert X_train.shape == (3, 784) and X_test.shape == (2, 784)
    assert y_train.shape == (3,) and y_test.shape == (2,)
    assert X_train.dtype == np.float64 and X_train.flags.c_contiguous
    assert X_train[0, 0] == 0.0 and X_train[0, 1] == 1.0
    X32 = load_mnist(tmp_path, dtype=np.float32)[0]
    assert X32.dtype == np.float32
    np.testing.assert_allclose(X32, X_train, rtol=1e-6)


def test_load_mnist_label_count_mismatch(tmp_path):
    _write_mnist(tmp_path, n_labels=4)
    with pytest.raises(ValueError, match=r"3 images.*4 labels"):
        load_mnist(tmp_path)


def test_load_sentiment_tiny_and_malformed(tmp_path):
    directory = tmp_path / "sentiment"
    directory.mkdir()
    path = directory / "all_sentiment_shuffled.first5000.txt"
    lines = [f"books {'pos' if i % 3 else 'neg'} {i}.txt word{i} other ." for i in range(10)]
    path.write_text("\n".join(lines), encoding="utf-8")
    docs_train, y_train, docs_test, _ = load_sentiment(tmp_path)
    assert len(docs_train) == 8 and len(docs_test) == 2
    assert docs_train[1] == "word1 other ."
    assert y_train.tolist()[:3] == ["neg", "pos", "pos"]
    path.write_text(lines[0] + "\nbooks maybe 1.txt hello\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 2.*label"):
        load_sentiment(tmp_path)


def test_load_a9a_corrupt(tmp_path):
    directory = tmp_path / "a9a"
    directory.mkdir()
    (directory / "a9a").write_text("+1 3:1 notafeature\n")
    (directory / "a9a.t").write_text("-1 3:1\n")
    with pytest.raises(ValueError, match="a9a"):
        load_a9a(tmp_path)


def test_load_20newsgroups_wrong_counts(tmp_path):
    directory = tmp_path / "20newsgroups"
    directory.mkdir()
    with tarfile.open(directory / "20news-bydate.tar.gz", "w:gz") as tar:
        for name in ("20news-bydate-train/sci.space/1", "20news-bydate-test/sci.space/2"):
            payload = b"From: someone\n\nhello \xe9"
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
    with pytest.raises(ValueError, match=r"expected 11314 train posts.*found 1"):
        load_20newsgroups(tmp_path)


def test_load_20newsgroups_corrupt(tmp_path):
    directory = tmp_path / "20newsgroups"
    directory.mkdir()
    (directory / "20news-bydate.tar.gz").write_bytes(b"not a tarball at all")
    with pytest.raises(ValueError, match="corrupt"):
        load_20newsgroups(tmp_path)
