"""Iterative parameter mixing against the serial averaged perceptron.

On 20 Newsgroups (TF-IDF) and MNIST, 10 epochs, shuffling, ``random_state=0``:

* the serial ``AveragedPerceptron``;
* ``ParameterMixing`` (uniform mixing) on a ``LocalCluster`` of 1, 2 and 4
  single-threaded worker processes bound to 127.0.0.1, one partition per worker;
* ``mix_threads`` with 2 threads (2 partitions).

It reports the test accuracy, its difference from the serial model in points (target:
within 0.5), the wall time of the fit and the median wall time of an epoch (for
parameter mixing, from ``history_``: shard epochs, transfers and mixing; for the serial
fit and the threads, the fit time / 10). A cluster's start-up is not timed; its workers
run a tiny fit first so that loading the compiled kernels is not timed either, but
sending the shards to the workers is (it is in the fit time, not in the epochs).

Usage::

    PYTHONPATH=src python benchmarks/bench_distributed.py \\
        [--datasets 20news,mnist] [--workers 1,2,4] [--output benchmarks/RESULTS.md]

The Markdown section between ``<!-- bench_distributed:start -->`` and
``<!-- bench_distributed:end -->`` of the output file is replaced (other content is kept).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import shlex
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import _datasets  # benchmarks/ is sys.path[0]; it also puts src/ on sys.path if needed
import _report

BENCH_DIR = Path(__file__).resolve().parent
NAME = "bench_distributed"
EPOCHS = 10
SEED = 0
DATASETS = {"20news": _datasets.featurize_20news, "mnist": _datasets.featurize_mnist}


def _estimator():
    from perceptrons import AveragedPerceptron

    return AveragedPerceptron(max_epochs=EPOCHS, shuffle=True, random_state=SEED)


def _row(label, units, model, data, fit_seconds, epoch_seconds, serial_accuracy):
    accuracy = float(model.score(data.X_test, data.y_test))
    delta = None if serial_accuracy is None else 100 * (accuracy - serial_accuracy)
    return {
        "label": label,
        "units": units,
        "accuracy": accuracy,
        "delta": delta,
        "fit": fit_seconds,
        "epoch": epoch_seconds,
    }


def bench_dataset(data, workers: list[int]) -> list[dict]:
    import distributed

    from perceptrons.parallel import ParameterMixing, mix_threads

    # The training sets are sorted by class (20news): warm up on a random sample.
    warm = np.random.RandomState(0).choice(data.X_train.shape[0], 300, replace=False)
    _estimator().fit(data.X_train[warm], data.y_train[warm])  # JIT / cache load

    start = time.perf_counter()
    serial = _estimator().fit(data.X_train, data.y_train)
    seconds = time.perf_counter() - start
    rows = [
        _row(
            "serial AveragedPerceptron", "1 process", serial, data, seconds, seconds / EPOCHS, None
        )
    ]
    reference = rows[0]["accuracy"]
    print(f"  serial: {reference:.4f}, {seconds:.2f} s", flush=True)

    for n in workers:
        with (
            distributed.LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            client.wait_for_workers(n)
            # Each worker loads the compiled kernels once, outside the timings.
            ParameterMixing(
                _estimator().set_params(max_epochs=1), n_partitions=n, client=client
            ).fit(data.X_train[warm], data.y_train[warm])
            start = time.perf_counter()
            mixer = ParameterMixing(_estimator(), n_partitions=n, client=client)
            mixer.fit(data.X_train, data.y_train)
            seconds = time.perf_counter() - start
        epoch = statistics.median(record["seconds"] for record in mixer.history_)
        rows.append(
            _row(
                "ParameterMixing (Dask)",
                f"{n} worker(s)",
                mixer.estimator_,
                data,
                seconds,
                epoch,
                reference,
            )
        )
        print(f"  {n} workers: {rows[-1]['accuracy']:.4f}, {seconds:.2f} s", flush=True)

    mix_threads(_estimator().set_params(max_epochs=1), data.X_train[warm], data.y_train[warm], 2)
    start = time.perf_counter()
    threaded = mix_threads(_estimator(), data.X_train, data.y_train, n_jobs=2)
    seconds = time.perf_counter() - start
    rows.append(
        _row("mix_threads", "2 threads", threaded, data, seconds, seconds / EPOCHS, reference)
    )
    print(f"  2 threads: {rows[-1]['accuracy']:.4f}, {seconds:.2f} s", flush=True)
    return rows


def render(results: dict, command: str, started: _dt.datetime) -> str:
    start, end = _report.markers(NAME)
    lines = [
        start,
        "## Iterative parameter mixing (`benchmarks/bench_distributed.py`)",
        "",
        f"- Command: `{command}`",
        f"- Date: {started.isoformat(timespec='seconds')}",
        f"- Machine: {_report.machine_info()}",
        f"- Protocol: AveragedPerceptron, {EPOCHS} epochs, shuffle, random_state={SEED}; "
        "ParameterMixing with uniform mixing, one partition per worker, on a LocalCluster "
        "of single-threaded worker processes on 127.0.0.1 (start-up and kernel loading "
        "not timed; sending the shards is, in the fit time); mix_threads with 2 threads "
        "and 2 partitions. Epoch time: median of `history_` seconds for ParameterMixing "
        "(shard epochs + transfers + mixing), fit time / 10 otherwise. Target: test "
        "accuracy within 0.5 points of the serial fit; more accurate than serial also "
        "meets it. Each epoch moves three weight matrices per shard between the client "
        "and the workers (20news: 130,108 × 20 floats, 21 MB each), which dominates the "
        "epoch time of sparse data on one machine. One run; times are noisy.",
        "",
    ]
    for name, (data, rows) in results.items():
        lines += [f"### {name}", "", f"{data.describe()}. Protocol: {data.protocol}.", ""]
        table = []
        for row in rows:
            delta = "" if row["delta"] is None else f"{row['delta']:+.2f}"
            status = "" if row["delta"] is None else ("met" if row["delta"] >= -0.5 else "missed")
            table.append(
                [
                    row["label"],
                    row["units"],
                    f"{row['accuracy']:.4f}",
                    delta,
                    status,
                    f"{row['fit']:.2f}",
                    f"{row['epoch']:.3f}",
                ]
            )
        header = [
            "model",
            "parallelism",
            "test accuracy",
            "Δ vs serial (points)",
            "target: Δ ≥ −0.5",
            "fit (s)",
            "s / epoch",
        ]
        lines += [_report.md_table(header, table), ""]
    lines.append(end)
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="20news,mnist")
    parser.add_argument("--workers", default="1,2,4", help="cluster sizes, comma-separated")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--output", type=Path, default=BENCH_DIR / "RESULTS.md")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = shlex.join(["python", *sys.argv]) if argv is None else shlex.join(argv)
    started = _dt.datetime.now(_dt.timezone.utc)
    workers = [int(n) for n in args.workers.split(",")]
    print(f"{NAME}: {_report.machine_info()}", flush=True)
    results = {}
    for name in args.datasets.split(","):
        try:
            data = DATASETS[name](args.data_dir)
        except FileNotFoundError as exc:
            print(f"{name}: skipped ({exc})", flush=True)
            continue
        print(f"{name}: {data.describe()}", flush=True)
        results[name] = (data, bench_dataset(data, workers))
    if not results:
        print("no data set found: nothing written", flush=True)
        return 1
    _report.write_section(args.output, render(results, command, started), NAME)
    print(f"wrote {args.output}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
