"""Streaming benchmark: train on a generated svmlight file of several GB.

The file is generated (never committed) into ``--workdir``: sparse binary examples from
a hidden linear separator with label noise, ``--features`` dimensions, about 60 non-zeros
per line. Training runs in a child process with ``perceptrons train --stream``, so its
peak RSS is its own; the table reports file size, examples per second, peak RSS and
the held-out accuracy.

Usage::

    python benchmarks/bench_stream.py [--gigabytes 3] [--workdir /tmp/perceptrons-stream]
        [--epochs 1] [--keep] [--output benchmarks/RESULTS.md]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import _report

SECTION = "bench_stream"
NNZ = 60
BLOCK = 50_000


def _block(rng, w: np.ndarray, n_features: int) -> str:
    """BLOCK lines of svmlight text: sparse counts, labels from ``w`` with noise."""
    columns = np.sort(rng.integers(1, n_features + 1, size=(BLOCK, NNZ)), axis=1)
    values = rng.integers(1, 4, size=(BLOCK, NNZ))
    scores = (w[columns] * values).sum(axis=1)
    labels = np.where(scores + rng.normal(scale=2.0, size=BLOCK) > 0, 1, -1)
    lines = []
    for label, cols, vals in zip(labels, columns, values, strict=True):
        keep = np.concatenate([[True], cols[1:] != cols[:-1]])
        cells = " ".join(f"{c}:{v}" for c, v in zip(cols[keep], vals[keep], strict=True))
        lines.append(f"{label} {cells}")
    return "\n".join(lines) + "\n"


def generate(path: Path, gigabytes: float, n_features: int, seed: int, distinct: int = 20) -> int:
    """Write examples until the file reaches ``gigabytes``; return how many.

    Formatting text in Python is slow, so at most ``distinct`` blocks are drawn and the
    file cycles through them in a fresh random block order each round. The separator
    ``w`` is fixed (seed 0); ``seed`` draws the examples.
    """
    w = np.random.default_rng(0).normal(size=n_features + 1)
    rng = np.random.default_rng(seed)
    target, blocks = gigabytes * 2**30, []
    written = n = 0
    with path.open("w") as out:
        while written < target:
            if len(blocks) < distinct:
                blocks.append(_block(rng, w, n_features))
                order = [len(blocks) - 1]
            else:
                order = rng.permutation(distinct)
            for index in order:
                if written >= target:
                    break
                out.write(blocks[index])
                written += len(blocks[index])
                n += BLOCK
    return n


def _run_size(args, work: Path, gigabytes: float, test: Path, n_test: int) -> list[str]:
    """Generate a file of ``gigabytes``, stream-train on it in a child, score it."""
    train, model = work / "train.svm", work / "model.npz"
    start = time.perf_counter()
    n_train = generate(train, gigabytes, args.features, seed=1)
    size_gb = train.stat().st_size / 2**30
    print(
        f"generated {n_train:,} examples, {size_gb:.2f} GB in {time.perf_counter() - start:.0f} s",
        flush=True,
    )
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "perceptrons",
                "train",
                str(train),
                "-o",
                str(model),
                "--stream",
                "--chunk-size",
                str(args.chunk_size),
                "--epochs",
                str(args.epochs),
                "--classes=-1,1",
                "--json",
                "--quiet",
            ],
            stdout=out,
            stderr=err,
            text=True,
        )
        # wait4 gives this child's own peak RSS (RUSAGE_CHILDREN keeps the max of all).
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        out, err = out.read(), err.read()
    peak_gb = usage.ru_maxrss / 2**20
    if child.returncode != 0:
        raise SystemExit(f"streamed training failed:\n{err}")
    seconds = time.perf_counter() - start
    metrics = json.loads(out)
    evaluation = subprocess.run(
        [sys.executable, "-m", "perceptrons", "evaluate", str(model), str(test), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    accuracy = json.loads(evaluation.stdout)["accuracy"]
    rate = n_train * args.epochs / sum(e["seconds"] for e in metrics["epochs"])
    if not args.keep:
        train.unlink(missing_ok=True)
        model.unlink(missing_ok=True)
    return [
        f"{size_gb:.2f} GB",
        f"{n_train:,}",
        str(args.epochs),
        f"{seconds:.0f}",
        f"{rate:,.0f}",
        f"{peak_gb:.2f}",
        f"{accuracy:.4f} ({n_test:,} held-out)",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--gigabytes", default="0.3,3", help="file sizes, comma-separated (default 0.3,3)"
    )
    parser.add_argument("--features", type=int, default=2**20)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--chunk-size", type=int, default=20_000)
    parser.add_argument("--workdir", default="/tmp/perceptrons-stream")
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    parser.add_argument("--output", default=str(Path(__file__).with_name("RESULTS.md")))
    args = parser.parse_args(argv)
    command = "python " + " ".join(shlex.quote(a) for a in [sys.argv[0], *(argv or sys.argv[1:])])
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    test = work / "test.svm"
    n_test = generate(test, 0.02, args.features, seed=2, distinct=1)  # new examples
    rows = []
    for gigabytes in [float(g) for g in args.gigabytes.split(",")]:
        rows.append(_run_size(args, work, gigabytes, test, n_test))
    if not args.keep:
        test.unlink(missing_ok=True)
    peaks = [float(row[5]) for row in rows]
    header = ["file", "examples", "epochs", "wall s", "examples/s", "peak RSS GB", "accuracy"]
    start_marker, end_marker = _report.markers(SECTION)
    section = "\n".join(
        [
            start_marker,
            "## Streaming a file larger than memory (`benchmarks/bench_stream.py`)",
            "",
            f"- Command: `{command}`",
            f"- Date: {started}",
            f"- Machine: {_report.machine_info()}",
            f"- Data: generated svmlight, {args.features:,} features, ~{NNZ} non-zeros per "
            f"line, binary labels from a hidden separator with noise; `perceptrons train "
            f"--stream --chunk-size {args.chunk_size}` (AveragedPerceptron), run as a child "
            "process whose peak RSS is reported. Wall time includes the first pass that "
            "finds the width of the data.",
            "",
            _report.md_table(header, rows),
            "",
            "Each size runs in its own child process. Target: peak RSS under 1 GB for "
            f"several GB: **{'met' if max(peaks) < 1 else 'missed'}** (largest peak "
            f"{max(peaks):.2f} GB).",
            end_marker,
        ]
    )
    print(section)
    _report.write_section(Path(args.output), section, SECTION)
    return 0


if __name__ == "__main__":
    sys.exit(main())
