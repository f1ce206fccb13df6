"""FTRL-Proximal (McMahan et al. 2013) against its oracle, Algorithm 1 line by line with
every weight computed every round, and what its L1 does."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from perceptrons import AveragedPerceptron, Perceptron, reference
from rule_problems import problems

TOL = {"rtol": 1e-9, "atol": 1e-9}


def _dense(coef):
    return coef.toarray() if sp.issparse(coef) else coef


def _oracle(X, y, k, orders, constants, fit_intercept=True, weights=None):
    return reference.ftrl_proximal(
        X,
        y,
        k,
        orders,
        constants=constants,
        fit_intercept=fit_intercept,
        sample_weight=weights,
    )


def _assert_equal(model, W, b):
    assert_allclose(_dense(model.coef_), W, **TOL)
    assert_allclose(model.intercept_, b, **TOL)


@settings(max_examples=80, deadline=None)
@given(
    problems(scales=[0.1, 1.0, 30.0]),
    st.integers(1, 3),
    st.integers(0, 2**16),
    st.sampled_from([0.05, 0.5, 3.0]),
    st.sampled_from([0.0, 0.1, 2.0]),
    st.sampled_from([0.0, 0.05, 0.5]),
    st.sampled_from([0.0, 0.3]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_ftrl_equals_its_oracle(
    problem, epochs, seed, alpha, beta, l1, l2, sparse, weighted, fit_intercept
):
    """The last weights and their exact mean (averaging stays exact with l1 > 0: every
    change is on the example's rows), binary and multiclass, dense and CSR, weighted."""
    X, y, k = problem
    constants = {"alpha": alpha, "beta": beta, "l1": l1, "l2": l2}
    rng = np.random.default_rng(seed)
    weights = rng.choice([0.0, 0.5, 1.0, 3.0], size=len(y)) if weighted else None
    if weights is not None:
        weights[:k] = 1.0  # every class keeps an example of positive weight
    params = {
        "max_epochs": epochs,
        "random_state": seed,
        "update": "ftrl",
        "update_params": constants,
        "fit_intercept": fit_intercept,
    }
    data = sp.csr_matrix(X) if sparse else X
    last = Perceptron(**params).fit(data, y, sample_weight=weights)
    mean = AveragedPerceptron(**params).fit(data, y, sample_weight=weights)
    orders = reference.epoch_orders(len(y), epochs, True, seed)
    W, b, W_mean, b_mean, updates = _oracle(X, y, k, orders, constants, fit_intercept, weights)
    _assert_equal(last, W, b)
    _assert_equal(mean, W_mean, b_mean)
    assert sum(record["updates"] for record in last.history_) == updates


@settings(max_examples=25, deadline=None)
@given(problems(), st.integers(1, 8), st.booleans())
def test_partial_fit_in_pieces_is_one_epoch(problem, pieces, sparse):
    X, y, k = problem
    constants = {"alpha": 0.5, "beta": 0.1, "l1": 0.2, "l2": 0.1}
    data = sp.csr_matrix(X) if sparse else X
    params = {"update": "ftrl", "update_params": constants, "shuffle": False}
    whole = AveragedPerceptron(**params, max_epochs=1).fit(data, y)
    parts = AveragedPerceptron(**params)
    for rows in np.array_split(np.arange(len(y)), pieces):
        if rows.size:
            parts.partial_fit(data[rows], y[rows], classes=np.arange(k))
    _assert_equal(parts, _dense(whole.coef_), whole.intercept_)
    _, _, W_mean, b_mean, _ = _oracle(X, y, k, [np.arange(len(y))], constants)
    _assert_equal(parts, W_mean, b_mean)


def test_l1_keeps_the_informative_features_alone():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 30))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    params = {"update": "ftrl", "random_state": 0, "max_epochs": 1}
    dense = Perceptron(**params, update_params={"l1": 0.0}).fit(X, y)
    assert np.count_nonzero(dense.coef_) == 30
    # (|z| of a noise feature grows with the updates: on the hinge loss they go on at
    # margins below 1, and l1 is fixed; one epoch here.)
    sparse = Perceptron(**params, update_params={"l1": 100.0}).fit(X, y)
    assert np.flatnonzero(sparse.coef_[0]).tolist() == [0, 1]
    assert np.all(sparse.coef_[0, :2] > 0)
    assert sparse.score(X, y) > 0.8
    # An averaged model of l1 > 0 is exact (not refused, as the FOBOS form's is), and
    # sparse too: a weight that was never nonzero stays out of the mean.
    mean = AveragedPerceptron(**params, update_params={"l1": 100.0}).fit(X, y)
    assert np.flatnonzero(mean.coef_[0]).tolist() == [0, 1]


