"""The first-order rules (ALMA_2, online gradient descent) against their oracle, and what
every rule of the engine must do (model files, averaging, weights, refusals)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from perceptrons import AveragedPerceptron, Perceptron, reference
from perceptrons.linear._update_rules import RULES
from rule_problems import problems

TOL = {"rtol": 1e-9, "atol": 1e-9}
# (OGD's L1 forms, FOBOS and truncated gradient: tests/test_truncated_gradient.py)
FIRST_ORDER = [
    name for name, rule in RULES.items() if rule.family == "first-order" and rule.penalty is None
]
# Constants each rule is tried with: the defaults, a larger and a smaller margin, a step
# so large that most ALMA updates project and the lazy scale is folded; a fast-decaying
# and a constant OGD step.
CONSTANTS = {
    "alma": [{}, {"alpha": 0.5}, {"alpha": 0.1, "B": 3.0}, {"alpha": 1.0}, {"step": 20.0}],
    "ogd": [{}, {"eta": 0.1, "power_t": 1.0}, {"eta": 2.0, "power_t": 0.0}],
}


def _dense(coef):
    return coef.toarray() if sp.issparse(coef) else coef


@settings(max_examples=80, deadline=None)
@given(
    st.data(),
    st.integers(1, 3),
    st.integers(0, 2**16),
    st.sampled_from([(rule, i) for rule in FIRST_ORDER for i in range(len(CONSTANTS[rule]))]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_first_order_rules_equal_their_oracle(
    data, epochs, seed, rule_and_constants, sparse, weighted, fit_intercept
):
    rule, which = rule_and_constants
    # ALMA normalizes the examples: a row with a single nonzero becomes exactly a unit
    # vector, and such rows make exact ties (of two classes, or of a margin with 0) that
    # the lazy scale's rounding breaks. Its problems hold no zeros (CSR input is still
    # CSR); on a line (one feature, no intercept) every projected weight is exactly +-1.
    X, y, k = data.draw(problems(zeros=rule != "alma"))
    assume(rule != "alma" or X.shape[1] > 1 or fit_intercept)
    constants = CONSTANTS[rule][which]
    rows = sp.csr_matrix(X) if sparse else X
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
    last = Perceptron(**params).fit(rows, y, sample_weight=weights)
    mean = AveragedPerceptron(**params).fit(rows, y, sample_weight=weights)
    orders = reference.epoch_orders(len(y), epochs, True, seed)
    W, b, W_mean, b_mean, updates = reference.first_order_online(
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
    assert sum(record["updates"] for record in last.history_) == updates


@pytest.mark.parametrize("n_classes", [2, 3])
def test_alma_keeps_every_class_in_the_unit_ball_and_knows_its_norm(n_classes):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 6)) * 5.0
    y = rng.integers(0, n_classes, size=80)
    model = Perceptron(update="alma", update_params={"step": 10.0}, random_state=0).fit(X, y)
    coef = np.atleast_2d(model.coef_)
    norms = np.sqrt((coef**2).sum(axis=1) + model.intercept_**2)
    assert norms.max() <= 1.0 + 1e-12
    # The squared norms the kernel keeps without a pass over the weights are the true ones.
    assert_allclose(model._state.stats[2], norms**2, rtol=1e-9)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_alma_folds_its_scale_and_the_average_stays_exact(n_classes):
    """step=1000: every update shrinks the scale by about 1000, so it is folded into the
    weights (scale below 1e-4) again and again; the averaged model still equals the
    oracle's."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 5))
    y = rng.integers(0, n_classes, size=60)
    params = {"update": "alma", "update_params": {"step": 1000.0}, "random_state": 2}
    model = AveragedPerceptron(**params, max_epochs=4).fit(X, y)
    scales = model._state.stats[0]
    # Without folding the scale would be below 1e-4 after two updates of a class.
    assert scales.min() >= 1e-4
    orders = reference.epoch_orders(60, 4, True, 2)
    _, _, W_mean, b_mean, updates = reference.first_order_online(
        X, y, n_classes, orders, rule="alma", constants={"step": 1000.0}
    )
    assert updates > 10
    assert_allclose(model.coef_, W_mean, **TOL)
    assert_allclose(model.intercept_, b_mean, **TOL)


