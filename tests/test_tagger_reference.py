"""The structured perceptron's oracle, and the compiled tagger against it.

First the oracle of :mod:`perceptrons.reference.sequence` is checked on its own: its
brute-force decoder against a plain Viterbi written here (ties included), its average
against the mean of its own last weights after every sentence, MIRA's step against its
definition. Then :class:`perceptrons.SequenceTagger` is fitted on random sentences and
its weights, predictions and mistakes per epoch are compared with the oracle fed the
same feature columns, tag codes and visiting orders (to 1e-9; vocabulary and hashed
features, perceptron and MIRA, averaged or not), as are partial_fit's batches; parameter
mixing with one shard (threads or Dask) must be the serial fit bit for bit.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perceptrons import SequenceTagger
from perceptrons import reference as ref
from perceptrons.parallel import ParameterMixing, mix_threads

SETTINGS = settings(max_examples=40, deadline=None)
TOL = {"atol": 1e-9, "rtol": 1e-9}


# --------------------------------------------------------------------------- helpers


def viterbi(sentence, W, F, K):
    """First-order Viterbi, summing in the oracle's order; the lowest index wins ties."""
    if not sentence:
        return []
    emissions = []
    for token in sentence:
        row = []
        for j in range(K):
            e = 0.0
            for f in token:
                e = e + W[f, j]
            row.append(e)
        emissions.append(row)
    delta = [W[F + K, j] + emissions[0][j] for j in range(K)]
    backpointers = []
    for t in range(1, len(sentence)):
        new_delta, pointers = [], []
        for j in range(K):
            best_i, best = 0, delta[0] + W[F, j]
            for i in range(1, K):
                candidate = delta[i] + W[F + i, j]
                if candidate > best:
                    best_i, best = i, candidate
            new_delta.append(best + emissions[t][j])
            pointers.append(best_i)
        delta = new_delta
        backpointers.append(pointers)
    path = [int(np.argmax(delta))]
    for pointers in reversed(backpointers):
        path.append(pointers[path[-1]])
    return path[::-1]


def all_scores(sentence, W, F, K):
    """Every tag sequence's score, keyed by the sequence."""
    return {
        tags: ref.sequence_score(sentence, tags, W, F, K)
        for tags in itertools.product(range(K), repeat=len(sentence))
    }


def phi(sentence, tags, F, K):
    """φ(y) as a dense array shaped like W."""
    out = np.zeros((F + K + 1, K))
    for t, tag in enumerate(tags):
        for f in sentence[t]:
            out[f, tag] += 1
        out[F + (K if t == 0 else tags[t - 1]), tag] += 1
    return out


def prefixes(orders):
    """The first ``t`` sentences of the run, for ``t = 1 .. N``, each as one epoch: the
    last weights after the ``t``-th sentence are the oracle's weights on that prefix."""
    flat = np.concatenate(orders)
    return [[flat[:t]] for t in range(1, len(flat) + 1)]


@st.composite
def featurized(draw, max_sentences=6):
    """Random featurized sentences: ``(sentences, tags, F, K, orders)``."""
    F = draw(st.integers(1, 5))
    K = draw(st.integers(2, 3))
    n_sentences = draw(st.integers(1, max_sentences))
    sentences, tags = [], []
    for _ in range(n_sentences):
        n_tokens = draw(st.integers(1, 4))
        # A column may repeat within a token (it then counts twice), or a token be bare.
        sentences.append(
            [draw(st.lists(st.integers(0, F - 1), max_size=3)) for _ in range(n_tokens)]
        )
        tags.append(draw(st.lists(st.integers(0, K - 1), min_size=n_tokens, max_size=n_tokens)))
    n_epochs = draw(st.integers(1, 3))
    shuffle = draw(st.booleans())
    seed = draw(st.integers(0, 2**32 - 1))
    orders = ref.epoch_orders(n_sentences, n_epochs, shuffle=shuffle, random_state=seed)
    return sentences, tags, F, K, orders


