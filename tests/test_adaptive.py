"""The adaptive and second-order update rules against their oracles, and what every
rule of the engine must do (model files, averaging, weights, refusals)."""

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
CONFIDENCE = [name for name, rule in RULES.items() if rule.family == "confidence"]


def _both(params, data, y, sample_weight=None):
    last = Perceptron(**params).fit(data, y, sample_weight=sample_weight)
    mean = AveragedPerceptron(**params).fit(data, y, sample_weight=sample_weight)
    return last, mean


def _dense(coef):
    return coef.toarray() if sp.issparse(coef) else coef


@settings(max_examples=60, deadline=None)
@given(
    problems(),
    st.integers(1, 3),
    st.integers(0, 2**16),
    st.sampled_from(CONFIDENCE),
    st.sampled_from(["diagonal", "full"]),
    st.sampled_from([0.1, 1.0, 10.0]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.sampled_from([0.1, 1.0, 10.0]),
)
def test_confidence_rules_equal_their_oracle(
    problem, epochs, seed, rule, covariance, scale, sparse, weighted, fit_intercept, C
):
    X, y, k = problem
    first, constant = next(iter(RULES[rule].constants.items()))
    # The first constant at 0.1, 1 or 10, or (a confidence eta, in (0.5, 1)) its low,
    # middle or high values.
    value = scale if constant.accepts(scale) else {0.1: 0.55, 1.0: 0.75, 10.0: 0.95}[scale]
    constants = {first: value}
    weighted = weighted and RULES[rule].weighted
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
        "C": C,
    }
    try:
        last, mean = _both(params, data, y, weights)
    except ValueError as error:
        # Exact CW's uncapped step can overflow once its diagonal variances collapse
        # (see test_exact_cw_diagonal_overflow_is_refused): nothing to compare.
        assert rule == "eccw" and "non-finite" in str(error), error
        assume(False)
    orders = reference.epoch_orders(len(y), epochs, True, seed)
    W, b, W_mean, b_mean, _ = reference.confidence_weighted(
        X,
        y,
        k,
        orders,
        rule=rule,
        covariance=covariance,
        constants=constants,
        C=C,
        fit_intercept=fit_intercept,
        sample_weight=weights,
    )
    assert_allclose(_dense(last.coef_), W, **TOL)
    assert_allclose(last.intercept_, b, **TOL)
    assert_allclose(_dense(mean.coef_), W_mean, **TOL)
    assert_allclose(mean.intercept_, b_mean, **TOL)


@pytest.mark.parametrize("value", [True, "1.0", None, float("nan"), [1.0]])
def test_a_constant_must_be_a_real_number(value):
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"update_params\['r'\] .* must be a finite number"):
        Perceptron(update="arow", update_params={"r": value}).fit(X, y)
    assert Perceptron(update="arow", update_params={"r": np.float32(2.0)}).fit(X, y).coef_.size


def test_bad_update_params_are_refused_by_name():
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"update_params\['r'\].*arow.*\(0, inf\]"):
        Perceptron(update="arow", update_params={"r": 0.0}).fit(X, y)
    with pytest.raises(ValueError, match=r"no constant 'C'.*its constants: r, a"):
        Perceptron(update="arow", update_params={"C": 1.0}).fit(X, y)
    with pytest.raises(ValueError, match="no full-covariance form"):
        Perceptron(update="pa", covariance="full").fit(X, y)
    with pytest.raises(ValueError, match="delta > 0"):
        Perceptron(update="arow", delta=1.0).fit(X, y)
    for eta in (0.5, 1.0):  # φ = Φ⁻¹(eta) must be positive and finite
        with pytest.raises(ValueError, match=r"update_params\['eta'\].*scw-i.*\(0.5, 1\)"):
            Perceptron(update="scw-i", update_params={"eta": eta}).fit(X, y)


@pytest.mark.parametrize("rule", ["cw", "eccw"])
def test_cw_has_no_weighted_form(rule):
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match=f"'{rule}' does not support sample_weight"):
        Perceptron(update=rule).fit(X, y, sample_weight=np.ones(4))
    with pytest.raises(ValueError, match=f"'{rule}' does not support class_weight"):
        Perceptron(update=rule, class_weight={0: 2.0}).fit(X, y)


def test_full_covariance_too_large_is_refused_before_allocating():
    from perceptrons._memory import MemoryBudgetError

    X = sp.csr_matrix(([1.0, 1.0], ([0, 1], [0, 1])), shape=(4, 2**20))
    with pytest.raises(MemoryBudgetError, match="full covariance of 1,048,577 x 1,048,577"):
        Perceptron(update="arow", covariance="full").fit(X, [0, 1, 0, 1])


