"""``perceptrons train --shards/--scheduler``: parameter mixing on threads or on Dask.

Which runner trains (``--backend auto``):

* one DATA file read into memory: threads of this process
  (:func:`perceptrons.parallel.mix_threads`): no process to start, the data shared, one
  thread per shard up to one per CPU;
* ``--scheduler ADDRESS``, several DATA files (one shard each, read by the workers
  themselves) or ``--stream`` (each worker streams its file chunk by chunk):
  :class:`perceptrons.parallel.ParameterMixing` on that cluster, else on a local Dask
  cluster of single-threaded worker processes started for the fit (one per shard, up to
  one per CPU).

``--shards N`` is the library's ``n_shards``: the number of shards, which changes the
model; the threads or workers that run them do not.

``--backend threads`` or ``dask`` forces one. After the fit one line on stderr says what
ran, the fit's seconds and the accuracy (on ``--dev``, else on the training data);
``--compare-serial`` also fits the same estimator serially on the same data and prints
the accuracy cost and the speed-up. ``--json`` carries the same as the ``parallel``
object. Nothing here is algorithm: the options go to the public API as they are, and
``--mixing`` and ``--local-epochs`` only when given (the library's defaults otherwise).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

from perceptrons.cli._common import (
    EXIT_USAGE,
    UserError,
    counts_text,
    make_estimator,
    nonzero_text,
    read,
    say,
)

#: Options of parameter mixing only: given without --shards/--scheduler, a usage error.
MIXING_ONLY = ("backend", "mixing", "local_epochs", "compare_serial", "connect_timeout")


def mixing_requested(args: argparse.Namespace) -> bool:
    """Whether ``train`` trains by parameter mixing."""
    return args.shards is not None or args.scheduler is not None


def check_usage(args: argparse.Namespace) -> None:
    """Usage errors of the parameter-mixing options, before any data is read."""
    files = args.data
    if not mixing_requested(args):
        if len(files) > 1:
            raise UserError(
                f"{len(files)} DATA files: several files train one shard each on Dask "
                "workers: give --shards N or --scheduler ADDRESS (or one file)",
                EXIT_USAGE,
            )
        for dest in MIXING_ONLY:
            if getattr(args, dest) not in (None, False, "auto"):
                raise UserError(
                    f"--{dest.replace('_', '-')} applies to parameter mixing: give "
                    "--shards N or --scheduler ADDRESS",
                    EXIT_USAGE,
                )
        return
    if args.connect_timeout is not None and args.scheduler is None:
        raise UserError(
            "--connect-timeout applies to --scheduler: the local cluster is started here",
            EXIT_USAGE,
        )
    if args.mixing is not None:
        _check_mixing(args)
    on_workers = len(files) > 1 or args.stream
    if args.backend == "threads":
        if args.scheduler is not None:
            raise UserError(
                "--backend threads trains in this process; --scheduler needs --backend dask "
                "(or auto)",
                EXIT_USAGE,
            )
        if on_workers:
            what = "--stream" if args.stream else f"{len(files)} DATA files"
            raise UserError(
                f"--backend threads trains on data in memory; with {what} the Dask workers "
                "read the files: use --backend dask (or auto)",
                EXIT_USAGE,
            )
    if on_workers:
        _check_file_shards(args)


def _check_mixing(args: argparse.Namespace) -> None:
    """--mixing against the algorithm, by the library's own rule (e.g. logistic
    regression makes no mistakes to weigh shards by)."""
    from perceptrons.parallel._mixing import check_estimator

    probe = make_estimator(argparse.Namespace(**{**vars(args), "class_weight": None}))
    try:
        check_estimator(probe, args.mixing)
    except ValueError as error:
        raise UserError(f"--mixing {args.mixing}: {error}", EXIT_USAGE) from None


def _check_file_shards(args: argparse.Namespace) -> None:
    """Files read by the workers: one shard each."""
    files, shards = args.data, args.shards
    if len(files) == 1 and shards not in (None, -1, 1):
        raise UserError(
            f"--stream --shards {shards}: each file is one shard, streamed by a worker of "
            f"its own, and there is one DATA file; give {shards} files (e.g. split -n "
            f"l/{shards} -d {files[0]} part-) or --shards 1",
            EXIT_USAGE,
        )
    if shards not in (None, -1, len(files)):
        raise UserError(
            f"--shards {shards} but {len(files)} DATA files: each file is one shard, read "
            f"by a Dask worker (give --shards {len(files)}, or -1)",
            EXIT_USAGE,
        )
    if args.compare_serial:
        raise UserError(
            "--compare-serial trains serially in memory: one DATA file, without --stream",
            EXIT_USAGE,
        )
    if args.class_weight is not None:
        raise UserError(
            "--class-weight needs every label in memory; the workers read their files "
            "themselves (train one DATA file without --stream)",
            EXIT_USAGE,
        )
    if args.stream and (args.shuffle_window or args.skip_bad_lines):
        option = "--shuffle-window" if args.shuffle_window else "--skip-bad-lines"
        raise UserError(
            f"{option}: the workers stream their files without it (each chunk is "
            "shuffled on its own; a bad line stops the fit)",
            EXIT_USAGE,
        )
    if args.dev is not None and not os.path.isfile(args.dev):
        raise UserError(f"{args.dev}: no such file")
    if args.scheduler is None:  # the local workers read the files from here
        from perceptrons.io.formats import TEXT_FORMATS, detect_format

        for path in files:
            if not os.path.isfile(path):
                raise UserError(f"{path}: no such file")
            fmt = detect_format(path) if args.format == "auto" else args.format
            if args.stream and fmt != "svmlight":
                raise UserError(
                    f"{path}: {fmt}; the workers stream svmlight files only (without "
                    "--stream they read csv and idx files whole)",
                    EXIT_USAGE,
                )
            if fmt in TEXT_FORMATS:
                raise UserError(
                    f"{path}: {fmt} is text; the workers read numeric formats "
                    "(svmlight, csv, idx) themselves: featurize first, or train one file "
                    "in memory with --shards",
                    EXIT_USAGE,
                )


def backend(args: argparse.Namespace) -> str:
    """``threads`` or ``dask``: what trains (see the module documentation)."""
    if args.backend != "auto":
        return args.backend
    if args.scheduler is not None or len(args.data) > 1 or args.stream:
        return "dask"
    return "threads"


def _n_shards(args: argparse.Namespace) -> int | None:
    """--shards as a number: -1 is one per CPU (one per file with files; None with a
    scheduler, whose workers then decide)."""
    if args.shards is None or args.shards == -1:
        if args.scheduler is not None:
            return None
        if len(args.data) > 1 or args.stream:
            return len(args.data)
        return os.cpu_count() or 1
    return args.shards


def _local_workers(n_shards: int | None) -> int | None:
    """The size of the local Dask cluster for ``n_shards`` shards: one single-threaded
    worker per shard, up to one per CPU (as ``ParameterMixing`` starts its own); None
    with a scheduler (``n_shards`` None: no local cluster)."""
    return None if n_shards is None else max(1, min(n_shards, os.cpu_count() or 1))


def _mixing_options(args: argparse.Namespace) -> dict[str, Any]:
    """--mixing and --local-epochs, only where given: the library's defaults otherwise."""
    options = {}
    if args.mixing is not None:
        options["mixing"] = args.mixing
    if args.local_epochs is not None:
        options["local_epochs"] = args.local_epochs
    return options


