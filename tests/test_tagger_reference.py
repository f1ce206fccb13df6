"""The structured perceptron's oracle, and the compiled tagger against it.

First the oracle of :mod:`perceptrons.reference.sequence` is checked on its own: its
brute-force decoder against a plain Viterbi written here (ties included), its average
against the mean of its own last weights after every sentence, MIRA's step against its
definition. Then :class:`perceptrons.SequenceTagger` is fitted on random sentences and
its weights and predictions are compared with the oracle fed the same feature columns,
tag codes and visiting orders.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perceptrons import reference as ref

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
        # Both feature vectors count len(features) + 1 per token: W always sums to zero.
        assert abs(after.sum()) < 1e-9
        before = after


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
