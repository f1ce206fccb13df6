"""Logistic regression by full-batch gradient ascent on the MAP objective: the core.

:class:`LogisticRegressionBatch` here is :class:`perceptrons.LogisticRegressionBatch`
without scikit-learn's face (the same parameters, optimization, model and files); the
method is documented in :mod:`perceptrons.logistic_batch`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.special import expit, log_softmax

from perceptrons import _checked, _input, _validation
from perceptrons import _params as rules
from perceptrons._base import IncrementalClassifier
from perceptrons._engine import add_record
from perceptrons._linear import LogLinearProbabilities, SparseCoefMixin, linear_scores
from perceptrons._memory import array_bytes, check_allocation, check_training_state

__all__ = ["LogisticRegressionBatch"]

# Armijo's sufficient-increase constant: a step t is accepted when the objective rises
# by at least _ARMIJO * t * ||g||^2 (Nocedal & Wright 2006, eq. 3.4). Any value below
# 1/2 keeps the step 1/L acceptable, which is what bounds the line search.
_ARMIJO = 1e-4
# Each rejected trial halves the step.
_SHRINK = 0.5
# Zhou, Gao & Dai's threshold between the short and the long Barzilai-Borwein steps.
_ADAPTIVE = 0.5
# Denominator floor of the relative improvement (the objective is never 0 in practice:
# it is a log-likelihood of at least one example minus a penalty).
_TINY = 1e-300


@dataclass
class _Problem:
    """The MAP objective of one training set, its gradient and a Lipschitz bound.

    ``theta`` holds the feature weights and, in its last row, the intercept(s): shape
    ``(n_features + 1,)`` for the binary (sigmoid) model, ``(n_features + 1, K)`` for
    the multinomial (softmax) one, as the online family's training state. ``share`` is
    each example's weight divided by the total weight, so that the objective is a
    weighted *mean* log-likelihood minus ``l2 / 2 * ||w||^2``.
    """

    X: Any  # float64 ndarray or CSR matrix
    targets: np.ndarray  # binary: 0.0/1.0 per example; multinomial: one-hot (n, K)
    share: np.ndarray  # (n,), sums to 1
    l2: float
    fit_intercept: bool

    @property
    def multinomial(self) -> bool:
        return self.targets.ndim == 2

    def zeros(self) -> np.ndarray:
        d = self.X.shape[1] + 1
        return np.zeros((d, self.targets.shape[1]) if self.multinomial else d)

    def scores(self, theta: np.ndarray) -> np.ndarray:
        """``X @ w + b``: (n,) or (n, K)."""
        return np.asarray(self.X @ theta[:-1]) + theta[-1]

    def objective(self, theta: np.ndarray, z: np.ndarray) -> float:
        """``Σ_i share_i log P(y_i | x_i) - l2/2 ||w||²`` at ``theta``, whose scores are
        ``z``; the intercept has no prior."""
        if self.multinomial:
            loglik = np.einsum("ik,ik->i", self.targets, log_softmax(z, axis=1))
        else:
            loglik = self.targets * z - np.logaddexp(0.0, z)
        w = theta[:-1]
        return float(self.share @ loglik - 0.5 * self.l2 * np.vdot(w, w))

    def gradient(self, theta: np.ndarray, z: np.ndarray) -> np.ndarray:
        """``∂F/∂theta``: ``Σ_i share_i (y_i - p_i) x_i - l2 w`` for the weights,
        ``Σ_i share_i (y_i - p_i)`` for the intercept (0 without one)."""
        if self.multinomial:
            p = np.exp(log_softmax(z, axis=1))
            residual = self.share[:, np.newaxis] * (self.targets - p)
        else:
            residual = self.share * (self.targets - expit(z))
        grad = np.empty_like(theta)
        # X.T of a CSR matrix is CSC: the product needs no conversion.
        grad[:-1] = np.asarray(self.X.T @ residual) - self.l2 * theta[:-1]
        grad[-1] = residual.sum(axis=0) if self.fit_intercept else 0.0
        return grad

    def lipschitz(self) -> float:
        """An upper bound ``L`` on the curvature of ``-F``: the largest eigenvalue of the
        Hessian of the mean log-likelihood is at most ``c Σ_i share_i ||x̃_i||²``, with
        ``x̃`` the example with its constant 1 when there is an intercept, ``c = 1/4``
        (``p (1 - p) <= 1/4``) for the sigmoid and ``c = 1/2`` for the softmax (Böhning
        1992: ``diag(p) - p pᵀ <= I / 2``); the prior adds ``l2``."""
        if sp.issparse(self.X):
            norms = np.asarray(self.X.multiply(self.X).sum(axis=1)).ravel()
        else:
            norms = np.einsum("ij,ij->i", self.X, self.X)
        if self.fit_intercept:
            norms = norms + 1.0
        curvature = 0.5 if self.multinomial else 0.25
        return float(curvature * (self.share @ norms) + self.l2)


@dataclass
class _Iterate:
    """One point of the ascent: parameters, their scores, objective and gradient."""

    theta: np.ndarray
    z: np.ndarray
    objective: float
    gradient: np.ndarray

    @classmethod
    def at(cls, problem: _Problem, theta: np.ndarray) -> _Iterate:
        z = problem.scores(theta)
        return cls(theta, z, problem.objective(theta, z), problem.gradient(theta, z))


def _line_search(
    problem: _Problem, current: _Iterate, step: float, safe_step: float
) -> tuple[_Iterate | None, float, int]:
    """Backtracking from ``step`` until Armijo's sufficient increase holds:
    ``F(theta + t g) >= F(theta) + _ARMIJO t ||g||²``.

    Below ``safe_step = 1/L`` the test holds in exact arithmetic (the descent lemma:
    ``F(theta + t g) >= F(theta) + t (1 - L t / 2) ||g||²``), so a rejection there means
    the increase is lost in rounding: the ascent has converged and None is returned.
    Returns the accepted iterate (or None), its step and the number of objectives
    evaluated.
    """
    g = current.gradient
    squared = float(np.vdot(g, g))
    evaluations = 0
    while True:
        theta = current.theta + step * g
        z = problem.scores(theta)
        value = problem.objective(theta, z)
        evaluations += 1
        # NaN (an overflowing trial) fails the test and is backtracked.
        if value >= current.objective + _ARMIJO * step * squared:
            return _Iterate(theta, z, value, problem.gradient(theta, z)), step, evaluations
        if step <= safe_step:
            return None, step, evaluations
        step = max(step * _SHRINK, safe_step)


def _barzilai_borwein(previous: _Iterate, current: _Iterate, fallback: float) -> float:
    """The adaptive Barzilai & Borwein (1988) step of Zhou, Gao & Dai (2006): with ``s``
    the last move and ``r`` the gradient's decrease along it (``sᵀr > 0`` for a concave
    objective), the short step ``sᵀr / rᵀr`` when it is less than half the long one
    ``sᵀs / sᵀr``, the long step otherwise. Only a first guess, which the line search
    then checks. Measured to reach 1e-6 of the optimum in fewer iterations than either
    step alone: a9a 386 (short only 519, long only 1348), 20 Newsgroups 90 (short 114)."""
    s = current.theta - previous.theta
    r = previous.gradient - current.gradient
    curvature = float(np.vdot(s, r))
    if not curvature > 0.0:
        return fallback
    long_step = float(np.vdot(s, s)) / curvature
    short_step = curvature / float(np.vdot(r, r))
    return short_step if short_step < _ADAPTIVE * long_step else long_step


class LogisticRegressionBatch(SparseCoefMixin, LogLinearProbabilities, IncrementalClassifier):
    """Batch logistic regression's learner core: :class:`perceptrons.LogisticRegressionBatch`
    without scikit-learn (the same parameters, optimization, model and files)."""

    #: What not converging warns with (the estimator's face: scikit-learn's own).
    _convergence_warning: ClassVar[type[Warning]] = _input.ConvergenceWarning

    _rules: ClassVar[dict[str, rules.Rule]] = {
        **IncrementalClassifier._rules,
        "l2": rules.real(0.0),
        "tol": rules.real(0.0),
        "max_iter": rules.integer(1),
        "fit_intercept": rules.boolean(),
        "class_weight": rules.class_weight(),
        "verbose": rules.integer(0),
    }

    # The parameters, intercept(s) last (see _Problem); None until fitted.
    _state: np.ndarray | None
    n_iter_: int
    coef_: np.ndarray
    intercept_: np.ndarray

    def __init__(
        self,
        *,
        l2: float = 1e-4,
        tol: float = 1e-8,
        max_iter: int = 1000,
        fit_intercept: bool = True,
        class_weight: dict[Any, float] | str | None = None,
        verbose: int = 0,
    ) -> None:
        self.l2 = l2
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.verbose = verbose

    # ------------------------------------------------------------------ training
    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> LogisticRegressionBatch:
        """Maximize the MAP objective on ``(X, y)`` from zero weights.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Training data. Sparse input is never densified.
        y : array-like of shape (n_samples,)
            Labels of any type; at least two distinct values.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each example (finite, >= 0), multiplied by ``class_weight`` of its
            class: it counts that many times in the mean log-likelihood. None gives
            every example weight 1.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        for _ in self.fit_iterations(X, y, sample_weight=sample_weight):
            pass
        return self

    def fit_iterations(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> Iterator[dict[str, Any]]:
        """Train like :meth:`fit`, pausing after every iteration.

        After each iteration the model (``coef_``, ``predict``...) is current, so the
        caller can time, evaluate or log it, or stop early by leaving the loop.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Labels.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each example, as for :meth:`fit`.

        Yields
        ------
        record : dict
            The iteration's entry of ``history_``.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> X, y = load_iris(return_X_y=True)
        >>> model = LogisticRegressionBatch(l2=1e-2)
        >>> objectives = []
        >>> for record in model.fit_iterations(X, y):
        ...     objectives.append(record["objective"])
        ...     if record["iteration"] == 3:
        ...         break  # stop early: the model is that of iteration 3
        >>> [round(v, 3) for v in objectives], model.n_iter_
        ([-1.064, -1.003, -0.965], 3)
        """
        # Every iteration makes new arrays: a call that fails leaves the model before it.
        with self._all_or_nothing():
            problem = self._problem(X, y, sample_weight)
            bound = problem.lipschitz()
            # L = 0 only without features, intercept and prior: the gradient is 0, no step.
            safe_step = 1.0 / bound if bound > 0 else np.inf
            if not safe_step > 0:
                raise ValueError(
                    f"{type(self).__name__}: the features are too large for the curvature "
                    "bound (it overflowed); scale them (e.g. StandardScaler/MaxAbsScaler)."
                )
            current = _Iterate.at(problem, problem.zeros())
            self._state, self.history_, self.n_iter_ = current.theta, [], 0
            self._publish()
            previous: _Iterate | None = None
            converged = not np.any(current.gradient)
            while not converged and self.n_iter_ < self.max_iter:
                guess = (
                    safe_step
                    if previous is None
                    else _barzilai_borwein(previous, current, fallback=safe_step)
                )
                accepted, step, evaluations = _line_search(problem, current, guess, safe_step)
                # No increase left above rounding: the "no improvement" stop of W. Cohen's
                # 10-601 lecture "The Perceptron" (its logistic regression part).
                if accepted is None:
                    break
                gain = accepted.objective - current.objective
                converged = gain < self.tol * max(abs(current.objective), _TINY)
                previous, current = current, accepted
                self.n_iter_ += 1
                self._state = current.theta
                self._publish()
                record = {
                    "iteration": self.n_iter_,
                    "objective": current.objective,
                    "step": step,
                    "evaluations": evaluations,
                }
                add_record(self.history_, record)
                if self.verbose:
                    print(
                        f"{type(self).__name__} iteration {self.n_iter_}: objective "
                        f"{current.objective:.10g}, step {step:.3g}",
                        flush=True,
                    )
                yield record
                converged = converged or not np.any(current.gradient)
            else:
                if not converged:
                    warnings.warn(
                        f"{type(self).__name__} did not converge in max_iter={self.max_iter} "
                        f"iterations (relative improvement still >= tol={self.tol!r}); raise "
                        "max_iter or tol, or scale the features.",
                        self._convergence_warning,
                        stacklevel=2,
                    )

    def _problem(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None) -> _Problem:
        """The validated objective of ``(X, y)``; labels fixed here (a refused call
        leaves a fitted model as it was)."""
        data, labels, _, weights = self._begin_call(
            X, y, None, incremental=False, reset=True, sample_weight=sample_weight
        )
        if sp.issparse(data):
            data = sp.csr_matrix(data, dtype=np.float64)
        else:
            data = np.asarray(data, dtype=np.float64)
        codes = _validation.encode(self.classes_, labels, self)
        n_classes = self.classes_.shape[0]
        # Three iterates (the current, the previous, the line search's), each with its
        # gradient, and the published model.
        check_training_state(
            type(self).__name__,
            data.shape[1] + 1,
            1 if n_classes == 2 else n_classes,
            arrays=7,
        )
        if n_classes > 2:
            # A batch method scores every example at once: the one-hot targets, the
            # three iterates' scores and the gradient's temporaries, n x K each.
            check_allocation(
                array_bytes(codes.shape[0], n_classes) * 8,
                f"{type(self).__name__}'s scores of every example ({codes.shape[0]:,} "
                f"rows x {n_classes:,} classes x 8 arrays)",
                "train on fewer examples or classes, or use LogisticRegressionSGD (it "
                "scores one example at a time)",
            )
        if n_classes == 2:
            targets = codes.astype(np.float64)
        else:
            targets = np.zeros((codes.shape[0], n_classes))
            targets[np.arange(codes.shape[0]), codes] = 1.0
        weights = np.ones(codes.shape[0]) if weights is None else weights
        return _Problem(
            X=data,
            targets=targets,
            share=weights / weights.sum(),
            l2=float(self.l2),
            fit_intercept=bool(self.fit_intercept),
        )

    def _publish(self) -> None:
        """Expose the parameters as scikit-learn's ``coef_`` and ``intercept_``."""
        assert self._state is not None
        model = self._state if self._state.ndim == 2 else self._state[:, np.newaxis]
        # A transposed view, as the online family's: coef_.T, which prediction
        # multiplies by, is C-contiguous (no copy for scipy's sparse product, and the
        # operand a sparsified coef_ is expanded to). The state is never written in
        # place: every iteration makes a new array.
        _validation.check_linear_model(model[:-1].T, model[-1], self)
        self.coef_ = model[:-1].T
        self.intercept_ = model[-1].copy()

    # ---------------------------------------------------------------- persistence
    def _codec(self) -> _BatchCodec:
        """The model's state as a model file stores it (see :mod:`perceptrons._engine`)."""
        return _BatchCodec(self)

    def _shed_state(self, pruned_at: float | None) -> None:
        # The weights are all the model holds, and coef_/intercept_ say them: nothing
        # else to keep (a fit always starts from zero).
        self._state = None
        super()._shed_state(pruned_at)

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
            Log-odds of ``classes_[1]`` for binary models, logits otherwise.
        """
        _input.check_is_fitted(self, "coef_")
        X = _validation.validate_prediction_data(self, X)
        scores = linear_scores(X, self.coef_, self.intercept_, self)
        return scores.ravel() if scores.shape[1] == 1 else scores


class _BatchCodec:
    """The state of a :class:`LogisticRegressionBatch` model
    (:class:`perceptrons._engine.StateCodec`): its weights."""

    def __init__(self, estimator: LogisticRegressionBatch) -> None:
        self.estimator = estimator

    def check_params(self) -> None:
        self.estimator._check_params()

    def export_state(self, resumable: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
        """The parameters (feature rows, then the intercept row) and ``n_iter``, as
        arrays and JSON values (see :mod:`perceptrons.io.persist`); a sparsified model
        gives them by their nonzeros (a :class:`~perceptrons._checked.SparseArray`) and
        ``"sparsified": true``. ``resumable`` is ignored: the weights are all the model
        holds (a fit always starts from zero)."""
        estimator = self.estimator
        _input.check_is_fitted(estimator, "coef_")
        values: dict[str, Any] = {"n_iter": int(estimator.n_iter_)}
        if estimator._state is not None:
            return {"weights": estimator._state}, values
        if sp.issparse(estimator.coef_):
            values["sparsified"] = True
        return {"weights": estimator._model_array()}, values

    def import_state(self, arrays: dict[str, Any], values: dict[str, Any]) -> None:
        """Rebuild the model written by :meth:`export_state`, checking the array against
        ``n_features_in_`` and ``classes_`` (:meth:`state_layout`) and ``n_iter`` first:
        they may come from an untrusted file. With ``"sparsified": true`` the model is
        rebuilt sparsified, never expanded."""
        estimator = self.estimator
        rules.validate(estimator, estimator._rules)
        fits = f"{estimator.n_features_in_} features and {estimator.classes_.shape[0]} classes"
        arrays = _checked.check_arrays(arrays, self.state_layout(values), fits)
        sparsified = _checked.boolean_value(values.get("sparsified", False), "sparsified")
        n_iter = _checked.integer_value(values.get("n_iter"), "n_iter")
        weights = arrays["weights"]
        if sparsified and isinstance(weights, _checked.SparseArray):
            coef, intercept = estimator._published_from(weights)
            _validation.check_linear_model(coef, intercept, estimator)
            if not estimator.fit_intercept and np.any(intercept):
                raise ValueError("fit_intercept is False but the intercept row is not zero")
            estimator.n_iter_, estimator._state = n_iter, None
            estimator.coef_, estimator.intercept_ = coef, intercept
            return
        if isinstance(weights, _checked.SparseArray):
            weights = weights.to_dense()
        weights = np.array(weights, dtype=np.float64)
        if not estimator.fit_intercept and np.any(weights[-1]):
            raise ValueError("fit_intercept is False but the intercept row is not zero")
        estimator.n_iter_ = n_iter
        estimator._state = weights
        estimator._publish()
        if sparsified:
            estimator.sparsify()

    def state_layout(self, values: dict[str, Any]) -> dict[str, _checked.Spec]:
        """What :meth:`import_state` accepts: finite float64 weights of shape
        ``(n_features_in_ + 1,)`` (binary) or ``(n_features_in_ + 1, n_classes)``."""
        estimator = self.estimator
        n_classes = estimator.classes_.shape[0]
        rows = estimator.n_features_in_ + 1
        shape = (rows,) if n_classes == 2 else (rows, n_classes)
        return {"weights": _checked.floats(*shape)}