@st.composite
def weights_and_sentence(draw, integer):
    F = draw(st.integers(1, 4))
    K = draw(st.integers(2, 3))
    n_tokens = draw(st.integers(0, 5))
    sentence = [draw(st.lists(st.integers(0, F - 1), max_size=3)) for _ in range(n_tokens)]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    shape = (F + K + 1, K)
    # Integers in {-1, 0, 1}: sums are exact and ties everywhere; normals: no ties.
    W = rng.integers(-1, 2, size=shape).astype(float) if integer else rng.normal(size=shape)
    return sentence, W, F, K


# --------------------------------------------------------------------------- the oracle


def test_score_is_summed_in_viterbis_order():
    # 0.1 + 0.2 + 0.3 differs from 0.1 + (0.2 + 0.3) in float64: the order is the contract.
    W = np.zeros((1 + 2 + 1, 2))
    W[3, 0] = 0.1  # start -> tag 0
    W[0, 0] = 0.2  # feature 0, tag 0
    W[1, 0] = 0.3  # tag 0 -> tag 0
    s = ref.sequence_score([[0], [0]], [0, 0], W, 1, 2)
    assert s == ((0.1 + (0.0 + 0.2)) + 0.3) + (0.0 + 0.2)
    assert ref.sequence_score([], [], W, 1, 2) == 0.0


def test_repeated_column_counts_twice():
    W = np.zeros((2 + 2 + 1, 2))
    W[1, 1] = 1.5
    assert ref.sequence_score([[1, 1, 0]], [1], W, 2, 2) == 3.0


@SETTINGS
@given(weights_and_sentence(integer=False))
def test_brute_force_equals_viterbi_without_ties(case):
    sentence, W, F, K = case
    assert ref.brute_force_decode(sentence, W, F, K) == viterbi(sentence, W, F, K)


@SETTINGS
@given(weights_and_sentence(integer=True))
def test_brute_force_equals_viterbi_with_ties(case):
    sentence, W, F, K = case
    decoded = ref.brute_force_decode(sentence, W, F, K)
    assert decoded == viterbi(sentence, W, F, K)
    scores = all_scores(sentence, W, F, K)
    best = max(scores.values())
    tied = [tags for tags, s in scores.items() if s == best]
    assert list(min(tied, key=lambda tags: tags[::-1])) == decoded


def test_ties_go_to_the_smallest_sequence_read_backwards():
    F, K = 1, 2
    W = np.zeros((F + K + 1, K))
    assert ref.brute_force_decode([[0], [0], [0]], W, F, K) == [0, 0, 0]
    # (1, 0) and (0, 1) both score 1; read backwards, (1, 0) is (0, 1) < (1, 0).
    W[F + K, 1] = 1.0  # start -> 1
    W[F + 0, 1] = 1.0  # 0 -> 1
    W[F + 1, 1] = -5.0  # 1 -> 1
    scores = all_scores([[], []], W, F, K)
    assert scores[1, 0] == scores[0, 1] == max(scores.values())
    assert ref.brute_force_decode([[], []], W, F, K) == [1, 0]
    assert viterbi([[], []], W, F, K) == [1, 0]


def test_a_tie_made_by_rounding_goes_to_the_better_prefix_as_in_viterbi():
    """Averaged weights (thirds, sixths) whose sums round two paths to the same score,
    though Viterbi saw one ahead by a rounding error at an earlier token: Viterbi keeps
    that one, and so must the oracle (comparing the tags alone would pick the other).
    Found by a long random search of the tagger against the oracle."""
    F, K = 7, 2
    W = np.array(
        [
            [0.3333333333333333, -0.3333333333333333],
            [0.0, 0.0],
            [0.0, 0.0],
            [0.0, 0.0],
            [-1.0, 1.0],
            [1.1666666666666665, -1.1666666666666665],
            [1.1666666666666665, -1.1666666666666665],
            [-0.8333333333333334, 2.0],
            [1.3333333333333333, -2.5],
            [-0.16666666666666674, 0.16666666666666674],
        ]
    )
    sentence = [[4, 6, 6, 2, 0], [4, 6, 5, 2, 6], [4, 5, 5, 6, 2], [4, 3, 0, 1, 6]]
    scores = all_scores(sentence, W, F, K)
    assert scores[0, 0, 0, 1] == scores[0, 1, 0, 1] == max(scores.values())
    # What Viterbi compares at token 2 (the prefix's score plus the transition into tag
    # 0) is higher by a rounding error for (0, 1) than for (0, 0); token 2's emission
    # rounds the difference away.
    ahead = ref.sequence_score(sentence[:2], [0, 1], W, F, K) + W[F + 1, 0]
    behind = ref.sequence_score(sentence[:2], [0, 0], W, F, K) + W[F + 0, 0]
    assert 0 < ahead - behind < 1e-14
    assert viterbi(sentence, W, F, K) == [0, 1, 0, 1]
    assert ref.brute_force_decode(sentence, W, F, K) == [0, 1, 0, 1]


