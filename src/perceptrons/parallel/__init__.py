"""Iterative parameter mixing: one perceptron trained on data split across workers.

McDonald, Hall & Mann (2010), "Distributed training strategies for the structured
perceptron", algorithm 2. The training data is split into shards; every epoch, each shard
starts from the current *mixed* weights and runs one ordinary perceptron epoch over its
own examples (with the estimator's own compiled kernel), then the shards' weights are
mixed into the next epoch's start:

* ``mixing="uniform"``: their mean, μ_i = 1 / n_shards;
* ``mixing="mistakes"``: μ_i proportional to the mistakes k_i shard i made this epoch
  (uniform in an epoch without any mistake), the weighting of McDonald et al.

The weights mixed are the whole weight matrix, intercept row included. The vanilla
:class:`~perceptrons.Perceptron` then predicts with the last mixed weights.

**The averaged model.** For :class:`~perceptrons.AveragedPerceptron`, each shard also
returns the sum of its weight vectors after each of its examples this epoch (read off its
auxiliary vector: ``n * weights - aux``, the kernels' own averaging trick, started afresh
from the mixed weights). The fitted model predicts with

    (Σ over epochs and shards of those sums) / (total examples seen),

the plain mean of every intermediate weight vector of every shard, one per example
visited. The mixed vectors themselves are not added (a shard that makes no mistake adds
its start, the mixed vector, once per example, as the serial average does). With one
shard this is exactly the serial averaged perceptron.

Shards and shuffling
--------------------
Arrays are split into ``n_partitions`` shards of near-equal size: contiguous blocks of
rows when the estimator has ``shuffle=False``, otherwise rows dealt out by a seeded random
permutation (each shard keeping its rows in their original order). Each shard visits its
examples in a fresh order every epoch when ``shuffle=True``, drawn from its own
``RandomState``: shard 0 draws from ``check_random_state(random_state)`` itself, exactly
like the serial fit, so one shard reproduces the serial fit, shuffles included; shard
``i >= 1`` draws from a ``RandomState`` seeded by the ``i``-th child of
``SeedSequence(k)``, ``k`` being the first ``randint(2**31 - 1)`` a copy of that
generator gives (child 0 seeds the dealing of rows). The generator's state travels
with each shard's task and comes back advanced, so a task run again after a failure
draws the same order, and a run is a function of ``random_state`` only: the same for
threads (:func:`mix_threads`) and for any Dask cluster.

Dask arrays are split along their row chunks (rechunked into ``n_partitions`` near-equal
blocks when ``n_partitions`` is given), and a list of files gives one shard per file,
read by the worker itself; neither is dealt out again, ``shuffle`` only reorders
examples within each shard.

Not supported: ``early_stopping`` with a ``validation_fraction`` (early stopping after an
epoch without mistakes is), and ``warm_start`` (every fit starts from zero). The Δ trick
(``delta``) is: each example's own weight stays with its shard.

Data movement
-------------
Array shards are scattered once to the workers and kept there. Each epoch, the mixed
weights are sent to every worker, and every shard sends back its weights (and, averaged,
its sums): three weight matrices of ``(n_features + 1) * n_classes`` floats per shard
and epoch, whose cost can exceed a sparse epoch's when the weights are large (see
``benchmarks/bench_distributed.py``). The mixing itself runs on the client.

Faults
------
When a worker dies, Dask reruns the tasks it was running elsewhere;
a shard whose data was lost with it is scattered again from the client's copy (shards
of files and Dask arrays are read or computed again by the workers), and the shard's
epoch is rerun from the same start weights and generator state, so the model is the
one an uninterrupted run gives. After ``max_retries`` such recoveries within one epoch
the fit stops with a ``RuntimeError`` naming the lost workers; an error raised by a
task itself (bad data, say) is raised as it is, never retried.
"""

from __future__ import annotations

import copy
import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from perceptrons import _params as rules
from perceptrons import _validation
from perceptrons.perceptron import AveragedPerceptron, Perceptron, _LinearPerceptron, _TrainingState

__all__ = ["MIXINGS", "ParameterMixing", "mix_threads"]

#: The mixing rules: the mean of the shards' weights, or their mean weighted by mistakes.
MIXINGS = ("uniform", "mistakes")

_INSTALL_HINT = 'ParameterMixing needs dask and distributed: pip install "perceptrons[distributed]"'


