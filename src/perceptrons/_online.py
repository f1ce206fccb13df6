"""The one training path of every online linear learner.

:class:`OnlineLinearClassifier` is the shared base of :class:`~perceptrons.Perceptron`,
:class:`~perceptrons.AveragedPerceptron` (with the margin and passive-aggressive rules)
and :class:`~perceptrons.LogisticRegressionSGD`. A family member is configuration plus
what is truly its own: its parameters, its :class:`TrainingState`, its compiled kernel
(:meth:`OnlineLinearClassifier._epoch_kernel`) and how an epoch's statistic reads.

``fit`` resets the state (unless ``warm_start``) and ``partial_fit`` does not; both then
go through the same :meth:`~OnlineLinearClassifier._partial_fit`: hyperparameters
checked on every call, input validated, labels fixed on the first call (the one
first-call flag is ``self._state is None``), then the one epoch loop (shuffling, progress,
early stopping, ``history_``), one compiled call per epoch.

The engine API
--------------
What the epoch loop here and :mod:`perceptrons.parallel` both call, so that no module
reaches into another's private members:

* :meth:`~OnlineLinearClassifier.new_training_state` -- zero weights for the classes;
* :meth:`~OnlineLinearClassifier.encode_labels` -- labels to the kernel's targets;
* :meth:`~OnlineLinearClassifier.new_slack` -- the Δ trick's per-example weights;
* :meth:`~OnlineLinearClassifier.run_epoch` -- one epoch over a state, in place;
* :meth:`~OnlineLinearClassifier.export_state` / ``import_state`` -- the state as
  arrays and JSON values (what a model file holds, see :mod:`perceptrons.io.persist`).

Sparse models
-------------
:class:`SparseCoefMixin` gives every linear model ``sparsify()`` and ``densify()``, as
scikit-learn's ``SGDClassifier`` has them: ``coef_`` becomes a ``scipy.sparse``
``csr_matrix`` (and back) and :func:`linear_scores` predicts bit for bit as before. A
sparsified online model keeps its training state only in the rows that hold a nonzero
weight (:class:`CompactState`), so that its memory follows its nonzeros and
``densify()`` gives back the exact state; training continues only after ``densify()``.
A model whose weights were pruned (``sparsify(threshold=t)`` with ``t > 0``) or that was
loaded from a file saved with ``resumable=False`` has no training state at all: it
predicts, and training it further needs a fresh ``fit``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.special import expit, log_expit, log_softmax, softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from perceptrons import _checked, _validation
from perceptrons import _params as rules
from perceptrons._kernels import finite as _finite
from perceptrons._kernels import scoring as _scoring

__all__ = [
    "CompactState",
    "IncrementalClassifier",
    "LogLinearProbabilities",
    "LogisticState",
    "OnlineLinearClassifier",
    "PerceptronState",
    "RommaState",
    "SparseCoefMixin",
    "TrainingState",
    "linear_scores",
]

# Examples per kernel call when the caller follows progress (a bar updates this often).
_PROGRESS_CHUNK = 2**15
# What scikit-learn's validate_data records about the input of a first call.
_INPUT_RECORDS = ("n_features_in_", "feature_names_in_")
# The kernels' sample_weight when every weight is 1: their unweighted arithmetic.
_UNWEIGHTED = np.empty(0)
# What a model that is refused after training started loses (see _forget).
_FITTED_ATTRIBUTES = ("coef_", "intercept_", "classes_", "n_iter_", *_INPUT_RECORDS)


@dataclass
class TrainingState:
    """Everything training needs to continue exactly where it stopped.

    ``weights`` and ``aux`` have one row per feature plus a last row for the intercept
    (see :mod:`perceptrons._kernels.perceptron`); binary models keep a single column as
    a 1-D array. ``aux`` is the averaging trick's auxiliary array, empty (shape
    ``(0,)`` or ``(0, 0)``) for a model that is not averaged. ``count`` is the number of
    examples seen over all epochs and calls: their total weight when trained with
    ``sample_weight`` or ``class_weight`` (an int whenever that total is integral, a
    float otherwise).
    """

    weights: np.ndarray
    aux: np.ndarray
    count: int | float = 0

    @classmethod
    def zeros(cls, n_features: int, n_columns: int, average: bool) -> TrainingState:
        shape = (n_features + 1,) if n_columns == 1 else (n_features + 1, n_columns)
        aux = np.zeros(shape) if average else np.zeros((0,) * len(shape))
        return cls(weights=np.zeros(shape), aux=aux)

    @property
    def averaged(self) -> bool:
        return self.aux.size != 0

    def model(self) -> np.ndarray:
        """The current model: the last weights, or the exact mean of all of them."""
        if not self.averaged or self.count == 0:
            return self.weights.copy()
        return self.weights - self.aux / self.count

    def model_entries(self, index: np.ndarray) -> np.ndarray:
        """``model().ravel()[index]``, the same arithmetic without forming the whole
        model (a state whose :meth:`model` differs overrides this too)."""
        weights = self.weights.ravel()[index]
        if not self.averaged or self.count == 0:
            return weights
        return weights - self.aux.ravel()[index] / self.count

    def touched(self, stop: int) -> np.ndarray:
        """The flat positions below ``stop`` where the model may be nonzero (a weight
        or the average's bookkeeping is), ascending."""
        weights = self.weights.ravel()[:stop]
        if not self.averaged:
            return np.flatnonzero(weights)
        return np.flatnonzero((weights != 0) | (self.aux.ravel()[:stop] != 0))

    def plain_rows(self, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """The rows ``rows`` (all when None) of the true weights ``W`` and of ``A``, the
        average's bookkeeping in its plain form: the sum of the weights after each of the
        ``count`` examples is ``count * W - A`` (None for a model that is not averaged).
        Here the state already is in that form; new arrays when ``rows`` is given,
        the state's own arrays otherwise."""
        aux = self.aux if self.averaged else None
        if rows is None:
            return self.weights, aux
        return self.weights[rows], None if aux is None else aux[rows]

    def restart_count(self) -> None:
        """Count the examples (and any decay) afresh from here: a shard's epoch in
        parameter mixing starts at count 0 from the mixed weights."""
        self.count = 0

    def load_values(self, values: dict[str, Any]) -> None:
        """Take the scalar part of another state of the same family (:meth:`values`)."""
        self.count = values["count"]

    def plain_values(self) -> dict[str, Any]:
        """:meth:`values` for arrays in the plain form of :meth:`plain_rows`."""
        return {"count": as_count(self.count)}

    def arrays(self) -> dict[str, np.ndarray]:
        return {"weights": self.weights, "aux": self.aux}

    def values(self) -> dict[str, Any]:
        return {"count": as_count(self.count)}

    @classmethod
    def restore(cls, arrays: dict[str, np.ndarray], values: dict[str, Any]) -> TrainingState:
        return cls(
            weights=np.ascontiguousarray(arrays["weights"], dtype=np.float64),
            aux=np.ascontiguousarray(arrays["aux"], dtype=np.float64),
            count=_non_negative_count(values.get("count")),
        )

    @classmethod
    def layout(cls, shape: tuple[int, ...], averaged: bool) -> dict[str, _checked.Spec]:
        """The state arrays :meth:`restore` takes, for weights of ``shape``."""
        aux = shape if averaged else (0,) * len(shape)
        return {"weights": _checked.floats(*shape), "aux": _checked.floats(*aux)}

    def is_finite(self) -> bool:
        """Whether every weight (and the average's bookkeeping) is a finite number."""
        return all_finite(self.weights) and all_finite(self.aux)


def all_finite(array: np.ndarray) -> bool:
    """Whether every element is finite; checked after every epoch (and every
    ``partial_fit`` chunk), so it must cost much less than one: a compiled pass."""
    return bool(_finite.all_finite(np.ravel(array)))


@dataclass
class PerceptronState(TrainingState):
    """The perceptrons' state, plus ``slack``: the weights of the Δ trick's per-example
    features for the examples of the last ``fit`` (one row per example; None until a
    ``fit`` with ``delta > 0``); a warm-started ``fit`` on as many examples continues it."""

    slack: np.ndarray | None = None

    def arrays(self) -> dict[str, np.ndarray]:
        arrays = super().arrays()
        if self.slack is not None:
            arrays["slack"] = self.slack
        return arrays

    @classmethod
    def layout(cls, shape: tuple[int, ...], averaged: bool) -> dict[str, _checked.Spec]:
        slack = _checked.floats(_checked.Free("slack rows"), *shape[1:], optional=True)
        return {**super().layout(shape, averaged), "slack": slack}

    @classmethod
    def restore(cls, arrays: dict[str, np.ndarray], values: dict[str, Any]) -> PerceptronState:
        state = super().restore(arrays, values)
        slack = arrays.get("slack")
        if slack is not None:
            slack = np.ascontiguousarray(slack, dtype=np.float64)
            if slack.shape[1:] != state.weights.shape[1:]:
                raise ValueError(
                    f"slack of shape {slack.shape} does not fit weights of shape "
                    f"{state.weights.shape}"
                )
        return cls(state.weights, state.aux, state.count, slack)


@dataclass
class RommaState(TrainingState):
    """ROMMA's state: the true weights are ``scale * weights`` (every row, the intercept
    included); ``scale_sum`` is the sum of the scales of the examples seen since the last
    rescale and ``sq_norm`` is ``||w||²`` (see :mod:`perceptrons._kernels.romma`).
    ``scales`` holds ``[scale, scale_sum, sq_norm]``, the array the kernels read and write."""

    scales: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))

    def model(self) -> np.ndarray:
        scale, scale_sum, _ = self.scales
        if not self.averaged or self.count == 0:
            return scale * self.weights
        return (scale_sum * self.weights - self.aux) / self.count

    def model_entries(self, index: np.ndarray) -> np.ndarray:
        return self.model().ravel()[index]

    def plain_rows(self, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """The true weights ``W = scale * v`` and, averaged, ``A = count * W - (P v - aux)``
        (the sum of the weights after each example is ``P v - aux``), as new arrays."""
        scale, scale_sum, _ = self.scales
        stored = self.weights if rows is None else self.weights[rows]
        weights = scale * stored
        if not self.averaged:
            return weights, None
        aux = self.aux if rows is None else self.aux[rows]
        return weights, self.count * weights - (scale_sum * stored - aux)

    def restart_count(self) -> None:
        super().restart_count()
        # The caller has written the true weights: scale 1, and ||w||² is theirs.
        self.scales[:] = (1.0, 0.0, float(np.vdot(self.weights, self.weights)))

    def load_values(self, values: dict[str, Any]) -> None:
        super().load_values(values)
        self.scales[:] = (values["scale"], values["scale_sum"], values["sq_norm"])

    def plain_values(self) -> dict[str, Any]:
        # The same weights unscaled: scale 1, P (the sum of the scales) is the count.
        plain = {"scale": 1.0, "scale_sum": float(self.count), "sq_norm": float(self.scales[2])}
        return {**super().plain_values(), **plain}

    def is_finite(self) -> bool:
        return super().is_finite() and all_finite(self.scales)

    def values(self) -> dict[str, Any]:
        scale, scale_sum, sq_norm = self.scales
        return {
            "scale": float(scale),
            "scale_sum": float(scale_sum),
            "sq_norm": float(sq_norm),
            **super().values(),
        }

    @classmethod
    def restore(cls, arrays: dict[str, np.ndarray], values: dict[str, Any]) -> RommaState:
        state = TrainingState.restore(arrays, values)
        scale = _checked.real_value(values.get("scale"), "scale")
        scale_sum = _checked.real_value(values.get("scale_sum"), "scale_sum")
        sq_norm = _checked.real_value(values.get("sq_norm"), "sq_norm", 0.0)
        if scale <= 0.0:
            raise ValueError(f"scale must be positive, got {scale!r}")
        return cls(state.weights, state.aux, state.count, np.array([scale, scale_sum, sq_norm]))


@dataclass
class LogisticState(TrainingState):
    """Logistic regression's state: the true feature weights are
    ``scale * weights[:-1]`` (the prior's decay, applied lazily); ``scale_sum`` is the
    sum of the scales of the examples seen since the last rescale (see
    :mod:`perceptrons._kernels.logistic`). ``scales`` holds ``[scale, scale_sum]``, the
    array the kernels read and write."""

    scales: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0]))

    @property
    def scale(self) -> float:
        return float(self.scales[0])

    @property
    def scale_sum(self) -> float:
        return float(self.scales[1])

    def model(self) -> np.ndarray:
        scale, scale_sum = self.scales
        if not self.averaged or self.count == 0:
            model = self.weights.copy()
            model[:-1] *= scale
            return model
        model = self.weights - self.aux / self.count
        model[:-1] = (scale_sum * self.weights[:-1] - self.aux[:-1]) / self.count
        return model

    def model_entries(self, index: np.ndarray) -> np.ndarray:
        return self.model().ravel()[index]

    def plain_rows(self, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """The true weights are ``scale * v`` (the intercept row is stored as it is) and
        the sum of the weights after each example is ``P * v - aux`` for the feature
        rows (``count * v - aux`` for the intercept): rewritten in the plain form of
        :meth:`TrainingState.plain_rows`. Without decay (``scale == 1``, ``P ==
        count``) the state already is in it."""
        scale, scale_sum = self.scales
        if scale == 1.0 and (not self.averaged or scale_sum == self.count):
            return super().plain_rows(rows)
        rows = np.arange(self.weights.shape[0]) if rows is None else rows
        features = rows < self.weights.shape[0] - 1
        stored = self.weights[rows]
        weights = stored.copy()
        weights[features] *= scale
        if not self.averaged:
            return weights, None
        aux = self.aux[rows]
        # count * W - (P * v - aux), the feature rows' sum in the plain form.
        aux[features] = self.count * weights[features] - (
            scale_sum * stored[features] - aux[features]
        )
        return weights, aux

    def restart_count(self) -> None:
        super().restart_count()
        # The weights are then the true ones: the caller has written them unscaled.
        self.scales[:] = (1.0, 0.0)

    def load_values(self, values: dict[str, Any]) -> None:
        super().load_values(values)
        self.scales[:] = (values["scale"], values["scale_sum"])

    def plain_values(self) -> dict[str, Any]:
        # Unscaled weights: scale 1, and P (the sum of the scales) is the count.
        return {**super().plain_values(), "scale": 1.0, "scale_sum": float(self.count)}

    def is_finite(self) -> bool:
        return super().is_finite() and bool(np.isfinite(self.scales).all())

    def values(self) -> dict[str, Any]:
        scale, scale_sum = self.scales
        return {"scale": float(scale), "scale_sum": float(scale_sum), **super().values()}

    @classmethod
    def restore(cls, arrays: dict[str, np.ndarray], values: dict[str, Any]) -> LogisticState:
        state = super().restore(arrays, values)
        scale = _checked.real_value(values.get("scale"), "scale", 0.0, 1.0)
        scale_sum = _checked.real_value(values.get("scale_sum"), "scale_sum")
        if scale == 0.0:
            raise ValueError(f"scale must be in (0, 1], got {scale!r}")
        return cls(state.weights, state.aux, state.count, np.array([scale, scale_sum]))


def _used_rows(array: np.ndarray) -> np.ndarray:
    """Which rows of ``array`` hold a nonzero element (a negative zero counts: a row
    left out comes back as +0.0, and the state must come back bit for bit)."""
    used = (array != 0) | np.signbit(array)
    return used if used.ndim == 1 else used.any(axis=1)


def _rows_of(array: np.ndarray | _checked.SparseArray) -> np.ndarray:
    """The sorted rows of a dense or sparse array that hold a nonzero element."""
    if isinstance(array, _checked.SparseArray):
        return array.nonzero_rows()
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(_used_rows(array))


def _gather(array: np.ndarray | _checked.SparseArray, rows: np.ndarray) -> np.ndarray:
    """The rows ``rows`` (sorted, a superset of the nonzero ones) of a dense or sparse
    array, as a dense array; an empty array (no average) stays as it is."""
    if isinstance(array, _checked.SparseArray):
        width = int(np.prod(array.shape[1:], dtype=np.int64))
        out = np.zeros((rows.shape[0], *array.shape[1:]))
        flat = out.reshape(rows.shape[0], width)
        # array.check() made the index sorted and in range; rows covers every one of them.
        flat[np.searchsorted(rows, array.index // width), array.index % width] = array.values
        return out
    if array.size == 0:
        return np.ascontiguousarray(array, dtype=np.float64)
    return array[rows]


def _scattered(array: np.ndarray, rows: np.ndarray, n_rows: int) -> _checked.SparseArray:
    """The rows-only ``array`` as the coordinates of the ``n_rows``-row array it is part of."""
    width = int(np.prod(array.shape[1:], dtype=np.int64))
    flat = array.reshape(array.shape[0], width)
    local_rows, columns = np.nonzero((flat != 0) | np.signbit(flat))
    index = rows[local_rows].astype(np.int64) * width + columns
    return _checked.SparseArray((n_rows, *array.shape[1:]), index, flat[local_rows, columns])


@dataclass
class CompactState:
    """A training state kept only in its rows with a nonzero weight or aux entry.

    ``rows`` are those rows, sorted, always ending with the intercept row (the last of
    the ``n_rows``), so that ``state`` -- the family's own state over those rows -- has
    its intercept last as every state does and computes its model row by row exactly as
    the whole state would. What a sparsified model keeps instead of the dense state
    (``weights`` and ``aux`` of ``(n_features + 1) x n_classes`` each): a perceptron on
    hashed text only ever touches the features of its mistakes.
    """

    rows: np.ndarray
    n_rows: int
    state: TrainingState

    @classmethod
    def of(cls, state: TrainingState) -> CompactState:
        used = _used_rows(state.weights)
        if state.averaged:
            used |= _used_rows(state.aux)
        used[-1] = True
        rows = np.flatnonzero(used)
        aux = state.aux[rows] if state.averaged else state.aux.copy()
        return cls(rows, state.weights.shape[0], _replace(state, state.weights[rows], aux))

    @classmethod
    def restore(
        cls,
        state_class: type[TrainingState],
        arrays: dict[str, Any],
        values: dict[str, Any],
    ) -> CompactState:
        """The compact state of checked arrays (dense or :class:`~perceptrons._checked.
        SparseArray`), never expanding them to the dense state."""
        weights, aux = arrays["weights"], arrays["aux"]
        n_rows = weights.shape[0]
        last = np.array([n_rows - 1], dtype=np.int64)
        rows = np.union1d(np.union1d(_rows_of(weights), _rows_of(aux)), last).astype(np.int64)
        rows_only = {**arrays, "weights": _gather(weights, rows), "aux": _gather(aux, rows)}
        return cls(rows, n_rows, state_class.restore(rows_only, values))

    def expand(self) -> TrainingState:
        """The dense state again, bit for bit the one :meth:`of` was given."""
        state = self.state
        weights = np.zeros((self.n_rows, *state.weights.shape[1:]))
        weights[self.rows] = state.weights
        aux = state.aux
        if state.averaged:
            aux = np.zeros_like(weights)
            aux[self.rows] = state.aux
        return _replace(state, weights, aux)

    def arrays(self) -> dict[str, Any]:
        """:meth:`TrainingState.arrays` with ``weights`` and ``aux`` as the coordinates of
        the whole arrays (:class:`~perceptrons._checked.SparseArray`)."""
        arrays: dict[str, Any] = dict(self.state.arrays())
        arrays["weights"] = _scattered(self.state.weights, self.rows, self.n_rows)
        if self.state.averaged:
            arrays["aux"] = _scattered(self.state.aux, self.rows, self.n_rows)
        return arrays

    def published(self) -> tuple[sp.csr_matrix, np.ndarray]:
        """``(coef_, intercept_)``: the model as a CSR matrix of shape (n_columns,
        n_features) without its zeros, and the intercepts."""
        model = self.state.model()
        if model.ndim == 1:
            model = model[:, np.newaxis]
        features = model[:-1]
        local_rows, columns = np.nonzero(features)
        coef = sp.csr_matrix(
            (features[local_rows, columns], (columns, self.rows[:-1][local_rows])),
            shape=(model.shape[1], self.n_rows - 1),
        )
        return coef, model[-1].copy()

    @property
    def nbytes(self) -> int:
        return int(self.rows.nbytes + sum(a.nbytes for a in self.state.arrays().values()))


def _replace(state: TrainingState, weights: np.ndarray, aux: np.ndarray) -> TrainingState:
    """``state`` with other ``weights`` and ``aux`` (its own other fields kept)."""
    return dataclasses.replace(state, weights=weights, aux=aux)


def linear_scores(X: Any, coef: Any, intercept: np.ndarray) -> np.ndarray:
    """``X @ coef.T + intercept``, bit for bit the same for a dense ``coef`` and for its
    ``scipy.sparse`` form.

    A dense ``X`` is multiplied by the C-contiguous ``(n_features, n_classes)`` operand
    a dense model hands to BLAS (a sparse ``coef`` is expanded for the call: as many
    numbers as ``n_classes`` rows of ``X``), so the sums run in BLAS's same order. A
    sparse ``X`` goes through scipy's sparse products, which add the same nonzero terms
    in the same column order whether the zero weights are stored or not (a stored zero
    only adds ``+-0.0``).
    """
    if not sp.issparse(coef):
        return X @ coef.T + intercept
    if sp.issparse(X):
        return _sparse_scores(sp.csr_matrix(X), coef) + intercept
    return X @ np.ascontiguousarray(coef.T.toarray()) + intercept


def _csr_fits(matrix: sp.csr_matrix, width: int) -> bool:
    """Whether a CSR matrix's index arrays address only its ``width`` columns and its
    stored elements (what a compiled loop over them relies on)."""
    indptr, indices = matrix.indptr, matrix.indices
    if indptr.shape[0] != matrix.shape[0] + 1 or indptr[0] != 0 or np.any(np.diff(indptr) < 0):
        return False
    stored = indptr[-1]
    if stored > min(indices.shape[0], matrix.data.shape[0]):
        return False
    return not stored or 0 <= indices[:stored].min() <= indices[:stored].max() < width


def _sparse_scores(X: sp.csr_matrix, coef: Any) -> np.ndarray:
    """``X @ coef.T`` as a dense array, by the compiled product of the two sparse
    matrices (scipy's builds a sparse result first: several times slower). Every index
    is checked before the kernel, which does no bounds checks."""
    coef = sp.csr_matrix(coef)
    n_classes, n_features = coef.shape
    if X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, the model {n_features}")
    # scipy's own conversions do not check indices either: check before transposing.
    for name, matrix in (("X", X), ("coef_", coef)):
        if not _csr_fits(matrix, n_features):
            raise ValueError(f"{name}: sparse index arrays that do not fit its shape")
    by_feature = sp.csr_matrix(coef.T)  # one row of (class, weight) pairs per feature
    by_feature.sum_duplicates()  # canonical: sorted classes, each once (a no-op check)
    scores = np.zeros((X.shape[0], n_classes))
    _scoring.sparse_rows_times_sparse_weights(
        X.indptr,
        X.indices,
        np.asarray(X.data, dtype=np.float64),
        by_feature.indptr,
        by_feature.indices,
        np.asarray(by_feature.data, dtype=np.float64),
        scores,
    )
    return scores


def dense_coef(coef: Any) -> np.ndarray:
    """A sparse ``coef_`` as the dense array of :meth:`OnlineLinearClassifier._publish`:
    a transposed view of a C-contiguous (n_features, n_classes) array."""
    return np.ascontiguousarray(coef.T.toarray()).T


_Model = TypeVar("_Model", bound="SparseCoefMixin")


class SparseCoefMixin:
    """``sparsify()`` and ``densify()`` for a linear model that predicts with
    :func:`linear_scores` of ``coef_`` and ``intercept_``.

    A member says what happens to its training state through two hooks:
    :meth:`_shed_state` (called by ``sparsify``) and :meth:`_restore_state` (by
    ``densify``). A model that cannot continue training exactly says why in
    ``_frozen`` (see :meth:`IncrementalClassifier._continuation_problem`).
    """

    coef_: Any
    intercept_: np.ndarray

    def sparsify(self: _Model, threshold: float = 0.0) -> _Model:
        """Store ``coef_`` as a ``scipy.sparse.csr_matrix`` of its nonzero weights.

        Predictions are unchanged bit for bit (with ``threshold=0``); the memory the
        model holds follows its nonzero weights. Training continues only after
        :meth:`densify` (``fit`` without ``warm_start`` starts afresh at any time).

        Parameters
        ----------
        threshold : float, default=0.0
            Also drop the weights with ``|w| <= threshold`` (the intercepts are kept).
            0 drops only the zeros: the model is exactly the same. A model that loses a
            nonzero weight so keeps no training state: :meth:`densify` then gives the
            pruned weights back as an array, and continuing to train needs a new ``fit``.

        Returns
        -------
        self : object
            The estimator, with a sparse ``coef_``.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from perceptrons import AveragedPerceptron
        >>> X, y = load_iris(return_X_y=True)
        >>> model = AveragedPerceptron(random_state=0).fit(X, y)
        >>> before = model.predict(X)
        >>> type(model.sparsify().coef_).__name__
        'csr_matrix'
        >>> bool((model.predict(X) == before).all())
        True
        >>> type(model.densify().coef_).__name__
        'ndarray'
        """
        check_is_fitted(self, "coef_")
        limit = _checked.real_value(threshold, "threshold", 0.0)
        matrix = sp.csr_matrix(self.coef_, dtype=np.float64, copy=True)
        matrix.eliminate_zeros()
        pruned = False
        if limit > 0:
            small = np.abs(matrix.data) <= limit
            if small.any():
                matrix.data[small] = 0.0
                matrix.eliminate_zeros()
                pruned = True
        self._shed_state(exact=not pruned)
        if pruned:
            self._frozen = f"its weights were pruned by sparsify(threshold={limit:g})"
            self._pruned_at = limit
        self.coef_ = matrix
        return self

    def densify(self: _Model) -> _Model:
        """Store ``coef_`` as a dense array again (the inverse of :meth:`sparsify`).

        A model sparsified exactly gets its training state back, bit for bit, and
        continues training as if it had never been sparsified.

        Returns
        -------
        self : object
            The estimator, with a dense ``coef_``.
        """
        check_is_fitted(self, "coef_")
        if sp.issparse(self.coef_) and not self._restore_state():
            self.coef_ = dense_coef(self.coef_)
        return self

    def _model_array(self) -> np.ndarray | _checked.SparseArray:
        """``coef_`` and ``intercept_`` as the rows of a state's ``weights`` (one per
        feature, the intercept last; one column per class, none for binary models)."""
        n_columns, n_features = self.coef_.shape
        shape = (n_features + 1,) if n_columns == 1 else (n_features + 1, n_columns)
        if not sp.issparse(self.coef_):
            model = np.empty((n_features + 1, n_columns))
            model[:-1] = self.coef_.T
            model[-1] = self.intercept_
            return model.reshape(shape)
        coo = sp.coo_matrix(self.coef_)
        bias = np.flatnonzero((self.intercept_ != 0) | np.signbit(self.intercept_))
        index = np.concatenate(
            [
                coo.col.astype(np.int64) * n_columns + coo.row,
                n_features * n_columns + bias.astype(np.int64),
            ]
        )
        values = np.concatenate([coo.data, self.intercept_[bias]])
        order = np.argsort(index, kind="stable")
        return _checked.SparseArray(shape, index[order], values[order].astype(np.float64))

    def _published_from(self, model: _checked.SparseArray) -> tuple[sp.csr_matrix, np.ndarray]:
        """``(coef_, intercept_)`` of a model array given by its nonzeros (the inverse
        of :meth:`_model_array` for a sparse ``coef_``), never expanded: ``coef_`` a
        CSR matrix of shape (n_columns, n_features)."""
        n_columns = model.shape[1] if len(model.shape) == 2 else 1
        n_features = model.shape[0] - 1
        rows, columns = np.divmod(model.index, n_columns)
        is_feature = rows < n_features
        coef = sp.csr_matrix(
            (model.values[is_feature], (columns[is_feature], rows[is_feature])),
            shape=(n_columns, n_features),
        )
        coef.eliminate_zeros()
        intercept = np.zeros(n_columns)
        intercept[columns[~is_feature]] = model.values[~is_feature]
        return coef, intercept

    def _shed_state(self, exact: bool) -> None:
        """Give up the dense training state as ``coef_`` becomes sparse: keep what
        :meth:`_restore_state` needs when ``exact``, nothing otherwise."""

    def _restore_state(self) -> bool:
        """Rebuild the dense training state and publish ``coef_`` from it, if kept;
        whether it was."""
        return False


def _check_epoch_inputs(
    state: TrainingState,
    X: Any,
    targets: np.ndarray,
    order: np.ndarray,
    slack: np.ndarray,
    sample_weight: np.ndarray,
) -> None:
    """Every size and index the kernels use, checked before they run: Numba does no
    bounds checks, and :meth:`OnlineLinearClassifier.run_epoch` is public."""
    n_samples, n_features = X.shape
    weights = state.weights
    problems = []
    if weights.shape[0] != n_features + 1:
        problems.append(f"weights have {weights.shape[0]} rows for {n_features} features + 1")
    if state.aux.size and state.aux.shape != weights.shape:
        problems.append(f"aux of shape {state.aux.shape} for weights of {weights.shape}")
    if targets.shape != (n_samples,):
        problems.append(f"{targets.shape[0]} targets for {n_samples} rows")
    elif (
        weights.ndim == 2
        and targets.size
        and not 0 <= targets.min() <= targets.max() < weights.shape[1]
    ):
        problems.append(f"class codes outside [0, {weights.shape[1]})")
    if order.size and not 0 <= order.min() <= order.max() < n_samples:
        problems.append(f"row indices in order outside [0, {n_samples})")
    if slack.shape[0] not in (0, n_samples) or slack.shape[1:] != weights.shape[1:]:
        problems.append(f"slack of shape {slack.shape} for {n_samples} rows")
    if sample_weight.shape[0] not in (0, n_samples) or sample_weight.ndim != 1:
        problems.append(f"sample_weight of shape {sample_weight.shape} for {n_samples} rows")
    elif sample_weight.size and not (np.isfinite(sample_weight).all() and sample_weight.min() >= 0):
        problems.append("sample_weight must be finite and non-negative")
    if problems:
        raise ValueError("run_epoch: " + "; ".join(problems) + ".")


def as_count(count: Any) -> int | float:
    """An example count as the state keeps it: an int when integral (every unweighted
    count, and old model files), else the float total of the examples' weights."""
    value = float(count)
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _non_negative_count(value: Any) -> int | float:
    """``count`` read back: an int >= 0, or a finite float >= 0 (weighted training)."""
    if rules.integer(0).accepts(value):
        return int(value)
    if rules.real(0.0).accepts(value):
        return as_count(value)
    raise ValueError(f"count must be a finite number >= 0, got {value!r}")


def non_finite_message(name: str, epoch: int) -> str:
    """Why training stopped on weights that overflowed, and what to do about it."""
    return (
        f"{name}: weights became non-finite (inf/NaN) in epoch {epoch}: the features are "
        "too large for the step; scale the features (e.g. StandardScaler/MaxAbsScaler) or "
        "lower learning_rate/C. The estimator is left unfitted (no silently wrong model)."
    )


class LogLinearProbabilities:
    """Probabilities of a model whose scores are log-odds (binary) or logits: logistic
    regression, and naive Bayes (whose scores are joint log-likelihoods, logits up to
    a per-sample constant). Computed without overflow or ``log(0)``."""

    if TYPE_CHECKING:  # the estimator's own; declared for the type checker only

        def decision_function(self, X: ArrayLike) -> np.ndarray: ...

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Class probabilities: ``σ`` of the log-odds (binary) or the softmax of the
        logits, ``P(c | x)``.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples whose classes' probabilities are wanted.

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
        """Logarithms of :meth:`predict_proba`, ``log P(c | x)``.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples whose classes' log-probabilities are wanted.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Column ``k`` is the log-probability of ``classes_[k]``.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return np.column_stack([log_expit(-scores), log_expit(scores)])
        return log_softmax(scores, axis=1)


class IncrementalClassifier(ClassifierMixin, BaseEstimator):
    """What every classifier of the package shares: parameters checked on every call,
    the one first-call flag, the label bookkeeping of ``partial_fit``, sparse input and
    prediction from ``decision_function``."""

    _rules: ClassVar[dict[str, rules.Rule]] = {}

    # Fitted attributes (set by training, scikit-learn style; absent before).
    classes_: np.ndarray
    n_features_in_: int
    history_: list[dict[str, Any]]
    random_state_: np.random.RandomState

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def check_params(self) -> None:
        """Each parameter's own rule (``__init__`` only stores; ``set_params`` may
        change them between calls); members add the rules between parameters."""
        rules.validate(self, self._rules)

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
    ) -> tuple[Any, np.ndarray, bool, np.ndarray | None]:
        """Check the parameters and the batch; fix the labels on the first call.

        ``reset`` (``fit``) makes this a first call whatever came before. Nothing of
        the trained model is touched until every check has passed: a refused call
        leaves the model as it was. Returns the validated ``(X, y)``, whether this
        is a first call (the caller then starts a fresh state), and each example's
        weight ``sample_weight[i] * class_weight[y_i]`` (None when both are None: the
        unweighted path).
        """
        self.check_params()
        if not reset:
            problem = self._continuation_problem()
            if problem is not None:
                raise ValueError(f"{type(self).__name__}: {problem}.")
        first_call = reset or self._is_first_call()
        # scikit-learn's validation records the input's width and feature names as it
        # checks a first call's data: put them back if a later check refuses the call.
        recorded = {k: v for k, v in vars(self).items() if k in _INPUT_RECORDS}
        try:
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
            for name in _INPUT_RECORDS:
                self.__dict__.pop(name, None)
            self.__dict__.update(recorded)
            raise
        if first_call:
            self.classes_ = known
            self._thaw()
        return data, labels, first_call, weights

    def _continuation_problem(self) -> str | None:
        """Why training cannot continue from the fitted model (``partial_fit``, a
        warm-started ``fit``), or None: a sparse ``coef_`` must be densified first, and
        a model without its training state (pruned, or saved with ``resumable=False``)
        can only be trained afresh."""
        if self._sparsified():
            return (
                "coef_ is sparse (sparsify() was called); call densify() before "
                "partial_fit or a warm-started fit"
            )
        frozen = self.__dict__.get("_frozen")
        if frozen is not None:
            return f"{frozen}, so it cannot continue training; call fit to train afresh"
        return None

    def _sparsified(self) -> bool:
        """Whether ``sparsify()`` made ``coef_`` sparse (its training state compact):
        a member whose ``coef_`` is sparse by design says no."""
        return sp.issparse(self.__dict__.get("coef_"))

    def _thaw(self) -> None:
        """Forget what kept the last model from training on: a new one starts."""
        for name in ("_frozen", "_compact", "_seen", "_pruned_at"):
            self.__dict__.pop(name, None)

    def _prepare(self, X: Any) -> Any:
        """A member's own checks or transformation of validated input (training and
        prediction alike); none by default."""
        return X

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


class OnlineLinearClassifier(SparseCoefMixin, IncrementalClassifier):
    """The shared base: subclasses set the class attributes and the kernel hooks.

    Parameters shared by every member are ``max_epochs``, ``shuffle``,
    ``fit_intercept``, ``random_state`` and ``verbose``. A member without early stopping,
    warm start or the Δ trick inherits the class attributes below, which keep them off.
    """

    _rules: ClassVar[dict[str, rules.Rule]] = {
        **IncrementalClassifier._rules,
        "max_epochs": rules.integer(1),
        "shuffle": rules.boolean(),
        "fit_intercept": rules.boolean(),
        "random_state": rules.random_state(),
        "verbose": rules.integer(0),
    }
    #: The family's training state.
    _state_class: ClassVar[type[TrainingState]] = TrainingState
    #: Whether :mod:`perceptrons.parallel` can mix this family's epochs.
    mixable: ClassVar[bool] = False
    #: Whether the kernels can log the examples they updated on (``mistake_log``);
    #: otherwise (logistic regression) every example updates the weights.
    logs_updates: ClassVar[bool] = False

    # Off unless a member declares them as parameters.
    warm_start: bool = False
    early_stopping: bool = False
    validation_fraction: float | None = None
    n_iter_no_change: int = 5
    delta: float = 0.0

    max_epochs: int
    shuffle: bool
    fit_intercept: bool
    random_state: int | np.random.RandomState | None
    verbose: int

    # The training state: absent (or None) until the first batch has passed its checks.
    _state: TrainingState | None
    n_iter_: int
    coef_: Any  # ndarray, or scipy.sparse.csr_matrix after sparsify()
    intercept_: np.ndarray

    # ------------------------------------------------------------- the members' hooks
    @property
    def _averaged(self) -> bool:
        """Whether the model predicts with the mean of its weights."""
        raise NotImplementedError

    def _targets(self, codes: np.ndarray) -> np.ndarray:
        """Class codes to the kernel's targets (binary: one float per example)."""
        raise NotImplementedError

    def _epoch_kernel(
        self, state: TrainingState, multiclass: bool, slack: np.ndarray
    ) -> tuple[Callable[..., tuple[Any, int]], dict[str, Any]]:
        """``(kernel, arguments)``: the compiled epoch and its family's own arguments."""
        raise NotImplementedError

    def _epoch_record(self, statistic: float, n_examples: int) -> dict[str, Any]:
        """An epoch's ``history_`` record from the kernels' summed statistic."""
        raise NotImplementedError

    def _describe(self, record: dict[str, Any]) -> str:
        """The verbose line of an epoch."""
        raise NotImplementedError

    # ----------------------------------------------------------------- engine API
    def new_training_state(self, n_features: int) -> TrainingState:
        """Zero weights for ``n_features`` features and the classes in ``classes_``."""
        n_columns = 1 if self.classes_.shape[0] == 2 else self.classes_.shape[0]
        return self._state_class.zeros(n_features, n_columns, self._averaged)

    def encode_labels(self, y: np.ndarray) -> np.ndarray:
        """Labels (of ``classes_``) to the kernel's targets; an unknown label is an error."""
        return self._targets(_validation.encode(self.classes_, y, self))

    def new_slack(self, state: TrainingState, n_samples: int) -> np.ndarray:
        """Zero weights for the Δ features of ``n_samples`` examples (empty if Δ = 0)."""
        return np.zeros((n_samples if self.delta > 0 else 0, *state.weights.shape[1:]))

    def training_data(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> tuple[Any, Any, np.ndarray, np.ndarray | None]:
        """What parameter mixing deals out to shards: ``(X, targets, classes, weights)``,
        validated like a first ``fit`` call (which records ``n_features_in_``, feature
        names and ``classes_``), ``targets`` the kernels' (:meth:`encode_labels`) and
        ``weights`` each example's ``sample_weight[i] * class_weight[y_i]`` (None when
        every weight is 1). ``X`` and ``targets`` are indexed by example: ``X[rows]``."""
        data, labels = _validation.validate_training_data(self, X, y, reset=True)
        classes = _validation.label_set(labels, None, self, incremental=False)
        weights = _validation.example_weights(
            self, sample_weight, classes, labels, incremental=False
        )
        self.classes_ = classes
        return data, self.encode_labels(labels), classes, weights

    def example_rows(self, X: Any) -> tuple[Any, int]:
        """Which weight rows the examples of ``X`` read (and so an update on them may
        change): the input in the form :func:`perceptrons._kernels.mixing.rows_of_examples`
        takes (dense, or the CSR triple whose indices are the rows), and how many of the
        last rows every example reads (here the intercept's)."""
        return ((X.data, X.indices, X.indptr) if sp.issparse(X) else X), 1

    def run_epoch(
        self,
        state: TrainingState,
        X: Any,
        targets: np.ndarray,
        order: np.ndarray,
        *,
        slack: np.ndarray | None = None,
        progress: Callable[[int], object] | None = None,
        sample_weight: np.ndarray | None = None,
        structure_checked: bool = False,
        mistake_log: np.ndarray | None = None,
        raw: bool = False,
    ) -> dict[str, Any]:
        """One epoch of the compiled kernel over ``X[order]``, updating ``state`` in place.

        One kernel call, or one per chunk of ``order`` when ``progress`` is given (the
        kernels resume exactly: their whole state is in the arrays and ``count``).
        ``sample_weight`` (one finite weight >= 0 per row of ``X``, or None for all 1)
        scales each example's step and its share of the average.
        Every size and index is checked before the kernel runs; a sparse ``X``'s index
        arrays too (O(nnz)), unless ``structure_checked`` says the caller has already
        checked this very matrix (the training loops, which check it once per call).
        ``mistake_log`` (families with ``logs_updates``, without ``progress``): int64 of
        shape ``(len(order), 2)``; the ``m``-th update of the epoch writes its position
        in ``order`` to ``mistake_log[m, 0]`` (see :mod:`perceptrons._kernels.perceptron`).
        Returns the epoch's record (``examples`` and the family's statistic); with
        ``raw``, ``{"statistic": ..., "examples": ...}``, the kernels' summed statistic
        (mistakes, or the summed log-loss), which :meth:`epoch_record` turns into a record
        for any number of epochs' pieces added up.
        """
        if slack is None:
            slack = self.new_slack(state, 0)
        order = np.ascontiguousarray(order, dtype=np.int64)
        weights = (
            _UNWEIGHTED
            if sample_weight is None
            else np.ascontiguousarray(sample_weight, dtype=np.float64)
        )
        _check_epoch_inputs(state, X, targets, order, slack, weights)
        if not structure_checked:
            _validation.check_sparse_structure(X)
        rows = (X.data, X.indices, X.indptr) if sp.issparse(X) else X
        kernel, arguments = self._epoch_kernel(state, state.weights.ndim == 2, slack)
        if mistake_log is not None:
            self.check_mistake_log(mistake_log, len(order), progress)
            arguments["mistake_log"] = mistake_log
        chunk = len(order) if progress is None else _PROGRESS_CHUNK
        statistic = 0.0
        for start in range(0, len(order), max(chunk, 1)):
            part = order[start : start + chunk]
            value, state.count = kernel(
                rows=rows,
                y=targets,
                order=part,
                weights=state.weights,
                aux=state.aux,
                # Always a float: the weighted kernels add weights to it, and one
                # compiled signature serves both (an int would make Numba unify the
                # types, a third more compile time). Exact while count < 2**53.
                count=float(state.count),
                sample_weight=weights,
                **arguments,
            )
            state.count = as_count(state.count)
            statistic += value
            if progress is not None:
                progress(len(part))
        if raw:
            return {"statistic": statistic, "examples": len(order)}
        return self._epoch_record(statistic, len(order))

    def check_mistake_log(
        self, mistake_log: np.ndarray, n_examples: int, progress: Callable | None
    ) -> None:
        """Raise a ValueError unless ``run_epoch`` can log updates into ``mistake_log``
        for an epoch of ``n_examples`` examples (see :meth:`run_epoch`)."""
        if not self.logs_updates or progress is not None:
            raise ValueError(
                f"run_epoch: {type(self).__name__} logs no updates"
                if not self.logs_updates
                else "run_epoch: mistake_log and progress cannot be combined"
            )
        if (
            mistake_log.dtype != np.int64
            or mistake_log.shape != (n_examples, 2)
            or not mistake_log.flags.c_contiguous
        ):
            raise ValueError(
                f"run_epoch: mistake_log must be a C-contiguous int64 array of shape "
                f"({n_examples}, 2), got {mistake_log.dtype} {mistake_log.shape}."
            )

    def epoch_record(self, statistic: float, n_examples: int) -> dict[str, Any]:
        """The ``history_`` record of ``n_examples`` examples whose kernels' statistics
        (``run_epoch(..., raw=True)``) add up to ``statistic``."""
        return self._epoch_record(statistic, n_examples)

    def export_state(self, resumable: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
        """The training state as arrays and JSON values (see :mod:`perceptrons.io.persist`).

        Enough to predict and to continue training exactly (``partial_fit``,
        ``warm_start``); ``coef_`` and ``intercept_`` are derived from it. A sparsified
        model gives ``weights`` and ``aux`` as :class:`~perceptrons._checked.SparseArray`
        (and ``"sparsified": true``).

        Parameters
        ----------
        resumable : bool, default=True
            False, or a model without its training state (pruned, or loaded from a
            non-resumable file), gives only the model: ``weights`` holds the
            predicting weights (the average, for an averaged model) and ``aux`` is
            empty, with ``"resumable": false``. Such a state predicts exactly and
            cannot continue training.
        """
        check_is_fitted(self, "coef_")
        state = self._state
        compact: CompactState | None = self.__dict__.get("_compact")
        sparsified = self._sparsified()
        if resumable and state is not None:
            return state.arrays(), {**state.values(), "n_iter": int(self.n_iter_)}
        if resumable and compact is not None:
            values = {**compact.state.values(), "n_iter": int(self.n_iter_), "sparsified": True}
            return compact.arrays(), values
        seen = state.count if state is not None else compact.state.count if compact else None
        neutral = self._state_class(weights=np.zeros(0), aux=np.zeros(0))
        values = {
            **neutral.values(),
            "count": as_count(self.__dict__.get("_seen", 0) if seen is None else seen),
            "n_iter": int(self.n_iter_),
            "resumable": False,
        }
        model = self._model_array()
        if sparsified:
            values["sparsified"] = True
        if "_pruned_at" in self.__dict__:
            values["threshold"] = self._pruned_at
        return {"weights": model, "aux": np.zeros((0,) * len(model.shape))}, values

    def import_state(self, arrays: dict[str, Any], values: dict[str, Any]) -> None:
        """Rebuild the training state written by :meth:`export_state`, checking every
        array against ``n_features_in_`` and ``classes_`` (see :meth:`state_layout`)
        and every value before a kernel can see them: the state may come from an
        untrusted file.

        Arrays may be given as :class:`~perceptrons._checked.SparseArray`. With
        ``"sparsified": true`` the model is rebuilt sparsified (``coef_`` sparse, the
        state compact, never expanded); with ``"resumable": false`` it predicts but
        keeps no training state.
        """
        fits = f"{self.n_features_in_} features and {self.classes_.shape[0]} classes"
        arrays = _checked.check_arrays(arrays, self.state_layout(values), fits)
        resumable = _checked.boolean_value(values.get("resumable", True), "resumable")
        sparsified = _checked.boolean_value(values.get("sparsified", False), "sparsified")
        compact = None
        if sparsified:
            compact = CompactState.restore(self._state_class, arrays, values)
            state = compact.state
        else:
            dense = {
                name: array.to_dense() if isinstance(array, _checked.SparseArray) else array
                for name, array in arrays.items()
            }
            state = self._state_class.restore(dense, values)
        if not 0 <= state.count <= _checked.MAX_COUNT:
            raise ValueError(f"count must be at most 2**53, got {state.count!r}")
        if state.count == 0 and state.aux.any():
            raise ValueError("count is 0 but the average's aux is not: inconsistent state")
        n_iter = _checked.integer_value(values.get("n_iter"), "n_iter")
        self._thaw()
        self.n_iter_ = n_iter
        if compact is None:
            self._state = state
            self._publish()
        else:
            self._state = None
            self._compact = compact
            self.coef_, self.intercept_ = compact.published()
        if not resumable:
            self._state = None
            self.__dict__.pop("_compact", None)
            self._seen = state.count
            self._frozen = "it was saved with resumable=False"
            if "threshold" in values:
                limit = _checked.real_value(values["threshold"], "threshold", 0.0)
                self._frozen = f"its weights were pruned by sparsify(threshold={limit:g})"
                self._pruned_at = limit

    def state_layout(self, values: dict[str, Any]) -> dict[str, _checked.Spec]:
        """What :meth:`import_state` accepts as arrays, for ``n_features_in_`` and
        ``classes_``: exact float64 shapes, finite values (an empty ``aux`` for a
        state saved with ``"resumable": false``)."""
        n_columns = 1 if self.classes_.shape[0] == 2 else self.classes_.shape[0]
        rows = self.n_features_in_ + 1
        shape = (rows,) if n_columns == 1 else (rows, n_columns)
        averaged = self._averaged and values.get("resumable", True) is not False
        return self._state_class.layout(shape, averaged)

    @property
    def resumable(self) -> bool:
        """Whether the model holds the training state to continue exactly (after
        :meth:`densify`, for a sparsified one)."""
        check_is_fitted(self, "coef_")
        return self._state is not None or "_compact" in self.__dict__

    def _shed_state(self, exact: bool) -> None:
        state, compact = self._state, self.__dict__.pop("_compact", None)
        if exact and state is not None:
            compact = CompactState.of(state)
        if compact is not None:
            self._seen = compact.state.count
        elif state is not None:
            self._seen = state.count
        if exact and compact is not None:
            self._compact = compact
        self._state = None

    def _restore_state(self) -> bool:
        compact = self.__dict__.pop("_compact", None)
        if compact is None:
            return False
        self._state = compact.expand()
        self._publish()
        return True

    # ------------------------------------------------------------------ training
    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> OnlineLinearClassifier:
        """Train for up to ``max_epochs`` passes over ``(X, y)``.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Training data. Sparse input is never densified.
        y : array-like of shape (n_samples,)
            Labels of any type; at least two distinct values.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each example (finite, >= 0), multiplied by ``class_weight`` of its
            class: its update step is that many times as large and it counts that many
            times in an average. A weight of 0 trains exactly as without the example;
            None gives every example weight 1.

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        ValueError
            On invalid input (the model is then untouched) and when the weights
            overflow to inf or NaN during training (the estimator is then left
            unfitted: there is no trustworthy model to keep).
        """
        for _ in self._fit(
            X, y, progress=None, publish_each_epoch=False, sample_weight=sample_weight
        ):
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
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each example, as for :meth:`fit`.

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
        yield from self._fit(
            X, y, progress=progress, publish_each_epoch=True, sample_weight=sample_weight
        )

    def partial_fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        classes: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> OnlineLinearClassifier:
        """Run one epoch over ``(X, y)``, continuing from the current state.

        An averaged model stays the exact mean over every example seen by every ``fit``
        and ``partial_fit`` call.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            A batch of training data.
        y : array-like of shape (n_samples,)
            Its labels.
        classes : array-like of shape (n_classes,), default=None
            Every label the model will ever see. Required on the first call unless
            that first batch already holds every label; ignored afterwards.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each example of the batch, as for :meth:`fit`.

        Returns
        -------
        self : object
            The updated estimator.
        """
        for _ in self._partial_fit(
            X, y, classes, epochs=1, incremental=True, sample_weight=sample_weight
        ):
            pass
        return self

    def _fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        *,
        progress: Callable[[int], object] | None,
        publish_each_epoch: bool,
        sample_weight: ArrayLike | None = None,
        validation: tuple[Any, ...] | None = None,
    ) -> Iterator[dict[str, Any]]:
        yield from self._partial_fit(
            X,
            y,
            None,
            epochs=self.max_epochs,
            incremental=False,
            reset=not self.warm_start,
            progress=progress,
            publish_each_epoch=publish_each_epoch,
            sample_weight=sample_weight,
            validation=validation,
        )

    def _partial_fit(
        self,
        X,
        y,
        classes: ArrayLike | None,
        *,
        epochs: int,
        incremental: bool,
        reset: bool = False,
        progress: Callable[[int], object] | None = None,
        publish_each_epoch: bool = True,
        sample_weight: ArrayLike | None = None,
        validation: tuple[Any, ...] | None = None,
    ) -> Iterator[dict[str, Any]]:
        """The one training path: ``epochs`` epochs over ``(X, y)`` from the current state.

        ``incremental`` (``partial_fit``): one call is one batch of new examples, so the
        Δ features start from zero and early stopping does not apply. ``reset``
        (``fit`` without ``warm_start``): start from zero weights. The trained model
        changes only once every check has passed. Each example weighs
        ``sample_weight[i] * class_weight[y_i]`` (validated once, here).

        After every epoch the state must still be finite: weights that overflowed to
        inf or NaN (features too large for the step) stop training with a ValueError
        and leave the estimator unfitted, rather than a model that predicts garbage (or
        one restored from a copy, which every ``partial_fit`` would have to pay for).

        ``validation``: held-out ``(X, y)`` given by the caller (a development set), scored
        after every epoch (``validation_score`` in ``history_``) and, with
        ``early_stopping``, used instead of splitting off ``validation_fraction`` of the
        training data.
        """
        X, y, first_call, weights = self._begin_call(
            X, y, classes, incremental=incremental, reset=reset, sample_weight=sample_weight
        )
        if not first_call and self._state is not None and self._state.averaged != self._averaged:
            raise ValueError(
                f"{type(self).__name__}: average={self._averaged!r} differs from the "
                "state being continued; call fit to start again."
            )
        targets = self.encode_labels(y)
        if first_call:
            self._state = self.new_training_state(X.shape[1])
            self.history_ = []
        if first_call or not incremental:
            # Every fit draws its shuffles afresh from random_state, warm started or
            # not; partial_fit goes on drawing from its first call's generator.
            self.random_state_ = check_random_state(self.random_state)
        assert self._state is not None  # set by this first call or an earlier one
        rng = self.random_state_

        train_rows = np.arange(X.shape[0])
        if (
            not incremental
            and validation is None
            and self.early_stopping
            and (self.validation_fraction is not None)
        ):
            train_rows, held_out = train_test_split(
                train_rows,
                test_size=self.validation_fraction,
                stratify=targets,
                random_state=rng.randint(np.iinfo(np.int32).max),
            )
            train_rows = np.sort(train_rows)
            validation = (X[held_out], y[held_out])
            if weights is not None:
                validation += (weights[held_out],)
        slack = self.new_slack(self._state, X.shape[0])
        if not incremental and self.delta > 0:
            # fit's examples keep their Δ features over its epochs and, with warm_start,
            # over later fits on as many examples.
            assert isinstance(self._state, PerceptronState)  # only perceptrons have delta
            if self._state.slack is None or self._state.slack.shape[0] != X.shape[0]:
                self._state.slack = slack
            slack = self._state.slack

        best_score, epochs_without_gain = -np.inf, 0
        self.n_iter_ = 0
        for _ in range(epochs):
            order = rng.permutation(train_rows) if self.shuffle else train_rows
            record = self.run_epoch(
                self._state,
                X,
                targets,
                order,
                slack=slack,
                progress=progress,
                sample_weight=weights,
                structure_checked=True,  # by _begin_call's validation, once per call
            )
            if not self._state.is_finite():
                epoch = len(self.history_) + 1
                self._forget()
                raise ValueError(non_finite_message(type(self).__name__, epoch))
            self.n_iter_ += 1
            if validation is not None or publish_each_epoch:
                self._publish()
            if validation is not None:
                record["validation_score"] = float(self.score(*validation))
            self._log(record)
            stop = False
            if incremental or not self.early_stopping:
                pass
            elif validation is None:
                stop = record.get("mistakes") == 0
            elif record["validation_score"] > best_score:
                best_score, epochs_without_gain = record["validation_score"], 0
            else:
                epochs_without_gain += 1
                stop = epochs_without_gain >= self.n_iter_no_change
            if not publish_each_epoch and (stop or self.n_iter_ == epochs):
                self._publish()
            yield self.history_[-1]
            if stop:
                break

    def _forget(self) -> None:
        """Make the estimator unfitted (its training state overflowed)."""
        self._state = None
        for name in _FITTED_ATTRIBUTES:
            self.__dict__.pop(name, None)

    def _publish(self) -> None:
        """Expose the current model as scikit-learn's ``coef_`` and ``intercept_``."""
        assert self._state is not None  # called once training has a state
        model = self._state.model()
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
                f"{type(self).__name__} epoch {record['epoch']}: {self._describe(record)}",
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
        scores = linear_scores(X, self.coef_, self.intercept_)
        return scores.ravel() if scores.shape[1] == 1 else scores
