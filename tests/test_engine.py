"""The shared online engine: one training path, parameters checked on every call, and
the engine API that the estimators and perceptrons.parallel both drive."""

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

from perceptrons import (
    AveragedPerceptron,
    LogisticRegressionSGD,
    MultinomialNaiveBayes,
    Perceptron,
    VotedPerceptron,
)


def _problem(n_classes=3, n=60, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = np.abs(rng.normal(size=(n, d)))
    return X, rng.integers(0, n_classes, size=n)


# ------------------------------------------------- the two bugs of the divergent paths
def test_a_bad_update_rule_set_after_fit_is_refused_by_partial_fit():
    """Regression: partial_fit used to check parameters on its first call only, so this
    raised a bare KeyError('bogus') from deep inside the training code."""
    X, y = _problem()
    model = Perceptron().fit(X, y)
    model.set_params(update="bogus")
    with pytest.raises(ValueError, match=r"parameter 'update' must be one of"):
        model.partial_fit(X, y)


def test_a_bad_kernel_set_after_fit_is_refused_by_partial_fit():
    """Regression: the voted perceptron used to train silently with the RBF kernel."""
    X, y = _problem()
    model = VotedPerceptron(max_epochs=2, random_state=0).fit(X, y)
    model.set_params(kernel="bogus")
    with pytest.raises(ValueError, match=r"parameter 'kernel' must be"):
        model.partial_fit(X, y)


def test_the_voted_perceptron_refuses_to_continue_with_another_kernel():
    X, y = _problem()
    model = VotedPerceptron(kernel="rbf", max_epochs=2, random_state=0).fit(X, y)
    model.set_params(kernel="poly")
    with pytest.raises(ValueError, match=r"kernel='poly' differs from the kernel"):
        model.partial_fit(X, y)


# --------------------------------------------------------------- one training path
@pytest.mark.parametrize(
    "make",
    [
        lambda: Perceptron(shuffle=False),
        lambda: AveragedPerceptron(shuffle=False, update="pa-i", C=0.5),
        lambda: LogisticRegressionSGD(shuffle=False, average=True, l2=0.01),
    ],
    ids=["Perceptron", "AveragedPerceptron-pa-i", "LogisticRegressionSGD"],
)
def test_fit_of_one_epoch_is_partial_fit_from_zero(make):
    """fit resets, then runs the same training as partial_fit: one epoch of each gives
    the same model bit for bit, dense or sparse."""
    X, y = _problem()
    for data in (X, sp.csr_matrix(X)):
        fitted = make().set_params(max_epochs=1).fit(data, y)
        incremental = make().partial_fit(data, y, classes=np.unique(y))
        assert_array_equal(fitted.coef_, incremental.coef_)
        assert_array_equal(fitted.intercept_, incremental.intercept_)
        assert fitted.history_ == incremental.history_


def test_fit_starts_afresh_and_warm_start_continues():
    X, y = _problem()
    model = AveragedPerceptron(max_epochs=2, random_state=0)
    first = model.fit(X, y).coef_.copy()
    assert_array_equal(model.fit(X, y).coef_, first)  # reset: the same model again
    assert len(model.history_) == 2
    model.set_params(warm_start=True).fit(X, y)
    assert len(model.history_) == 4
    assert model._engine().export_state()[1]["count"] == 4 * len(y)


def test_the_engine_runs_an_epoch_on_a_state_the_caller_owns():
    """The engine API is what perceptrons.parallel drives: a state, one epoch."""
    X, y = _problem()
    model = AveragedPerceptron(shuffle=False).fit(X, y)
    state = model._engine().new_state(X.shape[1])
    record = model._engine().run_epoch(
        state, X, model._engine().encode_targets(y), np.arange(len(y))
    )
    # The engine's record; the estimator's epochs add the model's nonzero weights.
    first = {k: v for k, v in model.history_[0].items() if k not in ("epoch", "n_nonzero")}
    assert record == first and set(record) == {"mistakes", "updates", "examples"}
    assert state.count == len(y)
    reference = AveragedPerceptron(shuffle=False, max_epochs=1).fit(X, y)
    assert_array_equal(state.model()[:-1].T, reference.coef_)


def test_import_state_checks_shapes_before_a_kernel_sees_them():
    X, y = _problem()
    model = AveragedPerceptron(max_epochs=1).fit(X, y)
    arrays, values = model._engine().export_state()
    with pytest.raises(ValueError, match=r"aux of shape \(2, 3\) do not fit"):
        model._engine().import_state({**arrays, "aux": np.zeros((2, 3))}, values)
    with pytest.raises(ValueError, match="count must be a finite number >= 0"):
        model._engine().import_state(arrays, {**values, "count": -1})
    with pytest.raises(ValueError, match="slack of shape"):
        model._engine().import_state({**arrays, "slack": np.zeros((4, 2))}, values)


def test_run_epoch_checks_every_index_before_the_kernel_sees_it():
    """The engine API is public and Numba does no bounds checks: bad sizes and indices
    are refused with a message instead of writing outside an array."""
    X, y = _problem()
    model = Perceptron().fit(X, y)
    state, targets = model._engine().new_state(X.shape[1]), model._engine().encode_targets(y)
    rows = np.arange(len(y))
    with pytest.raises(ValueError, match=r"row indices in order outside \[0, 60\)"):
        model._engine().run_epoch(state, X, targets, np.array([0, 60]))
    with pytest.raises(ValueError, match="row indices in order"):
        model._engine().run_epoch(state, X, targets, np.array([-1]))
    with pytest.raises(ValueError, match="59 targets for 60 rows"):
        model._engine().run_epoch(state, X, targets[:-1], rows)
    with pytest.raises(ValueError, match=r"class codes outside \[0, 3\)"):
        model._engine().run_epoch(state, X, np.full(len(y), 3), rows)
    with pytest.raises(ValueError, match="weights have 6 rows for 4 features"):
        model._engine().run_epoch(state, X[:, :4], targets, rows)
    with pytest.raises(ValueError, match="slack of shape"):
        model._engine().run_epoch(state, X, targets, rows, slack=np.zeros((5, 3)))
    with pytest.raises(ValueError, match="sample_weight of shape"):
        model._engine().run_epoch(state, X, targets, rows, sample_weight=np.ones(3))
    assert state.count == 0  # nothing ran


def test_run_epoch_checks_a_sparse_matrix_s_index_arrays():
    """A CSR matrix built with a column index past its width (SciPy does not check)
    segfaulted the kernel when handed to the public run_epoch directly. In a child
    process, so that a crash fails this test instead of the run."""
    script = """
import numpy as np, scipy.sparse as sp
from perceptrons import AveragedPerceptron
X, y = sp.csr_matrix(np.eye(4)), np.array([0, 1, 0, 1])
model = AveragedPerceptron().fit(X, y)
bad = sp.csr_matrix(
    (np.ones(4), np.array([0, 1, 2, 10**9], dtype=np.int32), np.arange(5)), shape=(4, 4)
)
try:
    engine = model._engine()
    engine.run_epoch(engine.new_state(4), bad, engine.encode_targets(y), np.arange(4))
except ValueError as error:
    print(error)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-1000:]
    assert "column indices must be in [0, 4)" in done.stdout


@pytest.mark.parametrize(
    "make", [Perceptron, LogisticRegressionSGD, VotedPerceptron, MultinomialNaiveBayes]
)
def test_a_fit_refused_after_its_data_passed_keeps_the_old_width(make):
    """A first call's width is recorded while its data is checked; a check after that
    (here: a single class) must not leave the new width on the old model."""
    X, y = _problem()
    model = make().fit(X, y)
    before = model.predict(X)
    with pytest.raises(ValueError, match="at least two classes"):
        model.fit(np.ones((4, 3)), [1, 1, 1, 1])
    assert model.n_features_in_ == X.shape[1]
    assert_array_equal(model.predict(X), before)


# ------------------------------------------------------------ the one epoch loop
class _FakeEpochs:
    """Epochs whose records, finiteness and scores are scripted."""

    def __init__(self, mistakes, scores=None, finite_until=None):
        self.mistakes, self.scores, self.finite_until = mistakes, scores, finite_until
        self.published, self.ran = [], 0

    def run_epoch(self, epoch):
        self.ran = epoch
        return {"mistakes": self.mistakes[epoch - 1], "examples": 10}

    def is_finite(self):
        return self.finite_until is None or self.ran <= self.finite_until

    def publish(self, n_iter):
        self.published.append(n_iter)

    def score(self, validation):
        return self.scores[self.ran - 1]


def test_the_loop_publishes_once_and_stops_after_an_epoch_without_mistakes():
    from perceptrons._engine import Stopping, run_epochs

    epochs, history = _FakeEpochs([3, 1, 0, 2]), [{"epoch": 1}]
    records = list(
        run_epochs(
            epochs,
            max_epochs=4,
            history=history,
            name="Fake",
            stopping=Stopping(True),
            publish_each_epoch=False,
        )
    )
    assert [r["epoch"] for r in records] == [2, 3, 4]  # numbered on from the history
    assert epochs.ran == 3 and epochs.published == [3]
    assert history[1:] == records


def test_the_loop_follows_the_held_out_score_with_patience():
    from perceptrons._engine import Stopping, run_epochs

    epochs = _FakeEpochs([5] * 8, scores=[0.5, 0.7, 0.6, 0.7, 0.65, 0.9, 0.8, 0.8])
    records = list(
        run_epochs(
            epochs,
            max_epochs=8,
            history=[],
            name="Fake",
            stopping=Stopping(True, n_iter_no_change=3),
            validation=("X", "y"),
            publish_each_epoch=False,
        )
    )
    assert [r["validation_score"] for r in records] == [0.5, 0.7, 0.6, 0.7, 0.65]
    assert epochs.published == [1, 2, 3, 4, 5]  # scored: the model is formed each epoch


def test_the_loop_stops_at_a_model_that_overflowed():
    # The estimator's call puts it back as it was (tests/test_rollback.py): the loop
    # only stops, before publishing the overflowed model.
    from perceptrons._engine import run_epochs

    epochs, history = _FakeEpochs([1, 1, 1], finite_until=1), []
    with pytest.raises(ValueError, match=r"Fake: weights became non-finite .* in epoch 2"):
        list(run_epochs(epochs, max_epochs=3, history=history, name="Fake"))
    assert epochs.ran == 2 and epochs.published == [1] and len(history) == 1
