"""The mistake bound of seed 004 against the perceptron's real mistakes (diagnostics.py)."""

import json
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from sklearn.svm import LinearSVC

from perceptrons import Perceptron
from perceptrons._input import ConvergenceWarning
from perceptrons._svm import hinge_svm
from perceptrons.diagnostics import MistakeBound, _best_target_margin, mistake_bound

# Floating-point slack when comparing an integer mistake count with a computed bound.
SLACK = 1e-9


def separable(seed, n, d, gamma0, fit_intercept):
    """Points with labels and a unit separator ``u*`` of margin exactly ``gamma0``.

    ``u*`` is a random unit vector of the space the perceptron learns in (``(x, 1)``
    with an intercept). Points drawn in ``[-1, 1]^d`` closer than ``gamma0`` to the
    hyperplane are pushed along ``u*`` onto the margin, and so are the first two (one
    per class), so both classes exist and the margin is attained.
    """
    rng = np.random.default_rng(seed)
    u = rng.normal(size=d + fit_intercept)
    u /= np.linalg.norm(u)
    v, b = u[:d], (u[d] if fit_intercept else 0.0)
    assume(np.linalg.norm(v) >= 0.2)  # else pushing onto the margin moves points very far
    X = rng.uniform(-1.0, 1.0, size=(n, d))
    margins = X @ v + b
    target = np.where(np.abs(margins) >= gamma0, margins, np.where(margins >= 0, 1, -1) * gamma0)
    target[:2] = gamma0, -gamma0
    X += ((target - margins) / (v @ v))[:, np.newaxis] * v
    return X, (target > 0).astype(np.int64), u


def plain_run(X, y, fit_intercept, max_epochs, delta=0.0):
    model = Perceptron(
        max_epochs=max_epochs,
        shuffle=False,
        fit_intercept=fit_intercept,
        early_stopping=True,
        delta=delta,
        update="perceptron",
        margin=0.0,
    ).fit(X, y)
    return [record["mistakes"] for record in model.history_]


def check_within_bound(report: MistakeBound):
    assert report.separable and report.bound is not None
    assert report.mistakes <= report.bound + SLACK
    # Every epoch but the last has a mistake, so a bound under max_epochs forces convergence.
    if report.bound + 1 < 100:
        assert report.converged


problem_ = st.tuples(
    st.integers(0, 2**32 - 1),  # seed
    st.integers(2, 40),  # n
    st.integers(1, 5),  # d
    st.sampled_from([0.02, 0.1, 0.3, 0.7]),  # gamma0
)


@settings(max_examples=60, deadline=None)
@given(problem_, st.booleans(), st.integers(0, 2**32 - 1), st.floats(-2.0, 2.0))
def test_mistakes_never_exceed_the_bound(problem, fit_intercept, order_seed, log_scale):
    seed, n, d, gamma0 = problem
    X, y, u = separable(seed, n, d, gamma0, fit_intercept)
    order = np.random.default_rng(order_seed).permutation(n)
    scale = 10.0**log_scale
    X, y = X[order] * scale, y[order]
    # The same hyperplane in the scaled space: u·(c x, 1) = c (v·x + b) for (v, c b).
    known = u.copy()
    known[-1] *= scale if fit_intercept else 1.0

    by_known = mistake_bound(X, y, separator=known, fit_intercept=fit_intercept)
    check_within_bound(by_known)
    assert by_known.gamma == pytest.approx(scale * gamma0 / np.linalg.norm(known), rel=1e-6)
    assert by_known.mistakes_per_epoch == tuple(plain_run(X, y, fit_intercept, 100))

    by_svc = mistake_bound(X, y, fit_intercept=fit_intercept)
    assert by_svc.mistakes_per_epoch == by_known.mistakes_per_epoch
    # A soft-margin LinearSVC need not separate (a margin tiny next to R); the bound is
    # valid for any separator that does.
    if by_svc.separable:
        check_within_bound(by_svc)
    if by_known.gamma / by_known.R >= 0.05:
        assert by_svc.separable


