"""Every update rule's arithmetic at the ends of the float range: a constant near the
normal limits, features of 1e-170 (whose squares underflow to 0) or 1e300, sample
weights of 1e300. Whatever the rule, its form and the input's layout, training either
gives a finite model that scores its own examples finitely or refuses in one line that
names the rule (and the constants given, when there are), never a ``ZeroDivisionError``
from the compiled kernels (they use NumPy's error model and check each update's step:
:mod:`perceptrons._kernels._rows`).
"""

import sys

import numpy as np
import pytest
import scipy.sparse as sp

from perceptrons import AveragedPerceptron, LogisticRegressionSGD, Perceptron
from perceptrons.linear._update_rules import RULES

#: (rule, covariance): every form of every rule.
FORMS = [
    pytest.param(rule.name, covariance, id=f"{rule.name}-{covariance}")
    for rule in RULES.values()
    for covariance in (("diagonal", "full") if rule.covariance else ("diagonal",))
]
TINY = sys.float_info.min  # the smallest normal float: accepted


def _extremes(rule):
    """Each constant alone at each end of its interval (normal floats only)."""
    cases = []
    for name, constant in RULES[rule].constants.items():
        low = TINY if constant.low == 0.0 else constant.low
        if not constant.accepts(low):  # an open end other than 0: just inside it
            low = np.nextafter(constant.low, np.inf)
        high = 1e308 if constant.high == np.inf else np.nextafter(constant.high, -np.inf)
        cases += [{name: float(low)}, {name: float(high)}]
    return cases


def _data(scale, n_classes, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(12, 3)) * scale
    y = np.arange(12) % n_classes
    return X, y


def _outcome(model, X, y, params, weights=None):
    """Fit; a fitted model scores X finitely, a refusal is one line naming the rule
    (and, when constants were given, them)."""
    rule = model.update
    try:
        model.fit(X, y, sample_weight=weights)
    except ValueError as error:
        text = str(error)
        assert "\n" not in text and "non-finite" in text, text
        if params:
            assert f"update={rule!r}" in text and all(f"{k}=" in text for k in params), text
        elif "steps became" in text:
            assert f"update={rule!r}" in text, text
        return "refused"
    assert np.isfinite(model.coef_).all() and np.isfinite(model.intercept_).all()
    assert np.isfinite(model.decision_function(X)).all()
    return "fitted"


@pytest.mark.parametrize(("rule", "covariance"), FORMS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_extreme_constants_and_scales_fit_finitely_or_refuse_naming_the_rule(
    rule, covariance, n_classes
):
    weighted = RULES[rule].weighted
    cases = [(params, scale) for params in [{}, *_extremes(rule)] for scale in (1e-170, 1e300)]
    for k, (params, scale) in enumerate(cases):
        X, y = _data(scale, n_classes, seed=k)
        data = sp.csr_matrix(X) if k % 2 else X  # both layouts, alternately
        weights = np.where(np.arange(12) % 3 == 0, 1e300, 1.0) if weighted and k % 3 == 0 else None
        # (l1 > 0 cannot be averaged)
        cls = AveragedPerceptron if k % 2 and not params.get("l1") else Perceptron
        model = cls(
            update=rule,
            update_params=params,
            covariance=covariance,
            max_epochs=2,
            random_state=0,
            fit_intercept=bool(k % 4),
        )
        _outcome(model, data, y, params, weights)


# ------------------------------------------------------------- the attacked cases
@pytest.mark.parametrize(
    ("rule", "params", "scale", "weight"),
    [
        ("narow", {"b": 1e308}, 1.0, 1.0),
        ("nag", {}, 1e-170, 1.0),
        ("scw-ii", {}, 1.0, 1e300),
        ("scw-i", {"a": 1e100}, 1.0, 1.0),
        ("scw-ii", {"a": 1e24}, 1.0, 1.0),
    ],
)
def test_the_attacked_rules_refuse_in_one_line_naming_the_rule(rule, params, scale, weight):
    """Each of these raised ZeroDivisionError from the compiled epoch (the attack's data:
    200 examples of 5 normal features, alternating labels)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5)) * scale
    y = np.arange(200) % 2
    model = AveragedPerceptron(update=rule, update_params=params, random_state=0)
    assert _outcome(model, X, y, params, np.full(200, weight)) == "refused"


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"update": "arow", "update_params": {"r": 1e-320}}, "update_params['r']"),
        ({"update": "ada-fobos", "update_params": {"l1": 5e-324}}, "update_params['l1']"),
        ({"update": "pa-ii", "C": 1e-320}, "parameter 'C'"),
        ({"update": "ogd", "update_params": {"eta": float("inf")}}, "update_params['eta']"),
        ({"update": "narow", "update_params": {"b": float("nan")}}, "update_params['b']"),
        ({"update": "arow", "update_params": {"r": 0.0}}, "update_params['r']"),
    ],
)
def test_constants_outside_the_normal_floats_are_refused_at_fit(kwargs, named):
    """A subnormal constant was accepted, then blamed on the features."""
    with pytest.raises(ValueError) as error:
        AveragedPerceptron(**kwargs).fit([[0.0], [1.0]], [0, 1])
    text = str(error.value)
    assert named in text and "\n" not in text and "scale the features" not in text
    if "e-32" in text:
        assert "subnormal" in text


def test_zero_stays_a_constant_where_the_interval_holds_it():
    AveragedPerceptron(update="ada-fobos", update_params={"l1": 0.0}).fit([[0.0], [1.0]], [0, 1])
    Perceptron(update="ogd", update_params={"power_t": 0.0}).fit([[0.0], [1.0]], [0, 1])


@pytest.mark.parametrize("weight", [1e300, 1.0])
def test_logistic_regression_refuses_a_step_that_overflows(weight):
    """learning_rate times a sample weight beyond the floats: the step's own arithmetic."""
    X, y = _data(1.0, 3)
    model = LogisticRegressionSGD(learning_rate=1e10, random_state=0, max_epochs=2)
    if weight == 1.0:
        assert np.isfinite(model.fit(X, y).coef_).all()
        return
    with pytest.raises(ValueError, match=r"^LogisticRegressionSGD: steps became non-finite"):
        model.fit(X, y, sample_weight=np.full(12, weight))
