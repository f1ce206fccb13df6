"""The seven strategies of the cost table: what averaging and voting cost.

The voted perceptron (Freund & Schapire 1999) predicts by letting every intermediate
model of training vote; the averaged perceptron predicts with their mean. Both can be
computed in several ways that give the same model at very different costs. With ``d``
features, ``T`` epochs over ``|D|`` examples, ``U`` updates and at most ``nnz`` nonzero
features per example (the size of one update), the textbook table of their costs is:

=====================  =============  ==================  ==================================
strategy               space          time                what it stores
=====================  =============  ==================  ==================================
``vanilla``            O(d)           O(U nnz + d)        the weights (last model only)
``voted_naive``        O(T|D| d)      O(T|D| d)           a model after every example
``voted_improved``     O(U d)         O(U d)              a model after every update, votes
``averaged_naive``     O(d)           O(T|D| d)           a running sum, added to per example
``averaged_improved``  O(U d)         O(U d)              the updated models, survival counts
``averaged_delta``     O(d + U nnz)   O(U nnz + d)        the sparse updates Δw, their times
``averaged_fastest``   O(d)           O(U nnz + d)        an auxiliary vector and a counter
=====================  =============  ==================  ==================================

``averaged_fastest`` is Daumé's (2006) trick, the one :class:`~perceptrons.AveragedPerceptron`
uses. The time column leaves out what every strategy pays alike: scoring each of the
``T|D|`` examples, ``O(T|D| nnz)``.

:func:`train_strategy` trains one strategy with compiled code
(:mod:`perceptrons._kernels.strategies`), so that the costs measured are the
algorithms', not the interpreter's: the storage is what the row above says, allocated
up front when its size is known (the naive voted perceptron's ``T|D|`` models) and
grown by doubling when it depends on ``U``. Every strategy makes the same mistakes as
:class:`~perceptrons.Perceptron` with the same ``random_state``; the averaged ones
return the same mean as :class:`~perceptrons.AveragedPerceptron`, and the voted ones
predict as :class:`~perceptrons.VotedPerceptron` with the linear kernel.
``benchmarks/bench_complexity.py`` measures the table.

Examples
--------
>>> from sklearn.datasets import load_iris
>>> from perceptrons.complexity import STRATEGIES, train_strategy
>>> X, y = load_iris(return_X_y=True)
>>> fits = {name: train_strategy(name, X, y, max_epochs=5, random_state=0)
...         for name in STRATEGIES}
>>> fits["voted_naive"].storage["models"].shape  # 5 epochs x 150 examples
(750, 5, 3)
>>> fits["voted_improved"].storage["models"].shape[0] == fits["vanilla"].n_updates + 1
True
>>> import numpy as np
>>> means = [fits[name].coef_ for name in STRATEGIES if name.startswith("averaged")]
>>> all(np.allclose(m, means[0]) for m in means)
True
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from perceptrons import _params as rules
from perceptrons import _validation
from perceptrons._kernels import strategies as _kernels

__all__ = ["COST_TABLE", "STRATEGIES", "StrategyResult", "train_strategy"]

#: The strategies, in the order of the cost table.
STRATEGIES = (
    "vanilla",
    "voted_naive",
    "voted_improved",
    "averaged_naive",
    "averaged_improved",
    "averaged_delta",
    "averaged_fastest",
)

#: The textbook costs of each strategy, ``(space, time)``, as in the module's table.
COST_TABLE: dict[str, tuple[str, str]] = {
    "vanilla": ("O(d)", "O(U nnz + d)"),
    "voted_naive": ("O(T|D| d)", "O(T|D| d)"),
    "voted_improved": ("O(U d)", "O(U d)"),
    "averaged_naive": ("O(d)", "O(T|D| d)"),
    "averaged_improved": ("O(U d)", "O(U d)"),
    "averaged_delta": ("O(d + U nnz)", "O(U nnz + d)"),
    "averaged_fastest": ("O(d)", "O(U nnz + d)"),
}

_VOTED = ("voted_naive", "voted_improved")
_RULES = {
    "strategy": rules.one_of(*STRATEGIES),
    "max_epochs": rules.integer(1),
    "random_state": rules.random_state(),
    "fit_intercept": rules.boolean(),
    "shuffle": rules.boolean(),
}
# The naive voted perceptron's T|D| models are refused above this size (a clear error
# rather than an allocation that swaps).
_MAX_NAIVE_BYTES = 2**33
# The voted prediction scores models in blocks of about this many values.
_VOTE_BLOCK_VALUES = 2**22
# First capacity of the storage that grows with the updates (doubled when full).
_FIRST_CAPACITY = 16


class _InputRecord(BaseEstimator):
    """What scikit-learn's validation records about the training input (its width and
    feature names), so that prediction checks new input against it."""


@dataclass
class StrategyResult:
    """One strategy's training: what it stores and the model it gives.

    Attributes
    ----------
    strategy : str
        One of :data:`STRATEGIES`.
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.
    coef_ : ndarray of shape (n_columns, n_features)
        The model's weights, shaped like the estimators' (one row for binary problems,
        one per class otherwise): the last weights for ``vanilla`` (as
        :class:`~perceptrons.Perceptron`), the exact mean of the weights after each
        example for the averaged strategies (as :class:`~perceptrons.AveragedPerceptron`)
        and for the voted ones (their models weighted by their votes).
    intercept_ : ndarray of shape (n_columns,)
        The intercepts, likewise.
    n_updates : int
        ``U``, the number of updates (mistakes) over all epochs.
    n_examples : int
        ``T |D|``, the number of examples visited.
    storage : dict of str to ndarray
        What the strategy keeps, in the kernels' layout (one row per feature, the
        intercept last; see :mod:`perceptrons._kernels.strategies`): ``weights``
        always; ``models`` (and ``votes`` for the improved schemes) for the voted and
        improved averaged strategies, ``sum`` for ``averaged_naive``, ``log``,
        ``index`` and ``value`` (the sparse updates) for ``averaged_delta``, ``aux`` for
        ``averaged_fastest``. Only the filled part of a grown buffer.
    train_seconds : float
        Time spent in the compiled training, final sums included (validation and
        drawing the visiting orders excluded). A process's first call of a strategy on
        a kind of input (dense or CSR, binary or multiclass) also compiles its kernels
        or loads them from Numba's cache: time a second call.
    """

    strategy: str
    classes_: np.ndarray = field(repr=False)
    coef_: np.ndarray = field(repr=False)
    intercept_: np.ndarray = field(repr=False)
    n_updates: int
    n_examples: int
    storage: dict[str, np.ndarray] = field(repr=False)
    train_seconds: float
    _record: _InputRecord = field(repr=False)

    @property
    def stored_bytes(self) -> int:
        """Bytes held by ``storage``: the strategy's own memory."""
        return int(sum(array.nbytes for array in self.storage.values()))

    @property
    def votes(self) -> np.ndarray | None:
        """Each stored model's votes for the voted strategies (all 1 for the naive
        one), None otherwise."""
        if self.strategy == "voted_naive":
            return np.ones(self.storage["models"].shape[0], dtype=np.int64)
        if self.strategy == "voted_improved":
            return self.storage["votes"]
        return None

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Scores of the model, or the vote for the voted strategies.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            ``X @ coef_.T + intercept_``, raveled for binary problems. For the voted
            strategies, as :class:`~perceptrons.VotedPerceptron`'s ``"vote"`` rule:
            binary, ``Σ_k votes_k sign(score_k) / Σ_k votes_k`` (a score ``<= 0`` counts
            as -1); multiclass, each class's share of the votes, a model voting for its
            argmax (ties to the lowest class).
        """
        X = _validation.validate_prediction_data(self._record, X)
        if self.strategy in _VOTED:
            votes = self.votes
            assert votes is not None
            return _vote(self.storage["models"], votes, X)
        scores = np.asarray(X @ self.coef_.T) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict a label for each sample.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples to classify.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Binary: ``classes_[1]`` for a positive :meth:`decision_function`, else
            ``classes_[0]``; multiclass: its argmax, ties to the lowest class.
        """
        return _validation.predict_in_batches(self.decision_function, self.classes_, X)


