"""The feature-selection family (PET, OFS, SOFS, AdaGrad truncated to a budget of B
features) against its eager oracle: the kernels keep the kept features in a heap
(O(nnz(x) log B) per update), the oracle truncates the whole vector every round."""

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
SELECTION = [name for name, rule in RULES.items() if rule.family == "feature-selection"]


def _dense(coef):
    return coef.toarray() if sp.issparse(coef) else coef


def _constants(rule, B, eta, second):
    constants = {"B": B}
    if rule == "pet":
        constants["eta"] = eta
    elif rule == "fofs":
        constants.update(eta=eta, l2=second)
    elif rule == "sofs":
        constants.update(r=second, a=eta)
    else:
        constants.update(eta=eta, delta=second)
    return constants


def _used_features(coef):
    coef = np.atleast_2d(_dense(coef))
    return int(np.count_nonzero(np.any(coef != 0.0, axis=0)))


@settings(max_examples=120, deadline=None)
@given(
    problems(scales=[0.1, 1.0, 30.0]),
    st.integers(1, 3),
    st.integers(0, 2**16),
    st.sampled_from(SELECTION),
    st.integers(1, 4),
    st.sampled_from([0.05, 0.5, 2.0]),
    st.sampled_from([0.01, 0.3, 10.0]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_the_lazy_truncation_equals_the_eager_oracle(
    problem, epochs, seed, rule, B, eta, second, sparse, weighted, fit_intercept
):
    X, y, k = problem
    if rule == "fofs":
        eta, second = min(eta, 1.0), min(second, 0.3)  # (eta <= 1, l2 < 1)
    constants = _constants(rule, B, eta, second)
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
        "fit_intercept": fit_intercept,
    }
    last = Perceptron(**params).fit(data, y, sample_weight=weights)
    mean = AveragedPerceptron(**params).fit(data, y, sample_weight=weights)
    orders = reference.epoch_orders(len(y), epochs, True, seed)
    W, b, W_mean, b_mean, _ = reference.online_feature_selection(
        X,
        y,
        k,
        orders,
        rule=rule,
        constants=constants,
        fit_intercept=fit_intercept,
        sample_weight=weights,
    )
    assert_allclose(_dense(last.coef_), W, **TOL)
    assert_allclose(last.intercept_, b, **TOL)
    assert_allclose(_dense(mean.coef_), W_mean, **TOL)
    assert_allclose(mean.intercept_, b_mean, **TOL)
    assert _used_features(last.coef_) <= B


@pytest.mark.parametrize("rule", SELECTION)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_no_more_than_B_features_after_any_example(rule, n_classes):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 12)) * (rng.random((60, 12)) < 0.5)
    y = rng.integers(0, n_classes, size=60)
    model = Perceptron(update=rule, update_params={"B": 3}, shuffle=False)
    used = []
    for i in range(60):
        model.partial_fit(X[i : i + 1], y[i : i + 1], classes=np.arange(n_classes))
        used.append(_used_features(model.coef_))
    assert max(used) == 3  # the budget is reached, never exceeded


@pytest.mark.parametrize("rule", SELECTION)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_partial_fit_in_pieces_equals_one_epoch(rule, n_classes):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 8)) * (rng.random((40, 8)) < 0.6)
    y = rng.integers(0, n_classes, size=40)
    params = {"update": rule, "shuffle": False, "max_epochs": 1, "update_params": {"B": 3}}
    for model_class in (Perceptron, AveragedPerceptron):
        whole = model_class(**params).fit(sp.csr_matrix(X), y)
        parts = model_class(**params)
        for start in range(0, 40, 7):
            stop = start + 7
            parts.partial_fit(X[start:stop], y[start:stop], classes=np.arange(n_classes))
        assert_allclose(_dense(parts.coef_), _dense(whole.coef_), **TOL)
        assert_allclose(parts.intercept_, whole.intercept_, **TOL)


@pytest.mark.parametrize("rule", SELECTION)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_ties_keep_the_lower_feature_index(rule, n_classes):
    # The first update moves two equal columns alike from zero: their keys tie.
    X = np.array([[0.0, 2.0, 2.0, 1.0]])
    model = Perceptron(update=rule, update_params={"B": 1}, shuffle=False)
    model.partial_fit(X, [1], classes=np.arange(n_classes))
    used = np.flatnonzero(np.any(np.atleast_2d(model.coef_) != 0.0, axis=0))
    assert used.tolist() == [1]


