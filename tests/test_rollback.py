"""A training call is all or nothing: one that raises leaves the estimator as it was.

A batch refused by ``partial_fit`` -- scores or weights that overflow, bad input, a
memory refusal, an interrupt -- must not cost the model trained so far: every estimator,
with every update rule, is compared bit for bit before and after (its model file's
arrays and metadata, its public fitted attributes, its generator), and must then train
on exactly as a twin that never saw the refused batch. A first call that fails leaves
the estimator unfitted, not half fitted; ``fit`` (warm started or not), a stream and
parameter mixing are calls like any other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from fingerprints import fingerprint
from perceptrons import (
    AveragedPerceptron,
    BernoulliNaiveBayes,
    BudgetPerceptron,
    LogisticRegressionBatch,
    LogisticRegressionSGD,
    MultinomialNaiveBayes,
    Perceptron,
    SequenceTagger,
    TextFeaturizer,
    VotedPerceptron,
)
from perceptrons.linear._update_rules import RULES

CLASSES = [0, 1, 2]


def _data() -> tuple[sp.csr_matrix, np.ndarray, sp.csr_matrix, np.ndarray]:
    """A first batch over 60 features, and a later batch over the first 6 only, fewer
    entries than the model has rows: a call keeps only the rows its epochs can write,
    and the other rows hold weights those epochs must not touch."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(48, 60))
    X[rng.random_sample(X.shape) < np.where(np.arange(60) < 6, 0.4, 0.85)] = 0.0
    y = np.argmax(X[:, :3] + 0.3 * rng.normal(size=(48, 3)), axis=1)
    later = X[40:].copy()
    later[:, 6:] = 0.0
    return sp.csr_matrix(X[:40]), y[:40], sp.csr_matrix(later), y[40:]


def _overflowing(later: sp.csr_matrix, huge: float = 1e300) -> sp.csr_matrix:
    """The later batch, its last rows so large that the scores (or the weights, or the
    kernel values) overflow: the good rows before them have been trained on first."""
    bad = later.toarray()
    bad[4:, 0], bad[4:, 1], bad[6:, 2] = huge, -huge, huge
    return sp.csr_matrix(bad)


@dataclass
class Case:
    """An estimator to train on the data, and how its batches are made."""

    make: Callable[[], Any]
    counts: bool = False  # naive Bayes' non-negative counts
    overflows: bool = True  # whether a batch of huge features is refused as non-finite
    later_params: dict[str, Any] | None = None  # set before the later batches


def _cases() -> dict[str, Case]:
    cases: dict[str, Case] = {}
    for update, rule in RULES.items():  # every rule of the table, whatever state it keeps
        # (averaging refuses a penalty on by default: the last weights)
        averaged = Perceptron if rule.penalized(rule.defaults) else AveragedPerceptron
        cases[f"averaged-{update}"] = Case(lambda u=update, a=averaged: a(update=u))
        if rule.covariance:
            cases[f"averaged-{update}-full"] = Case(
                lambda u=update: AveragedPerceptron(update=u, covariance="full")
            )
    cases.update(
        {
            "perceptron": Case(Perceptron),
            # New constants make RDA's next epoch recompute every weight.
            "averaged-ada-rda-new-constants": Case(
                lambda: AveragedPerceptron(update="ada-rda"),
                later_params={"update_params": {"eta": 0.5}},
            ),
            # L1's shrinking brings every weight up to date at the end of an epoch.
            "perceptron-ada-fobos-l1": Case(
                lambda: Perceptron(update="ada-fobos", update_params={"l1": 0.01})
            ),
            "logistic": Case(lambda: LogisticRegressionSGD(average=True)),
            # A decay (learning_rate * l2) that rescales every weight once every 7
            # examples: twice within the later batch.
            "logistic-l2": Case(lambda: LogisticRegressionSGD(learning_rate=1.0, l2=0.95)),
            # A decay that rescales no weight within the later batches.
            "logistic-l2-slow": Case(lambda: LogisticRegressionSGD(average=True, l2=0.01)),
            "voted-linear": Case(VotedPerceptron),
            "voted-linear-ovr": Case(lambda: VotedPerceptron(multiclass="ovr")),
            "voted-poly": Case(lambda: VotedPerceptron(kernel="poly", degree=2)),
            "multinomial-nb": Case(MultinomialNaiveBayes, counts=True),
            "bernoulli-nb": Case(BernoulliNaiveBayes, overflows=False),
        }
    )
    for removal in ("random", "forgetron", "projectron", "bpa", "bpa-nn"):
        cases[f"budget-{removal}"] = Case(
            lambda r=removal: BudgetPerceptron(removal=r, budget=6, degree=2)
        )
    return cases