# ------------------------------------------------------------------ shard work
@dataclass
class _ShardData:
    """One shard, validated: features in the kernels' layout and labels as codes.

    ``rows`` lists the examples of ``X`` that are the shard's, in their original order,
    or is None when the shard is the whole of ``X``: threads share one ``X`` (no copy),
    while a shard sent to a worker holds only its own rows.
    """

    X: Any
    codes: np.ndarray
    rows: np.ndarray | None = None

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
class _Plan:
    """What every shard task needs besides its data: small, sent with each task."""

    estimator_class: type
    params: dict[str, Any]
    classes: np.ndarray
    n_features: int

    @classmethod
    def of(cls, estimator: _LinearPerceptron, classes: np.ndarray, n_features: int) -> _Plan:
        # The generator travels on its own (as its state); the estimator built on the
        # worker never draws from it.
        params = {**estimator.get_params(deep=False), "random_state": None}
        return cls(type(estimator), params, np.asarray(classes), int(n_features))

    @property
    def average(self) -> bool:
        return self.estimator_class._average

    def estimator(self) -> _LinearPerceptron:
        """A fresh estimator knowing the classes: one per task, never shared by threads."""
        estimator = self.estimator_class(**self.params)
        estimator.classes_ = self.classes
        estimator.n_features_in_ = self.n_features
        return estimator

    def zeros(self) -> _TrainingState:
        n_columns = 1 if len(self.classes) == 2 else len(self.classes)
        return _TrainingState.zeros(self.n_features, n_columns, self.average)

    def new_slack(self, n_samples: int) -> np.ndarray | None:
        """The Δ trick's weights for a shard's examples, or None without it."""
        if self.params["delta"] == 0:
            return None
        return np.zeros((n_samples, *self.zeros().weights.shape[1:]))


@dataclass
class _ShardResult:
    """What a shard's epoch sends back to be mixed."""

    weights: np.ndarray
    sums: np.ndarray | None  # Σ of the weights after each example (averaged models)
    mistakes: int
    examples: int
    rng_state: tuple | None
    slack: np.ndarray | None


@dataclass
class _Workspace:
    """A shard's arrays, reused from epoch to epoch by a thread (a Dask task allocates
    its own): allocating and faulting in fresh weight-sized arrays every epoch costs as
    much as a sparse epoch itself."""

    state: _TrainingState
    sums: np.ndarray | None

    @classmethod
    def allocate(cls, plan: _Plan) -> _Workspace:
        state = plan.zeros()
        return cls(state, np.empty_like(state.weights) if plan.average else None)


def _shard_epoch(
    shard: _ShardData,
    start: np.ndarray,
    plan: _Plan,
    rng_state: tuple | None,
    slack: np.ndarray | None,
    workspace: _Workspace | None = None,
) -> _ShardResult:
    """One epoch of the estimator's own kernel over one shard, from the mixed ``start``.

    A pure function of its arguments (nothing given is modified, except ``workspace``,
    whose arrays the result then holds), so that it can run in a thread, on any
    worker, and again after a failure with the same result.
    """
    workspace = _Workspace.allocate(plan) if workspace is None else workspace
    state = workspace.state
    np.copyto(state.weights, start)
    state.aux.fill(0.0)
    state.count = 0
    estimator = plan.estimator()
    estimator._state = state
    n = shard.n_samples
    rng = None
    if rng_state is not None:
        rng = np.random.RandomState()
        rng.set_state(rng_state)
    order = shard.order(rng)
    if rng is not None:
        rng_state = rng.get_state()
    # The Δ trick's weights are indexed by example: only shards holding their own rows.
    slack = estimator._new_slack(shard.X.shape[0]) if slack is None else slack.copy()
    mistakes = estimator._run_epoch(shard.X, shard.codes, order, slack, None)
    sums = None
    if plan.average:
        # The kernels' averaging trick, started at count 0: n * w - aux is the sum of
        # the weight vectors after each of the n examples (perceptrons._kernels.perceptron).
        sums = np.multiply(state.weights, n, out=workspace.sums)
        sums -= state.aux
    return _ShardResult(
        weights=state.weights,
        sums=sums,
        mistakes=int(mistakes),
        examples=n,
        rng_state=rng_state,
        slack=slack if slack.shape[0] else None,
    )


def _mix(results: Sequence[_ShardResult], mixing: str) -> np.ndarray:
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


# ------------------------------------------------------------- the epoch loop
def _check_estimator(estimator: Any, mixing: str) -> None:
    if not isinstance(estimator, Perceptron | AveragedPerceptron):
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
    rules.validate(estimator, estimator._rules)
    if estimator.early_stopping and estimator.validation_fraction is not None:
        raise ValueError(
            "parameter mixing does not support early_stopping with a validation_fraction "
            "(early_stopping alone, which stops after an epoch without mistakes, is fine)."
        )
    if not isinstance(mixing, str) or mixing not in MIXINGS:
        raise ValueError(f"mixing must be one of {MIXINGS}, got {mixing!r}.")


