"""The engine of the online linear learners (:class:`~perceptrons._engine.Engine`).

:class:`LinearEngine` is what :class:`~perceptrons.linear._online.OnlineLinearClassifier`
(and the tagger) hands out through ``_engine()``. The estimator keeps its parameters
and its fitted model; what the engine needs of its configuration comes in one
:class:`LinearConfig`, resolved once per engine (its family's kernels, targets and
records included); the engine holds the training machinery over them -- fresh states,
one compiled epoch with every size and index checked first, the state as a model file
stores it. The serial fit, parameter mixing and streaming all train through it.

Training in the rows the data reaches (:meth:`LinearEngine.training_view`): a hashed
text model's dense state is ``2**20`` rows per array, of which the examples reach a
few percent. When a call's epochs write and read only their examples' rows and the
intercept's (``example_rows_only``: not ROMMA's, ALMA's or ada-rda's rescaling of every
weight, a full covariance, ada-fobos with ``l1``, nor logistic regression's prior once
a rescale may come), on sparse CSR input and for a state whose statistics by row start
at zero (not the confidence-weighted rules' variances), the state is a
:class:`~perceptrons._states.CompactState` grown to the features each call brings,
and the kernels read the input renumbered to its rows: the same arithmetic, term for
term, as on the dense state. A first call takes it when the dense state would be
:data:`TOUCHED_FROM_BYTES` or more and the call's features at most a quarter of its
rows; it stays while its rows are at most half of the dense state's (else, and for a
call it cannot train, it becomes the dense state). Its model is published as after
``sparsify()`` (``coef_`` a CSR matrix) and trains on without ``densify()``.

Over 600 lines: the engine is one class over one configuration, its model files and
its touched-rows state included, each part using the others' checks.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from perceptrons import _checked, _input, _validation
from perceptrons._engine import Stopping, check_statistic
from perceptrons._memory import check_training_state
from perceptrons._states import (
    AdaptiveState,
    CompactState,
    Frozen,
    TrainingState,
    as_count,
    sorted_union,
)

__all__ = ["LinearConfig", "LinearEngine", "check_epoch_inputs"]

#: A compiled epoch and its family's own arguments (see ``LinearConfig.epoch_kernel``).
EpochKernel = Callable[..., tuple[Any, ...]]


@dataclass(frozen=True)
class LinearConfig:
    """What the engine reads of an online learner's configuration, resolved once (see
    :meth:`perceptrons.linear._online.OnlineLearner._linear_config`).

    ``epoch_kernel(state, multiclass, slack)`` gives ``(kernel, arguments)``: the
    compiled epoch and its family's own arguments; ``targets`` turns class codes into
    the kernel's targets; ``epoch_record`` and ``describe`` make an epoch's
    ``history_`` record and its verbose line.
    """

    name: str
    averaged: bool
    logs_updates: bool
    #: Whether every epoch changes every weight (a prior that decays them all).
    dense_changes: bool
    #: Whether epochs from a state over examples of a total weight write only the rows
    #: of their features and the last rows every example reads (see ``rows_written``).
    example_rows_only: Callable[[TrainingState, float], bool]
    delta: float
    early_stopping: bool
    n_iter_no_change: int
    validation_fraction: float | None
    shuffle: bool
    state_class: type[TrainingState]
    epoch_kernel: Callable[[TrainingState, bool, np.ndarray], tuple[EpochKernel, dict[str, Any]]]
    targets: Callable[[np.ndarray], np.ndarray]
    epoch_record: Callable[[float, int, int], dict[str, Any]]
    describe: Callable[[dict[str, Any]], str]
    #: The update rule's wording of a non-finite error (:meth:`LinearEngine.non_finite_cause`).
    non_finite_cause: Callable[[str], str | None]


# Examples per kernel call when the caller follows progress (a bar updates this often).
PROGRESS_CHUNK = 2**15
#: From this size on (bytes of the weights, the average and per-row statistics), a
#: first training call on sparse input whose features are at most a quarter of the
#: rows keeps its state in those rows only (see :meth:`LinearEngine.training_view`): a
#: hashed text model's 2**20 rows x 20 classes would take 168 MB per array.
TOUCHED_FROM_BYTES = 2**24
# The kernels' sample_weight when every weight is 1: their unweighted arithmetic.
UNWEIGHTED = np.empty(0)


def check_epoch_inputs(
    state: TrainingState,
    X: Any,
    targets: np.ndarray,
    order: np.ndarray,
    slack: np.ndarray,
    sample_weight: np.ndarray,
) -> None:
    """Every size and index the kernels use, checked before they run: Numba does no
    bounds checks."""
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


class Learner(Protocol):
    """What hands the engine its configuration (an
    :class:`~perceptrons.linear._online.OnlineLearner`, which imports this module)."""

    def _linear_config(self) -> LinearConfig: ...


class LinearEngine:
    """The training machinery of one online linear estimator (see the module)."""

    #: What the columns of the weights stand for, as messages name them.
    COLUMNS = "classes"

    def __init__(self, estimator: Learner) -> None:
        # Beside its configuration (self.config), what the engine reads and writes of
        # the estimator is its model's lifecycle: the state, history_, random_state_,
        # classes_, the published model.
        self.estimator: Any = estimator

    @functools.cached_property
    def config(self) -> LinearConfig:
        """The estimator's configuration, resolved on first use (after the parameters
        were checked: a model file's are checked by :meth:`check_params` first)."""
        return self.estimator._linear_config()

    # ------------------------------------------------------------ what it is
    @property
    def name(self) -> str:
        return type(self.estimator).__name__

    @property
    def averaged(self) -> bool:
        return self.config.averaged

    @property
    def logs_updates(self) -> bool:
        return self.config.logs_updates

    @property
    def dense_changes(self) -> bool:
        return self.config.dense_changes

    @property
    def delta(self) -> float:
        return self.config.delta

    @property
    def validation_fraction(self) -> float | None:
        config = self.config
        return config.validation_fraction if config.early_stopping else None

    def stopping(self) -> Stopping:
        return Stopping(self.config.early_stopping, self.config.n_iter_no_change)

    def non_finite_cause(self, what: str) -> str | None:
        return self.config.non_finite_cause(what)

    def check_params(self) -> None:
        self.estimator._check_params()

    def mixing_refusal(self) -> str | None:
        return self.estimator._mixing_refusal()

    # ------------------------------------------------------------ training
    def training_data(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> tuple[Any, Any, np.ndarray | None]:
        estimator = self.estimator
        data, labels = _validation.validate_training_data(estimator, X, y, reset=True)
        data = estimator._prepare(data)
        classes = _validation.label_set(labels, None, estimator, incremental=False)
        weights = _validation.example_weights(
            estimator, sample_weight, classes, labels, incremental=False
        )
        estimator.classes_ = classes
        return data, labels, weights

    def train_batch(
        self,
        X: Any,
        y: Any,
        classes: Any = None,
        sample_weight: Any = None,
        *,
        checked: bool = False,
        grow: bool = False,
    ) -> tuple[float, int, int]:
        """One epoch over a batch of new examples, as ``partial_fit`` runs it (checked
        as it checks them, shuffled by the estimator's generator, the Δ weights from
        zero) without forming the published model: the kernels' statistic, the
        number of examples and the mistakes. The first batch fixes the labels and
        starts a fresh state, ``history_`` and shuffling generator; later ones continue
        them. ``checked``: the batch comes from a reader that checked its rows (see
        :func:`perceptrons._validation.checked_batch`). ``grow``: the width was not
        declared (a stream that learns it as it reads): a sparse batch wider than the
        state widens it (:meth:`~perceptrons._states.TrainingState.widened`), a narrower
        one is read at the state's width."""
        estimator = self.estimator
        if grow and estimator._lifecycle is not None:
            X = self._to_common_width(X)
        trust = {"checked": True} if checked else {}
        X, y, first_call, weights = estimator._begin_call(
            X, y, classes, incremental=True, sample_weight=sample_weight, **trust
        )
        targets = self.encode_targets(y)
        if first_call:
            estimator.history_ = []
            estimator.random_state_ = _input.check_random_state(estimator.random_state)
        seen = X.shape[0] if weights is None else float(weights.sum())
        state, X = self.training_view(X, first_call, seen)
        state.note_inputs(X)  # as a fit's call does (see TrainingState.note_inputs)
        rows = np.arange(X.shape[0])
        order = estimator.random_state_.permutation(rows) if self.config.shuffle else rows
        record = self.run_epoch(
            state,
            X,
            targets,
            order,
            slack=self.new_slack(state, X.shape[0]),
            sample_weight=weights,
            structure_checked=True,  # by _begin_call's validation
            raw=True,
        )
        return float(record["statistic"]), int(record["examples"]), int(record["mistakes"])

    def _to_common_width(self, X: Any) -> Any:
        """A sparse batch and the state at a common width (see :meth:`train_batch`'s
        ``grow``): rows added to the state before the intercept's (a dense state gets
        room for as many again), or columns without entries to the batch (no copy)."""
        estimator = self.estimator
        width, lifecycle = estimator.n_features_in_, estimator._lifecycle
        if not sp.issparse(X) or X.shape[1] == width:
            return X
        if X.shape[1] > width:
            grown = X.shape[1]
            if not isinstance(lifecycle, CompactState):  # its widening copies nothing
                self.check_state_memory(grown)  # what the batch needs, refused as such
                # Room for twice the rows, so that a width growing chunk after chunk
                # copies the state O(1) times a row (the stream narrows it at the end).
                try:
                    self.check_state_memory(2 * width)
                    grown = max(grown, 2 * width)
                except MemoryError:  # the limit's refusal (MemoryBudgetError)
                    pass
            estimator._lifecycle = lifecycle.widened(grown + 1)
            estimator.n_features_in_ = grown
            if grown == X.shape[1]:
                return X
            width = grown
        wider = sp.csr_matrix((X.shape[0], width), dtype=X.dtype)
        # Set, not passed: scipy's constructor would copy views of reused buffers.
        wider.data, wider.indices, wider.indptr = X.data, X.indices, X.indptr
        wider.has_sorted_indices = X.has_sorted_indices
        return wider

    def is_finite(self) -> bool:
        state = self.estimator._state
        return state is None or state.is_finite()

    def publish(self, n_iter: int) -> None:
        estimator = self.estimator
        estimator.n_iter_ = n_iter
        estimator._publish()

    def n_nonzero(self) -> int | None:
        state = self.estimator._state
        return None if state is None else state.n_nonzero()

    def encode_targets(self, labels: Any) -> Any:
        """Labels (of ``classes_``) to the kernel's targets; an unknown label is an error."""
        estimator = self.estimator
        return self.config.targets(_validation.encode(estimator.classes_, labels, estimator))

    def state_size(self, n_features: int) -> tuple[int, int]:
        """The rows (besides the intercept's) and columns of the weights of a state for
        ``n_features`` features and the classes of ``classes_``."""
        classes = self.estimator.classes_
        return n_features, 1 if classes.shape[0] == 2 else classes.shape[0]

    def check_state_memory(self, n_features: int, copies: int = 1) -> None:
        """Refuse, before allocating any of it, a training state for ``n_features``
        features that would not fit in memory ``copies`` times (parameter mixing holds
        one per job): the weights, the averaging state and the model :meth:`publish`
        forms from them."""
        self.check_state_shape(*self.state_size(n_features), copies=copies)

    def check_state_shape(self, rows: int, columns: int, copies: int = 1) -> None:
        """:meth:`check_state_memory` for weights of ``rows`` rows (and the intercept's)
        and ``columns`` columns."""
        arrays = (2 if self.averaged else 1) + 1
        state_class = self.config.state_class
        statistics, what = 0, ""
        if issubclass(state_class, AdaptiveState):
            statistics = state_class.stats_entries(rows + 1, columns)
            what = (
                f"a full covariance of {rows + 1:,} x {rows + 1:,} per class"
                if state_class.FULL
                else f"{len(state_class.STATS)} arrays of per-weight statistics"
            )
        check_training_state(
            self.name,
            rows + 1,
            columns,
            arrays=arrays,
            copies=copies,
            classes=self.COLUMNS,
            statistics=statistics,
            statistics_what=what,
        )

    def new_state(self, n_features: int) -> TrainingState:
        self.check_state_memory(n_features)
        rows, columns = self.state_size(n_features)
        return self.config.state_class.zeros(rows, columns, self.averaged)

    def training_view(self, X: Any, first_call: bool, weight: float) -> tuple[TrainingState, Any]:
        """The state a training call over the examples of ``X`` (weighing ``weight`` in
        all, over its epochs) trains, and ``X`` as its kernels read it; a first call
        starts the state.

        A state in the rows the data reaches (:class:`~perceptrons._states.CompactState`)
        is trained in place of the dense one when every epoch of the call writes and
        reads only its examples' rows and the intercept's (sparse CSR input, a rule of
        ``example_rows_only`` whose statistics by row start at zero): its rows grow to
        cover the call's features and ``X`` comes renumbered to them, so that the
        kernels do the dense state's arithmetic, term for term, on those rows. A first
        call starts one when the dense state would take :data:`TOUCHED_FROM_BYTES` or
        more and the call's features are at most a quarter of its rows; a compact state
        goes on as long as its rows stay at most half of the dense state's, and becomes
        the dense state (its memory checked first) for a call it cannot train."""
        estimator = self.estimator
        lifecycle = None if first_call else estimator._lifecycle
        if lifecycle is None:
            lifecycle = self._fresh_lifecycle(X, weight)
            estimator._lifecycle = lifecycle
        if not isinstance(lifecycle, CompactState):
            return lifecycle, X
        if self._rows_alone(X, lifecycle.state, weight):
            grown = lifecycle.covering(_features_of(X))
            if _touched_rows(estimator) or 2 * grown.rows.shape[0] <= grown.n_rows:
                estimator._lifecycle = grown
                return grown.state, grown.local(X)
        self.check_state_shape(lifecycle.n_rows - 1, lifecycle.state.weights[:1].size)
        dense = lifecycle.expand()
        estimator._lifecycle = dense
        return dense, X

    def _fresh_lifecycle(self, X: Any, weight: float) -> TrainingState | CompactState:
        """A first call's new state: compact or dense (see :meth:`training_view`)."""
        n_rows, n_columns = self.state_size(X.shape[1])  # (the intercept's row aside)
        state_class = self.config.state_class
        if self._rows_alone(X, state_class.zeros(0, n_columns, self.averaged), weight):
            features = _features_of(X)
            arrays = 2 if self.averaged else 1
            if issubclass(state_class, AdaptiveState):
                arrays += len(state_class.STATS)
            dense_bytes = 8 * arrays * (n_rows + 1) * n_columns
            small = 4 * (features.shape[0] + 1) <= n_rows + 1
            if _touched_rows(self.estimator) or (dense_bytes >= TOUCHED_FROM_BYTES and small):
                self.check_state_shape(features.shape[0], n_columns)
                return CompactState.fresh(
                    state_class, features, n_rows + 1, n_columns, self.averaged
                )
        return self.new_state(X.shape[1])

    def _rows_alone(self, X: Any, state: TrainingState, weight: float) -> bool:
        """Whether a call over ``X`` may train a compact state (see :meth:`training_view`)."""
        return (
            _touched_rows(self.estimator) is not False
            and sp.issparse(X)
            and X.format == "csr"
            and CompactState.trains(self.config.state_class)
            and self.config.example_rows_only(state, weight)
        )

    def new_slack(self, state: TrainingState, n_samples: int) -> np.ndarray:
        return np.zeros((n_samples if self.delta > 0 else 0, *state.weights.shape[1:]))

    def rows_written(self, X: Any, state: TrainingState, weight: float) -> np.ndarray | None:
        """The rows of the features of ``X``'s examples and the last rows every example
        reads (:meth:`example_rows`), when the rule's epoch writes nowhere else and the
        input names its features (sparse rows, a tagger's tokens); else None. None too
        when the input holds as many entries as there are rows: copying every row then
        costs less than finding them (a9a's 123 features, not a hashed model's 2**18)."""
        rows, fixed = self.example_rows(X)
        if not self.config.example_rows_only(state, weight) or not isinstance(rows, tuple):
            return None
        _, indices, indptr = rows
        n_rows = state.weights.shape[0]
        if indptr[-1] >= n_rows:
            return None
        return sorted_union(indices[: indptr[-1]], np.arange(n_rows - fixed, n_rows))

    def example_rows(self, X: Any) -> tuple[Any, int]:
        """The input as :func:`perceptrons._kernels.mixing.rows_of_examples` takes it
        (dense, or the CSR triple whose indices are the rows); every example also reads
        the last row, the intercept's."""
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
        ``raw``, ``{"statistic": ..., "mistakes": ..., "examples": ...}``, the kernels'
        summed statistic (updates, or the summed log-loss) and mistakes (wrong
        predictions before the update; 0 for kernels that count none, which return
        ``(statistic, count)``), which :meth:`epoch_record` turns into a record for any
        number of epochs' pieces added up.
        """
        if slack is None:
            slack = self.new_slack(state, 0)
        order = np.ascontiguousarray(order, dtype=np.int64)
        weights = (
            UNWEIGHTED
            if sample_weight is None
            else np.ascontiguousarray(sample_weight, dtype=np.float64)
        )
        check_epoch_inputs(state, X, targets, order, slack, weights)
        if not structure_checked:
            _validation.check_sparse_structure(X)
        rows = (X.data, X.indices, X.indptr) if sp.issparse(X) else X
        kernel, arguments = self.config.epoch_kernel(state, state.weights.ndim == 2, slack)
        if mistake_log is not None:
            self.check_mistake_log(mistake_log, len(order), progress)
            arguments["mistake_log"] = mistake_log
        chunk = len(order) if progress is None else PROGRESS_CHUNK
        statistic, mistakes = 0.0, 0
        for start in range(0, len(order), max(chunk, 1)):
            part = order[start : start + chunk]
            # (updates, mistakes, count); logistic regression's (log-loss, count)
            *value, state.count = kernel(
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
            statistic += check_statistic(value[0])
            mistakes += int(value[1]) if len(value) > 1 else 0
            if progress is not None:
                progress(len(part))
        if raw:
            return {"statistic": statistic, "mistakes": mistakes, "examples": len(order)}
        return self.epoch_record(statistic, len(order), mistakes)

    def check_mistake_log(
        self, mistake_log: np.ndarray, n_examples: int, progress: Callable | None
    ) -> None:
        """Raise a ValueError unless ``run_epoch`` can log updates into ``mistake_log``
        for an epoch of ``n_examples`` examples (see :meth:`run_epoch`)."""
        if not self.logs_updates or progress is not None:
            raise ValueError(
                f"run_epoch: {self.name} logs no updates"
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

    def epoch_record(self, statistic: float, n_examples: int, mistakes: int) -> dict[str, Any]:
        return self.config.epoch_record(statistic, n_examples, mistakes)

    def describe(self, record: dict[str, Any]) -> str:
        return self.config.describe(record)

    def publish_state(self, state: TrainingState, n_iter: int) -> None:
        estimator = self.estimator
        estimator.n_iter_ = n_iter
        estimator._lifecycle = state
        estimator._publish()

    # ------------------------------------------------------------ model files
    def export_state(self, resumable: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
        """The training state as arrays and JSON values (see :mod:`perceptrons.io.persist`).

        Enough to predict and to continue training exactly (``partial_fit``,
        ``warm_start``); ``coef_`` and ``intercept_`` are derived from it. A sparsified
        model gives ``weights`` and ``aux`` as :class:`~perceptrons._checked.SparseArray`
        (and ``"sparsified": true``). ``resumable=False``, or a model without its
        training state (pruned, or loaded from a non-resumable file), gives only the
        model: ``weights`` holds the predicting weights (the average, for an averaged
        model) and ``aux`` is empty, with ``"resumable": false``. Such a state predicts
        exactly and cannot continue training.
        """
        estimator = self.estimator
        _input.check_is_fitted(estimator, "coef_")
        lifecycle = estimator._lifecycle
        n_iter = int(estimator.n_iter_)
        if resumable and isinstance(lifecycle, TrainingState):
            return lifecycle.arrays(), {**lifecycle.values(), "n_iter": n_iter}
        if resumable and isinstance(lifecycle, CompactState):
            values = {**lifecycle.state.values(), "n_iter": n_iter, "sparsified": True}
            return lifecycle.arrays(), values
        if isinstance(lifecycle, TrainingState):
            seen = lifecycle.count
        elif isinstance(lifecycle, CompactState):
            seen = lifecycle.state.count
        else:
            assert isinstance(lifecycle, Frozen)  # a fitted model is in one of the three
            seen = lifecycle.seen
        neutral = self.config.state_class(weights=np.zeros(0), aux=np.zeros(0))
        values = {**neutral.values(), "count": as_count(seen), "n_iter": n_iter}
        values["resumable"] = False
        model = estimator._model_array()
        if estimator._sparsified():
            values["sparsified"] = True
        if isinstance(lifecycle, Frozen) and lifecycle.pruned_at is not None:
            values["threshold"] = lifecycle.pruned_at
        return {"weights": model, "aux": np.zeros((0,) * len(model.shape))}, values

    def import_state(self, arrays: dict[str, Any], values: dict[str, Any]) -> None:
        """Rebuild the training state written by :meth:`export_state`, checking every
        array against ``n_features_in_`` and ``classes_`` (see :meth:`state_layout`)
        and every value before a kernel can see them: the state may come from an
        untrusted file.

        Arrays may be given as :class:`~perceptrons._checked.SparseArray`. With
        ``"sparsified": true`` the model is rebuilt sparsified (``coef_`` sparse, the
        state compact, never expanded); with ``"resumable": false`` it predicts but
        keeps no training state, and is rebuilt sparsified when its weights come as a
        ``SparseArray`` (the file stored their nonzeros, fewer bytes than the dense
        array): nothing is lost by it, and its memory follows the nonzeros.
        """
        estimator = self.estimator
        fits = f"{estimator.n_features_in_} features and {estimator.classes_.shape[0]} classes"
        arrays = _checked.check_arrays(arrays, self.state_layout(values), fits)
        resumable = _checked.boolean_value(values.get("resumable", True), "resumable")
        sparsified = _checked.boolean_value(values.get("sparsified", False), "sparsified")
        if not resumable and isinstance(arrays.get("weights"), _checked.SparseArray):
            # A model that only predicts, stored as its nonzeros (a sparse model: an L1
            # penalty's or a feature budget's): kept so, its memory following them.
            sparsified = True
        state_class = self.config.state_class
        compact = None
        rows = None  # the rows the file holds nonzeros in, when it names them
        if sparsified:
            compact = CompactState.restore(state_class, arrays, values)
            state = compact.state
        else:
            dense = {
                name: array.to_dense() if isinstance(array, _checked.SparseArray) else array
                for name, array in arrays.items()
            }
            state = state_class.restore(dense, values)
            rows = _stored_rows(arrays["weights"], arrays["aux"])
        if not 0 <= state.count <= _checked.MAX_COUNT:
            raise ValueError(f"count must be at most 2**53, got {state.count!r}")
        if state.count == 0 and state.aux.any():
            raise ValueError("count is 0 but the average's aux is not: inconsistent state")
        n_iter = _checked.integer_value(values.get("n_iter"), "n_iter")
        pruned_at = None
        if not resumable and "threshold" in values:
            pruned_at = _checked.real_value(values["threshold"], "threshold", 0.0)
        estimator.n_iter_ = n_iter
        if compact is None:
            estimator._lifecycle = state
            estimator._publish(rows)
        else:
            estimator._lifecycle = compact
            with np.errstate(over="ignore", invalid="ignore"):  # checked next
                coef, intercept = compact.published()
            _validation.check_linear_model(coef, intercept, estimator)
            estimator.coef_, estimator.intercept_ = coef, intercept
        if not resumable:
            estimator._lifecycle = Frozen(state.count, pruned_at)

    def state_layout(self, values: dict[str, Any]) -> dict[str, _checked.Spec]:
        """What :meth:`import_state` accepts as arrays, for ``n_features_in_`` and
        ``classes_``: exact float64 shapes, finite values (an empty ``aux`` for a
        state saved with ``"resumable": false``)."""
        estimator = self.estimator
        n_columns = 1 if estimator.classes_.shape[0] == 2 else estimator.classes_.shape[0]
        rows = estimator.n_features_in_ + 1
        shape = (rows,) if n_columns == 1 else (rows, n_columns)
        resumable = values.get("resumable", True) is not False
        layout = self.config.state_class.layout(shape, self.averaged and resumable)
        if resumable:
            return layout
        # Only what predicts: the weights (a family's statistics stay out of the file).
        return {
            name: spec
            for name, spec in layout.items()
            if name == "weights" or name == "aux" or spec.optional
        }


def _touched_rows(estimator: Any) -> bool | None:
    """The estimator's choice of a state in the rows the data reaches: None lets
    :meth:`LinearEngine.training_view` decide, True takes one whenever the call allows
    it, False never (a private switch: the tests compare both with the dense state)."""
    return getattr(estimator, "_touched_rows", False)


def _features_of(X: sp.csr_matrix) -> np.ndarray:
    """The sorted columns that hold an entry of ``X``: by a mask over the columns,
    O(nnz + columns), cheaper than sorting the indices -- unless the columns outnumber
    the entries many times (a hashing space of ``2**31``: its mask alone 2 GiB)."""
    indices = X.indices[: X.indptr[-1]]
    if X.shape[1] > 64 * indices.shape[0]:
        return np.unique(indices).astype(np.int64)
    used = np.zeros(X.shape[1], dtype=bool)
    used[indices] = True
    return np.flatnonzero(used)


def _stored_rows(weights: Any, aux: Any) -> np.ndarray | None:
    """The sorted rows that hold the stored entries of ``weights`` and ``aux`` (checked
    :class:`~perceptrons._checked.SparseArray`, or an empty ``aux``) and the intercept's,
    the last: every other row is zero. None when either is stored dense."""
    if not isinstance(weights, _checked.SparseArray):
        return None
    parts = [weights.nonzero_rows(), [weights.shape[0] - 1]]
    if isinstance(aux, _checked.SparseArray):
        parts.append(aux.nonzero_rows())
    elif aux.size:
        return None
    return sorted_union(*parts)
