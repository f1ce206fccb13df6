"""The second-order family (the second-order perceptron and the improved ellipsoid
method) against its oracles, and what every rule of the engine must do (model files,
averaging, weights, mixing, refusals)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from perceptrons import AveragedPerceptron, Perceptron, reference
from perceptrons.linear._update_rules import RULES
from rule_problems import problems

TOL = {"rtol": 1e-9, "atol": 1e-9}
SECOND_ORDER = [name for name, rule in RULES.items() if rule.family == "second-order"]
ORACLES = {"sop": reference.second_order_perceptron, "iellip": reference.improved_ellipsoid}
# Constants other than the defaults, to reach every term of each rule.
CONSTANTS = {
    "sop": [{"a": 0.1}, {"a": 1.0}, {"a": 10.0}],
    "iellip": [{"a": 1.0}, {"a": 0.5, "b": 0.9, "c": 0.5}, {"a": 3.0, "b": 0.99, "c": 0.9}],
}


def _dense(coef):
    return coef.toarray() if sp.issparse(coef) else coef


@settings(max_examples=80, deadline=None)
@given(
    problems(),
    st.integers(1, 3),
    st.integers(0, 2**16),
    st.sampled_from(SECOND_ORDER),
    st.sampled_from(["diagonal", "full"]),
    st.integers(0, 2),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_second_order_rules_equal_their_oracle(
    problem, epochs, seed, rule, covariance, which, sparse, weighted, fit_intercept
):
    X, y, k = problem
    constants = CONSTANTS[rule][which]
    data = sp.csr_matrix(X) if sparse else X
    rng = np.random.default_rng(seed)
    weights = rng.choice([0.0, 0.5, 1.0, 3.0], size=len(y)) if weighted else None
    if weights is not None:
        weights[:k] = 1.0  # every class keeps an example of positive weight
    params = {
        "max_epochs": epochs,
        "random_state": seed,
        "update": rule,
        "update_params": constants,
        "covariance": covariance,
        "fit_intercept": fit_intercept,
    }
    last = Perceptron(**params).fit(data, y, sample_weight=weights)
    mean = AveragedPerceptron(**params).fit(data, y, sample_weight=weights)
    orders = reference.epoch_orders(len(y), epochs, True, seed)
    W, b, W_mean, b_mean, mistakes = ORACLES[rule](
        X,
        y,
        k,
        orders,
        covariance=covariance,
        fit_intercept=fit_intercept,
        sample_weight=weights,
        **constants,
    )
    assert_allclose(_dense(last.coef_), W, **TOL)
    assert_allclose(last.intercept_, b, **TOL)
    assert_allclose(_dense(mean.coef_), W_mean, **TOL)
    assert_allclose(mean.intercept_, b_mean, **TOL)
    assert sum(record["mistakes"] for record in last.history_) == mistakes
    assert all(record["updates"] == record["mistakes"] for record in last.history_)


def test_sop_weight_counts_the_example_that_many_times_in_the_correlation():
    """Weight ``s`` on a mistake is the ridge regression with that example ``s`` times:
    after one mistake on ``x`` of weight ``s``, ``w_j = s y x_j / (a + s x_j²)``."""
    X = np.array([[2.0, -1.0], [-2.0, 1.0]])
    params = {"update": "sop", "max_epochs": 1, "shuffle": False, "fit_intercept": False}
    # The first example (score 0) is a mistake; the second, -x, is then scored right.
    x = X[0]
    for s in (1.0, 2.0, 0.25):
        model = Perceptron(**params).fit(X, [1, 0], sample_weight=[s, 1.0])
        assert model.history_[0]["mistakes"] == 1
        assert_allclose(model.coef_[0], s * x / (1.0 + s * x * x), **TOL)


@pytest.mark.parametrize("covariance", ["diagonal", "full"])
def test_iellip_weights_do_not_depend_on_the_initial_scale(covariance):
    """Both of IELLIP's steps are invariant to the scale of the ellipsoid, so ``a`` (its
    initial a I) leaves the weights unchanged (to rounding)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 5))
    y = rng.integers(0, 3, size=60)
    params = {"update": "iellip", "covariance": covariance, "random_state": 0}
    small = Perceptron(**params, update_params={"a": 0.01}).fit(X, y)
    large = Perceptron(**params, update_params={"a": 100.0}).fit(X, y)
    assert_allclose(small.coef_, large.coef_, rtol=1e-9, atol=1e-12)
    other_c = Perceptron(**params, update_params={"c": 0.9, "b": 0.99}).fit(X, y)
    assert not np.allclose(small.coef_, other_c.coef_)  # c and b do matter


