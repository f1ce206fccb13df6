"""What every learner of the package shares, scikit-learn's estimators and the core alike.

Nothing here imports scikit-learn: the learner core (:mod:`perceptrons.linear`, what
the command line trains and loads) is made of these classes, and each estimator is the
core class under :class:`perceptrons._estimator.EstimatorFace`, which adds
scikit-learn's ``BaseEstimator`` and ``ClassifierMixin`` (parameters, ``clone``, tags,
scikit-learn's input validation).

:class:`Trainable`: parameters checked on every call (``__init__`` only stores them) and
the model's lifecycle, one typed field (``_lifecycle``): None before training, the
state being trained, the :class:`~perceptrons._states.CompactState` of a model sparsified
exactly, or :class:`~perceptrons._states.Frozen` for one that predicts but can only be
trained afresh. :class:`IncrementalClassifier` adds the label bookkeeping of
``partial_fit``, sparse input and prediction from ``decision_function``.

Every training call (``fit``, ``partial_fit``, a stream, parameter mixing) runs in
:meth:`Trainable._all_or_nothing`: a call that raises -- refused input, a score or weight
that overflowed, a memory refusal, an interrupt -- leaves the estimator as it was before
the call, bit for bit (:class:`Rollback`), so that one bad batch never costs a long run.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from perceptrons import _input, _validation
from perceptrons import _params as rules
from perceptrons._states import Frozen

if TYPE_CHECKING:
    from perceptrons._engine import StateCodec

__all__ = ["IncrementalClassifier", "Rollback", "Trainable"]

# What scikit-learn's validate_data records about the input of a first call.
INPUT_RECORDS = ("n_features_in_", "feature_names_in_")


class Rollback:
    """What puts an estimator back as it was when this was made (see the module).

    Training replaces most of what it changes (a new state, ``coef_``, ``classes_``...):
    the attributes as they were, by reference, put those back. What it changes in place
    is kept here too: the content of lists (``history_``) and the state of random
    generators (``random_state_``, and a ``random_state`` given as a generator), and
    whatever a member registers with :meth:`keep` (its training state's arrays, as
    :meth:`perceptrons._states.TrainingState.saved` keeps them: only the rows an epoch
    can write).
    """

    def __init__(self, estimator: Any) -> None:
        self._estimator = estimator
        self._attributes = dict(vars(estimator))
        self._undo: list[Callable[[], None]] = []
        seen: set[int] = set()
        for value in self._attributes.values():
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, list):
                self.keep(_list_restorer(value))
            elif isinstance(value, np.random.RandomState):
                self.keep(_generator_restorer(value))

    def keep(self, undo: Callable[[], None]) -> None:
        """Have :meth:`restore` call ``undo`` (after those kept later: the last first)."""
        self._undo.append(undo)

    def restore(self) -> None:
        """Put the estimator back as it was."""
        for undo in reversed(self._undo):
            undo()
        attributes = vars(self._estimator)
        attributes.clear()
        attributes.update(self._attributes)


def _nothing() -> None:
    """Nothing to put back."""


def _list_restorer(items: list[Any]) -> Callable[[], None]:
    kept = list(items)

    def undo() -> None:
        items[:] = kept

    return undo


def _generator_restorer(generator: np.random.RandomState) -> Callable[[], None]:
    kept = generator.get_state()
    return lambda: generator.set_state(kept)


class Trainable:
    """Parameters checked on every call, and the model's lifecycle (see the module)."""

    #: Whether input is validated by scikit-learn's ``validate_data`` (the estimators,
    #: under :class:`perceptrons._estimator.EstimatorFace`) or by the core's own
    #: :func:`perceptrons._input.check_input`.
    _SKLEARN_FACE: ClassVar[bool] = False

    _rules: ClassVar[dict[str, rules.Rule]] = {}
    #: None before training; a member's own state while it can train on; a
    #: :class:`~perceptrons._states.Frozen` model once it cannot.
    _lifecycle: Any = None

    @classmethod
    def _param_names(cls) -> list[str]:
        """The constructor's parameters, by name (scikit-learn's convention: every
        parameter is an attribute of the same name)."""
        signature = inspect.signature(cls.__init__)
        return sorted(
            name
            for name, parameter in signature.parameters.items()
            if name != "self"
            and parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
        )

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's parameters and their values (the estimators use
        scikit-learn's, which gives the same)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> Any:
        """Set parameters by name (checked when training next, as ``fit`` checks them)."""
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} for {type(self).__name__}; valid "
                    f"parameters are {valid!r}."
                )
            setattr(self, name, value)
        return self

    def _codec(self) -> StateCodec:
        """The model's state as a model file holds it (see :mod:`perceptrons._engine`)."""
        raise NotImplementedError

    def _mixing_refusal(self) -> str | None:
        """Why parameter mixing cannot train this configuration (None: it can); only
        the online learners' engine trains shards."""
        return f"{type(self).__name__} is not an online learner with an engine"

    def _check_params(self) -> None:
        """Each parameter's own rule (``__init__`` only stores; ``set_params`` may
        change them between calls); members add the rules between parameters."""
        rules.validate(self, self._rules)

    def _continuation_problem(self) -> str | None:
        """Why training cannot continue from the fitted model (``partial_fit``, a
        warm-started ``fit``), or None: a sparse ``coef_`` must be densified first, and
        a model without its training state (pruned, or saved with ``resumable=False``)
        can only be trained afresh."""
        # First what densify() cannot cure (a file saved to predict loads sparse).
        if isinstance(self._lifecycle, Frozen):
            return (
                f"{self._lifecycle.reason}, so it cannot continue training; call fit to "
                "train afresh"
            )
        if self._sparsified():
            return (
                "coef_ is sparse (sparsify() was called); call densify() before "
                "partial_fit or a warm-started fit"
            )
        return None

    def _sparsified(self) -> bool:
        """Whether ``sparsify()`` made ``coef_`` sparse (its training state compact):
        a member whose ``coef_`` is sparse by design says no."""
        return sp.issparse(self.__dict__.get("coef_"))

    def _thaw(self) -> None:
        """Forget what kept the last model from training on: a new one starts."""
        self._lifecycle = None

    def _saved_model(self, X: Any = None) -> Callable[[], None]:
        """What puts back, bit for bit, what a training call over ``X`` (None: any
        data) would write in place of the model as it is now -- a member's continued
        training state; nothing by default (training makes new arrays)."""
        return _nothing

    @contextlib.contextmanager
    def _all_or_nothing(self) -> Iterator[Rollback]:
        """Run one training call: should it raise anything (an interrupt too), the
        estimator is put back as it was before it (see :class:`Rollback`; a member
        registers with it what it trains in place). A generator closed by its caller
        (who left a ``fit_epochs`` loop) keeps the model trained so far."""
        rollback = Rollback(self)
        try:
            yield rollback
        except GeneratorExit:
            raise
        except BaseException:
            rollback.restore()
            raise


