"""Model size of a hashed 20 Newsgroups model: dense, non-resumable, sparse, pruned.

An ``AveragedPerceptron`` (10 epochs, ``random_state=0``) on 20 Newsgroups (the given
bydate split, 20 classes) featurized by ``TextFeaturizer`` hashing into ``2**20``
features (tf-idf, sublinear tf, fit on the train split). Its training state is
``weights`` and the averaging ``aux``, each ``(2**20 + 1) x 20`` float64 -- yet the
perceptron only ever touched the features of its mistakes. The model (the bare
estimator: the featurizer's few arrays are the same in every form) is saved as:

* **dense, resumable**: ``save(model)`` -- everything exact continuation needs;
* **dense, non-resumable**: ``save(model, resumable=False)`` -- without ``aux``;
* **sparse, resumable**: ``save(model.sparsify())`` -- ``coef_`` a CSR matrix, the
  training state kept in its nonzero rows only;
* **sparse, non-resumable**: ``save(model.sparsify(), resumable=False)``.

For each: the file's bytes on disk; memory after ``load`` -- measured with
``tracemalloc`` (NumPy reports its array allocations to it): the bytes still allocated
once ``load`` returns (what the loaded model holds) and the peak during ``load``;
the test accuracy; and prediction throughput (documents per second of
``predict`` on the 7,532 already featurized test documents, best of ``--repeats``).
Then ``sparsify(threshold=t)`` at the thresholds that drop a given share of the nonzero
weights: weights kept, file bytes (sparse, non-resumable), accuracy, throughput.

Usage::

    PYTHONPATH=src python benchmarks/bench_model_size.py \\
        [--epochs 10] [--n-features 1048576] [--max-docs 0] [--repeats 5] \\
        [--output benchmarks/RESULTS.md]

The Markdown section between ``<!-- bench_model_size:start -->`` and
``<!-- bench_model_size:end -->`` of the output file is replaced (other content kept).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import datetime as _dt
import gc
import os
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np

import _datasets  # benchmarks/ is sys.path[0]; it also puts src/ on sys.path if needed
import _report

# The share of the nonzero weights that each pruning threshold drops.
PRUNED_SHARES = (0.25, 0.5, 0.75, 0.9, 0.97)
FORMS = (
    ("dense, resumable, arrays stored dense (format 1)", False, True),
    ("dense, resumable", False, True),
    ("dense, non-resumable", False, False),
    ("sparse, resumable", True, True),
    ("sparse, non-resumable", True, False),
)


def _featurize(n_features: int, max_docs: int) -> tuple[Any, np.ndarray, Any, np.ndarray]:
    from perceptrons import TextFeaturizer

    docs_train, y_train, docs_test, y_test = _datasets.loaders.load_20newsgroups()
    if max_docs:
        docs_train, y_train = docs_train[:max_docs], y_train[:max_docs]
        docs_test, y_test = docs_test[:max_docs], y_test[:max_docs]
    featurizer = TextFeaturizer(n_features=n_features, weighting="tfidf", sublinear_tf=True)
    X_train = featurizer.fit_transform(docs_train)
    return X_train, np.asarray(y_train), featurizer.transform(docs_test), np.asarray(y_test)


def _throughput(model: Any, X: Any, repeats: int) -> float:
    """Documents per second of ``predict`` (best of ``repeats``)."""
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        model.predict(X)
        best = min(best, time.perf_counter() - start)
    return X.shape[0] / best


def _measured_load(path: Path) -> tuple[Any, int, int, float]:
    """The model of ``path``, the bytes still allocated after ``load``, the peak, and
    the seconds ``load`` took (traced: slower than untraced)."""
    from perceptrons import load

    gc.collect()
    tracemalloc.start()
    try:
        start = time.perf_counter()
        model = load(path)
        seconds = time.perf_counter() - start
        resident, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return model, resident, peak, seconds


@contextlib.contextmanager
def _dense_storage() -> Iterator[None]:
    """``save`` as before model files could store an array as its nonzeros: every
    array dense (deflated), for comparison."""
    from perceptrons import _checked

    with mock.patch.object(_checked.SparseArray, "nbytes", property(lambda self: 2**62)):
        yield


def _mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:,.2f} MiB"


def run(args: argparse.Namespace) -> str:
    from perceptrons import AveragedPerceptron, save

    started = time.perf_counter()
    X_train, y_train, X_test, y_test = _featurize(args.n_features, args.max_docs)
    featurized = time.perf_counter() - started
    print(
        f"featurized {X_train.shape[0]:,} + {X_test.shape[0]:,} documents into "
        f"{X_train.shape[1]:,} hashed features in {featurized:.1f} s",
        flush=True,
    )
    start = time.perf_counter()
    model = AveragedPerceptron(max_epochs=args.epochs, random_state=0).fit(X_train, y_train)
    trained = time.perf_counter() - start
    reference = model.decision_function(X_test)
    n_weights = model.coef_.size
    nonzero = int(np.count_nonzero(model.coef_))
    print(f"trained in {trained:.1f} s: {nonzero:,} of {n_weights:,} weights nonzero", flush=True)

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, sparse, resumable in FORMS:
            saved = copy.deepcopy(model).sparsify() if sparse else model
            storage = _dense_storage() if "format 1" in label else contextlib.nullcontext()
            with storage:
                path = save(saved, Path(tmp) / "model.npz", resumable=resumable)
            size = os.path.getsize(path)
            loaded, resident, peak, seconds = _measured_load(path)
            # The forms are exact: the same scores, bit for bit.
            assert np.array_equal(loaded.decision_function(X_test), reference), label
            accuracy = float(np.mean(loaded.predict(X_test) == y_test))
            speed = _throughput(loaded, X_test, args.repeats)
            rows.append(
                [
                    label,
                    f"{size:,}",
                    f"{seconds:.2f}",
                    _mib(resident),
                    _mib(peak),
                    f"{accuracy:.4f}",
                    f"{speed:,.0f}",
                ]
            )
            print(" | ".join(rows[-1]), flush=True)
            del loaded
        magnitudes = np.abs(model.coef_[model.coef_ != 0])
        pruned_rows = []
        for share in (0.0, *PRUNED_SHARES):
            threshold = float(np.quantile(magnitudes, share)) if share else 0.0
            pruned = copy.deepcopy(model).sparsify(threshold=threshold)
            path = save(pruned, Path(tmp) / "pruned.npz", resumable=False)
            accuracy = float(np.mean(pruned.predict(X_test) == y_test))
            pruned_rows.append(
                [
                    f"{threshold:.3g}",
                    f"{share:.0%}",
                    f"{pruned.coef_.nnz:,}",
                    f"{os.path.getsize(path):,}",
                    f"{accuracy:.4f}",
                    f"{_throughput(pruned, X_test, args.repeats):,.0f}",
                ]
            )
            print(" | ".join(pruned_rows[-1]), flush=True)

    dense_state = 2 * (X_train.shape[1] + 1) * len(model.classes_) * 8
    lines = [
        _report.markers("bench_model_size")[0],
        "## Model size: a hashed 20 Newsgroups model, dense and sparse",
        "",
        f"- Run: {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC; "
        f"`python benchmarks/bench_model_size.py --epochs {args.epochs} --n-features "
        f"{args.n_features} --max-docs {args.max_docs} --repeats {args.repeats}`",
        f"- Machine: {_report.machine_info()}",
        f"- Data: 20 Newsgroups bydate, {X_train.shape[0]:,} train / {X_test.shape[0]:,} "
        f"test documents, {len(model.classes_)} classes; `TextFeaturizer(n_features="
        f"{X_train.shape[1]}, weighting='tfidf', sublinear_tf=True)` fit on train.",
        f"- Model: `AveragedPerceptron(max_epochs={args.epochs}, random_state=0)`, trained in "
        f"{trained:.1f} s; {nonzero:,} of its {n_weights:,} weights are nonzero "
        f"({nonzero / n_weights:.2%}). Its dense training state (weights + aux) takes "
        f"{_mib(dense_state)}.",
        "- Memory: `tracemalloc` (NumPy reports its arrays to it) around `load`: "
        "after = still allocated when `load` returns (what the model holds), peak = "
        "the most allocated during `load`. Throughput: `predict` on the featurized test "
        f"documents, best of {args.repeats}; load s: `load`'s time under `tracemalloc`. The "
        "first row stores every array dense (deflated), as files did before sparse storage.",
        "- Every form predicts exactly the same scores (checked bit for bit).",
        "",
        _report.md_table(
            [
                "saved as",
                "file bytes",
                "load s",
                "memory after load",
                "peak during load",
                "test accuracy",
                "predict docs/s",
            ],
            rows,
        ),
        "",
        "Pruning (`sparsify(threshold=t)`, saved non-resumable): t is the quantile of the "
        "nonzero |weights| that drops the given share of them.",
        "",
        _report.md_table(
            [
                "threshold t",
                "dropped",
                "weights kept",
                "file bytes",
                "test accuracy",
                "predict docs/s",
            ],
            pruned_rows,
        ),
        _report.markers("bench_model_size")[1],
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--n-features", type=int, default=2**20)
    parser.add_argument(
        "--max-docs", type=int, default=0, help="use only the first N documents (0: all)"
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", type=Path, default=Path("benchmarks/RESULTS.md"))
    args = parser.parse_args()
    print(f"bench_model_size: {_report.machine_info()}", flush=True)
    section = run(args)
    print("\n" + section)
    _report.write_section(args.output, section, "bench_model_size")
    print(f"\nwrote section to {args.output}", flush=True)


if __name__ == "__main__":
    main()