def _check_partitions(n_partitions: Any, n_samples: int | None = None) -> int:
    if not rules.integer(1).accepts(n_partitions):
        raise ValueError(f"n_partitions must be an int >= 1, got {n_partitions!r}.")
    if n_samples is not None and n_partitions > n_samples:
        raise ValueError(
            f"n_partitions={n_partitions} is more than the {n_samples} training examples: "
            "every partition needs at least one."
        )
    return int(n_partitions)


def _generators(random_state: Any, n_shards: int) -> tuple[np.random.RandomState, list]:
    """The generator that deals rows to shards, and each shard's generator (see the
    module documentation): shard 0 uses ``check_random_state(random_state)`` itself."""
    base = check_random_state(random_state)
    key = copy.deepcopy(base).randint(np.iinfo(np.int32).max)
    children = np.random.SeedSequence(key).spawn(n_shards)
    streams = [base] + [np.random.RandomState(c.generate_state(4)) for c in children[1:]]
    return np.random.RandomState(children[0].generate_state(4)), streams


def _split_rows(n_samples: int, n_shards: int, dealer: np.random.RandomState | None) -> list:
    """Near-equal shards of row indices: contiguous, or dealt by ``dealer``'s permutation
    (each shard sorted, so rows keep their original relative order)."""
    if n_shards == 1:
        return [np.arange(n_samples)]
    if dealer is None:
        return np.array_split(np.arange(n_samples), n_shards)
    return [np.sort(part) for part in np.array_split(dealer.permutation(n_samples), n_shards)]


@dataclass
class _Training:
    """The epoch loop of parameter mixing, whatever runs the shards' epochs."""

    estimator: _LinearPerceptron
    plan: _Plan
    mixing: str
    run_epoch: Callable[[int, np.ndarray, list, list], list[_ShardResult]]
    streams: list[np.random.RandomState]
    shard_sizes: list[int]
    history: list[dict[str, Any]] = field(default_factory=list)

    def epochs(self, publish_each_epoch: bool = True) -> Iterator[dict[str, Any]]:
        """Train, yielding each epoch's record; the estimator is a fitted model after the
        last epoch and, with ``publish_each_epoch``, after every one."""
        estimator, plan = self.estimator, self.plan
        weights = plan.zeros().weights
        sums = np.zeros_like(weights) if plan.average else None
        count = 0
        shuffle = estimator.shuffle
        rng_states = [s.get_state() if shuffle else None for s in self.streams]
        slacks = [plan.new_slack(n) for n in self.shard_sizes]
        estimator.history_ = []
        for epoch in range(1, estimator.max_epochs + 1):
            start = time.perf_counter()
            results = self.run_epoch(epoch, weights, rng_states, slacks)
            weights = _mix(results, self.mixing)
            for result in results:
                count += result.examples
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
        estimator._rng = self.streams[0]


def _prepare_arrays(estimator: _LinearPerceptron, X, y) -> tuple[Any, np.ndarray, np.ndarray]:
    """Validate like the serial fit (which sets ``n_features_in_``, feature names...)."""
    X, y = _validation.validate_training_data(estimator, X, y, reset=True)
    estimator.classes_ = _validation.label_set(y, None, estimator, incremental=False)
    return X, estimator._encode(y), estimator.classes_


def _array_shards(estimator, X, y, n_partitions: int, *, share: bool = False):
    """The validated shards of in-memory arrays, the plan and the shards' generators.

    ``share``: the shards are views of the same ``X`` (for threads; not with the Δ
    trick, whose per-example weights each shard then keeps for its own rows only).
    """
    X, codes, classes = _prepare_arrays(estimator, X, y)
    n_partitions = _check_partitions(n_partitions, X.shape[0])
    dealer, streams = _generators(estimator.random_state, n_partitions)
    parts = _split_rows(X.shape[0], n_partitions, dealer if estimator.shuffle else None)
    if n_partitions == 1:
        shards = [_ShardData(X, codes)]
    elif share and estimator.delta == 0:
        shards = [_ShardData(X, codes, rows) for rows in parts]
    else:
        shards = [_ShardData(X[rows], codes[rows]) for rows in parts]
    return shards, _Plan.of(estimator, classes, X.shape[1]), streams


