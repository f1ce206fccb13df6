"""The algorithm of iterative parameter mixing, apart from what runs it.

The shards' data, the pure epoch of one shard (:func:`shard_epoch`), the mixing of the
shards' weights (:func:`mix`), how rows are dealt and generators seeded, and the epoch
loop (:class:`Training`). The runners (:mod:`perceptrons.parallel.threads`,
:mod:`perceptrons.parallel.dask`) only say where each shard's epoch runs. The estimators
are driven through their engine API (:mod:`perceptrons._online`): this module imports no
estimator and nothing of Dask. The algorithm is documented in :mod:`perceptrons.parallel`.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils import check_random_state

from perceptrons import _params as rules
from perceptrons import _validation
from perceptrons._online import non_finite_message

if TYPE_CHECKING:
    from perceptrons._online import OnlineLinearClassifier, TrainingState

#: The mixing rules: the mean of the shards' weights, or their mean weighted by mistakes.
MIXINGS = ("uniform", "mistakes")

#: A generator's state as ``RandomState.get_state`` gives it (a tuple, in legacy form).
RngState: TypeAlias = tuple[Any, ...] | dict[str, Any]


@dataclass
class ShardData:
    """One shard, validated: features in the kernels' layout and labels as codes.

    ``rows`` lists the examples of ``X`` that are the shard's, in their original order,
    or is None when the shard is the whole of ``X``: threads share one ``X`` (no copy),
    while a shard sent to a worker holds only its own rows. ``sample_weight`` is the
    weight of every row of ``X`` (``sample_weight[i] * class_weight[y_i]``), or None
    when every weight is 1.
    """

    X: Any
    codes: np.ndarray
    rows: np.ndarray | None = None
    sample_weight: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0] if self.rows is None else self.rows.shape[0])

    def order(self, rng: np.random.RandomState | None) -> np.ndarray:
        """The epoch's visiting order (indices into ``X``): shuffled when ``rng`` is
        given, as the serial fit draws it, ``rng.permutation(np.arange(n))``."""
        positions = np.arange(self.n_samples)
        if rng is not None:
            positions = rng.permutation(positions)
        return positions if self.rows is None else self.rows[positions]


@dataclass(frozen=True)
class Plan:
    """What every shard task needs besides its data: small, sent with each task."""

    estimator_class: type
    params: dict[str, Any]
    classes: np.ndarray
    n_features: int

    averaged: bool

    @classmethod
    def of(cls, estimator: OnlineLinearClassifier, classes: np.ndarray, n_features: int) -> Plan:
        # The generator travels on its own (as its state); the estimator built on the
        # worker never draws from it.
        params = {**estimator.get_params(deep=False), "random_state": None}
        plan = cls(type(estimator), params, np.asarray(classes), int(n_features), False)
        averaged = plan.estimator().new_training_state(0).averaged
        return cls(type(estimator), params, plan.classes, plan.n_features, averaged)

    def estimator(self) -> OnlineLinearClassifier:
        """A fresh estimator knowing the classes: one per task, never shared by threads."""
        estimator = self.estimator_class(**self.params)
        estimator.classes_ = self.classes
        estimator.n_features_in_ = self.n_features
        return estimator

    def zeros(self) -> TrainingState:
        return self.estimator().new_training_state(self.n_features)

    def new_slack(self, n_samples: int) -> np.ndarray | None:
        """The Δ trick's weights for a shard's examples, or None without it."""
        if self.params["delta"] == 0:
            return None
        estimator = self.estimator()
        return estimator.new_slack(estimator.new_training_state(0), n_samples)


@dataclass
class ShardResult:
    """What a shard's epoch sends back to be mixed."""

    weights: np.ndarray
    sums: np.ndarray | None  # Σ of the weights after each example (averaged models)
    mistakes: int
    examples: int
    rng_state: RngState | None
    slack: np.ndarray | None
    # The examples' total weight; None: every weight 1 (the count is ``examples``).
    count: int | float | None = None


@dataclass
class Workspace:
    """A shard's arrays, reused from epoch to epoch by a thread (a Dask task allocates
    its own): allocating and faulting in fresh weight-sized arrays every epoch costs as
    much as a sparse epoch itself."""

    state: TrainingState
    sums: np.ndarray | None

    @classmethod
    def allocate(cls, plan: Plan) -> Workspace:
        state = plan.zeros()
        return cls(state, np.empty_like(state.weights) if plan.averaged else None)