@SETTINGS
@given(featurized(), st.sampled_from(["perceptron", "mira"]))
def test_average_is_the_mean_of_the_last_weights_after_every_sentence(problem, update):
    sentences, tags, F, K, orders = problem
    averaged = ref.structured_perceptron(sentences, tags, F, K, orders, update=update)
    lasts = [
        ref.structured_perceptron(sentences, tags, F, K, prefix, average=False, update=update)
        for prefix in prefixes(orders)
    ]
    np.testing.assert_allclose(averaged, np.mean(lasts, axis=0), **TOL)
    last = ref.structured_perceptron(sentences, tags, F, K, orders, average=False, update=update)
    np.testing.assert_array_equal(last, lasts[-1])


@SETTINGS
@given(featurized(), st.sampled_from(["perceptron", "mira"]), st.sampled_from([0.05, 1e6]))
def test_each_step_is_its_definition(problem, update, C):
    """Replay the run sentence by sentence: a correct sentence leaves W alone; a wrong
    one moves it by Δ (perceptron) or τΔ (MIRA), after which the gold sequence leads ŷ
    by exactly ``loss`` when τ < C."""
    sentences, tags, F, K, orders = problem
    flat = np.concatenate(orders)
    before = np.zeros((F + K + 1, K))
    wrong = 0
    for t, i in enumerate(flat):
        after = ref.structured_perceptron(
            sentences, tags, F, K, [flat[: t + 1]], average=False, update=update, C=C
        )
        x, y = sentences[i], tags[i]
        y_hat = ref.brute_force_decode(x, before, F, K)
        delta = phi(x, y, F, K) - phi(x, y_hat, F, K)
        if y_hat == y:
            np.testing.assert_array_equal(after, before)
        elif update == "perceptron":
            np.testing.assert_array_equal(after, before + delta)
        elif np.any(delta):
            loss = sum(a != b for a, b in zip(y_hat, y, strict=True))
            margin = ref.sequence_score(x, y, before, F, K) - ref.sequence_score(
                x, y_hat, before, F, K
            )
            tau = (loss - margin) / np.sum(delta * delta)
            assert tau > 0
            np.testing.assert_allclose(after, before + min(C, tau) * delta, **TOL)
            gap = ref.sequence_score(x, y, after, F, K) - ref.sequence_score(x, y_hat, after, F, K)
            if tau < C:
                assert gap == pytest.approx(loss, abs=1e-9)
            else:
                assert gap < loss + 1e-9
        else:  # a wrong sequence with the gold one's very features: nothing to move
            np.testing.assert_array_equal(after, before)
        wrong += y_hat != y
        # Both feature vectors count len(features) + 1 per token: W always sums to zero.
        assert abs(after.sum()) < 1e-9
        before = after
    _, mistakes = ref.structured_perceptron(
        sentences, tags, F, K, orders, update=update, C=C, return_mistakes=True
    )
    assert len(mistakes) == len(orders)
    assert sum(mistakes) == wrong


def test_a_correct_epoch_changes_nothing():
    X = [[[0], [1]], [[1], [0]]]
    y = [[0, 1], [1, 0]]
    one = ref.structured_perceptron(X, y, 2, 2, ref.epoch_orders(2, 1), average=False)
    assert [ref.brute_force_decode(x, one, 2, 2) for x in X] == y
    assert np.any(one)
    two = ref.structured_perceptron(X, y, 2, 2, ref.epoch_orders(2, 2), average=False)
    np.testing.assert_array_equal(one, two)
    # The average of W_1, W_2 (= W_1), W_2, W_2 over two epochs.
    first = ref.structured_perceptron(X, y, 2, 2, [np.array([0])], average=False)
    averaged = ref.structured_perceptron(X, y, 2, 2, ref.epoch_orders(2, 2))
    np.testing.assert_allclose(averaged, (first + 3 * one) / 4, **TOL)