@settings(max_examples=30, deadline=None)
@given(problem_, st.floats(-3.0, 3.0), st.integers(-20, 20))
def test_the_bound_is_scale_invariant_without_intercept(problem, log_scale, power_of_two):
    X, y, u = separable(*problem, fit_intercept=False)
    scale = 10.0**log_scale
    base = mistake_bound(X, y, separator=u, fit_intercept=False)
    scaled = mistake_bound(X * scale, y, separator=u, fit_intercept=False)
    assert scaled.R == pytest.approx(scale * base.R, rel=1e-9)
    assert scaled.bound == pytest.approx(base.bound, rel=1e-9)
    assert scaled.delta_bound == pytest.approx(base.delta_bound, rel=1e-9)
    # LinearSVC is fitted on X / R: the same data at every scale. (A power of two keeps
    # it bit for bit, so that an unconverged solver stops at the same point.)
    base = mistake_bound(X, y, fit_intercept=False)
    scaled = mistake_bound(X * 2.0**power_of_two, y, fit_intercept=False)
    assert scaled.gamma == pytest.approx(2.0**power_of_two * base.gamma, rel=1e-9)
    assert scaled.delta_bound == pytest.approx(base.delta_bound, rel=1e-9)
    assert scaled.mistakes_per_epoch == base.mistakes_per_epoch


@st.composite
def non_separable(draw):
    """Random points with random labels, one point given both labels: no separator."""
    seed = draw(st.integers(0, 2**32 - 1))
    n, d = draw(st.integers(3, 30)), draw(st.integers(1, 4))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * draw(st.sampled_from([0.1, 1.0, 30.0]))
    y = rng.integers(0, 2, size=n)
    X[1], y[:2] = X[0], (0, 1)
    order = rng.permutation(n)
    return X[order], y[order]


@settings(max_examples=50, deadline=None)
@given(non_separable(), st.booleans(), st.booleans())
def test_delta_trick_bound_on_non_separable_data(data, fit_intercept, random_separator):
    X, y = data
    separator = None
    if random_separator:  # the Δ bound holds for any unit u
        separator = np.random.default_rng(len(y)).normal(size=X.shape[1] + fit_intercept)
    report = mistake_bound(X, y, separator=separator, fit_intercept=fit_intercept)
    assert not report.separable and report.bound is None and report.gamma <= 0
    assert report.separator_errors >= 1
    assert 0 < report.delta_bound < math.inf and report.D > 0 and report.gamma_delta > 0
    assert report.delta == pytest.approx(math.sqrt(report.R * report.D))

    # Seed 004: with Δ = sqrt(R D), [X | Δ I] is separable and the perceptron makes at
    # most ((R + D)/γ)² mistakes; each epoch until the last has one, hence the cap.
    epochs = int(report.delta_bound) + 2
    mistakes = plain_run(X, y, fit_intercept, epochs, delta=report.delta)
    assert mistakes[-1] == 0
    assert sum(mistakes) <= report.delta_bound + SLACK


@settings(max_examples=30, deadline=None)
@given(problem_, st.booleans())
def test_delta_trick_bound_on_separable_data_is_tighter(problem, fit_intercept):
    X, y, u = separable(*problem, fit_intercept)
    report = mistake_bound(X, y, separator=u, fit_intercept=fit_intercept)
    # γ itself is a candidate target margin (D = 0 there), so the best one is no worse.
    assert report.delta_bound <= report.bound * (1 + 1e-9)
    if report.delta_bound < 5_000:
        mistakes = plain_run(X, y, fit_intercept, int(report.delta_bound) + 2, report.delta)
        assert mistakes[-1] == 0
        assert sum(mistakes) <= report.delta_bound + SLACK


@pytest.mark.parametrize(("seed", "shift"), [(0, 0.0), (1, 0.5), (2, -0.5), (3, 2.0)])
def test_target_margin_minimizes_the_delta_bound(seed, shift):
    rng = np.random.default_rng(seed)
    R = 3.0
    margins = np.clip(rng.normal(shift, 1.0, size=200), -R, R)

    def delta_bound(gamma):
        return ((R + np.sqrt(np.sum(np.maximum(0.0, gamma - margins) ** 2))) / gamma) ** 2

    best = delta_bound(_best_target_margin(margins, R))
    grid = np.concatenate([np.linspace(1e-4, R, 20_000), margins[margins > 0]])
    assert best <= min(map(delta_bound, grid)) * (1 + 1e-9)
    assert 0 < _best_target_margin(margins, R) <= R


