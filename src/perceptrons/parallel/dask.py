"""Parameter mixing on a Dask cluster: shards kept on the workers, lost workers recovered."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from perceptrons import _params as rules
from perceptrons import _validation
from perceptrons.parallel._mixing import (
    Plan,
    ShardData,
    ShardResult,
    ShardTrainer,
    Training,
    array_shards,
    check_estimator,
    check_partitions,
    engine_of,
    generators,
    resolve_mixing,
    shard_epoch,
)

if TYPE_CHECKING:
    from perceptrons._online import OnlineLinearClassifier

__all__ = ["ParameterMixing"]

_INSTALL_HINT = 'ParameterMixing needs dask and distributed: pip install "perceptrons[distributed]"'


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
    assert data.y is not None  # labels=True: read_data raises when labels are missing
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


def _prepare_block(block: _RawBlock, plan: Plan, zero_based: bool | None) -> ShardData:
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
    return ShardData(X, engine_of(estimator).encode_targets(y))


def _scan_file(path: str, options: dict[str, Any], chunk_size: int) -> dict[str, Any]:
    """The first streamed pass over a file on its worker: what :func:`_describe` says of
    a block read whole, with memory bounded by a chunk."""
    from perceptrons.io.stream import scan

    found = scan(path, options.get("format", "auto"), chunk_size=chunk_size)
    if found.format != "svmlight":
        raise ValueError(
            f"{path}: {found.format} files cannot be streamed by the workers (svmlight only)."
        )
    zero_based = options.get("zero_based", "auto")
    own = found.zero_based if zero_based == "auto" else bool(zero_based)
    width = int(found.n_features or 1)  # svmlight: always measured
    if own != found.zero_based:  # as scan measured it, in the indexing asked for
        width += 1 if own else -1
    return {
        "labels": found.classes,
        "width": max(int(width or 1), 1),
        "rows": found.n_examples,
        "zero_based": own,
        "format": found.format,
    }


@dataclass
class _FileStream:
    """A shard that is a file its worker reads ``chunk_size`` lines at a time, every
    epoch: the worker's memory holds one chunk (see :meth:`ShardData.pieces`)."""

    path: str
    format: str
    chunk_size: int
    info: dict[str, Any]  # what _scan_file found
    zero_based: bool | None  # the indexing shared by every file
    plan: Plan
    rows: None = None

    @property
    def n_samples(self) -> int:
        return int(self.info["rows"])

    def pieces(self, rng, engine):
        from perceptrons.io.stream import iter_chunks

        for chunk in iter_chunks(
            self.path,
            self.format,
            chunk_size=self.chunk_size,
            n_features=self.info["width"],
            zero_based=self.info["zero_based"],
        ):
            data = chunk.data
            assert data.y is not None
            block = _RawBlock(data.X, data.y, self.info["zero_based"])
            shard = _prepare_block(block, self.plan, self.zero_based)
            yield shard.X, shard.codes, shard.order(rng), None


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


# On each worker process: the trainers of the shards it holds, by fit and shard. A trainer
# keeps its shard's state between epochs, so that only changed rows travel.
_TRAINERS: dict[str, ShardTrainer] = {}


def _remote_epoch(shard, key, start, plan, rng_state, slack) -> ShardResult | None:
    """A shard's epoch on its worker, with the trainer kept there (None: the trainer is
    new, after a lost worker, and needs the whole start; see :func:`shard_epoch`)."""
    trainer = _TRAINERS.get(key)
    if trainer is None:
        trainer = _TRAINERS[key] = ShardTrainer(plan)
    return shard_epoch(trainer, shard, start, rng_state, slack)


def _forget_trainers(token: str) -> None:
    for key in [k for k in _TRAINERS if k.startswith(token)]:
        del _TRAINERS[key]


