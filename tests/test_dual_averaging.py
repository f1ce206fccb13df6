"""The dual-averaging family (RDA, L1-RDA, enhanced L1-RDA; Xiao 2010) against its eager
oracle, and what its lazily recomputed weights must do (continuation, new constants,
refusals). The engine's generic contract is in test_rule_contract.py."""

import tempfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from perceptrons import AveragedPerceptron, Perceptron, reference
from perceptrons.io.persist import load, save
from perceptrons.linear._update_rules import RULES
from rule_problems import problems

TOL = {"rtol": 1e-9, "atol": 1e-9}
DUAL_AVERAGING = [name for name, rule in RULES.items() if rule.family == "dual-averaging"]
WITH_L1 = [rule for rule in DUAL_AVERAGING if "l1" in RULES[rule].constants]


def _dense(coef):
    return coef.toarray() if sp.issparse(coef) else coef


def _constants(rule, scale, l1, rho):
    """Constants of ``rule``: its divisor's constant at ``scale``, and ``l1``, ``rho``
    where the rule has them."""
    if rule == "erda-l1":
        return {"gamma": scale, "rho": rho, "l1": l1}
    return {"sigma": scale, "l1": l1} if rule == "rda-l1" else {"sigma": scale}


def _oracle(X, y, k, orders, rule, constants, fit_intercept=True, weights=None):
    return reference.regularized_dual_averaging(
        X,
        y,
        k,
        orders,
        rule=rule,
        constants=constants,
        fit_intercept=fit_intercept,
        sample_weight=weights,
    )


def _weights(rng, n, k):
    weights = rng.choice([0.0, 0.5, 1.0, 3.0], size=n)
    weights[:k] = 1.0  # every class keeps an example of positive weight
    return weights


def _model(estimator, n_classes):
    """``[coef | intercept]`` as the oracle's ``(columns, d + 1)``."""
    return np.column_stack([_dense(estimator.coef_), estimator.intercept_])


@settings(max_examples=60, deadline=None)
@given(
    problems(scales=[0.1, 1.0, 30.0]),
    st.integers(1, 3),
    st.integers(0, 2**16),
    st.sampled_from(DUAL_AVERAGING),
    st.sampled_from([0.003, 0.3, 2.0]),
    st.sampled_from([0.0, 0.001, 0.05, 0.3]),
    st.sampled_from([0.0, 0.5]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_dual_averaging_rules_equal_their_eager_oracle(
    problem, epochs, seed, rule, scale, l1, rho, sparse, weighted, fit_intercept
):
    """The oracle recomputes every weight every round; the kernels only those each
    example reads, and all of them at the end of the epoch."""
    X, y, k = problem
    constants = _constants(rule, scale, l1, rho)
    rng = np.random.default_rng(seed)
    weights = _weights(rng, len(y), k) if weighted else None
    model = Perceptron(
        max_epochs=epochs,
        random_state=seed,
        update=rule,
        update_params=constants,
        fit_intercept=fit_intercept,
    ).fit(sp.csr_matrix(X) if sparse else X, y, sample_weight=weights)
    orders = reference.epoch_orders(len(y), epochs, True, seed)
    W, b, updates = _oracle(X, y, k, orders, rule, constants, fit_intercept, weights)
    assert_allclose(_dense(model.coef_), W, **TOL)
    assert_allclose(model.intercept_, b, **TOL)
    assert sum(record["updates"] for record in model.history_) == updates


@settings(max_examples=30, deadline=None)
@given(
    problems(),
    st.integers(0, 2**16),
    st.sampled_from(DUAL_AVERAGING),
    st.lists(st.integers(1, 6), min_size=1, max_size=4),
    st.booleans(),
    st.booleans(),
)
def test_partial_fit_pieces_and_a_saved_model_continue_the_oracle(
    problem, seed, rule, cuts, sparse, weighted
):
    """``fit``, then ``partial_fit`` on pieces, one of them after a save and load: the
    oracle's sequence of rounds (the epochs of fit, then the pieces in order)."""
    X, y, k = problem
    constants = _constants(rule, 0.3, 0.02, 0.5)
    rng = np.random.default_rng(seed)
    weights = _weights(rng, len(y), k) if weighted else np.ones(len(y))
    data = sp.csr_matrix(X) if sparse else X
    model = Perceptron(max_epochs=2, random_state=seed, update=rule, update_params=constants)
    model.fit(data, y, sample_weight=weights)
    model.set_params(shuffle=False)
    edges = [int(e) for e in np.cumsum(cuts) if e < len(y)]
    with tempfile.TemporaryDirectory() as directory:
        for n, (start, stop) in enumerate(zip([0, *edges], [*edges, len(y)], strict=True)):
            if n == 1:
                model = load(save(model, Path(directory) / "m.npz"))
            model.partial_fit(data[start:stop], y[start:stop], sample_weight=weights[start:stop])
    orders = [*reference.epoch_orders(len(y), 2, True, seed), np.arange(len(y))]
    W, b, _ = _oracle(X, y, k, orders, rule, constants, True, weights)
    assert_allclose(_dense(model.coef_), W, **TOL)
    assert_allclose(model.intercept_, b, **TOL)


@pytest.mark.parametrize("rule", DUAL_AVERAGING)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_weights_follow_new_constants_on_every_feature(rule, n_classes):
    """Every weight is a function of ``u``, ``t`` and the constants: a later call with
    other constants recomputes every weight, not only those of the features it sees."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 6))
    y = rng.integers(0, n_classes, size=40)
    first = _constants(rule, 0.3, 0.01, 0.5)
    model = Perceptron(update=rule, random_state=0, update_params=first).fit(X, y)
    later = _constants(rule, 0.05, 0.002, 0.2)
    model.set_params(update_params=later)
    only_first = np.zeros((1, 6))
    only_first[0, 0] = 1.0
    model.partial_fit(only_first, y[:1])
    state = model._state
    u, t = state.stats[0], state.scalars[0]
    if rule == "erda-l1":
        scale = later["gamma"] * np.sqrt(t)
        threshold = later["l1"] * t + later["gamma"] * later["rho"] * np.sqrt(t)
    else:
        scale, threshold = later["sigma"] * t, later.get("l1", 0.0) * t
    expected = -np.sign(u) * np.maximum(np.abs(u) - threshold, 0.0) / scale
    expected[-1] = -u[-1] / scale  # the intercept: no penalty
    columns = 1 if n_classes == 2 else n_classes
    assert_allclose(_model(model, n_classes), expected.reshape(-1, columns).T, **TOL)
    recorded = [later.get(name, 0.0) for name in ("sigma", "gamma", "rho", "l1")]
    assert_array_equal(state.scalars[1:], recorded)


@pytest.mark.parametrize("rule", DUAL_AVERAGING)
def test_before_the_first_round_every_weight_is_zero_and_rounds_move_every_weight(rule):
    """``w_1 = 0``; after it, a round that updates nothing still moves every weight (the
    divisor grows with ``t``)."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    y = np.array([1, 1, 1])
    model = Perceptron(update=rule, shuffle=False, update_params=_constants(rule, 4.0, 0.0, 0.0))
    model.partial_fit(X[:2], y[:2], classes=[0, 1])
    before = _model(model, 2).copy()
    assert np.all(before != 0.0)
    # The third example's margin is above 1: no update, yet every weight shrinks.
    model.partial_fit(X[2:], y[2:])
    assert model.history_[-1]["updates"] == 0
    after = _model(model, 2)
    assert np.all(np.abs(after) < np.abs(before))
    assert_array_equal(np.sign(after), np.sign(before))


def test_l1_makes_the_model_sparse_and_rda_without_it_is_dense():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 30))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    dense = Perceptron(update="rda", random_state=0).fit(X, y)
    assert np.count_nonzero(dense.coef_) == 30
    for rule in WITH_L1:
        sparse = Perceptron(update=rule, random_state=0, update_params={"l1": 0.1}).fit(X, y)
        assert np.flatnonzero(sparse.coef_[0]).tolist() == [0, 1], rule
        assert np.all(sparse.coef_[0, :2] > 0)
        assert sparse.intercept_[0] != 0.0  # the intercept is not penalized