# --------------------------------------------------------------------- threads
def mix_threads(
    estimator: Perceptron | AveragedPerceptron,
    X: ArrayLike,
    y: ArrayLike,
    n_jobs: int,
    mixing: str = "uniform",
    *,
    n_partitions: int | None = None,
) -> Perceptron | AveragedPerceptron:
    """Fit ``estimator`` in place by parameter mixing over shards run in threads.

    The algorithm of :class:`ParameterMixing` (see the module documentation), without
    Dask: the compiled kernels release the GIL, so the shards' epochs run in parallel in
    a ``ThreadPoolExecutor``. For the same shards and ``random_state`` the model is
    exactly the one :class:`ParameterMixing` fits on a Dask cluster.

    Parameters
    ----------
    estimator : Perceptron or AveragedPerceptron
        Its hyperparameters set the training (``max_epochs``, ``shuffle``,
        ``random_state``...); it is fitted in place, from zero.
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Training data.
    y : array-like of shape (n_samples,)
        Labels.
    n_jobs : int
        Threads; -1 for one per CPU.
    mixing : {"uniform", "mistakes"}, default="uniform"
        How the shards' weights are mixed after each epoch.
    n_partitions : int, default=None
        Number of shards; ``n_jobs`` when None.

    Returns
    -------
    estimator : Perceptron or AveragedPerceptron
        The fitted estimator; its ``history_`` records also hold ``shard_mistakes``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from perceptrons import AveragedPerceptron
    >>> from perceptrons.parallel import mix_threads
    >>> X, y = load_iris(return_X_y=True)
    >>> model = mix_threads(AveragedPerceptron(max_epochs=20, random_state=0), X, y, n_jobs=2)
    >>> [len(record["shard_mistakes"]) for record in model.history_][:3]
    [2, 2, 2]
    >>> bool(model.score(X, y) > 0.9)
    True
    """
    _check_estimator(estimator, mixing)
    if not rules.integer(1).accepts(n_jobs) and n_jobs != -1:
        raise ValueError(f"n_jobs must be an int >= 1 or -1, got {n_jobs!r}.")
    n_jobs = (os.cpu_count() or 1) if n_jobs == -1 else n_jobs
    shards, plan, streams = _array_shards(
        estimator, X, y, n_jobs if n_partitions is None else n_partitions, share=True
    )
    workspaces = [_Workspace.allocate(plan) for _ in shards]
    with ThreadPoolExecutor(max_workers=min(n_jobs, len(shards))) as pool:

        def run_epoch(epoch, weights, rng_states, slacks):
            jobs = [
                pool.submit(
                    _shard_epoch, shard, weights, plan, rng_states[i], slacks[i], workspaces[i]
                )
                for i, shard in enumerate(shards)
            ]
            return [job.result() for job in jobs]

        training = _Training(
            estimator, plan, mixing, run_epoch, streams, [s.n_samples for s in shards]
        )
        for _ in training.epochs(publish_each_epoch=False):
            pass
    return estimator


# ------------------------------------------------------------------------ Dask
def _import_distributed():
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from exc
    return distributed


@dataclass
class _RawBlock:
    """A block of rows as read or computed on a worker, before validation."""

    X: Any
    y: np.ndarray
    zero_based: bool | None = None


def _read_file(path: str, read_options: dict[str, Any]) -> _RawBlock:
    """Read one file on the worker (a numeric format of ``read_data``)."""
    from perceptrons.io.formats import read_data

    data = read_data(path, labels=True, **read_options)
    if data.X is None:
        raise ValueError(
            f"{path}: {data.format} is a text format; parameter mixing reads numeric "
            "formats only (svmlight, csv, idx). Featurize the text first."
        )
    return _RawBlock(data.X, data.y, data.zero_based)


def _raw_from_arrays(X, y) -> _RawBlock:
    return _RawBlock(X, np.asarray(y).ravel())


def _describe(block: _RawBlock) -> dict[str, Any]:
    """The first pass: only a block's labels, width and size go back to the client."""
    return {
        "labels": np.unique(block.y),
        "width": int(block.X.shape[1]),
        "rows": int(block.X.shape[0]),
        "zero_based": block.zero_based,
    }


def _prepare_block(block: _RawBlock, plan: _Plan, zero_based: bool | None) -> _ShardData:
    """Validate and encode a block on its worker, in the features' shared indexing."""
    X = block.X
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        shift = 0
        if zero_based is not None and block.zero_based is not None:
            # A file read one-based while another uses index 0: index j is column j.
            shift = int(zero_based) - int(block.zero_based)
        if X.shape[1] + shift > plan.n_features:
            raise ValueError(
                f"a partition has {X.shape[1] + shift} features, more than "
                f"n_features={plan.n_features}."
            )
        X = sp.csr_matrix(
            (X.data, X.indices + shift, X.indptr), shape=(X.shape[0], plan.n_features)
        )
    estimator = plan.estimator()
    X, y = _validation.validate_training_data(estimator, X, block.y, reset=True)
    if X.shape[1] != plan.n_features:
        raise ValueError(
            f"a partition has {X.shape[1]} features where {plan.n_features} were expected."
        )
    return _ShardData(X, estimator._encode(y))


def _is_dask_array(X: Any) -> bool:
    return hasattr(X, "__dask_graph__") and hasattr(X, "to_delayed") and hasattr(X, "chunks")


