"""Batch gradient ascent for logistic regression against SGD and scikit-learn's lbfgs.

Issue 14, part 3: on a9a and 20 Newsgroups (the standard protocols of
``../shared/data/README.md``, see ``_datasets.py``), every method optimizes the same MAP
objective, the per-example mean log conditional likelihood minus ``l2/2 ||w||²``
(intercepts not penalized)::

    F(w, b) = (1/n) Σ_i log P(y_i | x_i, w, b) - (l2 / 2) ||w||²

- ``LogisticRegressionBatch(l2=l2, tol=--tol)``: full-batch gradient ascent with the
  Barzilai-Borwein guess and Armijo backtracking (one row; the iteration at which the
  default ``tol`` would have stopped is given in the notes);
- ``LogisticRegressionSGD(l2=l2, learning_rate=η)``, plain and averaged, ``--epochs``
  epochs (shuffled, ``random_state=0``);
- scikit-learn's ``LogisticRegression(C=1/(n l2))`` with lbfgs, at its default ``tol``
  (1e-4) and tight (``tol=1e-8``).

The optimum ``F*`` is the best objective any run reached (the tight lbfgs run, or the
batch run when it went further). For each method: test accuracy, its final ``F``, the
relative gap ``(F* - F) / |F*|``, fit time, and the time at which it first came within
``1e-6`` relative of ``F*`` ("not reached" otherwise). Times along a run:
``fit_iterations`` / ``fit_epochs`` for ours (the objective of an SGD epoch is computed
with the clock paused), and for lbfgs the objective scipy's L-BFGS-B reports at each of
its iterations, read through a callback spliced into scikit-learn's call of
``scipy.optimize.minimize`` (the value it minimizes is ``-F``, checked against ``F``
recomputed from the fitted model). Every time includes the estimator's own input
validation.

Usage::

    python benchmarks/bench_logistic_batch.py [--datasets a9a 20news] [--l2 1e-4]
        [--tol 1e-10] [--max-iter 1000] [--epochs 15] [--data-dir DIR]
        [--output benchmarks/RESULTS.md]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import log_softmax
from sklearn.exceptions import ConvergenceWarning

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _datasets
import _report

SECTION = "bench_logistic_batch"
RELATIVE = 1e-6
# lbfgs's tol (a bound on the largest gradient component) for the optimum: the table
# shows how close the tight lbfgs and batch runs end to each other (the gap column).
TIGHT = 1e-8
# SGD's constant step per data set: of 0.01, 0.03, 0.1, 0.3, 1 and 3, the one whose
# averaged run ended with the best F after 15 epochs at l2 = 1e-4 (measured once, on
# this code: a9a -0.324643 at 0.03, next best -0.324789 at 0.01; 20news -1.351033 at
# 1, next best -1.354950 at 0.3).
SGD_RATES = {"a9a": 0.03, "20news": 1.0}


def map_objective(
    X: Any, codes: np.ndarray, coef: np.ndarray, intercept: np.ndarray, l2: float
) -> float:
    """``F`` of a fitted linear model, computed here independently of every library."""
    scores = np.asarray(X @ coef.T) + intercept
    if coef.shape[0] == 1:
        z = scores.ravel()
        loglik = codes * z - np.logaddexp(0.0, z)
    else:
        loglik = log_softmax(scores, axis=1)[np.arange(codes.shape[0]), codes]
    return float(loglik.mean() - 0.5 * l2 * np.vdot(coef, coef))


@dataclass
class Run:
    method: str
    accuracy: float
    objective: float
    seconds: float
    cpu: float  # process CPU seconds, all threads
    steps: str
    trace: list[tuple[float, float]] = field(default_factory=list)  # (seconds, F)
    # (iteration, seconds, F) where the class's default tol would have stopped it
    default_stop: tuple[int, float, float] | None = None

    def reached(self, optimum: float) -> float | None:
        """The first time within RELATIVE of ``optimum``, or None."""
        for seconds, value in self.trace:
            if optimum - value <= RELATIVE * abs(optimum):
                return seconds
        return None


def run_batch(ds, codes, l2, tol, max_iter) -> Run:
    from perceptrons.logistic_batch import LogisticRegressionBatch

    model = LogisticRegressionBatch(l2=l2, tol=tol, max_iter=max_iter)
    trace = []
    default_tol = LogisticRegressionBatch().tol
    default_stop = None
    previous = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cpu, start = time.process_time(), time.perf_counter()
        for record in model.fit_iterations(ds.X_train, ds.y_train):
            now = time.perf_counter() - start
            trace.append((now, record["objective"]))
            value = record["objective"]
            if default_stop is None and previous is not None:
                if value - previous < default_tol * abs(previous):
                    default_stop = (record["iteration"], now, value)
            previous = value
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    evaluations = sum(r["evaluations"] for r in model.history_)
    return Run(
        f"LogisticRegressionBatch(tol={tol:g})",
        model.score(ds.X_test, ds.y_test),
        map_objective(ds.X_train, codes, model.coef_, model.intercept_, l2),
        seconds,
        cpu,
        f"{model.n_iter_} iterations ({evaluations} objective evaluations)",
        trace,
        default_stop,
    )


def run_sgd(ds, codes, l2, rate, epochs, average) -> Run:
    from perceptrons.logistic import LogisticRegressionSGD

    model = LogisticRegressionSGD(
        l2=l2, learning_rate=rate, average=average, max_epochs=epochs, random_state=0
    )
    trace = []
    elapsed = cpu = 0.0
    cpu_start, start = time.process_time(), time.perf_counter()
    for _ in model.fit_epochs(ds.X_train, ds.y_train):
        elapsed += time.perf_counter() - start
        cpu += time.process_time() - cpu_start
        # The clock is paused while the objective is computed.
        value = map_objective(ds.X_train, codes, model.coef_, model.intercept_, l2)
        trace.append((elapsed, value))
        cpu_start, start = time.process_time(), time.perf_counter()
    elapsed += time.perf_counter() - start
    cpu += time.process_time() - cpu_start
    return Run(
        f"LogisticRegressionSGD(learning_rate={rate:g}{', average=True' if average else ''})",
        model.score(ds.X_test, ds.y_test),
        trace[-1][1],
        elapsed,
        cpu,
        f"{model.n_iter_} epochs",
        trace,
    )


class _TimedOptimize:
    """``scipy.optimize`` as scikit-learn's logistic module sees it, with every
    ``minimize`` call also recording ``(seconds since start, -fun)`` per iteration."""

    def __init__(self, real: Any, start: float, trace: list[tuple[float, float]]) -> None:
        self._real, self._start, self._trace = real, start, trace

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def minimize(self, *args: Any, callback: Any = None, **kwargs: Any) -> Any:
        def record(intermediate_result: Any) -> None:
            self._trace.append((time.perf_counter() - self._start, -float(intermediate_result.fun)))
            if callback is not None:
                callback(intermediate_result)

        return self._real.minimize(*args, callback=record, **kwargs)


def run_lbfgs(ds, codes, l2, tol) -> Run:
    from sklearn.linear_model import LogisticRegression, _logistic

    n = ds.X_train.shape[0]
    model = LogisticRegression(C=1.0 / (n * l2), tol=tol, max_iter=10_000)
    trace: list[tuple[float, float]] = []
    real = _logistic.optimize
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cpu, start = time.process_time(), time.perf_counter()
        _logistic.optimize = _TimedOptimize(real, start, trace)
        try:
            model.fit(ds.X_train, ds.y_train)
        finally:
            _logistic.optimize = real
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    objective = map_objective(
        ds.X_train, codes, np.atleast_2d(model.coef_), np.atleast_1d(model.intercept_), l2
    )
    if trace and abs(trace[-1][1] - objective) > 1e-9 * abs(objective):
        raise RuntimeError(
            f"lbfgs reports F = {trace[-1][1]!r}, the fitted model has {objective!r}: the "
            "objectives differ, the comparison would be meaningless"
        )
    return Run(
        f"scikit-learn LogisticRegression(lbfgs, tol={tol:g})",
        model.score(ds.X_test, ds.y_test),
        objective,
        seconds,
        cpu,
        f"{int(np.max(model.n_iter_))} iterations",
        trace,
    )


def _cell_time(run: Run, optimum: float) -> str:
    reached = run.reached(optimum)
    return "not reached" if reached is None else f"{reached:.2f}"


def _gap(value: float, optimum: float) -> str:
    gap = (optimum - value) / abs(optimum)
    return f"{gap:.1e}" if gap > 0 else "0 (best)"


def bench_dataset(name: str, args: argparse.Namespace) -> tuple[list[list[str]], list[str], str]:
    ds = _datasets.FEATURIZERS[name](args.data_dir)
    codes = np.searchsorted(np.unique(ds.y_train), ds.y_train)
    l2 = args.l2
    runs = [
        run_lbfgs(ds, codes, l2, TIGHT),
        run_lbfgs(ds, codes, l2, 1e-4),
        run_batch(ds, codes, l2, args.tol, args.max_iter),
    ]
    rate = SGD_RATES[name]
    runs += [run_sgd(ds, codes, l2, rate, args.epochs, average) for average in (False, True)]
    optimum = max(run.objective for run in runs)
    rows = [
        [
            name,
            run.method,
            f"{run.accuracy:.4f}",
            f"{run.objective:.9f}",
            _gap(run.objective, optimum),
            f"{run.seconds:.2f}",
            f"{run.cpu:.2f}",
            _cell_time(run, optimum),
            run.steps,
        ]
        for run in runs
    ]
    notes = [
        f"{name}: LogisticRegressionBatch with its default tol would have stopped at "
        f"iteration {run.default_stop[0]} ({run.default_stop[1]:.2f} s), F = "
        f"{run.default_stop[2]:.9f}, gap {_gap(run.default_stop[2], optimum)}"
        for run in runs
        if run.default_stop is not None
    ]
    best = max(runs, key=lambda r: r.objective)
    description = (
        f"{name}: {ds.describe()}; l2 = {l2:g} (scikit-learn C = "
        f"{1 / (ds.X_train.shape[0] * l2):.4g}); F* = {optimum:.10f} (from {best.method})"
    )
    return rows, notes, description


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--datasets", nargs="+", default=["a9a", "20news"], choices=sorted(SGD_RATES)
    )
    parser.add_argument("--l2", type=float, default=1e-4, help="the prior per example")
    parser.add_argument("--tol", type=float, default=1e-10, help="LogisticRegressionBatch's tol")
    parser.add_argument("--max-iter", type=int, default=1000, help="LogisticRegressionBatch's cap")
    parser.add_argument("--epochs", type=int, default=15, help="SGD epochs")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--output", default=str(Path(__file__).with_name("RESULTS.md")))
    args = parser.parse_args(argv)
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    wall = time.perf_counter()
    rows, notes, descriptions = [], [], []
    for name in args.datasets:
        try:
            part_rows, part_notes, description = bench_dataset(name, args)
        except (FileNotFoundError, OSError) as exc:
            print(f"skipping {name}: {exc}", file=sys.stderr)
            continue
        rows += part_rows
        notes += part_notes
        descriptions.append(description)
        print(_report.md_table(HEADER, part_rows), flush=True)
    total = time.perf_counter() - wall
    command = "python benchmarks/bench_logistic_batch.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    start_marker, end_marker = _report.markers(SECTION)
    section = "\n".join(
        [
            start_marker,
            "## Batch gradient for logistic regression (`benchmarks/bench_logistic_batch.py`)",
            "",
            f"- Command: `{command.strip()}` ({total:.0f} s in all)",
            f"- Date: {started}",
            f"- Machine: {_report.machine_info()}",
            "- Objective: `F = mean_i log P(y_i | x_i) - l2/2 ||w||²` (intercepts without "
            "prior), the same for every method (scikit-learn's `C = 1/(n l2)`). Gap: "
            "`(F* - F) / |F*|`; time to F*: the first moment a run was within 1e-6 relative "
            "of F* (seconds from the start of `fit`, input validation included). CPU s: "
            "the process's CPU time over all its threads (BLAS and scikit-learn's loss use "
            "more than one).",
            *[f"- {d}" for d in descriptions],
            "",
            _report.md_table(HEADER, rows),
            "",
            *[f"- {n}" for n in notes],
            end_marker,
        ]
    )
    print(section)
    _report.write_section(Path(args.output), section, SECTION)
    return 0


HEADER = [
    "data",
    "method",
    "test accuracy",
    "final F",
    "gap to F*",
    "fit s",
    "CPU s",
    "s to F* (1e-6)",
    "steps",
]


if __name__ == "__main__":
    sys.exit(main())
