"""The Δ trick (``delta=``) against an explicitly augmented ``[X | Δ·I]``, and the mistake log."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from perceptrons import AveragedPerceptron, Perceptron, reference
from perceptrons._kernels import perceptron as perceptron_kernels

TOL = {"rtol": 1e-9, "atol": 1e-9}
ESTIMATORS = [Perceptron, AveragedPerceptron]


def _records(model):
    """``history_`` but its ``n_nonzero``: the augmented matrix's model counts its Δ
    weights among the features' (one per example), the Δ trick's keeps them apart."""
    return [{k: v for k, v in record.items() if k != "n_nonzero"} for record in model.history_]


@st.composite
def problems(draw):
    """A small random problem (2 to 4 classes, each present), integer-valued or not."""
    k = draw(st.integers(2, 4))
    n = draw(st.integers(k, 16))
    d = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    if draw(st.booleans()):
        X = rng.integers(-3, 4, size=(n, d)).astype(np.float64)
    else:
        X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.6)
    y = np.concatenate([np.arange(k), rng.integers(0, k, size=n - k)])
    rng.shuffle(y)
    return X, y, k


def augment(X, delta, before=0, after=0):
    """``[X | 0 | Δ·I | 0]``: every row its own feature of value Δ, ``before`` zero columns
    ahead of that block and ``after`` zero columns behind it."""
    n = X.shape[0]
    return np.hstack([X, np.zeros((n, before)), delta * np.eye(n), np.zeros((n, after))])


def layout(X, sparse):
    return sp.csr_matrix(X) if sparse else X


settings_ = settings(max_examples=80, deadline=None)
deltas_ = st.sampled_from([0.5, 1.0, 2.5, 0.3, 4])


@settings_
@given(
    problems(),
    st.integers(1, 4),
    st.booleans(),
    st.integers(0, 2**16),
    st.booleans(),
    deltas_,
    st.sampled_from(ESTIMATORS),
)
def test_delta_trains_like_the_augmented_matrix(problem, epochs, shuffle, seed, sparse, delta, cls):
    X, y, k = problem
    d = X.shape[1]
    params = {"max_epochs": epochs, "shuffle": shuffle, "random_state": seed}
    model = cls(delta=delta, **params).fit(layout(X, sparse), y)
    X_aug = augment(X, delta)
    explicit = cls(**params).fit(layout(X_aug, sparse), y)
    # The kernels do the augmented matrix's arithmetic in its order: bit-identical.
    assert _records(model) == _records(explicit)
    assert_array_equal(model.coef_, explicit.coef_[:, :d])
    assert_array_equal(model.intercept_, explicit.intercept_)

    orders = reference.epoch_orders(len(y), epochs, shuffle=shuffle, random_state=seed)
    if k == 2:
        signs = np.where(y == 1, 1, -1)
        w, b, mistakes = reference.perceptron(X_aug, signs, orders)
        if cls is AveragedPerceptron:
            w, b = reference.averaged_perceptron_naive(X_aug, signs, orders)
        w, b = w[np.newaxis], [b]
    else:
        w, b, mistakes = reference.multiclass_perceptron(X_aug, y, k, orders)
        if cls is AveragedPerceptron:
            w, b = reference.multiclass_averaged_perceptron_naive(X_aug, y, k, orders)
    assert [record["mistakes"] for record in model.history_] == mistakes
    assert_allclose(model.coef_, w[:, :d], **TOL)
    assert_allclose(model.intercept_, b, **TOL)


@settings(max_examples=30, deadline=None)
@given(problems(), st.integers(1, 3), st.booleans(), st.sampled_from(ESTIMATORS))
def test_delta_zero_is_the_plain_perceptron_and_keeps_no_slack(problem, epochs, sparse, cls):
    X, y, _ = problem
    params = {"max_epochs": epochs, "random_state": 0}
    plain = cls(**params).fit(layout(X, sparse), y)
    for zero in (0, 0.0):
        model = cls(delta=zero, **params).fit(layout(X, sparse), y)
        assert_array_equal(model.coef_, plain.coef_)
        assert_array_equal(model.intercept_, plain.intercept_)
        assert model.history_ == plain.history_
        assert model._state.slack is None


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize(
    ("X", "y"),
    [
        # XOR: no line separates it.
        ([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]], [1, 1, 0, 0]),
        # One point with three labels (and two clean ones): nothing separates it.
        ([[0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [-1.0, 0.0]], [0, 1, 2, 0, 1]),
    ],
    ids=["xor", "same-point-three-labels"],
)
def test_a_large_delta_converges_where_the_plain_perceptron_cannot(cls, X, y):
    X, y = np.array(X), np.array(y)
    params = {"max_epochs": 100, "early_stopping": True, "random_state": 0}
    plain = cls(**params).fit(X, y)
    assert plain.n_iter_ == 100
    assert all(record["mistakes"] > 0 for record in plain.history_)
    model = cls(delta=10.0, **params).fit(X, y)
    assert model.n_iter_ < 100
    assert model.history_[-1]["mistakes"] == 0


@settings(max_examples=30, deadline=None)
@given(problems(), deltas_, st.booleans(), st.sampled_from(ESTIMATORS))
def test_partial_fit_batches_are_new_examples(problem, delta, sparse, cls):
    """Each batch is seen once, with fresh Δ features: like one unshuffled epoch of fit
    (where the Δ features are still zero whenever read), so like delta=0."""
    X, y, k = problem
    data = layout(X, sparse)
    model = cls(delta=delta, shuffle=False).partial_fit(data, y, classes=np.arange(k))
    once = cls(delta=delta, max_epochs=1, shuffle=False).fit(data, y)
    plain = cls(max_epochs=1, shuffle=False).fit(data, y)
    for other in (once, plain):
        assert_array_equal(model.coef_, other.coef_)
        assert_array_equal(model.intercept_, other.intercept_)
    # A second call on the same batch starts its Δ features from zero again.
    model.partial_fit(data, y)
    explicit = cls(shuffle=False).partial_fit(augment(X, delta, after=len(y)), y, np.arange(k))
    explicit.partial_fit(augment(X, delta, before=len(y)), y)
    assert_array_equal(model.coef_, explicit.coef_[:, : X.shape[1]])


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_warm_start_keeps_the_slack_of_as_many_examples_else_starts_fresh(cls, n_classes):
    rng = np.random.default_rng(0)
    X = rng.integers(-2, 3, size=(12, 3)).astype(np.float64)
    y = np.arange(12) % n_classes
    rng.shuffle(y)
    d, delta, params = 3, 1.5, {"max_epochs": 2, "shuffle": False, "warm_start": True}

    same = cls(delta=delta, **params).fit(X, y).fit(X, y)
    explicit = cls(**params).fit(augment(X, delta), y).fit(augment(X, delta), y)
    assert _records(same) == _records(explicit)
    assert_array_equal(same.coef_, explicit.coef_[:, :d])
    assert_array_equal(same.intercept_, explicit.intercept_)

    # Fewer examples: those are new ones, with their own fresh features.
    short_X, short_y = X[:-3], y[:-3]
    other = cls(delta=delta, **params).fit(X, y).fit(short_X, short_y)
    explicit = cls(**params).fit(augment(X, delta, after=9), y)
    explicit.fit(augment(short_X, delta, before=12), short_y)
    assert _records(other) == _records(explicit)
    assert_array_equal(other.coef_, explicit.coef_[:, :d])
    assert_array_equal(other.intercept_, explicit.intercept_)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_early_stopping_on_held_out_data_with_delta(cls):
    """Held-out rows keep zero Δ weights, so their validation scores match too."""
    rng = np.random.default_rng(1)
    X = rng.integers(-3, 4, size=(60, 4)).astype(np.float64)
    y = (X @ [1.0, -1.0, 0.5, 0.0] + rng.integers(-2, 3, size=60) > 0).astype(int)
    params = {
        "max_epochs": 30,
        "early_stopping": True,
        "validation_fraction": 0.25,
        "n_iter_no_change": 3,
        "random_state": 0,
    }
    model = cls(delta=2.0, **params).fit(X, y)
    explicit = cls(**params).fit(augment(X, 2.0), y)
    assert _records(model) == _records(explicit)
    assert_array_equal(model.coef_, explicit.coef_[:, :4])


def test_prediction_ignores_the_delta_features():
    X = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]])
    y = np.array([1, 1, 0, 0])
    model = Perceptron(delta=3.0, max_epochs=5, shuffle=False).fit(X, y)
    assert_array_equal(model.decision_function(X), X @ model.coef_.ravel() + model.intercept_)


# ------------------------------------------------------------------- mistake log
def _run_kernel(X, y, order, *, multiclass, sparse, delta, log):
    """One kernel call on fresh state; returns (mistakes, weights, log)."""
    n, d = X.shape
    if multiclass:
        k = int(y.max()) + 1
        codes, weights, aux = y.astype(np.int64), np.zeros((d + 1, k)), np.zeros((0, 0))
        slack = np.zeros((n, k) if delta > 0 else (0, k))
        kernel = perceptron_kernels.multiclass_epoch
    else:
        codes, weights, aux = np.where(y == 1, 1.0, -1.0), np.zeros(d + 1), np.zeros(0)
        slack = np.zeros(n if delta > 0 else 0)
        kernel = perceptron_kernels.binary_epoch
    mistake_log = np.full((len(order) if log else 0, 2), -7, dtype=np.int64)
    common = {
        "y": codes,
        "order": order,
        "weights": weights,
        "aux": aux,
        "slack": slack,
        "mistake_log": mistake_log,
        "count": 0,
        "rule": perceptron_kernels.update_rule(bias_feature=1.0, delta=delta),
        "sample_weight": np.empty(0),
    }
    if sparse:
        M = sp.csr_matrix(X)
        mistakes, wrong, count = kernel(rows=(M.data, M.indices, M.indptr), **common)
    else:
        mistakes, wrong, count = kernel(rows=X, **common)
    assert count == len(order)
    assert wrong == mistakes  # the plain rule updates on the augmented problem's mistakes
    return mistakes, weights, mistake_log


@settings(max_examples=60, deadline=None)
@given(problems(), st.integers(1, 3), st.booleans(), st.sampled_from([0.0, 1.0, 2.5]))
def test_mistake_log_lists_where_the_reference_updates(problem, epochs, sparse, delta):
    """One call over several shuffled epochs: the logged positions are exactly those
    where the reference's model changes, with the class it had predicted there."""
    X, y, k = problem
    multiclass = k > 2
    rng = np.random.default_rng(len(y))
    order = np.concatenate([rng.permutation(len(y)) for _ in range(epochs)])
    mistakes, weights, log = _run_kernel(
        X, y, order, multiclass=multiclass, sparse=sparse, delta=delta, log=True
    )
    X_aug = augment(X, delta)
    expected = []
    for position in range(len(order)):
        before, after = [order[:position]], [order[: position + 1]]
        if multiclass:
            _, b_before, _ = reference.multiclass_perceptron(X_aug, y, k, before)
            _, b_after, _ = reference.multiclass_perceptron(X_aug, y, k, after)
            if not np.array_equal(b_before, b_after):  # the predicted bias lost 1
                expected.append([position, int(np.argmin(b_after - b_before))])
        else:
            signs = np.where(y == 1, 1, -1)
            _, b_before, _ = reference.perceptron(X_aug, signs, before)
            _, b_after, _ = reference.perceptron(X_aug, signs, after)
            if b_before != b_after:
                expected.append([position, -1])
    assert mistakes == len(expected)
    assert_array_equal(log[:mistakes], np.array(expected, dtype=np.int64).reshape(-1, 2))
    assert np.all(log[mistakes:] == -7)  # rows past the mistakes are left alone

    # Logging changes nothing else, and the disabled (0, 2) log is never written.
    unlogged, plain_weights, empty = _run_kernel(
        X, y, order, multiclass=multiclass, sparse=sparse, delta=delta, log=False
    )
    assert unlogged == mistakes and empty.shape == (0, 2)
    assert_array_equal(plain_weights, weights)