def _is_path_list(X: Any) -> bool:
    return (
        isinstance(X, list | tuple)
        and len(X) > 0
        and all(isinstance(p, str | os.PathLike) for p in X)
    )


class _DaskShards:
    """The shards on a Dask cluster: their futures, where they were put, their sizes,
    and how to rebuild a lost one (``sources[i](worker)`` gives a new future)."""

    def __init__(self, futures: list, holders: list[str], sources: list[Callable], sizes):
        self.futures, self.holders, self.sources = futures, holders, sources
        self.sizes = list(sizes)

    @classmethod
    def place(cls, sources: list[Callable], workers: list[str], sizes) -> _DaskShards:
        holders = [workers[i % len(workers)] for i in range(len(sources))]
        futures = [source(worker) for source, worker in zip(sources, holders, strict=True)]
        return cls(futures, holders, sources, sizes)

    def rebuild(self, i: int, workers: list[str]) -> None:
        """Put shard ``i`` again on the live worker holding the fewest shards."""
        held = [self.holders.count(w) for w in workers]
        worker = workers[int(np.argmin(held))]
        self.futures[i] = self.sources[i](worker)
        self.holders[i] = worker


class _DaskRunner:
    """Runs each epoch's shard tasks on the cluster, recovering from lost workers."""

    def __init__(self, client, shards: _DaskShards, plan: _Plan, max_retries: int):
        self.client, self.shards, self.plan = client, shards, plan
        self.max_retries = max_retries
        self.token = uuid.uuid4().hex[:12]
        self.known_workers = set(self._workers())

    def _workers(self) -> list[str]:
        return sorted(self.client.scheduler_info(n_workers=-1)["workers"])

    def _alive_workers(self) -> list[str]:
        workers = self._workers()
        if not workers:  # e.g. the only worker is being restarted by its nanny
            self.client.wait_for_workers(1, timeout=60)
            workers = self._workers()
        self.known_workers.update(workers)
        return workers

    def __call__(self, epoch, weights, rng_states, slacks) -> list[_ShardResult]:
        distributed = _import_distributed()
        client = self.client
        start = _scatter(client, weights, broadcast=True)
        results: dict[int, _ShardResult] = {}
        pending = list(range(len(self.shards.futures)))
        recoveries = 0
        while pending:
            futures = {
                i: client.submit(
                    _shard_epoch,
                    self.shards.futures[i],
                    start,
                    self.plan,
                    rng_states[i],
                    slacks[i],
                    key=f"perceptrons-mixing-{self.token}-epoch{epoch}-shard{i}-{recoveries}",
                    pure=False,
                )
                for i in pending
            }
            _settle(distributed, list(futures.values()))
            done = [i for i, future in futures.items() if future.status == "finished"]
            results.update(zip(done, client.gather([futures[i] for i in done]), strict=True))
            failed = []
            for i, future in futures.items():
                if future.status == "finished":
                    continue
                if future.status == "error":
                    error = future.exception()
                    if isinstance(error, distributed.KilledWorker):
                        raise RuntimeError(
                            f"parameter mixing, epoch {epoch}: the task of shard {i} "
                            f"killed the workers running it: {error}"
                        ) from error
                    raise error
                else:  # cancelled: its data or the mixed weights were lost with a worker
                    failed.append(i)
            pending = failed
            if not pending:
                break
            recoveries += 1
            alive = self._alive_workers()
            lost = sorted(self.known_workers - set(alive))
            if recoveries > self.max_retries:
                raise RuntimeError(
                    f"parameter mixing, epoch {epoch}: shard(s) {pending} failed "
                    f"{recoveries} time(s) (max_retries={self.max_retries}); lost "
                    f"worker(s): {', '.join(lost) or 'unknown'} (shard data held by "
                    f"{', '.join(sorted({self.shards.holders[i] for i in pending}))})."
                )
            time.sleep(0.1 * recoveries)  # let the scheduler settle the worker's loss
            for i in pending:
                if self.shards.futures[i].status != "finished":
                    self.shards.rebuild(i, alive)
            if start.status != "finished":
                start = _scatter(client, weights, broadcast=True)
        return [results[i] for i in range(len(results))]


def _settle(distributed, futures: list) -> None:
    """Wait until every future is finished, failed or cancelled."""
    while True:
        try:
            distributed.wait(futures)
        except Exception as exc:  # FuturesCancelledError; CancelledError in older versions
            if "cancel" not in type(exc).__name__.lower():
                raise
        if all(f.status in ("finished", "error", "cancelled", "lost") for f in futures):
            return