def _effective(function: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The mixing and local epochs used: those given, else ``function``'s defaults."""
    parameters = inspect.signature(function).parameters
    return {
        name: options.get(name, parameters[name].default) for name in ("mixing", "local_epochs")
    }


@contextlib.contextmanager
def _dask_client(args: argparse.Namespace, n_workers: int | None) -> Iterator[Any]:
    """A client of the --scheduler's cluster, or of a local cluster of ``n_workers``
    single-threaded processes started here (and closed after)."""
    try:
        import distributed
    except ImportError as missing:
        raise UserError(f'{missing}: pip install "perceptrons[distributed]"') from None
    from perceptrons.parallel._dask_cluster import (
        SchedulerConnectionError,
        connect_scheduler,
        quiet_dask_logs,
        start_local_cluster,
    )
    from perceptrons.parallel._names import CONNECT_TIMEOUT

    with quiet_dask_logs(), contextlib.ExitStack() as closing:  # closes client, then cluster
        if args.scheduler is not None:
            timeout = CONNECT_TIMEOUT if args.connect_timeout is None else args.connect_timeout
            try:
                client = connect_scheduler(
                    distributed, args.scheduler, timeout, option="--connect-timeout"
                )
            except SchedulerConnectionError as error:
                raise UserError(f"--scheduler {error}") from None
        else:
            cluster = start_local_cluster(distributed, n_workers)
            closing.callback(cluster.close)
            client = distributed.Client(cluster)
        closing.callback(client.close)
        if not client.scheduler_info(n_workers=-1)["workers"]:
            client.wait_for_workers(1, timeout=60)
        yield client


def _n_cluster_workers(client: Any) -> int:
    return len(client.scheduler_info(n_workers=-1)["workers"])


def _entry(args: argparse.Namespace, record: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """An epoch's JSON entry and line from a mixing record: mistakes and updates (the
    perceptrons) or mean log-loss (logistic regression), in all and per shard."""
    per_shard = [key for key in record if key.startswith("shard_")]
    shards = len(record[per_shard[0]])
    entry: dict[str, Any] = {"epoch": record["epoch"]}
    line = f"epoch {record['epoch']}: "
    if "log_loss" in record:
        entry["log_loss"] = record["log_loss"]
        line += f"mean log-loss {record['log_loss']:.4f} over "
    elif args.algorithm != "logistic":  # (its shards make no mistakes to count)
        entry["mistakes"] = record["mistakes"]
        if "updates" in record:
            entry["updates"] = record["updates"]
        line += f"{counts_text(record)} in "
    line += f"{record['examples']} examples on {shards} shards" + nonzero_text(record)
    keys = ("examples", "n_nonzero", "seconds", "changed_rows", "bytes_sent", "bytes_received")
    for key in (*per_shard, *keys):
        if key in record:
            entry[key] = record[key]
    return entry, line


def _shards(history: list[dict[str, Any]]) -> int:
    per_shard = [key for key in history[-1] if key.startswith("shard_")]
    return len(history[-1][per_shard[0]])


def train_in_memory(
    args: argparse.Namespace, estimator: Any, X: Any, y: Any, X_dev: Any, y_dev: Any, weights: Any
) -> tuple[Any, list[dict[str, Any]], dict[str, Any]]:
    """Train on arrays in memory; the fitted estimator, the epochs' records and the
    ``parallel`` report (its accuracy filled in by :func:`report`)."""
    from sklearn.base import clone

    serial = clone(estimator) if args.compare_serial else None
    options = _mixing_options(args)
    sample_weight = {} if weights is None else {"sample_weight": weights}
    n_shards = _n_shards(args)
    if backend(args) == "threads":
        from perceptrons.parallel import mix_threads
        from perceptrons.parallel.threads import resolve_threads

        assert n_shards is not None  # threads need --shards (checked with the options)
        started = time.perf_counter()
        try:
            mix_threads(estimator, X, y, n_shards=n_shards, **options, **sample_weight)
        except ValueError as error:
            said = f"n_shards={n_shards} "
            if not str(error).startswith(said):
                raise
            # Refused for this run's rows or memory: in the words the user wrote.
            raise UserError(f"--shards {n_shards} {str(error).removeprefix(said)}") from None
        seconds = time.perf_counter() - started
        records = []
        for record in estimator.history_:  # the threads report once the fit is done
            entry, line = _entry(args, record)
            records.append(entry)
            say(args, line)
        summary = {
            "backend": "threads",
            "cluster": None,
            "workers": resolve_threads(n_shards),  # the threads that ran the shards
            "shards": _shards(estimator.history_),
            **_effective(mix_threads, options),
            "fit_seconds": round(seconds, 6),
            "cluster_seconds": 0.0,
        }
    else:
        from perceptrons.parallel import ParameterMixing

        started = time.perf_counter()
        with _dask_client(args, _local_workers(n_shards)) as client:
            cluster_seconds = time.perf_counter() - started
            mixer = ParameterMixing(estimator, n_shards=n_shards, client=client, **options)
            score = None if X_dev is None else (lambda model: model.score(X_dev, y_dev))
            records, seconds = _mix(args, mixer, (X, y), sample_weight, score)
            summary = {
                "backend": "dask",
                "cluster": args.scheduler or "local",
                "workers": _n_cluster_workers(client),
                "shards": mixer.n_shards_,
                **_effective(ParameterMixing, options),
                "fit_seconds": round(seconds, 6),
                "cluster_seconds": round(cluster_seconds, 3),
                **_traffic(mixer.history_),
            }
        estimator = mixer.estimator_
    if serial is not None:
        started = time.perf_counter()
        serial.fit(X, y, **sample_weight)
        summary["serial"] = {"fit_seconds": round(time.perf_counter() - started, 6)}
        summary["serial_model"] = serial  # scored, then dropped, by report()
    return estimator, records, summary


def train_files(
    args: argparse.Namespace, estimator: Any, classes: Any
) -> tuple[Any, list[dict[str, Any]], dict[str, Any], Any]:
    """Train on DATA files each read (``--stream``: streamed) by a Dask worker, one
    shard per file; as :func:`train_in_memory`, and the --dev data read for the model
    (as ``evaluate`` reads it), or None."""
    from perceptrons.io.prepare import model_inputs
    from perceptrons.parallel import ParameterMixing

    options = _mixing_options(args)
    read_options: dict[str, Any] = {}
    if args.format != "auto":
        read_options["format"] = args.format
    if not args.stream:
        read_options["skip_bad_lines"] = args.skip_bad_lines
        if args.label_column is not None:
            read_options["label_column"] = args.label_column
    fit_options: dict[str, Any] = {"read_options": read_options}
    if classes is not None:
        fit_options["classes"] = classes
    if args.stream:
        fit_options.update(stream=True, chunk_size=args.chunk_size)
    dev: list[Any] = []  # read once the first epoch has fixed the model's width

    def score(model: Any) -> float:
        if not dev:
            data = read(args, args.dev, labels=True, model=model)
            dev.append((model_inputs(model, data), data.y))
        return float(model.score(*dev[0]))

    paths = [os.path.abspath(path) for path in args.data]
    started = time.perf_counter()
    with _dask_client(args, _local_workers(_n_shards(args))) as client:
        cluster_seconds = time.perf_counter() - started
        mixer = ParameterMixing(estimator, client=client, **options)
        scorer = score if args.dev is not None else None
        records, seconds = _mix(args, mixer, (paths,), fit_options, scorer)
        summary = {
            "backend": "dask",
            "cluster": args.scheduler or "local",
            "workers": _n_cluster_workers(client),
            "shards": mixer.n_shards_,
            **_effective(ParameterMixing, options),
            "streamed": bool(args.stream),
            "fit_seconds": round(seconds, 6),
            "cluster_seconds": round(cluster_seconds, 3),
            **_traffic(mixer.history_),
        }
    return mixer.estimator_, records, summary, dev[0] if dev else None


def _mix(args, mixer, data, options, score) -> tuple[list[dict[str, Any]], float]:
    """Run ``mixer.fit_epochs``, one line per epoch; the records and the seconds of the
    fit (``score``, the dev accuracy of the model after each epoch, not counted)."""
    records, scoring = [], 0.0
    started = time.perf_counter()
    # The model is read between epochs only to score the dev data.
    for record in mixer.fit_epochs(*data, **options, publish_each_epoch=score is not None):
        entry, line = _entry(args, record)
        if score is not None:
            began = time.perf_counter()
            entry["dev_accuracy"] = score(mixer.estimator_)
            scoring += time.perf_counter() - began
            line += f", dev accuracy {entry['dev_accuracy']:.4f}"
        records.append(entry)
        say(args, line)
    return records, time.perf_counter() - started - scoring


def _traffic(history: list[dict[str, Any]]) -> dict[str, int]:
    """Bytes sent to and received from the shards over the fit."""
    return {
        key: int(sum(record[key] for record in history))
        for key in ("bytes_sent", "bytes_received")
        if all(key in record for record in history)
    }


def report(
    args: argparse.Namespace, summary: dict[str, Any], estimator: Any, X: Any, y: Any, on: str
) -> dict[str, Any]:
    """Score the mixed model (and the serial one) on ``X, y`` (``on``: ``"dev"`` or
    ``"train"``; ``X`` None: not measured), print the summary to stderr unless --quiet,
    and return the ``parallel`` object of --json."""
    serial = summary.pop("serial_model", None)
    serial_seconds = summary.pop("serial", None)
    summary["accuracy_on"] = on if X is not None else None
    summary["accuracy"] = None if X is None else float(estimator.score(X, y))
    if serial is not None:
        summary["serial"] = {**serial_seconds, "accuracy": float(serial.score(X, y))}
        summary["accuracy_cost_points"] = round(
            100 * (summary["accuracy"] - summary["serial"]["accuracy"]), 4
        )
        summary["speedup"] = round(
            summary["serial"]["fit_seconds"] / max(summary["fit_seconds"], 1e-9), 3
        )
    if not args.quiet:
        for line in _summary_lines(summary):
            print(line, file=sys.stderr, flush=True)
    return summary


def _summary_lines(summary: dict[str, Any]) -> list[str]:
    if summary["backend"] == "threads":
        ran = f"parameter mixing on {summary['workers']} threads"
    else:
        where = summary["cluster"]
        cluster = "a local Dask cluster" if where == "local" else f"the Dask cluster at {where}"
        ran = f"parameter mixing on {cluster} of {summary['workers']} workers"
    epochs = summary["local_epochs"]
    ran += (
        f" ({summary['shards']} shards, mixing {summary['mixing']}, {epochs} local "
        f"epoch{'s' if epochs != 1 else ''}"
        + (", streamed" if summary.get("streamed") else "")
        + f"): fit {summary['fit_seconds']:.2f} s"
    )
    if summary["cluster_seconds"]:
        how = "starting" if summary["cluster"] == "local" else "connecting to"
        ran += f" (+{summary['cluster_seconds']:.2f} s {how} the cluster)"
    if summary["accuracy"] is None:
        ran += ", accuracy not measured (give --dev)"
    else:
        ran += f", {summary['accuracy_on']} accuracy {summary['accuracy']:.4f}"
    lines = [ran]
    if "serial" in summary:
        serial, speedup = summary["serial"], summary["speedup"]
        pace = f"{speedup:.1f}x faster" if speedup >= 1 else f"{1 / max(speedup, 1e-3):.1f}x slower"
        lines.append(
            f"serial: fit {serial['fit_seconds']:.2f} s, {summary['accuracy_on']} accuracy "
            f"{serial['accuracy']:.4f}; accuracy cost: "
            f"{summary['accuracy_cost_points']:+.2f} points vs serial; {pace}"
        )
    return lines


def classes_option(text: str | None) -> Any:
    """--classes for files the workers read: numbers when every label is one."""
    import numpy as np

    if text is None:
        return None
    labels = text.split(",")
    try:
        return np.array([float(label) for label in labels])
    except ValueError:
        return np.array(labels)