CASES = _cases()


def _fresh(case: Case) -> Any:
    model = case.make()
    if "random_state" in model.get_params():
        model.set_params(random_state=0)
    return model


def _trained(case: Case, X, y) -> Any:
    """The estimator after its first batch, set for the later ones."""
    model = _fresh(case).partial_fit(X, y, classes=CLASSES)
    return model.set_params(**(case.later_params or {}))


def _batches(case: Case):
    X, y, later, later_y = _data()
    if case.counts:
        X, later = abs(X), abs(later)
    return X, y, later, later_y


# ------------------------------------------------------------- how a call is refused
class Interrupted(BaseException):
    """Stands for an interrupt (KeyboardInterrupt) in the middle of a call."""


def _fail_after_the_epoch(monkeypatch, error: BaseException) -> None:
    """Raise ``error`` where every trainer has just run an epoch (the state written in
    place) and checks it: a memory refusal or an interrupt half-way through a call."""
    from perceptrons.kernel import _training, budget
    from perceptrons.linear import _online
    from perceptrons.probabilistic import naive_bayes

    def fail(*args, **kwargs):
        raise error

    for owner in (_online._SerialEpochs, _training.VotedEpochs, budget._BudgetEpochs):
        monkeypatch.setattr(owner, "is_finite", fail)
    monkeypatch.setattr(naive_bayes._NaiveBayes, "_publish", fail)


def _refuse(kind: str, case: Case, model: Any, later, later_y, monkeypatch) -> None:
    """Make ``model.partial_fit`` refuse a batch the way ``kind`` says; check that it did."""
    if kind == "overflow":
        if not case.overflows:
            pytest.skip("its counts of presence cannot overflow")
        bad = abs(_overflowing(later, 1.7e308)) if case.counts else _overflowing(later)
        with pytest.raises(ValueError, match=r"non-finite|overflowed") as refused:
            model.partial_fit(bad, later_y)
        assert "\n" not in str(refused.value)
    elif kind == "bad-input":
        with pytest.raises(ValueError, match=r"never declared|not in|unseen|y contains"):
            model.partial_fit(later, np.where(later_y == 0, 7, later_y))
    elif kind == "interrupt":
        _fail_after_the_epoch(monkeypatch, Interrupted())
        with pytest.raises(Interrupted):
            model.partial_fit(later, later_y)
        monkeypatch.undo()
    else:
        assert kind == "memory"
        _fail_after_the_epoch(monkeypatch, MemoryError("no memory left"))
        with pytest.raises(MemoryError):
            model.partial_fit(later, later_y)
        monkeypatch.undo()