def shard_epoch(
    shard: ShardData,
    start: np.ndarray,
    plan: Plan,
    rng_state: RngState | None,
    slack: np.ndarray | None,
    workspace: Workspace | None = None,
) -> ShardResult:
    """One epoch of the estimator's own kernel over one shard, from the mixed ``start``.

    A pure function of its arguments (nothing given is modified, except ``workspace``,
    whose arrays the result then holds), so that it can run in a thread, on any
    worker, and again after a failure with the same result.
    """
    workspace = Workspace.allocate(plan) if workspace is None else workspace
    state = workspace.state
    np.copyto(state.weights, start)
    state.aux.fill(0.0)
    state.count = 0
    estimator = plan.estimator()
    n = shard.n_samples
    rng = None
    if rng_state is not None:
        rng = np.random.RandomState()
        rng.set_state(rng_state)
    order = shard.order(rng)
    if rng is not None:
        rng_state = rng.get_state()
    # The Δ trick's weights are indexed by example: only shards holding their own rows.
    slack = estimator.new_slack(state, shard.X.shape[0]) if slack is None else slack.copy()
    record = estimator.run_epoch(
        state, shard.X, shard.codes, order, slack=slack, sample_weight=shard.sample_weight
    )
    # The averaging trick started at count 0: the sum of the weights after each of the
    # shard's n examples (each counted as many times as its weight).
    sums = state.running_sum(out=workspace.sums) if plan.averaged else None
    return ShardResult(
        weights=state.weights,
        sums=sums,
        mistakes=int(record["mistakes"]),
        examples=n,
        count=state.count,
        rng_state=rng_state,
        slack=slack if slack.shape[0] else None,
    )


def mix(results: Sequence[ShardResult], mixing: str) -> np.ndarray:
    """Σ μ_i w_i, in shard order (the same arithmetic for threads and Dask)."""
    mistakes = np.array([r.mistakes for r in results], dtype=np.float64)
    if mixing == "mistakes" and mistakes.sum() > 0:
        mu = mistakes / mistakes.sum()
    else:
        mu = np.full(len(results), 1.0 / len(results))
    mixed = np.multiply(results[0].weights, mu[0])
    term = np.empty_like(mixed) if len(results) > 1 else None
    for weight, result in zip(mu[1:], results[1:], strict=True):
        mixed += np.multiply(result.weights, weight, out=term)
    return mixed


def check_estimator(estimator: Any, mixing: str) -> None:
    """Raise a ValueError unless ``estimator`` can be trained by mixing with ``mixing``."""
    if not getattr(estimator, "mixable", False):
        raise ValueError(
            f"parameter mixing supports Perceptron and AveragedPerceptron, not "
            f"{type(estimator).__name__}"
            + (
                " (the voted perceptron keeps every intermediate weight vector: it cannot "
                "be mixed)."
                if type(estimator).__name__ == "VotedPerceptron"
                else "."
            )
        )
    estimator.check_params()
    if estimator.early_stopping and estimator.validation_fraction is not None:
        raise ValueError(
            "parameter mixing does not support early_stopping with a validation_fraction "
            "(early_stopping alone, which stops after an epoch without mistakes, is fine)."
        )
    if not isinstance(mixing, str) or mixing not in MIXINGS:
        raise ValueError(f"mixing must be one of {MIXINGS}, got {mixing!r}.")


def check_partitions(n_partitions: Any, n_samples: int | None = None) -> int:
    if not rules.integer(1).accepts(n_partitions):
        raise ValueError(f"n_partitions must be an int >= 1, got {n_partitions!r}.")
    if n_samples is not None and n_partitions > n_samples:
        raise ValueError(
            f"n_partitions={n_partitions} is more than the {n_samples} training examples: "
            "every partition needs at least one."
        )
    return int(n_partitions)


def generators(random_state: Any, n_shards: int) -> tuple[np.random.RandomState, list]:
    """The generator that deals rows to shards, and each shard's generator (see the
    module documentation): shard 0 uses ``check_random_state(random_state)`` itself."""
    base = check_random_state(random_state)
    key = copy.deepcopy(base).randint(np.iinfo(np.int32).max)
    children = np.random.SeedSequence(key).spawn(n_shards)
    streams = [base] + [np.random.RandomState(c.generate_state(4)) for c in children[1:]]
    return np.random.RandomState(children[0].generate_state(4)), streams


def split_rows(n_samples: int, n_shards: int, dealer: np.random.RandomState | None) -> list:
    """Near-equal shards of row indices: contiguous, or dealt by ``dealer``'s permutation
    (each shard sorted, so rows keep their original relative order)."""
    if n_shards == 1:
        return [np.arange(n_samples)]
    if dealer is None:
        return np.array_split(np.arange(n_samples), n_shards)
    return [np.sort(part) for part in np.array_split(dealer.permutation(n_samples), n_shards)]


