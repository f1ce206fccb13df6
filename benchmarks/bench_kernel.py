"""The kernel perceptron benchmark of issue 29: MNIST in one epoch, and a packaged peer.

Two measurements of ``VotedPerceptron`` with the kernel ``(1 + <x, x'>)^4``:

1. **MNIST, 60,000 images, degree 4, one epoch, one-vs-rest** (Freund & Schapire's
   protocol: ``kernel="poly", degree=4, gamma=1, coef0=1, multiclass="ovr"``,
   ``random_state=0``; the other parameters at their defaults, as
   ``freund_schapire.py`` runs it): fit seconds, mistakes (``history_[0]["mistakes"]``),
   support vectors, seconds to predict the 10,000 test images (the vote), test error, for
   each batch size (128, 512, 2048, and the default "auto") and each backend given. The
   column "same as NumPy batch 512" compares the update count and ``support_vectors_``
   (``np.array_equal`` within a run; a SHA-256 of the array across runs, which is the
   same test for arrays of one dtype and shape) with that reference row.
2. **5,000 binary images, degree 4, one epoch, against the ``votedperceptron`` package
   (1.0.0, PyPI)**: the first 5,000 training images, labelled +1 for digits 0-4 and -1
   for digits 5-9. The package's polynomial kernel is ``(gamma <x, x'> + coef0)^d`` on
   the images with a constant 1 put in front, so ``gamma=1, coef0=0, degree=4`` is
   ``(1 + <x, x'>)^4``, ours with ``fit_intercept=False``; it trains in the given order,
   so ours runs with ``shuffle=False``. The package predicts +1 on a score of exactly 0
   while ours counts a score of 0 as a mistake, so the two could part on the first
   example (the zero model's score is 0); the first image is a 5, labelled -1, a mistake
   for both, and from there the two make the same mistakes (checked: mistakes, support
   vectors and test predictions are compared). Fit time is the median of ``--repeats``
   (3) interleaved fits of each in this process, ours after an untimed warm-up fit
   (Numba compiles); predict time likewise on the first 1,000 test images.

Results go to the ``bench_kernel`` section of RESULTS.md; ``--json-out FILE`` also saves
the raw run, and ``--from-json A B ...`` rebuilds the section from saved runs (the GPU
rows come from another machine): every row names its machine and backend.

Usage::

    python benchmarks/bench_kernel.py [--device cpu --device cuda] [--batch-sizes 128,512,2048,auto]
        [--train-size N] [--binary-size 5000] [--repeats 1] [--binary-repeats 3]
        [--machine-label "2-core VM"] [--json-out run.json] [--output benchmarks/RESULTS.md]
    python benchmarks/bench_kernel.py --from-json cpu.json gpu.json
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

import _datasets  # benchmarks/ is sys.path[0]; it also puts src/ on sys.path if needed
import _devices
import _report

SECTION = "bench_kernel"
SCRIPT = "bench_kernel"
BATCH_SIZES = (128, 512, 2048, "auto")
REFERENCE_BATCH = 512
# The targets.
TARGET_FIT_SECONDS = 4.0  # MNIST 60k, degree 4, one epoch, on the 2-core machine
TARGET_SPEEDUP = 20.0  # over the votedperceptron package, 5,000 binary images
# Before issue 29: freund_schapire.py's degree-4 T=1 row of 2026-11-21 (same protocol).
BEFORE = {"fit_seconds": 10.7, "updates": 7886, "support_vectors": 6298}

MNIST_PARAMS = dict(
    kernel="poly", degree=4, gamma=1.0, coef0=1.0, multiclass="ovr", max_epochs=1, random_state=0
)
BINARY_PARAMS = dict(
    kernel="poly",
    degree=4,
    gamma=1.0,
    coef0=1.0,
    fit_intercept=False,
    shuffle=False,
    max_epochs=1,
    random_state=0,
)
# The package's kernel on [1, x]: (1 * (1 + <x, x'>) + 0) ** 4.
PACKAGE_KERNEL = {"kernel_type": "polynomial", "degree": 4, "gamma": 1.0, "coef0": 0.0}


def _digest(array: np.ndarray) -> str:
    array = np.ascontiguousarray(array, dtype=np.float64)
    return hashlib.sha256(repr(array.shape).encode() + array.tobytes()).hexdigest()


def _median_time(function, repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


# -------------------------------------------------------------------- MNIST, one epoch
def mnist_rows(ds, devices, batch_sizes, train_size, repeats) -> list[dict[str, Any]]:
    X_train, y_train = ds.X_train, ds.y_train
    if train_size:
        X_train, y_train = X_train[:train_size], y_train[:train_size]
    rows: list[dict[str, Any]] = []
    reference_support = None  # NumPy, batch 512, of this run: np.array_equal against it
    for device in devices:
        for batch_size in batch_sizes:
            row: dict[str, Any] = {
                "backend": _devices.backend_label(device),
                "device": device,
                "batch_size": batch_size,
                "train_size": len(y_train),
            }
            try:
                # Untimed: compiles the kernels (and starts the device) on a few blocks,
                # and the prediction pass on 20 images.
                warm = _devices.make_voted(device, **MNIST_PARAMS, batch_size=batch_size)
                warm.fit(X_train[:600], y_train[:600]).predict(ds.X_test[:20])

                def fit(device=device, batch_size=batch_size):
                    m = _devices.make_voted(device, **MNIST_PARAMS, batch_size=batch_size)
                    return m.fit(X_train, y_train)

                row["fit_seconds"], model = _median_time(fit, repeats)
                start = time.perf_counter()
                predictions = model.predict(ds.X_test)
                row["predict_seconds"] = time.perf_counter() - start
            except Exception as exc:  # any failure of a backend becomes its row, named
                row["error"] = f"{type(exc).__name__}: {exc}"
                print(f"  {row['backend']} batch {batch_size}: {row['error']}", flush=True)
                rows.append(row)
                continue
            support = np.asarray(model.support_vectors_)
            row.update(
                mistakes=int(model.history_[0]["mistakes"]),
                n_updates=int(model.n_updates_),
                support_vectors=int(support.shape[0]),
                support_digest=_digest(support),
                test_error=float(np.mean(predictions != ds.y_test)),
                peak_rss_gb=_devices.peak_rss_gb(),
                peak_device_gb=_devices.peak_device_gb(device),
            )
            if device is None and batch_size == REFERENCE_BATCH:
                reference_support = support
            if reference_support is not None:
                row["support_equal_in_run"] = bool(np.array_equal(support, reference_support))
            rows.append(row)
            print(
                f"  {row['backend']} batch {batch_size}: fit {row['fit_seconds']:.2f} s, "
                f"{row['mistakes']:,} mistakes, {row['support_vectors']:,} support vectors, "
                f"predict {row['predict_seconds']:.2f} s, error {100 * row['test_error']:.2f}%",
                flush=True,
            )
            del model, support
            gc.collect()
    return rows


# ------------------------------------------------------- 5,000 binary images vs the package
def binary_labels(digits: np.ndarray) -> np.ndarray:
    """+1 for digits 0-4, -1 for 5-9 (MNIST's first training image, a 5, is then -1)."""
    return np.where(np.asarray(digits) < 5, 1, -1)


def binary_comparison(ds, devices, n_train, n_test, repeats) -> dict[str, Any]:
    X, y = np.ascontiguousarray(ds.X_train[:n_train]), binary_labels(ds.y_train[:n_train])
    X_test, y_test = np.ascontiguousarray(ds.X_test[:n_test]), binary_labels(ds.y_test[:n_test])
    result: dict[str, Any] = {"n_train": len(y), "n_test": len(y_test), "repeats": repeats}
    try:
        from votedperceptron import VotedPerceptron as PackageVotedPerceptron

        result["package_version"] = version("votedperceptron")
    except ImportError as exc:
        result["package_error"] = f"not installed ({exc}); pip install votedperceptron"
        PackageVotedPerceptron = None

    ours: dict[str | None, Any] = {}
    for device in devices:
        try:  # untimed warm-up: Numba compiles, the device starts
            _devices.make_voted(device, **BINARY_PARAMS).fit(X[:300], y[:300]).predict(X[:20])
            ours[device] = {"fit": [], "predict": []}
        except Exception as exc:  # any failure of a backend becomes its row, named
            ours[device] = {"error": f"{type(exc).__name__}: {exc}"}

    package_fit, package_predict, package = [], [], None
    models: dict[str | None, Any] = {}
    for _ in range(repeats):  # interleaved, so that a noisy moment hurts both
        if PackageVotedPerceptron is not None:
            package = PackageVotedPerceptron(dict(PACKAGE_KERNEL))
            start = time.perf_counter()
            package.train(X, y, max_epochs=1)
            package_fit.append(time.perf_counter() - start)
        for device, timing in ours.items():
            if "error" in timing:
                continue
            model = _devices.make_voted(device, **BINARY_PARAMS)
            start = time.perf_counter()
            model.fit(X, y)
            timing["fit"].append(time.perf_counter() - start)
            models[device] = model
    for _ in range(repeats):
        if package is not None:
            start = time.perf_counter()
            package_predictions = np.array(
                [package.predict(x, "classification") for x in X_test], dtype=int
            )
            package_predict.append(time.perf_counter() - start)
        for device, model in models.items():
            start = time.perf_counter()
            predictions = model.predict(X_test)
            ours[device]["predict"].append(time.perf_counter() - start)
            ours[device]["predictions"] = predictions

    package_support = None
    if package is not None:
        # Its first prediction vector is the zero vector; the others add one example
        # each (with the constant 1 in front, dropped here).
        package_support = np.asarray(package.prediction_vector_terms[1:])[:, 1:]
        result["package"] = {
            "fit_seconds": statistics.median(package_fit),
            "predict_seconds": statistics.median(package_predict),
            "mistakes": len(package.prediction_vector_votes) - 1,
            "support_vectors": int(package_support.shape[0]),
            "test_accuracy": float(np.mean(package_predictions == y_test)),
        }
    rows = []
    for device, timing in ours.items():
        row: dict[str, Any] = {"backend": _devices.backend_label(device), "device": device}
        if "error" in timing:
            row["error"] = timing["error"]
            rows.append(row)
            continue
        model = models[device]
        support = np.asarray(model.support_vectors_)
        row.update(
            fit_seconds=statistics.median(timing["fit"]),
            predict_seconds=statistics.median(timing["predict"]),
            mistakes=int(model.history_[0]["mistakes"]),
            support_vectors=int(support.shape[0]),
            test_accuracy=float(np.mean(timing["predictions"] == y_test)),
        )
        if package_support is not None:
            row["same_support_as_package"] = bool(np.array_equal(support, package_support))
            row["same_predictions_as_package"] = float(
                np.mean(timing["predictions"] == package_predictions)
            )
        rows.append(row)
    result["ours"] = rows
    return result


# ------------------------------------------------------------------------------- report
def _seconds(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _reference(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first NumPy batch-512 row of any run: what "same mistakes" compares with."""
    for run in runs:
        for row in run.get("mnist", []):
            reference = row["device"] is None and row["batch_size"] == REFERENCE_BATCH
            if reference and "error" not in row:
                return row
    return None


def _same_as(row: dict[str, Any], reference: dict[str, Any] | None) -> str:
    if reference is None:
        return "no reference row"
    if row is reference:
        return "reference"
    same = (
        row["mistakes"] == reference["mistakes"]
        and row["n_updates"] == reference["n_updates"]
        and row["support_digest"] == reference["support_digest"]
    )
    in_run = row.get("support_equal_in_run")
    if in_run is not None and in_run != (row["support_digest"] == reference["support_digest"]):
        return "digest and array_equal disagree"  # only if the reference is another run's
    if same:
        return "yes"
    if row["mistakes"] != reference["mistakes"]:
        return f"**no**: {row['mistakes']:,} mistakes vs {reference['mistakes']:,}"
    return "**no**: other updates or support vectors"


def mnist_table(runs: list[dict[str, Any]]) -> list[str]:
    reference = _reference(runs)
    header = ["machine", "backend", "batch", "fit s", "mistakes", "support vectors"]
    header += ["predict s (10k)", "test error %", "peak RSS GB", "same as NumPy batch 512"]
    rows = []
    for run in runs:
        for row in run.get("mnist", []):
            lead = [run["machine_tag"], row["backend"], str(row["batch_size"])]
            if "error" in row:
                rows.append(lead + ["—"] * 6 + [row["error"]])
                continue
            rss = f"{row['peak_rss_gb']:.2f}"
            if row.get("peak_device_gb") is not None:
                rss += f" (GPU {row['peak_device_gb']:.2f})"
            rows.append(
                [
                    *lead,
                    _seconds(row["fit_seconds"]),
                    f"{row['mistakes']:,}",
                    f"{row['support_vectors']:,}",
                    _seconds(row["predict_seconds"]),
                    f"{100 * row['test_error']:.2f}",
                    rss,
                    _same_as(row, reference),
                ]
            )
    sizes = sorted({row["train_size"] for run in runs for row in run.get("mnist", [])})
    return [
        f"### MNIST ({', '.join(f'{s:,}' for s in sizes)} training images), degree 4, "
        "one epoch, one-vs-rest",
        "",
        _report.md_table(header, rows),
        "",
        f"Before issue 29 (`freund_schapire.py`, 2026-11-21, 2-core VM, NumPy): fit "
        f"{BEFORE['fit_seconds']} s, {BEFORE['updates']:,} updates, "
        f"{BEFORE['support_vectors']:,} support vectors. Peak RSS is the process's so far "
        "(rows run in order in one process).",
    ]


def binary_table(runs: list[dict[str, Any]]) -> list[str]:
    header = ["machine", "implementation", "fit s", "mistakes", "support vectors"]
    header += ["test accuracy", "predict s", "fit speed-up", "predict speed-up", "same as package"]
    rows, notes = [], []
    for run in runs:
        binary = run.get("binary")
        if not binary:
            continue
        package = binary.get("package")
        tag = run["machine_tag"]
        if package:
            rows.append(
                [
                    tag,
                    f"votedperceptron {binary.get('package_version', '?')}",
                    _seconds(package["fit_seconds"]),
                    f"{package['mistakes']:,}",
                    f"{package['support_vectors']:,}",
                    f"{package['test_accuracy']:.4f}",
                    _seconds(package["predict_seconds"]),
                    "1",
                    "1",
                    "—",
                ]
            )
        else:
            notes.append(f"{tag}: votedperceptron {binary.get('package_error', 'missing')}")
        for row in binary["ours"]:
            if "error" in row:
                rows.append([tag, f"ours, {row['backend']}"] + ["—"] * 7 + [row["error"]])
                continue
            same = "—"
            if "same_support_as_package" in row:
                same = (
                    f"support vectors {'equal' if row['same_support_as_package'] else '**differ**'}"
                    f"; predictions {100 * row['same_predictions_as_package']:.1f}% equal"
                )
            rows.append(
                [
                    tag,
                    f"ours, {row['backend']}",
                    _seconds(row["fit_seconds"], 3),
                    f"{row['mistakes']:,}",
                    f"{row['support_vectors']:,}",
                    f"{row['test_accuracy']:.4f}",
                    _seconds(row["predict_seconds"], 3),
                    f"{package['fit_seconds'] / row['fit_seconds']:.1f}×" if package else "—",
                    f"{package['predict_seconds'] / row['predict_seconds']:.1f}×"
                    if package
                    else "—",
                    same,
                ]
            )
    if not rows:
        return []
    first = next(run["binary"] for run in runs if run.get("binary"))
    return [
        f"### {first['n_train']:,} binary images (digits 0-4 vs 5-9), degree 4, one epoch: "
        "ours vs the `votedperceptron` package",
        "",
        _report.md_table(header, rows),
        "",
        f"Median of {first['repeats']} interleaved fits each, in one process; predict: the "
        f"first {first['n_test']:,} test images (the vote). Kernel (1 + <x, x'>)^4 on both "
        "sides, training order as given, no intercept beyond the kernel's constant.",
        *[f"- {note}" for note in notes],
    ]


def target_rows(runs: list[dict[str, Any]]) -> list[list[str]]:
    reference = _reference(runs)
    rows = []
    for run in runs:
        two_cores = run.get("cpus") == 2
        for row in run.get("mnist", []):
            if row["batch_size"] != REFERENCE_BATCH or "error" in row:
                continue
            full = row["train_size"] == 60000
            same = _same_as(row, reference) in ("yes", "reference")
            same_before = row["n_updates"] == BEFORE["updates"]
            met = row["fit_seconds"] <= TARGET_FIT_SECONDS and same and full
            rows.append(
                [
                    f"MNIST 60k, degree 4, T = 1 ({run['machine_tag']}, {row['backend']})",
                    f"fit {row['fit_seconds']:.2f} s, {row['n_updates']:,} updates"
                    + ("" if full else f" (only {row['train_size']:,} images)")
                    + ("; the count before issue 29" if same_before else ""),
                    f"≤ {TARGET_FIT_SECONDS:g} s on the 2-core machine, identical mistakes",
                    "n/a (not the 2-core machine)"
                    if not two_cores
                    else ("met" if met else "missed")
                    if full
                    else "n/a (not all 60,000 images)",
                ]
            )
        binary = run.get("binary") or {}
        package = binary.get("package")
        for row in binary.get("ours", []):
            if not package or "error" in row:
                continue
            ratio = package["fit_seconds"] / row["fit_seconds"]
            rows.append(
                [
                    f"{binary['n_train']:,} binary images, degree 4 "
                    f"({run['machine_tag']}, {row['backend']})",
                    f"{ratio:.1f}× votedperceptron's fit "
                    f"({row['fit_seconds']:.3f} s vs {package['fit_seconds']:.2f} s)",
                    f"≥ {TARGET_SPEEDUP:g}×",
                    "met" if ratio >= TARGET_SPEEDUP else "missed",
                ]
            )
    return rows


def build_section(runs: list[dict[str, Any]]) -> str:
    start_marker, end_marker = _report.markers(SECTION)
    parts = [
        start_marker,
        "## The kernel perceptron benchmark (`benchmarks/bench_kernel.py`, issue 29)",
        "",
        "Runs (every row names its machine; GPU rows come from another machine's JSON):",
        "",
        *_devices.provenance_lines(runs),
        "",
        "- Protocol: `VotedPerceptron(kernel='poly', degree=4, gamma=1, coef0=1)`, pixels in "
        "[0, 1]; MNIST one-vs-rest with `random_state=0` (shuffled); the binary comparison "
        "unshuffled, without intercept. Our kernels are compiled by an untimed fit first.",
        "",
        *mnist_table(runs),
        "",
        *binary_table(runs),
        "",
        "### Targets",
        "",
        _report.md_table(["target", "value", "goal", "status"], target_rows(runs)),
        "",
        end_marker,
    ]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _devices.add_run_options(parser, __file__)
    parser.add_argument("--batch-sizes", default=",".join(map(str, BATCH_SIZES)))
    parser.add_argument("--train-size", type=int, default=None, help="first N MNIST images")
    parser.add_argument("--repeats", type=int, default=1, help="fits per MNIST row (median)")
    parser.add_argument("--binary-size", type=int, default=5000, help="0 skips the comparison")
    parser.add_argument("--binary-test-size", type=int, default=1000)
    parser.add_argument("--binary-repeats", type=int, default=3)
    parser.add_argument("--skip-mnist", action="store_true", help="only the binary comparison")
    args = parser.parse_args(argv)

    if args.from_json:
        try:
            runs = _devices.read_json(args.from_json, SCRIPT)
        except (OSError, ValueError) as exc:
            parser.error(str(exc))
    else:
        if _datasets.loaders.shared_data_dir() is None:
            print("bench_kernel: shared data not found; set PERCEPTRONS_DATA. Nothing run.")
            return 0
        _devices.limit_blas_threads(args.blas_threads)
        devices = _devices.parse_devices(args.device)
        tag = _devices.machine_tag(devices, args.machine_label)
        run = _devices.run_header(SCRIPT, argv, tag)
        run["cpus"] = os.cpu_count()
        print(f"bench_kernel: {tag}; {run['machine']}", flush=True)
        ds = _datasets.featurize_mnist()
        if not args.skip_mnist:
            batch_sizes = [b if b == "auto" else int(b) for b in args.batch_sizes.split(",") if b]
            run["mnist"] = mnist_rows(ds, devices, batch_sizes, args.train_size, args.repeats)
        if args.binary_size:
            run["binary"] = binary_comparison(
                ds, devices, args.binary_size, args.binary_test_size, args.binary_repeats
            )
        if args.json_out:
            _devices.write_json(args.json_out, run)
            print(f"saved the run to {args.json_out}")
        runs = [run]
    section = build_section(runs)
    print(section)
    _report.write_section(Path(args.output), section, SECTION)
    print(f"wrote section to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