def test_target_margin_of_separable_margins_is_no_worse_than_gamma():
    margins, R = np.array([0.5, 0.7, 2.0]), 2.5
    gamma = _best_target_margin(margins, R)
    D = np.sqrt(np.sum(np.maximum(0.0, gamma - margins) ** 2))
    assert ((R + D) / gamma) ** 2 <= (R / 0.5) ** 2


def test_geometry_matches_an_explicit_augmentation():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(25, 3))
    y = np.where(X[:, 0] + 0.2 > 0, "yes", "no")
    w = np.array([1.0, 0.1, -0.1, 0.2])
    report = mistake_bound(X, y, separator=w)
    augmented = np.hstack([X, np.ones((25, 1))])
    signs = np.where(y == "yes", 1.0, -1.0)
    margins = signs * (augmented @ (w / np.linalg.norm(w)))
    assert report.R == pytest.approx(np.linalg.norm(augmented, axis=1).max())
    assert report.gamma == pytest.approx(margins.min())
    assert report.bound == pytest.approx((report.R / report.gamma) ** 2)
    d = np.maximum(0.0, report.gamma_delta - margins)
    assert report.D == pytest.approx(np.sqrt(np.sum(d**2)))
    assert report.delta_bound == pytest.approx(((report.R + report.D) / report.gamma_delta) ** 2)
    assert report.mistakes == sum(report.mistakes_per_epoch)
    assert report.epochs == len(report.mistakes_per_epoch)


def test_separator_forms_agree():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 4))
    y = (X @ [1.0, -2.0, 0.5, 0.0] + 0.3 > 0).astype(int)
    svc = LinearSVC(C=100.0, random_state=0).fit(X, y)
    vector = np.append(svc.coef_.ravel(), svc.intercept_)
    from_model = mistake_bound(X, y, separator=svc).to_dict()
    from_vector = mistake_bound(X, y, separator=vector).to_dict()
    for key in ("R", "gamma", "bound", "D", "delta_bound", "mistakes"):
        assert from_model[key] == pytest.approx(from_vector[key])
    assert "LinearSVC" in from_model["separator_source"]
    # Our own perceptron, once converged, is a separator too.
    perceptron = Perceptron(max_epochs=200, shuffle=False, early_stopping=True).fit(X, y)
    assert mistake_bound(X, y, separator=perceptron).separable
    # Length n_features means no bias.
    no_bias = mistake_bound(X, y, separator=vector[:-1])
    assert no_bias.gamma == pytest.approx(
        mistake_bound(X, y, separator=np.append(vector[:-1], 0.0)).gamma
    )


@pytest.mark.parametrize("separator", [None, "vector"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_sparse_equals_dense(separator, fit_intercept):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 8)) * (rng.random((60, 8)) < 0.3)
    y = (X @ rng.normal(size=8) > 0).astype(int)
    if separator == "vector":
        separator = rng.normal(size=8 + fit_intercept)
    dense = mistake_bound(X, y, separator=separator, fit_intercept=fit_intercept).to_dict()
    sparse = mistake_bound(
        sp.csr_matrix(X), y, separator=separator, fit_intercept=fit_intercept
    ).to_dict()
    assert dense.keys() == sparse.keys()
    for key, value in dense.items():
        if isinstance(value, float):
            assert_allclose(sparse[key], value, rtol=1e-6, err_msg=key)
        else:
            assert sparse[key] == value, key


@pytest.mark.parametrize("labels", [(0, 1), (-1, 1), ("spam", "ham")])
def test_report_text_and_json(labels):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 0] > 0, labels[1], labels[0])
    for report in (mistake_bound(X, y), mistake_bound(X, y[::-1])):  # separable, then not
        text = str(report)
        assert text == report.to_text()
        for word in ("R ", "γ ", "bound", "mistakes", "Δ", "per epoch"):
            assert word in text
        assert f"{report.mistakes}" in text
        decoded = json.loads(json.dumps(report.to_dict()))
        assert decoded["mistakes_per_epoch"] == list(report.mistakes_per_epoch)
        assert decoded["bound"] == report.bound
        assert json.loads(report.to_json()) == decoded


