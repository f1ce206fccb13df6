"""Logistic regression trained online by SGD (seed 004), binary and multinomial.

The estimator follows the perceptrons' structure (:mod:`perceptrons.perceptron`): validate
and convert the input once, then one compiled kernel call per epoch
(:mod:`perceptrons._kernels.logistic`), the epoch loop in Python.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.special import expit, log_expit, log_softmax, softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from perceptrons import _params as rules
from perceptrons import _validation
from perceptrons._kernels import logistic as _kernels

__all__ = ["LogisticRegressionSGD"]

# Examples per kernel call when the caller follows progress (a bar updates this often).
_PROGRESS_CHUNK = 2**15
# The lazy prior's scale is folded back into the weights when it falls below this; a
# rescale costs O(n_features), once every log(min_scale) / log(1 - learning_rate * l2)
# examples. The averaged model's two terms, P * v and aux, grow to about 1 / min_scale
# times the sum they represent just before a rescale: its relative rounding error is
# about 2e-16 / min_scale, hence a larger threshold when averaging (at most ~2e-12).
_MIN_SCALE = 1e-9
_MIN_SCALE_AVERAGED = 1e-4


@dataclass
class _TrainingState:
    """Everything training needs to continue exactly where it stopped.

    ``weights`` and ``aux`` have one row per feature plus a last row for the intercept,
    binary models a single column as a 1-D array (see :mod:`perceptrons._kernels.logistic`).
    The true feature weights are ``scale * weights[:-1]`` (the prior's decay, applied
    lazily); the intercept row is stored as it is. ``scale_sum`` is the sum of the
    scales of the examples seen since the last rescale and ``count`` the number of
    examples seen over all epochs and calls.
    """

    weights: np.ndarray
    aux: np.ndarray
    scale: float = 1.0
    scale_sum: float = 0.0
    count: int = 0

    @classmethod
    def zeros(cls, n_features: int, n_columns: int, average: bool) -> _TrainingState:
        shape = (n_features + 1,) if n_columns == 1 else (n_features + 1, n_columns)
        aux = np.zeros(shape) if average else np.zeros((0,) * len(shape))
        return cls(weights=np.zeros(shape), aux=aux)

    def model(self, average: bool) -> np.ndarray:
        """The current weights (intercept last), or the exact mean of all of them."""
        if not average or self.count == 0:
            model = self.weights.copy()
            model[:-1] *= self.scale
            return model
        model = self.weights - self.aux / self.count
        model[:-1] = (self.scale_sum * self.weights[:-1] - self.aux[:-1]) / self.count
        return model


class LogisticRegressionSGD(ClassifierMixin, BaseEstimator):
    """Logistic regression trained online by stochastic gradient ascent (seed 004).

    Binary problems (two labels, mapped to 0/1) keep one weight vector ``w`` and an
    intercept ``b``; ``p = σ(w·x + b)`` and each example updates
    ``w += λ (y - p) x``, ``b += λ (y - p)``, the gradient of the log conditional
    likelihood. With three or more labels the model is multinomial (softmax over one
    weight vector per class, one pass per epoch, not one-vs-rest):
    ``p = softmax(W x + b)`` and every class ``k`` gets ``w_k += λ ([y = k] - p_k) x``.

    The Gaussian prior ``w ~ N(0, σ²)`` (the MAP estimate of the seed) is ``l2 = 1/σ²``.
    Per example, in this order: ``p`` from the current weights; then the prior's decay
    ``w <- (1 - λ l2) w``; then the gradient step. This is the seed's
    ``w += λ (y - p) x - λ w / σ²`` with both terms taken at the old weights. The
    intercept is not regularized. The decay is applied lazily, as a global scale of the
    weights, so an update on sparse input costs O(nnz(x)), not O(n_features).

    Parameters
    ----------
    learning_rate : float, default=0.1
        ``λ``, constant over all examples.
    l2 : float, default=0.0
        ``1 / σ²``, the strength of the prior; 0 means no prior. Requires
        ``learning_rate * l2 < 1`` (otherwise the decay would flip or zero the weights).
    average : bool, default=False
        Averaged SGD: predict with the exact mean of the weights (and intercepts) after
        every example seen, over all epochs and every ``fit`` and ``partial_fit`` call.
        Computed as for :class:`~perceptrons.AveragedPerceptron`, with the example
        counter replaced by the running sum of the decay's scales: O(nnz(x)) per example.
    max_epochs : int, default=10
        Number of passes over the training data in ``fit``.
    shuffle : bool, default=True
        Visit the examples in a fresh random order every epoch, drawn from
        ``random_state``; otherwise in the given order.
    fit_intercept : bool, default=True
        Learn an intercept (the weight of a constant feature of value 1, without prior).
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling. The permutation of epoch ``e`` is the ``e``-th
        ``permutation`` drawn from ``check_random_state(random_state)``.
    verbose : int, default=0
        Print one line per epoch.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        The weights: one row for binary problems, one per class otherwise.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The intercepts.
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.
    history_ : list of dict
        One record per epoch over all calls: ``epoch``, ``log_loss`` (the mean log-loss
        of the epoch's examples, each computed before its own update) and ``examples``.
    n_iter_ : int
        Epochs run by the last ``fit`` (1 after ``partial_fit``).
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    AveragedPerceptron : the same online loop with the perceptron's update.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from perceptrons.logistic import LogisticRegressionSGD
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = LogisticRegressionSGD(learning_rate=0.05, average=True, random_state=0)
    >>> clf = clf.fit(X, y)
    >>> round(clf.score(X, y), 2)
    0.97
    >>> clf.predict_proba(X[:1]).round(2).tolist()  # rows sum to 1
    [[0.97, 0.03, 0.0]]
    """

    _rules: ClassVar[dict[str, rules.Rule]] = {
        "learning_rate": rules.real(0.0, inclusive=False),
        "l2": rules.real(0.0),
        "average": rules.boolean(),
        "max_epochs": rules.integer(1),
        "shuffle": rules.boolean(),
        "fit_intercept": rules.boolean(),
        "random_state": rules.random_state(),
        "verbose": rules.integer(0),
    }

    def __init__(
        self,
        *,
        learning_rate: float = 0.1,
        l2: float = 0.0,
        average: bool = False,
        max_epochs: int = 10,
        shuffle: bool = True,
        fit_intercept: bool = True,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
    ) -> None:
        self.learning_rate = learning_rate
        self.l2 = l2
        self.average = average
        self.max_epochs = max_epochs
        self.shuffle = shuffle
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _check_params(self) -> None:
        """Each parameter's own rule, then the rules between parameters."""
        rules.validate(self, self._rules)
        if self.learning_rate * self.l2 >= 1.0:
            raise ValueError(
                f"{type(self).__name__}: learning_rate * l2 must be < 1 (each example "
                f"multiplies the weights by 1 - learning_rate * l2), got learning_rate="
                f"{self.learning_rate!r} and l2={self.l2!r}."
            )

    # ------------------------------------------------------------------ training
    def fit(self, X: ArrayLike, y: ArrayLike) -> LogisticRegressionSGD:
        """Train from zero for ``max_epochs`` passes over ``(X, y)``.

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
        for _ in self._epochs(X, y, progress=None, publish_each_epoch=False):
            pass
        return self

    def fit_epochs(
        self, X: ArrayLike, y: ArrayLike, progress: Callable[[int], object] | None = None
    ) -> Iterator[dict[str, Any]]:
        """Train like :meth:`fit`, pausing after every epoch.

        Exactly the training of ``fit`` (same shuffles); after each epoch the model
        (``coef_``, ``intercept_``, ``predict_proba``...) is current, so the caller can
        evaluate it on development data, log or plot, or stop early by leaving the loop.

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
        >>> from perceptrons.logistic import LogisticRegressionSGD
        >>> X, y = load_iris(return_X_y=True)
        >>> model = LogisticRegressionSGD(max_epochs=3, random_state=0)
        >>> [record["epoch"] for record in model.fit_epochs(X, y)]
        [1, 2, 3]
        """
        yield from self._epochs(X, y, progress=progress, publish_each_epoch=True)

    def _epochs(self, X, y, *, progress, publish_each_epoch: bool) -> Iterator[dict[str, Any]]:
        self._check_params()
        X, y = _validation.validate_training_data(self, X, y, reset=True)
        self._start(X, y, classes=None)
        self.history_ = []
        codes = self._encode(y)
        rng = self._rng = check_random_state(self.random_state)
        rows = np.arange(X.shape[0])
        self.n_iter_ = 0
        for _ in range(self.max_epochs):
            order = rng.permutation(rows) if self.shuffle else rows
            self._run_epoch(X, codes, order, progress)
            self.n_iter_ += 1
            if publish_each_epoch or self.n_iter_ == self.max_epochs:
                self._publish()
            yield self.history_[-1]

    def partial_fit(
        self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None
    ) -> LogisticRegressionSGD:
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
        self._check_params()
        first_call = getattr(self, "_state", None) is None
        X, y = _validation.validate_training_data(self, X, y, reset=first_call)
        if first_call:
            self._start(X, y, classes=classes, incremental=True)
            self.history_ = []
            self._rng = check_random_state(self.random_state)
        else:
            _validation.check_same_classes(classes, self.classes_)
            if (self._state.aux.size != 0) != self.average:
                raise ValueError(
                    f"{type(self).__name__}: average={self.average!r} differs from the "
                    "first partial_fit call; call fit to start again."
                )
        codes = self._encode(y)
        rows = np.arange(X.shape[0])
        self._run_epoch(X, codes, self._rng.permutation(rows) if self.shuffle else rows, None)
        self.n_iter_ = 1
        self._publish()
        return self

    def _start(self, X, y, classes, *, incremental: bool = False) -> None:
        """Fix the label set and allocate zero weights."""
        self.classes_ = _validation.label_set(y, classes, self, incremental=incremental)
        n_columns = 1 if self.classes_.shape[0] == 2 else self.classes_.shape[0]
        self._state = _TrainingState.zeros(X.shape[1], n_columns, self.average)

    def _encode(self, y) -> np.ndarray:
        """Labels to kernel codes: 0.0/1.0 for binary, class indices otherwise."""
        codes = _validation.encode(self.classes_, y, self)
        return codes.astype(np.float64) if self.classes_.shape[0] == 2 else codes

    def _run_epoch(self, X, codes: np.ndarray, order: np.ndarray, progress) -> None:
        """One kernel call per epoch, or per chunk of it when progress is reported
        (the kernels resume exactly: their whole state is in the arrays and scalars)."""
        state = self._state
        multinomial = state.weights.ndim == 2
        order = np.ascontiguousarray(order, dtype=np.int64)
        scales = np.array([state.scale, state.scale_sum])
        common = {
            "y": codes,
            "weights": state.weights,
            "aux": state.aux,
            "scales": scales,
            "learning_rate": float(self.learning_rate),
            "decay": 1.0 - float(self.learning_rate) * float(self.l2),
            "bias_feature": 1.0 if self.fit_intercept else 0.0,
            "min_scale": _MIN_SCALE_AVERAGED if self.average else _MIN_SCALE,
        }
        if sp.issparse(X):
            kernel = _kernels.multinomial_epoch_csr if multinomial else _kernels.binary_epoch_csr
            common.update(data=X.data, indices=X.indices, indptr=X.indptr)
        else:
            kernel = (
                _kernels.multinomial_epoch_dense if multinomial else _kernels.binary_epoch_dense
            )
            common.update(X=X)
        chunk = len(order) if progress is None else _PROGRESS_CHUNK
        loss = 0.0
        for start in range(0, len(order), max(chunk, 1)):
            part = order[start : start + chunk]
            part_loss, state.count = kernel(order=part, count=state.count, **common)
            loss += float(part_loss)
            if progress is not None:
                progress(len(part))
        state.scale, state.scale_sum = float(scales[0]), float(scales[1])
        self._log({"log_loss": loss / max(len(order), 1), "examples": len(order)})

    def export_state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The training state as arrays and JSON values (see :mod:`perceptrons.io.persist`).

        Enough to predict and to continue training exactly (``partial_fit``);
        ``coef_`` and ``intercept_`` are derived from it.
        """
        state = self._state
        values = {
            "scale": float(state.scale),
            "scale_sum": float(state.scale_sum),
            "count": int(state.count),
            "n_iter": int(self.n_iter_),
        }
        return {"weights": state.weights, "aux": state.aux}, values

    def import_state(self, arrays: dict[str, np.ndarray], values: dict[str, Any]) -> None:
        """Rebuild the training state written by :meth:`export_state`."""
        n_columns = 1 if self.classes_.shape[0] == 2 else self.classes_.shape[0]
        expected = (self.n_features_in_ + 1,) + (() if n_columns == 1 else (n_columns,))
        if arrays["weights"].shape != expected:
            raise ValueError(
                f"weights of shape {arrays['weights'].shape} do not fit "
                f"{self.n_features_in_} features and {self.classes_.shape[0]} classes"
            )
        aux_shape = expected if self.average else (0,) * len(expected)
        if arrays["aux"].shape != aux_shape:
            raise ValueError(f"aux of shape {arrays['aux'].shape}, expected {aux_shape}")
        scale = float(values["scale"])
        if not (np.isfinite(scale) and 0.0 < scale <= 1.0):
            raise ValueError(f"scale must be in (0, 1], got {scale!r}")
        self._state = _TrainingState(
            weights=np.ascontiguousarray(arrays["weights"], dtype=np.float64),
            aux=np.ascontiguousarray(arrays["aux"], dtype=np.float64),
            scale=scale,
            scale_sum=float(values["scale_sum"]),
            count=int(values["count"]),
        )
        self.n_iter_ = int(values["n_iter"])
        self._publish()

    def _publish(self) -> None:
        """Expose the current model as scikit-learn's ``coef_`` and ``intercept_``."""
        model = self._state.model(self.average)
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
            print(
                f"{type(self).__name__} epoch {record['epoch']}: mean log-loss "
                f"{record['log_loss']:.4f} over {record['examples']} examples",
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
            Binary: the log-odds of ``classes_[1]``. Multinomial: the logits, whose
            softmax is :meth:`predict_proba`.
        """
        check_is_fitted(self, "coef_")
        X = _validation.validate_prediction_data(self, X)
        scores = X @ self.coef_.T + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Class probabilities: ``σ`` of the score (binary) or its softmax.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Column ``k`` is the probability of ``classes_[k]``; rows sum to 1.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return np.column_stack([expit(-scores), expit(scores)])
        return softmax(scores, axis=1)

    def predict_log_proba(self, X: ArrayLike) -> np.ndarray:
        """Logarithms of :meth:`predict_proba`, computed without overflow or ``log(0)``.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Column ``k`` is the log-probability of ``classes_[k]``.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return np.column_stack([log_expit(-scores), log_expit(scores)])
        return log_softmax(scores, axis=1)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict the most probable label for each sample.

        Binary models predict ``classes_[1]`` when the score is positive (``p > 0.5``);
        multinomial models the highest-scoring class, ties going to the lowest index.

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
