"""SequenceTagger: training, prediction, early stopping, model files, parameter mixing and
bad input. Its exactness against the plain structured perceptron is in
test_tagger_reference.py."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import perceptrons
from perceptrons import SequenceTagger
from perceptrons._kernels import sequence as _sequence_kernels
from perceptrons._sequences import TagCodes
from perceptrons._states import TrainingState
from perceptrons.datasets import shared_data_dir
from perceptrons.parallel import mix_threads
from perceptrons.sequence.tagger import _decoding_tables

WORDS = ["the", "a", "dog", "cat", "barks", "sleeps", "big", "small", "runs", "."]
TAG_OF = {
    "the": "DT", "a": "DT", "dog": "NN", "cat": "NN", "barks": "VBZ", "sleeps": "VBZ",
    "big": "JJ", "small": "JJ", "runs": "VBZ", ".": ".",
}  # fmt: skip


def _corpus(n_sentences=60, seed=0):
    """Sentences of a tiny grammar (DT JJ* NN VBZ .), and their tags."""
    rng = np.random.RandomState(seed)
    X, y = [], []
    for _ in range(n_sentences):
        words = [["the", "a"][rng.randint(2)]]
        words += [["big", "small"][rng.randint(2)] for _ in range(rng.randint(3))]
        words += [["dog", "cat"][rng.randint(2)], ["barks", "sleeps", "runs"][rng.randint(3)], "."]
        X.append(words)
        y.append([TAG_OF[w] for w in words])
    return X, y


def test_learns_a_tiny_grammar():
    X, y = _corpus()
    tagger = SequenceTagger(max_epochs=5, random_state=0).fit(X, y)
    assert list(tagger.classes_) == [".", "DT", "JJ", "NN", "VBZ"]
    assert tagger.score(X, y) == 1.0
    predicted = tagger.predict([["a", "small", "big", "cat", "sleeps", "."]])
    assert predicted == [["DT", "JJ", "JJ", "NN", "VBZ", "."]]
    assert tagger.coef_.shape == (5, tagger.n_features_in_)
    assert tagger.transitions_.shape == (6, 5)
    assert [r["epoch"] for r in tagger.history_] == list(range(1, tagger.n_iter_ + 1))
    assert tagger.history_[0]["examples"] == len(X)


def test_tokens_with_extra_columns_and_hashing():
    X, y = _corpus()
    columns = [[(w, t) for w, t in zip(s, tags, strict=True)] for s, tags in zip(X, y, strict=True)]
    tagger = SequenceTagger(n_features=2**10, max_epochs=3, random_state=0).fit(columns, y)
    assert tagger.n_features_in_ == 2**10
    assert tagger.score(columns, y) == 1.0  # the extra column is the answer


def test_same_random_state_same_model_and_shuffling_matters():
    X, y = _corpus(seed=1)
    X[0][1], y[0][1] = "dog", "JJ"  # a noisy tag: the visiting order changes the updates
    one = SequenceTagger(max_epochs=3, random_state=7).fit(X, y)
    two = SequenceTagger(max_epochs=3, random_state=7).fit(X, y)
    assert np.array_equal(one.coef_.toarray(), two.coef_.toarray())
    assert np.array_equal(one.transitions_, two.transitions_)
    other = SequenceTagger(max_epochs=3, random_state=8).fit(X, y)
    assert not np.array_equal(one.coef_.toarray(), other.coef_.toarray())


def test_averaged_model_is_the_mean_of_the_weights_after_every_sentence():
    X, y = _corpus(n_sentences=12, seed=3)
    X[2][0], y[2][0] = "dog", "DT"  # noise: updates late in the epoch too
    averaged = SequenceTagger(max_epochs=1, shuffle=False, average=True).fit(X, y)
    states = []
    step = SequenceTagger(max_epochs=1, shuffle=False, average=False)
    step.partial_fit(X, y)  # same featurizer and tags as `averaged`
    step._lifecycle = TrainingState.zeros(step.n_features_in_ + 5, 5, False)
    data = step.featurizer_.transform(X)
    codes = step._engine().encode_targets(y)
    for i in range(len(X)):
        step._engine().run_epoch(step._state, data, codes, np.array([i]))
        states.append(step._state.weights.copy())
    running = np.mean(states, axis=0)
    n_features = averaged.n_features_in_
    np.testing.assert_allclose(averaged.coef_.toarray(), running[:n_features].T, rtol=0, atol=1e-12)
    np.testing.assert_allclose(averaged.transitions_, running[n_features:], rtol=0, atol=1e-12)


def test_partial_fit_continues_exactly_like_fit():
    X, y = _corpus(seed=4)
    X[3][0], y[3][0] = "big", "DT"
    fitted = SequenceTagger(max_epochs=3, shuffle=False).fit(X, y)
    stepped = SequenceTagger(shuffle=False)
    for _ in range(3):
        stepped.partial_fit(X, y)
    assert np.array_equal(fitted.coef_.toarray(), stepped.coef_.toarray())
    assert np.array_equal(fitted.transitions_, stepped.transitions_)


def test_mira_and_last_weights():
    X, y = _corpus(seed=5)
    for average in (True, False):
        tagger = SequenceTagger(update="mira", C=0.5, average=average, max_epochs=4, random_state=0)
        assert tagger.fit(X, y).score(X, y) == 1.0
    assert np.array_equal(
        np.concatenate([tagger.coef_.toarray().T, tagger.transitions_]), tagger._state.weights
    )


def test_fit_epochs_reports_progress_and_dev_scores():
    X, y = _corpus(seed=6)
    seen = []
    tagger = SequenceTagger(max_epochs=3, random_state=0)
    records = list(tagger.fit_epochs(X, y, progress=seen.append, dev=(X[:10], y[:10])))
    assert sum(seen) == 3 * len(X)
    assert [r["epoch"] for r in records] == [1, 2, 3]
    assert all(0.0 <= r["validation_score"] <= 1.0 for r in records)


def test_early_stopping_on_a_development_set():
    X, y = _corpus(seed=7)
    tagger = SequenceTagger(max_epochs=30, early_stopping=True, n_iter_no_change=2, random_state=0)
    tagger.fit(X, y, dev=(X[:20], y[:20]))
    # Perfect from an early epoch on: two epochs without a gain stop it.
    assert tagger.n_iter_ < 30
    assert tagger.history_[-1]["validation_score"] == 1.0
    without_dev = SequenceTagger(max_epochs=30, early_stopping=True, random_state=0).fit(X, y)
    assert without_dev.history_[-1]["mistakes"] == 0 and without_dev.n_iter_ < 30


def test_coef_keeps_only_the_nonzero_weights():
    X, y = _corpus(seed=9)
    tagger = SequenceTagger(max_epochs=2, random_state=0).fit(X, y)
    model = tagger._state.model()
    n_features = tagger.n_features_in_
    assert sp.issparse(tagger.coef_)
    assert tagger.coef_.nnz == np.count_nonzero(model[:n_features])
    assert tagger.coef_.nnz < model[:n_features].size  # some pairs were never updated
    assert np.array_equal(tagger.coef_.toarray(), model[:n_features].T)
    assert np.array_equal(tagger.transitions_, model[n_features:])
    # No published array is a view that keeps the dense model alive.
    published = [tagger.transitions_, tagger.coef_.data, tagger.coef_.indices, *tagger._decoding]
    for array in published:
        assert array.base is None or array.base.nbytes == array.nbytes


def test_a_loaded_model_saves_again_without_its_training_state(tmp_path):
    X, y = _corpus(seed=10)
    tagger = SequenceTagger(max_epochs=2, random_state=0).fit(X, y)
    perceptrons.save(tagger, tmp_path / "first.npz", resumable=False)
    loaded = perceptrons.load(tmp_path / "first.npz")
    perceptrons.save(loaded, tmp_path / "second.npz")  # only the model is left to save
    again = perceptrons.load(tmp_path / "second.npz")
    assert again.predict(X) == tagger.predict(X)
    assert np.array_equal(again.coef_.toarray(), tagger.coef_.toarray())
    assert np.array_equal(again.transitions_, tagger.transitions_)


@pytest.mark.parametrize("resumable", [True, False])
@pytest.mark.parametrize("params", [{}, {"n_features": 256}, {"average": False}])
def test_model_file_roundtrip(tmp_path, resumable, params):
    X, y = _corpus(seed=8)
    tagger = SequenceTagger(max_epochs=2, random_state=0, **params).fit(X, y)
    path = tmp_path / "tagger.npz"
    perceptrons.save(tagger, path, resumable=resumable)
    loaded = perceptrons.load(path)
    assert isinstance(loaded, SequenceTagger)
    assert loaded.predict(X) == tagger.predict(X)
    assert np.array_equal(loaded.coef_.toarray(), tagger.coef_.toarray())
    assert np.array_equal(loaded.transitions_, tagger.transitions_)
    assert loaded.resumable == resumable
    if resumable:
        tagger.partial_fit(X, y)
        loaded.partial_fit(X, y)
        assert np.array_equal(loaded.coef_.toarray(), tagger.coef_.toarray())
    else:
        with pytest.raises(ValueError, match="resumable=False"):
            loaded.partial_fit(X, y)


def test_model_file_with_a_corrupt_vocabulary_is_refused(tmp_path):
    X, y = _corpus(seed=9)
    tagger = SequenceTagger(max_epochs=1, random_state=0).fit(X, y)
    arrays, values = tagger._engine().export_state()
    keys = [k for k in arrays if k.startswith("featurizer_")]
    assert keys, "the vocabulary travels with the model"
    broken = {**arrays, keys[0]: arrays[keys[0]][::-1].copy()}
    fresh = SequenceTagger(max_epochs=1)
    fresh.classes_, fresh.n_features_in_ = tagger.classes_, tagger.n_features_in_
    with pytest.raises(ValueError):
        fresh._engine().import_state(broken, values)


@pytest.mark.parametrize("average", [True, False])
def test_one_shard_of_parameter_mixing_is_the_serial_fit(average):
    X, y = _corpus(seed=10)
    X[5][1], y[5][1] = "cat", "JJ"
    serial = SequenceTagger(max_epochs=3, random_state=0, average=average).fit(X, y)
    mixed = mix_threads(SequenceTagger(max_epochs=3, random_state=0, average=average), X, y, 1)
    assert np.array_equal(serial.coef_.toarray(), mixed.coef_.toarray())
    assert np.array_equal(serial.transitions_, mixed.transitions_)
    assert [r["mistakes"] for r in serial.history_] == [r["mistakes"] for r in mixed.history_]


def test_parameter_mixing_over_shards_learns():
    X, y = _corpus(n_sentences=80, seed=11)
    mixed = mix_threads(SequenceTagger(max_epochs=4, random_state=0), X, y, n_shards=2)
    assert [len(r["shard_mistakes"]) for r in mixed.history_] == [2, 2, 2, 2]
    assert mixed.score(X, y) == 1.0
    assert mixed.predict([["a", "dog", "runs", "."]]) == [["DT", "NN", "VBZ", "."]]


def test_unseen_gold_tag_counts_as_an_error_when_scoring():
    X, y = _corpus(seed=12)
    tagger = SequenceTagger(max_epochs=2, random_state=0).fit(X, y)
    gold = [list(tags) for tags in y[:4]]
    gold[0][0] = "NEVER-SEEN"
    n_tokens = sum(len(t) for t in gold)
    assert tagger.score(X[:4], gold) == pytest.approx((n_tokens - 1) / n_tokens)


@pytest.mark.parametrize(
    ("X", "y", "message"),
    [
        ([], [], "no sentence"),
        ([["a", "dog"], []], [["DT", "NN"], []], r"X\[1\] is an empty sentence"),
        ([["a", "dog"]], [["DT"]], r"y\[0\] has 1 tags for a sentence of 2 tokens"),
        ([["a", "dog"]], [["DT", "NN"], ["DT"]], "2 tag sequences for 1 sentences"),
        ("a dog", [["DT", "NN"]], "list of sentences"),
        ([["a", "dog"]], [["DT", 3]], "not a str"),
        ([["a", "dog"]], [["DT", "DT"]], "at least two distinct tags"),
    ],
)
def test_bad_training_input_is_a_clear_error(X, y, message):
    tagger = SequenceTagger(max_epochs=1)
    with pytest.raises(ValueError, match=message):
        tagger.fit(X, y)
    assert not hasattr(tagger, "coef_")


def test_refusals_name_the_problem():
    X, y = _corpus(seed=13)
    with pytest.raises(ValueError, match="'update' must be one of"):
        SequenceTagger(update="pa").fit(X, y)
    with pytest.raises(ValueError, match="min_count"):
        SequenceTagger(n_features=64, min_count=2).fit(X, y)
    tagger = SequenceTagger(max_epochs=1, random_state=0).fit(X, y)
    before = tagger.coef_.toarray()
    with pytest.raises(ValueError, match="never declared"):
        tagger.partial_fit([["the", "dog"]], [["DT", "NOUN"]])
    assert np.array_equal(tagger.coef_.toarray(), before)  # a refused call changes nothing
    # Composed of the online learners' training, not a linear classifier: it has no
    # sparsify/densify/decision_function to refuse.
    assert not any(hasattr(tagger, name) for name in ("sparsify", "densify", "decision_function"))
    with pytest.raises(ValueError, match="sample_weight"):
        tagger.score(X, y, sample_weight=np.ones(len(X)))


def test_run_epoch_checks_what_the_kernel_reads():
    X, y = _corpus(seed=14)
    tagger = SequenceTagger(max_epochs=1, random_state=0).fit(X, y)
    data = tagger.featurizer_.transform(X)
    codes = tagger._engine().encode_targets(y)
    state = tagger._engine().new_state(tagger.n_features_in_)
    with pytest.raises(ValueError, match="order must index"):
        tagger._engine().run_epoch(state, data, codes, np.array([len(X)]))
    bad = TagCodes(codes.offsets, np.where(codes.codes == 0, 99, codes.codes))
    with pytest.raises(ValueError, match="tag codes must lie"):
        tagger._engine().run_epoch(state, data, bad, np.arange(len(X)))
    with pytest.raises(ValueError, match="do not fit"):
        tagger._engine().run_epoch(TrainingState.zeros(3, 5, True), data, codes, np.arange(len(X)))


@pytest.fixture(scope="module")
def conll2000():
    from perceptrons.io.sequences import read_conll

    shared = shared_data_dir()
    if shared is None or not (shared / "conll2000" / "train.txt").exists():
        pytest.skip("CoNLL-2000 is absent (../shared/data/conll2000, or $PERCEPTRONS_DATA)")
    root = shared / "conll2000"
    return read_conll(root / "train.txt"), read_conll(root / "test.txt")


def test_chunks_conll2000(conll2000):
    from perceptrons.chunking import chunk_scores

    train, test = conll2000
    tagger = SequenceTagger(max_epochs=2, random_state=0).fit(
        train.sentences[:3000], train.tags[:3000]
    )
    predicted = tagger.predict(test.sentences[:500])
    # The full benchmark (10 epochs, all data) reaches about 94; this small run well above 85.
    assert chunk_scores(test.tags[:500], predicted)["overall"]["f1"] > 0.85


@pytest.mark.parametrize("n_tags", [2, 5, 40])
def test_decoding_tables_give_the_dense_rows_sums_exactly(n_tags):
    rng = np.random.default_rng(n_tags)
    n_features = 60
    weights = np.zeros((n_features + n_tags + 1, n_tags))
    for f in range(n_features):  # rows from empty to full, with rounding-prone values
        tags = rng.choice(n_tags, size=rng.integers(0, n_tags + 1), replace=False)
        weights[f, tags] = rng.normal(size=tags.size) * 10.0 ** rng.integers(-3, 4)
    by_feature = sp.csr_matrix(weights[:n_features])
    tables = _decoding_tables(by_feature)
    lengths = np.diff(tables[0])
    assert (lengths == n_tags).any()  # dense rows
    if n_tags > 2:
        assert ((lengths > 0) & (lengths < n_tags)).any()  # rows of (tag, weight) pairs
    lengths = rng.integers(1, 7, size=20)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    per_token = rng.integers(0, 9, size=offsets[-1])
    indptr = np.concatenate([[0], np.cumsum(per_token)]).astype(np.int64)
    indices = rng.integers(0, n_features, size=indptr[-1]).astype(np.int64)
    expected = np.empty((offsets[-1], n_tags))
    split = np.empty_like(expected)
    _sequence_kernels.emissions(indptr, indices, weights, 0, offsets[-1], expected)
    _sequence_kernels.split_emissions(indptr, indices, tables, 0, offsets[-1], split)
    assert np.array_equal(split, expected)
    transitions = rng.normal(size=(n_tags + 1, n_tags))
    weights[n_features:] = transitions
    decoded = np.empty(offsets[-1], dtype=np.int64)
    _sequence_kernels.decode(indptr, indices, offsets, tables, transitions, decoded)
    for s in range(len(lengths)):
        first, last = offsets[s], offsets[s + 1]
        delta, back = np.empty((last - first, n_tags)), np.empty((last - first, n_tags), int)
        path = np.empty(last - first, dtype=np.int64)
        _sequence_kernels.viterbi(
            expected[first:last], last - first, transitions, delta, back, path
        )
        assert np.array_equal(decoded[first:last], path)