def test_mira_step_is_capped_by_C():
    X, y = [[[0]]], [[1]]
    W = ref.structured_perceptron(X, y, 1, 2, [np.array([0])], average=False, update="mira", C=0.25)
    # ŷ = (0,), Δ: +1 at (0, 1), (start, 1); -1 at (0, 0), (start, 0): q = 4, loss 1, τ = 1/4.
    np.testing.assert_array_equal(W[[0, 3]], [[-0.25, 0.25], [-0.25, 0.25]])
    W = ref.structured_perceptron(X, y, 1, 2, [np.array([0])], average=False, update="mira", C=0.1)
    np.testing.assert_array_equal(W[[0, 3]], [[-0.1, 0.1], [-0.1, 0.1]])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ref.brute_force_decode([[0]] * 11, np.zeros((6, 3)), 2, 3), "3\\*\\*11"),
        (lambda: ref.brute_force_decode([[0]], np.zeros((5, 3)), 2, 3), "shape"),
        (lambda: ref.brute_force_decode([[2]], np.zeros((5, 2)), 2, 2), "feature column 2"),
        (lambda: ref.sequence_score([[0]], [2], np.zeros((5, 2)), 2, 2), "tag code 2"),
        (lambda: ref.sequence_score([[0]], [0, 1], np.zeros((5, 2)), 2, 2), "2 tags"),
        (lambda: ref.sequence_score([[0]], [0], np.zeros((2, 0)), 1, 0), "n_tags >= 1"),
        (
            lambda: ref.structured_perceptron([[[0]]], [[0]], 1, 2, [[0]], update="pa"),
            "update",
        ),
        (lambda: ref.structured_perceptron([[[0]]], [[0]], 1, 2, [[0]], C=0.0), "C must"),
        (lambda: ref.structured_perceptron([[[0]]], [[0], [1]], 1, 2, [[0]]), "1 sentences"),
        (lambda: ref.structured_perceptron([[[0]]], [[0]], 1, 2, []), "empty"),
    ],
)
def test_bad_input_is_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --------------------------------------------------------------- the compiled tagger

WORDS = ["a", "b", "Cc", "d-1"]
POS = ["N", "V"]
TAGS = ["B-NP", "I-NP", "O"]
# Small template lists (helper F's DSL): with a POS column, and words only.
TEMPLATES_POS = ["bias", "w[0]", "w[-1]", "c1[0]", "c1[-1]|c1[0]"]
TEMPLATES_WORDS = ["bias", "w[0]", "w[-1]", "suffix1[0]", "w[0]|w[1]"]


@st.composite
def tagged_sentences(draw):
    """``(X, y, templates)``: 1-12 sentences of 1-4 tokens over a tiny alphabet, tokens
    as words or (word, POS) tuples, and 2 or 3 distinct tags."""
    with_pos = draw(st.booleans())
    tags = TAGS[: draw(st.integers(2, 3))]
    X, y = [], []
    for _ in range(draw(st.integers(1, 12))):
        n = draw(st.integers(1, 4))
        words = draw(st.lists(st.sampled_from(WORDS), min_size=n, max_size=n))
        X.append([(w, draw(st.sampled_from(POS))) for w in words] if with_pos else words)
        y.append(draw(st.lists(st.sampled_from(tags), min_size=n, max_size=n)))
    if len({tag for sentence in y for tag in sentence}) < 2:
        X.append([X[0][0]])
        y.append([tags[1] if y[0][0] == tags[0] else tags[0]])
    return X, y, TEMPLATES_POS if with_pos else TEMPLATES_WORDS


def nested(features):
    """A ``TokenFeatures`` as the oracle's nested lists (sentences, tokens, columns)."""
    out = []
    for s in range(len(features)):
        first, last = features.offsets[s], features.offsets[s + 1]
        out.append(
            [
                features.indices[features.indptr[t] : features.indptr[t + 1]].tolist()
                for t in range(first, last)
            ]
        )
    return out


