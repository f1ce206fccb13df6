"""The parsed cache of streamed epochs after the first (perceptrons.io._cache)."""

import contextlib
import errno
import io
import os

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

from perceptrons import AveragedPerceptron, Perceptron, TextFeaturizer, _validation
from perceptrons.cli import main
from perceptrons.io import _cache
from perceptrons.io._cache import CacheError, ChunkCache
from perceptrons.io.persist import load
from perceptrons.io.stream import fit_stream


def _svmlight(path, n=200, seed=0):
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        columns = sorted(rng.choice(np.arange(1, 30), size=rng.integers(1, 6), replace=False))
        cells = " ".join(f"{j}:{rng.integers(-40, 40) / 7:.6g}" for j in columns)
        lines.append(f"{(i * 7) % 3} {cells}")
        if i % 37 == 5:
            lines.append("")
    path.write_text("\n".join(lines) + "\n")
    return path


def _vw(path, n=150, seed=3):
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        label = 1 if i % 2 else -1
        words = " ".join(f"w{j}:{rng.integers(1, 4)}" for j in rng.integers(0, 30, size=4))
        importance = f" {rng.choice([0.5, 2, 3])}" if i % 4 else ""
        lines.append(f"{label}{importance} |words {words} ÿé")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _fasttext(path, n=150, seed=1):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(40)] + ["naïve", "日本"]
    lines = [
        f"__label__{('a', 'b', 'c')[i % 3]} " + " ".join(rng.choice(words, size=4))
        for i in range(n)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _case(kind, tmp_path):
    """(path, fit_stream options, estimator maker) for each way a chunk is read."""
    if kind == "svmlight":
        return _svmlight(tmp_path / "d.svm"), {}, lambda: Perceptron(random_state=0)
    if kind == "svmlight-window":
        options = {"shuffle_window": 3, "random_state": 5}
        return _svmlight(tmp_path / "d.svm"), options, lambda: AveragedPerceptron(random_state=1)
    if kind == "vw":
        options = {
            "featurizer": lambda: TextFeaturizer(weighting="tf", tokenizer="pairs", n_features=2**8)
        }
        return _vw(tmp_path / "d.vw"), options, lambda: AveragedPerceptron(random_state=2)
    if kind == "vw-window":
        options = {
            "featurizer": lambda: TextFeaturizer(
                weighting="tf", tokenizer="pairs", n_features=2**8
            ),
            "shuffle_window": 2,
            "random_state": 3,
        }
        return _vw(tmp_path / "d.vw"), options, lambda: AveragedPerceptron(random_state=2)
    if kind == "vw-tfidf":  # the parse pass writes the cache; every epoch reads it
        options = {"featurizer": lambda: TextFeaturizer(tokenizer="pairs", n_features=2**8)}
        return _vw(tmp_path / "d.vw"), options, lambda: AveragedPerceptron(random_state=2)
    weighting = "tfidf" if kind == "fasttext-tfidf" else "tf"
    options = {"featurizer": lambda: TextFeaturizer(weighting=weighting, n_features=2**9)}
    return _fasttext(tmp_path / "d.ft"), options, lambda: Perceptron(random_state=4)


def _fit(path, options, make, **extra):
    options = dict(options)
    if "featurizer" in options:
        options["featurizer"] = options["featurizer"]()
    model = make()
    report = fit_stream(model, path, epochs=3, chunk_size=23, **options, **extra)
    return model, report


@pytest.mark.parametrize(
    "kind",
    ["svmlight", "svmlight-window", "vw", "vw-window", "fasttext", "vw-tfidf", "fasttext-tfidf"],
)
def test_the_cache_gives_the_model_of_reading_the_text_every_epoch(tmp_path, kind, monkeypatch):
    path, options, make = _case(kind, tmp_path)
    text_model, text_report = _fit(path, options, make, cache=False)
    reads = []
    chunks = ChunkCache.chunks

    def counted(self):
        reads.append(self.path)
        yield from chunks(self)

    monkeypatch.setattr(ChunkCache, "chunks", counted)
    directory = tmp_path / "cache"
    directory.mkdir()
    cached_model, cached_report = _fit(path, options, make, cache=directory)
    # epochs 2 and 3 read the cache; all 3 after tf-idf's parse pass
    assert len(reads) == (3 if kind.endswith("tfidf") else 2)
    assert_array_equal(cached_model.coef_, text_model.coef_)
    assert_array_equal(cached_model.intercept_, text_model.intercept_)
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in text_report.epochs]
    assert [{k: v for k, v in r.items() if k != "seconds"} for r in cached_report.epochs] == strip
    assert list(directory.iterdir()) == []  # deleted at the end


def test_the_cache_lives_in_the_directory_given_and_only_during_the_run(tmp_path):
    path = _svmlight(tmp_path / "d.svm")
    directory = tmp_path / "cache"
    directory.mkdir()
    seen = []
    fit_stream(
        Perceptron(),
        path,
        epochs=2,
        chunk_size=50,
        cache=directory,
        on_epoch=lambda record: seen.append([p.name for p in directory.iterdir()]),
    )
    assert len(seen[0]) == 1 and seen[0][0].startswith("perceptrons-")
    assert seen[0][0].endswith(".cache") and seen[1] == seen[0]
    assert list(directory.iterdir()) == []


def test_one_epoch_or_cache_false_writes_no_cache(tmp_path, monkeypatch):
    made = []
    monkeypatch.setattr(_cache, "ChunkCache", lambda *a: made.append(a))
    path = _svmlight(tmp_path / "d.svm")
    fit_stream(Perceptron(), path, epochs=1)
    fit_stream(Perceptron(), path, epochs=2, cache=False)
    assert made == []


