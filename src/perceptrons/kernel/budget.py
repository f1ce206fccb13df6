"""Kernel perceptrons on a budget: the learner core.

:class:`BudgetPerceptron` here is :class:`perceptrons.BudgetPerceptron` without
scikit-learn's face (the same parameters, training, model and files); the removal rules
are documented in :mod:`perceptrons.budget`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from perceptrons import _input, _validation
from perceptrons import _params as rules
from perceptrons._base import IncrementalClassifier
from perceptrons._engine import check_statistic, epochs_recorded, run_epochs
from perceptrons._kernels import budget as _budget
from perceptrons._memory import check_allocation
from perceptrons.kernel import _gram
from perceptrons.kernel._budget_codec import BudgetCodec, BudgetState
from perceptrons.kernel._gram import KernelMatrix, overflow_error
from perceptrons.kernel._training import describe, resolve_gamma

__all__ = ["BudgetPerceptron"]

RULES = {
    "random": _budget.RULE_RANDOM,
    "forgetron": _budget.RULE_FORGETRON,
    "projectron": _budget.RULE_PROJECTRON,
    "bpa": _budget.RULE_BPA,
    "bpa-nn": _budget.RULE_BPA_NN,
}
# What the support slots are built for: changing one needs a new fit.
SLOT_PARAMETERS = ("budget", "removal", "kernel", "degree", "gamma", "coef0")


class BudgetPerceptron(IncrementalClassifier):
    """The budget perceptron's learner core: :class:`perceptrons.BudgetPerceptron` without
    scikit-learn (the same parameters, training, model and files)."""

    _rules: ClassVar[dict[str, rules.Rule]] = {
        "budget": rules.integer(1),
        "removal": rules.one_of(*RULES),
        "eta": rules.real(0.0),
        "C": rules.real(0.0, inclusive=False),
        "kernel": rules.one_of("poly", "rbf", "linear"),
        "degree": rules.integer(1),
        "gamma": rules.either(rules.one_of("scale", "auto"), rules.real(0.0, inclusive=False)),
        "coef0": rules.finite_real(),
        "max_epochs": rules.integer(1),
        "shuffle": rules.boolean(),
        "batch_size": rules.integer(1),
        "random_state": rules.random_state(),
        "verbose": rules.integer(0),
        # The lead's KernelMatrix (array API, GPU) takes a device; until then, NumPy only.
        "device": rules.Rule(_gram.DEVICE_RULE_TEXT, _gram.device_accepted),
    }

    # The fitted model (set by training or the codec); None before a first call.
    _state: BudgetState | None

    def __init__(
        self,
        *,
        budget: int = 1000,
        removal: str = "projectron",
        eta: float = 0.1,
        C: float = 1.0,
        kernel: str = "poly",
        degree: int = 3,
        gamma: str | float = "scale",
        coef0: float = 1.0,
        max_epochs: int = 1,
        shuffle: bool = True,
        batch_size: int = 256,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
        device: Any = None,
    ) -> None:
        self.budget = budget
        self.removal = removal
        self.eta = eta
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.max_epochs = max_epochs
        self.shuffle = shuffle
        self.batch_size = batch_size
        self.random_state = random_state
        self.verbose = verbose
        self.device = device

    # ------------------------------------------------------------------ training
    def fit(self, X: ArrayLike, y: ArrayLike) -> BudgetPerceptron:
        """Train for ``max_epochs`` passes over ``(X, y)``, starting from scratch.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Training data (sparse rows are stored dense in the support slots).
        y : array-like of shape (n_samples,)
            Labels of any type; at least two distinct values.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._check_params()
        with self._all_or_nothing():  # a fit that fails leaves the model before it
            backend, X = _gram.input_backend(type(self).__name__, self.device, X, self.kernel)
            y = _gram.to_host(y)  # labels too may come as a device's array
            data, labels, _, _ = self._begin_call(X, y, None, incremental=False, reset=True)
            self._start(data)
            self.random_state_ = _input.check_random_state(self.random_state)
            self.history_ = []
            codes = _validation.encode(self.classes_, labels, self)
            epochs = _BudgetEpochs(self, data, codes, backend)
            for _ in self._run_epochs(epochs, self.max_epochs):
                pass
        return self

    def partial_fit(
        self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None
    ) -> BudgetPerceptron:
        """Run one epoch over ``(X, y)``, going on from the current model.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            A batch of new training examples.
        y : array-like of shape (n_samples,)
            Its labels.
        classes : array-like of shape (n_classes,), default=None
            Every label the model will ever see; needed on the first call unless that
            batch holds them all.

        Returns
        -------
        self : object
            The updated estimator.
        """
        self._check_params()
        with self._all_or_nothing() as rollback:
            backend, X = _gram.input_backend(type(self).__name__, self.device, X, self.kernel)
            y = _gram.to_host(y)  # labels too may come as a device's array
            data, labels, first_call, _ = self._begin_call(X, y, classes, incremental=True)
            if first_call:
                self._start(data)
                self.random_state_ = _input.check_random_state(self.random_state)
                self.history_ = []
            else:
                self._check_same_slots()
                rollback.keep(self._saved_model(data))
            codes = _validation.encode(self.classes_, labels, self)
            for _ in self._run_epochs(_BudgetEpochs(self, data, codes, backend), 1):
                pass
        return self

    def _start(self, X: Any) -> None:
        """Empty support slots for ``budget`` vectors, their memory checked first."""
        n_columns = 1 if self.classes_.shape[0] == 2 else self.classes_.shape[0]
        self._check_slot_memory(X.shape[1], n_columns)
        gamma = resolve_gamma(self.gamma, self.kernel, X)
        self._state = BudgetState.empty(self.budget, X.shape[1], n_columns, self.removal, gamma)
        self._state.parameters = self._slot_parameters()

    def _slot_parameters(self) -> dict[str, Any]:
        """The parameters the slots were built for: the rule's matrices are sized by
        them and the kernel values they cache computed with them."""
        return {name: getattr(self, name) for name in SLOT_PARAMETERS}

    def _check_same_slots(self) -> None:
        """Refuse to go on training slots built for other parameters."""
        assert self._state is not None
        changed = [
            f"{name}={value!r} (was {self._state.parameters[name]!r})"
            for name, value in self._slot_parameters().items()
            if value != self._state.parameters[name]
        ]
        if changed:
            raise ValueError(
                f"{type(self).__name__}: {', '.join(changed)} changed since the support "
                "slots were built; call fit to start again."
            )

    def _check_slot_memory(self, n_features: int, n_columns: int) -> None:
        """Refuse, before any is allocated, slots that would not fit in memory: the
        support vectors (dense), their coefficients and bookkeeping, and the rule's
        ``budget x budget`` matrix (Forgetron, Projectron)."""
        square = self.budget**2 if self.removal in ("forgetron", "projectron", "bpa-nn") else 0
        n_bytes = 8 * (self.budget * (n_features + n_columns + 3) + square)
        check_allocation(
            n_bytes,
            f"{type(self).__name__}'s support slots ({self.budget:,} x {n_features:,} "
            "features, stored dense)",
            "to lower it, use a smaller budget or fewer features",
        )

    def _kernel(self, A: Any, B: Any, backend: _gram.Backend = _gram.NUMPY) -> np.ndarray:
        """The kernel matrix between the rows of A and B (``backend``'s arrays, or
        SciPy's on NumPy), computed on ``backend`` and returned as a float64 ndarray:
        the one place this estimator computes kernel values."""
        assert self._state is not None
        kernel = KernelMatrix(self.kernel, self.degree, self._state.gamma, self.coef0, backend)
        return backend.to_numpy(kernel.block(A, B))

    def _run_epochs(self, epochs: _BudgetEpochs, max_epochs: int) -> Iterator[dict[str, Any]]:
        return run_epochs(
            epochs,
            max_epochs=max_epochs,
            history=self.history_,
            name=type(self).__name__,
            describe=describe,
            verbose=bool(self.verbose),
        )

    def _epoch(
        self, X: Any, codes: np.ndarray, order: np.ndarray, slots: _CallSlots
    ) -> dict[str, Any]:
        """One pass over ``X[order]``, a block at a time (the kernel products on
        ``slots``' backend); its record."""
        state = self._state
        assert state is not None
        uniforms = (
            self.random_state_.random_sample(len(order))
            if self.removal == "random"
            else np.zeros(len(order))
        )
        mistakes = 0
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            block = slots.rows(rows)
            n = state.n_occupied
            with np.errstate(over="ignore", invalid="ignore"):  # checked next
                cross = (
                    self._kernel(block, slots.support(n), slots.backend)
                    if n
                    else np.zeros((len(rows), 0))
                )
                block_gram = self._kernel(block, block, slots.backend)
            if not (np.isfinite(cross).all() and np.isfinite(block_gram).all()):
                epoch = epochs_recorded(self.history_) + 1
                raise overflow_error(type(self).__name__, epoch)
            mistakes += check_statistic(
                _budget.budget_block(
                    RULES[self.removal],
                    np.ascontiguousarray(cross),
                    np.ascontiguousarray(block_gram),
                    codes[rows],
                    uniforms[start : start + self.batch_size],
                    state.coef,
                    state.source,
                    state.norms,
                    state.gram,
                    state.inverse,
                    state.birth,
                    state.nearest,
                    state.nearest_distance,
                    state.counters,
                    state.totals,
                    float(self.eta),
                    float(self.C),
                )
            )
            self._store_new_vectors(X, rows, slots)
        return {
            "mistakes": int(mistakes),
            "examples": len(order),
            "support_vectors": state.n_occupied,
        }

    def _store_new_vectors(self, X: Any, rows: np.ndarray, slots: _CallSlots) -> None:
        """Copy the examples the block put in slots into those slots (and into their
        copy on the call's backend)."""
        state = self._state
        assert state is not None
        filled = np.flatnonzero(state.source >= 0)
        if filled.size:
            examples = rows[state.source[filled]]
            vectors = X[examples]
            state.support[filled] = vectors.toarray() if sp.issparse(vectors) else vectors
            state.source[filled] = -1
            slots.store(filled, examples)

    def _saved_model(self, X: Any = None) -> Callable[[], None]:
        """The slots as they are now: all of them, which the rules write anywhere
        (``budget x n_features``, less than the kernel values of one block of an
        epoch)."""
        if self._state is None:
            return super()._saved_model(X)
        return self._state.saved()

    def _codec(self) -> BudgetCodec:
        """The model's state as a model file stores it (see :mod:`perceptrons._engine`)."""
        return BudgetCodec(self)

    def _mixing_refusal(self) -> str | None:
        """Parameter mixing averages weight vectors; each model has its own support set."""
        return (
            f"{type(self).__name__}: each model's support vectors are its own, so "
            "models cannot be mixed"
        )

    # ---------------------------------------------------------------- prediction
    @property
    def support_vectors_(self) -> np.ndarray:
        _input.check_is_fitted(self, "classes_")
        assert self._state is not None
        return self._state.support[: self._state.n_occupied].copy()

    @property
    def dual_coef_(self) -> np.ndarray:
        _input.check_is_fitted(self, "classes_")
        assert self._state is not None
        return self._state.coef[: self._state.n_occupied].copy()

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """The model's scores.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: positive predicts ``classes_[1]``. Multiclass: one score per class.
        """
        _input.check_is_fitted(self, "classes_")
        self._check_params()
        backend, X = _gram.input_backend(type(self).__name__, self.device, X, self.kernel)
        data = _validation.validate_prediction_data(self, X, accept_sparse="csr")
        state = self._state
        assert state is not None
        n = state.n_occupied
        support = state.support[:n] if backend.is_numpy else backend.asarray(state.support[:n])
        scores = np.zeros((data.shape[0], state.coef.shape[1]))
        rows_per_block = _gram.rows_per_block(n)
        for start in range(0, data.shape[0] if n else 0, rows_per_block):
            stop = min(start + rows_per_block, data.shape[0])
            with np.errstate(over="ignore", invalid="ignore"):  # checked next
                block = data[start:stop] if backend.is_numpy else backend.asarray(data[start:stop])
                gram = self._kernel(block, support, backend)
            _validation.check_scores(gram, self, first_row=start)
            scores[start:stop] = gram @ state.coef[:n]
        scores = scores[:, 0] if scores.shape[1] == 1 else scores
        return _validation.check_scores(scores, self)