def _vote(models: np.ndarray, votes: np.ndarray, X: Any) -> np.ndarray:
    """The vote of ``models`` (kernel layout, one per row of ``models``) on ``X``."""
    n_models = models.shape[0]
    total = float(votes.sum())
    multiclass = models.ndim == 3
    n_classes = models.shape[2] if multiclass else 1
    # (n_features, n_models * n_classes): one product scores every model.
    flat = models[:, :-1].reshape(n_models, -1, n_classes).transpose(1, 0, 2)
    flat = flat.reshape(models.shape[1] - 1, n_models * n_classes)
    bias = models[:, -1].reshape(n_models * n_classes)
    out = np.zeros((X.shape[0], n_classes) if multiclass else X.shape[0])
    step = max(1, _VOTE_BLOCK_VALUES // max(1, n_models * n_classes))
    weights = votes.astype(np.float64)
    for start in range(0, X.shape[0], step):
        block = X[start : start + step]
        scores = np.asarray(block @ flat) + bias
        if multiclass:
            best = scores.reshape(-1, n_models, n_classes).argmax(axis=2)  # ties: lowest
            tally = np.zeros((best.shape[0], n_classes))
            for k in range(n_classes):
                tally[:, k] = (best == k) @ weights
            out[start : start + step] = tally / total if total > 0 else tally
        else:
            signs = np.where(scores > 0, 1.0, -1.0)
            out[start : start + step] = signs @ weights / total if total > 0 else -1.0
    return out


def _grown(array: np.ndarray, filled: int, capacity: int) -> np.ndarray:
    """A zeroed copy of ``array`` with ``capacity`` rows holding its first ``filled``."""
    grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[:filled] = array[:filled]
    return grown


def _train_models(
    kernel: Callable[..., Any], call: dict[str, Any], weights: np.ndarray, n_total: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """The improved schemes: the models after each update, grown by doubling."""
    models = np.zeros((_FIRST_CAPACITY, *weights.shape))
    votes = np.zeros(_FIRST_CAPACITY, dtype=np.int64)
    start, k = 0, 0
    while True:
        start, k = kernel(**call, start=start, models=models, votes=votes, k=k)
        if start == n_total:
            return models[: k + 1], votes[: k + 1], k
        models = _grown(models, k + 1, 2 * models.shape[0])
        votes = _grown(votes, k + 1, 2 * votes.shape[0])


def _row_nnz(rows: Any, i: int) -> int:
    """Nonzeros of example ``i`` of the kernels' ``rows`` (dense, or the CSR triple)."""
    if isinstance(rows, tuple):
        indptr = rows[2]
        return int(indptr[i + 1] - indptr[i])
    return int(np.count_nonzero(rows[i]))


def _train_deltas(
    kernel: Callable[..., Any],
    call: dict[str, Any],
    weights: np.ndarray,
    n_total: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The Δw scheme: the sparse updates, each buffer grown by doubling when full."""
    log = np.zeros((_FIRST_CAPACITY, 2 if weights.ndim == 1 else 4), dtype=np.int64)
    index = np.zeros(_FIRST_CAPACITY * 4, dtype=np.int64)
    value = np.zeros(_FIRST_CAPACITY * 4)
    start, u = 0, 0
    while True:
        start, u = kernel(**call, start=start, u=u, log=log, index=index, value=value)
        end = int(log[u - 1, 1]) if u else 0
        if start == n_total:
            return log[:u], index[:end], value[:end], u
        if u == log.shape[0]:
            log = _grown(log, u, 2 * u)
        else:  # room for the update that did not fit: its example's nonzeros and the bias
            capacity = max(
                2 * index.shape[0], end + _row_nnz(call["rows"], call["order"][start]) + 1
            )
            index = _grown(index, end, capacity)
            value = _grown(value, end, capacity)


def _train(
    strategy: str,
    rows: Any,
    targets: np.ndarray,
    order: np.ndarray,
    shape: tuple[int, ...],
    bias_feature: float,
) -> tuple[np.ndarray, int, dict[str, np.ndarray]]:
    """Run ``strategy``'s kernels: ``(model in kernel layout, U, storage)``."""
    binary = len(shape) == 1
    kind = "binary" if binary else "multiclass"
    weights = np.zeros(shape)
    n_total = order.shape[0]
    call = {"rows": rows, "y": targets, "order": order, "bias_feature": bias_feature}
    call["weights"] = weights
    if strategy == "vanilla":
        n = getattr(_kernels, f"vanilla_{kind}")(**call)
        return weights.copy(), int(n), {"weights": weights}
    if strategy == "voted_naive":
        models = np.zeros((n_total, *shape))
        n = getattr(_kernels, f"voted_naive_{kind}")(**call, models=models)
        return weights.copy(), int(n), {"weights": weights, "models": models}
    if strategy in ("voted_improved", "averaged_improved"):
        kernel = getattr(_kernels, f"models_after_updates_{kind}")
        models, votes, n = _train_models(kernel, call, weights, n_total)
        storage = {"weights": weights, "models": models, "votes": votes}
        if strategy == "voted_improved":
            return weights.copy(), n, storage
        total = np.zeros(weights.size)
        _kernels.vote_weighted_sum(models.reshape(models.shape[0], -1), votes, n + 1, total)
        return total.reshape(shape) / n_total, n, storage
    if strategy == "averaged_naive":
        total = np.zeros(shape)
        n = getattr(_kernels, f"averaged_naive_{kind}")(**call, total=total)
        return total / n_total, int(n), {"weights": weights, "sum": total}
    if strategy == "averaged_delta":
        kernel = getattr(_kernels, f"delta_updates_{kind}")
        log, index, value, n = _train_deltas(kernel, call, weights, n_total)
        total = np.zeros(shape)
        getattr(_kernels, f"delta_sum_{kind}")(log, n, index, value, n_total, total)
        storage = {"weights": weights, "log": log, "index": index, "value": value}
        return total / n_total, n, storage
    aux = np.zeros(shape)
    n = getattr(_kernels, f"fastest_{kind}")(**call, aux=aux)
    return weights - aux / n_total, int(n), {"weights": weights, "aux": aux}


def train_strategy(
    strategy: str,
    X: ArrayLike,
    y: ArrayLike,
    *,
    max_epochs: int = 10,
    random_state: int | np.random.RandomState | None = None,
    fit_intercept: bool = True,
    shuffle: bool = True,
) -> StrategyResult:
    """Train the perceptron with one strategy of the cost table.

    The examples are visited as :class:`~perceptrons.Perceptron`,
    :class:`~perceptrons.AveragedPerceptron` and :class:`~perceptrons.VotedPerceptron`
    visit them with the same ``random_state``: epoch ``e`` in the ``e``-th
    permutation drawn from ``check_random_state(random_state)``. Every strategy thus
    makes the same updates; they differ in what they store and compute around them.

    Parameters
    ----------
    strategy : str
        One of :data:`STRATEGIES`: ``"vanilla"``; ``"voted_naive"`` (a model after
        every example, ``T|D|`` of them) or ``"voted_improved"`` (a model after every
        update, with its votes; Freund & Schapire 1999); ``"averaged_naive"`` (add the
        weights to a running sum after every example), ``"averaged_improved"`` (the
        models after every update with their survival counts, summed at the end),
        ``"averaged_delta"`` (the sparse updates with the time they were made, each
        weighted by its remaining life at the end) or ``"averaged_fastest"`` (an
        auxiliary vector and a counter, Daumé 2006).
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Training data; CSR input is used as it is.
    y : array-like of shape (n_samples,)
        Labels, at least two distinct values; more than two train the multiclass
        perceptron (``+x`` to the gold class, ``-x`` to the predicted one).
    max_epochs : int, default=10
        ``T``, the number of passes over the data.
    random_state : int, RandomState instance or None, default=None
        Seeds the visiting orders.
    fit_intercept : bool, default=True
        Learn a bias, as the weight of a constant feature of value 1.
    shuffle : bool, default=True
        A fresh random order every epoch; otherwise the given order.

    Returns
    -------
    result : StrategyResult
        What the strategy stores, its model, ``n_updates``, ``stored_bytes`` and the
        training time.

    Raises
    ------
    ValueError
        For an unknown strategy, a bad parameter or bad input (one class, a regression
        target, non-finite values, a malformed sparse matrix), and when the naive voted
        perceptron's ``T|D|`` models would exceed 8 GiB.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from perceptrons import AveragedPerceptron
    >>> from perceptrons.complexity import train_strategy
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> naive = train_strategy("averaged_naive", X, y, max_epochs=3, random_state=0)
    >>> model = AveragedPerceptron(max_epochs=3, random_state=0).fit(X, y)
    >>> bool(np.allclose(naive.coef_, model.coef_, rtol=1e-9))
    True
    >>> voted = train_strategy("voted_improved", X, y, max_epochs=3, random_state=0)
    >>> voted.storage["models"].shape[0] == voted.n_updates + 1  # v_0 = 0 and one per update
    True
    >>> float(np.mean(voted.predict(X) == y)) > 0.8  # the majority vote of the models
    True
    """
    settings = {
        "strategy": strategy,
        "max_epochs": max_epochs,
        "random_state": random_state,
        "fit_intercept": fit_intercept,
        "shuffle": shuffle,
    }
    for name, rule in _RULES.items():
        if not rule.accepts(settings[name]):
            raise ValueError(
                f"train_strategy: {name} must be {rule.description}, got {settings[name]!r}."
            )
    record = _InputRecord()
    data, labels = _validation.validate_training_data(record, X, y, reset=True)
    classes = _validation.label_set(labels, None, record, incremental=False)
    codes = _validation.encode(classes, labels, record)
    n_samples, n_features = data.shape
    shape: tuple[int, ...] = (n_features + 1,)
    targets = np.where(codes == 1, 1.0, -1.0)
    if len(classes) > 2:
        targets, shape = codes, (n_features + 1, len(classes))
    n_total = n_samples * max_epochs
    if strategy == "voted_naive" and n_total * int(np.prod(shape)) * 8 > _MAX_NAIVE_BYTES:
        raise ValueError(
            f"train_strategy: voted_naive would store {n_total} models of "
            f"{int(np.prod(shape))} weights ({n_total * int(np.prod(shape)) * 8 / 2**30:.1f} "
            "GiB), more than 8 GiB; use voted_improved, which stores the same votes."
        )
    rng = check_random_state(random_state)
    rows_index = np.arange(n_samples)
    orders = [rng.permutation(rows_index) if shuffle else rows_index for _ in range(max_epochs)]
    order = np.ascontiguousarray(np.concatenate(orders), dtype=np.int64)
    rows = (data.data, data.indices, data.indptr) if sp.issparse(data) else data
    began = time.perf_counter()
    model, n_updates, storage = _train(
        strategy, rows, targets, order, shape, 1.0 if fit_intercept else 0.0
    )
    seconds = time.perf_counter() - began
    if strategy in _VOTED:  # the mean of the voted models, outside the timed training
        models = storage["models"]
        votes = np.ones(models.shape[0]) if strategy == "voted_naive" else storage["votes"]
        model = np.tensordot(votes.astype(np.float64), models, axes=1) / n_total
    if model.ndim == 1:
        model = model[:, np.newaxis]
    return StrategyResult(
        strategy=strategy,
        classes_=classes,
        coef_=np.ascontiguousarray(model[:-1].T),
        intercept_=model[-1].copy(),
        n_updates=int(n_updates),
        n_examples=int(n_total),
        storage=storage,
        train_seconds=seconds,
        _record=record,
    )
