"""Parameter mixing on a Dask cluster: shards kept on the workers, lost workers recovered."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from perceptrons import _params as rules
from perceptrons import _validation
from perceptrons.parallel._dask_cluster import connect_cluster
from perceptrons.parallel._dask_runner import (
    _dask_sources,
    _DaskRunner,
    _DaskShards,
    _describe,
    _file_sources,
    _FileStream,
    _import_distributed,
    _is_dask_array,
    _is_path_list,
    _n_samples,
    _prepare_block,
    _scan_file,
    _scatter_source,
)
from perceptrons.parallel._mixing import (
    Training,
    array_shards,
    check_estimator,
    check_shards,
    generators,
    resolve_mixing,
)
from perceptrons.parallel._names import CONNECT_TIMEOUT, DEFAULT_LOCAL_EPOCHS, DEFAULT_MIXING
from perceptrons.parallel._shards import Plan, engine_of

if TYPE_CHECKING:
    from perceptrons.linear._online import OnlineLinearClassifier

__all__ = ["ParameterMixing"]


class ParameterMixing(ClassifierMixin, BaseEstimator):
    """Iterative parameter mixing of a perceptron over the workers of a Dask cluster.

    Every epoch, each of ``n_shards`` shards of the data runs one epoch of the
    estimator from the current mixed weights, on a Dask worker; the shards' weights are
    then mixed into the next epoch's start (McDonald, Hall & Mann 2010). The module
    documentation gives the exact algorithm, the averaged model, the shuffling and the
    behaviour on worker failures. One shard is exactly the serial fit.

    Parameters
    ----------
    estimator : Perceptron or AveragedPerceptron
        The model to train; its hyperparameters set the training (``max_epochs``,
        ``shuffle``, ``random_state``, ``fit_intercept``, ``delta``...). Not modified:
        ``estimator_`` is a clone.
    n_shards : int, default=None
        The number of shards the data is split into. None: for arrays, one per worker
        of ``client`` (or one per CPU for the cluster started here); for a Dask array,
        its row chunks; for files, one per file. Given with a Dask array, its rows are
        rechunked into that many near-equal blocks; with files it must equal their
        number. Unlike scikit-learn's ``n_jobs``, it changes the model (each shard
        trains on its own rows, and their weights are mixed); the workers that run the
        shards do not.
    client : distributed.Client, str or None, default=None
        The cluster: a connected ``Client``, or a scheduler address (e.g.
        ``"tcp://127.0.0.1:8786"``), whose client is closed after ``fit``. None starts a
        ``LocalCluster`` of ``min(n_shards, CPUs)`` single-threaded worker processes
        on 127.0.0.1 (no dashboard) for the fit and closes it afterwards.
    mixing : {"auto", "uniform", "mistakes", "sum"}, default="auto"
        The mean of the shards' weights, their mean weighted by each shard's updates
        in the epoch (its mistakes, for the perceptron; uniform after an epoch without
        updates), or the start plus the
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
    connect_timeout : float, default=10.0
        Seconds the scheduler at a ``client`` address has to accept the connection and
        answer as a Dask scheduler; past them, or when something else answers, the fit
        fails with a one-line ``ConnectionError`` before any work.

    Attributes
    ----------
    estimator_ : Perceptron or AveragedPerceptron
        The fitted model: usable and saveable (:func:`perceptrons.save`) like one fitted
        serially; its ``history_`` holds ``epoch``, ``mistakes``, ``updates``,
        ``examples``, ``shard_mistakes`` and ``shard_updates`` per epoch.
    history_ : list of dict
        Per epoch: ``epoch``, ``mistakes`` and ``updates`` (total), ``shard_mistakes``
        and ``shard_updates`` (one per shard), ``examples``, ``seconds`` (wall time of
        the epoch, mixing included), and the traffic: ``changed_rows`` (weight rows the
        mix changed), ``bytes_sent`` and ``bytes_received``.
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.
    n_shards_ : int
        The number of shards used.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from perceptrons import AveragedPerceptron
    >>> from perceptrons.parallel import ParameterMixing
    >>> X, y = load_iris(return_X_y=True)
    >>> mixer = ParameterMixing(AveragedPerceptron(random_state=0), n_shards=2)
    >>> model = mixer.fit(X, y).estimator_  # doctest: +SKIP
    >>> round(model.score(X, y), 2)  # doctest: +SKIP
    0.97
    """

    def __init__(
        self,
        estimator: OnlineLinearClassifier,
        *,
        n_shards: int | None = None,
        client: Any = None,
        mixing: str = DEFAULT_MIXING,
        local_epochs: int = DEFAULT_LOCAL_EPOCHS,
        average: str = "examples",
        max_retries: int = 3,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        self.estimator = estimator
        self.n_shards = n_shards
        self.client = client
        self.mixing = mixing
        self.local_epochs = local_epochs
        self.average = average
        self.max_retries = max_retries
        self.connect_timeout = connect_timeout

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
        publish_each_epoch: bool = True,
    ) -> Iterator[dict[str, Any]]:
        """Train like :meth:`fit`, pausing after every epoch.

        After each epoch ``estimator_`` holds the current model and the record yielded
        is the epoch's entry of ``history_``. Leaving the loop early stops training
        (and closes a cluster started for the fit). ``publish_each_epoch=False``: the
        model is formed once, as ``fit`` forms it (after the last epoch, or when the
        loop is left), for a caller that reads only the records in between.
        """
        options = {
            "classes": classes,
            "n_features": n_features,
            "read_options": read_options,
            "sample_weight": sample_weight,
            "stream": stream,
            "chunk_size": chunk_size,
        }
        yield from self._epochs(X, y, options, publish_each_epoch=publish_each_epoch)

    def _epochs(self, X, y, options, *, publish_each_epoch: bool) -> Iterator[dict[str, Any]]:
        check_estimator(self.estimator, self.mixing, self.local_epochs, self.average)
        if self.n_shards is not None:
            check_shards(self.n_shards)
        if not rules.integer(0).accepts(self.max_retries):
            raise ValueError(f"max_retries must be an int >= 0, got {self.max_retries!r}.")
        if not rules.real(0, inclusive=False).accepts(self.connect_timeout):
            raise ValueError(
                f"connect_timeout must be a finite number > 0, got {self.connect_timeout!r}."
            )
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
                    "without updates, or give X as arrays)."
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
        # A fit that fails leaves the new estimator unfitted, as it was cloned.
        with self.estimator_._all_or_nothing():
            with (
                connect_cluster(
                    distributed, self.client, self._cluster_size(X), self.connect_timeout
                ) as client,
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
                    n = self.n_shards or len(workers)
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
                self.n_shards_ = len(shards.futures)
                runner = _DaskRunner(client, shards, plan, self.max_retries)
                mixing = resolve_mixing(self.estimator_, self.mixing)
                training = Training(
                    self.estimator_,
                    plan,
                    mixing,
                    runner,
                    streams,
                    shards.sizes,
                    validation=validation,
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
        if self.n_shards is not None:
            n = self.n_shards
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
        if self.n_shards is not None and self.n_shards != len(paths):
            raise ValueError(
                f"n_shards={self.n_shards} but {len(paths)} files: with files, "
                "each file is one shard."
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
            raw_sources = _file_sources(client, X, y, self.n_shards, read_options)
        else:
            raw_sources = _dask_sources(client, X, y, self.n_shards)
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
            raise ValueError(f"shard {sizes.index(0)} holds no examples.")
        sources = [rebuild_source(i) for i in range(len(futures))]
        shards = _DaskShards(futures, holders, sources, sizes)
        _, streams = generators(estimator.random_state, len(sizes))
        return shards, plan, streams


def _width(info: dict[str, Any], zero_based: bool | None) -> int:
    """A block's number of features once indexed like all the others."""
    if zero_based is None or info["zero_based"] is None:
        return info["width"]
    return info["width"] + int(zero_based) - int(info["zero_based"])
