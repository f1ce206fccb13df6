"""The Dask side of :class:`~perceptrons.parallel.dask.ParameterMixing`: the workers'
tasks and the client's dealings with the cluster.

On the workers: reading a file or computing a Dask array's block, validating it into a
shard, streaming a file a chunk at a time, and each shard's epoch with its trainer kept
there between epochs. On the client: where the shards are put and how a lost one is
rebuilt, the runner of each epoch's tasks with its recovery from lost workers, sending
data that outlives a dying worker (the connection to the cluster is ``_dask_cluster``'s).
Dask is imported only when called for (``_import_distributed``), so the package imports
without it.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from perceptrons import _validation
from perceptrons.parallel._mixing import check_shards
from perceptrons.parallel._shards import (
    Plan,
    ShardData,
    ShardResult,
    ShardTrainer,
    engine_of,
    shard_epoch,
)

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
                f"a shard has {X.shape[1] + shift} features, more than "
                f"n_features={plan.n_features}."
            )
        X = sp.csr_matrix(
            (X.data, X.indices + shift, X.indptr), shape=(X.shape[0], plan.n_features)
        )
    estimator = plan.estimator()
    X, y = _validation.validate_training_data(estimator, X, block.y, reset=True)
    if X.shape[1] != plan.n_features:
        raise ValueError(
            f"a shard has {X.shape[1]} features where {plan.n_features} were expected."
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


def _file_sources(client, paths, y, n_shards, read_options) -> list[Callable[[str], Any]]:
    """One source per file: the worker reads it."""
    if y is not None:
        raise ValueError("y must be None when X is a list of files (they hold the labels).")
    paths = [os.fspath(Path(p)) for p in paths]
    if n_shards is not None and n_shards != len(paths):
        raise ValueError(
            f"n_shards={n_shards} but {len(paths)} files: with files, each file is one shard."
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


def _dask_sources(client, X, y, n_shards: int | None) -> list[Callable[[str], Any]]:
    """One source per row block of a Dask array: compute the block where it lives."""
    import dask.array as da

    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got a dask array of shape {X.shape}.")
    if y is None:
        raise ValueError("y is required with a dask array X.")
    if n_shards is not None:
        n_rows = X.shape[0]
        if np.isnan(n_rows):
            raise ValueError("rechunking needs known chunk sizes: X.compute_chunk_sizes().")
        check_shards(n_shards, int(n_rows))
        sizes = tuple(len(part) for part in np.array_split(np.arange(int(n_rows)), n_shards))
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
