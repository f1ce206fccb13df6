"""The cost table of the averaged and voted perceptrons, measured.

Freund & Schapire (1999) and Daumé (2006) give seven ways to train the voted or the
averaged perceptron that return the same model at different costs (the table in
:mod:`perceptrons.complexity`). This benchmark trains each with the compiled
:func:`perceptrons.complexity.train_strategy` on synthetic sparse binary data with a
fixed number ``nnz`` of nonzero features per example, varying one factor at a time:

``d``      the dimension, at fixed ``T|D|`` and (random labels, one epoch) ``U ≈ T|D|/2``;
``T|D|``   the examples visited, more epochs over separable data with a margin, where
           the perceptron converges and ``U`` stays nearly constant;
``U``      the number of updates, by the label noise at fixed ``T|D|`` and ``d``.

For each strategy and point it records the training time (the fastest of
``--repeats`` runs of the compiled training, final sums included: validation and the
visiting orders are outside it), the bytes the strategy stores (``stored_bytes``: its
weights, models, votes, sums, update lists; exact), and the peak of the memory traced
by ``tracemalloc`` during one more call (every NumPy buffer the call allocates: the
input check, the visiting order of ``8 T|D|`` bytes, the storage with its doubling
copies, the final model). It fits the log-log slope of time and stored bytes in each
factor and prints them beside the slopes the table predicts: the slope, at the measured
points, of the table's formula with unit constants (``U`` is the measured one). Every
measured slope more than 0.15 away from the prediction is listed with its explanation.

Usage::

    python benchmarks/bench_complexity.py [--repeats 5] [--quick] \\
        [--output benchmarks/RESULTS.md] [--figure benchmarks/complexity.png]

The Markdown section between ``<!-- bench_complexity:start -->`` and
``<!-- bench_complexity:end -->`` of the output file is replaced (other content is kept).
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import datetime as _dt
import gc
import os
import shlex
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.optimize import nnls

import _datasets  # noqa: F401  (benchmarks/ is sys.path[0]; it puts src/ on sys.path)
import _report
from perceptrons.complexity import COST_TABLE, STRATEGIES, train_strategy

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_OUTPUT = BENCH_DIR / "RESULTS.md"
DEFAULT_FIGURE = BENCH_DIR / "complexity.png"
NAME = "bench_complexity"
NNZ = 10
# glibc, for malloc_trim (None elsewhere: timings then start from whatever state).
try:
    _LIBC: ctypes.CDLL | None = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    _LIBC.malloc_trim  # noqa: B018  (only glibc has it)
except (OSError, AttributeError):
    _LIBC = None
TOLERANCE = 0.15


@dataclass(frozen=True)
class Sweep:
    """One factor varied: ``points`` builds the data of each point."""

    factor: str  # "d", "T|D|" or "U"
    label: str
    settings: list[dict[str, float]]


def sweeps(quick: bool) -> list[Sweep]:
    """The three sweeps. Sizes keep the naive voted perceptron's ``T|D| (d+1)`` float64
    models under about 0.8 GB and the whole run under about three minutes."""
    if quick:
        return [
            Sweep("d", "d", [{"d": d, "n": 300, "epochs": 1, "noise": 0.5} for d in (256, 1024)]),
            Sweep(
                "T|D|",
                "T|D|",
                [{"d": 256, "n": 200, "epochs": e, "noise": 0.0} for e in (4, 8)],
            ),
            Sweep("U", "U", [{"d": 256, "n": 300, "epochs": 2, "noise": p} for p in (0.0, 0.5)]),
        ]
    return [
        Sweep(
            "d",
            "d (n = 3000, T = 1, random labels)",
            [
                {"d": d, "n": 3000, "epochs": 1, "noise": 0.5}
                for d in (512, 1024, 2048, 4096, 8192, 16384, 32768)
            ],
        ),
        Sweep(
            "T|D|",
            "T|D| (|D| = 4000, d = 256, separable, T = 4..64)",
            # d small enough that the naive voted perceptron's T|D| models fit in memory
            # at 256,000 examples, so that the cheap strategies' times are milliseconds,
            # well above the fixed cost of a call.
            [{"d": 256, "n": 4000, "epochs": e, "noise": 0.0} for e in (4, 8, 16, 32, 64)],
        ),
        Sweep(
            "U",
            "U (|D| = 4000, T = 8, d = 1024, label noise 0..0.5)",
            [
                {"d": 1024, "n": 4000, "epochs": 8, "noise": p}
                for p in (0.0, 0.01, 0.03, 0.1, 0.2, 0.5)
            ],
        ),
    ]


def make_data(d: int, n: int, noise: float, seed: int = 0) -> tuple[sp.csr_matrix, np.ndarray]:
    """``n`` rows of ``NNZ`` distinct features of value 1 among ``d``. Labels: random
    (``noise == 0.5``), or the sign of a random hyperplane, keeping only examples at a
    margin of at least 1 from it (separable), each flipped with probability ``noise``."""
    rng = np.random.RandomState(seed)
    w = rng.normal(size=d)
    rows: list[np.ndarray] = []
    while len(rows) < n:
        features = np.unique(rng.randint(d, size=NNZ + 8))[:NNZ]
        if features.size < NNZ:
            continue
        if noise < 0.5 and abs(w[features].sum()) < 1.0:
            continue  # inside the margin
        rows.append(features)
    indices = np.concatenate(rows).astype(np.int32)
    indptr = np.arange(0, NNZ * (n + 1), NNZ, dtype=np.int32)
    X = sp.csr_matrix((np.ones(indices.size), indices, indptr), shape=(n, d))
    if noise >= 0.5:
        return X, rng.randint(2, size=n)
    y = (np.asarray(X @ w) > 0).astype(int)
    flip = rng.uniform(size=n) < noise
    return X, np.where(flip, 1 - y, y)


# The table's formulas with unit constants, of (N = T|D|, d, U, nnz).
Formula = Callable[[float, float, float, float], float]
TIME: dict[str, Formula] = {
    "vanilla": lambda N, d, U, k: U * k + d,
    "voted_naive": lambda N, d, U, k: N * d,
    "voted_improved": lambda N, d, U, k: U * d,
    "averaged_naive": lambda N, d, U, k: N * d,
    "averaged_improved": lambda N, d, U, k: U * d,
    "averaged_delta": lambda N, d, U, k: U * k + d,
    "averaged_fastest": lambda N, d, U, k: U * k + d,
}
SPACE: dict[str, Formula] = {
    "vanilla": lambda N, d, U, k: d,
    "voted_naive": lambda N, d, U, k: N * d,
    "voted_improved": lambda N, d, U, k: U * d,
    "averaged_naive": lambda N, d, U, k: d,
    "averaged_improved": lambda N, d, U, k: U * d,
    "averaged_delta": lambda N, d, U, k: d + U * k,
    "averaged_fastest": lambda N, d, U, k: d,
}


def scoring(N: float, d: float, U: float, k: float) -> float:
    """What every strategy pays and the table leaves out: scoring each example."""
    return N * k


# The per-update and per-example work alone, the table's "+ d" left out: that term is
# one vectorised pass over the weights (allocation, final division), whose constant is
# tiny next to the updates' and the scoring's.
WITHOUT_D: dict[str, Formula] = {
    name: (lambda N, d, U, k: U * k + N * k)
    for name in ("vanilla", "averaged_delta", "averaged_fastest")
}
# Storage beyond this is fresh memory from the system at each call (first-touch page
# faults, no cache reuse), which costs more per byte than the small sizes' warm memory.
WARM_BYTES = 32 * 2**20


@dataclass
class Point:
    N: int
    d: int
    U: int
    seconds: dict[str, float] = field(default_factory=dict)
    stored: dict[str, int] = field(default_factory=dict)
    peak: dict[str, int] = field(default_factory=dict)

    def x(self, factor: str) -> float:
        return {"d": self.d, "T|D|": self.N, "U": self.U}[factor]


def _release_memory() -> None:
    """Hand freed memory back to the system (glibc's ``malloc_trim``), so that every
    timing starts from the same allocator state: without it a strategy's large storage
    came from pages another strategy had just freed, or fresh from the system, depending
    on what ran before it (measured: the naive voted perceptron 52-94 ms at one size in
    the sweep, 77 ms whenever timed alone)."""
    gc.collect()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def timed(strategy: str, X: sp.csr_matrix, y: np.ndarray, epochs: int, min_time: float) -> float:
    """Seconds of one training, averaged over as many calls as fill ``min_time`` (the
    cheap strategies take well under a millisecond: one call would time noise)."""
    _release_memory()
    total, calls = 0.0, 0
    while total < min_time and calls < 1000:
        total += train_strategy(strategy, X, y, max_epochs=epochs, random_state=0).train_seconds
        calls += 1
    return total / calls


def measure(sweep: Sweep, repeats: int, min_time: float) -> list[Point]:
    points = []
    for setting in sweep.settings:
        X, y = make_data(int(setting["d"]), int(setting["n"]), setting["noise"])
        epochs = int(setting["epochs"])
        point: Point | None = None
        for strategy in STRATEGIES:
            times = [timed(strategy, X, y, epochs, min_time) for _ in range(repeats)]
            tracemalloc.start()
            fit = train_strategy(strategy, X, y, max_epochs=epochs, random_state=0)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            if point is None:
                point = Point(N=fit.n_examples, d=X.shape[1], U=fit.n_updates)
            assert fit.n_updates == point.U, "every strategy makes the same updates"
            # The fastest repeat, as timeit reports: interference on a shared machine
            # (other processes, the kernel's page handling) only ever adds time.
            point.seconds[strategy] = min(times)
            point.stored[strategy] = fit.stored_bytes
            point.peak[strategy] = peak
            del fit
        assert point is not None
        points.append(point)
        print(
            f"  {sweep.factor}: T|D|={point.N} d={point.d} U={point.U}  "
            + " ".join(f"{s}={point.seconds[s] * 1e3:.2f}ms" for s in STRATEGIES),
            flush=True,
        )
    return points


def slope(x: list[float], y: list[float]) -> float:
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


@dataclass
class Fit:
    """Measured and predicted slopes of one quantity of one strategy in one factor."""

    measured: float
    table: float
    with_scoring: float  # time only: the table's formula plus the scoring term
    without_d: float | None  # time only: updates and scoring, the "+ d" left out
    fitted: tuple[float, str] | None  # time only: slope of the fitted lower-order model
    last: float  # measured slope between the two largest points
    bytes_range: tuple[int, int]  # stored bytes at the smallest and the largest point

    @property
    def off(self) -> bool:
        return abs(self.measured - self.table) > TOLERANCE


def fitted_model(
    points: list[Point], strategy: str, x: list[float], y: list[float]
) -> tuple[float, str] | None:
    """``time ≈ a·table + b·T|D| nnz + c`` fitted with non-negative constants (least
    squares on relative errors): the table's term plus the two costs it leaves out, the
    scoring of every example and a fixed cost per call. Returns the slope of the fitted
    model at the points and its constants, or None when the fit is poor (residuals
    above 25 %) or when fewer than five points leave it no test: then it explains nothing."""
    if len(points) < 5:
        return None
    columns = np.array(
        [[TIME[strategy](p.N, p.d, p.U, NNZ), scoring(p.N, p.d, p.U, NNZ), 1.0] for p in points]
    )
    target = np.asarray(y)
    weights = 1.0 / target  # relative errors: every point counts alike
    scale = columns.max(axis=0)
    coefficients, _ = nnls(columns / scale * weights[:, np.newaxis], np.ones_like(target))
    coefficients = coefficients / scale
    model = columns @ coefficients
    if not np.all(model > 0) or np.max(np.abs(model / target - 1.0)) > 0.25:
        return None
    a, b, c = coefficients
    text = f"{a * 1e9:.2g} ns × table + {b * 1e9:.2g} ns × T|D| nnz + {c * 1e3:.2g} ms"
    return slope(x, list(model)), text


def fits(points: list[Point], factor: str, strategy: str, quantity: str) -> Fit:
    x = [p.x(factor) for p in points]
    values = {"time": [p.seconds[strategy] for p in points]}
    values["space"] = [float(p.stored[strategy]) for p in points]
    values["peak"] = [float(p.peak[strategy]) for p in points]
    formula = TIME[strategy] if quantity == "time" else SPACE[strategy]
    table = [formula(p.N, p.d, p.U, NNZ) for p in points]
    plus = [t + scoring(p.N, p.d, p.U, NNZ) for t, p in zip(table, points, strict=True)]
    y = values[quantity]
    without_d = None
    if quantity == "time" and strategy in WITHOUT_D:
        without_d = slope(x, [WITHOUT_D[strategy](p.N, p.d, p.U, NNZ) for p in points])
    return Fit(
        measured=slope(x, y),
        table=slope(x, table),
        with_scoring=slope(x, plus) if quantity == "time" else slope(x, table),
        without_d=without_d,
        fitted=fitted_model(points, strategy, x, y) if quantity == "time" else None,
        last=slope(x[-2:], y[-2:]),
        bytes_range=(points[0].stored[strategy], points[-1].stored[strategy]),
    )


def explain(fit: Fit, quantity: str) -> str:
    """Why a measured slope is more than 0.15 from the table's: the first rule that
    accounts for it, or a flag saying none does."""
    if quantity == "time":
        # Fuller cost models than the table's, the closest one if it is within tolerance.
        models = [
            (
                fit.with_scoring,
                "the O(T|D| nnz) scoring of every example, which the table's time leaves "
                "out and every strategy pays, dominates: table + scoring predicts "
                f"{fit.with_scoring:.2f}",
            )
        ]
        if fit.without_d is not None:
            models.append(
                (
                    fit.without_d,
                    "the table's + d is one vectorised pass over the weights, tiny next to "
                    "the U nnz updates and the T|D| nnz scoring, which alone predict "
                    f"{fit.without_d:.2f}",
                )
            )
        distance, text = min((abs(fit.measured - p), t) for p, t in models)
        if distance <= TOLERANCE:
            return text
        small, large = fit.bytes_range
        if fit.measured > fit.table + TOLERANCE and large > max(WARM_BYTES, 2 * small):
            return (
                f"the storage grows from {small / 2**20:.1f} MiB to {large / 2**20:.0f} MiB: "
                "beyond the caches and the allocator's reused memory every call writes "
                "fresh pages from the system (a fault on first touch), so a byte costs more "
                "at the large sizes than at the small ones"
            )
    if fit.fitted is not None and abs(fit.measured - fit.fitted[0]) <= TOLERANCE:
        return (
            "the costs the table leaves out, fitted: time ≈ "
            f"{fit.fitted[1]} (within 25 % at every point), whose slope is "
            f"{fit.fitted[0]:.2f}: the table's term is not yet the largest at these sizes"
        )
    if abs(fit.last - fit.table) <= TOLERANCE:
        return (
            f"between the two largest points the slope is {fit.last:.2f}, as predicted: "
            "fixed and per-example costs (the call, the loop, scoring) weigh on the "
            "smallest sizes"
        )
    return (
        "NOT EXPLAINED by these rules (timing noise on a loaded machine shows as slopes "
        "that differ between strategies doing the same work): see the raw table"
    )


def cell(text: str) -> str:
    """Text for a Markdown table cell: ``T|D|`` must not split the cell."""
    return text.replace("|", "\\|")


def exponents(row: dict[str, Fit]) -> str:
    return " · ".join(
        f"({f})^{row[f].measured:.2f}" if f == "T|D|" else f"{f}^{row[f].measured:.2f}" for f in row
    )


def predicted(row: dict[str, Fit], attribute: str = "table") -> str:
    return ", ".join(f"{getattr(row[f], attribute):.2f}" for f in row)


def analyse(results: dict[str, list[Point]]) -> dict[str, dict[str, dict[str, Fit]]]:
    """``out[quantity][strategy][factor]``."""
    return {
        quantity: {
            strategy: {
                factor: fits(points, factor, strategy, quantity)
                for factor, points in results.items()
            }
            for strategy in STRATEGIES
        }
        for quantity in ("time", "space", "peak")
    }


def summary_lines(analysis: dict[str, dict[str, dict[str, Fit]]]) -> list[str]:
    lines = []
    for strategy in STRATEGIES:
        space, time_ = COST_TABLE[strategy]
        lines.append(
            f"{strategy}: time ∝ {exponents(analysis['time'][strategy])}, predicted {time_}; "
            f"space ∝ {exponents(analysis['space'][strategy])}, predicted {space}"
        )
    return lines


def build_section(
    command: str,
    started: _dt.datetime,
    seconds: float,
    repeats: int,
    min_time: float,
    all_sweeps: list[Sweep],
    results: dict[str, list[Point]],
    analysis: dict[str, dict[str, dict[str, Fit]]],
    figure: Path | None,
) -> str:
    start, end = _report.markers(NAME)
    factors = list(results)
    parts = [
        start,
        "## The cost table of averaging and voting, measured (`bench_complexity.py`)",
        "",
        f"- Command: `{command}`",
        f"- Run: {started:%Y-%m-%d %H:%M %Z}, {seconds:.0f} s; fastest of {repeats} timings, "
        f"each the mean of as many calls as fill {min_time} s",
        f"- Machine: {_report.machine_info()}",
        f"- Data: synthetic CSR, {NNZ} features of value 1 per example, binary labels. "
        "Sweeps: " + "; ".join(s.label for s in all_sweeps) + ".",
        "- Time: the compiled training of `perceptrons.complexity.train_strategy` "
        "(`train_seconds`, final sums included). Space: `stored_bytes`, what the strategy "
        "stores (exact). Peak: `tracemalloc` peak of one call (adds the input check, the "
        "visiting order of 8 T|D| bytes and the doubling copies of grown buffers).",
        "- Predicted slope: the slope, at the measured points, of the table's formula with "
        "unit constants (so `O(U nnz + d)` predicts a slope between 0 and 1 in `d`); "
        "'+ scoring' adds the `O(T|D| nnz)` scoring of every example that the table's time "
        "leaves out.",
        "",
        "```text",
        *summary_lines(analysis),
        "```",
        "",
    ]
    header = ["strategy", "table (space, time)"]
    header += [f"time: {cell(f)}" for f in factors] + [f"space: {cell(f)}" for f in factors]
    header += [f"peak: {cell(f)}" for f in factors]
    rows = []
    for strategy in STRATEGIES:
        row = [strategy, cell(", ".join(COST_TABLE[strategy]))]
        for quantity in ("time", "space"):
            for factor in factors:
                fit = analysis[quantity][strategy][factor]
                extra = f" (+scoring {fit.with_scoring:.2f})" if quantity == "time" else ""
                row.append(f"**{fit.measured:.2f}** vs {fit.table:.2f}{extra}")
        row += [f"{analysis['peak'][strategy][f].measured:.2f}" for f in factors]
        rows.append(row)
    parts += [
        "Measured slope **bold** vs predicted:",
        "",
        _report.md_table(header, rows),
        "",
    ]
    deviations = []
    for quantity in ("time", "space"):
        for strategy in STRATEGIES:
            for factor in factors:
                fit = analysis[quantity][strategy][factor]
                if fit.off:
                    why = explain(fit, quantity)
                    deviations.append(
                        f"- {strategy}, {quantity} in {factor}: measured {fit.measured:.2f}, "
                        f"predicted {fit.table:.2f}. {why}."
                    )
    parts += [f"### Slopes more than {TOLERANCE} from the prediction", ""]
    parts += deviations or ["- none"]
    parts += ["", "### Raw measurements", ""]
    for factor, points in results.items():
        header = [cell("T|D|"), "d", "U"] + [f"{s} ms / KiB" for s in STRATEGIES]
        rows = [
            [str(p.N), str(p.d), str(p.U)]
            + [f"{p.seconds[s] * 1e3:.2f} / {p.stored[s] / 1024:.0f}" for s in STRATEGIES]
            for p in points
        ]
        parts += [f"Varying {factor}:", "", _report.md_table(header, rows), ""]
    if figure is not None:
        parts += [f"![cost table measured]({figure})", ""]
    parts.append(end)
    return "\n".join(parts)


def plot(results: dict[str, list[Point]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    factors = list(results)
    figure, axes = plt.subplots(2, len(factors), figsize=(5 * len(factors), 8), squeeze=False)
    colors = plt.get_cmap("tab10")
    for column, factor in enumerate(factors):
        points = results[factor]
        x = [p.x(factor) for p in points]
        for i, strategy in enumerate(STRATEGIES):
            color = colors(i)
            axes[0, column].loglog(
                x, [p.seconds[strategy] for p in points], "o-", color=color, label=strategy
            )
            axes[1, column].loglog(x, [p.stored[strategy] for p in points], "o-", color=color)
            axes[1, column].loglog(x, [p.peak[strategy] for p in points], ":", color=color)
        axes[0, column].set_title(f"varying {factor}")
        axes[1, column].set_xlabel(factor)
    axes[0, 0].set_ylabel("training time (s)")
    axes[1, 0].set_ylabel("stored bytes (solid), traced peak (dotted)")
    axes[0, 0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--repeats", type=int, default=5, help="timing repeats (the fastest is kept)"
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a seconds-long check")
    parser.add_argument(
        "--min-time",
        type=float,
        default=0.05,
        help="one timing averages as many calls as fill this (default: %(default)s s)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help="Markdown file whose bench_complexity section is replaced (default: %(default)s)",
    )
    parser.add_argument(
        "--figure", type=Path, default=DEFAULT_FIGURE, help="PNG (default: %(default)s)"
    )
    parser.add_argument("--no-figure", action="store_true", help="skip the figure")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    if args.quick:
        args.min_time = min(args.min_time, 0.005)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = shlex.join(
        ["python", *(sys.argv if argv is None else ["bench_complexity.py", *argv])]
    )
    started = _dt.datetime.now().astimezone()
    began = time.perf_counter()
    print(f"{NAME}: {_report.machine_info()}", flush=True)
    # Compile every kernel on a tiny problem of the same types first: not timed.
    X, y = make_data(64, 20, 0.5)
    for strategy in STRATEGIES:
        train_strategy(strategy, X, y, max_epochs=1, random_state=0)
    all_sweeps = sweeps(args.quick)
    results = {}
    for sweep in all_sweeps:
        print(f"== varying {sweep.label}", flush=True)
        results[sweep.factor] = measure(sweep, args.repeats, args.min_time)
    analysis = analyse(results)
    print("\n" + "\n".join(summary_lines(analysis)), flush=True)
    figure = None
    if not args.no_figure:
        plot(results, args.figure)
        print(f"wrote {args.figure}", flush=True)
        # The report links the figure relative to itself.
        figure = Path(os.path.relpath(args.figure.resolve(), args.output.resolve().parent))
    section = build_section(
        command,
        started,
        time.perf_counter() - began,
        args.repeats,
        args.min_time,
        all_sweeps,
        results,
        analysis,
        figure,
    )
    _report.write_section(args.output, section, NAME)
    print(f"wrote section to {args.output}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
