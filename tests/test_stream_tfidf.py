"""tf-idf streamed: the idf counted in a parse pass, every epoch weighing the cached counts,
the features and the model those of the whole file in memory, bit for bit."""

import contextlib
import io
import json
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from perceptrons import AveragedPerceptron, Perceptron, TextFeaturizer
from perceptrons.cli import main
from perceptrons.io import stream
from perceptrons.io.formats import DataFormatError, read_data
from perceptrons.io.persist import load
from perceptrons.io.stream import fit_stream

SUFFIX = {"fasttext": "ft", "tsv": "tsv", "vw": "vw", "counts": "review"}


def _dense(coef):
    """A coefficient matrix as an array (a hashed model trains in the rows its data
    reaches and publishes a CSR ``coef_``)."""
    return coef.toarray() if sp.issparse(coef) else coef


def _text_file(directory, fmt, n=90, seed=0, bad_line=None):
    """``n`` labelled documents in ``fmt``: repeated terms (sublinear tf), non-ASCII
    words, blank lines; vw with importance weights and negative values."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(25)] + ["naïve", "café"]
    lines = []
    for i in range(n):
        label = ("a", "b", "c")[i % 3]
        terms = rng.choice(words[i % 3 :: 3], size=4).tolist() + rng.choice(words, 3).tolist()
        if fmt == "fasttext":
            lines.append(f"__label__{label} " + " ".join(terms))
        elif fmt == "tsv":
            lines.append(f"{label}\t" + " ".join(terms))
        elif fmt == "vw":
            values = " ".join(f"{t}:{rng.integers(-2, 4) or 1}" for t in terms)
            importance = f" {rng.choice([0.5, 2, 3])}" if i % 4 else ""
            lines.append(f"{i % 3 + 1}{importance} |words {values} |other x{i % 5}")
        else:  # counts: ASCII names, positive counts
            counts = " ".join(f"{t if t.isascii() else 'x'}:{i % 3 + 1}" for t in terms)
            lines.append(f"{counts} #label#:{label}")
        if i % 31 == 4:
            lines.append("")
    if bad_line is not None:
        lines[bad_line - 1] = {"fasttext": "no label", "vw": "xyz | a"}[fmt]
    path = directory / f"train.{SUFFIX[fmt]}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _featurizer(fmt, **params):
    pairs = {"tokenizer": "pairs"} if fmt in ("vw", "counts") else {}
    return TextFeaturizer(n_features=2**9, hashed_names=True, **pairs, **params)


class _Recorder:
    """An incremental classifier that keeps what it is given."""

    def __init__(self):
        self.seen = []

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        self.seen.append((X, y, sample_weight))
        return self


@settings(max_examples=25, deadline=None)
@given(
    fmt=st.sampled_from(["fasttext", "tsv", "vw", "counts"]),
    chunk_size=st.integers(1, 100),
    compiled=st.booleans(),
    sublinear=st.sampled_from([None, False]),
)
def test_streamed_tfidf_features_are_fit_transform_of_the_whole_file(
    tmp_path_factory, fmt, chunk_size, compiled, sublinear
):
    path = _text_file(tmp_path_factory.mktemp("tfidf"), fmt)
    featurizer = _featurizer(fmt, sublinear_tf=sublinear)
    recorder = _Recorder()
    # compiled: vw and counts through the compiled hashing reader, else read_data
    with mock.patch.object(stream, "_COMPILED_TEXT", compiled):
        fit_stream(recorder, path, chunk_size=chunk_size, featurizer=featurizer)
    whole = read_data(path)
    reference = _featurizer(fmt, sublinear_tf=sublinear)
    expected = reference.fit_transform(whole.texts)
    X = sp.vstack([X for X, _, _ in recorder.seen], format="csr")
    assert X.shape == expected.shape
    assert_array_equal(X.indptr, expected.indptr)
    assert_array_equal(X.indices, expected.indices)
    assert_array_equal(X.data, expected.data)  # exactly equal floats
    assert_array_equal(np.concatenate([y for _, y, _ in recorder.seen]), whole.y)
    if whole.sample_weight is not None:
        weights = [np.ones(len(y)) if w is None else w for _, y, w in recorder.seen]
        assert_array_equal(np.concatenate(weights), whole.sample_weight)
    # Fitted as in memory: the idf, the names, the features of new documents.
    assert_array_equal(featurizer._weighting.idf_, reference._weighting.idf_)
    assert featurizer.feature_names() == reference.feature_names()
    new = [whole.texts[0], whole.texts[-1] + " " + whole.texts[1]]
    assert_array_equal(featurizer.transform(new).toarray(), reference.transform(new).toarray())


@pytest.mark.parametrize("fmt", ["fasttext", "vw"])
@pytest.mark.parametrize("epochs", [1, 3])
def test_streamed_tfidf_model_is_the_in_memory_fit(tmp_path, fmt, epochs):
    path = _text_file(tmp_path, fmt, n=150)
    featurizer = _featurizer(fmt)
    streamed = AveragedPerceptron(shuffle=False, update="pa-i")
    fit_stream(streamed, path, epochs=epochs, chunk_size=40, featurizer=featurizer)
    whole = read_data(path)
    X = _featurizer(fmt).fit_transform(whole.texts)
    in_memory = AveragedPerceptron(shuffle=False, update="pa-i", max_epochs=epochs)
    in_memory.fit(X, whole.y, sample_weight=whole.sample_weight)
    assert_array_equal(_dense(streamed.coef_), _dense(in_memory.coef_))
    assert_array_equal(streamed.intercept_, in_memory.intercept_)
    assert streamed.classes_.tolist() == in_memory.classes_.tolist()


@pytest.mark.parametrize(("fmt", "chunk_size"), [("fasttext", 10), ("vw", 36), ("vw", 37)])
def test_a_bad_line_stops_the_parse_pass_at_its_line_and_leaves_no_cache(tmp_path, fmt, chunk_size):
    path = _text_file(tmp_path, fmt, bad_line=37)
    directory = tmp_path / "cache"
    directory.mkdir()
    featurizer, model = _featurizer(fmt), Perceptron()
    with pytest.raises(DataFormatError, match=rf"train\.{SUFFIX[fmt]}:37: "):
        fit_stream(model, path, chunk_size=chunk_size, featurizer=featurizer, cache=directory)
    assert list(directory.iterdir()) == []
    # Neither trained nor fitted: the idf is set once the whole file is counted.
    assert not hasattr(model, "coef_") and not hasattr(featurizer, "n_features_out_")


def test_one_epoch_of_tfidf_trains_from_the_cache_then_deletes_it(tmp_path):
    path = _text_file(tmp_path, "fasttext")
    directory = tmp_path / "cache"
    directory.mkdir()
    during, seen = [], []
    fit_stream(
        Perceptron(),
        path,
        featurizer=_featurizer("fasttext"),
        cache=directory,
        progress=lambda n_bytes, n_examples: seen.append((n_bytes, n_examples)),
        on_epoch=lambda record: during.append(list(directory.iterdir())),
    )
    assert len(during) == 1 and len(during[0]) == 1  # the epoch ran with a cache file
    assert list(directory.iterdir()) == []
    # The parse pass reports its bytes with no examples, then the epoch its examples.
    size = path.stat().st_size
    assert sum(b for b, n in seen if n == 0) == size and sum(n for _, n in seen) == 90


def test_without_a_cache_every_epoch_parses_the_text_with_the_idf_known(tmp_path, monkeypatch):
    path = _text_file(tmp_path, "vw")
    cached = AveragedPerceptron(shuffle=False)
    fit_stream(cached, path, epochs=2, chunk_size=25, featurizer=_featurizer("vw"))
    passes = []
    batches = stream._text_batches
    monkeypatch.setattr(stream, "_text_batches", lambda *a: passes.append(1) or batches(*a))
    uncached = AveragedPerceptron(shuffle=False)
    fit_stream(uncached, path, epochs=2, chunk_size=25, featurizer=_featurizer("vw"), cache=False)
    assert len(passes) == 3  # the parse pass, then each epoch
    assert_array_equal(_dense(uncached.coef_), _dense(cached.coef_))


def _cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(arg) for arg in args])
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("fmt", ["fasttext", "vw"])
def test_train_and_train_stream_give_the_same_model_by_default(tmp_path, fmt):
    """The text defaults agree (tf-idf), so --stream only bounds memory: in a fixed
    order, the same model file's weights and featurizer."""
    path = _text_file(tmp_path, fmt, n=120)
    common = ["train", path, "--no-shuffle", "--epochs", "2", "--quiet"]
    status, _, err = _cli(*common, "-o", tmp_path / "memory.npz")
    assert status == 0, err
    status, out, err = _cli(*common, "-o", tmp_path / "stream.npz", "--stream", "--json")
    assert status == 0, err
    assert json.loads(out)["streamed"] is True
    (_, memory_featurizer), (_, memory_model) = load(tmp_path / "memory.npz").steps
    (_, featurizer), (_, model) = load(tmp_path / "stream.npz").steps
    assert featurizer.weighting == "tfidf"
    assert_array_equal(featurizer._weighting.idf_, memory_featurizer._weighting.idf_)
    assert_array_equal(_dense(model.coef_), _dense(memory_model.coef_))
    assert_array_equal(model.intercept_, memory_model.intercept_)