def tagger_weights(tagger):
    """The tagger's predicting weights in the oracle's layout, (F + K + 1, K)."""
    return np.vstack([tagger.coef_.toarray().T, tagger.transitions_])


def check_predictions(X, tagger, features, W, F, K):
    """Check the tagger's predictions; return how many were compared with the oracle's."""
    # Viterbi on the tagger's own weights is brute force on them, ties and all: the
    # scores are summed in the same order, so they are equal to the last bit.
    predicted = tagger.predict(X)
    mine = tagger_weights(tagger)
    expected = [tagger.classes_[ref.brute_force_decode(x, mine, F, K)].tolist() for x in features]
    assert predicted == expected
    # Against the oracle's weights wherever its best sequence wins by a clear margin
    # (elsewhere the two averages' different roundings may break a tie differently).
    clear = 0
    for x, tags in zip(features, predicted, strict=True):
        scores = sorted(all_scores(x, W, F, K).values(), reverse=True)
        if scores[0] - scores[1] > 1e-6:
            clear += 1
            assert tags == tagger.classes_[ref.brute_force_decode(x, W, F, K)].tolist()
    return clear


def fit_both(X, y, templates, n_features, average, update, max_epochs, shuffle, seed):
    tagger = SequenceTagger(
        templates=templates,
        n_features=n_features,
        average=average,
        update=update,
        C=0.5,
        max_epochs=max_epochs,
        shuffle=shuffle,
        random_state=seed,
    ).fit(X, y)
    features = nested(tagger.featurizer_.transform(X))
    codes = [np.searchsorted(tagger.classes_, sentence).tolist() for sentence in y]
    F, K = tagger.featurizer_.n_features_out_, len(tagger.classes_)
    # The estimators draw one rng.permutation(n) per epoch from check_random_state(seed).
    orders = ref.epoch_orders(len(X), max_epochs, shuffle=shuffle, random_state=seed)
    W, mistakes = ref.structured_perceptron(
        features, codes, F, K, orders, average=average, update=update, C=0.5, return_mistakes=True
    )
    assert [record["mistakes"] for record in tagger.history_] == mistakes
    assert tagger.n_iter_ == max_epochs
    return tagger, features, W, F, K


@settings(max_examples=100, deadline=None)
@given(
    tagged_sentences(),
    st.sampled_from([None, 7]),  # a vocabulary, or 7 hashed columns (collisions)
    st.booleans(),
    st.sampled_from(["perceptron", "mira"]),
    st.integers(1, 3),
    st.booleans(),
    st.integers(0, 2**31 - 1),
)
def test_tagger_equals_the_oracle(data, n_features, average, update, max_epochs, shuffle, seed):
    X, y, templates = data
    tagger, features, W, F, K = fit_both(
        X, y, templates, n_features, average, update, max_epochs, shuffle, seed
    )
    assert tagger.classes_.tolist() == sorted({tag for s in y for tag in s})
    assert tagger.coef_.shape == (K, F)
    assert tagger.transitions_.shape == (K + 1, K)
    if n_features is not None:
        assert F == n_features
    np.testing.assert_allclose(tagger.coef_.toarray(), W[:F].T, **TOL)
    np.testing.assert_allclose(tagger.transitions_, W[F:], **TOL)

    check_predictions(X, tagger, features, W, F, K)


@pytest.mark.parametrize("update", ["perceptron", "mira"])
@pytest.mark.parametrize("average", [True, False])
@pytest.mark.parametrize("n_features", [None, 7])
def test_tagger_equals_the_oracle_on_a_fixed_corpus(update, average, n_features):
    """Every configuration at least once, on a shuffled corpus whose tags the features
    cannot predict (mistakes every epoch)."""
    rng = np.random.RandomState(0)
    X, y = [], []
    for _ in range(12):
        n = rng.randint(1, 5)
        words = [WORDS[i] for i in rng.randint(0, len(WORDS), n)]
        X.append([(w, POS[int(w in ("a", "Cc"))]) for w in words])
        y.append([TAGS[(int(w in ("a", "b")) + rng.randint(0, 2)) % 3] for w in words])
    tagger, features, W, F, K = fit_both(
        X, y, TEMPLATES_POS, n_features, average, update, 3, True, 11
    )
    assert K == 3
    assert all(record["mistakes"] > 0 for record in tagger.history_)
    np.testing.assert_allclose(tagger.coef_.toarray(), W[:F].T, **TOL)
    np.testing.assert_allclose(tagger.transitions_, W[F:], **TOL)
    assert check_predictions(X, tagger, features, W, F, K) >= len(X) // 2