class _CallSlots:
    """One training call's data and support slots where its kernel products run: on
    NumPy the host's own arrays; on another backend copies there, the slots' copy kept
    equal to the host's as vectors are stored."""

    def __init__(self, backend: _gram.Backend, X: Any, support: np.ndarray) -> None:
        self.backend = backend
        if backend.is_numpy:
            self.data, self._support = X, support
        else:
            self.data, self._support = backend.asarray(X), backend.asarray(support)

    def rows(self, rows: np.ndarray) -> Any:
        if self.backend.is_numpy:
            return self.data[rows]
        return self.backend.take_rows(self.data, self.backend.asarray(rows, "int64"))

    def support(self, n: int) -> Any:
        return self._support[:n, :]

    def store(self, slots: np.ndarray, examples: np.ndarray) -> None:
        """Slots ``slots`` now hold examples ``examples`` (the host's already do)."""
        if self.backend.is_numpy:
            return
        # One row at a time: the array API indexes assignments by slices and integers.
        for slot, example in zip(slots.tolist(), examples.tolist(), strict=True):
            self._support[slot, :] = self.data[example, :]


class _BudgetEpochs:
    """One training call's epochs (:class:`perceptrons._engine.Epochs`), each over the
    rows in a fresh order drawn from ``random_state_`` (with ``shuffle``), the kernel
    products on ``backend``."""

    def __init__(
        self, estimator: BudgetPerceptron, X: Any, codes: np.ndarray, backend: _gram.Backend
    ) -> None:
        self.estimator, self.X, self.codes = estimator, X, codes
        self.rows = np.arange(X.shape[0])
        assert estimator._state is not None
        self.slots = _CallSlots(backend, X, estimator._state.support)

    def run_epoch(self, epoch: int) -> dict[str, Any]:
        estimator = self.estimator
        rows = self.rows
        order = estimator.random_state_.permutation(rows) if estimator.shuffle else rows
        return estimator._epoch(self.X, self.codes, order, self.slots)

    def is_finite(self) -> bool:
        state = self.estimator._state
        return state is None or state.is_finite()

    def publish(self, n_iter: int) -> None:
        """Nothing to form: the support slots are the model."""

    def score(self, validation: tuple[Any, ...]) -> float:
        return float(self.estimator.score(*validation))