def test_the_report_is_frozen():
    report = mistake_bound([[1.0], [-1.0]], [0, 1])
    with pytest.raises(AttributeError):
        report.R = 0.0


X4 = np.array([[1.0, 2.0], [2.0, 1.0], [-1.0, -1.0], [-2.0, -1.0]])
Y4 = np.array([1, 1, 0, 0])


@pytest.mark.parametrize(
    ("X", "y", "kwargs", "match"),
    [
        (X4, [1, 1, 1, 1], {}, "exactly two classes"),
        (X4, [0, 1, 2, 2], {}, "one-vs-rest"),
        (X4, [0.5, 1.5, 2.5, 3.5], {}, "binary"),
        (np.where(X4 > 1.5, np.nan, X4), Y4, {}, "NaN"),
        (X4, Y4, {"separator": [1.0, 1.0, 1.0, 1.0]}, "length 2 .* or 3"),
        (X4, Y4, {"separator": np.ones((2, 2))}, "length"),
        (X4, Y4, {"separator": [0.0, 0.0]}, "zero vector"),
        (X4, Y4, {"separator": [np.nan, 1.0]}, "NaN"),
        (X4, Y4, {"separator": [1.0, 1.0, 0.5], "fit_intercept": False}, "bias"),
        (X4, Y4, {"separator": "not a vector"}, "separator"),
        (np.zeros((4, 2)), Y4, {"fit_intercept": False}, "zero vector"),
        (X4, Y4, {"max_epochs": 0}, "max_epochs"),
        (X4, Y4, {"C": -1.0}, "C must be"),
    ],
)
def test_bad_input(X, y, kwargs, match):
    with pytest.raises(ValueError, match=match):
        mistake_bound(X, y, **kwargs)


def test_bad_separator_models():
    multiclass = LinearSVC().fit(np.vstack([X4, [[0.0, 3.0]]]), [0, 1, 2, 2, 1])
    with pytest.raises(ValueError, match="coef_ of shape"):
        mistake_bound(X4, Y4, separator=multiclass)
    other_labels = LinearSVC().fit(X4, ["a", "a", "b", "b"])
    with pytest.raises(ValueError, match="fitted on classes"):
        mistake_bound(X4, Y4, separator=other_labels)
    wrong_width = LinearSVC().fit(np.hstack([X4, X4]), Y4)
    with pytest.raises(ValueError, match="coef_ of shape"):
        mistake_bound(X4, Y4, separator=wrong_width)


# ------------------------------------------------- the default separator's SVM solver
# hinge_svm stops as liblinear does (LinearSVC's solver): when the projected gradients
# of a pass (y_i w·x_i - 1 at each free coordinate) lie within tol of each other. Both
# solutions then meet the optimality conditions to about tol, and the two solvers (their
# examples shuffled by different generators) agree to a multiple of it: measured on 600
# random problems of ``separable`` at tol=1e-4, the weights to 6.8e-4 relative and the
# unit margins to 5.5e-4 R; on 200 at tol=1e-6, to 2.3e-6 and 2.0e-6 R. The tests allow
# 50 tol, for both (mistake_bound runs at LinearSVC's tol, 1e-4).
AGREEMENT = 50  # times tol: the weights' relative difference, the unit margins' over R
WEIGHTS_RTOL = AGREEMENT * 1e-4
MARGIN_ATOL = AGREEMENT * 1e-4  # times R


def _linear_svc(X, signs, C, extra, **options):
    """scikit-learn's LinearSVC on [X | extra] as mistake_bound fitted it before."""
    columns = [X.toarray() if sp.issparse(X) else X]
    if extra:
        columns.append(np.full((X.shape[0], 1), extra))
    svc = LinearSVC(C=C, loss="hinge", fit_intercept=False, dual=True, **options)
    weights = svc.fit(np.hstack(columns), signs).coef_.ravel()
    return weights if extra else np.append(weights, 0.0)


def _unit_margin(X, signs, weights, extra):
    scores = np.asarray(X @ weights[:-1]).ravel() + extra * weights[-1]
    return float(np.min(signs * scores) / np.linalg.norm(weights))


