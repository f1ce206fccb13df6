"""Freund & Schapire (1999) on MNIST: the voted perceptron with polynomial kernels.

Their protocol: one-vs-rest over the 10 digits, kernel ``(1 + <x, x'>)^d`` for d = 1..5,
T epochs over the 60,000 training images, test error on the 10,000 test images for the
vote, average, last and random prediction rules. Pixels are scaled to [0, 1].

Each configuration runs in its own process, so that its peak memory (max RSS) is its
own. Runs of T > 1 epochs report every epoch up to T from one fit: after epoch t the
model is exactly a t-epoch fit (``VotedPerceptron.staged_decision_function``).

Also compares VotedPerceptron (linear kernel) with AveragedPerceptron on 20 Newsgroups.

Usage::

    python benchmarks/freund_schapire.py [--degrees 1,2,3,4,5] [--epochs 10]
        [--staged-degrees 2,3,4,5] [--train-size N] [--output benchmarks/RESULTS.md]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import _datasets  # benchmarks/ is sys.path[0]; it also puts src/ on sys.path if needed
import _report

RULES = ("vote", "average", "last", "random")
SECTION = "freund_schapire"
REPORTED_EPOCHS = (1, 2, 3, 4, 5, 10, 20, 30)


# ------------------------------------------------------------------ child processes
def _peak_rss_gb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kB on Linux


def run_mnist(degree: int, epochs: int, train_size: int | None) -> dict:
    from perceptrons import VotedPerceptron

    ds = _datasets.featurize_mnist()
    X_train, y_train, X_test, y_test = ds.X_train, ds.y_train, ds.X_test, ds.y_test
    if train_size:
        X_train, y_train = X_train[:train_size], y_train[:train_size]
    model = VotedPerceptron(
        kernel="poly",
        degree=degree,
        gamma=1.0,
        coef0=1.0,
        multiclass="ovr",
        max_epochs=epochs,
        random_state=0,
    )
    start = time.perf_counter()
    model.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start
    errors, predict_seconds = {}, {}
    for rule in RULES:
        model.set_params(prediction=rule)
        start = time.perf_counter()
        staged = list(model.staged_predict(X_test))
        predict_seconds[rule] = time.perf_counter() - start
        errors[rule] = [float(np.mean(pred != y_test)) for pred in staged]
    updates = np.cumsum([record["mistakes"] for record in model.history_]).tolist()
    support = [record["support_vectors"] for record in model.history_]
    return {
        "degree": degree,
        "epochs": epochs,
        "train_size": len(y_train),
        "fit_seconds": fit_seconds,
        "predict_seconds": predict_seconds,
        "errors": errors,
        "updates": updates,
        "support_vectors": support,
        "peak_rss_gb": _peak_rss_gb(),
    }


def _model_bytes(model) -> int:
    import scipy.sparse as sp

    from perceptrons import VotedPerceptron

    if isinstance(model, VotedPerceptron):
        support = model.support_vectors_
        arrays = (
            [support.data, support.indices, support.indptr] if sp.issparse(support) else [support]
        )
        return sum(a.nbytes for a in arrays) + model._updates.view.nbytes
    return model.coef_.nbytes + model.intercept_.nbytes


def run_20news(epochs: int) -> dict:
    from perceptrons import AveragedPerceptron, VotedPerceptron

    ds = _datasets.featurize_20news()
    results = {}
    models = {
        "AveragedPerceptron": AveragedPerceptron(max_epochs=epochs, random_state=0),
        "VotedPerceptron (linear, vote)": VotedPerceptron(max_epochs=epochs, random_state=0),
        "VotedPerceptron (linear, average)": VotedPerceptron(
            max_epochs=epochs, random_state=0, prediction="average"
        ),
    }
    for name, model in models.items():
        model.fit(ds.X_train[::50], ds.y_train[::50])  # compile outside the timing
        start = time.perf_counter()
        model.fit(ds.X_train, ds.y_train)
        fit_seconds = time.perf_counter() - start
        start = time.perf_counter()
        predictions = model.predict(ds.X_test)
        predict_seconds = time.perf_counter() - start
        results[name] = {
            "accuracy": float(np.mean(predictions == ds.y_test)),
            "fit_seconds": fit_seconds,
            "predict_seconds": predict_seconds,
            "model_mb": _model_bytes(model) / 2**20,
        }
    return {"epochs": epochs, "results": results, "peak_rss_gb": _peak_rss_gb()}


def _in_child(job: dict) -> dict:
    """Run ``job`` in a fresh interpreter and return its JSON result."""
    completed = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(job)],
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"child {job} failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------ report
def _pct(x: float) -> str:
    return f"{100 * x:.2f}"


def mnist_tables(single: list[dict], staged: list[dict]) -> list[str]:
    rows = []
    for run in single:
        rows.append(
            [
                str(run["degree"]),
                *[_pct(run["errors"][rule][0]) for rule in RULES],
                f"{run['updates'][0]:,}",
                f"{run['support_vectors'][0]:,}",
                f"{run['fit_seconds']:.1f}",
                f"{run['predict_seconds']['vote']:.1f}",
                f"{run['peak_rss_gb']:.2f}",
            ]
        )
    header = ["degree", "vote %", "average %", "last %", "random %", "updates"]
    header += ["support vectors", "fit s", "predict s (vote)", "peak RSS GB"]
    parts = ["### T = 1 epoch, one process per degree", "", _report.md_table(header, rows)]
    if staged:
        rows = []
        for run in staged:
            for t in REPORTED_EPOCHS:
                if t > run["epochs"]:
                    continue
                rows.append(
                    [
                        str(run["degree"]),
                        str(t),
                        *[_pct(run["errors"][rule][t - 1]) for rule in RULES],
                        f"{run['updates'][t - 1]:,}",
                        f"{run['support_vectors'][t - 1]:,}",
                    ]
                )
        header = ["degree", "T", "vote %", "average %", "last %", "random %", "updates"]
        header += ["support vectors"]
        fits = ", ".join(
            f"degree {r['degree']}: {r['fit_seconds']:.0f} s, peak {r['peak_rss_gb']:.2f} GB"
            for r in staged
        )
        parts += [
            "",
            "### Error by epoch (every row of a degree comes from one fit of its largest T)",
            "",
            _report.md_table(header, rows),
            "",
            f"Fit time of those {staged[0]['epochs']}-epoch runs: {fits}.",
        ]
    return parts


def target_rows(single: list[dict], staged: list[dict]) -> list[list[str]]:
    every = [(r["degree"], t + 1, r) for r in single + staged for t in range(r["epochs"])]
    beat = [
        (d, t)
        for d, t, r in every
        if min(r["errors"]["vote"][t - 1], r["errors"]["average"][t - 1])
        >= r["errors"]["last"][t - 1]
    ]
    best = min(
        ((r["errors"][rule][t - 1], rule, d, t) for d, t, r in every for rule in RULES),
        default=None,
    )
    rows = [
        [
            "voted and averaged beat last",
            f"{len(every) - len(beat)} of {len(every)} (degree, T) configurations"
            + (f"; not in {beat}" if beat else ""),
            "all",
            "met" if not beat else "missed",
        ]
    ]
    if best:
        rows.append(
            [
                "best test error",
                f"{_pct(best[0])} % ({best[1]}, degree {best[2]}, T = {best[3]})",
                "≤ 2.0 %",
                "met" if best[0] <= 0.02 else "missed",
            ]
        )
    for r in single:
        if r["degree"] == 4 and r["epochs"] == 1:
            full = r["train_size"] == 60000
            rows.append(
                [
                    "degree 4, T = 1, all 60,000 images",
                    f"fit {r['fit_seconds']:.1f} s, peak RSS {r['peak_rss_gb']:.2f} GB"
                    + ("" if full else f" (only {r['train_size']:,} images)"),
                    "< 600 s, < 8 GB",
                    "met" if full and r["fit_seconds"] < 600 and r["peak_rss_gb"] < 8 else "missed",
                ]
            )
    return rows


def news_table(news: dict) -> list[str]:
    rows = [
        [
            name,
            f"{r['accuracy']:.4f}",
            f"{r['fit_seconds']:.2f}",
            f"{r['predict_seconds']:.3f}",
            f"{r['model_mb']:.1f}",
        ]
        for name, r in news["results"].items()
    ]
    header = ["model", "test accuracy", "fit s", "predict s", "model MB"]
    return [
        f"### 20 Newsgroups (TF-IDF), {news['epochs']} epochs: linear VotedPerceptron vs "
        "AveragedPerceptron",
        "",
        _report.md_table(header, rows),
        "",
        "Model MB: the voted perceptron keeps its support vectors (CSR) and update "
        "sequence; the averaged perceptron its weight matrix and biases.",
    ]


def build_section(command, started, single, staged, news) -> str:
    start_marker, end_marker = _report.markers(SECTION)
    header = ["target", "value", "goal", "status"]
    parts = [
        start_marker,
        "## Freund & Schapire's MNIST experiment (`benchmarks/freund_schapire.py`)",
        "",
        f"- Command: `{command}`",
        f"- Date: {started}",
        f"- Machine: {_report.machine_info()}",
        "- Protocol: one-vs-rest VotedPerceptron, kernel (1 + <x, x'>)^d (gamma=1, coef0=1), "
        "pixels in [0, 1], random_state=0, test error on the 10,000 test images. Fit times "
        "include every kernel evaluation; predict times cover all epochs of a run at once.",
        "",
        *mnist_tables(single, staged),
        "",
        "### Targets",
        "",
        _report.md_table(header, target_rows(single, staged)),
    ]
    if news:
        parts += ["", *news_table(news)]
    parts += ["", end_marker]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--degrees", default="1,2,3,4,5")
    parser.add_argument("--epochs", type=int, default=10, help="T of the staged runs")
    parser.add_argument("--staged-degrees", default="2,3,4,5")
    parser.add_argument("--train-size", type=int, default=None, help="first N images only")
    parser.add_argument("--news-epochs", type=int, default=10, help="0 skips 20 Newsgroups")
    parser.add_argument("--output", default=str(Path(__file__).with_name("RESULTS.md")))
    args = parser.parse_args(argv)
    if args.child:
        job = json.loads(args.child)
        kind = job.pop("kind")
        result = run_mnist(**job) if kind == "mnist" else run_20news(**job)
        print(json.dumps(result))
        return 0

    if _datasets.loaders.shared_data_dir() is None:
        print("freund_schapire: shared data not found; set PERCEPTRONS_DATA. Nothing run.")
        return 0
    command = "python " + " ".join(shlex.quote(a) for a in [sys.argv[0], *(argv or sys.argv[1:])])
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    print(f"freund_schapire: {_report.machine_info()}", flush=True)
    single, staged = [], []
    for degree in [int(d) for d in args.degrees.split(",") if d]:
        run = _in_child(
            {"kind": "mnist", "degree": degree, "epochs": 1, "train_size": args.train_size}
        )
        print(
            f"degree {degree}, T=1: "
            + ", ".join(f"{rule} {_pct(run['errors'][rule][0])}%" for rule in RULES)
            + f"; fit {run['fit_seconds']:.1f} s, peak {run['peak_rss_gb']:.2f} GB",
            flush=True,
        )
        single.append(run)
    if args.epochs > 1:
        for degree in [int(d) for d in args.staged_degrees.split(",") if d]:
            run = _in_child(
                {
                    "kind": "mnist",
                    "degree": degree,
                    "epochs": args.epochs,
                    "train_size": args.train_size,
                }
            )
            print(
                f"degree {degree}, T=1..{args.epochs}: vote "
                + " ".join(_pct(e) for e in run["errors"]["vote"])
                + f"; fit {run['fit_seconds']:.0f} s",
                flush=True,
            )
            staged.append(run)
    news = _in_child({"kind": "20news", "epochs": args.news_epochs}) if args.news_epochs else None
    if news:
        print("\n".join(news_table(news)), flush=True)
    section = build_section(command, started, single, staged, news)
    _report.write_section(Path(args.output), section, SECTION)
    print(f"wrote section to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