@dataclass
class Training:
    """The epoch loop of parameter mixing, whatever runs the shards' epochs."""

    estimator: OnlineLinearClassifier
    plan: Plan
    mixing: str
    run_epoch: Callable[[int, np.ndarray, list, list], list[ShardResult]]
    streams: list[np.random.RandomState]
    shard_sizes: list[int]
    history: list[dict[str, Any]] = field(default_factory=list)

    def epochs(self, publish_each_epoch: bool = True) -> Iterator[dict[str, Any]]:
        """Train, yielding each epoch's record; the estimator is a fitted model after the
        last epoch and, with ``publish_each_epoch``, after every one."""
        estimator, plan = self.estimator, self.plan
        weights = plan.zeros().weights
        sums = np.zeros_like(weights) if plan.averaged else None
        count: int | float = 0
        shuffle = estimator.shuffle
        rng_states: list[RngState | None] = [
            s.get_state() if shuffle else None for s in self.streams
        ]
        slacks = [plan.new_slack(n) for n in self.shard_sizes]
        estimator.history_ = []
        for epoch in range(1, estimator.max_epochs + 1):
            start = time.perf_counter()
            results = self.run_epoch(epoch, weights, rng_states, slacks)
            weights = mix(results, self.mixing)
            if not np.isfinite(weights).all() or any(
                r.sums is not None and not np.isfinite(r.sums).all() for r in results
            ):
                raise ValueError(non_finite_message(type(estimator).__name__, epoch))
            for result in results:
                count += result.examples if result.count is None else result.count
                if sums is not None:
                    sums += result.sums
            rng_states = [r.rng_state for r in results]
            slacks = [r.slack for r in results]
            shard_mistakes = [r.mistakes for r in results]
            record = {
                "epoch": epoch,
                "mistakes": sum(shard_mistakes),
                "examples": sum(r.examples for r in results),
                "shard_mistakes": shard_mistakes,
            }
            estimator.history_.append(record)
            stop = estimator.early_stopping and record["mistakes"] == 0
            if publish_each_epoch or stop or epoch == estimator.max_epochs:
                self._publish(weights, sums, count, epoch, rng_states)
            self.history.append({**record, "seconds": time.perf_counter() - start})
            if estimator.verbose:
                print(
                    f"{type(estimator).__name__} (mixing {len(results)} shards) epoch "
                    f"{epoch}: {record['mistakes']} mistakes in {record['examples']} "
                    f"examples {shard_mistakes}",
                    flush=True,
                )
            yield self.history[-1]
            if stop:
                break

    def _publish(self, weights, sums, count, n_iter, rng_states) -> None:
        """Make the estimator a fitted model: the mixed weights, and ``aux`` chosen so
        that ``weights - aux / count`` is the mean of every shard's weight vectors."""
        estimator = self.estimator
        estimator.classes_ = self.plan.classes
        estimator.n_features_in_ = self.plan.n_features
        if sums is None:
            aux = self.plan.zeros().aux
        else:
            aux = count * weights - sums
        estimator.import_state(
            {"weights": weights.copy(), "aux": aux}, {"count": count, "n_iter": n_iter}
        )
        # Shard 0's generator: with one shard, exactly the serial fit's after training.
        if rng_states[0] is not None:
            self.streams[0].set_state(rng_states[0])
        estimator.random_state_ = self.streams[0]


def _prepare_arrays(
    estimator: OnlineLinearClassifier, X: ArrayLike, y: ArrayLike, sample_weight: Any = None
) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray | None]:
    """Validate like the serial fit (which sets ``n_features_in_``, feature names...);
    the examples' weights ``sample_weight[i] * class_weight[y_i]``, or None."""
    data, labels = _validation.validate_training_data(estimator, X, y, reset=True)
    classes = _validation.label_set(labels, None, estimator, incremental=False)
    weights = _validation.example_weights(
        estimator, sample_weight, classes, labels, incremental=False
    )
    estimator.classes_ = classes
    return data, estimator.encode_labels(labels), classes, weights


def array_shards(
    estimator: OnlineLinearClassifier,
    X: ArrayLike,
    y: ArrayLike,
    n_partitions: int,
    *,
    share: bool = False,
    sample_weight: ArrayLike | None = None,
) -> tuple[list[ShardData], Plan, list[np.random.RandomState]]:
    """The validated shards of in-memory arrays, the plan and the shards' generators.

    ``share``: the shards are views of the same ``X`` (for threads; not with the Δ
    trick, whose per-example weights each shard then keeps for its own rows only).
    ``sample_weight`` (and the estimator's ``class_weight``): each shard carries the
    weights of its own rows.
    """
    data, codes, classes, weights = _prepare_arrays(estimator, X, y, sample_weight)
    n_partitions = check_partitions(n_partitions, data.shape[0])
    dealer, streams = generators(estimator.random_state, n_partitions)
    parts = split_rows(data.shape[0], n_partitions, dealer if estimator.shuffle else None)
    if n_partitions == 1:
        shards = [ShardData(data, codes, sample_weight=weights)]
    elif share and estimator.delta == 0:
        shards = [ShardData(data, codes, rows, weights) for rows in parts]
    else:
        shards = [
            ShardData(data[rows], codes[rows], None, None if weights is None else weights[rows])
            for rows in parts
        ]
    return shards, Plan.of(estimator, classes, data.shape[1]), streams