def test_alma_skips_an_example_with_nothing_to_normalize():
    """Without an intercept an all-zero row has no direction: no update, no k."""
    X = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0], [-1.0, 0.5]])
    y = np.array([0, 1, 1, 0])
    params = {"update": "alma", "fit_intercept": False, "shuffle": False, "max_epochs": 1}
    with_zero = Perceptron(**params).fit(X, y)
    without = Perceptron(**params).fit(X[[0, 2, 3]], y[[0, 2, 3]])
    np.testing.assert_array_equal(with_zero.coef_, without.coef_)
    np.testing.assert_array_equal(with_zero._state.scalars, without._state.scalars)


def test_bad_update_params_are_refused_by_name():
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"update_params\['alpha'\].*alma.*\(0, 1\]"):
        Perceptron(update="alma", update_params={"alpha": 0.0}).fit(X, y)
    with pytest.raises(ValueError, match=r"update_params\['alpha'\].*alma.*\(0, 1\]"):
        Perceptron(update="alma", update_params={"alpha": 1.5}).fit(X, y)
    with pytest.raises(ValueError, match=r"no constant 'C'.*its constants: alpha, B, step"):
        Perceptron(update="alma", update_params={"C": 1.0}).fit(X, y)
    with pytest.raises(ValueError, match=r"update_params\['power_t'\].*ogd.*\[0, inf\]"):
        Perceptron(update="ogd", update_params={"power_t": -0.5}).fit(X, y)
    with pytest.raises(ValueError, match=r"update_params\['eta'\].*ogd.*\(0, inf\]"):
        Perceptron(update="ogd", update_params={"eta": 0.0}).fit(X, y)
    with pytest.raises(ValueError, match="no full-covariance form"):
        Perceptron(update="alma", covariance="full").fit(X, y)
    with pytest.raises(ValueError, match="delta > 0"):
        Perceptron(update="ogd", delta=1.0).fit(X, y)


def test_alma_refuses_parameter_mixing_and_ogd_mixes():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(40, 4))
    y = rng.integers(0, 3, size=40)
    with pytest.raises(ValueError, match=r"'alma' does not support n_shards.*unit ball"):
        Perceptron(update="alma", n_shards=2).fit(X, y)
    mixed = Perceptron(update="ogd", n_shards=2, random_state=0, max_epochs=2).fit(X, y)
    assert np.isfinite(mixed.coef_).all() and np.abs(mixed.coef_).max() > 0


@pytest.mark.parametrize("rule", FIRST_ORDER)
@pytest.mark.parametrize("sparse", [False, True])
def test_non_finite_scores_stop_training_with_a_clear_error(rule, sparse):
    huge = np.array([[1e308, 1e308], [-1e308, -1e308], [1e308, -1e308], [-1e308, 1e308]])
    X = sp.csr_matrix(huge) if sparse else huge
    with pytest.raises(ValueError, match="non-finite"):
        Perceptron(update=rule, random_state=0).fit(X, [0, 1, 0, 1])


def test_a_state_of_the_other_rule_is_not_continued():
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    model = Perceptron(update="alma").fit(X, y)
    model.set_params(update="ogd")
    with pytest.raises(ValueError, match="cannot continue a state"):
        model.partial_fit(X, y)


@pytest.mark.parametrize("rule", FIRST_ORDER)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_class_weight_is_the_weight_of_each_class_examples(rule, n_classes):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 4))
    y = rng.integers(0, n_classes, size=40)
    class_weight = {c: 0.5 + c for c in range(n_classes)}
    params = {"update": rule, "random_state": 0, "max_epochs": 2}
    by_class = AveragedPerceptron(**params, class_weight=class_weight).fit(X, y)
    orders = reference.epoch_orders(40, 2, True, 0)
    weights = np.array([class_weight[c] for c in y])
    _, _, W_mean, b_mean, _ = reference.first_order_online(
        X, y, n_classes, orders, rule=rule, sample_weight=weights
    )
    assert_allclose(by_class.coef_, W_mean, **TOL)
    assert_allclose(by_class.intercept_, b_mean, **TOL)


def test_a_model_file_with_a_scale_that_is_not_positive_is_refused():
    X, y = np.eye(4), np.array([0, 1, 2, 1])
    state = Perceptron(update="alma").fit(X, y)._state
    arrays = {name: array.copy() for name, array in state.arrays().items()}
    type(state).restore(arrays, state.values())  # the state as trained is accepted
    arrays["stats"][0, 1] = 0.0
    with pytest.raises(ValueError, match="scale that is not positive"):
        type(state).restore(arrays, state.values())
