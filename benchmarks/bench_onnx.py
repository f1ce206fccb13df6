"""Serving through ONNX: onnxruntime's predictions against the library's own.

For each model, trained once on the given training split, the test split is predicted
by ``model.predict`` (the library) and by onnxruntime running the graph of
:func:`perceptrons.io.onnx.to_onnx`, in float64 and in float32 (the input cast
beforehand, not timed; onnxruntime's thread spinning after a run is off, else it takes
the CPU from the library's predict timed next). Reported: the median of ``--repeats``
(7) interleaved timings of each, after an untimed warm-up; the labels that agree; the
largest score difference relative to the scores' largest magnitude (float64); the
export's time and file size.
scikit-learn's ``Perceptron`` converted by skl2onnx's own converter is the yardstick:
its ``predict`` against its graph in the same process.

Data (``../shared/data``): MNIST (dense pixels / 255, 10 classes; the kernel models
train on the first 5,000 or 10,000 images, degree-4 polynomial kernel), and a9a (123
binary features, given split, made dense: ONNX graphs take dense input, see below).
Sparse text (20 Newsgroups: 130,107 TF-IDF columns) is not in the table: its test split
as a dense float64 array is 7.8 GB, and onnxruntime's matrix product has no sparse
input, so text models are served with the library (or with ONNX on a reduced feature
space).

Usage::

    python benchmarks/bench_onnx.py [--repeats 7] [--datasets mnist,a9a]
        [--output benchmarks/RESULTS.md] [--no-write]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import _report
from _datasets import load

SECTION = "bench_onnx"
HEADER = [
    "data",
    "model",
    "predict ms",
    "ONNX f64 ms",
    "predict / ONNX f64",
    "ONNX f32 ms",
    "labels equal f64",
    "labels equal f32",
    "max score diff f64",
    "export ms",
    "graph KB",
]


def _models(name: str):
    """(label, estimator, training rows) of each model benchmarked on data set ``name``."""
    from sklearn.linear_model import Perceptron as SklearnPerceptron

    from perceptrons import (
        AveragedPerceptron,
        BudgetPerceptron,
        LogisticRegressionSGD,
        MultinomialNaiveBayes,
        VotedPerceptron,
    )

    kernel = {"kernel": "poly", "degree": 4, "gamma": 1.0, "coef0": 1.0}
    models = [
        ("AveragedPerceptron", AveragedPerceptron(max_epochs=5, random_state=0), None),
        ("LogisticRegressionSGD", LogisticRegressionSGD(max_epochs=5, random_state=0), None),
        ("MultinomialNaiveBayes", MultinomialNaiveBayes(), None),
        ("sklearn Perceptron (skl2onnx)", SklearnPerceptron(max_iter=5, tol=None), None),
    ]
    if name == "mnist":
        models += [
            (
                'VotedPerceptron(poly 4, "average"), 5,000 images',
                VotedPerceptron(prediction="average", max_epochs=1, random_state=0, **kernel),
                5_000,
            ),
            (
                "BudgetPerceptron(budget=1000, poly 4), 10,000 images",
                BudgetPerceptron(budget=1000, random_state=0, **kernel),
                10_000,
            ),
        ]
    return models


def _median_ms(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)


def _measure(data_name, label, model, X_train, y_train, X_test, repeats):
    import onnxruntime as ort
    from skl2onnx import to_onnx as skl2onnx_to_onnx

    from perceptrons.io.onnx import to_onnx

    model.fit(X_train, y_train)
    yardstick = label.startswith("sklearn")

    def export(dtype):
        if yardstick:
            return skl2onnx_to_onnx(
                model, X_test[:1].astype(dtype), options={"zipmap": False}
            ).SerializeToString()
        return to_onnx(model, dtype=dtype).SerializeToString()

    start = time.perf_counter()
    graph64 = export(np.float64)
    export_ms = 1000 * (time.perf_counter() - start)
    graph32 = export(np.float32)
    # onnxruntime's threads spin, waiting for work, after each run: on few cores they
    # would take the CPU from the library's predict timed next. Spinning off.
    options = ort.SessionOptions()
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sessions = {
        dtype: ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        for dtype, graph in ((np.float64, graph64), (np.float32, graph32))
    }
    inputs = {dtype: X_test.astype(dtype) for dtype in sessions}

    def run_onnx(dtype):
        return sessions[dtype].run(None, {sessions[dtype].get_inputs()[0].name: inputs[dtype]})

    # Warm-up (and the outputs compared), then interleaved timings.
    expected_labels, expected_scores = model.predict(X_test), model.decision_function(X_test)
    out64, out32 = run_onnx(np.float64), run_onnx(np.float32)
    timings: dict[str, list[float]] = {"ours": [], "f64": [], "f32": []}
    for _ in range(repeats):
        timings["ours"].append(_median_ms(lambda: model.predict(X_test), 1))
        timings["f64"].append(_median_ms(lambda: run_onnx(np.float64), 1))
        timings["f32"].append(_median_ms(lambda: run_onnx(np.float32), 1))
    ms = {key: statistics.median(values) for key, values in timings.items()}
    scores64 = out64[1]
    if yardstick:  # skl2onnx's second output for a linear classifier: the scores, (N, 2) if binary
        scores64 = scores64[:, 1] if expected_scores.ndim == 1 else scores64
    scale = max(1.0, float(np.max(np.abs(expected_scores))))
    diff = float(np.max(np.abs(scores64.reshape(expected_scores.shape) - expected_scores)))
    return [
        data_name,
        label,
        f"{ms['ours']:.1f}",
        f"{ms['f64']:.1f}",
        f"{ms['ours'] / ms['f64']:.2f}",
        f"{ms['f32']:.1f}",
        f"{np.mean(out64[0] == expected_labels):.4%}",
        f"{np.mean(out32[0] == expected_labels):.4%}",
        f"{diff / scale:.1e}",
        f"{export_ms:.0f}",
        f"{len(graph64) / 1024:,.0f}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--datasets", default="mnist,a9a")
    parser.add_argument("--output", default=str(Path(__file__).with_name("RESULTS.md")))
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    command = "python benchmarks/bench_onnx.py " + " ".join(argv or sys.argv[1:])
    started = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows = []
    notes = []
    for name in args.datasets.split(","):
        dataset = load(name)
        X_train, X_test = (
            np.ascontiguousarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
            for X in (dataset.X_train, dataset.X_test)
        )
        notes.append(f"{name}: {dataset.describe()}")
        for label, model, n_train in _models(name):
            stop = n_train or X_train.shape[0]
            row = _measure(
                name, label, model, X_train[:stop], dataset.y_train[:stop], X_test, args.repeats
            )
            rows.append(row)
            print(" | ".join(row), flush=True)
    import onnxruntime
    import skl2onnx

    start, end = _report.markers(SECTION)
    section = "\n".join(
        [
            start,
            "## Serving through ONNX (`benchmarks/bench_onnx.py`)",
            "",
            f"`{command.strip()}`, {started}, {_report.machine_info()}; onnxruntime "
            f"{onnxruntime.__version__}, skl2onnx {skl2onnx.__version__}.",
            "",
            "Predicting the whole test split, dense input: medians of "
            f"{args.repeats} interleaved runs after a warm-up (ms); ratio > 1: onnxruntime "
            "faster. Labels and scores compared with the library's own (float64 scores: "
            "largest difference over the largest score magnitude).",
            "",
            *[f"- {note}" for note in notes],
            "",
            _report.md_table(HEADER, rows),
            end,
        ]
    )
    _report.publish(section, SECTION, args.output, write=not args.no_write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
