"""Sparse online learning beside SOL and Vowpal Wabbit: accuracy against nonzero weights.

Issue 41's targets, measured on 20 Newsgroups (TF-IDF, sublinear tf), a9a, MNIST
(pixels / 255) and the sentiment set (counts), featurized and written once to
``--workdir`` as svmlight files by ``bench_adaptive.prepare`` (the training rows in one
fixed shuffled order, seed 0; labels -1/+1 or 0..K-1, as SOL reads them):

- **curves**: every sparse rule of :data:`SPARSE` that the rule table has (the others
  are skipped with a note), at each L1 strength of its log grid or each feature budget
  ``B`` (fractions of the data set's features), trained for **one pass** over the
  training file in its order, as SOL's ``lsol_c -p 1`` reads it
  (``Perceptron(update=RULE, update_params={...}, max_epochs=1, shuffle=False,
  fit_intercept=False)``: SOL's model learns no bias at its defaults): test accuracy,
  the model's nonzero weights (``coef_`` entries != 0) and the in-memory fit time;
  SOL's same rule with the same constants on the
  same files (``sol_train -a ALGO -c K -p 1 --params 'lambda=...;...' FILE MODEL``, SOL's
  training tool beside ``lsol_c``, which saves the model after the final truncation
  that ``lsol_c``'s own training leaves out; ``lsol_c -t test``; nonzeros counted in the
  model file's weight vectors, its bias slot 0 not counted); and Vowpal Wabbit's
  truncated gradient ``--l1`` and ``--ftrl --l1`` (one pass, hinge loss, ``--binary`` or
  ``--oaa K``; nonzeros counted in ``--readable_model``, its constant not counted, and
  ``--l1``'s weights counted above the gravity VW truncates them by when it predicts);
- **matched accuracy**: for each rule and data set, SOL's accuracy at each of our points'
  nonzero counts, interpolated linearly in log(1 + nonzeros) between SOL's two nearest
  points (a point of ours outside SOL's range is matched only when it is within 5% of
  SOL's end point), and our accuracy minus it: the target is >= 0 at every matched
  point;
- **20 Newsgroups at 10% of the dense model's nonzeros**: the best dense rule (every rule
  of the table but the sparse ones, at defaults that penalize nothing, last weights and
  averaged, one pass, the same protocol), and each sparse rule's accuracy at
  a tenth of that model's nonzeros (interpolated on its curve as above): at most 1
  point lost; the model file (``save(model, resumable=False)``) and the memory the
  loaded model holds (``tracemalloc``: the bytes still allocated once ``load`` returns,
  as ``bench_model_size.py`` measures it) of the grid point nearest that count, against
  the dense model's: at most 15%;
- **fit time**: each L1 rule with its default ``l1`` (the grid's middle value when the
  default is 0) against the same rule with ``l1=0``, on a9a and 20 Newsgroups, medians
  of ``--repeats`` interleaved fits: at most 1.5x.

A plot per data set (accuracy against nonzeros, log scale; ours solid, SOL dashed, VW
dotted) is written to ``--plots`` when matplotlib is importable. SOL (Wu, Hoi et al.
2016) and VW are yardsticks only: give the path of an ``lsol_c`` built outside the
repository with ``--sol``; VW runs as ``python -m vowpalwabbit`` when it is importable.
Either's rows are skipped with a message otherwise. Usage::

    python benchmarks/bench_sparse.py [--sol /path/to/lsol_c] [--datasets 20news,a9a,...]
        [--rules stg,fofs,...] [--repeats 3] [--workdir /tmp/perceptrons-bench-sparse]
        [--plots benchmarks] [--output benchmarks/RESULTS.md] [--quick]

Without ``--output`` the section is printed.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.util
import itertools
import math
import os
import re
import shlex
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import _report
from bench_adaptive import DATASETS, Files, _sol_accuracy, prepare
from bench_stream import _child
from bench_vw import VW, _vw_accuracy

SECTION = "bench_sparse"
#: SOL's protocol for these rules: one pass over the file in its order.
PASSES = 1
#: Matched nonzero counts: a point outside the peer's range counts within this.
MATCH_TOLERANCE = 0.05
#: The issue's targets.
TARGET_DENSE_SHARE = 0.10  # of the dense model's nonzeros
TARGET_DENSE_LOSS = 1.0  # points of accuracy
TARGET_SIZE_SHARE = 0.15  # file and loaded memory against the dense model's
TARGET_FIT_RATIO = 1.5  # an L1 rule's fit / the same rule's with l1 = 0
TIMED_SETS = ("a9a", "20news")
#: MNIST's training rows (the first of the shuffled order; its test set whole): a pass
#: over all 60,000 dense rows costs each of the some 130 models seconds, which the
#: 20-minute run cannot afford on two cores.
MNIST_ROWS = 20_000
#: The L1 strengths (every L1 rule, SOL's lambda the same) and the budgets as fractions
#: of the data set's features (SOL's B the same).
L1_GRID = (1e-5, 1e-4, 1e-3, 1e-2, 1e-1)
#: TF-IDF values are small (20 Newsgroups' rows have unit norm): weaker strengths. The
#: grids span nearly dense to nearly empty one-pass models of ada-fobos and ada-rda.
L1_GRIDS = {"20news": (1e-6, 1e-5, 3e-5, 1e-4, 1e-3)}
#: FTRL's l1 applies to the summed gradients z, a larger scale (VW's --ftrl the same).
FTRL_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)
BUDGET_SHARES = (0.01, 0.03, 0.1, 0.3, 0.6)
QUICK_L1_GRID = (1e-4, 1e-2)
QUICK_FTRL_GRID = (0.1, 10.0)
QUICK_BUDGET_SHARES = (0.1, 0.5)
#: Vowpal Wabbit's runs: its --l1 (truncated gradient on its default adaptive,
#: normalized updates) and FTRL-Proximal (--ftrl, its alpha 0.005 and beta 0.1), each
#: on a log grid of its own (VW's l1 is per example for --l1, on the summed gradients
#: for --ftrl: the scales differ).
VW_RUNS: dict[str, tuple[list[str], tuple[float, ...]]] = {
    "vw --l1": ([], (1e-6, 1e-5, 3e-5, 1e-4, 1e-3)),
    "vw --ftrl --l1": (["--ftrl"], FTRL_GRID),
}
VW_LOSS = "hinge"  # the loss of every rule here
#: VW's constant feature (its hash, before the mask), not counted as a weight.
VW_CONSTANT = 11650396


#: Where SOL's implementations (src/sol/model/olm/*.cc, regularizer.cc) differ from the
#: papers in ways that bear on the comparison.
SOL_DIFFERENCES = (
    "SOL learns no bias at its defaults (`bias_eta=0`): ours are fitted without an "
    "intercept here too (`fit_intercept=False`), the same model class. With our default "
    "intercept, one pass over 20 Newsgroups' TF-IDF (rows of norm 1) loses about 5 "
    "points: the constant feature's weights take far larger steps than the words'. "
    "SOL's weights are float32, ours float64.",
    "SOL's lazy L1 (stg, fobos-l1, ada-fobos-l1) catches a weight up by the steps it "
    "missed times the *current* step (eta_t lambda, or over the current H): an "
    "approximation of the eager form's sum of each round's own step, which ours applies "
    "exactly (per-round amounts accumulated).",
    "SOL's `EndTrain` (run by `sol_train` before it saves) also zeroes every weight under "
    "1e-6 in magnitude for its L1 rules; ours keep them: a few more nonzeros.",
    "SOL's `pet` is OGD's step (eta/sqrt(t), on every hinge loss > 0) then the truncation; "
    "the paper's PET (Wang et al. 2014) steps eta on mistakes only, as ours. SOL's `fofs` "
    "projects each class on the ball of radius 1/sqrt(lambda) and learns no bias.",
)


@dataclass(frozen=True)
class Sparse:
    """One sparse rule: our name, what sets its sparsity (``"l1"``, an L1 strength, or
    ``"B"``, a feature budget), SOL's ``-a`` name and its name for that knob, our
    constants that SOL takes too (ours -> SOL's name: both run at our defaults), the
    table entry that trains it while the rule has no entry of its own (with the knob
    as its constant), the VW run it is compared with, and whether its L1 strength is on
    FTRL's scale (:data:`FTRL_GRID`)."""

    name: str
    knob: str
    sol: str | None = None
    sol_knob: str = "lambda"
    sol_constants: dict[str, str] = field(default_factory=dict)
    stand_in: str | None = None
    vw: str | None = None
    ftrl_scale: bool = False


_ETA = {"eta": "eta", "power_t": "power_t"}
_ADA = {"eta": "eta", "delta": "delta"}
#: The sparse rules of issue 41 and their peers.
SPARSE: tuple[Sparse, ...] = (
    Sparse("stg", "l1", "stg", "lambda", {**_ETA, "k": "k"}, vw="vw --l1"),
    Sparse("fobos-l1", "l1", "fobos-l1", "lambda", _ETA),
    Sparse("rda-l1", "l1", "rda-l1", "lambda", {"sigma": "sigma"}),
    # SOL's erda-l1 calls Xiao's gamma "sigma" and rho "rou".
    Sparse("erda-l1", "l1", "erda-l1", "lambda", {"gamma": "sigma", "rho": "rou"}),
    Sparse("ada-fobos-l1", "l1", "ada-fobos-l1", "lambda", _ADA, stand_in="ada-fobos"),
    Sparse("ada-rda-l1", "l1", "ada-rda-l1", "lambda", _ADA, stand_in="ada-rda"),
    Sparse("ftrl", "l1", vw="vw --ftrl --l1", ftrl_scale=True),
    Sparse("pet", "B", "pet", "B", {"eta": "eta"}),
    Sparse("fofs", "B", "fofs", "B", {"eta": "eta", "l2": "lambda"}),
    Sparse("sofs", "B", "sofs", "B", {"r": "r"}),
    Sparse("adafobos-ofs", "B", "adafobos-ofs", "B", _ADA),
    Sparse("adarda-ofs", "B", "adarda-ofs", "B", _ADA),
)


@dataclass
class Point:
    """One model: the knob's value, test accuracy, nonzero weights, fit seconds."""

    value: float
    accuracy: float
    nonzeros: int
    seconds: float


def _table() -> dict:
    from perceptrons.linear._update_rules import RULES

    return RULES


def resolve(spec: Sparse, table: dict) -> str | None:
    """The table entry that trains ``spec`` (its own, else its stand-in), or None."""
    for name in (spec.name, spec.stand_in):
        if name is not None and name in table and spec.knob in table[name].constants:
            return name
    return None


def grid(spec: Sparse, name: str, n_features: int, quick: bool) -> list[float]:
    """The knob's values for ``spec`` on data set ``name``."""
    if spec.knob == "l1" and spec.ftrl_scale:
        return list(QUICK_FTRL_GRID if quick else FTRL_GRID)
    if spec.knob == "l1":
        return list(QUICK_L1_GRID if quick else L1_GRIDS.get(name, L1_GRID))
    shares = QUICK_BUDGET_SHARES if quick else BUDGET_SHARES
    return sorted({float(max(1, round(share * n_features))) for share in shares})


def _knob_value(spec: Sparse, value: float) -> float | int:
    return int(value) if spec.knob == "B" else value


# --------------------------------------------------------------------------- ours


def _nonzeros(coef) -> int:
    return int(coef.count_nonzero() if sp.issparse(coef) else np.count_nonzero(coef))


def _estimator(rule: str, params: dict, averaged: bool = False, epochs: int = PASSES):
    from perceptrons import AveragedPerceptron, Perceptron

    kind = AveragedPerceptron if averaged else Perceptron
    # No intercept: SOL learns no bias at its defaults (SOL_DIFFERENCES).
    return kind(
        update=rule,
        update_params=params,
        max_epochs=epochs,
        shuffle=False,
        random_state=0,
        fit_intercept=False,
    )


def _fit(estimator, X, y) -> float:
    started = time.perf_counter()
    estimator.fit(X, y)
    return time.perf_counter() - started


def _warm(rule: str, params: dict, X, y, averaged: bool = False) -> None:
    """Compile the kernels for this kind of data on a few random rows (a file sorted
    by label would give its first rows a single class)."""
    rows = np.sort(np.random.default_rng(1).permutation(X.shape[0])[:300])
    _fit(_estimator(rule, params, averaged), X[rows], y[rows])


def our_curve(rule: str, spec: Sparse, values: list[float], files: Files) -> list[Point]:
    data = files.data
    _warm(rule, {spec.knob: _knob_value(spec, values[0])}, data.X_train, data.y_train)
    points = []
    for value in values:
        estimator = _estimator(rule, {spec.knob: _knob_value(spec, value)})
        seconds = _fit(estimator, data.X_train, data.y_train)
        accuracy = float(estimator.score(data.X_test, data.y_test))
        points.append(Point(value, accuracy, _nonzeros(estimator.coef_), seconds))
    return points


def _sol_params(spec: Sparse, rule, value: float) -> str:
    """SOL's --params: the knob, and our defaults of the constants SOL also has."""
    params = [f"{spec.sol_knob}={_knob_value(spec, value):g}"]
    for ours, theirs in spec.sol_constants.items():
        if ours in rule.constants:
            params.append(f"{theirs}={rule.constants[ours].default:g}")
    return ";".join(params)


# --------------------------------------------------------------------------- SOL


_WEIGHTS = re.compile(r"weight\[\d+\]:\s*\[([^\]]*)\]")


def sol_nonzeros(model: Path) -> int:
    """The nonzero weights of an ``lsol_c`` model file: its ``weight[c]:`` vectors,
    slot 0 (SOL's bias) not counted."""
    text = model.read_text()
    vectors = _WEIGHTS.findall(text.split("model parameters:", 1)[-1])
    if not vectors:
        raise SystemExit(f"no weight vector in SOL's model file {model}")
    return sum(int(np.count_nonzero(np.array(v.split(), dtype=float)[1:])) for v in vectors)


def sol_trainer(sol: str) -> str | None:
    """SOL's ``sol_train`` beside ``lsol_c``, or None.

    ``lsol_c`` saves the model as the last example left it: the lazy rules' pending
    truncation (SOL's ``EndTrain``: stg, fobos-l1, the RDA and AdaGrad L1 rules) is not
    applied to the file, whose every weight seen stays nonzero, and ``lsol_c -t test``
    tests those weights. ``sol_train``, SOL's training tool that prints the model's
    sparsity, finalizes the model before it saves it: the model SOL's papers report."""
    trainer = Path(sol).with_name("sol_train")
    return str(trainer) if trainer.is_file() else None


def sol_curve(sol: str, spec: Sparse, rule, values: list[float], files: Files, work: Path):
    trainer = sol_trainer(sol)
    points = []
    for value in values:
        model = work / f"sol.{files.data.name}.{spec.sol}.{value:g}.model"
        options = ["-a", str(spec.sol), "-c", str(files.n_classes), "-p", str(PASSES)]
        options += ["--params", _sol_params(spec, rule, value)]
        if trainer is not None:
            train = [trainer, *options, str(files.train), str(model)]
        else:
            train = [sol, "-i", str(files.train), *options, "-o", str(model)]
        seconds = _child(train)[0]
        accuracy = _sol_accuracy(sol, model, files.test)
        points.append(Point(value, accuracy, sol_nonzeros(model), seconds))
    return points


# --------------------------------------------------------------------------- VW


def vw_available() -> bool:
    return importlib.util.find_spec("vowpalwabbit") is not None


def _vw_layout(n_features: int, n_classes: int) -> tuple[int, int, int]:
    """(bits, the class bits, the feature index that VW's constant lands on): every
    feature index (1..n_features, shifted past the constant's) gets a slot of its own."""
    shift = 0 if n_classes == 2 else math.ceil(math.log2(n_classes))
    feature_bits = max(18, (n_features + 2).bit_length())
    return feature_bits + shift, shift, VW_CONSTANT % (1 << feature_bits)


def write_vw(files: Files, work: Path) -> dict[str, Path]:
    """The svmlight files as VW text: labels -1/+1 (two classes) or 1..K, feature
    indices as names (VW uses an integer name as its index), those at or past the
    constant's index moved up by one so that no feature shares its weight."""
    _, _, constant = _vw_layout(files.data.X_train.shape[1], files.n_classes)
    paths = {}
    for split, source in (("train", files.train), ("test", files.test)):
        path = work / (source.name + ".vw")
        paths[split] = path
        if path.exists():
            continue
        partial = path.with_suffix(".partial")
        with source.open() as lines, partial.open("w") as out:
            for line in lines:
                label, *features = line.split()
                if files.n_classes > 2:
                    label = str(int(float(label)) + 1)
                moved = []
                for feature in features:
                    index, value = feature.split(":")
                    number = int(index)
                    moved.append(f"{number + (number >= constant)}:{value}")
                out.write(f"{label} | {' '.join(moved)}\n")
        partial.replace(path)
    return paths


def vw_nonzeros(readable: Path, n_features: int, n_classes: int) -> int:
    """The nonzero weights of VW's ``--readable_model``, its constant not counted.

    VW's ``--l1`` (truncated gradient) stores the weights untruncated and truncates
    them by its accumulated gravity (``l1_state`` in the file) when it reads them to
    predict: a weight counts when its magnitude exceeds that (FTRL's is 0)."""
    _, shift, constant = _vw_layout(n_features, n_classes)
    text = readable.read_text()
    gravity = re.search(r"(?m)^l1_state (\S+)$", text)
    threshold = float(gravity.group(1)) if gravity else 0.0
    count = 0
    for match in re.finditer(r"(?m)^(\d+):(\S+)", text):
        if abs(float(match.group(2))) > threshold and int(match.group(1)) >> shift != constant:
            count += 1
    return count


def vw_curve(run: str, files: Files, text: dict[str, Path], work: Path, quick: bool) -> list[Point]:
    extra, values = VW_RUNS[run]
    if quick:
        values = values[1::2][:2]
    bits, _, _ = _vw_layout(files.data.X_train.shape[1], files.n_classes)
    task = ["--binary"] if files.n_classes == 2 else ["--oaa", str(files.n_classes)]
    points = []
    for value in values:
        model, readable = work / "vw.model", work / "vw.readable"
        predictions = work / "vw.pred"
        train = [*VW, "-d", str(text["train"]), *task, *extra, "--l1", f"{value:g}"]
        train += ["--loss_function", VW_LOSS, "-b", str(bits), "--quiet"]
        seconds = _child([*train, "-f", str(model), "--readable_model", str(readable)])[0]
        test = [*VW, "-t", "-i", str(model), "-d", str(text["test"]), "-p", str(predictions)]
        _child([*test, "--quiet"])
        accuracy = _vw_accuracy(predictions, text["test"])
        nonzeros = vw_nonzeros(readable, files.data.X_train.shape[1], files.n_classes)
        points.append(Point(value, accuracy, nonzeros, seconds))
    return points


# --------------------------------------------------------------------------- matching


def at_nonzeros(curve: list[Point], nonzeros: float) -> float:
    """The curve's accuracy at ``nonzeros``: linear in log(1 + nonzeros) (an empty
    model is a point too) between its two nearest points; beyond its ends, its end
    point's when within ``MATCH_TOLERANCE``, else NaN (no match)."""
    points = sorted(curve, key=lambda p: p.nonzeros)
    if not points:
        return float("nan")
    low, high = points[0], points[-1]
    if nonzeros < low.nonzeros:
        close = nonzeros >= (1 - MATCH_TOLERANCE) * low.nonzeros
        return low.accuracy if close else float("nan")
    if nonzeros > high.nonzeros:
        close = nonzeros <= (1 + MATCH_TOLERANCE) * high.nonzeros
        return high.accuracy if close else float("nan")
    for left, right in itertools.pairwise(points):
        if left.nonzeros <= nonzeros <= right.nonzeros:
            if right.nonzeros == left.nonzeros:
                return max(left.accuracy, right.accuracy)
            share = (math.log1p(nonzeros) - math.log1p(left.nonzeros)) / (
                math.log1p(right.nonzeros) - math.log1p(left.nonzeros)
            )
            return left.accuracy + share * (right.accuracy - left.accuracy)
    return float("nan")


def matched(ours: list[Point], peer: list[Point]) -> list[float]:
    """Our accuracy minus the peer's at each of our points the peer's curve reaches."""
    gaps = [p.accuracy - at_nonzeros(peer, p.nonzeros) for p in ours]
    return [gap for gap in gaps if gap == gap]


def _verdict(gaps: list[float]) -> str:
    if not gaps:
        return "no matched point"
    worst, mean = min(gaps), float(np.mean(gaps))
    met = "met" if worst >= 0 else "missed"
    return f"{len(gaps)} matched: mean {100 * mean:+.2f}, worst {100 * worst:+.2f} points: {met}"


# --------------------------------------------------------------------------- 20 Newsgroups


def best_dense(files: Files) -> tuple[str, object, float]:
    """The best dense model on ``files`` (one pass, the same protocol): every rule of
    the table but the sparse ones, at its defaults (those that penalize, none), last
    weights and averaged; ('rule (kind)', the estimator, its accuracy)."""
    data = files.data
    sparse = {spec.name for spec in SPARSE}
    best: tuple[str, object, float] | None = None
    for name, rule in _table().items():
        defaults = {key: constant.default for key, constant in rule.constants.items()}
        if name in sparse or rule.penalized(defaults):
            continue
        for averaged in (False, True):
            try:
                _warm(name, {}, data.X_train, data.y_train, averaged)
                estimator = _estimator(name, {}, averaged)
                _fit(estimator, data.X_train, data.y_train)
            except ValueError as refused:
                print(f"dense {name}: {str(refused).splitlines()[0]}", flush=True)
                continue
            accuracy = float(estimator.score(data.X_test, data.y_test))
            if best is None or accuracy > best[2]:
                kind = "averaged" if averaged else "last weights"
                best = (f"`{name}` ({kind})", estimator, accuracy)
    if best is None:
        raise SystemExit("no dense rule could be fit on 20 Newsgroups")
    return best


def model_size(estimator, work: Path) -> tuple[int, int]:
    """The bytes of ``save(estimator, resumable=False)``'s file and the bytes the
    model loaded from it holds (``bench_model_size``'s ``tracemalloc`` measurement)."""
    from bench_model_size import _measured_load
    from perceptrons import save

    with tempfile.TemporaryDirectory(dir=work) as tmp:
        path = save(estimator, Path(tmp) / "model.npz", resumable=False)
        size = Path(path).stat().st_size
        _, resident, _, _ = _measured_load(Path(path))
    return size, resident


# --------------------------------------------------------------------------- fit time


def fit_ratio(
    rule: str, values: list[float], files: Files, repeats: int
) -> tuple[float, float, float]:
    """(l1, median fit seconds with it, median with l1 = 0): interleaved repeats; l1
    the rule's default, else the middle of its grid ``values``."""
    data = files.data
    default = _table()[rule].constants["l1"].default
    l1 = default if default > 0 else values[len(values) // 2]
    seconds: dict[float, list[float]] = {l1: [], 0.0: []}
    for value in seconds:
        _warm(rule, {"l1": value}, data.X_train, data.y_train)
    for _ in range(repeats):
        for value in seconds:
            seconds[value].append(_fit(_estimator(rule, {"l1": value}), data.X_train, data.y_train))
    return l1, statistics.median(seconds[l1]), statistics.median(seconds[0.0])


# --------------------------------------------------------------------------- plots


def plot(name: str, curves: dict[str, dict[str, list[Point]]], directory: Path) -> Path | None:
    """Accuracy against nonzeros on ``name``: one colour a rule, ours solid, SOL dashed,
    VW dotted; None when matplotlib is absent."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    figure, axes = plt.subplots(figsize=(8, 5.5))
    colours = plt.get_cmap("tab20")  # even indices first: distinct hues, then their shades
    styles = {"ours": "-", "SOL": "--", "VW": ":"}
    for index, (label, by_system) in enumerate(curves.items()):
        for system, points in by_system.items():
            shown = sorted((p for p in points if p.nonzeros > 0), key=lambda p: p.nonzeros)
            if not shown:
                continue
            axes.plot(
                [p.nonzeros for p in shown],
                [p.accuracy for p in shown],
                styles[system],
                marker="o",
                markersize=3,
                color=colours((2 * index + index // 10) % 20),
                label=f"{label} ({system})",
            )
    axes.set_xscale("log")
    axes.set_xlabel("nonzero weights")
    axes.set_ylabel("test accuracy")
    axes.set_title(f"{name}: one pass, accuracy against nonzero weights")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=6, ncol=2)
    figure.tight_layout()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"sparse_{name}.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


# --------------------------------------------------------------------------- main


def _fmt(value: float, spec: str = ".4f") -> str:
    return "-" if value != value else format(value, spec)


def _value(spec: Sparse, value: float) -> str:
    return f"B={int(value)}" if spec.knob == "B" else f"l1={value:g}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sol", default=None, help="path of SOL's lsol_c binary")
    parser.add_argument(
        "--datasets", default=",".join(DATASETS), help=f"comma-separated, of {', '.join(DATASETS)}"
    )
    parser.add_argument(
        "--rules", default=None, help="comma-separated (default: every rule of SPARSE)"
    )
    parser.add_argument("--repeats", type=int, default=None, help="fits per median (3; quick: 1)")
    parser.add_argument(
        "--mnist-rows",
        type=int,
        default=MNIST_ROWS,
        help=f"MNIST's training rows ({MNIST_ROWS:,}; 0: all 60,000)",
    )
    parser.add_argument("--workdir", default="/tmp/perceptrons-bench-sparse")
    parser.add_argument(
        "--plots", default=None, help="folder of the PNG plots (benchmarks/; quick: --workdir)"
    )
    parser.add_argument("--output", default=None, help="RESULTS.md to update (default: print)")
    parser.add_argument("--quick", action="store_true", help="small subsets, a tiny grid")
    args = parser.parse_args(argv)
    command = "python " + shlex.join([sys.argv[0], *(argv if argv is not None else sys.argv[1:])])
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    clock = time.perf_counter()
    specs = {spec.name: spec for spec in SPARSE}
    wanted = list(specs) if args.rules is None else [r.strip() for r in args.rules.split(",")]
    unknown = [name for name in wanted if name not in specs]
    if unknown:
        parser.error(f"unknown rule(s) {', '.join(unknown)}; the sparse rules: {', '.join(specs)}")
    names = [name.strip() for name in args.datasets.split(",")]
    if any(name not in DATASETS for name in names):
        parser.error(f"--datasets: of {', '.join(DATASETS)}")
    if args.sol and not Path(args.sol).is_file():
        parser.error(f"--sol {args.sol}: no such file")
    repeats = args.repeats or (1 if args.quick else 3)
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    plots = Path(args.plots) if args.plots else (work if args.quick else Path(__file__).parent)
    notes: list[str] = []

    def note(line: str) -> None:
        print(line, flush=True)
        notes.append(line)

    table = _table()
    rules: dict[str, str] = {}  # our spec -> the table entry that trains it
    for name in wanted:
        entry = resolve(specs[name], table)
        if entry is None:
            note(f"- `{name}`: not in the rule table: skipped.")
        else:
            rules[name] = entry
            if entry != name:
                note(f"- `{name}`: not in the rule table yet: measured as `{entry}` with `l1`.")
    if not args.sol:
        note("- SOL: no --sol given; its rows are skipped.")
    elif sol_trainer(args.sol) is None:
        note(
            "- SOL: no `sol_train` beside `lsol_c`: its models are `lsol_c`'s, saved before "
            "the lazy rules' final truncation (their nonzeros are overcounted)."
        )
    use_vw = vw_available()
    if not use_vw:
        note("- VW: `vowpalwabbit` is not importable; its rows are skipped.")
    load_before = os.getloadavg()[0]

    curve_rows: list[list[str]] = []
    match_rows: list[list[str]] = []
    dense_rows: list[list[str]] = []
    time_rows: list[list[str]] = []
    figures: list[str] = []
    for name in names:
        rows = (args.mnist_rows or None) if name == "mnist" else None
        files = prepare(name, work, args.quick, rows)
        if files is None:
            note(f"- {name}: its files are absent: skipped.")
            continue
        data = files.data
        n_features = data.X_train.shape[1]
        print(f"{name}: {data.describe()}", flush=True)
        if rows is not None and not args.quick:
            note(
                f"- {name}: the first {rows:,} training rows of the shuffled order, "
                "its whole test set."
            )
        curves: dict[str, dict[str, list[Point]]] = {}
        for spec_name, rule in rules.items():
            spec = specs[spec_name]
            values = grid(spec, name, n_features, args.quick)
            try:
                ours = our_curve(rule, spec, values, files)
            except ValueError as refused:
                note(f"- `{spec_name}` on {name}: refused: {str(refused).splitlines()[0]}")
                continue
            curves[spec_name] = {"ours": ours}
            sol: list[Point] = []
            if args.sol and spec.sol:
                try:
                    sol = sol_curve(args.sol, spec, table[rule], values, files, work)
                    curves[spec_name]["SOL"] = sol
                except SystemExit as failure:
                    note(f"- SOL `{spec.sol}` on {name} failed: {str(failure).splitlines()[0]}")
            for index, point in enumerate(ours):
                peer = sol[index] if index < len(sol) else None
                curve_rows.append(
                    [
                        name,
                        f"`{spec_name}`",
                        _value(spec, point.value),
                        f"{point.accuracy:.4f}",
                        f"{point.nonzeros:,}",
                        f"{point.seconds:.2f}",
                        _fmt(peer.accuracy) if peer else "-",
                        f"{peer.nonzeros:,}" if peer else "-",
                        f"{peer.seconds:.2f}" if peer else "-",
                    ]
                )
                print(" | ".join(curve_rows[-1]), flush=True)
            if spec.sol is None:
                sol_cell = "no SOL rule"
            elif not args.sol:
                sol_cell = "no --sol"
            else:
                sol_cell = _verdict(matched(ours, sol)) if sol else "failed"
            match_rows.append([name, f"`{spec_name}`", f"`{spec.sol or '-'}`", sol_cell])
        vw_curves: dict[str, list[Point]] = {}
        if use_vw:
            text = write_vw(files, work)
            for run in VW_RUNS:
                try:
                    vw_curves[run] = vw_curve(run, files, text, work, args.quick)
                except SystemExit as failure:
                    note(f"- `{run}` on {name} failed: {str(failure).splitlines()[0]}")
                    continue
                curves[run] = {"VW": vw_curves[run]}
                for point in vw_curves[run]:
                    curve_rows.append(
                        [
                            name,
                            f"`{run}`",
                            f"l1={point.value:g}",
                            "",
                            "",
                            "",
                            f"{point.accuracy:.4f}",
                            f"{point.nonzeros:,}",
                            f"{point.seconds:.2f}",
                        ]
                    )
                    print(" | ".join(curve_rows[-1]), flush=True)
        for row in match_rows:
            if row[0] != name:
                continue
            spec = specs[row[1].strip("`")]
            if spec.vw is None or spec.vw not in vw_curves:
                row.append("-")
            else:
                gaps = matched(curves[spec.name]["ours"], vw_curves[spec.vw])
                row.append(f"`{spec.vw}`: {_verdict(gaps)}")
        figure = plot(name, curves, plots)
        if figure is not None:
            figures.append(str(figure))

        if name == "20news" and rules:
            label, dense, dense_accuracy = best_dense(files)
            dense_nonzeros = _nonzeros(dense.coef_)
            dense_file, dense_memory = model_size(dense, work)
            target = TARGET_DENSE_SHARE * dense_nonzeros
            note(
                f"- Best dense rule on 20 Newsgroups (one pass): {label}, accuracy "
                f"{dense_accuracy:.4f}, {dense_nonzeros:,} nonzero weights, file "
                f"{dense_file:,} bytes, loaded {dense_memory:,} bytes; "
                f"{TARGET_DENSE_SHARE:.0%} of its nonzeros: {target:,.0f}."
            )
            for spec_name, by_system in curves.items():
                if spec_name not in rules:
                    continue
                spec, points = specs[spec_name], by_system["ours"]
                accuracy = at_nonzeros(points, target)
                nearest = min(points, key=lambda p: abs(math.log(max(p.nonzeros, 1) / target)))
                estimator = _estimator(
                    rules[spec_name], {spec.knob: _knob_value(spec, nearest.value)}
                )
                _fit(estimator, data.X_train, data.y_train)
                size, memory = model_size(estimator, work)
                loss = 100 * (dense_accuracy - accuracy)
                shares = (size / dense_file, memory / dense_memory)
                dense_rows.append(
                    [
                        f"`{spec_name}`",
                        _fmt(accuracy),
                        "not reached" if loss != loss else f"{loss:+.2f}",
                        "-" if loss != loss else ("met" if loss <= TARGET_DENSE_LOSS else "missed"),
                        f"{_value(spec, nearest.value)}: {nearest.nonzeros:,} nonzeros, "
                        f"accuracy {nearest.accuracy:.4f}",
                        f"{size:,} ({shares[0]:.1%})",
                        f"{memory:,} ({shares[1]:.1%})",
                        "met" if max(shares) <= TARGET_SIZE_SHARE else "missed",
                    ]
                )
                print(" | ".join(dense_rows[-1]), flush=True)

        if name in TIMED_SETS:
            for spec_name, rule in rules.items():
                if specs[spec_name].knob != "l1":
                    continue
                values = grid(specs[spec_name], name, n_features, args.quick)
                l1, with_l1, without = fit_ratio(rule, values, files, repeats)
                ratio = with_l1 / without
                time_rows.append(
                    [
                        name,
                        f"`{spec_name}`" + (f" (as `{rule}`)" if rule != spec_name else ""),
                        f"{l1:g}",
                        f"{with_l1:.3f}",
                        f"{without:.3f}",
                        f"{ratio:.2f}",
                        "met" if ratio <= TARGET_FIT_RATIO else "missed",
                    ]
                )
                print(" | ".join(time_rows[-1]), flush=True)

    load_after = os.getloadavg()[0]
    elapsed = time.perf_counter() - clock
    notes.append(
        f"- Load average {load_before:.2f} before, {load_after:.2f} after; the whole run "
        f"took {elapsed / 60:.1f} min; fit times are single in-memory fits (the curves) or "
        f"medians of {repeats} (the L1 ratio), SOL's and VW's whole processes."
        + (
            " **--quick: small subsets and a tiny grid, not the issue's numbers.**"
            if args.quick
            else ""
        )
    )
    if figures:
        notes.append("- Plots: " + ", ".join(f"`{figure}`" for figure in figures) + ".")
    if args.sol:
        notes += [f"- {line}" for line in SOL_DIFFERENCES]
    curve_header = [
        "data set",
        "rule",
        "L1 or budget",
        "ours: accuracy",
        "ours: nonzeros",
        "ours: fit s",
        "SOL / VW: accuracy",
        "SOL / VW: nonzeros",
        "SOL / VW: process s",
    ]
    match_header = ["data set", "rule", "SOL", "ours − SOL at matched nonzeros (>= 0)", "ours − VW"]
    dense_header = [
        "rule",
        f"accuracy at {TARGET_DENSE_SHARE:.0%} of the dense nonzeros",
        "points lost",
        f"<= {TARGET_DENSE_LOSS:g}",
        "grid point nearest",
        "file bytes (of dense)",
        "loaded bytes (of dense)",
        f"<= {TARGET_SIZE_SHARE:.0%}",
    ]
    time_header = [
        "data set",
        "rule",
        "l1",
        "fit s, l1",
        "fit s, l1=0",
        "ratio",
        f"<= {TARGET_FIT_RATIO}",
    ]
    l1_grid = ", ".join(f"{v:g}" for v in (QUICK_L1_GRID if args.quick else L1_GRID))
    budget_grid = QUICK_BUDGET_SHARES if args.quick else BUDGET_SHARES
    budget_shares = ", ".join(f"{v:g}" for v in budget_grid)
    start, end = _report.markers(SECTION)
    section = "\n".join(
        [
            start,
            "## Sparse online learning beside SOL and VW (`bench_sparse.py`)",
            "",
            f"`{command}`, {started}, {_report.machine_info()}; SOL "
            f"{'at ' + args.sol if args.sol else 'not given'}; VW "
            f"{'`' + shlex.join(VW) + '`' if use_vw else 'not importable'}.",
            "",
            f"One pass over the same svmlight files (training rows in one shuffled order, "
            f"seed 0; ours `shuffle=False`); L1 grid {l1_grid} "
            f"(SOL's `lambda` the same), budgets {budget_shares} "
            f"of the features (SOL's `B` the same); our other constants at their defaults, "
            f"passed to SOL by its names; VW `--loss_function {VW_LOSS}`, `--binary` or "
            f"`--oaa K`, `-b` wide enough for one slot a feature. Nonzeros: ours `coef_ != 0`, "
            f"SOL's model file's weights (`sol_train`'s, bias slot not counted), VW's "
            f"`--readable_model` (constant not counted; `--l1`'s above its gravity).",
            "",
            _report.md_table(curve_header, curve_rows) if curve_rows else "(no curve)",
            "",
            f"Matched nonzeros: the peer's accuracy at each of our points' nonzero count, "
            f"linear in log(1 + nonzeros) between its nearest points (ends matched within "
            f"{MATCH_TOLERANCE:.0%}); points of accuracy.",
            "",
            _report.md_table(match_header, match_rows) if match_rows else "(no rule)",
            "",
            f"20 Newsgroups at {TARGET_DENSE_SHARE:.0%} of the best dense model's nonzeros "
            f"(interpolated on each curve); sizes of the grid point nearest that count, "
            f"`save(model, resumable=False)` and the bytes `load`'s model holds "
            f"(`tracemalloc`).",
            "",
            _report.md_table(dense_header, dense_rows) if dense_rows else "(20 Newsgroups not run)",
            "",
            "In-memory fit time of each L1 rule against the same rule with `l1=0` "
            f"(medians of {repeats}, interleaved).",
            "",
            _report.md_table(time_header, time_rows) if time_rows else "(not run)",
            "",
            *notes,
            end,
        ]
    )
    _report.publish(section, SECTION, args.output or "", args.output is not None)
    if args.output:
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
