"""Naive Bayes as a linear classifier, multinomial and Bernoulli: the learner core.

:class:`MultinomialNaiveBayes` and :class:`BernoulliNaiveBayes` here are the estimators
of the same names in :mod:`perceptrons` without scikit-learn's face (the same
parameters, counts, model and files); the derivation is in :mod:`perceptrons.naive_bayes`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from perceptrons import _checked, _input, _validation
from perceptrons import _params as rules
from perceptrons._base import IncrementalClassifier
from perceptrons._linear import LogLinearProbabilities, SparseCoefMixin, linear_scores
from perceptrons._memory import check_training_state
from perceptrons._states import Frozen

__all__ = ["BernoulliNaiveBayes", "MultinomialNaiveBayes"]


def _positive_vector_or_none(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str | bytes):
        return False
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return array.ndim == 1 and array.size > 0 and bool(np.all(np.isfinite(array) & (array > 0)))


_POSITIVE_ALPHA = rules.Rule(
    "a finite float > 0 (alpha=0 would give the weight log(0) = -inf to every feature "
    "never seen with a class)",
    rules.real(0.0, inclusive=False).accepts,
)


class _NaiveBayes(SparseCoefMixin, LogLinearProbabilities, IncrementalClassifier):
    """Shared counting, weights and prediction; subclasses give the event model.

    ``sparsify()`` keeps the counts (they are the model: every weight is recomputed
    from them), so ``densify()`` recomputes the exact dense weights; with a
    ``threshold`` that prunes a weight, the pruned ``coef_`` predicts and training
    further needs a new ``fit``. The weights are log-probabilities, nonzero wherever
    ``alpha > 0``: only pruning makes a naive Bayes model sparse.
    """

    # Loading expands the counts, sparsified or not (every weight comes from them).
    _loads_sparsified_compact = False
    # The counts (fitted attributes, absent before the first call).
    feature_count_: np.ndarray
    class_count_: np.ndarray

    _rules: ClassVar[dict[str, rules.Rule]] = {
        **IncrementalClassifier._rules,
        "alpha": _POSITIVE_ALPHA,
        "fit_prior": rules.boolean(),
        "class_prior": rules.Rule(
            "None or a non-empty 1-D array-like of finite floats > 0", _positive_vector_or_none
        ),
        "class_weight": rules.class_weight(),
    }

    def __init__(
        self,
        *,
        alpha: float = 1.0,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
        class_weight: dict[Any, float] | str | None = None,
    ) -> None:
        self.alpha = alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.class_weight = class_weight

    # ------------------------------------------------------------ event model
    def _class_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-class ``log P(x_j | c)`` term weights and the feature part of the bias."""
        raise NotImplementedError

    # ------------------------------------------------------------------ training
    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> _NaiveBayes:
        """Count the features of each class in ``(X, y)``, forgetting earlier calls.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Non-negative feature counts or frequencies (binarized by
            ``BernoulliNaiveBayes``). Sparse input is counted without densifying it.
        y : array-like of shape (n_samples,)
            The class of each row, of any label type; two or more classes.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each row (finite, >= 0), multiplied by ``class_weight`` of its
            class: the row is counted that many times (scikit-learn's weighted counts);
            a weight of 0 counts as without the row. None: every weight 1.

        Returns
        -------
        self : object
            The estimator, with ``class_count_``, ``feature_count_`` and the linear
            model ``coef_``, ``intercept_`` they give.
        """
        return self._partial_fit(
            X, y, None, incremental=False, reset=True, sample_weight=sample_weight
        )

    def partial_fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        classes: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> _NaiveBayes:
        """Add the counts of one more batch: any split into batches gives ``fit``'s model.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            The batch's non-negative counts or frequencies.
        y : array-like of shape (n_samples,)
            The class of each row of the batch.
        classes : array-like of shape (n_classes,), default=None
            Every label the model will ever see. Required on the first call unless that
            first batch already holds every label; later calls may only repeat it.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each row of the batch, as for :meth:`fit`.

        Returns
        -------
        self : object
            The estimator, its counts and linear model now including the batch.
        """
        return self._partial_fit(X, y, classes, incremental=True, sample_weight=sample_weight)

    def _partial_fit(
        self, X, y, classes, *, incremental: bool, reset: bool = False, sample_weight=None
    ) -> _NaiveBayes:
        # The counts are new arrays each call (nothing is written in place): a call
        # that fails leaves the model as it was.
        with self._all_or_nothing():
            X, y, first_call, weights = self._begin_call(
                X, y, classes, incremental=incremental, reset=reset, sample_weight=sample_weight
            )
            self._check_class_prior()
            n_classes = self.classes_.shape[0]
            if first_call:
                # The counts, the log-probabilities published from them, and the
                # temporary of their smoothing.
                check_training_state(type(self).__name__, X.shape[1], n_classes, arrays=3)
                feature_count = np.zeros((n_classes, X.shape[1]))
                class_count = np.zeros(n_classes)
            else:
                feature_count, class_count = self.feature_count_, self.class_count_
            feature_count, class_count = self._count(X, y, weights, feature_count, class_count)
            self.feature_count_, self.class_count_ = feature_count, class_count
            self._publish()
        return self

    def _is_first_call(self) -> bool:
        # The counts are the state: they exist from the first call on.
        return getattr(self, "class_count_", None) is None

    def _check_class_prior(self) -> None:
        """One prior per class (checked on every call: set_params may change it)."""
        n_classes = self.classes_.shape[0]
        # The rule made class_prior a 1-D array-like, if not None: len is its size.
        n_prior = None if self.class_prior is None else np.asarray(self.class_prior).shape[0]
        if n_prior is not None and n_prior != n_classes:
            raise ValueError(
                f"{type(self).__name__}: class_prior has {n_prior} values "
                f"but there are {n_classes} classes {self.classes_.tolist()!r}."
            )

    def _count(self, X, y, weights, feature_count, class_count) -> tuple[np.ndarray, np.ndarray]:
        """The counts with the batch's per-class sums of X added: ``onehot(y).T @ X``,
        computed as ``(X.T @ onehot(y)).T`` so that a CSR ``X`` is only transposed (to CSC,
        no copy). A weighted row adds its weight instead of 1 (``weights`` scales its
        one-hot row). New arrays: counts that would overflow are refused and the model
        is left as it was."""
        codes = _validation.encode(self.classes_, y, self)
        onehot = np.zeros((codes.shape[0], self.classes_.shape[0]))
        onehot[np.arange(codes.shape[0]), codes] = 1.0 if weights is None else weights
        with np.errstate(over="ignore", invalid="ignore"):
            feature_count = feature_count + np.asarray(X.T @ onehot).T
            class_count = class_count + onehot.sum(axis=0)
        if not (np.isfinite(feature_count).all() and np.isfinite(class_count).all()):
            raise ValueError(
                f"{type(self).__name__}: the feature counts overflowed to infinity: the "
                "features (or sample weights) are too large; scale them down. The model "
                "is unchanged."
            )
        return feature_count, class_count

    def _check_derived(self, weights: np.ndarray, intercept: np.ndarray) -> None:
        """The one check of the model derived from the counts, whether they were just
        counted or read from a file: some example counted (else every prior is
        ``log 0 - log 0``), and the per-class weights and intercepts meet
        :func:`~perceptrons._validation.check_linear_model`, except the ``-inf`` prior
        of a class declared but not seen yet (it is never predicted)."""
        name = type(self).__name__
        if not self.class_count_.sum() > 0:
            raise ValueError(
                f"{name}: the class counts are all 0 (no example counted, or every one "
                "weighted 0): there is no model."
            )
        unseen = (self.class_count_ == 0) & (intercept == -np.inf)
        _validation.check_linear_model(weights, np.where(unseen, 0.0, intercept), self)

    def _class_log_prior(self) -> np.ndarray:
        n_classes = self.classes_.shape[0]
        if self.class_prior is not None:
            return np.log(np.asarray(self.class_prior, dtype=np.float64))
        if self.fit_prior:
            # A class declared to partial_fit but not seen yet has prior log(0) = -inf.
            with np.errstate(divide="ignore"):
                return np.log(self.class_count_) - np.log(self.class_count_.sum())
        return np.full(n_classes, -np.log(n_classes))

    def _publish(self) -> None:
        """Turn the counts into the per-class weights and the public linear model,
        refusing counts whose model gives NaN or overflowing scores
        (:meth:`_check_derived`); nothing is published then."""
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # checked next
            log_prior = self._class_log_prior()
            feature_log_prob = getattr(self, "feature_log_prob_", None)
            weights, feature_bias = self._class_weights()
            intercept = log_prior + feature_bias
        try:
            self._check_derived(weights, intercept)
        except ValueError:
            if feature_log_prob is None:
                self.__dict__.pop("feature_log_prob_", None)
            else:
                self.feature_log_prob_ = feature_log_prob
            raise
        self.class_log_prior_ = log_prior
        self._joint_coef = weights
        self._joint_intercept = intercept
        if self.classes_.shape[0] == 2:
            # One row, like the binary perceptrons: positive scores predict classes_[1].
            self.coef_ = (weights[1] - weights[0])[np.newaxis, :]
            self.intercept_ = np.array([self._joint_intercept[1] - self._joint_intercept[0]])
        else:
            self.coef_ = weights
            self.intercept_ = self._joint_intercept

    # ---------------------------------------------------------------- persistence
    def _codec(self) -> _NaiveBayesCodec:
        """The model's state as a model file stores it (see :mod:`perceptrons._engine`)."""
        return _NaiveBayesCodec(self)

    def _check_counts(self) -> None:
        """Subclasses check invariants of imported counts."""

    def _restore_state(self) -> bool:
        if isinstance(self._lifecycle, Frozen):
            return False  # the pruned weights stay: they are what the model predicts with
        self._publish()
        return True

    # ---------------------------------------------------------------- prediction
    def _validate_predict(self, X):
        _input.check_is_fitted(self)
        X = _validation.validate_prediction_data(self, X)
        return self._prepare(X)

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Linear scores ``X @ coef_.T + intercept_``.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Non-negative counts or frequencies to score (binarized first by
            ``BernoulliNaiveBayes``).

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            With three or more classes, the joint log-likelihoods ``log P(c) + log
            P(x | c)`` (dropping the multinomial coefficient, the same for every class).
            With two classes, their difference ``log P(classes_[1], x) - log
            P(classes_[0], x)``, the log odds: positive scores predict ``classes_[1]``.
        """
        scores = linear_scores(self._validate_predict(X), self.coef_, self.intercept_, self)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict_joint_log_proba(self, X: ArrayLike) -> np.ndarray:
        """Per-class joint log-likelihoods ``log P(c) + log P(x | c)``, also for binary.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Counts or frequencies, as for :meth:`decision_function`.

        Returns
        -------
        jll : ndarray of shape (n_samples, n_classes)
            One column per class of ``classes_`` (Multinomial: up to the multinomial
            coefficient of ``x``, which every class shares).
        """
        return self._validate_predict(X) @ self._joint_coef.T + self._joint_intercept


class _NaiveBayesCodec:
    """A naive Bayes model's state (:class:`perceptrons._engine.StateCodec`): its
    counts, from which every weight is recomputed."""

    def __init__(self, estimator: _NaiveBayes) -> None:
        self.estimator = estimator

    def check_params(self) -> None:
        self.estimator._check_params()

    def export_state(self, resumable: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
        """The counts, from which every weight is recomputed (see :mod:`perceptrons.io.persist`).

        Enough to predict and to continue with ``partial_fit`` exactly; a sparsified
        model also gives ``"sparsified": true`` and the ``threshold`` it was pruned at
        (pruning is recomputed exactly from the counts).

        Parameters
        ----------
        resumable : bool, default=True
            Ignored: the counts are both the model and all that training needs.
        """
        estimator = self.estimator
        arrays = {
            "feature_count": estimator.feature_count_,
            "class_count": estimator.class_count_,
        }
        values: dict[str, Any] = {"n_seen": round(float(estimator.class_count_.sum()))}
        if sp.issparse(estimator.coef_):
            values["sparsified"] = True
        if isinstance(estimator._lifecycle, Frozen):
            values.update(threshold=estimator._lifecycle.pruned_at, resumable=False)
        return arrays, values

    def import_state(self, arrays: dict[str, Any], values: dict[str, Any]) -> None:
        """Rebuild the model from the counts written by :meth:`export_state`, checking
        them (:meth:`state_layout`: float64, finite, non-negative) first: they may come
        from an untrusted file."""
        estimator = self.estimator
        rules.validate(estimator, estimator._rules)
        estimator._check_class_prior()
        n_classes = estimator.classes_.shape[0]
        fits = f"{estimator.n_features_in_} features and {n_classes} classes"
        arrays = _checked.check_arrays(arrays, self.state_layout(values), fits)
        dense = {
            name: array.to_dense() if isinstance(array, _checked.SparseArray) else array.copy()
            for name, array in arrays.items()
        }
        feature_count, class_count = dense["feature_count"], dense["class_count"]
        sparsified = _checked.boolean_value(values.get("sparsified", False), "sparsified")
        threshold = _checked.real_value(values.get("threshold", 0.0), "threshold", 0.0)
        _checked.boolean_value(values.get("resumable", True), "resumable")
        n_seen = _checked.real_value(values.get("n_seen"), "n_seen", 0.0, _checked.MAX_COUNT)
        if round(n_seen) != round(float(class_count.sum())):
            raise ValueError(
                f"n_seen={values['n_seen']!r} differs from the {class_count.sum():g} "
                "examples the class counts hold"
            )
        estimator.feature_count_, estimator.class_count_ = feature_count, class_count
        estimator._check_counts()
        estimator._thaw()
        estimator._publish()
        if sparsified:
            estimator.sparsify(threshold)

    def state_layout(self, values: dict[str, Any]) -> dict[str, _checked.Spec]:
        """The arrays :meth:`import_state` accepts: non-negative float64 counts of
        shapes ``(n_classes, n_features_in_)`` and ``(n_classes,)``."""
        estimator = self.estimator
        n_classes = estimator.classes_.shape[0]
        return {
            "feature_count": _checked.floats(n_classes, estimator.n_features_in_, low=0.0),
            "class_count": _checked.floats(n_classes, low=0.0),
        }


class MultinomialNaiveBayes(_NaiveBayes):
    """Multinomial naive Bayes' learner core: :class:`perceptrons.MultinomialNaiveBayes`
    without scikit-learn (the same parameters, counts and model)."""

    def _prepare(self, X):
        if sp.issparse(X):
            low = X.data.min() if X.nnz else 0.0
        else:
            low = X.min() if X.size else 0.0
        if low < 0:
            # "Negative values in data" is the phrase scikit-learn's checks look for.
            raise ValueError(
                f"{type(self).__name__} needs non-negative features (counts). Negative "
                f"values in data passed to X: the smallest is {float(low):g}. Use "
                "BernoulliNaiveBayes for features of any sign, or shift or rescale them."
            )
        return X

    def _class_weights(self) -> tuple[np.ndarray, np.ndarray]:
        smoothed = self.feature_count_ + self.alpha
        self.feature_log_prob_ = np.log(smoothed) - np.log(smoothed.sum(axis=1, keepdims=True))
        return self.feature_log_prob_, np.zeros(self.classes_.shape[0])


class BernoulliNaiveBayes(_NaiveBayes):
    """Bernoulli naive Bayes' learner core: :class:`perceptrons.BernoulliNaiveBayes`
    without scikit-learn (the same parameters, counts and model)."""

    _rules: ClassVar[dict[str, rules.Rule]] = {
        **_NaiveBayes._rules,
        "binarize": rules.Rule(
            "None or a finite float >= 0",
            lambda v: v is None or rules.real(0.0).accepts(v),
        ),
    }

    def __init__(
        self,
        *,
        alpha: float = 1.0,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
        binarize: float | None = 0.0,
        class_weight: dict[Any, float] | str | None = None,
    ) -> None:
        super().__init__(
            alpha=alpha, fit_prior=fit_prior, class_prior=class_prior, class_weight=class_weight
        )
        self.binarize = binarize

    def _prepare(self, X):
        values = X.data if sp.issparse(X) else X
        if self.binarize is None:
            if np.any((values != 0) & (values != 1)):
                raise ValueError(
                    f"{type(self).__name__} with binarize=None needs binary features (0 or "
                    "1); set binarize to a threshold to binarize them."
                )
            return X
        if sp.issparse(X):
            # Implicit zeros stay absent: the threshold is >= 0.
            X = X.copy()
            X.data = (X.data > self.binarize).astype(np.float64)
            X.eliminate_zeros()
            return X
        return (X > self.binarize).astype(np.float64)

    def _check_counts(self) -> None:
        if np.any(self.feature_count_ > self.class_count_[:, np.newaxis]):
            raise ValueError("a feature is counted present in more examples than its class has")

    def _class_weights(self) -> tuple[np.ndarray, np.ndarray]:
        total = np.log(self.class_count_ + 2 * self.alpha)[:, np.newaxis]
        present = np.log(self.feature_count_ + self.alpha)
        absent = np.log(self.class_count_[:, np.newaxis] - self.feature_count_ + self.alpha)
        self.feature_log_prob_ = present - total
        log_absent = absent - total
        return present - absent, log_absent.sum(axis=1)
