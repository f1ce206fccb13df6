"""A shard's side of iterative parameter mixing: what a thread or a Dask worker runs.

The shards' data (:class:`ShardData`), what every shard task needs besides it
(:class:`Plan`), the start an epoch begins from and the result it sends back to be
mixed (:class:`Start`, :class:`ShardResult`), and the shard's trainer, which keeps its
state from epoch to epoch so that only changed rows travel (:class:`ShardTrainer`,
:func:`shard_epoch`). The mixing itself, the dealing of rows and the epoch loop are in
:mod:`perceptrons.parallel._mixing`. Like it, this module imports no estimator and
nothing of Dask: the estimators are driven through their engine (:func:`engine_of`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from perceptrons._engine import Engine
from perceptrons._kernels.mixing import sorted_rows_of_examples
from perceptrons._states import AdaptiveState, as_count

if TYPE_CHECKING:
    from perceptrons._states import TrainingState
    from perceptrons.linear._online import OnlineLinearClassifier


def engine_of(estimator: Any) -> Engine:
    """The online engine of ``estimator``
    (:func:`~perceptrons.parallel._mixing.mixing_refusal` says why an estimator has
    none)."""
    return estimator._engine()


#: A generator's state as ``RandomState.get_state`` gives it (a tuple, in legacy form).
RngState: TypeAlias = tuple[Any, ...] | dict[str, Any]


# A shard sends its whole weight matrix back when it changed more than this share of the
# rows: indices would then cost more than they save.
DENSE_SHARE = 0.5


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

    def all_rows(self) -> np.ndarray:
        """Every example of the shard, as indices into ``X``."""
        return np.arange(self.n_samples) if self.rows is None else self.rows

    def pieces(
        self, rng: np.random.RandomState | None, engine: Engine
    ) -> Iterator[tuple[Any, np.ndarray, np.ndarray, np.ndarray | None]]:
        """The epoch's pieces ``(X, codes, order, sample_weight)``: here one, the whole
        shard (a shard read from a file gives one per chunk)."""
        yield self.X, self.codes, self.order(rng), self.sample_weight


@dataclass(frozen=True)
class Plan:
    """What every shard task needs besides its data: small, sent with each task.

    ``single``: one shard, whose state is then the serial fit's own (its count and
    average continue from epoch to epoch instead of restarting at each mix).
    ``dense_changes``: the family changes every weight each epoch (logistic regression's
    prior decays them all), so shards exchange whole matrices. ``average``: an averaged
    model is the mean of the weights after every example of every shard
    (``"examples"``) or the mean of the mixed weights of every epoch (``"mixes"``).
    """

    estimator_class: type
    params: dict[str, Any]
    classes: np.ndarray
    n_features: int
    averaged: bool = False
    single: bool = False
    local_epochs: int = 1
    dense_changes: bool = False
    average: str = "examples"

    @classmethod
    def of(
        cls,
        estimator: OnlineLinearClassifier,
        classes: np.ndarray,
        n_features: int,
        *,
        n_shards: int = 2,
        local_epochs: int = 1,
        average: str = "examples",
    ) -> Plan:
        # The generator travels on its own (as its state); the estimator built on the
        # worker never draws from it.
        params = {**estimator.get_params(deep=False), "random_state": None}
        plan = cls(type(estimator), params, np.asarray(classes), int(n_features))
        probe = engine_of(plan.estimator())
        return replace(
            plan,
            averaged=probe.averaged,
            # Averaging the mixes, one shard is not the serial fit: it mixes too.
            single=n_shards == 1 and average == "examples",
            local_epochs=int(local_epochs),
            average=average,
            dense_changes=probe.dense_changes,
        )

    def estimator(self) -> OnlineLinearClassifier:
        """A fresh estimator knowing the classes: one per task, never shared by threads."""
        estimator = self.estimator_class(**self.params)
        estimator.classes_ = self.classes
        estimator.n_features_in_ = self.n_features
        return estimator

    def zeros(self) -> TrainingState:
        return engine_of(self.estimator()).new_state(self.n_features)

    def new_slack(self, n_samples: int) -> np.ndarray | None:
        """The Δ trick's weights for a shard's examples, or None without it."""
        engine = engine_of(self.estimator())
        if engine.delta == 0:
            return None
        return engine.new_slack(engine.new_state(0), n_samples)


@dataclass
class Start:
    """What the shards start an epoch from: the mixed weights at ``rows`` (the rows the
    last mix changed; every other row is where the shard's own last epoch started), or,
    with ``rows`` None, the whole matrix. One shard (``Plan.single``) gets the whole
    training state instead (``aux`` and ``values``), once; later its own state is it."""

    epoch: int
    rows: np.ndarray | None
    weights: np.ndarray
    aux: np.ndarray | None = None
    values: dict[str, Any] | None = None

    @property
    def nbytes(self) -> int:
        return _nbytes(self.rows, self.weights, self.aux)


@dataclass
class ShardResult:
    """What a shard's epoch sends back to be mixed: its weights at ``rows`` (sorted; None
    for all rows), every other row being where it started, and the average's ``aux`` at
    the same rows. Several shards: the true weights and ``aux`` in the plain form of
    :meth:`~perceptrons.linear._online.TrainingState.plain_rows`, counted from the epoch's
    start. One shard: its state's own arrays and ``values`` (count...)."""

    rows: np.ndarray | None
    weights: np.ndarray
    aux: np.ndarray | None
    values: dict[str, Any]
    statistic: float  # the family's, summed (updates, or the log-loss)
    examples: int
    rng_state: RngState | None
    slack: np.ndarray | None
    #: An adaptive rule's statistics at ``rows`` (all rows when None) and its scalars,
    #: as the shard's epoch left them (None for the other families).
    stats: np.ndarray | None = None
    scalars: np.ndarray | None = None
    #: The wrong predictions before the update, summed (0 for logistic regression).
    mistakes: int = 0

    @property
    def updates(self) -> int:
        """The shard's updates this epoch (perceptrons): what ``mixing="mistakes"``
        weighs it by (its mistakes for the perceptron without margin)."""
        return int(self.statistic)

    @property
    def count(self) -> int | float:
        """The examples' total weight this epoch (their number when unweighted)."""
        return self.values["count"]

    @property
    def nbytes(self) -> int:
        return _nbytes(self.rows, self.weights, self.aux)


