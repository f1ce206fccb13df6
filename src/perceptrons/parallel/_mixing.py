"""The algorithm of iterative parameter mixing, apart from what runs it.

The rules and their checks, the mixing of the shards' weights (:func:`mix_into`), how
rows are dealt and generators seeded, and the epoch loop (:class:`Training`); a shard's
side -- its data, the plan, the pure epoch of one shard
(:func:`~perceptrons.parallel._shards.shard_epoch`) -- is
:mod:`perceptrons.parallel._shards`. The runners (:mod:`perceptrons.parallel.threads`,
:mod:`perceptrons.parallel.dask`) only say where each shard's epoch runs. The estimators
are driven through their engine (:class:`perceptrons._engine.Engine`, handed out by
``estimator._engine()``) and trained by the one epoch loop,
:func:`perceptrons._engine.run_epochs`, an epoch being "run the shards, then mix": this
module imports no estimator and nothing of Dask. The algorithm is documented in
:mod:`perceptrons.parallel`.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike

from perceptrons import _params as rules
from perceptrons._engine import hold_out, run_epochs
from perceptrons._input import check_random_state
from perceptrons._kernels.mixing import add_shard, apply_mix, union_rows
from perceptrons._states import AdaptiveState, PerceptronState, all_finite, as_count
from perceptrons.parallel._names import MIXINGS
from perceptrons.parallel._shards import Plan, RngState, ShardData, ShardResult, Start, engine_of

if TYPE_CHECKING:
    from perceptrons._states import TrainingState
    from perceptrons.linear._online import OnlineLinearClassifier


def resolve_mixing(estimator: Any, mixing: str) -> str:
    """The rule ``mixing`` stands for with ``estimator`` ("auto" resolved)."""
    if mixing == "auto":
        return "mistakes" if engine_of(estimator).logs_updates else "uniform"
    return mixing


def mixing_refusal(estimator: Any) -> str | None:
    """Why parameter mixing cannot train ``estimator`` as configured, or None: each
    model of the package says why in its own ``_mixing_refusal``."""
    from perceptrons._base import Trainable  # the models' base, imported with them

    if not isinstance(estimator, Trainable):
        return f"{type(estimator).__name__}, which is not an online learner of this package"
    return estimator._mixing_refusal()


def mixing_weights(results: Sequence[ShardResult], mixing: str) -> np.ndarray:
    """μ_i of each shard: ``1 / n``, ``k_i / Σ k`` (uniform without updates) or 1.

    ``k_i`` is the number of updates shard ``i`` made: its mistakes for the perceptron
    (McDonald et al.'s weighting), every update on a margin violation for the margin
    rules (how far the shard moved)."""
    updates = np.array([r.updates for r in results], dtype=np.float64)
    if mixing == "sum":
        return np.ones(len(results))
    if mixing == "mistakes" and updates.sum() > 0:
        return updates / updates.sum()
    return np.full(len(results), 1.0 / len(results))


_NO_SUMS = np.zeros((0, 0))


def _columns(array: np.ndarray) -> np.ndarray:
    """A weight array as rows × columns (a binary model's vector as one column)."""
    return array.reshape(-1, 1) if array.ndim == 1 else array


@dataclass
class RowBuffers:
    """Scratch arrays of :func:`mix_into`, one entry per weight row, allocated once per
    fit so that a mix costs what the changed rows cost, not the number of features."""

    marks: np.ndarray
    union: np.ndarray
    positions: np.ndarray

    @classmethod
    def allocate(cls, n_rows: int) -> RowBuffers:
        return cls(
            np.zeros(n_rows, dtype=np.uint8),
            np.empty(n_rows, dtype=np.int64),
            np.empty(n_rows, dtype=np.int64),
        )


def mix_statistics(state: TrainingState, results: Sequence[ShardResult]) -> None:
    """Give the mixed ``state`` the statistics of an adaptive rule (a variance, per-feature
    step sizes; see :class:`~perceptrons._states.AdaptiveState`) from its shards' epochs.

    One shard: its own statistics, so the model continues exactly as the serial fit.
    Several: each shard keeps its statistics for its own next epoch (only the weights
    are mixed); the published model takes, at every row a shard changed this epoch,
    the mean of the statistics of the shards that changed it (other rows keep theirs),
    and the mean of their scalars: what a later ``partial_fit`` or warm start goes on
    from.
    """
    received = [r for r in results if r.stats is not None]
    if not received or not isinstance(state, AdaptiveState):
        return
    if len(received) == 1:
        (result,) = received
        where: Any = slice(None) if result.rows is None else result.rows
        state.stats[:, where] = result.stats
        state.scalars[:] = result.scalars
        return
    total = np.zeros_like(state.stats)
    counts = np.zeros(state.stats.shape[1])
    for result in received:
        where = slice(None) if result.rows is None else result.rows
        total[:, where] += result.stats
        counts[where] += 1
    touched = counts > 0
    shape = (1, int(touched.sum())) + (1,) * (state.stats.ndim - 2)
    state.stats[:, touched] = total[:, touched] / counts[touched].reshape(shape)
    state.scalars[:] = np.mean([r.scalars for r in received if r.scalars is not None], axis=0)


def mix_into(
    state: TrainingState,
    results: Sequence[ShardResult],
    mixing: str,
    single: bool,
    buffers: RowBuffers | None = None,
) -> tuple[np.ndarray | None, np.ndarray]:
    """Mix the shards' epochs into ``state`` (the mixed weights, the plain ``aux`` and
    the count); return the rows changed (sorted, or None for all of them) and the
    change of the weights at those rows.

    With ``δ_i`` shard i's change of the weights and ``μ_i`` its mixing weight, the
    mixed weights are ``W + Σ μ_i δ_i``. The average: the sum of the weights after each
    example, ``count * W - A``, grows by the shards' sums ``Σ_i (n_i W_i - A_i)``, so
    that ``A' = A + (count + N) D - Σ_i (n_i δ_i - A_i)`` with ``D = Σ μ_i δ_i`` and
    ``N = Σ n_i``: rows that no shard changed keep ``W`` and ``A`` exactly.
    One shard (``single``) is the serial state itself: its rows are copied.
    """
    if single:
        (result,) = results
        if not all_finite(result.weights) or (
            result.aux is not None and not all_finite(result.aux)
        ):
            raise FloatingPointError
        where: Any = slice(None) if result.rows is None else result.rows
        change = result.weights - state.weights[where]
        state.weights[where] = result.weights
        if result.aux is not None:
            state.aux[where] = result.aux
        state.load_values(result.values)
        return result.rows, change
    n_rows = state.weights.shape[0]
    dense = any(r.rows is None for r in results)
    if dense:
        union = positions = np.arange(n_rows)
    else:
        buffers = RowBuffers.allocate(n_rows) if buffers is None else buffers
        positions = buffers.positions
        n = union_rows(
            np.concatenate([r.rows for r in results]), buffers.marks, buffers.union, positions
        )
        union = buffers.union[:n].copy()
    weights = _columns(state.weights)
    aux = _columns(state.aux) if state.averaged else _NO_SUMS
    change = np.zeros((union.shape[0], weights.shape[1]))
    sums = np.zeros_like(change) if state.averaged else _NO_SUMS
    total: int | float = 0
    for mu, result in zip(mixing_weights(results, mixing), results, strict=True):
        at = positions if result.rows is None else positions[result.rows]
        shard_aux = _NO_SUMS if result.aux is None else _columns(result.aux)
        add_shard(
            change,
            sums,
            weights,
            union,
            at,
            _columns(result.weights),
            shard_aux,
            float(mu),
            float(result.count),
        )
        total += result.count
    if not apply_mix(weights, aux, union, change, sums, float(state.count + total)):
        raise FloatingPointError
    state.count = as_count(state.count + total)
    return (None if dense else union), (change if state.weights.ndim == 2 else change[:, 0])


#: What an averaged model averages (see :class:`Plan`).
AVERAGES = ("examples", "mixes")


def check_estimator(
    estimator: Any, mixing: str, local_epochs: Any = 1, average: Any = "examples"
) -> None:
    """Raise a ValueError unless ``estimator`` can be trained by mixing with ``mixing``."""
    reason = mixing_refusal(estimator)
    if reason:
        raise ValueError(f"parameter mixing does not support {reason}.")
    engine = engine_of(estimator)
    engine.check_params()
    if not isinstance(mixing, str) or mixing not in MIXINGS:
        raise ValueError(f"mixing must be one of {MIXINGS}, got {mixing!r}.")
    if mixing == "mistakes" and not engine.logs_updates:
        raise ValueError(
            f"mixing='mistakes' weighs shards by their mistakes, which "
            f"{type(estimator).__name__} does not make (every example updates it); "
            "use 'uniform' or 'sum'."
        )
    if not rules.integer(1).accepts(local_epochs):
        raise ValueError(f"local_epochs must be an int >= 1, got {local_epochs!r}.")
    if not isinstance(average, str) or average not in AVERAGES:
        raise ValueError(f"average must be one of {AVERAGES}, got {average!r}.")
    if average == "mixes" and not engine.averaged:
        raise ValueError(
            f"average='mixes' needs an averaged model (AveragedPerceptron, "
            f"LogisticRegressionSGD(average=True)), not {type(estimator).__name__} "
            "predicting with its last weights."
        )


def check_shards(n_shards: Any, n_samples: int | None = None) -> int:
    """``n_shards`` as an int, checked (and against the examples there are to deal)."""
    if not rules.integer(1).accepts(n_shards):
        raise ValueError(f"n_shards must be an int >= 1, got {n_shards!r}.")
    if n_samples is not None and n_shards > n_samples:
        raise ValueError(
            f"n_shards={n_shards} is more than the {n_samples} training examples: "
            "every shard needs at least one."
        )
    return int(n_shards)


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


#: ``run_epoch(epoch, start, rng_states, slacks, whole_start)``: every shard's result, in
#: shard order; ``whole_start()`` gives the whole start for a shard whose trainer is new.
EpochRunner: TypeAlias = Callable[[int, Start, list, list, Callable[[], Start]], list[ShardResult]]


@dataclass
class Training:
    """Parameter mixing's training: its epochs -- run the shards' epochs, then mix --
    through the one epoch loop (:func:`perceptrons._engine.run_epochs`), whatever runs
    the shards' epochs. ``validation``: held-out ``(X, y[, sample_weight])`` scored
    after every mix, which ``early_stopping`` then follows (see :func:`array_shards`)."""

    estimator: OnlineLinearClassifier
    plan: Plan
    mixing: str
    run_epoch: EpochRunner
    streams: list[np.random.RandomState]
    shard_sizes: list[int]
    history: list[dict[str, Any]] = field(default_factory=list)
    validation: tuple[Any, ...] | None = None

    def epochs(self, publish_each_epoch: bool = True) -> Iterator[dict[str, Any]]:
        """Train, yielding each epoch's record; the estimator is a fitted model after the
        last epoch and, with ``publish_each_epoch``, after every one."""
        estimator = self.estimator
        mixed = _MixedEpochs(self)
        estimator.history_ = []
        name = type(estimator).__name__
        for record in run_epochs(
            mixed,
            max_epochs=estimator.max_epochs,
            history=estimator.history_,
            name=name,
            heading=f"{name} (mixing {len(self.shard_sizes)} shards)",
            verbose=bool(estimator.verbose),
            stopping=engine_of(estimator).stopping(),
            cause=engine_of(estimator).non_finite_cause,
            validation=self.validation,
            publish_each_epoch=publish_each_epoch,
        ):
            self.history.append({**record, **mixed.traffic})
            yield self.history[-1]


class _MixedEpochs:
    """Parameter mixing's epochs (:class:`perceptrons._engine.Epochs`): the mixed model
    (true weights, the average's aux in its plain form and the count; one shard: the
    serial state itself) and what each epoch sends and receives."""

    def __init__(self, training: Training) -> None:
        self.training = training
        plan = training.plan
        self.engine = engine_of(training.estimator)
        self.state = plan.zeros()
        self.changed: np.ndarray | None = None
        self.rng_states: list[RngState | None] = [
            s.get_state() if training.estimator.shuffle else None for s in training.streams
        ]
        self.slacks = [plan.new_slack(n) for n in training.shard_sizes]
        n_rows = self.state.weights.shape[0]
        self.mixes = np.zeros_like(self.state.weights) if plan.average == "mixes" else None
        self.buffers = RowBuffers.allocate(n_rows)
        self.finite = True
        self.traffic: dict[str, Any] = {}

    def _whole_start(self, epoch: int) -> Start:
        state = self.state
        if self.training.plan.single:
            return Start(epoch, None, state.weights, state.aux, state.values())
        return Start(epoch, None, state.weights)

    def run_epoch(self, epoch: int) -> dict[str, Any]:
        training, plan, state, changed = self.training, self.training.plan, self.state, self.changed
        began = time.perf_counter()
        if epoch == 1:  # the trainers' fresh states are the zero start already
            start = Start(1, np.empty(0, dtype=np.int64), state.weights[:0])
        elif changed is None and not plan.single:
            start = self._whole_start(epoch)
        elif plan.single:  # the shard's own state is the model
            start = Start(epoch, np.empty(0, dtype=np.int64), state.weights[:0])
        else:
            start = Start(epoch, changed, state.weights[changed])
        results = training.run_epoch(
            epoch, start, self.rng_states, self.slacks, lambda: self._whole_start(epoch)
        )
        try:
            changed, change = mix_into(state, results, training.mixing, plan.single, self.buffers)
        except FloatingPointError:
            self.finite = False
            return {}
        self.changed = changed
        mix_statistics(state, results)
        if self.mixes is not None:
            # Σ_k W_k = epoch * W - B: B grows by (epoch - 1) D at the changed rows.
            self.mixes[slice(None) if changed is None else changed] += (epoch - 1) * change
        self.rng_states = [r.rng_state for r in results]
        self.slacks = [r.slack for r in results]
        n_rows = state.weights.shape[0]
        self.traffic = {
            "seconds": time.perf_counter() - began,
            "changed_rows": n_rows if changed is None else int(changed.shape[0]),
            "bytes_sent": start.nbytes * len(results),
            "bytes_received": sum(r.nbytes for r in results),
        }
        record = self._record(results)
        # The model publish would form, counted without forming it (no copies).
        record["n_nonzero"] = self._published(epoch, own=False).n_nonzero()
        return record

    def _record(self, results: Sequence[ShardResult]) -> dict[str, Any]:
        """The epoch's record in the family's terms, with each shard's statistics
        (``shard_mistakes`` and ``shard_updates`` for the perceptrons,
        ``shard_log_loss`` for logistic regression)."""
        engine = self.engine
        total = sum(r.statistic for r in results)
        mistakes = sum(r.mistakes for r in results)
        record = engine.epoch_record(total, sum(r.examples for r in results), mistakes)
        shards = [engine.epoch_record(r.statistic, r.examples, r.mistakes) for r in results]
        for name in [key for key in record if key != "examples"]:
            record[f"shard_{name}"] = [shard[name] for shard in shards]
        return record

    def is_finite(self) -> bool:
        return self.finite

    def publish(self, n_iter: int) -> None:
        """Make the estimator a fitted model of the mixed state (with ``mixes``, the
        mean of the mixed weights of the ``n_iter`` epochs, ``W - mixes / n_iter``)."""
        training = self.training
        estimator = training.estimator
        estimator.classes_ = training.plan.classes
        estimator.n_features_in_ = training.plan.n_features
        self.engine.publish_state(self._published(n_iter, own=True), n_iter)
        # Shard 0's generator: with one shard, exactly the serial fit's after training.
        if self.rng_states[0] is not None:
            training.streams[0].set_state(self.rng_states[0])
        estimator.random_state_ = training.streams[0]

    def _published(self, n_iter: int, *, own: bool) -> TrainingState:
        """The state :meth:`publish` makes the model of, after ``n_iter`` epochs: with
        ``own``, arrays of its own, not the mixer's (which later epochs write to)."""
        state, mixes = self.state, self.mixes
        values = state.values() if self.training.plan.single else state.plain_values()
        if mixes is not None:
            aux = mixes * (state.count / n_iter)
        else:
            aux = state.aux.copy() if own else state.aux
        weights = state.weights.copy() if own else state.weights
        published = dataclasses.replace(state, weights=weights, aux=aux)
        if own and isinstance(published, AdaptiveState) and isinstance(state, AdaptiveState):
            published.stats, published.scalars = state.stats.copy(), state.scalars.copy()
        published.load_values(values)
        if isinstance(published, PerceptronState):
            published.slack = None  # the shards keep the Δ weights of their own examples
        return published

    def score(self, validation: tuple[Any, ...]) -> float:
        return float(self.training.estimator.score(*validation))


@dataclass
class ArrayShards:
    """In-memory arrays dealt out to shards: the shards, the plan, each shard's
    generator, the generator that dealt the rows (it deals them again each epoch with
    ``redeal``) and the held-out examples of ``early_stopping`` (or None)."""

    shards: list[ShardData]
    plan: Plan
    streams: list[np.random.RandomState]
    dealer: np.random.RandomState
    validation: tuple[Any, ...] | None


def array_shards(
    estimator: OnlineLinearClassifier,
    X: ArrayLike,
    y: ArrayLike,
    n_shards: int,
    *,
    share: bool = False,
    held_here: bool = False,
    sample_weight: ArrayLike | None = None,
    local_epochs: int = 1,
    average: str = "examples",
) -> ArrayShards:
    """The validated shards of in-memory arrays (see :class:`ArrayShards`).

    Validated like the serial fit (which sets ``n_features_in_``, feature names...).
    ``share``: the shards are views of the same ``X`` (for threads; not with the Δ
    trick, whose per-example weights each shard then keeps for its own rows only).
    ``sample_weight`` (and the estimator's ``class_weight``): each shard carries the
    weights of its own rows. ``held_here``: every shard's state lives in this process
    (threads), all checked against the memory budget before any shard is made.
    With ``early_stopping`` and a ``validation_fraction``,
    that share of the examples is held out first, drawn as the serial fit draws it
    (from shard 0's generator, before any shuffle): with one shard the training is
    the serial fit's, early stop included.
    """
    engine = engine_of(estimator)
    data, labels, weights = engine.training_data(X, y, sample_weight)
    # Before anything is made per shard (a generator each): no more shards than rows,
    # and, held here, every shard's state within memory.
    n_shards = check_shards(n_shards, data.shape[0])
    if held_here:
        engine.check_state_memory(data.shape[1], copies=n_shards + 1)
    codes = engine.encode_targets(labels)
    dealer, streams = generators(estimator.random_state, n_shards)
    validation: tuple[Any, ...] | None = None
    if engine.validation_fraction is not None:
        rows, held = hold_out(data.shape[0], engine.validation_fraction, codes, streams[0])
        validation = (data[held], labels[held])
        if weights is not None:
            validation += (weights[held],)
            weights = weights[rows]
        data, codes = data[rows], codes[rows]
    n_shards = check_shards(n_shards, data.shape[0])
    parts = split_rows(data.shape[0], n_shards, dealer if estimator.shuffle else None)
    if n_shards == 1:
        shards = [ShardData(data, codes, sample_weight=weights)]
    elif share and engine.delta == 0:
        shards = [ShardData(data, codes, rows, weights) for rows in parts]
    else:
        shards = [
            ShardData(data[rows], codes[rows], None, None if weights is None else weights[rows])
            for rows in parts
        ]
    plan = Plan.of(
        estimator,
        np.asarray(estimator.classes_),
        data.shape[1],
        n_shards=n_shards,
        local_epochs=local_epochs,
        average=average,
    )
    return ArrayShards(shards, plan, streams, dealer, validation)