def test_rda_l1_without_l1_is_rda():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(50, 4)) * (rng.random((50, 4)) < 0.5)
    y = rng.integers(0, 3, size=50)
    params = {"random_state": 0, "max_epochs": 3}
    plain = Perceptron(update="rda", update_params={"sigma": 0.2}, **params).fit(X, y)
    l1 = Perceptron(update="rda-l1", update_params={"sigma": 0.2, "l1": 0.0}, **params)
    l1.fit(X, y)
    assert_array_equal(plain.coef_, l1.coef_)
    assert_array_equal(plain.intercept_, l1.intercept_)


@pytest.mark.parametrize("rule", DUAL_AVERAGING)
def test_averaging_and_parameter_mixing_are_refused(rule):
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"cannot be averaged: .*every weight moves every round"):
        AveragedPerceptron(update=rule).fit(X, y)
    with pytest.raises(ValueError, match=r"cannot be averaged"):
        AveragedPerceptron(update=rule).partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match=r"parameter mixing.*sum of gradients"):
        Perceptron(update=rule, n_shards=2).fit(X, y)


def test_bad_constants_are_refused_by_name():
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    bad = [
        ("rda", {"sigma": 0.0}, r"update_params\['sigma'\].*'rda'.*\(0, inf\]"),
        ("erda-l1", {"gamma": -1.0}, r"update_params\['gamma'\].*'erda-l1'.*\(0, inf\]"),
        ("erda-l1", {"rho": -0.5}, r"update_params\['rho'\].*\[0, inf\]"),
        ("rda-l1", {"l1": -1.0}, r"update_params\['l1'\].*'rda-l1'.*\[0, inf\]"),
        ("rda", {"l1": 0.1}, r"no constant 'l1'.*its constants: sigma"),
    ]
    for rule, params, message in bad:
        with pytest.raises(ValueError, match=message):
            Perceptron(update=rule, update_params=params).fit(X, y)


def test_a_sum_of_gradients_beyond_the_floats_stops_training_naming_the_rule():
    X = np.array([[1e300, 1e300], [-1e300, 1e300]] * 4)
    y = np.array([1, 0] * 4)
    with pytest.raises(ValueError, match=r"non-finite.*update='rda'"):
        Perceptron(update="rda", max_epochs=2, shuffle=False).fit(X, y, sample_weight=[1e10] * 8)


@pytest.mark.parametrize("rule", DUAL_AVERAGING)
def test_the_oracle_defaults_to_the_tables_constants(rule):
    rng = np.random.default_rng(8)
    X = rng.normal(size=(40, 5)) * 30.0
    y = rng.integers(0, 3, size=40)
    model = Perceptron(update=rule, random_state=0, max_epochs=2).fit(X, y)
    orders = reference.epoch_orders(40, 2, True, 0)
    W, b, _ = reference.regularized_dual_averaging(X, y, 3, orders, rule=rule)
    assert_allclose(model.coef_, W, **TOL)
    assert_allclose(model.intercept_, b, **TOL)
