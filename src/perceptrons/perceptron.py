"""The vanilla and the averaged perceptron, binary and natively multiclass.

Both estimators share one training path (:class:`_LinearPerceptron`): validate and
convert the input once, then call one compiled kernel per epoch
(:mod:`perceptrons._kernels.perceptron`). The epoch loop stays in Python so that early
stopping, verbosity and ``history_`` cost nothing inside the kernels.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from perceptrons import _kernels, _validation
from perceptrons import _params as rules

# An empty mistake log: the kernels then log nothing, at no cost.
_UPDATE_KINDS = {"perceptron": 0, "pa": 1, "pa-i": 2, "pa-ii": 3}
# Examples per kernel call when the caller follows progress (a bar updates this often).
_PROGRESS_CHUNK = 2**15
_NO_MISTAKE_LOG = np.empty((0, 2), dtype=np.int64)


@dataclass
class _TrainingState:
    """Everything training needs to continue exactly where it stopped.

    ``weights`` and ``aux`` have one row per feature plus a last row for the intercept
    (see :mod:`perceptrons._kernels.perceptron`); binary models keep a single column as a
    1-D array. ``count`` is the number of examples seen over all epochs and calls.
    ``slack`` holds the weights of the Δ trick's per-example features for the examples
    of the last ``fit`` (one row per example, empty until a ``fit`` with ``delta > 0``);
    a warm-started ``fit`` on as many examples continues from it.
    """

    weights: np.ndarray
    aux: np.ndarray
    count: int = 0
    slack: np.ndarray | None = None

    @classmethod
    def zeros(cls, n_features: int, n_columns: int, average: bool) -> _TrainingState:
        shape = (n_features + 1,) if n_columns == 1 else (n_features + 1, n_columns)
        aux = np.zeros(shape) if average else np.zeros((0,) * len(shape))
        return cls(weights=np.zeros(shape), aux=aux)

    def model(self, average: bool) -> np.ndarray:
        """The current model: the last weights, or the exact mean of all of them."""
        if not average or self.count == 0:
            return self.weights.copy()
        return self.weights - self.aux / self.count


class _LinearPerceptron(ClassifierMixin, BaseEstimator):
    """Shared fit logic; subclasses only say whether the model is averaged."""

    _average: bool = False

    _rules: ClassVar[dict[str, rules.Rule]] = {
        "max_epochs": rules.integer(1),
        "shuffle": rules.boolean(),
        "fit_intercept": rules.boolean(),
        "warm_start": rules.boolean(),
        "early_stopping": rules.boolean(),
        "validation_fraction": rules.real_open_interval(0.0, 1.0, allow_none=True),
        "n_iter_no_change": rules.integer(1),
        "random_state": rules.random_state(),
        "verbose": rules.integer(0),
        "delta": rules.real(0.0),
        "update": rules.one_of(*_UPDATE_KINDS),
        "margin": rules.real(0.0),
        "C": rules.real(0.0, inclusive=False),
        "n_jobs": rules.Rule(
            "None, -1 or an int >= 1",
            lambda v: v is None or v == -1 or rules.integer(1).accepts(v),
        ),
    }

    def __init__(
        self,
        *,
        max_epochs: int = 10,
        shuffle: bool = True,
        fit_intercept: bool = True,
        warm_start: bool = False,
        early_stopping: bool = False,
        validation_fraction: float | None = None,
        n_iter_no_change: int = 5,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
        delta: float = 0.0,
        update: str = "perceptron",
        margin: float = 0.0,
        C: float = 1.0,
        n_jobs: int | None = None,
    ) -> None:
        self.max_epochs = max_epochs
        self.shuffle = shuffle
        self.fit_intercept = fit_intercept
        self.warm_start = warm_start
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.random_state = random_state
        self.verbose = verbose
        self.delta = delta
        self.update = update
        self.margin = margin
        self.C = C
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # ------------------------------------------------------------------ training
    def fit(self, X: ArrayLike, y: ArrayLike) -> _LinearPerceptron:
        """Train for up to ``max_epochs`` passes over ``(X, y)``.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Training data. Sparse input is never densified.
        y : array-like of shape (n_samples,)
            Labels of any type; at least two distinct values.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        if self.n_jobs not in (None, 1):
            rules.validate(self, self._rules)
            from perceptrons.parallel import mix_threads

            return mix_threads(self, X, y, n_jobs=self.n_jobs)
        for _ in self._epochs(X, y, progress=None, publish_each_epoch=False):
            pass
        return self

    def fit_epochs(
        self, X: ArrayLike, y: ArrayLike, progress: Callable[[int], object] | None = None
    ) -> Iterator[dict[str, Any]]:
        """Train like :meth:`fit`, pausing after every epoch.

        Exactly the training of ``fit`` (same shuffles, early stopping, Δ trick); after
        each epoch the model (``coef_``, ``intercept_``, ``predict``...) is current, so
        the caller can evaluate it on development data, log or plot, or stop early by
        leaving the loop.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Labels.
        progress : callable, default=None
            Called with the number of examples just processed, several times per epoch
            on large data (for progress bars).

        Yields
        ------
        record : dict
            The epoch's entry of ``history_``.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from perceptrons import AveragedPerceptron
        >>> X, y = load_iris(return_X_y=True)
        >>> model = AveragedPerceptron(max_epochs=3, random_state=0)
        >>> [record["epoch"] for record in model.fit_epochs(X, y)]
        [1, 2, 3]
        """
        if self.n_jobs not in (None, 1):
            raise ValueError(
                "fit_epochs trains serially; with n_jobs > 1 use fit, or "
                "perceptrons.parallel.ParameterMixing(...).fit_epochs"
            )
        yield from self._epochs(X, y, progress=progress, publish_each_epoch=True)

    def _epochs(self, X, y, *, progress, publish_each_epoch: bool) -> Iterator[dict[str, Any]]:
        rules.validate(self, self._rules)
        first_call = not (self.warm_start and self._is_trained())
        X, y = self._validate_input(X, y, reset=first_call)
        if first_call:
            self._start(X, y, classes=None)
            self.history_ = []
        codes = self._encode(y)
        rng = self._rng = check_random_state(self.random_state)

        train_rows = np.arange(X.shape[0])
        validation = None
        if self.early_stopping and self.validation_fraction is not None:
            train_rows, held_out = train_test_split(
                train_rows,
                test_size=self.validation_fraction,
                stratify=codes,
                random_state=rng.randint(np.iinfo(np.int32).max),
            )
            train_rows = np.sort(train_rows)
            validation = (X[held_out], y[held_out])

        slack = self._fit_slack(X.shape[0])
        best_score, epochs_without_gain = -np.inf, 0
        self.n_iter_ = 0
        for _ in range(self.max_epochs):
            order = rng.permutation(train_rows) if self.shuffle else train_rows
            mistakes = self._run_epoch(X, codes, order, slack, progress)
            self.n_iter_ += 1
            record: dict[str, Any] = {"mistakes": mistakes, "examples": len(order)}
            if validation is not None or publish_each_epoch:
                self._publish()
            if validation is not None:
                record["validation_score"] = float(self.score(*validation))
            self._log(record)
            stop = False
            if self.early_stopping and validation is None:
                stop = mistakes == 0
            elif self.early_stopping:
                if record["validation_score"] > best_score:
                    best_score, epochs_without_gain = record["validation_score"], 0
                else:
                    epochs_without_gain += 1
                    stop = epochs_without_gain >= self.n_iter_no_change
            if not publish_each_epoch and (stop or self.n_iter_ == self.max_epochs):
                self._publish()
            yield self.history_[-1]
            if stop:
                break

    def partial_fit(
        self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None
    ) -> _LinearPerceptron:
        """Run one epoch over ``(X, y)``, continuing from the current state.

        The averaged model stays the exact mean over every example seen by every
        ``fit`` and ``partial_fit`` call.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            A batch of training data.
        y : array-like of shape (n_samples,)
            Its labels.
        classes : array-like of shape (n_classes,), default=None
            Every label the model will ever see. Required on the first call unless
            that first batch already holds every label; ignored afterwards.

        Returns
        -------
        self : object
            The updated estimator.
        """
        first_call = not self._is_trained()
        if first_call:
            rules.validate(self, self._rules)
        X, y = self._validate_input(X, y, reset=first_call)
        if first_call:
            self._start(X, y, classes=classes, incremental=True)
            self.history_ = []
            self._rng = check_random_state(self.random_state)
        else:
            _validation.check_same_classes(classes, self.classes_)
        codes = self._encode(y)
        rows = np.arange(X.shape[0])
        order = self._rng.permutation(rows) if self.shuffle else rows
        # The batch holds new examples: their own Δ features start from zero.
        mistakes = self._run_epoch(X, codes, order, self._new_slack(X.shape[0]), None)
        self.n_iter_ = 1
        self._log({"mistakes": mistakes, "examples": len(order)})
        self._publish()
        return self

    def _is_trained(self) -> bool:
        return getattr(self, "_state", None) is not None

    def _validate_input(self, X, y, *, reset: bool):
        # CSR with unsorted indices (scikit-learn's vectorizers make them) is used as it
        # is: sorting would copy the whole matrix. Canonical CSR sums each score in the
        # same order as dense input and gives a bit-identical model; unsorted CSR agrees
        # with it up to floating-point rounding.
        return _validation.validate_training_data(self, X, y, reset=reset)

    def _start(self, X, y, classes, *, incremental: bool = False) -> None:
        """Fix the label set and allocate zero weights."""
        self.classes_ = _validation.label_set(y, classes, self, incremental=incremental)
        n_columns = 1 if self.classes_.shape[0] == 2 else self.classes_.shape[0]
        self._state = _TrainingState.zeros(X.shape[1], n_columns, self._average)

    def _encode(self, y) -> np.ndarray:
        """Labels to kernel codes: -1/+1 floats for binary, class indices otherwise."""
        codes = _validation.encode(self.classes_, y, self)
        if self.classes_.shape[0] == 2:
            return np.where(codes == 1, 1.0, -1.0)
        return codes

    def _new_slack(self, n_samples: int) -> np.ndarray:
        """Zero weights for the Δ features of ``n_samples`` examples (empty if Δ = 0)."""
        columns = self._state.weights.shape[1:]
        return np.zeros((n_samples if self.delta > 0 else 0, *columns))

    def _fit_slack(self, n_samples: int) -> np.ndarray:
        """The Δ features of ``fit``'s examples: kept over its epochs and, with
        ``warm_start``, over later calls on as many examples; fresh otherwise."""
        state = self._state
        if self.delta == 0:
            return self._new_slack(n_samples)
        if state.slack is None or state.slack.shape[0] != n_samples:
            state.slack = self._new_slack(n_samples)
        return state.slack

    def _run_epoch(
        self, X, codes: np.ndarray, order: np.ndarray, slack: np.ndarray, progress
    ) -> int:
        """One kernel call per epoch, or per chunk of it when progress is reported
        (the kernels resume exactly: their whole state is in the arrays and count)."""
        state = self._state
        multiclass = state.weights.ndim == 2
        order = np.ascontiguousarray(order, dtype=np.int64)
        common = {
            "y": codes,
            "weights": state.weights,
            "aux": state.aux,
            "slack": slack,
            "mistake_log": _NO_MISTAKE_LOG,
            "bias_feature": 1.0 if self.fit_intercept else 0.0,
            "delta": float(self.delta),
            "update": _kernels.update_rule(_UPDATE_KINDS[self.update], self.margin, self.C),
        }
        if sp.issparse(X):
            kernel = _kernels.multiclass_epoch_csr if multiclass else _kernels.binary_epoch_csr
            common.update(data=X.data, indices=X.indices, indptr=X.indptr)
        else:
            kernel = _kernels.multiclass_epoch_dense if multiclass else _kernels.binary_epoch_dense
            common.update(X=X)
        chunk = len(order) if progress is None else _PROGRESS_CHUNK
        mistakes = 0
        for start in range(0, len(order), max(chunk, 1)):
            part = order[start : start + chunk]
            n, state.count = kernel(order=part, count=state.count, **common)
            mistakes += int(n)
            if progress is not None:
                progress(len(part))
        return mistakes

    def export_state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The training state as arrays and JSON values (see :mod:`perceptrons.io.persist`).

        Enough to predict and to continue training exactly (``partial_fit``,
        ``warm_start``); ``coef_`` and ``intercept_`` are derived from it.
        """
        state = self._state
        arrays = {"weights": state.weights, "aux": state.aux}
        if state.slack is not None:
            arrays["slack"] = state.slack
        return arrays, {"count": int(state.count), "n_iter": int(self.n_iter_)}

    def import_state(self, arrays: dict[str, np.ndarray], values: dict[str, Any]) -> None:
        """Rebuild the training state written by :meth:`export_state`."""
        n_columns = 1 if self.classes_.shape[0] == 2 else self.classes_.shape[0]
        expected = (self.n_features_in_ + 1,) + (() if n_columns == 1 else (n_columns,))
        if arrays["weights"].shape != expected:
            raise ValueError(
                f"weights of shape {arrays['weights'].shape} do not fit "
                f"{self.n_features_in_} features and {self.classes_.shape[0]} classes"
            )
        self._state = _TrainingState(
            weights=np.ascontiguousarray(arrays["weights"], dtype=np.float64),
            aux=np.ascontiguousarray(arrays["aux"], dtype=np.float64),
            count=int(values["count"]),
            slack=arrays.get("slack"),
        )
        self.n_iter_ = int(values["n_iter"])
        self._publish()

    def _publish(self) -> None:
        """Expose the current model as scikit-learn's ``coef_`` and ``intercept_``."""
        model = self._state.model(self._average)
        if model.ndim == 1:
            model = model[:, np.newaxis]
        # coef_ is a transposed view, so that coef_.T, which prediction multiplies by,
        # is C-contiguous: scipy's sparse product then needs no copy.
        self.coef_ = model[:-1].T
        self.intercept_ = model[-1].copy()

    def _log(self, record: dict[str, Any]) -> None:
        record = {"epoch": len(self.history_) + 1, **record}
        self.history_.append(record)
        if self.verbose:
            extra = (
                f", validation score {record['validation_score']:.4f}"
                if "validation_score" in record
                else ""
            )
            print(
                f"{type(self).__name__} epoch {record['epoch']}: "
                f"{record['mistakes']} mistakes in {record['examples']} examples{extra}",
                flush=True,
            )

    # ---------------------------------------------------------------- prediction
    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Scores ``w·x + b``: shape (n_samples,) for binary, (n_samples, n_classes) else.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For binary models, positive scores predict ``classes_[1]``.
        """
        check_is_fitted(self, "coef_")
        X = _validation.validate_prediction_data(self, X)
        scores = X @ self.coef_.T + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

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
        scores = self.decision_function(X)  # raises NotFittedError first
        return _validation.labels_from_scores(self.classes_, scores)


_SHARED_PARAMETERS = """
    Parameters
    ----------
    max_epochs : int, default=10
        Number of passes over the training data in ``fit``.
    shuffle : bool, default=True
        Visit the examples in a fresh random order every epoch, drawn from
        ``random_state``; otherwise in the given order.
    fit_intercept : bool, default=True
        Learn a bias (updated like the weight of a constant feature of value 1).
    warm_start : bool, default=False
        Let ``fit`` continue from the previous state instead of starting from zero.
    early_stopping : bool, default=False
        Stop early: after the first epoch without a mistake or, when
        ``validation_fraction`` is set, when the accuracy on a held-out stratified
        split has not improved for ``n_iter_no_change`` epochs.
    validation_fraction : float or None, default=None
        Share of the training data held out for early stopping (used only with
        ``early_stopping=True``). The held-out examples are never trained on.
    n_iter_no_change : int, default=5
        Epochs without improvement of the validation score before stopping.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling and the validation split. The permutation of epoch ``e``
        is the ``e``-th ``permutation`` drawn from ``check_random_state(random_state)``.
    verbose : int, default=0
        Print one line per epoch.
    delta : float, default=0.0
        The Δ trick (seed 004), which lets the perceptron converge on data that no
        hyperplane separates: train exactly as if every training example had one more
        feature of its own, of value ``delta`` (``X`` becomes ``[X | delta * I]``),
        without building those columns. A mistake on an example also updates its own
        feature's weight, so that example alone can be fixed. Only training sees these
        features: ``coef_`` and prediction use the real ones. In ``fit`` the examples
        keep their features' weights over all epochs, and over a warm-started ``fit`` on
        as many examples. Each ``partial_fit`` batch holds new examples, each seen once,
        so there ``delta`` changes nothing. Costs ``n_samples`` floats of memory
        (``n_samples * n_classes`` for multiclass); 0 turns it off.
    update : {"perceptron", "pa", "pa-i", "pa-ii"}, default="perceptron"
        The update rule. ``"perceptron"``: add ``y x`` when ``y (w·x + b) <= margin``
        (multiclass: ``+x`` to the gold class, ``-x`` to the predicted one; with a
        positive ``margin``, also when the gold score beats the best other class by no
        more than ``margin``). The passive-aggressive rules (Crammer et al. 2006) step
        by ``tau y x`` whenever the hinge loss ``l = max(0, 1 - y (w·x + b))`` is
        positive (multiclass: ``1 -`` the gold score's lead over the best other class),
        with ``tau = l / ||x||²`` (``"pa"``), ``min(C, l / ||x||²)`` (``"pa-i"``) or
        ``l / (||x||² + 1 / (2 C))`` (``"pa-ii"``); ``||x||²`` counts the bias feature,
        and doubles for multiclass, where two rows move. Averaging, the Δ trick and
        ``history_`` (which counts updates as mistakes) work with every rule.
    n_jobs : int or None, default=None
        ``fit`` on several threads by iterative parameter mixing (McDonald, Hall & Mann
        2010; see :func:`perceptrons.parallel.mix_threads`): the data split in
        ``n_jobs`` shards (-1: one per CPU), each epoch run on every shard from the mixed
        weights, the shards' weights averaged. A different algorithm from the serial
        perceptron, close in accuracy; None or 1 trains serially (and exactly as the
        textbook). ``partial_fit`` and ``fit_epochs`` are serial.
    margin : float, default=0.0
        ``update="perceptron"`` only: also update correct examples whose (signed) score
        is at most ``margin``: the perceptron with margin.
    C : float, default=1.0
        Aggressiveness of PA-I and PA-II (larger: bigger steps, less regularization).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        The weights: one row for binary problems, one per class otherwise.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The biases.
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.
    history_ : list of dict
        One record per epoch over all calls: ``epoch``, ``mistakes``, ``examples``,
        and ``validation_score`` when early stopping holds data out.
    n_iter_ : int
        Epochs run by the last ``fit`` (1 after ``partial_fit``).
    n_features_in_ : int
        Number of features seen in ``fit``.
"""


class Perceptron(_LinearPerceptron):
    __doc__ = (
        """The vanilla perceptron (Rosenblatt), binary or natively multiclass.

    Binary problems (two labels, mapped to -1/+1) keep one weight vector ``w`` and a
    bias ``b``; an example is a mistake when ``y (w·x + b) <= 0`` and then
    ``w += y x``, ``b += y``. With three or more labels there is one weight vector and
    bias per class, the prediction is the argmax, and a mistake subtracts ``x`` from
    the predicted class and adds it to the gold class (one pass per epoch, not
    one-vs-rest).
"""
        + _SHARED_PARAMETERS
        + """
    See Also
    --------
    AveragedPerceptron : the same updates, predicting with the mean weights.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from perceptrons import Perceptron
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = Perceptron(max_epochs=20, random_state=0).fit(X, y)
    >>> clf.coef_.shape
    (3, 4)
    >>> round(clf.score(X, y), 2)
    0.82
    """
    )

    _average = False


class AveragedPerceptron(_LinearPerceptron):
    __doc__ = (
        """The averaged perceptron: the perceptron's updates, the mean of its weights.

    Trains exactly like :class:`Perceptron` but predicts with the mean of the weight
    vectors and biases after every example seen, over all epochs and every ``fit`` and
    ``partial_fit`` call. The mean is computed with the auxiliary-vector-and-counter
    trick (Daumé 2006): O(nnz(x)) extra work per update, O(1) per correct example,
    one extra weight matrix of memory, and it can be read at any time.
"""
        + _SHARED_PARAMETERS
        + """
    See Also
    --------
    Perceptron : the same updates, predicting with the last weights.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from perceptrons import AveragedPerceptron
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = AveragedPerceptron(max_epochs=20, random_state=0).fit(X, y)
    >>> round(clf.score(X, y), 2)
    0.97
    """
    )

    _average = True