def test_the_cache_is_deleted_after_an_error(tmp_path):
    path = _svmlight(tmp_path / "d.svm")
    directory = tmp_path / "cache"
    directory.mkdir()

    def stop(record):
        assert len(list(directory.iterdir())) == 1
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fit_stream(Perceptron(), path, epochs=3, chunk_size=40, cache=directory, on_epoch=stop)
    assert list(directory.iterdir()) == []


def test_a_cache_cut_short_is_a_one_line_error(tmp_path):
    path = _svmlight(tmp_path / "d.svm")
    directory = tmp_path / "cache"
    directory.mkdir()

    def cut(record):
        (cache_file,) = directory.iterdir()
        os.truncate(cache_file, cache_file.stat().st_size // 2)

    with pytest.raises(CacheError, match=r"cut short \(.* bytes of a chunk read back\)"):
        fit_stream(Perceptron(), path, epochs=2, chunk_size=40, cache=directory, on_epoch=cut)
    assert list(directory.iterdir()) == []


@pytest.mark.parametrize("kind", ["svmlight", "fasttext-tfidf"])
def test_a_full_disk_falls_back_to_the_text_with_a_warning(tmp_path, monkeypatch, kind):
    path, options, make = _case(kind, tmp_path)
    expected, _ = _fit(path, options, make, cache=False)
    fdopen = os.fdopen

    class FullDisk(io.BufferedRandom):
        written = 0

        def write(self, data):
            FullDisk.written += 1
            if FullDisk.written > 4:  # a few arrays fit, then the disk is full
                raise OSError(errno.ENOSPC, "No space left on device")
            return super().write(data)

    monkeypatch.setattr(_cache.os, "fdopen", lambda fd, mode: FullDisk(fdopen(fd, "w+b", 0)))
    with pytest.warns(RuntimeWarning, match="No space left on device.*read the text again"):
        model, _ = _fit(path, options, make, cache=tmp_path)
    assert FullDisk.written > 4
    assert_array_equal(model.coef_, expected.coef_)
    assert [p for p in tmp_path.iterdir() if p.suffix == ".cache"] == []


@pytest.mark.parametrize("where", ["missing", "a-file"])
def test_a_cache_directory_that_cannot_hold_it_is_a_clear_error(tmp_path, where):
    (tmp_path / "a-file").write_text("")
    path = _svmlight(tmp_path / "d.svm")
    with pytest.raises(CacheError, match=f"cannot create the parsed cache in .*{where}: "):
        fit_stream(Perceptron(), path, epochs=2, cache=tmp_path / where)


def _cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(arg) for arg in args])
    return status, err.getvalue()


def test_cli_no_cache_and_cache_dir(tmp_path):
    path = _svmlight(tmp_path / "d.svm")
    directory = tmp_path / "cache"
    directory.mkdir()
    common = [
        "train",
        path,
        "--stream",
        "--epochs",
        "3",
        "--chunk-size",
        "30",
        "--seed",
        "0",
        "--quiet",
    ]
    assert _cli(*common, "-o", tmp_path / "a.npz", "--no-cache")[0] == 0
    assert _cli(*common, "-o", tmp_path / "b.npz", "--cache-dir", directory)[0] == 0
    assert list(directory.iterdir()) == []
    a, b = load(tmp_path / "a.npz"), load(tmp_path / "b.npz")
    assert_array_equal(a.coef_, b.coef_)
    status, err = _cli(*common, "-o", tmp_path / "c.npz", "--cache-dir", tmp_path / "nowhere")
    assert status != 0 and not (tmp_path / "c.npz").exists()
    assert err.count("\n") == 1 and "cannot create the parsed cache in" in err


# ------------------------------------------------- later chunks of a checked reader


def _engine_after_one_batch(n_features=6, classes=(-1.0, 1.0)):
    model = Perceptron(random_state=0)
    engine = model._engine()
    X = sp.random(8, n_features, density=0.5, format="csr", random_state=0)
    y = np.resize(np.array(classes), 8)
    engine.train_batch(X, y, np.array(classes), checked=True)
    return model, engine, X, y


def test_a_checked_batch_trains_as_an_unchecked_one():
    model, engine, X, y = _engine_after_one_batch()
    twin, twin_engine, _, _ = _engine_after_one_batch()
    assert _validation.checked_batch(model, X, y)
    engine.train_batch(X, y, np.array([-1.0, 1.0]), checked=True)
    twin_engine.train_batch(X, y, np.array([-1.0, 1.0]))
    assert_array_equal(model._state.weights, twin._state.weights)


def test_what_a_checked_batch_must_be_is_still_checked():
    model, engine, X, y = _engine_after_one_batch()
    classes = np.array([-1.0, 1.0])
    wider = sp.random(8, 7, density=0.5, format="csr", random_state=1)
    assert not _validation.checked_batch(model, wider, y)
    with pytest.raises(ValueError, match="features"):
        engine.train_batch(wider, y, classes, checked=True)
    assert not _validation.checked_batch(model, X.toarray(), y)
    assert not _validation.checked_batch(model, X, y[:-1])
    assert not _validation.checked_batch(model, X.astype(np.float32), y)
    with pytest.raises(ValueError, match=r"2\.0"):  # a label outside classes_, as unchecked
        engine.train_batch(X, np.where(y > 0, 2.0, y), classes, checked=True)
    fractional, _, _, _ = _engine_after_one_batch(classes=(0.0, 1.0))
    fractional.classes_ = np.array([0.0, 0.5])
    assert not _validation.checked_batch(fractional, X, np.zeros(8))
