"""What training refuses before any kernel runs, and what stops it midway.

Malformed sparse matrices (indices past the declared width, a broken ``indptr``) used
to crash or "fit"; continuous labels get a message that says regression; weights that
overflow to inf or NaN stop training with a clear error instead of saving garbage.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris
from sklearn.exceptions import NotFittedError

from perceptrons import (
    AveragedPerceptron,
    BernoulliNaiveBayes,
    LogisticRegressionSGD,
    MultinomialNaiveBayes,
    Perceptron,
    VotedPerceptron,
)
from perceptrons.parallel import mix_threads

CLASSES = [
    "Perceptron()",
    "AveragedPerceptron(update='pa-i')",
    "VotedPerceptron()",
    "VotedPerceptron(kernel='rbf')",
    "LogisticRegressionSGD(average=True)",
    "MultinomialNaiveBayes()",
    "BernoulliNaiveBayes()",
]

# Each in a child process: a crash there fails the test instead of killing pytest.
_CHILD = """
import numpy as np, scipy.sparse as sp
from perceptrons import *

def bad_matrices(fmt):
    # (data, indices, indptr) of a 3 x 4 matrix, each broken one way: CSR has an indptr
    # entry per row (+ 1), CSC one per column.
    ok = [0, 1, 2, 3] if fmt == "csr" else [0, 1, 2, 3, 3]
    cases = {
        "index past the width": ([1.0, 2.0, 3.0], [0, 7, 1], ok),
        "huge index": ([1.0, 2.0, 3.0], [0, 10**9, 1], ok),
        "negative index": ([1.0, 2.0, 3.0], [0, -5, 1], ok),
        "indptr not from 0": ([1.0, 2.0, 3.0], [0, 1, 2], [1] + ok[1:]),
        "decreasing indptr": ([1.0, 2.0, 3.0], [0, 1, 2], [0, 2, 1] + ok[3:]),
        "indptr past nnz": ([1.0, 2.0, 3.0], [0, 1, 2], ok[:-1] + [9]),
    }
    cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
    out = {}
    for name, (data, indices, indptr) in cases.items():
        try:
            M = cls((np.array(data), np.array(indices), np.array(indptr)), shape=(3, 4))
        except ValueError:
            continue  # scipy's own light check caught it
        out[name] = M
    return out

estimator = ESTIMATOR
good = np.abs(np.random.default_rng(0).normal(size=(3, 4)))
y = np.array([0, 1, 0])
model = estimator.fit(good, y)
for fmt in ("csr", "csc"):
    for name, M in bad_matrices(fmt).items():
        calls = [
            ("fit", lambda: type(model)(**model.get_params()).fit(M, y)),
            ("predict", lambda: model.predict(M)),
            ("decision_function", lambda: model.decision_function(M)),
        ]
        if getattr(model, "kernel", None) != "precomputed":
            calls.append(("partial_fit", lambda: model.partial_fit(M, y)))
        for method, call in calls:
            try:
                call()
            except ValueError as error:
                assert "malformed sparse" in str(error), (fmt, name, method, str(error))
            else:
                raise AssertionError(f"{fmt} {name}: {method} accepted it")
    assert len(bad_matrices(fmt)) >= 3, fmt
print("ok")
"""


@pytest.mark.parametrize("estimator", CLASSES)
def test_malformed_sparse_input_is_refused_before_any_kernel(estimator):
    source = textwrap.dedent(_CHILD).replace("ESTIMATOR", estimator)
    result = subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, (result.returncode, result.stderr[-3000:])
    assert result.stdout.strip() == "ok"


def test_a_well_formed_non_canonical_matrix_is_still_accepted():
    """Unsorted and duplicate indices are legal CSR: only out-of-range ones are refused."""
    M = sp.csr_matrix(
        (np.array([1.0, 2.0, 3.0, 1.0]), np.array([2, 0, 1, 1]), np.array([0, 2, 3, 4])),
        shape=(3, 3),
    )
    model = Perceptron(max_epochs=2).fit(M, [0, 1, 0])
    assert model.predict(M).shape == (3,)


@pytest.mark.parametrize(
    "cls",
    [Perceptron, LogisticRegressionSGD, MultinomialNaiveBayes, VotedPerceptron],
)
def test_continuous_labels_are_named_a_regression_target(cls):
    X = np.ones((4, 2))
    for y in ([0.5, 1.5, 0.5, 2.25], np.array([1.0, -1.0, 1.5, 1.0])):
        with pytest.raises(ValueError) as info:
            cls().fit(X, y)
        message = str(info.value)
        assert "Unknown label type: continuous" in message
        assert "regression target" in message
        assert "such as 0.5" in message or "such as 1.5" in message
    # Integral floats and strings that look like numbers are classes.
    assert cls().fit(X, [1.0, -1.0, 1.0, -1.0]).classes_.tolist() == [-1.0, 1.0]
    assert cls().fit(X, ["+1.5", "-1", "+1.5", "-1"]).classes_.tolist() == ["+1.5", "-1"]


# ------------------------------------------------------------- non-finite weights
def _overflowing():
    """Features so large that the averaged perceptron's bookkeeping overflows."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    X[5, 1], X[7, 2] = 1e308, -1e308
    return X, rng.integers(0, 2, 50)