class IncrementalClassifier(Trainable):
    """What every classifier of the package shares: parameters checked on every call,
    the one first-call flag, the label bookkeeping of ``partial_fit``, sparse input and
    prediction from ``decision_function``."""

    # Fitted attributes (set by training, scikit-learn style; absent before).
    classes_: np.ndarray
    n_features_in_: int
    history_: list[dict[str, Any]]
    random_state_: np.random.RandomState

    if TYPE_CHECKING:  # every member has one (it is not inherited from here)

        def decision_function(self, X: Any) -> np.ndarray: ...

    def _is_first_call(self) -> bool:
        """True until training has state to continue (``fit`` resets it)."""
        return getattr(self, "_state", None) is None

    def _begin_call(
        self,
        X: ArrayLike,
        y: ArrayLike,
        classes: ArrayLike | None,
        *,
        incremental: bool,
        reset: bool = False,
        sample_weight: ArrayLike | None = None,
        checked: bool = False,
    ) -> tuple[Any, np.ndarray, bool, np.ndarray | None]:
        """Check the parameters and the batch; fix the labels on the first call.

        ``checked`` (a stream's later batches from a reader that checked them): the
        batch's data checks are skipped when :func:`_validation.checked_batch` says so.

        ``reset`` (``fit``) makes this a first call whatever came before. Nothing of
        the trained model is touched until every check has passed: a refused call
        leaves the model as it was. Returns the validated ``(X, y)``, whether this
        is a first call (the caller then starts a fresh state), and each example's
        weight ``sample_weight[i] * class_weight[y_i]`` (None when both are None: the
        unweighted path).
        """
        self._check_params()
        if not reset:
            problem = self._continuation_problem()
            if problem is not None:
                raise ValueError(f"{type(self).__name__}: {problem}.")
        first_call = reset or self._is_first_call()
        # scikit-learn's validation records the input's width and feature names as it
        # checks a first call's data: put them back if a later check refuses the call.
        recorded = {k: v for k, v in vars(self).items() if k in INPUT_RECORDS}
        trusted = checked and not first_call and _validation.checked_batch(self, X, y)
        try:
            if trusted:
                data, labels = X, np.asarray(y)  # y is an array: checked_batch said so
            else:
                data, labels = _validation.validate_training_data(self, X, y, reset=first_call)
            data = self._prepare(data)
            if first_call:
                known = _validation.label_set(labels, classes, self, incremental=incremental)
            else:
                _validation.check_same_classes(classes, self.classes_)
                known = self.classes_
            weights = _validation.example_weights(
                self, sample_weight, known, labels, incremental=incremental
            )
        except Exception:
            for name in INPUT_RECORDS:
                self.__dict__.pop(name, None)
            self.__dict__.update(recorded)
            raise
        if first_call:
            self.classes_ = known
            self._thaw()
        return data, labels, first_call, weights

    def _prepare(self, X: Any) -> Any:
        """A member's own checks or transformation of validated input (training and
        prediction alike); none by default."""
        return X

    def _scores_rows_alone(self) -> bool:
        """Whether a row's score depends on that row alone, so that :meth:`predict` may
        score a large input a block of rows at a time (a member whose prediction draws
        random numbers row after row says no)."""
        return True

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict a label for each sample.

        Binary models predict ``classes_[1]`` when the score is positive; multiclass
        models predict the highest-scoring class, ties going to the lowest index.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples to classify.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Predicted labels, drawn from ``classes_``.
        """
        _input.check_is_fitted(self, "classes_")
        if not self._scores_rows_alone():
            return _validation.labels_from_scores(self.classes_, self.decision_function(X))
        return _validation.predict_in_batches(self.decision_function, self.classes_, X)

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """The mean accuracy of :meth:`predict` on ``(X, y)``, weighted by
        ``sample_weight`` (scikit-learn's ``ClassifierMixin.score``, which the
        estimators use)."""
        correct = self.predict(X) == np.asarray(y)
        weights = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        return float(np.average(correct, weights=weights))