def test_the_confidence_eta_is_passed_as_its_normal_quantile():
    from perceptrons._kernels.confidence import FIRST_CONSTANT, confidence_rule

    defaults = {name: c.default for name, c in RULES["cw"].constants.items()}
    # eta = 0.7 is the phi = 0.5244 of SOL's CW and of Dredze et al.'s experiments
    assert confidence_rule("cw", 1.0, 1.0, defaults)[FIRST_CONSTANT] == pytest.approx(
        0.5244, abs=1e-4
    )
    assert confidence_rule("scw-ii", 1.0, 1.0, {"eta": 0.5 + 1e-12, "a": 1.0})[
        FIRST_CONSTANT
    ] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("rule", ["cw", "eccw", "scw-i", "scw-ii"])
@pytest.mark.parametrize("n_classes", [2, 4])
def test_the_variance_bound_skips_exactly(rule, n_classes):
    """CW and SCW skip the variance pass where a bound on the variance rules out an
    update: on sparse data whose variances have spread, still the oracle's model."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 12)) * (rng.random((80, 12)) < 0.3)
    y = rng.integers(0, n_classes, size=80)
    model = AveragedPerceptron(update=rule, random_state=3, max_epochs=6).fit(sp.csr_matrix(X), y)
    orders = reference.epoch_orders(80, 6, True, 3)
    _, _, W_mean, b_mean, updates = reference.confidence_weighted(
        X, y, n_classes, orders, rule=rule, covariance="diagonal"
    )
    assert 0 < updates < 6 * 80  # some examples updated, some did not
    assert_allclose(_dense(model.coef_), W_mean, **TOL)
    assert_allclose(model.intercept_, b_mean, **TOL)


@settings(max_examples=20, deadline=None)
@given(problems(), st.sampled_from([0.55, 0.7, 0.95]), st.sampled_from(["diagonal", "full"]))
def test_exact_cw_is_scw_i_without_its_cap(problem, eta, covariance):
    """SCW-I's step is exact CW's clipped at C (Wang, Zhao & Hoi 2012): with a C no step
    reaches, the same model bit for bit."""
    X, y, _ = problem
    options = {"random_state": 0, "max_epochs": 2, "covariance": covariance}
    exact = AveragedPerceptron(update="eccw", update_params={"eta": eta}, **options).fit(X, y)
    soft = AveragedPerceptron(update="scw-i", update_params={"eta": eta}, C=1e300, **options).fit(
        X, y
    )
    np.testing.assert_array_equal(exact.coef_, soft.coef_)
    np.testing.assert_array_equal(exact.intercept_, soft.intercept_)


@pytest.mark.parametrize("eta", [0.6, 0.7, 0.9])
def test_exact_cw_leaves_its_constraint_exactly_met(eta):
    """Exact CW's update is the projection on ``M >= φ √(x̃ᵀ Σ x̃)`` (Crammer, Dredze &
    Pereira 2008): after a full-covariance update the example sits on the constraint, so
    the next visit of it does not move the weights."""
    from statistics import NormalDist

    phi = NormalDist().inv_cdf(eta)
    X = np.array([[1.0, -2.0, 0.5], [0.3, 1.0, -1.0]])
    for first in (0, 1):
        model = Perceptron(update="eccw", update_params={"eta": eta}, covariance="full")
        model.partial_fit(X[[first]], [first], classes=[0, 1])
        sigma = model._state.stats[0, 0]
        x = np.append(X[first], 1.0)
        label = 1.0 if first == 1 else -1.0
        margin = label * (model.decision_function(X[[first]])[0])
        assert margin == pytest.approx(phi * np.sqrt(x @ sigma @ x), rel=1e-9)
        before = model.coef_.copy()
        # (up to rounding: the margin may land a hair below the constraint)
        assert_allclose(model.partial_fit(X[[first]], [first]).coef_, before, rtol=1e-12)


def test_exact_cw_diagonal_overflow_is_refused():
    """Exact CW's step grows as |m| / v and has no cap: on dense noisy data the diagonal
    variances collapse until a step overflows, and the fit is refused in one line
    (rather than a model of NaN); the full form stays finite on the same data."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 6)) * (rng.random((30, 6)) < 0.5)
    y = rng.integers(0, 4, size=30)
    params = {"update": "eccw", "update_params": {"eta": 0.95}, "random_state": 2}
    with pytest.raises(ValueError, match=r"non-finite.*update='eccw' with eta=0\.95"):
        Perceptron(max_epochs=5, **params).fit(X, y)
    full = Perceptron(max_epochs=5, covariance="full", **params).fit(X, y)
    assert np.isfinite(full.coef_).all()