@pytest.mark.parametrize("average", [True, False])
def test_one_mixing_shard_is_the_serial_fit_bit_for_bit(average):
    rng = np.random.RandomState(1)
    X = [[WORDS[i] for i in rng.randint(0, len(WORDS), rng.randint(1, 5))] for _ in range(15)]
    y = [[TAGS[rng.randint(0, 3)] for _ in sentence] for sentence in X]

    def fresh():
        return SequenceTagger(
            templates=TEMPLATES_WORDS, average=average, max_epochs=3, random_state=5
        )

    serial = fresh().fit(X, y)
    mixed = mix_threads(fresh(), X, y, n_shards=1)
    np.testing.assert_array_equal(mixed.coef_.toarray(), serial.coef_.toarray())
    np.testing.assert_array_equal(mixed.transitions_, serial.transitions_)
    assert mixed.predict(X) == serial.predict(X)
    assert [r["mistakes"] for r in mixed.history_] == [r["mistakes"] for r in serial.history_]


def test_one_dask_shard_is_the_serial_fit_bit_for_bit():
    distributed = pytest.importorskip(
        "distributed", reason="ParameterMixing needs dask.distributed"
    )
    rng = np.random.RandomState(2)
    X = [[WORDS[i] for i in rng.randint(0, len(WORDS), rng.randint(1, 5))] for _ in range(15)]
    y = [[TAGS[rng.randint(0, 3)] for _ in sentence] for sentence in X]

    def fresh():
        return SequenceTagger(templates=TEMPLATES_WORDS, max_epochs=3, random_state=5)

    serial = fresh().fit(X, y)
    with distributed.Client(
        processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None
    ) as client:
        mixed = ParameterMixing(fresh(), n_shards=1, client=client).fit(X, y)
    np.testing.assert_array_equal(mixed.estimator_.coef_.toarray(), serial.coef_.toarray())
    np.testing.assert_array_equal(mixed.estimator_.transitions_, serial.transitions_)


@pytest.mark.parametrize("update", ["perceptron", "mira"])
@pytest.mark.parametrize("average", [True, False])
def test_partial_fit_batches_continue_the_oracles_run(update, average):
    """Each partial_fit is one epoch over its batch, from the state the last one left,
    its order drawn from the first call's generator; the featurizer is the first's."""
    rng = np.random.RandomState(3)
    X = [[WORDS[i] for i in rng.randint(0, len(WORDS), rng.randint(1, 5))] for _ in range(14)]
    y = [[TAGS[rng.randint(0, 3)] for _ in sentence] for sentence in X]
    batches = [slice(0, 6), slice(6, 14), slice(0, 14)]
    tagger = SequenceTagger(
        templates=TEMPLATES_WORDS, average=average, update=update, C=0.5, random_state=9
    )
    for batch in batches:
        tagger.partial_fit(X[batch], y[batch], classes=TAGS)
    assert tagger.classes_.tolist() == sorted(TAGS)
    features = nested(tagger.featurizer_.transform(X))
    codes = [np.searchsorted(tagger.classes_, sentence).tolist() for sentence in y]
    draws = np.random.RandomState(9)
    orders = [
        np.arange(14)[batch][draws.permutation(batch.stop - batch.start)] for batch in batches
    ]
    F, K = tagger.featurizer_.n_features_out_, 3
    W = ref.structured_perceptron(
        features, codes, F, K, orders, average=average, update=update, C=0.5
    )
    assert np.any(W)
    np.testing.assert_allclose(tagger.coef_.toarray(), W[:F].T, **TOL)
    np.testing.assert_allclose(tagger.transitions_, W[F:], **TOL)