class ParameterMixing(ClassifierMixin, BaseEstimator):
    """Iterative parameter mixing of a perceptron over the workers of a Dask cluster.

    Every epoch, each of ``n_partitions`` shards of the data runs one epoch of the
    estimator from the current mixed weights, on a Dask worker; the shards' weights are
    then mixed into the next epoch's start (McDonald, Hall & Mann 2010). The module
    documentation gives the exact algorithm, the averaged model, the shuffling and the
    behaviour on worker failures. One partition is exactly the serial fit.

    Parameters
    ----------
    estimator : Perceptron or AveragedPerceptron
        The model to train; its hyperparameters set the training (``max_epochs``,
        ``shuffle``, ``random_state``, ``fit_intercept``, ``delta``...). Not modified:
        ``estimator_`` is a clone.
    n_partitions : int, default=None
        Number of shards. None: for arrays, one per worker of ``client`` (or one per CPU
        for the cluster started here); for a Dask array, its row chunks; for files, one
        per file. Given with a Dask array, its rows are rechunked into that many
        near-equal blocks; with files it must equal their number.
    client : distributed.Client, str or None, default=None
        The cluster: a connected ``Client``, or a scheduler address (e.g.
        ``"tcp://127.0.0.1:8786"``), whose client is closed after ``fit``. None starts a
        ``LocalCluster`` of ``min(n_partitions, CPUs)`` single-threaded worker processes
        on 127.0.0.1 (no dashboard) for the fit and closes it afterwards.
    mixing : {"uniform", "mistakes"}, default="uniform"
        The mean of the shards' weights, or their mean weighted by each shard's mistakes
        in the epoch (uniform after an epoch without mistakes).
    max_retries : int, default=3
        Recoveries from lost workers allowed within one epoch before the fit fails with
        a ``RuntimeError`` naming them.

    Attributes
    ----------
    estimator_ : Perceptron or AveragedPerceptron
        The fitted model: usable and saveable (:func:`perceptrons.save`) like one fitted
        serially; its ``history_`` holds ``epoch``, ``mistakes``, ``examples`` and
        ``shard_mistakes`` per epoch.
    history_ : list of dict
        Per epoch: ``epoch``, ``mistakes`` (total), ``shard_mistakes`` (one per shard),
        ``examples`` and ``seconds`` (wall time of the epoch, mixing included).
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.
    n_partitions_ : int
        The number of shards used.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from perceptrons import AveragedPerceptron
    >>> from perceptrons.parallel import ParameterMixing
    >>> X, y = load_iris(return_X_y=True)
    >>> mixer = ParameterMixing(AveragedPerceptron(random_state=0), n_partitions=2)
    >>> model = mixer.fit(X, y).estimator_  # doctest: +SKIP
    >>> round(model.score(X, y), 2)  # doctest: +SKIP
    0.97
    """

    def __init__(
        self,
        estimator: Perceptron | AveragedPerceptron,
        *,
        n_partitions: int | None = None,
        client: Any = None,
        mixing: str = "uniform",
        max_retries: int = 3,
    ) -> None:
        self.estimator = estimator
        self.n_partitions = n_partitions
        self.client = client
        self.mixing = mixing
        self.max_retries = max_retries

    def fit(
        self,
        X: Any,
        y: ArrayLike | None = None,
        *,
        classes: ArrayLike | None = None,
        n_features: int | None = None,
        read_options: dict[str, Any] | None = None,
    ) -> ParameterMixing:
        """Train by parameter mixing for the estimator's ``max_epochs`` epochs.

        Parameters
        ----------
        X : {ndarray, sparse matrix, dask array} or list of paths
            Training data. In-memory arrays are split into shards, each sent once to a
            worker and kept there. A Dask array is used block by block where it lives.
            A list of files (any numeric format :func:`perceptrons.io.formats.read_data`
            reads: svmlight, csv, idx) is read by the workers themselves, one shard per
            file: the data never passes through the client.
        y : array-like or dask array of shape (n_samples,), default=None
            Labels; None for files, whose labels they hold.
        classes : array-like, default=None
            Files and Dask arrays: every label. When None (or ``n_features`` is None),
            a first pass on the workers reads each block and sends back only its
            labels, width and, for svmlight, whether its indices are 0-based (files
            are then indexed 0-based if any of them uses index 0, as
            :func:`~perceptrons.io.formats.read_data` decides for one file). The blocks read
            then stay on the workers as the shards.
        n_features : int, default=None
            Files and Dask arrays: the number of features (the widest block when
            None).
        read_options : dict, default=None
            Files: keyword arguments for :func:`~perceptrons.io.formats.read_data` (e.g.
            ``{"format": "svmlight", "zero_based": False}``).

        Returns
        -------
        self : object
        """
        options = {"classes": classes, "n_features": n_features, "read_options": read_options}
        for _ in self._epochs(X, y, options, publish_each_epoch=False):
            pass
        return self

    def fit_epochs(
        self,
        X: Any,
        y: ArrayLike | None = None,
        *,
        classes: ArrayLike | None = None,
        n_features: int | None = None,
        read_options: dict[str, Any] | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Train like :meth:`fit`, pausing after every epoch.

        After each epoch ``estimator_`` holds the current model and the record yielded
        is the epoch's entry of ``history_``. Leaving the loop early stops training
        (and closes a cluster started for the fit).
        """
        options = {"classes": classes, "n_features": n_features, "read_options": read_options}
        yield from self._epochs(X, y, options, publish_each_epoch=True)

    def _epochs(self, X, y, options, *, publish_each_epoch: bool) -> Iterator[dict[str, Any]]:
        _check_estimator(self.estimator, self.mixing)
        if self.n_partitions is not None:
            _check_partitions(self.n_partitions)
        if not rules.integer(0).accepts(self.max_retries):
            raise ValueError(f"max_retries must be an int >= 0, got {self.max_retries!r}.")
        distributed = _import_distributed()
        self.estimator_ = clone(self.estimator)
        self.history_ = []
        with _connect(distributed, self.client, self._cluster_size(X)) as client:
            workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
            if not workers:
                client.wait_for_workers(1, timeout=60)
                workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
            if _is_path_list(X) or _is_dask_array(X):
                shards, plan, streams = self._remote_shards(
                    client,
                    workers,
                    X,
                    y,
                    options["classes"],
                    options["n_features"],
                    options["read_options"] or {},
                )
            else:
                if y is None:
                    raise ValueError("y is required unless X is a list of files.")
                n = self.n_partitions or len(workers)
                data, plan, streams = _array_shards(self.estimator_, X, y, n)
                shards = _DaskShards.place(
                    [_scatter_source(client, shard) for shard in data],
                    workers,
                    [shard.n_samples for shard in data],
                )
            self.n_partitions_ = len(shards.futures)
            runner = _DaskRunner(client, shards, plan, self.max_retries)
            training = _Training(self.estimator_, plan, self.mixing, runner, streams, shards.sizes)
            training.history = self.history_
            yield from training.epochs(publish_each_epoch)

    @property
    def classes_(self) -> np.ndarray:
        check_is_fitted(self, "estimator_")
        return self.estimator_.classes_

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """The fitted estimator's scores (see its ``decision_function``)."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(X)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The fitted estimator's predictions (see its ``predict``)."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict(X)

    def _cluster_size(self, X: Any) -> int:
        if self.n_partitions is not None:
            n = self.n_partitions
        elif _is_path_list(X):
            n = len(X)
        elif _is_dask_array(X):
            n = len(X.chunks[0])
        else:
            n = os.cpu_count() or 1
        return max(1, min(n, os.cpu_count() or 1))

    def _remote_shards(self, client, workers, X, y, classes, n_features, read_options):
        """Shards read or computed on the workers: files, or a Dask array's blocks."""
        estimator = self.estimator_
        files = _is_path_list(X)
        if files:
            raw_sources = _file_sources(client, X, y, self.n_partitions, read_options)
        else:
            raw_sources = _dask_sources(client, X, y, self.n_partitions)
        raws = [source(workers[i % len(workers)]) for i, source in enumerate(raw_sources)]
        zero_based = read_options.get("zero_based", "auto") if files else None
        if zero_based == "auto":
            zero_based = None
        sizes = None
        if classes is None or n_features is None or (files and zero_based is None):
            infos = client.gather([client.submit(_describe, raw, pure=False) for raw in raws])
            bases = [info["zero_based"] for info in infos if info["zero_based"] is not None]
            if zero_based is None and bases:
                # read_data's rule for one file, over all of them: 0-based if any index is 0.
                zero_based = any(bases)
            if classes is None:
                classes = np.unique(np.concatenate([info["labels"] for info in infos]))
            if n_features is None:
                n_features = max(_width(info, zero_based) for info in infos)
            sizes = [info["rows"] for info in infos]
        classes = _validation.label_set(np.asarray(classes), None, estimator, incremental=False)
        if not rules.integer(1).accepts(n_features):
            raise ValueError(f"n_features must be an int >= 1, got {n_features!r}.")
        plan = _Plan.of(estimator, classes, n_features)
        estimator.classes_ = classes
        estimator.n_features_in_ = int(n_features)

        def rebuild_source(i):
            def make(worker):
                raw = raw_sources[i](worker)
                return client.submit(
                    _prepare_block,
                    raw,
                    plan,
                    zero_based,
                    workers=[worker],
                    allow_other_workers=True,
                    pure=False,
                )

            return make

        holders = [workers[i % len(workers)] for i in range(len(raws))]
        futures = [
            client.submit(
                _prepare_block,
                raw,
                plan,
                zero_based,
                workers=[worker],
                allow_other_workers=True,
                pure=False,
            )
            for raw, worker in zip(raws, holders, strict=True)
        ]
        # From here the blocks read are held by the prepared shards' lineage only: Dask
        # reads or computes them again if a worker is lost.
        del raws
        if sizes is None:
            sizes = client.gather([client.submit(_n_samples, f, pure=False) for f in futures])
        if min(sizes) == 0:
            raise ValueError(f"partition {sizes.index(0)} holds no examples.")
        sources = [rebuild_source(i) for i in range(len(futures))]
        shards = _DaskShards(futures, holders, sources, sizes)
        _, streams = _generators(estimator.random_state, len(sizes))
        return shards, plan, streams


def _width(info: dict[str, Any], zero_based: bool | None) -> int:
    """A block's number of features once indexed like all the others."""
    if zero_based is None or info["zero_based"] is None:
        return info["width"]
    return info["width"] + int(zero_based) - int(info["zero_based"])


def _file_sources(client, paths, y, n_partitions, read_options) -> list[Callable[[str], Any]]:
    """One source per file: the worker reads it."""
    if y is not None:
        raise ValueError("y must be None when X is a list of files (they hold the labels).")
    paths = [os.fspath(Path(p)) for p in paths]
    if n_partitions is not None and n_partitions != len(paths):
        raise ValueError(
            f"n_partitions={n_partitions} but {len(paths)} files: with files, each file "
            "is one partition."
        )

    def source(path):
        return lambda worker: client.submit(
            _read_file,
            path,
            read_options,
            workers=[worker],
            allow_other_workers=True,
            pure=False,
        )

    return [source(path) for path in paths]


def _n_samples(shard: _ShardData) -> int:
    return shard.n_samples


def _scatter_source(client, shard: _ShardData) -> Callable[[str], Any]:
    """Scatter a shard to one worker; called again with the client's copy if lost."""
    return lambda worker: _scatter(client, shard, worker=worker)


def _scatter(client, data, *, worker: str | None = None, broadcast: bool = False, tries: int = 8):
    """``client.scatter`` that outlives a worker dying meanwhile: until the scheduler
    has noticed it, sending to it fails; then try again, to any worker."""
    for attempt in range(tries):
        workers = [worker] if worker is not None and attempt == 0 else None
        try:
            return client.scatter(data, workers=workers, broadcast=broadcast, hash=False)
        except OSError as exc:  # CommClosedError and friends
            if attempt == tries - 1:
                raise RuntimeError(
                    f"parameter mixing: could not send data to the workers ({exc})."
                ) from exc
            time.sleep(0.05 * 2**attempt)
    raise AssertionError("unreachable")


def _dask_sources(client, X, y, n_partitions: int | None) -> list[Callable[[str], Any]]:
    """One source per row block of a Dask array: compute the block where it lives."""
    import dask.array as da

    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got a dask array of shape {X.shape}.")
    if y is None:
        raise ValueError("y is required with a dask array X.")
    if n_partitions is not None:
        n_rows = X.shape[0]
        if np.isnan(n_rows):
            raise ValueError("rechunking needs known chunk sizes: X.compute_chunk_sizes().")
        _check_partitions(n_partitions, int(n_rows))
        sizes = tuple(len(part) for part in np.array_split(np.arange(int(n_rows)), n_partitions))
        X = X.rechunk({0: sizes, 1: -1})
    else:
        X = X.rechunk({1: -1})
    if not _is_dask_array(y):
        y = da.from_array(np.asarray(y), chunks=(X.chunks[0],))
    else:
        y = y.rechunk((X.chunks[0],))
    x_blocks = X.to_delayed().ravel().tolist()
    y_blocks = y.to_delayed().ravel().tolist()

    def source(i):
        def make(worker):
            x_future, y_future = client.compute(
                [x_blocks[i], y_blocks[i]], workers=[worker], allow_other_workers=True
            )
            return client.submit(_raw_from_arrays, x_future, y_future, pure=False)

        return make

    return [source(i) for i in range(len(x_blocks))]


class _connect:
    """The client to use: the one given, one to an address, or a new LocalCluster's."""

    def __init__(self, distributed, client, n_workers: int):
        self.distributed, self.given, self.n_workers = distributed, client, n_workers
        self.cluster = self.client = None

    def __enter__(self):
        distributed = self.distributed
        if isinstance(self.given, distributed.Client):
            return self.given
        if isinstance(self.given, str):
            self.client = distributed.Client(self.given)
            return self.client
        if self.given is not None:
            raise ValueError(
                f"client must be a distributed.Client, a scheduler address or None, "
                f"got {self.given!r}."
            )
        self.cluster = distributed.LocalCluster(
            n_workers=self.n_workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        )
        self.client = distributed.Client(self.cluster)
        return self.client

    def __exit__(self, *exc_info):
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        return False