def test_the_intercept_is_not_penalized():
    X = np.zeros((20, 3))
    X[:, 0] = np.linspace(-1e-3, 1e-3, 20)
    y = np.array([0] * 5 + [1] * 15)
    # An l1 no feature's |z| can reach: every feature weight stays 0, the intercept learns
    # the majority class.
    model = Perceptron(update="ftrl", update_params={"l1": 1e6, "l2": 1e6}).fit(X, y)
    assert not _dense(model.coef_).any()
    assert model.intercept_[0] > 0
    assert (model.predict(X) == 1).all()


@pytest.mark.parametrize("n_classes", [2, 3])
def test_new_constants_recompute_every_weight(n_classes):
    """The weights are a function of z, n and the constants: a later call with other
    constants recomputes every weight, not only the features it sees."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 6))
    y = rng.integers(0, n_classes, size=40)
    y[:n_classes] = np.arange(n_classes)
    model = Perceptron(update="ftrl", random_state=0).fit(sp.csr_matrix(X), y)
    new = {"alpha": 0.25, "beta": 2.0, "l1": 0.05, "l2": 0.5}
    model.set_params(update_params=new)
    only_first = np.zeros((1, 6))
    only_first[0, 0] = 1.0
    model.partial_fit(sp.csr_matrix(only_first), y[:1])
    state = model._state
    z, n = state.stats[0], state.stats[1]
    expected = np.where(
        np.abs(z) > new["l1"],
        -(z - np.sign(z) * new["l1"]) / ((new["beta"] + np.sqrt(n)) / new["alpha"] + new["l2"]),
        0.0,
    )
    expected[-1] = -z[-1] / ((new["beta"] + np.sqrt(n[-1])) / new["alpha"])  # no penalty
    coef = model.coef_.ravel() if n_classes == 2 else model.coef_.T.ravel()
    assert_allclose(np.append(coef, model.intercept_), expected.ravel(), **TOL)
    assert state.scalars.tolist() == [0.25, 2.0, 0.05, 0.5]


def test_parameter_mixing_is_refused():
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"parameter mixing.*statistics z and n"):
        Perceptron(update="ftrl", n_shards=2).fit(X, y)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"alpha": 0.0}, r"update_params\['alpha'\].*'ftrl'.*\(0, inf\]"),
        ({"beta": -1.0}, r"update_params\['beta'\].*'ftrl'.*\[0, inf\]"),
        ({"l1": -0.1}, r"update_params\['l1'\].*'ftrl'.*\[0, inf\]"),
        ({"l2": float("nan")}, r"update_params\['l2'\].*'ftrl'.*\[0, inf\]"),
        ({"eta": 1.0}, r"no constant 'eta'.*its constants: alpha, beta, l1, l2"),
    ],
)
def test_bad_constants_are_refused_by_name(params, message):
    with pytest.raises(ValueError, match=message):
        Perceptron(update="ftrl", update_params=params).fit(np.eye(4), [0, 1, 0, 1])


def test_new_constants_on_a_state_kept_in_its_touched_rows():
    """A call that recomputes every weight cannot train in the example's rows alone: the
    state kept in the touched rows becomes the dense one, and the model is the same."""
    from perceptrons._states import CompactState

    rng = np.random.default_rng(3)
    X = sp.csr_matrix(rng.poisson(0.3, size=(60, 40)) * rng.choice([1.0, -0.5], size=(60, 40)))
    y = rng.integers(0, 3, size=60)
    compact, dense = (AveragedPerceptron(update="ftrl", random_state=0) for _ in range(2))
    compact._touched_rows, dense._touched_rows = True, False
    for model in (compact, dense):
        model.fit(X[:40], y[:40])
    assert isinstance(compact._lifecycle, CompactState)
    for model in (compact, dense):
        model.set_params(update_params={"alpha": 0.3, "l1": 0.05})
        model.partial_fit(X[40:], y[40:])
    assert_allclose(_dense(compact.coef_), dense.coef_, rtol=0, atol=0)
    assert_allclose(compact.intercept_, dense.intercept_, rtol=0, atol=0)