def _assert_unfitted(model):
    with pytest.raises(NotFittedError):
        model.predict(np.ones((1, 3)))
    assert not hasattr(model, "coef_")


def test_weights_that_overflow_stop_fit_and_leave_the_model_unfitted():
    X, y = _overflowing()
    model = AveragedPerceptron(random_state=0)
    with pytest.raises(ValueError, match=r"non-finite \(inf/NaN\) in epoch 1: .*scale the"):
        model.fit(X, y)
    _assert_unfitted(model)
    # Nothing is left half-way: the next fit on sane data starts afresh.
    fine = np.clip(X, -3, 3)
    assert np.isfinite(model.fit(fine, y).coef_).all()
    assert model.history_[0]["epoch"] == 1


def test_a_fitted_model_that_overflows_in_partial_fit_keeps_its_model():
    X, y = _overflowing()
    model = AveragedPerceptron(random_state=0).fit(np.clip(X, -3, 3), y)
    coef, history = model.coef_.copy(), list(model.history_)
    with pytest.raises(ValueError, match="left as it was before this call"):
        model.partial_fit(X, y)
    np.testing.assert_array_equal(model.coef_, coef)
    assert model.history_ == history
    model.partial_fit(np.clip(X, -3, 3), y)  # going on from the model kept
    assert np.isfinite(model.coef_).all() and len(model.history_) == len(history) + 1


def test_fit_epochs_stops_at_the_epoch_that_overflowed():
    X, y = _overflowing()
    model = AveragedPerceptron(random_state=0, max_epochs=5)
    records = []
    with pytest.raises(ValueError, match="in epoch 1"):
        for record in model.fit_epochs(X, y):
            records.append(record)
    assert records == []
    _assert_unfitted(model)


def test_a_huge_learning_rate_stops_logistic_regression():
    X, y = load_iris(return_X_y=True)
    model = LogisticRegressionSGD(learning_rate=1e308, random_state=0)
    with pytest.raises(ValueError, match=r"non-finite.*lower learning_rate"):
        model.fit(X, y)
    _assert_unfitted(model)


def test_parameter_mixing_stops_on_overflowing_weights():
    X, y = _overflowing()
    with pytest.raises(ValueError, match="non-finite"):
        mix_threads(AveragedPerceptron(random_state=0), X, y, n_shards=2)


def test_naive_bayes_refuses_counts_that_overflow_and_keeps_its_model():
    X = np.full((4, 2), 1e308)
    y = [0, 1, 0, 1]
    for cls in (MultinomialNaiveBayes,):
        with pytest.raises(ValueError, match="overflowed to infinity"):
            cls().fit(X, y)
        model = cls().fit(np.ones((4, 2)), y)
        before = model.coef_.copy()
        with pytest.raises(ValueError, match="overflowed to infinity"):
            model.partial_fit(X, y)
        np.testing.assert_array_equal(model.coef_, before)
    # Bernoulli counts presence: never more than the number of rows.
    assert np.isfinite(BernoulliNaiveBayes().fit(X, y).coef_).all()


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_sparse_input_is_refused(value):
    M = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, value], [2.0, 0.0]]))
    y = [0, 1, 0]
    for model in (Perceptron(), LogisticRegressionSGD(), BernoulliNaiveBayes()):
        with pytest.raises(ValueError, match=r"NaN|infinity"):
            model.fit(M, y)
        fitted = type(model)().fit(np.ones((3, 2)), y)
        with pytest.raises(ValueError, match=r"NaN|infinity"):
            fitted.predict(M)
        with pytest.raises(ValueError, match=r"NaN|infinity"):
            fitted.partial_fit(M, y)


def test_the_voted_perceptron_stops_on_overflowing_weights():
    X = np.array([[1e308, 1.0], [-1e308, 1.0], [1e308, -1.0], [-1e308, -1.0]])
    y = [1, 0, 0, 1]
    weights = [2.0, 1.0, 1.0, 1.0]  # a step of 2 x 1e308 is inf
    for params in ({}, {"kernel": "poly", "degree": 1, "gamma": 1.0, "coef0": 0.0}):
        model = VotedPerceptron(shuffle=False, max_epochs=3, **params)
        overflow = r"VotedPerceptron: (weights|scores|kernel values) became"
        with pytest.raises(ValueError, match=overflow):
            model.fit(X, y, sample_weight=weights)
        with pytest.raises(NotFittedError):
            model.predict(X)
    assert VotedPerceptron(max_epochs=2).fit(np.clip(X, -3, 3), y).n_updates_ > 0


def test_all_finite_finds_every_inf_and_nan():
    """The per-epoch check (a vectorized compiled pass) against numpy, at every place."""
    from perceptrons._states import all_finite

    rng = np.random.RandomState(0)
    assert all_finite(np.empty(0)) and all_finite(np.empty((0, 3)))
    for n in (1, 7, 64, 1001):
        values = rng.normal(scale=1e300, size=n)  # huge but finite: squares would overflow
        assert all_finite(values) and all_finite(values.reshape(-1, 1))
        for bad in (np.inf, -np.inf, np.nan):
            for where in {0, n // 2, n - 1}:
                broken = values.copy()
                broken[where] = bad
                assert not all_finite(broken)
                assert not all_finite(broken.reshape(-1, 1))