def test_the_sop_correlation_is_shared_by_the_classes():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 4))
    y = rng.integers(0, 3, size=40)
    diagonal = Perceptron(update="sop", random_state=0).fit(X, y)
    full = Perceptron(update="sop", covariance="full", random_state=0).fit(X, y)
    assert diagonal._state.stats.shape == (1, 5)
    assert full._state.stats.shape == (1, 1, 5, 5)
    iellip = Perceptron(update="iellip", random_state=0).fit(X, y)
    assert iellip._state.stats.shape == (1, 5, 3)  # one ellipsoid per class
    assert iellip._state.scalars.shape == (1,)


@pytest.mark.parametrize("rule", SECOND_ORDER)
def test_parameter_mixing_trains_the_diagonal_form_and_refuses_the_full(rule):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(80, 5))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    mixed = AveragedPerceptron(update=rule, n_shards=2, random_state=0).fit(X, y)
    assert mixed.score(X, y) > 0.85
    with pytest.raises(ValueError, match=r"parameter mixing.*dense matrix"):
        AveragedPerceptron(update=rule, covariance="full", n_shards=2).fit(X, y)


@pytest.mark.parametrize("rule", SECOND_ORDER)
@pytest.mark.parametrize("covariance", ["diagonal", "full"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_overflowing_scores_are_refused(rule, covariance, n_classes):
    X = np.array([[1e200, 1.0], [1e200, -1.0], [-1e200, 1.0], [1e200, 2.0]])
    y = np.array([0, 1, 2, 1])[:4] % n_classes
    with pytest.raises(ValueError, match="non-finite"):
        Perceptron(update=rule, covariance=covariance, max_epochs=5).fit(X * 1e100, y)


def test_bad_update_params_are_refused_by_name():
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"update_params\['a'\].*sop.*\(0, inf\]"):
        Perceptron(update="sop", update_params={"a": 0.0}).fit(X, y)
    with pytest.raises(ValueError, match=r"update_params\['b'\].*iellip.*\(0, 1\)"):
        Perceptron(update="iellip", update_params={"b": 1.0}).fit(X, y)
    with pytest.raises(ValueError, match=r"update_params\['c'\].*iellip.*\(0, 1\)"):
        Perceptron(update="iellip", update_params={"c": 0.0}).fit(X, y)
    with pytest.raises(ValueError, match=r"no constant 'r'.*its constants: a, b, c"):
        Perceptron(update="iellip", update_params={"r": 1.0}).fit(X, y)


def test_a_state_of_one_rule_does_not_continue_under_the_other():
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    model = Perceptron(update="sop", warm_start=True).fit(X, y)
    model.set_params(update="iellip")
    with pytest.raises(ValueError, match="cannot continue a state"):
        model.fit(X, y)


@pytest.mark.parametrize("rule", SECOND_ORDER)
def test_full_form_too_large_is_refused_before_allocating(rule):
    from perceptrons._memory import MemoryBudgetError

    X = sp.csr_matrix(([1.0, 1.0], ([0, 1], [0, 1])), shape=(4, 2**20))
    with pytest.raises(MemoryBudgetError, match="1,048,577 x 1,048,577"):
        Perceptron(update=rule, covariance="full").fit(X, [0, 1, 0, 1])


@pytest.mark.parametrize("rule", SECOND_ORDER)
@pytest.mark.parametrize("covariance", ["diagonal", "full"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_kernels_log_each_mistake_with_the_class_moved_away_from(rule, covariance, n_classes):
    from perceptrons.linear._families import Settings, resolve_rule

    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 4))
    codes = rng.integers(0, n_classes, size=40)
    y = np.where(codes == 1, 1.0, -1.0) if n_classes == 2 else codes.astype(np.int64)
    resolved = resolve_rule("test", rule, None, covariance)
    state = resolved.state_class.zeros(4, 1 if n_classes == 2 else n_classes, False)
    kernel = resolved.epoch(n_classes > 2)
    rule_array = resolved.rule_array(Settings(bias_feature=1.0, C=1.0, margin=0.0, delta=0.0))
    order = np.arange(40)
    log = np.full((40, 2), -7, dtype=np.int64)
    unlogged = resolved.state_class.zeros(4, 1 if n_classes == 2 else n_classes, False)
    args = (X, y, order)
    mistakes, wrong, _ = kernel(
        *args, state.weights, state.aux, state.stats, state.scalars, log, 0, rule_array, np.empty(0)
    )
    assert wrong == mistakes  # mistake-driven: every update is a wrong prediction
    again, _, _ = kernel(
        *args,
        unlogged.weights,
        unlogged.aux,
        unlogged.stats,
        unlogged.scalars,
        np.empty((0, 2), dtype=np.int64),
        0,
        rule_array,
        np.empty(0),
    )
    assert 0 < mistakes == again
    np.testing.assert_array_equal(state.weights, unlogged.weights)  # logging changes nothing
    positions, others = log[:mistakes, 0], log[:mistakes, 1]
    assert np.all(np.diff(positions) > 0)
    assert np.all(log[mistakes:] == -7)
    if n_classes == 2:
        assert np.all(others == -1)
    else:
        assert np.all(others != codes[positions])
        assert np.all((others >= 0) & (others < n_classes))