class _DaskRunner:
    """Runs each epoch's shard tasks on the cluster, recovering from lost workers."""

    def __init__(self, client, shards: _DaskShards, plan: Plan, max_retries: int):
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

    def close(self) -> None:
        """Drop the trainers of this fit from the workers (best effort: a worker that
        is gone has dropped them already)."""
        try:
            self.client.run(_forget_trainers, self.token)
        except Exception:  # cleanup must not hide the fit's own outcome
            pass

    def __call__(self, epoch, start, rng_states, slacks, whole_start) -> list[ShardResult]:
        distributed = _import_distributed()
        client = self.client
        # Sent to one worker; the others fetch it from there as their tasks need it. (A
        # broadcast replicates through the scheduler, which can wait forever on a worker
        # that dies meanwhile; a lost copy here is sent again below.)
        starts = {"rows": _scatter(client, start)}
        results: dict[int, ShardResult] = {}
        pending = list(range(len(self.shards.futures)))
        whole: set[int] = set()  # shards whose trainer is new: they need the whole start
        recoveries = attempts = 0
        while pending:
            attempts += 1
            if whole and "whole" not in starts:
                starts["whole"] = _scatter(client, whole_start())
            futures = {
                i: client.submit(
                    _remote_epoch,
                    self.shards.futures[i],
                    f"{self.token}-shard{i}",
                    starts["whole" if i in whole else "rows"],
                    self.plan,
                    rng_states[i],
                    slacks[i],
                    key=f"perceptrons-mixing-{self.token}-epoch{epoch}-shard{i}-{attempts}",
                    workers=[self.shards.holders[i]],
                    allow_other_workers=True,
                    pure=False,
                )
                for i in pending
            }
            _settle(distributed, list(futures.values()))
            done = [i for i, future in futures.items() if future.status == "finished"]
            failed = []
            for i, result in zip(done, client.gather([futures[i] for i in done]), strict=True):
                if result is None:  # a new trainer (its worker had not run this shard)
                    whole.add(i)
                    failed.append(i)
                else:
                    results[i] = result
            lost = []
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
                else:  # cancelled: its data or the start was lost with a worker
                    lost.append(i)
            pending = sorted(failed + lost)
            if not lost:
                continue
            recoveries += 1
            alive = self._alive_workers()
            gone = sorted(self.known_workers - set(alive))
            if recoveries > self.max_retries:
                raise RuntimeError(
                    f"parameter mixing, epoch {epoch}: shard(s) {lost} failed "
                    f"{recoveries} time(s) (max_retries={self.max_retries}); lost "
                    f"worker(s): {', '.join(gone) or 'unknown'} (shard data held by "
                    f"{', '.join(sorted({self.shards.holders[i] for i in lost}))})."
                )
            time.sleep(0.1 * recoveries)  # let the scheduler settle the worker's loss
            for i in lost:
                if self.shards.futures[i].status != "finished":
                    self.shards.rebuild(i, alive)
            for name, future in list(starts.items()):
                if future.status != "finished":
                    del starts[name]
            if "rows" not in starts:
                starts["rows"] = _scatter(client, start)
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
    mixing : {"auto", "uniform", "mistakes", "sum"}, default="auto"
        The mean of the shards' weights, their mean weighted by each shard's mistakes
        in the epoch (uniform after an epoch without mistakes), or the start plus the
        sum of the shards' changes (each shard's updates count in full, as in one
        serial pass: it diverges from 4 shards on our data sets, see
        ``benchmarks/RESULTS.md``). "auto": "mistakes" for the perceptrons (the most
        accurate at 2 to 16 shards in that study), "uniform" for logistic regression.
    local_epochs : int, default=1
        Passes each shard makes over its examples between two mixes; the estimator's
        ``max_epochs`` counts the mixes.
    average : {"examples", "mixes"}, default="examples"
        Averaged models: the mean of the weights after every example of every shard,
        or the mean of the mixed weights of every epoch.
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
        ``examples``, ``seconds`` (wall time of the epoch, mixing included), and the
        traffic: ``changed_rows`` (weight rows the mix changed), ``bytes_sent`` and
        ``bytes_received``.
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
        estimator: OnlineLinearClassifier,
        *,
        n_partitions: int | None = None,
        client: Any = None,
        mixing: str = "auto",
        local_epochs: int = 1,
        average: str = "examples",
        max_retries: int = 3,
    ) -> None:
        self.estimator = estimator
        self.n_partitions = n_partitions
        self.client = client
        self.mixing = mixing
        self.local_epochs = local_epochs
        self.average = average
        self.max_retries = max_retries

    def fit(
        self,
        X: Any,
        y: ArrayLike | None = None,
        *,
        classes: ArrayLike | None = None,
        n_features: int | None = None,
        read_options: dict[str, Any] | None = None,
        sample_weight: ArrayLike | None = None,
        stream: bool = False,
        chunk_size: int = 10_000,
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
        sample_weight : array-like of shape (n_samples,) or float, default=None
            In-memory arrays only: the weight of each example, as for the estimator's
            ``fit`` (multiplied by its ``class_weight``); each shard carries the weights
            of its own rows.
        stream : bool, default=False
            Files (svmlight): each worker reads its file ``chunk_size`` lines at a time
            every epoch instead of holding it in memory (out of core: a worker's memory
            holds one chunk and the model). ``shuffle`` then reorders the examples
            within each chunk. A first streamed pass finds the labels and widths unless
            ``classes`` and ``n_features`` are given.
        chunk_size : int, default=10000
            Lines per chunk with ``stream``.

        Returns
        -------
        self : object
        """
        options = {
            "classes": classes,
            "n_features": n_features,
            "read_options": read_options,
            "sample_weight": sample_weight,
            "stream": stream,
            "chunk_size": chunk_size,
        }
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
        sample_weight: ArrayLike | None = None,
        stream: bool = False,
        chunk_size: int = 10_000,
    ) -> Iterator[dict[str, Any]]:
        """Train like :meth:`fit`, pausing after every epoch.

        After each epoch ``estimator_`` holds the current model and the record yielded
        is the epoch's entry of ``history_``. Leaving the loop early stops training
        (and closes a cluster started for the fit).
        """
        options = {
            "classes": classes,
            "n_features": n_features,
            "read_options": read_options,
            "sample_weight": sample_weight,
            "stream": stream,
            "chunk_size": chunk_size,
        }
        yield from self._epochs(X, y, options, publish_each_epoch=True)

    def _epochs(self, X, y, options, *, publish_each_epoch: bool) -> Iterator[dict[str, Any]]:
        check_estimator(self.estimator, self.mixing, self.local_epochs, self.average)
        if self.n_partitions is not None:
            check_partitions(self.n_partitions)
        if not rules.integer(0).accepts(self.max_retries):
            raise ValueError(f"max_retries must be an int >= 0, got {self.max_retries!r}.")
        if options["stream"]:
            if not _is_path_list(X):
                raise ValueError("stream=True reads files: X must be a list of paths.")
            if not rules.integer(1).accepts(options["chunk_size"]):
                raise ValueError(f"chunk_size must be an int >= 1, got {options['chunk_size']!r}.")
            if engine_of(self.estimator).delta != 0:
                raise ValueError(
                    "stream=True does not support the Δ trick (delta > 0): its weights "
                    "are one per example, kept in memory."
                )
        if _is_path_list(X) or _is_dask_array(X):
            if engine_of(self.estimator).validation_fraction is not None:
                raise ValueError(
                    "early_stopping with a validation_fraction holds out examples of "
                    "in-memory arrays: the rows of files and Dask arrays stay on the "
                    "workers (pass validation_fraction=None to stop after an epoch "
                    "without mistakes, or give X as arrays)."
                )
            for name, value in (
                ("class_weight", getattr(self.estimator, "class_weight", None)),
                ("sample_weight", options["sample_weight"]),
            ):
                if value is not None:
                    raise ValueError(
                        f"{name} is supported with in-memory arrays only: the labels and "
                        "rows of files and Dask arrays stay on the workers."
                    )
        distributed = _import_distributed()
        self.estimator_ = clone(self.estimator)
        self.history_: list[dict[str, Any]] = []
        with (
            _connect(distributed, self.client, self._cluster_size(X)) as client,
            # The waits and gathers use this client, even one not set as the default.
            client.as_current(),
        ):
            workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
            if not workers:
                client.wait_for_workers(1, timeout=60)
                workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
            validation = None
            if options["stream"]:
                shards, plan, streams = self._stream_shards(
                    client,
                    workers,
                    X,
                    y,
                    options["classes"],
                    options["n_features"],
                    options["read_options"] or {},
                    options["chunk_size"],
                )
            elif _is_path_list(X) or _is_dask_array(X):
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
                dealt = array_shards(
                    self.estimator_,
                    X,
                    y,
                    n,
                    sample_weight=options["sample_weight"],
                    local_epochs=self.local_epochs,
                    average=self.average,
                )
                plan, streams, validation = dealt.plan, dealt.streams, dealt.validation
                shards = _DaskShards.place(
                    [_scatter_source(client, shard) for shard in dealt.shards],
                    workers,
                    [shard.n_samples for shard in dealt.shards],
                )
            self.n_partitions_ = len(shards.futures)
            runner = _DaskRunner(client, shards, plan, self.max_retries)
            mixing = resolve_mixing(self.estimator_, self.mixing)
            training = Training(
                self.estimator_, plan, mixing, runner, streams, shards.sizes, validation=validation
            )
            training.history = self.history_
            try:
                yield from training.epochs(publish_each_epoch)
            finally:
                runner.close()

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

    def _plan(self, infos, classes, n_features, zero_based, n_shards=None):
        """The plan, and the indexing shared by the blocks: the labels, width and
        indexing the blocks' descriptions (``infos``, from the workers' first pass) give
        where they are not given."""
        if infos is not None:
            bases = [info["zero_based"] for info in infos if info["zero_based"] is not None]
            if zero_based is None and bases:
                # read_data's rule for one file, over all of them: 0-based if any index is 0.
                zero_based = any(bases)
            if classes is None:
                classes = np.unique(np.concatenate([info["labels"] for info in infos]))
            if n_features is None:
                n_features = max(_width(info, zero_based) for info in infos)
        estimator = self.estimator_
        classes = _validation.label_set(np.asarray(classes), None, estimator, incremental=False)
        if not rules.integer(1).accepts(n_features):
            raise ValueError(f"n_features must be an int >= 1, got {n_features!r}.")
        plan = Plan.of(
            estimator,
            classes,
            n_features,
            n_shards=len(infos) if n_shards is None else n_shards,
            local_epochs=self.local_epochs,
            average=self.average,
        )
        estimator.classes_ = classes
        estimator.n_features_in_ = int(n_features)
        return plan, zero_based

    def _stream_shards(self, client, workers, paths, y, classes, n_features, options, chunk_size):
        """Shards that are files streamed by their workers every epoch."""
        if y is not None:
            raise ValueError("y must be None when X is a list of files (they hold the labels).")
        paths = [os.fspath(Path(p)) for p in paths]
        if self.n_partitions is not None and self.n_partitions != len(paths):
            raise ValueError(
                f"n_partitions={self.n_partitions} but {len(paths)} files: with files, "
                "each file is one partition."
            )
        unknown = set(options) - {"format", "zero_based"}
        if unknown:
            raise ValueError(
                f"stream=True takes the read_options format and zero_based, not "
                f"{', '.join(sorted(unknown))}."
            )
        holders = [workers[i % len(workers)] for i in range(len(paths))]
        infos = client.gather(
            [
                client.submit(
                    _scan_file, path, options, chunk_size, workers=[w], allow_other_workers=True
                )
                for path, w in zip(paths, holders, strict=True)
            ]
        )
        zero_based = options.get("zero_based", "auto")
        plan, zero_based = self._plan(
            infos, classes, n_features, None if zero_based == "auto" else zero_based
        )
        files = [
            _FileStream(path, info["format"], chunk_size, info, zero_based, plan)
            for path, info in zip(paths, infos, strict=True)
        ]
        sources = [_scatter_source(client, shard) for shard in files]
        shards = _DaskShards.place(sources, workers, [info["rows"] for info in infos])
        _, streams = generators(self.estimator_.random_state, len(paths))
        return shards, plan, streams

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
        infos = sizes = None
        if classes is None or n_features is None or (files and zero_based is None):
            infos = client.gather([client.submit(_describe, raw, pure=False) for raw in raws])
            sizes = [info["rows"] for info in infos]
        plan, zero_based = self._plan(infos, classes, n_features, zero_based, len(raws))

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
        _, streams = generators(estimator.random_state, len(sizes))
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


def _n_samples(shard: ShardData) -> int:
    return shard.n_samples


def _scatter_source(client, shard: ShardData) -> Callable[[str], Any]:
    """Scatter a shard to one worker; called again with the client's copy if lost."""
    return lambda worker: _scatter(client, shard, worker=worker)


def _scatter(client, data, *, worker: str | None = None, tries: int = 8):
    """``client.scatter`` that outlives a worker dying meanwhile: until the scheduler
    has noticed it, sending to it fails (a connection error, or the scheduler's
    ``KeyError`` for a worker it listed a moment before and has just removed); then try
    again, to any worker."""
    for attempt in range(tries):
        workers = [worker] if worker is not None and attempt == 0 else None
        try:
            return client.scatter(data, workers=workers, hash=False)
        except (OSError, KeyError) as exc:  # CommClosedError and friends
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
        check_partitions(n_partitions, int(n_rows))
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
