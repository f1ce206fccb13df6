"""Property tests of the voted and dual (kernel) perceptron reference implementations.

The voted perceptron's improved scheme (a model per update, with votes) must expand
to the naive scheme (a model per example), end at the vanilla perceptron and average
to the averaged perceptron; the dual perceptron must reproduce the primal one for the
linear kernel and for an explicit polynomial feature map. Values are multiples of 0.5,
so the sums are exact in float64 and equal runs take equal branches.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from perceptrons import reference as ref

SETTINGS = settings(max_examples=50, deadline=None)

VALUES = st.sampled_from([-3.0, -2.0, -1.5, -1.0, -0.5, 0.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0])
RULES = ("vote", "average", "last", "random")


@st.composite
def problems(draw, multiclass=False, n_features=None):
    """``(X, y, orders, X_test)`` or ``(X, y, n_classes, orders, X_test)``."""
    n = draw(st.integers(1, 20))
    d = n_features if n_features is not None else draw(st.integers(1, 5))
    X = np.array(draw(st.lists(VALUES, min_size=n * d, max_size=n * d))).reshape(n, d)
    n_test = draw(st.integers(1, 6))
    X_test = np.array(draw(st.lists(VALUES, min_size=n_test * d, max_size=n_test * d)))
    X_test = np.vstack([X, X_test.reshape(n_test, d)])  # training rows and new ones
    n_epochs = draw(st.integers(1, 4))
    shuffle = draw(st.booleans())
    random_state = draw(st.integers(0, 2**32 - 1))
    orders = ref.epoch_orders(n, n_epochs, shuffle=shuffle, random_state=random_state)
    if multiclass:
        n_classes = draw(st.integers(2, 4))
        y = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)))
        return X, y, n_classes, orders, X_test
    y = np.array(draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n)))
    return X, y, orders, X_test


def n_examples(orders):
    return sum(len(o) for o in orders)


def naive_binary_majority(W_models, b_models, X_test):
    """Each of the N naive models votes its sign (0 -> -1); a tie predicts -1."""
    predictions = []
    for x in X_test:
        total = sum(1 if w @ x + b > 0 else -1 for w, b in zip(W_models, b_models, strict=True))
        predictions.append(1 if total > 0 else -1)
    return np.array(predictions)


def naive_multiclass_majority(W_models, b_models, n_classes, X_test):
    """Each naive model votes once for its argmax class; the lowest class wins ties."""
    predictions = []
    for x in X_test:
        tally = np.zeros(n_classes)
        for W, b in zip(W_models, b_models, strict=True):
            tally[int(np.argmax(W @ x + b))] += 1
        predictions.append(int(np.argmax(tally)))
    return np.array(predictions)


# --------------------------------------------------------------------------- binary


@SETTINGS
@given(problems())
def test_improved_expands_to_naive(problem):
    X, y, orders, _ = problem
    V, c, votes = ref.voted_perceptron(X, y, orders)
    W_models, b_models = ref.voted_perceptron_naive(X, y, orders)
    assert V.shape == (len(votes), X.shape[1])
    assert c.shape == votes.shape
    assert W_models.shape == (n_examples(orders), X.shape[1])
    assert votes.sum() == n_examples(orders)
    assert votes[0] == 0  # the first example always updates v_0 = 0
    assert np.all(votes[1:] >= 1)
    np.testing.assert_array_equal(np.repeat(V, votes, axis=0), W_models)
    np.testing.assert_array_equal(np.repeat(c, votes), b_models)


@SETTINGS
@given(problems())
def test_last_model_is_perceptron_and_vote_average_is_averaged_perceptron(problem):
    X, y, orders, _ = problem
    V, c, votes = ref.voted_perceptron(X, y, orders)
    w, b, mistakes = ref.perceptron(X, y, orders)
    np.testing.assert_array_equal(V[-1], w)
    assert c[-1] == b
    assert len(votes) == sum(mistakes) + 1
    n = n_examples(orders)
    w_mean, b_mean = ref.averaged_perceptron_naive(X, y, orders)
    np.testing.assert_array_equal(votes @ V / n, w_mean)
    assert votes @ c / n == b_mean


@SETTINGS
@given(problems())
def test_vote_equals_majority_over_naive_models(problem):
    X, y, orders, X_test = problem
    V, c, votes = ref.voted_perceptron(X, y, orders)
    W_models, b_models = ref.voted_perceptron_naive(X, y, orders)
    expected = naive_binary_majority(W_models, b_models, X_test)
    np.testing.assert_array_equal(ref.vote_predict(V, c, votes, X_test, "vote"), expected)
    # the naive list itself, one vote per model
    ones = np.ones(len(W_models), dtype=int)
    np.testing.assert_array_equal(
        ref.vote_predict(W_models, b_models, ones, X_test, "vote"), expected
    )


@SETTINGS
@given(problems())
def test_average_and_last_rules(problem):
    X, y, orders, X_test = problem
    V, c, votes = ref.voted_perceptron(X, y, orders)
    w, b, _ = ref.perceptron(X, y, orders)
    # The undivided survival-weighted sum: the mean's rounding could break a zero score.
    w_sum, b_sum = votes @ V, votes @ c
    np.testing.assert_array_equal(
        ref.vote_predict(V, c, votes, X_test, "average"),
        np.where(X_test @ w_sum + b_sum > 0, 1, -1),
    )
    np.testing.assert_array_equal(
        ref.vote_predict(V, c, votes, X_test, "last"), np.where(X_test @ w + b > 0, 1, -1)
    )


@SETTINGS
@given(problems(), st.integers(0, 2**32 - 1))
def test_random_rule_reproducible_and_follows_documented_draws(problem, seed):
    X, y, orders, X_test = problem
    V, c, votes = ref.voted_perceptron(X, y, orders)
    a = ref.vote_predict(V, c, votes, X_test, "random", random_state=seed)
    b = ref.vote_predict(V, c, votes, X_test, "random", random_state=seed)
    np.testing.assert_array_equal(a, b)
    rs = np.random.RandomState(seed)
    ks = [rs.choice(len(votes), p=votes / votes.sum()) for _ in range(len(X_test))]
    assert all(votes[k] > 0 for k in ks)
    expected = [1 if V[k] @ x + c[k] > 0 else -1 for k, x in zip(ks, X_test, strict=True)]
    np.testing.assert_array_equal(a, expected)


@SETTINGS
@given(problems())
def test_binary_voted_dense_and_sparse_identical(problem):
    X, y, orders, X_test = problem
    X_sparse, X_test_sparse = sp.csr_matrix(X), sp.csr_matrix(X_test)
    for fn in (ref.voted_perceptron_naive, ref.voted_perceptron):
        for dense, sparse in zip(fn(X, y, orders), fn(X_sparse, y, orders), strict=True):
            np.testing.assert_array_equal(dense, sparse)
    V, c, votes = ref.voted_perceptron(X, y, orders)
    for rule in RULES:
        np.testing.assert_array_equal(
            ref.vote_predict(V, c, votes, X_test, rule, random_state=0),
            ref.vote_predict(V, c, votes, X_test_sparse, rule, random_state=0),
        )


def test_voted_hand_computed():
    # x1 = [1, 0], +1: score 0, update: v1 = [1, 0], c1 = 1, m1 = 1.
    # x2 = [2, 0], +1: 3 > 0, m1 = 2. x3 = [0, 1], -1: -1 * (0 + 1) < 0, update:
    # v2 = [1, -1], c2 = 0, m2 = 1. Epoch 2: x1: 1 > 0; x2: 2 > 0; x3: 1 > 0; m2 = 4.
    X = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    y = np.array([1, 1, -1])
    V, c, votes = ref.voted_perceptron(X, y, ref.epoch_orders(3, 2))
    assert V.tolist() == [[0.0, 0.0], [1.0, 0.0], [1.0, -1.0]]
    assert c.tolist() == [0.0, 1.0, 0.0]
    assert votes.tolist() == [0, 2, 4]
    # x = [-1, -1]: v1 scores -1 + 1 = 0 -> -1, v2 scores 0 -> -1: all vote -1.
    # x = [0, -0.5]: v1: 1 (+1, 2 votes), v2: 0.5 (+1, 4 votes).
    # x = [-2, 0]: v1: -1 (-1 x 2), v2: -2 (-1 x 4).
    X_test = np.array([[-1.0, -1.0], [0.0, -0.5], [-2.0, 0.0]])
    assert ref.vote_predict(V, c, votes, X_test, "vote").tolist() == [-1, 1, -1]
    # average: 2 (v1.x + 1) + 4 v2.x = 0, 3, -10
    assert ref.vote_predict(V, c, votes, X_test, "average").tolist() == [-1, 1, -1]


def test_vote_tie_and_zero_scores_predict_negative():
    # Two models with one vote each disagreeing: total 0 -> -1.
    V = np.array([[1.0], [-1.0]])
    c = np.zeros(2)
    votes = np.array([1, 1])
    X = np.array([[1.0], [-1.0], [0.0]])
    assert ref.vote_predict(V, c, votes, X, "vote").tolist() == [-1, -1, -1]
    assert ref.vote_predict(V, c, votes, X, "average").tolist() == [-1, -1, -1]


def test_random_rule_frequencies_binary():
    # v_0 predicts +1 on x = 1, v_1 predicts -1: P(+1) = 3 / 4.
    V = np.array([[1.0], [-1.0]])
    c = np.zeros(2)
    votes = np.array([3, 1])
    X = np.ones((4000, 1))
    predictions = ref.vote_predict(V, c, votes, X, "random", random_state=0)
    assert abs(np.mean(predictions == 1) - 0.75) < 0.03


def test_random_rule_frequencies_multiclass():
    # Model k predicts class k on every x (bias k in row k): frequencies m_k / m.
    V = np.zeros((4, 4, 1))
    c = np.eye(4)
    votes = np.array([1, 2, 0, 5])
    X = np.ones((8000, 1))
    predictions = ref.vote_predict(V, c, votes, X, "random", random_state=1)
    frequencies = np.bincount(predictions, minlength=4) / len(X)
    np.testing.assert_allclose(frequencies, votes / votes.sum(), atol=0.03)
    assert frequencies[2] == 0.0  # a model without votes is never drawn


def test_vote_predict_rejects_bad_input():
    V, c, votes = np.zeros((2, 1)), np.zeros(2), np.array([1, 1])
    X = np.ones((1, 1))
    with pytest.raises(ValueError, match="rule"):
        ref.vote_predict(V, c, votes, X, "majority")
    with pytest.raises(ValueError, match="shapes"):
        ref.vote_predict(V, np.zeros(3), votes, X, "vote")
    with pytest.raises(ValueError, match="features"):
        ref.vote_predict(V, c, votes, np.ones((1, 2)), "vote")
    with pytest.raises(ValueError, match="at least one vote"):
        ref.vote_predict(V, c, np.array([0, 0]), X, "random")


# --------------------------------------------------------------------------- multiclass


@SETTINGS
@given(problems(multiclass=True))
def test_multiclass_improved_expands_to_naive(problem):
    X, y, n_classes, orders, _ = problem
    V, c, votes = ref.multiclass_voted_perceptron(X, y, n_classes, orders)
    W_models, b_models = ref.multiclass_voted_perceptron_naive(X, y, n_classes, orders)
    assert V.shape == (len(votes), n_classes, X.shape[1])
    assert c.shape == (len(votes), n_classes)
    assert votes.sum() == n_examples(orders)
    assert np.all(votes[1:] >= 1)
    np.testing.assert_array_equal(np.repeat(V, votes, axis=0), W_models)
    np.testing.assert_array_equal(np.repeat(c, votes, axis=0), b_models)


@SETTINGS
@given(problems(multiclass=True))
def test_multiclass_last_and_average(problem):
    X, y, n_classes, orders, X_test = problem
    V, c, votes = ref.multiclass_voted_perceptron(X, y, n_classes, orders)
    W, b, mistakes = ref.multiclass_perceptron(X, y, n_classes, orders)
    np.testing.assert_array_equal(V[-1], W)
    np.testing.assert_array_equal(c[-1], b)
    assert len(votes) == sum(mistakes) + 1
    n = n_examples(orders)
    W_mean, b_mean = ref.multiclass_averaged_perceptron_naive(X, y, n_classes, orders)
    np.testing.assert_array_equal(np.tensordot(votes, V, axes=1) / n, W_mean)
    np.testing.assert_array_equal(votes @ c / n, b_mean)
    np.testing.assert_array_equal(
        ref.vote_predict(V, c, votes, X_test, "last"), np.argmax(X_test @ W.T + b, axis=1)
    )
    # Compare with the undivided survival-weighted sum: dividing by n rounds, which can
    # break an exact tie between classes the other way.
    W_sum, b_sum = np.tensordot(votes, V, axes=1), votes @ c
    np.testing.assert_array_equal(
        ref.vote_predict(V, c, votes, X_test, "average"),
        np.argmax(X_test @ W_sum.T + b_sum, axis=1),
    )


@SETTINGS
@given(problems(multiclass=True))
def test_multiclass_vote_equals_majority_over_naive_models(problem):
    X, y, n_classes, orders, X_test = problem
    V, c, votes = ref.multiclass_voted_perceptron(X, y, n_classes, orders)
    W_models, b_models = ref.multiclass_voted_perceptron_naive(X, y, n_classes, orders)
    expected = naive_multiclass_majority(W_models, b_models, n_classes, X_test)
    np.testing.assert_array_equal(ref.vote_predict(V, c, votes, X_test, "vote"), expected)


@SETTINGS
@given(problems(multiclass=True), st.integers(0, 2**32 - 1))
def test_multiclass_random_rule_reproducible(problem, seed):
    X, y, n_classes, orders, X_test = problem
    V, c, votes = ref.multiclass_voted_perceptron(X, y, n_classes, orders)
    a = ref.vote_predict(V, c, votes, X_test, "random", random_state=seed)
    np.testing.assert_array_equal(
        a, ref.vote_predict(V, c, votes, X_test, "random", random_state=seed)
    )
    rs = np.random.RandomState(seed)
    ks = [rs.choice(len(votes), p=votes / votes.sum()) for _ in range(len(X_test))]
    expected = [int(np.argmax(V[k] @ x + c[k])) for k, x in zip(ks, X_test, strict=True)]
    np.testing.assert_array_equal(a, expected)


@SETTINGS
@given(problems(multiclass=True))
def test_multiclass_voted_dense_and_sparse_identical(problem):
    X, y, n_classes, orders, X_test = problem
    X_sparse = sp.csr_matrix(X)
    for fn in (ref.multiclass_voted_perceptron_naive, ref.multiclass_voted_perceptron):
        dense_result = fn(X, y, n_classes, orders)
        sparse_result = fn(X_sparse, y, n_classes, orders)
        for dense, sparse in zip(dense_result, sparse_result, strict=True):
            np.testing.assert_array_equal(dense, sparse)
    V, c, votes = ref.multiclass_voted_perceptron(X, y, n_classes, orders)
    for rule in RULES:
        np.testing.assert_array_equal(
            ref.vote_predict(V, c, votes, X_test, rule, random_state=0),
            ref.vote_predict(V, c, votes, sp.csr_matrix(X_test), rule, random_state=0),
        )


def test_multiclass_vote_ties_go_to_lowest_class():
    # Model 0 predicts class 2, model 1 class 1 (through their biases), 3 votes each:
    # the tie between classes 1 and 2 goes to class 1.
    V = np.zeros((2, 3, 1))
    c = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    votes = np.array([3, 3])
    assert ref.vote_predict(V, c, votes, np.ones((1, 1)), "vote").tolist() == [1]
    # a model with all scores equal votes for class 0
    assert ref.vote_predict(
        np.zeros((1, 3, 1)), np.zeros((1, 3)), [1], [[1.0]], "vote"
    ).tolist() == [0]


# --------------------------------------------------------------------------- dual (kernel)


@SETTINGS
@given(problems())
def test_dual_linear_kernel_matches_primal(problem):
    X, y, orders, _ = problem
    alpha, b, mistakes = ref.dual_kernel_perceptron(X @ X.T, y, orders)
    w, b_primal, mistakes_primal = ref.perceptron(X, y, orders)
    assert mistakes == mistakes_primal
    np.testing.assert_array_equal(alpha @ X, w)
    assert b == b_primal == alpha.sum()
    assert np.abs(alpha).sum() <= sum(mistakes)
    # the Gram matrix of a CSR input, given sparse, is the same run
    X_sparse = sp.csr_matrix(X)
    alpha_s, b_s, mistakes_s = ref.dual_kernel_perceptron(X_sparse @ X_sparse.T, y, orders)
    np.testing.assert_array_equal(alpha, alpha_s)
    assert (b, mistakes) == (b_s, mistakes_s)


@SETTINGS
@given(problems())
def test_dual_voted_matches_primal_voted(problem):
    X, y, orders, X_test = problem
    examples, signs, votes, b_seq = ref.dual_voted_perceptron(X @ X.T, y, orders)
    V, c, votes_primal = ref.voted_perceptron(X, y, orders)
    np.testing.assert_array_equal(votes, votes_primal)
    np.testing.assert_array_equal(b_seq, c)
    np.testing.assert_array_equal(np.cumsum(signs), b_seq[1:])
    np.testing.assert_array_equal(signs, y[examples])
    # v_k = sum_{j <= k} y_j x_{i_j}
    V_dual = np.vstack([np.zeros(X.shape[1]), np.cumsum(signs[:, None] * X[examples], axis=0)])
    np.testing.assert_array_equal(V_dual, V)
    # the per-model scores from the kernel equal the primal v_k.x + c_k
    scores = ref.dual_vote_scores(X_test @ X.T, examples, signs, votes)
    primal = np.array([[V[k] @ x + c[k] for k in range(len(votes))] for x in X_test])
    np.testing.assert_array_equal(scores, primal)
    # and the vote over them is vote_predict's
    vote = np.where(np.where(scores > 0, 1, -1) @ votes > 0, 1, -1)
    np.testing.assert_array_equal(vote, ref.vote_predict(V, c, votes, X_test, "vote"))


def phi(X):
    """Explicit degree-2 map of 2-D rows with ``phi(x).phi(x') = (x.x' + 1)^2``.

    ``(x1 x1' + x2 x2' + 1)^2 = x1^2 x1'^2 + x2^2 x2'^2 + 2 x1 x2 x1' x2' + 2 x1 x1' +
    2 x2 x2' + 1``. The factors 2 come from repeating a feature twice instead of
    scaling it by sqrt(2), which keeps the arithmetic exact. The last feature is the
    kernel's own constant 1; the perceptron's learned bias is separate from it.
    """
    x1, x2 = X[:, 0], X[:, 1]
    ones = np.ones(len(X))
    return np.column_stack([x1 * x1, x2 * x2, x1 * x2, x1 * x2, x1, x1, x2, x2, ones])


@SETTINGS
@given(problems(n_features=2))
def test_dual_polynomial_kernel_matches_explicit_feature_map(problem):
    X, y, orders, X_test = problem
    K = (X @ X.T + 1.0) ** 2
    np.testing.assert_array_equal(phi(X) @ phi(X).T, K)
    alpha, b, mistakes = ref.dual_kernel_perceptron(K, y, orders)
    w, b_primal, mistakes_primal = ref.perceptron(phi(X), y, orders)
    assert mistakes == mistakes_primal
    np.testing.assert_array_equal(alpha @ phi(X), w)
    assert b == b_primal
    # the same for the voted models, scored on new rows
    examples, signs, votes, _ = ref.dual_voted_perceptron(K, y, orders)
    V, c, votes_primal = ref.voted_perceptron(sp.csr_matrix(phi(X)), y, orders)
    np.testing.assert_array_equal(votes, votes_primal)
    scores = ref.dual_vote_scores((X_test @ X.T + 1.0) ** 2, examples, signs, votes)
    np.testing.assert_array_equal(scores, phi(X_test) @ V.T + c)


def test_dual_hand_computed():
    # K = X X^T for x1 = [1], x2 = [-1] (y = +1, +1): x1: score 0 -> alpha = [1, 0],
    # b = 1. x2: 1 * (-1 + 1) = 0 -> alpha = [1, 1], b = 2. Epoch 2: x1: 1 - 1 + 2 > 0,
    # x2: -1 + 1 + 2 > 0.
    X = np.array([[1.0], [-1.0]])
    y = np.array([1, 1])
    alpha, b, mistakes = ref.dual_kernel_perceptron(X @ X.T, y, ref.epoch_orders(2, 2))
    assert (alpha.tolist(), b, mistakes) == ([1.0, 1.0], 2.0, [2, 0])
    examples, signs, votes, b_seq = ref.dual_voted_perceptron(X @ X.T, y, ref.epoch_orders(2, 2))
    assert examples.tolist() == [0, 1]
    assert signs.tolist() == [1.0, 1.0]
    assert votes.tolist() == [0, 1, 3]
    assert b_seq.tolist() == [0.0, 1.0, 2.0]
    scores = ref.dual_vote_scores(np.array([[2.0, -2.0]]), examples, signs, votes)  # x = 2
    assert scores.tolist() == [[0.0, 3.0, 2.0]]  # v_1 = 1, c_1 = 1; v_2 = 0, c_2 = 2


def test_dual_rejects_bad_shapes():
    with pytest.raises(ValueError, match="K_train"):
        ref.dual_kernel_perceptron(np.zeros((2, 3)), np.array([1, -1]), [[0]])
    with pytest.raises(ValueError, match="K \\+ 1 votes"):
        ref.dual_vote_scores(np.zeros((1, 2)), [0], [1.0], [0])