KINDS = ["overflow", "bad-input", "interrupt", "memory"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_refused_batch_leaves_the_model_as_it_was(name, kind, tmp_path, monkeypatch):
    case = CASES[name]
    X, y, later, later_y = _batches(case)
    model = _trained(case, X, y)
    before = fingerprint(model, tmp_path)
    _refuse(kind, case, model, later, later_y, monkeypatch)
    assert fingerprint(model, tmp_path) == before
    # It trains on exactly as a twin that never saw the refused batch.
    twin = _trained(case, X, y)
    model.partial_fit(later, later_y)
    twin.partial_fit(later, later_y)
    assert fingerprint(model, tmp_path) == fingerprint(twin, tmp_path)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")  # gamma="scale" of huge X
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("kind", ["overflow", "interrupt"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_first_call_that_fails_leaves_the_estimator_unfitted(name, kind, monkeypatch):
    case = CASES[name]
    _, _, later, later_y = _batches(case)
    model = _fresh(case)
    untrained = dict(vars(model))
    _refuse(kind, case, model, later, later_y, monkeypatch)
    assert vars(model).keys() == untrained.keys()
    with pytest.raises(NotFittedError):
        model.predict(later)


@pytest.mark.parametrize(
    "make", [AveragedPerceptron, lambda: BudgetPerceptron(budget=2000), MultinomialNaiveBayes]
)
def test_a_first_call_refused_for_memory_leaves_the_estimator_unfitted(make, monkeypatch):
    model = make()
    untrained = dict(vars(model))
    monkeypatch.setenv("PERCEPTRONS_MEMORY_LIMIT", "64K")
    with pytest.raises(MemoryError) as refused:
        model.partial_fit(np.ones((4, 2000)), [0, 1, 2, 0], classes=CLASSES)
    assert "\n" not in str(refused.value)
    assert vars(model).keys() == untrained.keys()


# ------------------------------------------------------------------- the named cases
def _named(make: Callable[[], Any], tmp_path, huge: float = 1e300) -> None:
    """The cases of the report that found the defect: fitted, then a batch refused for
    non-finite scores; the estimator must not become unfitted."""
    X, y, later, later_y = _data()
    model = make().partial_fit(X, y, classes=CLASSES)
    before = fingerprint(model, tmp_path)
    predicted = model.predict(X)
    with pytest.raises(ValueError, match="non-finite"):
        model.partial_fit(_overflowing(later, huge), later_y)
    np.testing.assert_array_equal(model.predict(X), predicted)  # not a NotFittedError
    assert fingerprint(model, tmp_path) == before


def test_budget_perceptron_with_a_polynomial_kernel_keeps_its_model(tmp_path):
    _named(lambda: BudgetPerceptron(kernel="poly", degree=3, budget=10, random_state=0), tmp_path)


def test_voted_perceptron_with_a_polynomial_kernel_keeps_its_model(tmp_path):
    _named(lambda: VotedPerceptron(kernel="poly", degree=3, random_state=0), tmp_path)


def test_averaged_perceptron_nag_keeps_its_model(tmp_path):
    _named(lambda: AveragedPerceptron(update="nag", random_state=0), tmp_path)


def test_cw_with_a_full_covariance_keeps_its_model(tmp_path):
    _named(lambda: AveragedPerceptron(update="cw", covariance="full", random_state=0), tmp_path)


# ------------------------------------------------- what a call keeps, and other calls
@pytest.mark.parametrize(
    "name", sorted(n for n in CASES if n.split("-")[0] in ("averaged", "perceptron", "logistic"))
)
def test_an_epoch_writes_a_state_only_where_the_engine_says(name):
    """A call keeps only the rows its epochs can write (:meth:`rows_written`): every
    other row of every array the kernels write must come out of the epochs as it went
    in -- what lets a hashed model's call keep a few rows rather than ``2**20``."""
    case = CASES[name]
    X, y, later, later_y = _batches(case)
    model = _trained(case, X, y)
    state = model._state
    written = model._engine().rows_written(later, state, 3 * len(later_y))
    if written is None:
        pytest.skip("its epochs can write any row: every row is kept")
    before = [(array, axis, array.copy()) for array, axis in state.in_place()]
    for _ in range(3):
        model.partial_fit(later, later_y)
    for array, axis, copy in before:
        if axis is None or not array.size:
            continue
        others = np.setdiff1d(np.arange(array.shape[axis]), written)
        np.testing.assert_array_equal(np.take(array, others, axis), np.take(copy, others, axis))


def test_a_warm_started_fit_that_fails_leaves_the_model_as_it_was(tmp_path):
    X, y, later, later_y = _data()
    model = AveragedPerceptron(warm_start=True, delta=0.5, random_state=0).fit(X, y)
    before = fingerprint(model, tmp_path)
    with pytest.raises(ValueError, match="non-finite"):
        model.fit(_overflowing(later), later_y)
    assert fingerprint(model, tmp_path) == before
    model.set_params(warm_start=False)  # a fresh fit keeps the model it replaces too
    before = fingerprint(model, tmp_path)
    with pytest.raises(ValueError, match="non-finite"):
        model.fit(_overflowing(later), later_y)
    assert fingerprint(model, tmp_path) == before


def test_fit_epochs_left_early_keeps_the_epochs_trained(tmp_path):
    X, y, _, _ = _data()
    model = AveragedPerceptron(max_epochs=5, random_state=0)
    for record in model.fit_epochs(X, y):
        if record["epoch"] == 2:
            break
    assert model.n_iter_ == 2 and len(model.history_) == 2


def test_an_interrupted_fit_epochs_leaves_the_model_before_it(tmp_path):
    X, y, _, _ = _data()
    model = AveragedPerceptron(max_epochs=5, random_state=0).fit(X, y)
    before = fingerprint(model, tmp_path)

    def progress(n_examples):
        raise Interrupted

    with pytest.raises(Interrupted):
        for _ in model.fit_epochs(X * 2, y, progress=progress):
            pass
    assert fingerprint(model, tmp_path) == before


def test_a_batch_fit_that_fails_leaves_the_model_as_it_was(tmp_path, monkeypatch):
    X, y, _, _ = _data()
    model = LogisticRegressionBatch().fit(X, y)
    before = fingerprint(model, tmp_path)
    calls = []
    publish = LogisticRegressionBatch._publish

    def fail_later(self):
        calls.append(1)
        if len(calls) > 2:  # after an iteration or two have been published
            raise Interrupted
        publish(self)

    monkeypatch.setattr(LogisticRegressionBatch, "_publish", fail_later)
    with pytest.raises(Interrupted):
        model.fit(X * 3, y)
    assert fingerprint(model, tmp_path) == before


def test_a_tagger_batch_refused_for_memory_leaves_the_tagger_as_it_was(tmp_path, monkeypatch):
    words = [["the", "dog", "barks", "."], ["a", "cat", "sleeps", "."]] * 10
    tags = [["DT", "NN", "VBZ", "."]] * 20
    tagger = SequenceTagger(max_epochs=2, random_state=0).fit(words, tags)
    tagger.partial_fit(words, tags)
    before = fingerprint(tagger, tmp_path)
    long_sentence = [["the", "dog", "barks", "."] * 5000]
    monkeypatch.setenv("PERCEPTRONS_MEMORY_LIMIT", "64K")  # the Viterbi tables' limit
    with pytest.raises(MemoryError, match="Viterbi") as refused:
        tagger.partial_fit(words + long_sentence, [*tags, ["DT", "NN", "VBZ", "."] * 5000])
    assert "\n" not in str(refused.value)
    monkeypatch.delenv("PERCEPTRONS_MEMORY_LIMIT")
    assert fingerprint(tagger, tmp_path) == before
    with pytest.raises(ValueError, match="never declared"):
        tagger.partial_fit(words, [["DT", "NN", "VBZ", "XX"]] * 20)
    assert fingerprint(tagger, tmp_path) == before


def test_a_hashing_featurizer_stopped_half_way_keeps_its_names():
    featurizer = TextFeaturizer(vocabulary="hashing", weighting="tf", hashed_names=True)
    featurizer.partial_fit(["a good film", "a bad plot"])
    names = dict(featurizer._hashed_names)

    class Stopping(dict):
        """A batch's names whose reading is interrupted after the first."""

        def items(self):
            yield from list(super().items())[:1]
            raise Interrupted

    with pytest.raises(Interrupted):
        featurizer._merge_hashed_names(Stopping({1: "new", 2: "names"}))
    assert featurizer._hashed_names == names


def test_a_stream_that_fails_leaves_the_model_as_it_was(tmp_path):
    from perceptrons.io.stream import fit_stream

    X, y, later, later_y = _data()
    lines = [
        f"{label} "
        + " ".join(f"{j + 1}:{v:.17g}" for j, v in zip(row.indices, row.data, strict=True))
        for label, row in zip(later_y, _overflowing(later), strict=True)
    ]
    path = tmp_path / "bad.svm"
    path.write_text("\n".join(lines) + "\n")
    model = AveragedPerceptron(random_state=0).partial_fit(X, y, classes=CLASSES)
    before = fingerprint(model, tmp_path)
    with pytest.raises(ValueError, match="non-finite"):
        fit_stream(model, path, classes=CLASSES, n_features=60, zero_based=False, chunk_size=5)
    assert fingerprint(model, tmp_path) == before


def test_parameter_mixing_that_fails_leaves_the_model_as_it_was(tmp_path):
    from perceptrons.parallel import mix_threads

    X, y, later, later_y = _data()
    model = AveragedPerceptron(random_state=0).fit(X, y)
    before = fingerprint(model, tmp_path)
    bad = sp.vstack([_overflowing(later)] * 2).tocsr()
    with pytest.raises(ValueError, match="non-finite"):
        mix_threads(model, bad, np.concatenate([later_y] * 2), n_shards=2)
    assert fingerprint(model, tmp_path) == before