@pytest.mark.parametrize("rule", SELECTION)
def test_duplicate_columns_tie_as_in_the_oracle(rule):
    rng = np.random.default_rng(1)
    X = np.repeat(rng.integers(-2, 3, size=(30, 3)).astype(float), 2, axis=1)
    y = rng.integers(0, 3, size=30)
    constants = {"B": 3}
    model = Perceptron(update=rule, update_params=constants, shuffle=False, max_epochs=3)
    model.fit(sp.csr_matrix(X), y)
    W, b, _, _, _ = reference.online_feature_selection(
        X, y, 3, reference.epoch_orders(30, 3), rule=rule, constants=constants
    )
    assert_allclose(model.coef_, W, **TOL)
    assert_allclose(model.intercept_, b, **TOL)


def test_truncate_is_the_textbook_operator():
    W = np.array([[0.0, 3.0, -1.0, 2.0, 0.5], [0.0, 0.0, 2.0, -1.0, 0.0]])
    key = np.abs(W).sum(axis=0)  # 0, 3, 3, 3, 0.5
    kept = reference.feature_selection.truncate(W, key, (W != 0).any(axis=0), 2)
    assert_allclose(kept, [[0.0, 3.0, -1.0, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0, 0.0]])
    smallest = reference.feature_selection.truncate(W, key, (W != 0).any(axis=0), 2, largest=False)
    assert_allclose(smallest, [[0.0, 3.0, 0.0, 0.0, 0.5], [0.0, 0.0, 0.0, 0.0, 0.0]])


def test_a_larger_model_is_truncated_by_the_next_call():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 10))
    y = (X[:, 0] > 0).astype(int)
    model = Perceptron(update="adafobos-ofs", update_params={"B": 8}, random_state=0).fit(X, y)
    assert _used_features(model.coef_) == 8
    model.set_params(update_params={"B": 2})
    model.partial_fit(X[:1], y[:1])
    assert _used_features(model.coef_) == 2


def test_the_intercept_is_never_truncated():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 6))
    y = (X[:, 0] + 0.5 > 0).astype(int)
    for rule in SELECTION:
        model = Perceptron(update=rule, update_params={"B": 1}, random_state=0).fit(X, y)
        assert _used_features(model.coef_) == 1
        assert model.intercept_[0] != 0.0


def test_the_budget_keeps_the_informative_features():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(400, 40))
    y = (X[:, 3] - X[:, 7] > 0).astype(int)
    # (The keys of sofs and the AdaGrad rules measure how much a feature was seen, not
    # its weight: on dense features they do not single out the informative ones.)
    for rule in ("pet", "fofs"):
        model = Perceptron(update=rule, update_params={"B": 2}, random_state=0, max_epochs=5)
        model.fit(X, y)
        assert np.flatnonzero(model.coef_[0]).tolist() == [3, 7], rule
        assert model.score(X, y) > 0.9, rule


def test_bad_budgets_and_fofs_constants_are_refused():
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    for bad in (0, 2.5, -1):
        with pytest.raises(ValueError, match=r"update_params\['B'\].*an integer in \[1, inf\]"):
            Perceptron(update="pet", update_params={"B": bad}).fit(X, y)
    # fofs's shrinking factor 1 - l2 * eta stays positive: eta <= 1, l2 < 1.
    with pytest.raises(ValueError, match=r"update_params\['eta'\].*fofs.*\(0, 1\]"):
        Perceptron(update="fofs", update_params={"eta": 2.0}).fit(X, y)
    with pytest.raises(ValueError, match=r"update_params\['l2'\].*fofs.*\(0, 1\)"):
        Perceptron(update="fofs", update_params={"l2": 1.0}).fit(X, y)
    Perceptron(update="pet", update_params={"B": 2.0}).fit(X, y)  # a whole float is a count


def test_parameter_mixing_is_refused():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 5))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=r"parameter mixing.*more than B features"):
        Perceptron(update="fofs", n_shards=2).fit(X, y)
