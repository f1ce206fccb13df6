"""Property tests of the reference implementations against each other.

The oracles in ``perceptrons.reference`` are what the compiled estimators are tested
against, so here they are checked against one another (every averaged variant must
give the same exact mean), against hand-computed tiny runs, and for dense/sparse
equality. No compiled code is involved.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from perceptrons import reference as ref

SETTINGS = settings(max_examples=60, deadline=None)
TOL = {"atol": 1e-9, "rtol": 1e-9}

# Small dyadic values: the perceptron's sums of them are exact in float64, so runs
# that are mathematically identical take identical branches.
VALUES = st.sampled_from([-3.0, -2.0, -1.5, -1.0, -0.5, 0.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0])


@st.composite
def problems(draw, multiclass=False):
    """A small random problem: ``(X, y, orders)`` or ``(X, y, n_classes, orders)``."""
    n = draw(st.integers(1, 25))
    d = draw(st.integers(1, 6))
    X = np.array(draw(st.lists(VALUES, min_size=n * d, max_size=n * d))).reshape(n, d)
    n_epochs = draw(st.integers(1, 4))
    shuffle = draw(st.booleans())
    random_state = draw(st.integers(0, 2**32 - 1))
    orders = ref.epoch_orders(n, n_epochs, shuffle=shuffle, random_state=random_state)
    if multiclass:
        n_classes = draw(st.integers(2, 4))
        y = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)))
        return X, y, n_classes, orders
    y = np.array(draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n)))
    return X, y, orders


def n_examples(orders):
    return sum(len(o) for o in orders)


def prefixes(orders):
    """``[[first t examples of the run] for t = 1 .. N]``, each as a one-epoch order.

    Running a non-averaged perceptron on the ``t``-th prefix gives the weights after
    the ``t``-th example, since epoch boundaries do not change the algorithm's state.
    """
    flat = np.concatenate(orders)
    return [[flat[:t]] for t in range(1, len(flat) + 1)]


# --------------------------------------------------------------------------- binary


def binary_means(X, y, orders):
    """The exact mean according to each averaged variant, normalised as documented."""
    n = n_examples(orders)
    w_naive, b_naive = ref.averaged_perceptron_naive(X, y, orders)
    w_delta, b_delta = ref.averaged_perceptron_delta_list(X, y, orders)
    w_fast, b_fast = ref.averaged_perceptron_fast(X, y, orders)
    w_wb, b_wb = ref.averaged_perceptron_wb(X, y, orders)
    w_step, b_step = ref.averaged_perceptron_decreasing_step(X, y, orders)
    return {
        "naive": (w_naive, b_naive),
        "delta_list": (w_delta / n, b_delta / n),
        "fast": (w_fast / n, b_fast / n),
        "wb": (w_wb * (n + 1) / n, b_wb * (n + 1) / n),
        "decreasing_step": (w_step, b_step),
    }


@SETTINGS
@given(problems())
def test_binary_averaged_variants_agree(problem):
    X, y, orders = problem
    means = binary_means(X, y, orders)
    w_ref, b_ref = means.pop("naive")
    for name, (w, b) in means.items():
        np.testing.assert_allclose(w, w_ref, **TOL, err_msg=name)
        np.testing.assert_allclose(b, b_ref, **TOL, err_msg=name)


@SETTINGS
@given(problems())
def test_binary_sum_variants_agree_exactly(problem):
    # Both return the running sum S built from the same integer weights of dyadic
    # numbers, so they agree to the last bit.
    X, y, orders = problem
    w_delta, b_delta = ref.averaged_perceptron_delta_list(X, y, orders)
    w_fast, b_fast = ref.averaged_perceptron_fast(X, y, orders)
    np.testing.assert_array_equal(w_delta, w_fast)
    assert b_delta == b_fast


@SETTINGS
@given(problems())
def test_naive_mean_is_mean_of_perceptron_trajectory(problem):
    X, y, orders = problem
    trajectory = [ref.perceptron(X, y, prefix)[:2] for prefix in prefixes(orders)]
    w_mean = np.mean([w for w, _ in trajectory], axis=0)
    b_mean = np.mean([b for _, b in trajectory])
    w_naive, b_naive = ref.averaged_perceptron_naive(X, y, orders)
    np.testing.assert_allclose(w_naive, w_mean, **TOL)
    np.testing.assert_allclose(b_naive, b_mean, **TOL)
    # the last point of the trajectory is what the full run returns
    w, b, _ = ref.perceptron(X, y, orders)
    np.testing.assert_array_equal(w, trajectory[-1][0])
    assert b == trajectory[-1][1]


@SETTINGS
@given(problems())
def test_perceptron_mistake_counts(problem):
    X, y, orders = problem
    _, _, mistakes = ref.perceptron(X, y, orders)
    assert len(mistakes) == len(orders)
    assert all(0 <= m <= len(o) for m, o in zip(mistakes, orders, strict=True))
    assert mistakes[0] >= 1  # the first example always updates


@SETTINGS
@given(problems())
def test_binary_dense_and_sparse_identical(problem):
    X, y, orders = problem
    X_sparse = sp.csr_matrix(X)
    w, b, mistakes = ref.perceptron(X, y, orders)
    w_s, b_s, mistakes_s = ref.perceptron(X_sparse, y, orders)
    np.testing.assert_array_equal(w, w_s)
    assert (b, mistakes) == (b_s, mistakes_s)
    for name, fn in [
        ("naive", ref.averaged_perceptron_naive),
        ("delta_list", ref.averaged_perceptron_delta_list),
        ("fast", ref.averaged_perceptron_fast),
        ("wb", ref.averaged_perceptron_wb),
        ("decreasing_step", ref.averaged_perceptron_decreasing_step),
    ]:
        w, b = fn(X, y, orders)
        w_s, b_s = fn(X_sparse, y, orders)
        np.testing.assert_array_equal(w, w_s, err_msg=name)
        assert b == b_s, name


@SETTINGS
@given(problems())
def test_first_example_always_updates(problem):
    # With w = 0, b = 0 the first score is exactly 0, which counts as a mistake.
    X, y, _ = problem
    w, b, mistakes = ref.perceptron(X, y, [np.array([0])])
    np.testing.assert_array_equal(w, y[0] * X[0])
    assert b == y[0]
    assert mistakes == [1]


def test_score_zero_is_a_mistake_mid_run():
    # x1 = [1], y1 = +1: score 0 -> update, w = 1, b = 1.
    # x2 = [-1], y2 = +1: score 1 * (-1 + 1) = 0 -> a mistake too: w = 0, b = 2.
    X = np.array([[1.0], [-1.0]])
    y = np.array([1, 1])
    w, b, mistakes = ref.perceptron(X, y, ref.epoch_orders(2, 1))
    assert w.tolist() == [0.0]
    assert b == 2.0
    assert mistakes == [2]


def test_binary_hand_computed_two_points():
    # x1 = [1, 0], y1 = +1: score 0 -> update: w1 = [1, 0], b1 = 1.
    # x2 = [0, 1], y2 = -1: score -1 * (0 + 1) = -1 -> update: w2 = [1, -1], b2 = 0.
    # S = w1 + w2 = [2, -1], b: 1 + 0 = 1. Exact mean [1, -0.5], 0.5.
    # Seed 002: c = 1: u = [1, 0], β = 1; c = 2: u = [1, -2], β = -1; final c = 3:
    # w - u/3 = [2/3, -1/3] = S/3, b - β/3 = 1/3.
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    y = np.array([1, -1])
    orders = ref.epoch_orders(2, 1)
    w, b, mistakes = ref.perceptron(X, y, orders)
    assert (w.tolist(), b, mistakes) == ([1.0, -1.0], 0.0, [2])
    w, b = ref.averaged_perceptron_naive(X, y, orders)
    assert (w.tolist(), b) == ([1.0, -0.5], 0.5)
    for fn in (ref.averaged_perceptron_delta_list, ref.averaged_perceptron_fast):
        w, b = fn(X, y, orders)
        assert (w.tolist(), b) == ([2.0, -1.0], 1.0)
    w, b = ref.averaged_perceptron_wb(X, y, orders)
    np.testing.assert_allclose(w, [2 / 3, -1 / 3], **TOL)
    np.testing.assert_allclose(b, 1 / 3, **TOL)
    w, b = ref.averaged_perceptron_decreasing_step(X, y, orders)
    assert (w.tolist(), b) == ([1.0, -0.5], 0.5)


def test_binary_hand_computed_no_second_update():
    # x1 = [1, 0], y1 = +1: update: w1 = [1, 0], b1 = 1.
    # x2 = [2, 0], y2 = +1: score 2 + 1 = 3 > 0, no update: w2 = w1, b2 = b1.
    # S = [2, 0], b 2; exact mean [1, 0], 1; seed 002 returns S / 3.
    X = np.array([[1.0, 0.0], [2.0, 0.0]])
    y = np.array([1, 1])
    orders = ref.epoch_orders(2, 1)
    assert ref.perceptron(X, y, orders)[2] == [1]
    w, b = ref.averaged_perceptron_naive(X, y, orders)
    assert (w.tolist(), b) == ([1.0, 0.0], 1.0)
    w, b = ref.averaged_perceptron_fast(X, y, orders)
    assert (w.tolist(), b) == ([2.0, 0.0], 2.0)
    w, b = ref.averaged_perceptron_wb(X, y, orders)
    np.testing.assert_allclose(w, [2 / 3, 0.0], **TOL)
    np.testing.assert_allclose(b, 2 / 3, **TOL)


def test_binary_two_epochs_hand_computed():
    # Epoch 1 as in test_binary_hand_computed_two_points: w2 = [1, -1], b2 = 0.
    # Epoch 2: x1: 1 * (1 + 0) = 1 > 0; x2: -1 * (-1 + 0) = 1 > 0: no updates.
    # S = [1,0] + 3 * [1,-1] = [4, -3], b: 1; N = 4.
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    y = np.array([1, -1])
    orders = ref.epoch_orders(2, 2)
    assert ref.perceptron(X, y, orders)[2] == [2, 0]
    w, b = ref.averaged_perceptron_delta_list(X, y, orders)
    assert (w.tolist(), b) == ([4.0, -3.0], 1.0)
    w, b = ref.averaged_perceptron_decreasing_step(X, y, orders)
    assert (w.tolist(), b) == ([1.0, -0.75], 0.25)


# --------------------------------------------------------------------------- multiclass


@SETTINGS
@given(problems(multiclass=True))
def test_multiclass_averaged_variants_agree(problem):
    X, y, n_classes, orders = problem
    n = n_examples(orders)
    W_naive, b_naive = ref.multiclass_averaged_perceptron_naive(X, y, n_classes, orders)
    W, b = ref.multiclass_averaged_perceptron(X, y, n_classes, orders)
    np.testing.assert_allclose(W * (n + 1) / n, W_naive, **TOL)
    np.testing.assert_allclose(b * (n + 1) / n, b_naive, **TOL)


@SETTINGS
@given(problems(multiclass=True))
def test_multiclass_naive_mean_is_mean_of_trajectory(problem):
    X, y, n_classes, orders = problem
    trajectory = [
        ref.multiclass_perceptron(X, y, n_classes, prefix)[:2] for prefix in prefixes(orders)
    ]
    W_naive, b_naive = ref.multiclass_averaged_perceptron_naive(X, y, n_classes, orders)
    np.testing.assert_allclose(W_naive, np.mean([W for W, _ in trajectory], axis=0), **TOL)
    np.testing.assert_allclose(b_naive, np.mean([b for _, b in trajectory], axis=0), **TOL)


@SETTINGS
@given(problems(multiclass=True))
def test_multiclass_perceptron_invariants(problem):
    X, y, n_classes, orders = problem
    W, b, mistakes = ref.multiclass_perceptron(X, y, n_classes, orders)
    assert W.shape == (n_classes, X.shape[1])
    assert b.shape == (n_classes,)
    assert len(mistakes) == len(orders)
    assert all(0 <= m <= len(o) for m, o in zip(mistakes, orders, strict=True))
    # every update moves x from one class to another: rows sum to zero
    np.testing.assert_allclose(W.sum(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(b.sum(), 0.0, atol=1e-12)
    # the bias counts the net updates, so it is an integer in [-mistakes, mistakes]
    assert np.all(b == np.round(b))
    assert np.all(np.abs(b) <= sum(mistakes))


@SETTINGS
@given(problems(multiclass=True))
def test_multiclass_dense_and_sparse_identical(problem):
    X, y, n_classes, orders = problem
    X_sparse = sp.csr_matrix(X)
    W, b, mistakes = ref.multiclass_perceptron(X, y, n_classes, orders)
    W_s, b_s, mistakes_s = ref.multiclass_perceptron(X_sparse, y, n_classes, orders)
    np.testing.assert_array_equal(W, W_s)
    np.testing.assert_array_equal(b, b_s)
    assert mistakes == mistakes_s
    for fn in (ref.multiclass_averaged_perceptron, ref.multiclass_averaged_perceptron_naive):
        W, b = fn(X, y, n_classes, orders)
        W_s, b_s = fn(X_sparse, y, n_classes, orders)
        np.testing.assert_array_equal(W, W_s)
        np.testing.assert_array_equal(b, b_s)


@SETTINGS
@given(problems())
def test_multiclass_with_two_classes_is_a_valid_run(problem):
    # Binary labels recoded to 0/1. Not the binary perceptron (it updates both rows
    # and breaks ties towards class 0), but a valid multiclass run.
    X, y, orders = problem
    codes = (y > 0).astype(int)
    W, b, mistakes = ref.multiclass_perceptron(X, codes, 2, orders)
    assert W.shape == (2, X.shape[1])
    np.testing.assert_array_equal(W[0], -W[1])
    np.testing.assert_array_equal(b[0], -b[1])
    assert sum(mistakes) <= n_examples(orders)
    W_avg, b_avg = ref.multiclass_averaged_perceptron_naive(X, codes, 2, orders)
    assert np.all(np.isfinite(W_avg)) and np.all(np.isfinite(b_avg))


def test_multiclass_hand_computed():
    # K = 3. x1 = [1, 0], y1 = 2: all scores 0, tie -> p = 0 != 2:
    #   W0 = [-1, 0], b0 = -1; W2 = [1, 0], b2 = 1.
    # x2 = [0, 1], y2 = 0: scores -1, 0, 1 -> p = 2 != 0:
    #   W2 = [1, -1], b2 = 0; W0 = [-1, 1], b0 = 0.
    # S = W1 + W2 = [[-2, 1], [0, 0], [2, -1]], b: [-1, 0, 1]; N = 2.
    # Seed 001's counter: count = 1 then 2, final count = 3, result S / 3.
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    y = np.array([2, 0])
    orders = ref.epoch_orders(2, 1)
    W, b, mistakes = ref.multiclass_perceptron(X, y, 3, orders)
    assert W.tolist() == [[-1.0, 1.0], [0.0, 0.0], [1.0, -1.0]]
    assert b.tolist() == [0.0, 0.0, 0.0]
    assert mistakes == [2]
    W, b = ref.multiclass_averaged_perceptron_naive(X, y, 3, orders)
    assert W.tolist() == [[-1.0, 0.5], [0.0, 0.0], [1.0, -0.5]]
    assert b.tolist() == [-0.5, 0.0, 0.5]
    W, b = ref.multiclass_averaged_perceptron(X, y, 3, orders)
    np.testing.assert_allclose(W, [[-2 / 3, 1 / 3], [0, 0], [2 / 3, -1 / 3]], **TOL)
    np.testing.assert_allclose(b, [-1 / 3, 0, 1 / 3], **TOL)


def test_multiclass_ties_go_to_lowest_class():
    # One example of class 1 with all scores 0: argmax picks class 0, a mistake.
    W, b, mistakes = ref.multiclass_perceptron(np.array([[1.0]]), np.array([1]), 3, [[0]])
    assert mistakes == [1]
    assert W.ravel().tolist() == [-1.0, 1.0, 0.0]
    # Same with class 0: the tie resolves to the gold class, no update.
    W, b, mistakes = ref.multiclass_perceptron(np.array([[1.0]]), np.array([0]), 3, [[0]])
    assert mistakes == [0]
    assert not W.any() and not b.any()


# --------------------------------------------------------------------------- helpers


@SETTINGS
@given(
    n=st.integers(1, 30),
    n_epochs=st.integers(1, 5),
    random_state=st.integers(0, 2**32 - 1),
)
def test_epoch_orders_shuffle_deterministic_permutations(n, n_epochs, random_state):
    a = ref.epoch_orders(n, n_epochs, shuffle=True, random_state=random_state)
    b = ref.epoch_orders(n, n_epochs, shuffle=True, random_state=random_state)
    assert len(a) == n_epochs
    for p, q in zip(a, b, strict=True):
        np.testing.assert_array_equal(p, q)
        np.testing.assert_array_equal(np.sort(p), np.arange(n))
    rs = np.random.RandomState(random_state)
    for p in a:
        np.testing.assert_array_equal(p, rs.permutation(n))


def test_epoch_orders_without_shuffle():
    orders = ref.epoch_orders(4, 3)
    assert [o.tolist() for o in orders] == [[0, 1, 2, 3]] * 3
    # random_state is ignored without shuffle
    assert [o.tolist() for o in ref.epoch_orders(4, 3, random_state=7)] == [[0, 1, 2, 3]] * 3


def test_other_sparse_formats_match_dense():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    y = np.array([1, -1, 1, -1])
    orders = ref.epoch_orders(4, 2, shuffle=True, random_state=0)
    w, b = ref.averaged_perceptron_fast(X, y, orders)
    for fmt in (sp.coo_matrix, sp.csc_matrix, sp.csr_array, sp.coo_array):
        w_s, b_s = ref.averaged_perceptron_fast(fmt(X), y, orders)
        np.testing.assert_array_equal(w, w_s)
        assert b == b_s


def test_invalid_labels_rejected():
    X = np.zeros((2, 1))
    with pytest.raises(ValueError, match="binary"):
        ref.perceptron(X, np.array([0, 1]), ref.epoch_orders(2, 1))
    with pytest.raises(ValueError, match="class codes"):
        ref.multiclass_perceptron(X, np.array([0, 3]), 3, ref.epoch_orders(2, 1))


def test_empty_run_mean_undefined():
    X = np.zeros((2, 1))
    with pytest.raises(ValueError, match="empty"):
        ref.averaged_perceptron_naive(X, np.array([1, -1]), [])
    with pytest.raises(ValueError, match="empty"):
        ref.multiclass_averaged_perceptron_naive(X, np.array([0, 1]), 2, [])