@settings(max_examples=12, deadline=None)
@given(
    problem_,
    st.sampled_from([1.0, 100.0, 1e4]),
    st.booleans(),
    st.booleans(),
    st.sampled_from([1e-4, 1e-6]),
)
def test_the_svm_solver_agrees_with_linear_svc(problem, C, fit_intercept, sparse, tol):
    X, y, _ = separable(*problem, fit_intercept)
    signs = np.where(y == 1, 1.0, -1.0)
    extra = 1.0 if fit_intercept else 0.0
    expected = _linear_svc(X, signs, C, extra, tol=tol, max_iter=1_000_000, random_state=0)
    data = sp.csr_matrix(X) if sparse else X
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # both converged: comparable
        weights, _ = hinge_svm(data, signs, C=C, extra=extra, tol=tol, max_iter=1_000_000)
    difference = np.linalg.norm(weights - expected) / np.linalg.norm(expected)
    assert difference <= AGREEMENT * tol
    R = float(np.sqrt(np.max(np.sum(X**2, axis=1) + extra**2)))
    assert _unit_margin(X, signs, weights, extra) == pytest.approx(
        _unit_margin(X, signs, expected, extra), abs=AGREEMENT * tol * R
    )


@pytest.mark.filterwarnings("error")  # converged: the comparisons mean something
def test_the_svm_solver_is_deterministic_on_every_layout():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 6)) * (rng.random((80, 6)) < 0.5)
    signs = np.where(X @ rng.normal(size=6) + rng.normal(scale=0.5, size=80) > 0, 1.0, -1.0)
    runs = [
        hinge_svm(data, signs, C=1.0, extra=0.5, random_state=3)
        for data in (X, X, np.asfortranarray(X), sp.csr_matrix(X))
    ]
    np.testing.assert_array_equal(runs[1][0], runs[0][0])  # the same seed, the same run
    for weights, n_iter in runs[1:]:  # the layouts: the same sums, up to their order
        np.testing.assert_allclose(weights, runs[0][0], rtol=1e-12)
        assert n_iter == runs[0][1]
    other, _ = hinge_svm(X, signs, C=1.0, extra=0.5, random_state=4)
    assert np.linalg.norm(other - runs[0][0]) <= WEIGHTS_RTOL * np.linalg.norm(runs[0][0])


def test_the_svm_solver_warns_as_linear_svc_when_it_stops_early():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(60, 3))
    signs = np.where(rng.random(60) < 0.5, 1.0, -1.0)  # noise: many passes needed
    with pytest.warns(ConvergenceWarning, match="max_iter=2 before converging"):
        _, n_iter = hinge_svm(X, signs, C=1e4, max_iter=2, random_state=0)
    assert n_iter == 2
    with pytest.raises(ValueError, match="signs"):
        hinge_svm(X, np.zeros(60), C=1.0)
    with pytest.raises(ValueError, match="C must be"):
        hinge_svm(X, signs, C=0.0)


def test_the_report_is_linear_svcs_on_a_fixed_data_set():
    """mistake_bound's default separator gives the numbers LinearSVC gave it (the
    separator before), within the solvers' tolerance; the perceptron's run is the same."""
    from sklearn.datasets import load_iris

    X, labels = load_iris(return_X_y=True)
    y = labels == 0  # setosa against the rest: separable
    report = mistake_bound(X, y).to_dict()
    R = report["R"]
    signs = np.where(y, 1.0, -1.0)
    svc = _linear_svc(X / R, signs, 1e4, 1.0 / R, random_state=0)
    before = mistake_bound(X, y, separator=svc).to_dict()
    assert report["separator_source"].startswith("linear SVM (C=10000, hinge loss")
    assert report["gamma"] == pytest.approx(before["gamma"], abs=MARGIN_ATOL * R)
    for key in ("bound", "gamma_delta", "D", "delta", "delta_bound"):
        assert report[key] == pytest.approx(before[key], rel=WEIGHTS_RTOL), key
    for key in ("R", "separable", "separator_errors", "mistakes_per_epoch", "epochs"):
        assert report[key] == before[key], key
