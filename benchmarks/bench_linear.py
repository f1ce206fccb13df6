"""Speed / accuracy benchmark of the core learners against scikit-learn.

Compares, in one process and one run, on each data set (10 epochs, shuffling,
``random_state=0``):

* ``perceptrons.Perceptron`` and ``perceptrons.AveragedPerceptron``;
* ``sklearn.linear_model.Perceptron(max_iter=10, tol=None)``;
* ``sklearn.linear_model.SGDClassifier(loss="perceptron", learning_rate="constant",
  eta0=1, penalty=None, average=True, max_iter=10, tol=None)``;
* beside them, without targets: ``LogisticRegressionSGD``, ``MultinomialNaiveBayes``
  and ``AveragedPerceptron`` with the update rules ROMMA, aggressive ROMMA (Li & Long
  2002) and MIRA (Crammer & Singer 2003), on every data set (ROMMA's multiclass form is
  the Kesler construction).

Features are computed once per data set (excluded from the timings); each of our
models is warmed up on a tiny slice of the same data first so that JIT compilation
is not timed. JIT compilation itself is measured separately in two fresh
subprocesses sharing one temporary ``NUMBA_CACHE_DIR`` (cold, then warm cache).

Usage::

    PYTHONPATH=src python benchmarks/bench_linear.py \\
        [--datasets sentiment,a9a,20news,mnist] [--repeats 3] [--output benchmarks/RESULTS.md]

The Markdown section between ``<!-- bench_linear:start -->`` and
``<!-- bench_linear:end -->`` of the output file is replaced (other content is kept).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron as SkPerceptron
from sklearn.linear_model import SGDClassifier

import _datasets  # benchmarks/ is sys.path[0]; it also puts src/ on sys.path if needed
import _report

BENCH_DIR = Path(__file__).resolve().parent

START_MARKER, END_MARKER = _report.markers("bench_linear")
EPOCHS = 10
SEED = 0
DEFAULT_OUTPUT = BENCH_DIR / "RESULTS.md"

# Model keys, in table order.
OURS_VANILLA = "ours_vanilla"
OURS_AVERAGED = "ours_averaged"
OURS_LOGISTIC = "ours_logistic"
OURS_NB = "ours_naive_bayes"
OURS_ROMMA = "ours_romma"
OURS_AGGRESSIVE_ROMMA = "ours_aggressive_romma"
OURS_MIRA = "ours_mira"
SK_VANILLA = "sk_vanilla"
SK_AVERAGED = "sk_averaged"

# Data-set groups for the targets of issue "core learners".
SPEEDUP_SETS = ("20news", "mnist")  # (a)
OVERHEAD_SETS = ("a9a", "sentiment")  # (b)


# --------------------------------------------------------------------------- models


@dataclass
class ModelSpec:
    key: str
    label: str
    factory: Callable[[], object]
    ours: bool


def _sk_averaged_sgd() -> SGDClassifier:
    return SGDClassifier(
        loss="perceptron",
        learning_rate="constant",
        eta0=1,
        penalty=None,
        average=True,
        max_iter=EPOCHS,
        tol=None,
        shuffle=True,
        random_state=SEED,
    )


def _sk_perceptron() -> SkPerceptron:
    return SkPerceptron(max_iter=EPOCHS, tol=None, shuffle=True, random_state=SEED)


def model_specs(only_sklearn: bool) -> list[ModelSpec]:
    """The four models; with ``only_sklearn`` ours are replaced by sklearn stand-ins."""
    cousins: list[ModelSpec] = []
    sk = [
        ModelSpec(SK_VANILLA, "sklearn Perceptron", _sk_perceptron, False),
        ModelSpec(SK_AVERAGED, "sklearn averaged SGD (perceptron loss)", _sk_averaged_sgd, False),
    ]
    if only_sklearn:
        ours = [
            ModelSpec(OURS_VANILLA, "STAND-IN for ours: sklearn Perceptron", _sk_perceptron, False),
            ModelSpec(
                OURS_AVERAGED, "STAND-IN for ours: sklearn averaged SGD", _sk_averaged_sgd, False
            ),
        ]
    else:
        from perceptrons import (
            AveragedPerceptron,
            LogisticRegressionSGD,
            MultinomialNaiveBayes,
            Perceptron,
        )

        # The other linear classifiers (logistic regression by SGD, naive Bayes), beside the
        # perceptrons (no targets).
        cousins = [
            ModelSpec(
                OURS_LOGISTIC,
                "perceptrons LogisticRegressionSGD (averaged, lr=1)",
                lambda: LogisticRegressionSGD(
                    learning_rate=1.0, average=True, max_epochs=EPOCHS, random_state=SEED
                ),
                True,
            ),
            ModelSpec(OURS_NB, "perceptrons MultinomialNaiveBayes", MultinomialNaiveBayes, True),
        ]
        # The perceptrons' other update rules (the "many variants" of Cohen's lecture
        # "The Perceptron"), averaged:
        # ROMMA and aggressive ROMMA (Li & Long 2002; multiclass by the Kesler
        # construction) and 1-best MIRA (Crammer & Singer 2003, the multiclass PA-I).
        for key, update, label in (
            (OURS_ROMMA, "romma", "ROMMA"),
            (OURS_AGGRESSIVE_ROMMA, "aggressive-romma", "aggressive ROMMA"),
            (OURS_MIRA, "mira", "MIRA (PA-I, C=1)"),
        ):
            cousins.append(
                ModelSpec(
                    key,
                    f"perceptrons AveragedPerceptron, {label}",
                    lambda update=update: AveragedPerceptron(
                        update=update, max_epochs=EPOCHS, shuffle=True, random_state=SEED
                    ),
                    True,
                )
            )
        ours = [
            ModelSpec(
                OURS_VANILLA,
                "perceptrons Perceptron",
                lambda: Perceptron(max_epochs=EPOCHS, shuffle=True, random_state=SEED),
                True,
            ),
            ModelSpec(
                OURS_AVERAGED,
                "perceptrons AveragedPerceptron",
                lambda: AveragedPerceptron(max_epochs=EPOCHS, shuffle=True, random_state=SEED),
                True,
            ),
        ]
    return ours + cousins + sk


# --------------------------------------------------------------------------- timing


@dataclass
class Result:
    label: str
    accuracy: float
    fit_times: list[float]
    predict_times: list[float]

    @property
    def fit(self) -> float:
        return statistics.median(self.fit_times)

    @property
    def predict(self) -> float:
        return statistics.median(self.predict_times)


@dataclass
class DatasetRun:
    dataset: _datasets.Dataset
    results: dict[str, Result] = field(default_factory=dict)


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X, y)


def warm_up_slice(ds: _datasets.Dataset, n: int = 100) -> tuple[object, np.ndarray]:
    """The first ``n`` training rows plus the first row of every class (same format)."""
    _, first = np.unique(ds.y_train, return_index=True)
    rows = np.union1d(np.arange(min(n, ds.X_train.shape[0])), first)
    return ds.X_train[rows], ds.y_train[rows]


def _timed(call: Callable[[], object], min_time: float) -> tuple[float, object]:
    """Seconds per call of ``call``, and its last return value.

    One call is timed; if it took less than ``min_time`` it is repeated (timeit-style
    autorange) until the calls add up to at least ``min_time`` and the mean is returned,
    so that millisecond-scale timings are not dominated by clock and scheduler noise.
    """
    gc.collect()
    start = time.perf_counter()
    value = call()
    elapsed = time.perf_counter() - start
    if elapsed >= min_time:
        return elapsed, value
    n = max(1, int(np.ceil(min_time / max(elapsed, 1e-6))))
    total = elapsed
    for _ in range(n - 1):
        start = time.perf_counter()
        value = call()
        total += time.perf_counter() - start
    return total / n, value


def run_dataset(
    ds: _datasets.Dataset, specs: list[ModelSpec], repeats: int, min_time: float
) -> DatasetRun:
    """Time every model on one data set.

    Measurements are interleaved (repeat 1 of every model, then repeat 2, ...) so that
    slow drifts of a shared machine affect all models alike. Every fit call fits a
    freshly constructed estimator (construction takes microseconds); predictions and
    accuracy come from the last fitted estimator of each model.
    """
    for spec in specs:
        if spec.ours:  # JIT-compile on a tiny slice of the same data, outside the timings
            X_small, y_small = warm_up_slice(ds)
            _fit(spec.factory(), X_small, y_small).predict(X_small)
    fit_times: dict[str, list[float]] = {spec.key: [] for spec in specs}
    predict_times: dict[str, list[float]] = {spec.key: [] for spec in specs}
    fitted: dict[str, object] = {}
    predictions: dict[str, object] = {}
    for _ in range(repeats):
        for spec in specs:
            seconds, fitted[spec.key] = _timed(
                lambda spec=spec: _fit(spec.factory(), ds.X_train, ds.y_train), min_time
            )
            fit_times[spec.key].append(seconds)
    for _ in range(repeats):
        for spec in specs:
            seconds, predictions[spec.key] = _timed(
                lambda spec=spec: fitted[spec.key].predict(ds.X_test), min_time
            )
            predict_times[spec.key].append(seconds)
    run = DatasetRun(ds)
    for spec in specs:
        pred = np.asarray(predictions[spec.key])
        accuracy = float(np.mean(pred == np.asarray(ds.y_test)))
        res = run.results[spec.key] = Result(
            spec.label, accuracy, fit_times[spec.key], predict_times[spec.key]
        )
        print(
            f"  {spec.label:<45} acc {res.accuracy:.4f}  fit {res.fit:8.3f} s  "
            f"predict {res.predict:8.4f} s",
            flush=True,
        )
    return run


# --------------------------------------------------------------------------- JIT


_JIT_CHILD = r"""
import json, sys, time
import numpy as np
import scipy.sparse as sp
t0 = time.perf_counter()
from perceptrons import AveragedPerceptron, Perceptron
t1 = time.perf_counter()
rng = np.random.default_rng(0)
X = rng.standard_normal((60, 5))
ys = [(X[:, 0] > 0).astype(np.int64), np.arange(60) % 3]
for Xc in (X, sp.csr_matrix(X)):
    for y in ys:
        for cls in (Perceptron, AveragedPerceptron):
            cls(max_epochs=2, shuffle=True, random_state=0).fit(Xc, y).predict(Xc)
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "fit": t2 - t1, "total": t2 - t0}))
"""


def measure_jit() -> list[str]:
    """Cold and warm JIT cost in two fresh processes sharing a temporary numba cache."""
    import perceptrons

    package_root = str(Path(perceptrons.__file__).resolve().parents[1])
    lines = []
    with tempfile.TemporaryDirectory(prefix="bench_linear_numba_") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_root, os.environ.get("PYTHONPATH")) if p
        )
        for name, what in (("cold", "compiles"), ("warm", "loads the cache")):
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-c", _JIT_CHILD],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            wall = time.perf_counter() - start
            if proc.returncode != 0:
                tail = proc.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
                lines.append(f"JIT {name}: subprocess failed: {tail[0]}")
                continue
            t = json.loads(proc.stdout.strip().splitlines()[-1])
            lines.append(
                f"JIT {name} ({what}): {t['total']:.2f} s for `import perceptrons` "
                f"({t['import']:.2f} s) + fit/predict of both estimators on tiny dense & "
                f"sparse, binary & 3-class data ({t['fit']:.2f} s); process wall time "
                f"{wall:.2f} s"
            )
    return lines


# --------------------------------------------------------------------------- reporting


def dataset_table(run: DatasetRun) -> str:
    rows = [
        [res.label, f"{res.accuracy:.4f}", f"{res.fit:.3f}", f"{res.predict:.4f}"]
        for res in run.results.values()
    ]
    header = ["model", "test accuracy", "fit median (s)", "predict median (s)"]
    return _report.md_table(header, rows)


def _status(ok: bool | None) -> str:
    return "—" if ok is None else ("met" if ok else "**missed**")


def ratio_rows(run: DatasetRun) -> list[list[str]]:
    """Ratios of one data set with their targets (if any) and met / missed."""
    name = run.dataset.name
    r = run.results
    ours_avg, ours_van, sk_avg = r[OURS_AVERAGED], r[OURS_VANILLA], r[SK_AVERAGED]
    rows = []

    speedup = sk_avg.fit / ours_avg.fit
    if name in SPEEDUP_SETS:
        target, ok = "≥ 3.0", speedup >= 3.0
    elif name in OVERHEAD_SETS:
        target, ok = "≥ 1.0", ours_avg.fit <= sk_avg.fit
    else:
        target, ok = "—", None
    rows.append(["fit speed-up: sklearn avg SGD / ours avg", f"{speedup:.2f}", target, _status(ok)])

    overhead = ours_avg.fit / ours_van.fit
    if name in OVERHEAD_SETS:
        target, ok = "≤ 1.15", overhead <= 1.15
    else:
        target, ok = "—", None
    rows.append(["fit: ours avg / ours vanilla", f"{overhead:.2f}", target, _status(ok)])

    pred = sk_avg.predict / ours_avg.predict
    if run.dataset.sparse:
        target, ok = "≥ 1.0", ours_avg.predict <= sk_avg.predict
    else:
        target, ok = "—", None
    rows.append(["predict: sklearn avg SGD / ours avg", f"{pred:.2f}", target, _status(ok)])

    if name in SPEEDUP_SETS:
        ok = ours_avg.accuracy >= sk_avg.accuracy
        rows.append(
            [
                "accuracy: ours avg vs sklearn avg SGD",
                f"{ours_avg.accuracy:.4f} vs {sk_avg.accuracy:.4f}",
                "≥",
                _status(ok),
            ]
        )
    if name in OVERHEAD_SETS:
        ok = ours_avg.accuracy >= ours_van.accuracy
        rows.append(
            [
                "accuracy: ours avg vs ours vanilla",
                f"{ours_avg.accuracy:.4f} vs {ours_van.accuracy:.4f}",
                "≥",
                _status(ok),
            ]
        )
    return [[name, *row] for row in rows]


def build_section(
    command: str,
    started: _dt.datetime,
    repeats: int,
    min_time: float,
    runs: list[DatasetRun],
    skipped: list[str],
    jit_lines: list[str],
    only_sklearn: bool,
) -> str:
    parts = [
        START_MARKER,
        "## Core learners vs scikit-learn (`benchmarks/bench_linear.py`)",
        "",
    ]
    if only_sklearn:
        parts += [
            "> **Harness test only (`--only-sklearn`)**: the 'ours' rows are scikit-learn "
            "stand-ins, not perceptrons estimators. Ratios and targets are meaningless.",
            "",
        ]
    parts += [
        f"- Command: `{command}`",
        f"- Date: {started.isoformat(timespec='seconds')}",
        f"- Machine: {_report.machine_info()}",
        f"- Protocol: {EPOCHS} epochs, shuffle, random_state={SEED}; median of {repeats} "
        "fit timings and of as many predict timings on the test set (a call faster than "
        f"{min_time} s is repeated until the calls add up to {min_time} s and averaged, "
        "each fit on a fresh estimator); features computed once and not "
        "timed; our models warmed up (JIT-compiled) on a tiny slice before timing. "
        "Times are noisy: compare only ratios from the same run.",
        "",
    ]
    for run in runs:
        ds = run.dataset
        parts += [
            f"### {ds.name}",
            "",
            f"{ds.describe()}. Protocol: {ds.protocol}. "
            f"(Load + featurize: {ds.load_seconds:.2f} s, not timed.)",
            "",
            dataset_table(run),
            "",
        ]
    for msg in skipped:
        parts += [f"- Skipped: {msg}"]
    if skipped:
        parts.append("")
    if runs:
        rows = [row for run in runs for row in ratio_rows(run)]
        n_target = sum(row[4] != "—" for row in rows)
        n_met = sum(row[4] == "met" for row in rows)
        parts += [
            "### Ratios and targets",
            "",
            _report.md_table(["data set", "ratio", "value", "target", "status"], rows),
            "",
            f"{n_met} of {n_target} targets met.",
            "",
        ]
    parts += ["### JIT compilation", ""]
    parts += [f"- {line}" for line in jit_lines] or ["- not measured"]
    parts += ["", END_MARKER]
    return "\n".join(parts)


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--datasets",
        default=",".join(_datasets.FEATURIZERS),
        help="comma-separated subset of: %(default)s",
    )
    parser.add_argument("--repeats", type=int, default=3, help="timing repeats (median)")
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help="Markdown file whose bench_linear section is replaced (default: %(default)s)",
    )
    parser.add_argument(
        "--only-sklearn",
        action="store_true",
        help="debug the harness: use sklearn stand-ins for our models and skip the JIT test",
    )
    parser.add_argument(
        "--min-time",
        type=float,
        default=0.2,
        help="a fit/predict faster than this is repeated and averaged (default: %(default)s s)",
    )
    parser.add_argument("--no-jit", action="store_true", help="skip the JIT subprocess test")
    parser.add_argument("--data-dir", type=Path, default=None, help="overrides PERCEPTRONS_DATA")
    args = parser.parse_args(argv)
    args.datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    unknown = [d for d in args.datasets if d not in _datasets.FEATURIZERS]
    if unknown:
        parser.error(f"unknown data set(s) {unknown}; choose from {list(_datasets.FEATURIZERS)}")
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = shlex.join(["python", *sys.argv]) if argv is None else shlex.join(argv)
    started = _dt.datetime.now().astimezone()
    if not args.only_sklearn:
        try:
            from perceptrons import AveragedPerceptron, Perceptron  # noqa: F401
        except Exception as exc:
            print(
                f"error: cannot import perceptrons.Perceptron / AveragedPerceptron ({exc}).\n"
                "Run with PYTHONPATH=src, or use --only-sklearn to test the harness.",
                file=sys.stderr,
            )
            return 2
    specs = model_specs(args.only_sklearn)
    print(f"bench_linear: {_report.machine_info()}", flush=True)

    runs, skipped = [], []
    for name in args.datasets:
        print(f"\n== {name}", flush=True)
        try:
            ds = _datasets.FEATURIZERS[name](args.data_dir)
        except FileNotFoundError as exc:
            msg = f"{name}: data not available ({exc})"
            print(f"  SKIP {msg}", flush=True)
            skipped.append(msg)
            continue
        print(f"  {ds.describe()} (load + featurize {ds.load_seconds:.2f} s)", flush=True)
        run = run_dataset(ds, specs, args.repeats, args.min_time)
        runs.append(run)
        print("\n" + dataset_table(run), flush=True)
        header = ["data set", "ratio", "value", "target", "status"]
        print("\n" + _report.md_table(header, ratio_rows(run)))

    jit_lines: list[str] = []
    if args.only_sklearn or args.no_jit:
        print("\n== JIT: skipped", flush=True)
    else:
        print("\n== JIT (two fresh processes, shared temporary NUMBA_CACHE_DIR)", flush=True)
        jit_lines = measure_jit()
        for line in jit_lines:
            print("  " + line, flush=True)

    section = build_section(
        command, started, args.repeats, args.min_time, runs, skipped, jit_lines, args.only_sklearn
    )
    _report.write_section(args.output, section, "bench_linear")
    print(f"\nwrote section to {args.output}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
