"""The voted perceptron's training: the update sequence grown one block at a time.

:class:`VotedTraining` is the base of :class:`~perceptrons.VotedPerceptron`: its fitted
model (the support set, the dual coefficients, the update sequence with the votes) and
the exact online dual perceptron that grows it -- one BLAS kernel product scores a
block of examples under the model as it stood when the block began, then a compiled
loop walks the block in order, adding the updates made inside it; the linear kernel
trains in the primal instead, with the compiled epochs of the perceptron, logging its
mistakes. :class:`VotedEpochs` is one training call's epochs as the one epoch loop
(:func:`perceptrons._engine.run_epochs`) drives them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from perceptrons import _validation
from perceptrons._base import IncrementalClassifier
from perceptrons._engine import check_statistic, epochs_recorded
from perceptrons._kernels import perceptron as _perceptron_kernels
from perceptrons._kernels import voted as _voted
from perceptrons._memory import check_training_state
from perceptrons.kernel._gram import NUMPY, Backend, KernelMatrix, input_backend, overflow_error
from perceptrons.kernel._store import (
    NO_WEIGHTS,
    BackendRows,
    CallState,
    Growable,
    KernelColumns,
    SupportStore,
)

__all__ = ["VotedEpochs", "VotedTraining", "describe"]

# The bounds of batch_size="auto"'s blocks: on a device each block also costs a round
# trip to the host (measured on an H100, MNIST degree 4: blocks of 128 made the epoch
# 1.9x slower than blocks of 512), so its blocks start larger.
_MIN_AUTO_BLOCK, _MIN_AUTO_DEVICE_BLOCK, _MAX_AUTO_BLOCK = 128, 512, 1024
# Support vectors whose kernel columns join the cache together.
_CACHE_CHUNK = 1024


class VotedTraining(IncrementalClassifier):
    """The voted perceptron's model and its training (see the module)."""

    # The parameters training reads (VotedPerceptron's).
    kernel: str | Callable
    degree: int
    gamma: str | float
    coef0: float
    multiclass: str
    max_epochs: int
    shuffle: bool
    fit_intercept: bool
    delta: float
    batch_size: int | str
    cache_size: float
    device: Any

    # The fitted model (set by training or its codec). _support is the first-call
    # flag: None from the start of a fit until its data are checked.
    _support: SupportStore | None
    _alpha: Growable
    _updates: Growable
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
    _update_weights: Growable | None
    _weight_seen: float
    _weight_ends: list[float]

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
        self._support = SupportStore(sp.issparse(X), X.shape[1], precomputed)
        self._alpha = Growable(n_columns, np.float64)
        self._bias = np.zeros(n_columns)
        # One row per update: (global position, support id, column or gold, sign or predicted)
        self._updates = Growable(4, np.int64)
        self._n_seen = 0
        self._epoch_ends: list[int] = []
        self._update_weights = None
        self._weight_seen = 0.0
        self._weight_ends = []
        # The linear kernel trains in the primal, O(nnz(x)) per example, with the same
        # compiled epochs as Perceptron; they log the mistakes that make the sequence.
        self._primal = self.kernel == "linear"
        if self._primal:
            # The weights and the model published from them (the dual's support grows
            # with the data, as the data itself).
            check_training_state(type(self).__name__, X.shape[1] + 1, n_columns, arrays=2)
            shape = (X.shape[1] + 1, n_columns) if self._native else (n_columns, X.shape[1] + 1)
            self._weights = np.zeros(shape)
        self._gamma = self._resolve_gamma(X)

    def _resolve_gamma(self, X) -> float:
        return resolve_gamma(self.gamma, self._kernel_in_use(), X)

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

    def _backend(self, X: Any) -> tuple[Backend, Any]:
        """The backend of the kernel products (``device``, else ``X``'s namespace) and
        ``X`` on the host (see :func:`perceptrons.kernel._gram.input_backend`)."""
        return input_backend(type(self).__name__, self.device, X, self.kernel)

    def _gram(self, A, B, backend: Backend = NUMPY) -> Any:
        """Kernel matrix between the rows of A and B (B: support vectors or indices),
        on ``backend`` (the built-in kernels; the others on the host)."""
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
        kernel = KernelMatrix(self.kernel, self.degree, self._gamma, self.coef0, backend)
        return kernel.block(A, B)

    def _new_call(self, X, *, cache: bool, backend: Backend = NUMPY) -> CallState:
        assert self._support is not None
        n_columns = self._bias.shape[0]
        n_rows = X.shape[0] if self.delta > 0 else 0
        # The primal kernels read a binary column's slack as one contiguous row.
        primal_binary = self._primal and not self._native
        call = CallState(
            example_support=np.full(X.shape[0], -1, dtype=np.int64),
            slack=np.zeros((n_columns, n_rows) if primal_binary else (n_rows, n_columns)),
            backend=backend,
            data=X,
        )
        if not backend.is_numpy and not self._primal:
            call.data = backend.asarray(X)
            call.support = BackendRows(backend, X.shape[1])
            if self._support.size:  # partial_fit goes on from earlier support vectors
                call.support.append(backend.asarray(self._support.matrix()))
        if cache and not self._primal and self.kernel != "precomputed" and self.cache_size > 0:
            max_columns = int(self.cache_size * 2**20 / 8 / X.shape[0])
            call.cache = KernelColumns(backend, X.shape[0], max_columns)
        return call

    def _support_on(self, call: CallState, start: int) -> Any:
        """Support vectors ``start:`` where the call's kernel products run."""
        assert self._support is not None
        return self._support.matrix(start) if call.support is None else call.support.view(start)

    def _fill_cache(self, call: CallState) -> None:
        """Add the kernel columns of new support vectors, while the budget allows."""
        if call.cache is None:
            return
        assert self._support is not None
        have = call.cache.size
        room = min(self._support.size - have, call.cache.room)
        # In chunks of columns, so that the products in flight stay small beside the cache.
        for first in range(have, have + max(0, room), _CACHE_CHUNK):
            new_support = self._support_on(call, first)[: min(_CACHE_CHUNK, have + room - first), :]
            # Overflowing kernel values are refused where the epoch reads them.
            with np.errstate(over="ignore", invalid="ignore"):
                call.cache.append(self._gram(call.data, new_support, call.backend))

    def _base_scores(self, block: Any, rows: Any, call: CallState) -> np.ndarray:
        """Scores of the block's examples (``block``: their rows of the call's data;
        ``rows``: their indices, on the call's backend) under the model as it stands,
        without the bias."""
        assert self._support is not None
        backend = call.backend
        alpha = backend.asarray(self._alpha.view)
        base = None
        cached = 0 if call.cache is None else call.cache.size
        if call.cache is not None and cached:
            base = call.cache.rows(rows) @ alpha[:cached, :]
        if self._support.size > cached:
            fresh = self._gram(block, self._support_on(call, cached), backend) @ alpha[cached:, :]
            base = fresh if base is None else base + fresh
        if base is None:
            return np.zeros((block.shape[0], alpha.shape[1]))
        return backend.to_numpy(base)

    def _run_epoch(
        self,
        X: Any,
        targets: np.ndarray,
        order: np.ndarray,
        call: CallState,
        progress: Callable[[int], object] | None,
        weights: np.ndarray | None = None,
    ) -> dict[str, Any]:
        """One epoch over ``X[order]``, extending the update sequence; its record
        (without its number: the epoch loop adds it)."""
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
        return {
            "mistakes": int(mistakes),
            "examples": len(order),
            "support_vectors": self._support.size,
        }

    def _start_weighting(self) -> None:
        """Keep the weights of the examples from now on; so far every weight was 1."""
        updates = self._updates.view
        self._update_weights = Growable(2, np.float64)
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

    def _saved_model(self, X: Any = None) -> Callable[[], None]:
        """What puts the model back as it is now after epochs over ``X`` (None: any
        data): the update sequence and support set cut back to their length, and what
        the epochs write in place -- the alphas, the bias and the primal weights (of a
        sparse ``X``, only its features' columns and the intercept's). Attributes the
        epochs replace are the caller's rollback's."""
        if self._is_first_call():
            return super()._saved_model(X)
        assert self._support is not None
        undo = [self._support.saved(), self._updates.saved(), self._alpha.saved(rows=True)]
        if self._update_weights is not None:
            undo.append(self._update_weights.saved())
        bias, bias_kept = self._bias, self._bias.copy()
        weights: tuple[np.ndarray, Any, np.ndarray] | None = None
        if self._primal:
            # Native: a row per feature; one-vs-rest: a row per column.
            index: Any = Ellipsis
            if X is not None and sp.issparse(X):
                features = np.unique(X.indices[: X.indptr[-1]])
                rows = np.append(features, X.shape[1])  # and the intercept's
                index = rows if self._native else (slice(None), rows)
            weights = (self._weights, index, self._weights[index].copy())

        def restore() -> None:
            for step in undo:
                step()
            bias[:] = bias_kept
            if weights is not None:
                array, where, kept = weights
                array[where] = kept

        return restore

    def _dual_epoch(self, X, targets, order: np.ndarray, call: CallState, progress, weights) -> int:
        """One epoch of the dual perceptron, a block of examples at a time."""
        n_columns = self._bias.shape[0]
        bias_sq = 1.0 if self.fit_intercept else 0.0
        delta_sq = float(self.delta) ** 2
        kernel = _voted.dual_block_native if self._native else _voted.dual_block_binary
        backend = call.backend
        mistakes = 0
        start = 0
        while start < len(order):
            rows = order[start : start + self._block_size(backend)]
            start += len(rows)
            on_backend = backend.asarray(rows, "int64")
            block = backend.take_rows(call.data, on_backend)
            other = rows if self.kernel == "precomputed" else block
            with np.errstate(over="ignore", invalid="ignore"):  # checked next
                base = self._base_scores(block, on_backend, call)
                block_gram = backend.to_numpy(self._gram(block, other, backend))
            if not (np.isfinite(base).all() and np.isfinite(block_gram).all()):
                # Overflowing kernel values: every score would be inf or NaN.
                epoch = epochs_recorded(self.history_) + 1
                raise overflow_error(type(self).__name__, epoch)
            coef = np.zeros((len(rows), n_columns))
            log = np.empty((len(rows) * (1 if self._native else n_columns), 3), dtype=np.int64)
            n_updates = check_statistic(
                kernel(
                    base=base,
                    block_gram=block_gram,
                    examples=rows,
                    targets=targets[rows],
                    weights=NO_WEIGHTS if weights is None else weights[rows],
                    bias=self._bias,
                    bias_sq=bias_sq,
                    slack=call.slack,
                    delta_sq=delta_sq,
                    coef=coef,
                    log=log,
                )
            )
            self._absorb(X, rows, coef, log[:n_updates], call, weights)
            self._n_seen += len(rows)
            mistakes += n_updates
            if progress is not None:
                progress(len(rows))
        return mistakes

    def _block_size(self, backend: Backend) -> int:
        """The next training block's size (see ``batch_size``): with ``"auto"``, an
        eighth of the support set, so that the product within the block costs at most
        about an eighth of the product against the support set, in blocks large
        enough for BLAS (and, on a device, for the round trip each block makes)."""
        if self.batch_size != "auto":
            return int(self.batch_size)
        assert self._support is not None
        smallest = _MIN_AUTO_BLOCK if backend.is_numpy else _MIN_AUTO_DEVICE_BLOCK
        return min(_MAX_AUTO_BLOCK, max(smallest, self._support.size // 8))

    def _primal_epoch(self, X, targets, order: np.ndarray, call: CallState, weights) -> int:
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
            "sample_weight": NO_WEIGHTS if weights is None else weights,
            "rule": _perceptron_kernels.update_rule(
                bias_feature=bias_feature, delta=float(self.delta)
            ),
        }
        log = np.empty((len(order), 2), dtype=np.int64)
        coef = np.zeros((len(order), self._bias.shape[0]))
        if self._native:
            statistic, _, _ = _perceptron_kernels.multiclass_epoch(
                **common,
                y=targets,
                weights=self._weights,
                slack=call.slack if self.delta > 0 else np.zeros((0, 0)),
                mistake_log=log,
            )
            n = check_statistic(statistic)
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
                statistic, _, _ = _perceptron_kernels.binary_epoch(
                    **common,
                    y=signs,
                    weights=self._weights[column],
                    slack=call.slack[column] if self.delta > 0 else np.zeros(0),
                    mistake_log=log,
                )
                n = check_statistic(statistic)
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
        self._absorb(X, order, coef, entries, call, weights)
        self._n_seen += len(order)
        return entries.shape[0]

    def _absorb(self, X, rows, coef, log, call: CallState, weights=None) -> None:
        """Fold one block's updates into the support set, alphas and update sequence
        (and, weighted, each update's step and the weight seen before it)."""
        example_support = call.example_support
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
            if call.support is not None:
                call.support.append(
                    call.backend.take_rows(call.data, call.backend.asarray(new, "int64"))
                )
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


class VotedEpochs:
    """One training call's epochs (:class:`perceptrons._engine.Epochs`): ``fit``'s
    ``max_epochs`` passes, or ``partial_fit``'s one pass over its batch, each over the
    rows in a fresh order drawn from ``random_state_`` (with ``shuffle``). Between
    ``fit``'s epochs the kernel columns of the new support vectors join the cache."""

    def __init__(
        self,
        estimator: VotedTraining,
        X: Any,
        targets: np.ndarray,
        call: CallState,
        weights: np.ndarray | None,
        progress: Callable[[int], object] | None,
    ) -> None:
        self.estimator, self.X, self.targets = estimator, X, targets
        self.call, self.weights, self.progress = call, weights, progress
        self.rows = np.arange(X.shape[0])

    def run_epoch(self, epoch: int) -> dict[str, Any]:
        estimator = self.estimator
        if epoch > 1:
            estimator._fill_cache(self.call)
        rows = self.rows
        order = estimator.random_state_.permutation(rows) if estimator.shuffle else rows
        return estimator._run_epoch(
            self.X, self.targets, order, self.call, self.progress, self.weights
        )

    def is_finite(self) -> bool:
        return self.estimator._is_finite()

    def publish(self, n_iter: int) -> None:
        """Nothing to form: the update sequence is the model, current after every epoch."""

    def score(self, validation: tuple[Any, ...]) -> float:
        return float(self.estimator.score(*validation))


def describe(record: dict[str, Any]) -> str:
    """An epoch's verbose line."""
    return (
        f"{record['mistakes']} mistakes in {record['examples']} examples, "
        f"{record['support_vectors']} support vectors"
    )


def resolve_gamma(gamma: str | float, kernel: str, X: Any) -> float:
    """The kernel coefficient of the first training data ``X``: ``gamma`` itself, or
    ``"scale"``'s ``1 / (n_features * X.var())`` (1 when X has no variance), or
    ``"auto"``'s ``1 / n_features`` (also the value of the kernels that read no gamma).
    Shared by the kernel estimators."""
    if not isinstance(gamma, str):
        return float(gamma)
    if gamma == "auto" or kernel in ("linear", "precomputed"):
        return 1.0 / X.shape[1]
    variance = X.multiply(X).mean() - X.mean() ** 2 if sp.issparse(X) else float(np.var(X))
    return 1.0 / (X.shape[1] * variance) if variance > 0 else 1.0
