"""The voted perceptron of Freund & Schapire (1999), with kernels.

The model is the perceptron's *update sequence* (the improved voted perceptron of Daumé's notes):
which training examples were mistakes, with their sign or classes, and how many examples
each intermediate model survived (its votes). Weight vectors are never stored: the
examples that caused updates (the support vectors) are, once each, and every intermediate
model's score on a new point is a prefix sum of kernel values between that point and the
support vectors (:mod:`perceptrons._kernels.voted`).

Training is the online dual perceptron, exact, computed one block of examples at a time:
one BLAS kernel product scores a whole block under the model as it stood when the block
began; a compiled loop then walks the block in order, adding the updates made inside it.
When several epochs run, the kernel columns of support vectors over the training set are
cached (within ``cache_size`` megabytes), so later epochs gather instead of recompute.
The n×n Gram matrix of the training data is never formed (unless passed precomputed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from perceptrons import _checked, _validation
from perceptrons import _params as rules
from perceptrons._engine import non_finite_message
from perceptrons._kernels import perceptron as _perceptron_kernels
from perceptrons._kernels import voted as _voted
from perceptrons._online import IncrementalClassifier

__all__ = ["VotedPerceptron"]

_RULES = {
    "vote": _voted.RULE_VOTE,
    "average": _voted.RULE_AVERAGE,
    "last": _voted.RULE_LAST,
    "random": _voted.RULE_RANDOM,
}
# The kernels' sample weights when every weight is 1.
_NO_WEIGHTS = np.empty(0)
# Kernel blocks are bounded to about this many float64 values at prediction time.
_PREDICT_BLOCK_VALUES = 2**24


class _Growable:
    """A 2-D float or int array that grows along its first axis by doubling."""

    def __init__(self, n_columns: int, dtype: Any) -> None:
        self._data = np.zeros((16, n_columns), dtype=dtype)
        self.size = 0

    def append(self, rows: np.ndarray) -> None:
        needed = self.size + rows.shape[0]
        if needed > self._data.shape[0]:
            capacity = max(needed, 2 * self._data.shape[0])
            grown = np.zeros((capacity, *self._data.shape[1:]), dtype=self._data.dtype)
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size : needed] = rows
        self.size = needed

    @property
    def view(self) -> np.ndarray:
        return self._data[: self.size]


class _SupportStore:
    """The support vectors: rows of X (dense or CSR), or training indices (precomputed)."""

    def __init__(self, sparse: bool, n_features: int, precomputed: bool) -> None:
        self.sparse, self.precomputed = sparse, precomputed
        self._dense: _Growable | None = (
            None if (sparse or precomputed) else _Growable(n_features, np.float64)
        )
        self._indices: _Growable | None = _Growable(1, np.int64) if precomputed else None
        self._chunks: list[sp.csr_matrix] = []
        self._n_features = n_features
        self.size = 0

    def append(self, rows: Any, indices: np.ndarray) -> None:
        if self.precomputed:
            assert self._indices is not None
            self._indices.append(indices[:, np.newaxis])
        elif self.sparse:
            self._chunks.append(sp.csr_matrix(rows, dtype=np.float64))
        else:
            assert self._dense is not None
            self._dense.append(np.asarray(rows, dtype=np.float64))
        self.size += len(indices)

    def matrix(self, start: int = 0) -> Any:
        """Support vectors ``start:`` as a matrix (or their training indices)."""
        if self.precomputed:
            assert self._indices is not None
            return self._indices.view[start:, 0]
        if not self.sparse:
            assert self._dense is not None
            return self._dense.view[start:]
        if len(self._chunks) > 1:  # consolidate, so later calls slice one matrix
            self._chunks = [sp.vstack(self._chunks, format="csr")]
        if not self._chunks:
            return sp.csr_matrix((0, self._n_features))
        return self._chunks[0][start:]


@dataclass
class _CallState:
    """What one ``fit`` (over all its epochs) or one ``partial_fit`` call keeps.

    ``example_support`` maps the call's example indices to support ids (-1: none yet);
    ``slack`` is the Δ trick's per-example term (size 0 when ``delta == 0``);
    ``cache`` holds kernel columns of support vectors over the call's examples.
    """

    example_support: np.ndarray
    slack: np.ndarray
    cache: np.ndarray | None = None
    max_cached: int = 0


class VotedPerceptron(IncrementalClassifier):
    """The voted perceptron (Freund & Schapire 1999), with kernels, binary and multiclass.

    Trains the perceptron online (in the dual form, so any kernel works) and keeps every
    intermediate model, each with its votes: the number of training examples it survived.
    Prediction combines them by ``prediction``.

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "precomputed"} or callable, default="linear"
        ``"poly"`` is ``(gamma·<x, x'> + coef0) ** degree``, ``"rbf"`` is
        ``exp(-gamma·||x - x'||²)``. A callable takes two matrices and returns their kernel
        matrix. With ``"precomputed"``, ``fit`` takes the Gram matrix of the training data
        and prediction the kernel between the new points (rows) and the training points.
    degree : int, default=3
        Degree of the polynomial kernel.
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel coefficient of ``"poly"`` and ``"rbf"``: ``"scale"`` is
        ``1 / (n_features · X.var())`` of the first training data, ``"auto"`` is
        ``1 / n_features``.
    coef0 : float, default=1.0
        Constant term of the polynomial kernel (Freund & Schapire use ``(1 + <x, x'>)^d``).
    prediction : {"vote", "average", "last", "random"}, default="vote"
        ``"vote"``: every intermediate model votes with its survival count (binary: for
        the sign of its score; multiclass: for its own argmax class, ties to the lowest
        class) and the most voted class wins (ties to the lowest class; a binary tie
        predicts ``classes_[0]``). ``"average"``: the survival-weighted mean of the
        models' scores, which is the averaged perceptron. ``"last"``: the final model,
        which is the vanilla perceptron. ``"random"``: for each point, one model drawn
        with probability proportional to its votes (Freund & Schapire 1999), reproducible from
        ``random_state``. With ``multiclass="ovr"`` each class's binary sequence is
        reduced by the rule and the class with the highest value wins.
    multiclass : {"native", "ovr"}, default="native"
        ``"native"``: one sequence of multiclass updates (on a mistake, ``+x`` to the gold
        class and ``-x`` to the predicted one). ``"ovr"``: one binary voted perceptron per
        class, trained in the same pass and sharing every kernel evaluation, as Freund &
        Schapire ran MNIST.
    max_epochs : int, default=10
        Passes over the training data in ``fit``.
    shuffle : bool, default=True
        A fresh random order every epoch, drawn from ``random_state``.
    fit_intercept : bool, default=True
        Learn a bias, as the weight of a constant feature of value 1.
    delta : float, default=0.0
        The Δ trick (Freund & Schapire 1999): train as if each training example had its own extra
        feature of value ``delta``; it never enters prediction. Each ``partial_fit`` call
        treats its batch as new examples.
    batch_size : int, default=512
        Examples scored together by one kernel product during training. Any value gives
        the same model, up to the rounding of the kernel sums (which can only matter for
        an example whose score is an exact tie); it trades BLAS efficiency against
        in-block work.
    cache_size : float, default=256
        Megabytes for caching the kernel columns of support vectors over the training
        set between epochs of ``fit``; 0 disables the cache.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling and the ``"random"`` prediction rule.
    verbose : int, default=0
        Print one line per epoch.
    class_weight : dict, "balanced" or None, default=None
        Weight of each class, ``{label: weight}`` (labels not named weigh 1), as in
        scikit-learn: example ``i`` weighs ``sample_weight[i] * class_weight[y_i]``; an
        update on it steps ``s_i`` times as far (its dual coefficient and the intercept
        move by ``±s_i``), and it counts ``s_i`` times in the votes (a model's votes are
        the total weight of the examples it survived). ``"balanced"`` weighs class ``c``
        by ``n_samples / (n_classes * n_c)``, computed on the labels given to ``fit``
        (``partial_fit`` refuses it).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.
    support_vectors_ : ndarray or sparse matrix of shape (n_support, n_features)
        The training examples that caused updates, once each. With
        ``kernel="precomputed"``, ``support_`` holds their training indices instead.
    n_updates_ : int
        Length of the update sequence (for ``"ovr"``, over every class).
    intercept_ : ndarray of shape (n_columns,)
        The final model's biases (one column for binary problems).
    history_ : list of dict
        One record per epoch: ``epoch``, ``mistakes`` (updates made), ``examples``,
        ``support_vectors``.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from perceptrons import VotedPerceptron
    >>> X, y = load_digits(return_X_y=True)
    >>> vp = VotedPerceptron(kernel="poly", degree=2, max_epochs=3, random_state=0)
    >>> vp = vp.fit(X[:1000], y[:1000])
    >>> round(vp.score(X[1000:], y[1000:]), 3)  # every intermediate model votes
    0.913
    >>> round(vp.set_params(prediction="last").score(X[1000:], y[1000:]), 3)
    0.867
    """

    _rules: ClassVar[dict[str, rules.Rule]] = {
        **IncrementalClassifier._rules,
        "kernel": rules.either(
            rules.one_of("linear", "poly", "rbf", "precomputed"), rules.callable_()
        ),
        "degree": rules.integer(1),
        "gamma": rules.either(rules.one_of("scale", "auto"), rules.real(0.0, inclusive=False)),
        "coef0": rules.finite_real(),
        "prediction": rules.one_of(*_RULES),
        "multiclass": rules.one_of("native", "ovr"),
        "max_epochs": rules.integer(1),
        "shuffle": rules.boolean(),
        "fit_intercept": rules.boolean(),
        # Δ² enters the training scores: bounded so that it is a finite float.
        "delta": rules.Rule(
            "a float in [0, 1e150]", lambda v: rules.real(0.0).accepts(v) and v <= 1e150
        ),
        "batch_size": rules.integer(1),
        "cache_size": rules.real(0.0),
        "random_state": rules.random_state(),
        "verbose": rules.integer(0),
        "class_weight": rules.class_weight(),
    }

    # The fitted model (set by training or import_state). _support is the first-call
    # flag: None from the start of a fit until its data are checked.
    _support: _SupportStore | None
    _alpha: _Growable
    _updates: _Growable
    _bias: np.ndarray
    _weights: np.ndarray
    _n_seen: int
    _epoch_ends: list[int]
    _native: bool
    _primal: bool
    _gamma: float
    _kernel_name: str
    # Sample weights (None until a weighted call): per update, the weight s of its
    # example (its step) and the total weight of the examples before it in the stream;
    # the total weight seen, and at each epoch end. Votes are differences of the totals.
    _update_weights: _Growable | None
    _weight_seen: float
    _weight_ends: list[float]

    def __init__(
        self,
        *,
        kernel: str | Callable = "linear",
        degree: int = 3,
        gamma: str | float = "scale",
        coef0: float = 1.0,
        prediction: str = "vote",
        multiclass: str = "native",
        max_epochs: int = 10,
        shuffle: bool = True,
        fit_intercept: bool = True,
        delta: float = 0.0,
        batch_size: int = 512,
        cache_size: float = 256,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
        class_weight: dict[Any, float] | str | None = None,
    ) -> None:
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.prediction = prediction
        self.multiclass = multiclass
        self.max_epochs = max_epochs
        self.shuffle = shuffle
        self.fit_intercept = fit_intercept
        self.delta = delta
        self.batch_size = batch_size
        self.cache_size = cache_size
        self.random_state = random_state
        self.verbose = verbose
        self.class_weight = class_weight

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    # ------------------------------------------------------------------ training
    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> VotedPerceptron:
        """Train for ``max_epochs`` passes over ``(X, y)``, starting from scratch.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Training data, or the (n_samples, n_samples) Gram matrix when
            ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Labels of any type; at least two distinct values.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each example (finite, >= 0), multiplied by ``class_weight`` of its
            class: an update on it steps that many times as far, and it counts that
            many times in the votes. A weight of 0 trains exactly as without the
            example; None gives every example weight 1.

        Returns
        -------
        self : object
            The estimator, holding the update sequence with its votes and the
            support vectors.
        """
        for _ in self.fit_epochs(X, y, sample_weight=sample_weight):
            pass
        return self

    def fit_epochs(
        self,
        X: ArrayLike,
        y: ArrayLike,
        progress: Callable[[int], object] | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Train like :meth:`fit`, pausing after every epoch.

        After each epoch the model is current (``predict`` and the rest work), so the
        caller can evaluate it on development data or stop by leaving the loop.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Training data (the Gram matrix if ``kernel="precomputed"``).
        y : array-like of shape (n_samples,)
            Labels.
        progress : callable, default=None
            Called with the number of examples just processed (once per block or
            epoch), for progress bars.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each example, as for :meth:`fit`.

        Yields
        ------
        record : dict
            The epoch's entry of ``history_``.
        """
        data, labels, _, weights = self._begin_call(
            X, y, None, incremental=False, reset=True, sample_weight=sample_weight
        )
        if self.kernel == "precomputed" and data.shape[0] != data.shape[1]:
            raise ValueError(
                "kernel='precomputed' needs the square Gram matrix of the training data in "
                f"fit, got shape {data.shape}."
            )
        self._start(data)
        rng = self.random_state_ = check_random_state(self.random_state)
        targets = self._targets(labels)
        call = self._new_call(data, cache=self.max_epochs > 1)
        self.history_ = []
        n_samples = data.shape[0]
        for epoch in range(self.max_epochs):
            order = rng.permutation(n_samples) if self.shuffle else np.arange(n_samples)
            self._run_epoch(data, targets, order, call, progress, weights)
            if epoch + 1 < self.max_epochs:
                self._fill_cache(data, call)
            yield self.history_[-1]

    def partial_fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        classes: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> VotedPerceptron:
        """Run one epoch over ``(X, y)``, extending the update sequence.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            A batch of new training examples (not available with
            ``kernel="precomputed"``: a batch's Gram matrix cannot index earlier
            support vectors).
        y : array-like of shape (n_samples,)
            Its labels.
        classes : array-like of shape (n_classes,), default=None
            Every label the model will ever see; needed on the first call unless that
            batch holds them all.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each example of the batch, as for :meth:`fit`.

        Returns
        -------
        self : object
            The updated estimator.
        """
        self._check_params()
        if self.kernel == "precomputed":
            raise ValueError(
                "partial_fit is not available with kernel='precomputed': the Gram matrix "
                "of one batch does not index the support vectors of another."
            )
        data, labels, first_call, weights = self._begin_call(
            X, y, classes, incremental=True, sample_weight=sample_weight
        )
        if first_call:
            self._start(data)
            self.random_state_ = check_random_state(self.random_state)
            self.history_ = []
        elif self._kernel_name != self._kernel_in_use():
            raise ValueError(
                f"VotedPerceptron: kernel={self.kernel!r} differs from the kernel the "
                "support vectors were trained with; call fit to start again."
            )
        rows = np.arange(data.shape[0])
        order = self.random_state_.permutation(rows) if self.shuffle else rows
        targets = self._targets(labels)
        self._run_epoch(data, targets, order, self._new_call(data, cache=False), None, weights)
        return self

    def _is_first_call(self) -> bool:
        return getattr(self, "_support", None) is None

    def _kernel_in_use(self) -> str:
        return "callable" if callable(self.kernel) else self.kernel

    def _start(self, X) -> None:
        """Empty update sequence and support set for the labels in ``classes_``."""
        labels = self.classes_
        self._kernel_name = self._kernel_in_use()
        self._native = labels.shape[0] > 2 and self.multiclass == "native"
        n_columns = 1 if labels.shape[0] == 2 else labels.shape[0]
        precomputed = self.kernel == "precomputed"
        self._support = _SupportStore(sp.issparse(X), X.shape[1], precomputed)
        self._alpha = _Growable(n_columns, np.float64)
        self._bias = np.zeros(n_columns)
        # One row per update: (global position, support id, column or gold, sign or predicted)
        self._updates = _Growable(4, np.int64)
        self._n_seen = 0
        self._epoch_ends: list[int] = []
        self._update_weights = None
        self._weight_seen = 0.0
        self._weight_ends = []
        # The linear kernel trains in the primal, O(nnz(x)) per example, with the same
        # compiled epochs as Perceptron; they log the mistakes that make the sequence.
        self._primal = self.kernel == "linear"
        if self._primal:
            shape = (X.shape[1] + 1, n_columns) if self._native else (n_columns, X.shape[1] + 1)
            self._weights = np.zeros(shape)
        self._gamma = self._resolve_gamma(X)

    def _resolve_gamma(self, X) -> float:
        if not isinstance(self.gamma, str):
            return float(self.gamma)
        if self.gamma == "auto" or self.kernel in ("linear", "precomputed"):
            return 1.0 / X.shape[1]
        variance = X.multiply(X).mean() - X.mean() ** 2 if sp.issparse(X) else float(np.var(X))
        return 1.0 / (X.shape[1] * variance) if variance > 0 else 1.0

    def _targets(self, y) -> np.ndarray:
        """Kernel targets: class codes (native) or a ±1 column per binary problem."""
        codes = _validation.encode(self.classes_, y, self)
        if self._native:
            return codes
        if self.classes_.shape[0] == 2:
            return np.where(codes == 1, 1.0, -1.0)[:, np.newaxis]
        signs = -np.ones((len(codes), self.classes_.shape[0]))
        signs[np.arange(len(codes)), codes] = 1.0
        return signs

    def _gram(self, A, B) -> np.ndarray:
        """Kernel matrix between the rows of A and B (B: support vectors or indices)."""
        if self.kernel == "precomputed":
            return np.asarray(A[:, B].toarray() if sp.issparse(A) else A[:, B])
        if callable(self.kernel):
            gram = np.asarray(self.kernel(A, B), dtype=np.float64)
            if gram.shape != (A.shape[0], B.shape[0]):
                raise ValueError(
                    f"the kernel callable returned shape {gram.shape} for inputs with "
                    f"{A.shape[0]} and {B.shape[0]} rows; expected "
                    f"{(A.shape[0], B.shape[0])}."
                )
            return gram
        if self.kernel == "linear":
            return linear_kernel(A, B, dense_output=True)
        if self.kernel == "poly":
            return polynomial_kernel(A, B, degree=self.degree, gamma=self._gamma, coef0=self.coef0)
        if self.kernel == "rbf":
            return rbf_kernel(A, B, gamma=self._gamma)
        raise ValueError(f"VotedPerceptron: unknown kernel {self.kernel!r}.")

    def _new_call(self, X, *, cache: bool) -> _CallState:
        n_columns = self._bias.shape[0]
        n_rows = X.shape[0] if self.delta > 0 else 0
        # The primal kernels read a binary column's slack as one contiguous row.
        primal_binary = self._primal and not self._native
        call = _CallState(
            example_support=np.full(X.shape[0], -1, dtype=np.int64),
            slack=np.zeros((n_columns, n_rows) if primal_binary else (n_rows, n_columns)),
        )
        if cache and not self._primal and self.kernel != "precomputed" and self.cache_size > 0:
            call.cache = np.zeros((X.shape[0], 0))
            call.max_cached = int(self.cache_size * 2**20 / 8 / X.shape[0])
        return call

    def _fill_cache(self, X, call: _CallState) -> None:
        """Add the kernel columns of new support vectors, while the budget allows."""
        if call.cache is None:
            return
        assert self._support is not None
        have = call.cache.shape[1]
        room = min(self._support.size, call.max_cached) - have
        if room > 0:
            new_support = self._support.matrix(have)[:room]
            call.cache = np.hstack([call.cache, self._gram(X, new_support)])

    def _base_scores(self, X, rows: np.ndarray, call: _CallState) -> np.ndarray:
        """Scores of the block's examples under the model as it stands (no bias)."""
        assert self._support is not None
        alpha = self._alpha.view
        base = np.zeros((len(rows), alpha.shape[1]))
        cached = 0 if call.cache is None else call.cache.shape[1]
        if call.cache is not None and cached:
            base += call.cache[rows] @ alpha[:cached]
        if self._support.size > cached:
            base += self._gram(X[rows], self._support.matrix(cached)) @ alpha[cached:]
        return base

    def _run_epoch(
        self,
        X: Any,
        targets: np.ndarray,
        order: np.ndarray,
        call: _CallState,
        progress: Callable[[int], object] | None,
        weights: np.ndarray | None = None,
    ) -> None:
        assert self._support is not None
        if weights is not None and self._update_weights is None:
            self._start_weighting()
        if weights is None and self._update_weights is not None:
            weights = np.ones(X.shape[0])  # a weighted model goes on weighing
        if self._primal:
            mistakes = self._primal_epoch(X, targets, order, call, weights)
            if progress is not None:
                progress(len(order))
        else:
            mistakes = self._dual_epoch(X, targets, order, call, progress, weights)
        self._epoch_ends.append(self._n_seen)
        if self._update_weights is not None:
            self._weight_ends.append(self._weight_seen)
        if not self._is_finite():
            epoch = len(self.history_) + 1
            self._forget()
            raise ValueError(non_finite_message(type(self).__name__, epoch))
        record = {
            "epoch": len(self.history_) + 1,
            "mistakes": int(mistakes),
            "examples": len(order),
            "support_vectors": self._support.size,
        }
        self.history_.append(record)
        if self.verbose:
            print(
                f"{type(self).__name__} epoch {record['epoch']}: {mistakes} mistakes in "
                f"{len(order)} examples, {self._support.size} support vectors",
                flush=True,
            )

    def _start_weighting(self) -> None:
        """Keep the weights of the examples from now on; so far every weight was 1."""
        updates = self._updates.view
        self._update_weights = _Growable(2, np.float64)
        self._update_weights.append(
            np.column_stack([np.ones(updates.shape[0]), updates[:, 0].astype(np.float64)])
        )
        self._weight_seen = float(self._n_seen)
        self._weight_ends = [float(end) for end in self._epoch_ends]

    def _is_finite(self) -> bool:
        arrays = [self._alpha.view, self._bias]
        if self._primal:
            arrays.append(self._weights)
        return all(np.isfinite(a).all() for a in arrays)

    def _forget(self) -> None:
        """Make the estimator unfitted (its model overflowed)."""
        self._support = None
        for name in ("classes_", "n_features_in_", "feature_names_in_"):
            self.__dict__.pop(name, None)

    def _dual_epoch(
        self, X, targets, order: np.ndarray, call: _CallState, progress, weights
    ) -> int:
        """One epoch of the dual perceptron, a block of examples at a time."""
        n_columns = self._bias.shape[0]
        bias_sq = 1.0 if self.fit_intercept else 0.0
        delta_sq = float(self.delta) ** 2
        kernel = _voted.dual_block_native if self._native else _voted.dual_block_binary
        mistakes = 0
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            base = self._base_scores(X, rows, call)
            block = X[rows]
            # A copy, not the block itself: scikit-learn's distance code zeroes the
            # diagonal when both arguments are one object, which would give a point's
            # kernel with itself another rounding here than against the support set,
            # and the model would depend on the batch size.
            other = rows if self.kernel == "precomputed" else block.copy()
            block_gram = self._gram(block, other)
            if not (np.isfinite(base).all() and np.isfinite(block_gram).all()):
                # Overflowing kernel values: every score would be inf or NaN.
                epoch = len(self.history_) + 1
                self._forget()
                raise ValueError(
                    f"{type(self).__name__}: kernel values became non-finite (inf/NaN) in "
                    f"epoch {epoch}: the features are too large for the kernel; scale the "
                    "features (e.g. StandardScaler/MaxAbsScaler). The estimator is left "
                    "unfitted (no silently wrong model)."
                )
            coef = np.zeros((len(rows), n_columns))
            log = np.empty((len(rows) * (1 if self._native else n_columns), 3), dtype=np.int64)
            n_updates = kernel(
                base=base,
                block_gram=np.ascontiguousarray(block_gram),
                examples=rows,
                targets=targets[rows],
                weights=_NO_WEIGHTS if weights is None else weights[rows],
                bias=self._bias,
                bias_sq=bias_sq,
                slack=call.slack,
                delta_sq=delta_sq,
                coef=coef,
                log=log,
            )
            self._absorb(X, rows, coef, log[:n_updates], call.example_support, weights)
            self._n_seen += len(rows)
            mistakes += n_updates
            if progress is not None:
                progress(len(rows))
        return mistakes

    def _primal_epoch(self, X, targets, order: np.ndarray, call: _CallState, weights) -> int:
        """One epoch of the linear perceptron in the primal, logging its mistakes.

        The log becomes the same (position, column, sign) or (position, gold, predicted)
        rows as the dual kernels write, so the update sequence is stored the same way.
        """
        bias_feature = 1.0 if self.fit_intercept else 0.0
        common = {
            "rows": (X.data, X.indices, X.indptr) if sp.issparse(X) else X,
            "order": np.ascontiguousarray(order, dtype=np.int64),
            "aux": np.zeros((0, 0)) if self._native else np.zeros(0),
            "count": 0,
            "sample_weight": _NO_WEIGHTS if weights is None else weights,
            "rule": _perceptron_kernels.update_rule(
                bias_feature=bias_feature, delta=float(self.delta)
            ),
        }
        log = np.empty((len(order), 2), dtype=np.int64)
        coef = np.zeros((len(order), self._bias.shape[0]))
        if self._native:
            n, _ = _perceptron_kernels.multiclass_epoch(
                **common,
                y=targets,
                weights=self._weights,
                slack=call.slack if self.delta > 0 else np.zeros((0, 0)),
                mistake_log=log,
            )
            positions = log[:n, 0]
            gold, predicted = targets[order[positions]], log[:n, 1]
            steps = 1.0 if weights is None else weights[order[positions]]
            coef[positions, gold] += steps
            coef[positions, predicted] -= steps
            entries = np.column_stack([positions, gold, predicted])
            self._bias = self._weights[-1] * bias_feature
        else:
            parts = []
            for column in range(self._bias.shape[0]):
                signs = np.ascontiguousarray(targets[:, column])
                n, _ = _perceptron_kernels.binary_epoch(
                    **common,
                    y=signs,
                    weights=self._weights[column],
                    slack=call.slack[column] if self.delta > 0 else np.zeros(0),
                    mistake_log=log,
                )
                positions = log[:n, 0]
                coef[positions, column] = signs[order[positions]] * (
                    1.0 if weights is None else weights[order[positions]]
                )
                parts.append(
                    np.column_stack(
                        [positions, np.full(n, column), signs[order[positions]].astype(np.int64)]
                    )
                )
            entries = np.concatenate(parts)
            entries = entries[np.lexsort((entries[:, 1], entries[:, 0]))]
            self._bias = self._weights[:, -1] * bias_feature
        self._absorb(X, order, coef, entries, call.example_support, weights)
        self._n_seen += len(order)
        return entries.shape[0]

    def _absorb(self, X, rows, coef, log, example_support, weights=None) -> None:
        """Fold one block's updates into the support set, alphas and update sequence
        (and, weighted, each update's step and the weight seen before it)."""
        if weights is not None:
            assert self._update_weights is not None
            block = weights[rows]
            before = self._weight_seen + np.concatenate([[0.0], np.cumsum(block)[:-1]])
            self._update_weights.append(np.column_stack([block[log[:, 0]], before[log[:, 0]]]))
            self._weight_seen += float(block.sum())
        if log.shape[0] == 0:
            return
        assert self._support is not None
        positions = np.unique(log[:, 0])
        examples = rows[positions]
        new = examples[example_support[examples] < 0]
        if new.size:
            example_support[new] = self._support.size + np.arange(new.size)
            self._support.append(None if self._support.precomputed else X[new], new)
            self._alpha.append(np.zeros((new.size, coef.shape[1])))
        support = example_support[examples]
        self._alpha.view[support] += coef[positions]
        self._updates.append(
            np.column_stack(
                [
                    self._n_seen + log[:, 0],
                    example_support[rows[log[:, 0]]],
                    log[:, 1],
                    log[:, 2],
                ]
            )
        )

    def export_state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The fitted model as arrays and JSON values (see :mod:`perceptrons.io.persist`):
        support vectors, dual coefficients, intercepts and the update sequence."""
        arrays = {
            "alpha": self._alpha.view,
            "bias": self._bias,
            "updates": self._updates.view,
        }
        assert self._support is not None
        support = self._support.matrix()
        if self._support.precomputed:
            arrays["support_indices"] = support
        elif self._support.sparse:
            arrays.update(
                support_data=support.data,
                support_indices=support.indices,
                support_indptr=support.indptr,
            )
        else:
            arrays["support"] = support
        if self._primal:
            arrays["weights"] = self._weights
        values = {
            "n_seen": int(self._n_seen),
            "epoch_ends": [int(e) for e in self._epoch_ends],
            "gamma": float(self._gamma),
            "native": bool(self._native),
            "primal": bool(self._primal),
            "sparse_support": bool(self._support.sparse),
        }
        if self._update_weights is not None:  # trained with sample weights
            arrays["update_weights"] = self._update_weights.view
            values["weight_seen"] = float(self._weight_seen)
            values["weight_ends"] = [float(w) for w in self._weight_ends]
        return arrays, values

    def import_state(self, arrays: dict[str, np.ndarray], values: dict[str, Any]) -> None:
        """Rebuild the model written by :meth:`export_state`.

        The state may come from an untrusted file: every array is checked against
        ``n_features_in_``, ``classes_`` and the parameters (:meth:`state_layout`), and
        every index the compiled loops follow (support ids, classes, columns, CSR
        indices) is range-checked before the model is changed.
        """
        n_features, n_classes = self.n_features_in_, self.classes_.shape[0]
        fits = f"{n_features} features and {n_classes} classes"
        arrays = _checked.check_arrays(arrays, self.state_layout(values), fits)
        precomputed = self.kernel == "precomputed"
        native = _checked.boolean_value(values.get("native"), "native")
        if native != (n_classes > 2 and self.multiclass == "native"):
            raise ValueError(
                f"native={native} contradicts multiclass={self.multiclass!r} with "
                f"{n_classes} classes"
            )
        primal = _checked.boolean_value(values.get("primal"), "primal")
        if primal != (self.kernel == "linear"):
            raise ValueError(f"primal={primal} contradicts kernel={self.kernel!r}")
        gamma = _checked.real_value(values.get("gamma"), "gamma", 0.0)
        if gamma == 0.0:
            raise ValueError("gamma must be > 0, got 0.0")
        n_seen = _checked.integer_value(values.get("n_seen"), "n_seen")
        epoch_ends = values.get("epoch_ends")
        if not isinstance(epoch_ends, list):
            kind = type(epoch_ends).__name__
            raise ValueError(f"epoch_ends must be a list of ints, got a {kind}")
        ends = [_checked.integer_value(e, "an epoch end", 0, n_seen) for e in epoch_ends]
        if np.any(np.diff(ends) < 0):
            raise ValueError("epoch_ends must be non-decreasing")
        n_columns = arrays["bias"].shape[0]
        n_support = arrays["alpha"].shape[0]
        self._check_updates(arrays["updates"], n_seen, n_support, native, n_columns)
        store = _SupportStore(bool(values["sparse_support"]), n_features, precomputed)
        if precomputed:
            store.append(None, arrays["support_indices"])
        elif store.sparse:
            indptr = arrays["support_indptr"]
            n_stored = arrays["support_data"].shape[0]
            if (
                indptr.shape[0] != n_support + 1
                or indptr[0] != 0
                or indptr[-1] != n_stored
                or np.any(np.diff(indptr) < 0)
            ):
                raise ValueError(
                    f"support_indptr is not the row pointer of {n_support} rows holding "
                    f"{n_stored} values"
                )
            rows = sp.csr_matrix(
                (arrays["support_data"], arrays["support_indices"], indptr),
                shape=(n_support, n_features),
            )
            store.append(rows, np.arange(n_support))
        else:
            store.append(arrays["support"], np.arange(n_support))
        alpha = _Growable(n_columns, np.float64)
        alpha.append(arrays["alpha"])
        updates = _Growable(4, np.int64)
        updates.append(arrays["updates"])
        weighted = self._check_update_weights(arrays.get("update_weights"), values, len(ends))
        # Everything checked: the model changes only now.
        self._native, self._primal, self._gamma = native, primal, gamma
        self._n_seen, self._epoch_ends = n_seen, ends
        self._bias = arrays["bias"].copy()
        self._alpha, self._updates, self._support = alpha, updates, store
        self._kernel_name = self._kernel_in_use()
        if primal:
            self._weights = arrays["weights"].copy()
        self._update_weights, self._weight_seen, self._weight_ends = weighted

    @staticmethod
    def _check_update_weights(
        update_weights: np.ndarray | None, values: dict[str, Any], n_epochs: int
    ) -> tuple[_Growable | None, float, list[float]]:
        """The sample-weight bookkeeping of a weighted model (absent: unweighted)."""
        if update_weights is None:
            return None, 0.0, []
        seen = _checked.real_value(values.get("weight_seen"), "weight_seen", 0.0)
        ends = values.get("weight_ends")
        if not isinstance(ends, list) or len(ends) != n_epochs:
            raise ValueError(f"weight_ends must be a list of {n_epochs} numbers")
        totals = [_checked.real_value(w, "a weight end", 0.0, seen) for w in ends]
        before = update_weights[:, 1]
        if (
            np.any(np.diff(totals) < 0)
            or np.any(np.diff(before) < 0)
            or (before.size and before[-1] > seen)
        ):
            raise ValueError("the weights seen must be non-decreasing and at most weight_seen")
        grown = _Growable(2, np.float64)
        grown.append(update_weights)
        return grown, seen, totals

    def state_layout(self, values: dict[str, Any]) -> dict[str, _checked.Spec]:
        """The arrays :meth:`import_state` accepts: shapes from ``n_features_in_``,
        ``classes_`` and the parameters; the sizes of the support set and the update
        sequence bounded by the examples seen (``n_seen``)."""
        n_classes, n_features = self.classes_.shape[0], self.n_features_in_
        n_columns = 1 if n_classes == 2 else n_classes
        n_seen = _checked.integer_value(values.get("n_seen"), "n_seen")
        sparse = _checked.boolean_value(values.get("sparse_support"), "sparse_support")
        support = _checked.Free("support vectors", n_seen)
        n_updates = _checked.Free("updates", n_seen * n_columns)
        specs = {
            "alpha": _checked.floats(support, n_columns),
            "bias": _checked.floats(n_columns),
            "updates": _checked.Spec(_checked.INT64, (n_updates, 4)),
            # Trained with sample weights: each update's step and the weight before it.
            "update_weights": _checked.floats(n_updates, 2, low=0.0, optional=True),
        }
        if self.kernel == "precomputed":
            specs["support_indices"] = _checked.indices(support, high=n_features)
        elif sparse:
            stored = _checked.Free("stored values", n_seen * n_features)
            specs["support_data"] = _checked.floats(stored)
            specs["support_indices"] = _checked.indices(
                stored, high=n_features, dtypes=_checked.INDEX
            )
            specs["support_indptr"] = _checked.Spec(
                _checked.INDEX, (_checked.Free("row pointers", n_seen + 1),)
            )
        else:
            specs["support"] = _checked.floats(support, n_features)
        if self.kernel == "linear":
            native = n_classes > 2 and self.multiclass == "native"
            rows = (n_features + 1, n_columns) if native else (n_columns, n_features + 1)
            specs["weights"] = _checked.floats(*rows)
        return specs

    @staticmethod
    def _check_updates(
        updates: np.ndarray, n_seen: int, n_support: int, native: bool, n_columns: int
    ) -> None:
        """Every index of the update sequence in range: the prediction loops follow them
        without bounds checks."""
        if updates.shape[0] == 0:
            return
        positions, support, first, second = updates.T
        if positions.min() < 0 or positions.max() >= n_seen or np.any(np.diff(positions) < 0):
            raise ValueError(f"update positions must be non-decreasing, in [0, {n_seen})")
        if support.min() < 0 or support.max() >= n_support:
            raise ValueError(f"support ids of the updates outside [0, {n_support})")
        if native:
            if min(first.min(), second.min()) < 0 or max(first.max(), second.max()) >= n_columns:
                raise ValueError(f"classes of the updates outside [0, {n_columns})")
            if np.any(first == second):
                raise ValueError("an update whose gold and predicted classes are equal")
        else:
            if first.min() < 0 or first.max() >= n_columns:
                raise ValueError(f"columns of the updates outside [0, {n_columns})")
            if not np.all(np.abs(second) == 1):
                raise ValueError("update signs must be -1 or +1")

    # ---------------------------------------------------------------- prediction
    @property
    def support_vectors_(self) -> Any:
        check_is_fitted(self, "classes_")
        if self.kernel == "precomputed":
            raise AttributeError("with kernel='precomputed' the support vectors are support_")
        assert self._support is not None
        return self._support.matrix()

    @property
    def support_(self) -> np.ndarray:
        check_is_fitted(self, "classes_")
        if self.kernel != "precomputed":
            raise AttributeError("support_ is defined for kernel='precomputed' only")
        assert self._support is not None
        return self._support.matrix()

    @property
    def n_updates_(self) -> int:
        check_is_fitted(self, "classes_")
        return self._updates.size

    @property
    def coef_(self) -> np.ndarray:
        """The final model's weights, shape (n_columns, n_features): linear kernel only.

        One row for binary problems (positive weights push towards ``classes_[1]``), one
        per class otherwise. Other kernels have no weights in input space.
        """
        check_is_fitted(self, "classes_")
        if not self._primal:
            raise AttributeError(
                f"coef_ is only available with kernel='linear', not {self.kernel!r}"
            )
        return (self._weights[:-1].T if self._native else self._weights[:, :-1]).copy()

    @property
    def intercept_(self) -> np.ndarray:
        check_is_fitted(self, "classes_")
        return self._bias.copy()

    def _sequences(self, n_seen: int) -> list[tuple[np.ndarray, ...]]:
        """The update sequences of the model after its first ``n_seen`` examples.

        Native: one ``(support, gold, predicted, votes)``; binary and one-vs-rest: one
        ``(support, signs, votes)`` per column. Votes are the gaps between mistakes.
        """
        updates = self._updates.view
        kept = updates[:, 0] < n_seen
        updates = updates[kept]
        # Per update: its step and the weight seen before it (unweighted: 1 and position).
        if self._update_weights is None:
            steps, before = None, updates[:, 0].astype(np.float64)
            end = float(n_seen)
        else:
            steps, before = self._update_weights.view[kept].T
            ends = dict(zip(self._epoch_ends, self._weight_ends, strict=True))
            end = self._weight_seen if n_seen == self._n_seen else ends[n_seen]

        def votes_of(mask: np.ndarray | slice) -> np.ndarray:
            return np.diff(np.concatenate([[0.0], before[mask], [end]]))

        if self._native:
            columns = [np.ascontiguousarray(updates[:, k]) for k in (1, 2, 3)]
            native_steps = _NO_WEIGHTS if steps is None else np.ascontiguousarray(steps)
            return [(*columns, native_steps, votes_of(slice(None)))]
        sequences: list[tuple[np.ndarray, ...]] = []
        for column in range(self._bias.shape[0]):
            mask = updates[:, 2] == column
            mine = updates[mask]
            support = np.ascontiguousarray(mine[:, 1])
            signs = mine[:, 3].astype(np.float64)
            if steps is not None:
                signs = signs * steps[mask]
            sequences.append((support, signs, votes_of(mask)))
        return sequences

    def _staged_scores(self, X, stages: list[int]) -> list[np.ndarray]:
        """Decision values after each number of examples seen in ``stages``.

        The kernel between X and the support vectors, the expensive part, is computed
        once per block of rows and shared by every stage.
        """
        check_is_fitted(self, "classes_")
        X = _validation.validate_prediction_data(self, X, accept_sparse="csr")
        rule = _RULES[self.prediction]
        bias_sq = 1.0 if self.fit_intercept else 0.0
        n_columns = self._bias.shape[0]
        staged = [(self._sequences(n_seen), np.zeros((X.shape[0], n_columns))) for n_seen in stages]
        # Every stage draws the same numbers, so "random" picks coincide where models do.
        rng = check_random_state(self.random_state)
        draws = [rng.random_sample(X.shape[0]) for _ in range(len(staged[0][0]))]
        assert self._support is not None
        support = self._support.matrix()
        rows_per_block = max(1, _PREDICT_BLOCK_VALUES // max(1, self._support.size))
        for start in range(0, X.shape[0], rows_per_block):
            stop = min(start + rows_per_block, X.shape[0])
            gram = np.ascontiguousarray(self._gram(X[start:stop], support))
            shared = {"gram": gram, "bias_sq": bias_sq, "rule": rule}
            for sequences, out in staged:
                if self._native:
                    ids, gold, predicted, steps, votes = sequences[0]
                    _voted.sequence_scores_native(
                        **shared,
                        support=ids,
                        gold=gold,
                        predicted=predicted,
                        steps=steps,
                        votes=votes,
                        draws=draws[0][start:stop],
                        out=out[start:stop],
                    )
                    continue
                for column, (ids, signs, votes) in enumerate(sequences):
                    column_out = np.empty(stop - start)
                    _voted.sequence_scores_binary(
                        **shared,
                        support=ids,
                        signs=signs,
                        votes=votes,
                        draws=draws[column][start:stop],
                        out=column_out,
                    )
                    out[start:stop, column] = column_out
        return [out[:, 0] if n_columns == 1 else out for _, out in staged]

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Decision values under the ``prediction`` rule.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples (kernel values against the training points if precomputed).

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: positive predicts ``classes_[1]`` (``"vote"`` gives the vote margin
            in [-1, 1]). Multiclass: ``"vote"`` gives each class's share of the votes.
        """
        check_is_fitted(self, "classes_")
        return self._staged_scores(X, [self._n_seen])[0]

    def staged_decision_function(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """Decision values of the model as it stood after each epoch.

        After epoch ``t`` of a fit of ``T`` epochs, the model is exactly the one a fit of
        ``t`` epochs with the same ``random_state`` would give: the update sequence up
        to the end of epoch ``t``. The kernel between X and the support vectors is
        computed once for all epochs. ``partial_fit`` calls count as epochs.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Yields
        ------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            As :meth:`decision_function`, one array per epoch.
        """
        check_is_fitted(self, "classes_")
        yield from self._staged_scores(X, list(self._epoch_ends))

    def staged_predict(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """Predicted labels after each epoch (see :meth:`staged_decision_function`).

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples to classify.

        Yields
        ------
        labels : ndarray of shape (n_samples,)
            One array per epoch.
        """
        for scores in self.staged_decision_function(X):
            yield _validation.labels_from_scores(self.classes_, scores)