def _nbytes(*arrays: np.ndarray | None) -> int:
    return sum(a.nbytes for a in arrays if a is not None)


class ShardTrainer:
    """A shard's side of the training: its estimator and state, kept from epoch to epoch
    (by a thread, or on the Dask worker holding the shard), so that each epoch only the
    rows the mix changed are written into it and only the rows its epoch changed are
    read back."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.engine = engine_of(plan.estimator())
        self.state = plan.zeros()
        self.epoch = 0  # the epoch whose end the state holds
        self.touched = np.empty(0, dtype=np.int64)  # rows the last epoch changed
        self.marks = np.zeros(self.state.weights.shape[0], dtype=np.uint8)
        self.log = np.empty((0, 2), dtype=np.int64)
        self._every_row: tuple[Any, np.ndarray | None] | None = None

    def begin(self, start: Start) -> bool:
        """Take the epoch's start; False when ``start`` gives only rows and this state is
        not the previous epoch's (a new trainer after a lost worker): it needs a whole one."""
        state, plan = self.state, self.plan
        if start.rows is None:
            np.copyto(state.weights, start.weights)
            if plan.single:
                assert start.aux is not None and start.values is not None
                np.copyto(state.aux, start.aux)
                state.load_values(start.values)
            else:
                state.aux.fill(0.0)
        else:
            if self.epoch != start.epoch - 1:
                return False
            state.weights[start.rows] = start.weights
            if not plan.single and state.averaged:
                state.aux[self.touched] = 0.0
        if not plan.single:
            state.restart_count()
        return True

    def run(
        self, shard: ShardData, epoch: int, rng_state: RngState | None, slack: np.ndarray | None
    ) -> ShardResult:
        """The shard's epoch (``local_epochs`` passes) from the state :meth:`begin` set."""
        plan, state, engine = self.plan, self.state, self.engine
        rng = None
        if rng_state is not None:
            rng = np.random.RandomState()
            rng.set_state(rng_state)
        # The Δ trick's weights are indexed by example: only shards holding their own rows.
        if slack is None:
            slack = engine.new_slack(state, shard.n_samples if shard.rows is None else 0)
        else:
            slack = slack.copy()
        logging = engine.logs_updates and not plan.dense_changes
        start_count = state.count
        statistic, examples, mistakes = 0.0, 0, 0
        changed: list[np.ndarray | None] = []
        for _ in range(plan.local_epochs):
            for X, codes, order, sample_weight in shard.pieces(rng, engine):
                n = order.shape[0]
                if logging and self.log.shape[0] < n:
                    self.log = np.empty((n, 2), dtype=np.int64)
                record = engine.run_epoch(
                    state,
                    X,
                    codes,
                    order,
                    slack=slack,
                    sample_weight=sample_weight,
                    structure_checked=True,
                    mistake_log=self.log[:n] if logging else None,
                    raw=True,
                )
                statistic += record["statistic"]
                mistakes += record["mistakes"]
                examples += n
                if not plan.dense_changes and not (changed and changed[-1] is None):
                    updated = order[self.log[: int(record["statistic"]), 0]] if logging else None
                    changed.append(self._feature_rows(shard, X, updated))
        rows = self._changed_rows(changed)
        self.touched = (
            np.arange(state.weights.shape[0]) if rows is None else rows
        )  # aux rows to clear next epoch
        self.epoch = epoch
        if plan.single:
            weights = state.weights if rows is None else state.weights[rows]
            aux = state.aux if rows is None or not state.averaged else state.aux[rows]
            values = state.values()
        else:
            weights, aux = state.plain_rows(rows)
            values = {"count": as_count(state.count - start_count)}
        if rng is not None:
            rng_state = rng.get_state()
        return ShardResult(
            rows=rows,
            weights=weights,
            aux=aux if state.averaged else None,
            values=values,
            statistic=statistic,
            examples=examples,
            rng_state=rng_state,
            slack=slack if slack.shape[0] else None,
            **_statistics(state, rows),
            mistakes=mistakes,
        )

    def _feature_rows(self, shard: Any, X: Any, updated: np.ndarray | None) -> np.ndarray | None:
        """The sorted rows of the features of the examples ``updated`` (rows of ``X``;
        None: every example of ``X``, for families that update on every example), or
        None once they are more than half of the rows (then every row is sent)."""
        rows_arg, fixed = self.engine.example_rows(X)
        limit = int(DENSE_SHARE * self.state.weights.shape[0])
        if updated is not None:
            return sorted_rows_of_examples(rows_arg, updated, self.marks, limit, fixed)
        if not isinstance(shard, ShardData):  # a new chunk each time
            return sorted_rows_of_examples(
                rows_arg, np.arange(X.shape[0]), self.marks, limit, fixed
            )
        if self._every_row is None or self._every_row[0] is not shard:
            every = sorted_rows_of_examples(rows_arg, shard.all_rows(), self.marks, limit, fixed)
            self._every_row = (shard, every)
        return self._every_row[1]

    def _changed_rows(self, changed: list[np.ndarray | None]) -> np.ndarray | None:
        """The sorted rows the epoch changed, or None for all of them (when that is
        most of them, or the family changes every row)."""
        parts = [rows for rows in changed if rows is not None]
        if self.plan.dense_changes or len(parts) < len(changed):
            return None
        if not parts:
            return np.empty(0, dtype=np.int64)
        rows = parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts))
        return None if rows.shape[0] > DENSE_SHARE * self.state.weights.shape[0] else rows


def shard_epoch(
    trainer: ShardTrainer,
    shard: ShardData,
    start: Start,
    rng_state: RngState | None,
    slack: np.ndarray | None,
) -> ShardResult | None:
    """One epoch of the estimator's own kernel over one shard, from ``start``; None when
    the trainer needs a whole start (see :meth:`ShardTrainer.begin`). Given the same
    start, generator state and slack, the result is the same wherever it runs."""
    if not trainer.begin(start):
        return None
    return trainer.run(shard, start.epoch, rng_state, slack)


def _statistics(state: Any, rows: np.ndarray | None) -> dict[str, np.ndarray]:
    """An adaptive rule's statistics at ``rows`` (copies) and its scalars, for the
    mixer to publish with the weights (nothing for the families without them)."""
    if not isinstance(state, AdaptiveState):
        return {}
    stats = state.stats.copy() if rows is None else state.stats[:, rows]
    return {"stats": stats, "scalars": state.scalars.copy()}
