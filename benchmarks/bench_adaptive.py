"""The update rules of issue 28 beside SOL: accuracy, fit time, whole-process training,
and which rule the text defaults should use.

Every rule of ``perceptrons.linear._update_rules.RULES`` (read at run time: rules added later
are covered), or those of ``--rules``, on 20 Newsgroups (TF-IDF, sublinear tf), a9a,
MNIST (pixels / 255) and the sentiment set (counts), featurized as
``benchmarks/_datasets.py`` does. Each data set is written once to ``--workdir`` as
svmlight files (one-based feature indices: SOL keeps index 0 for its bias; labels -1/+1
for two classes and 0..K-1 for more, as SOL's hinge losses index their scores by the
label), the training rows in one fixed shuffled order (seed 0). SOL reads that file in
its order on every pass (its ``-p`` repeats the file, it never reshuffles); ours
reshuffle every epoch (their default, ``random_state=0``).

- **the rule table**: for each data set and rule, the test accuracy of SOL's peer
  (``lsol_c -a ALGO -c CLASSES -p 10``, its defaults; ``lsol_c -t test``'s "test accuracy"
  line prints the error rate, converted here) when SOL has one, and of ours with the last
  weights (``Perceptron(update=RULE, max_epochs=10, random_state=0)``) and averaged
  (``AveragedPerceptron``, same arguments) on the same rows, with the in-memory fit times
  (medians of ``--repeats`` fits, interleaved, in this process, after a small untimed fit
  that compiles the kernels) and the ratio of the averaged fit to the default
  ``AveragedPerceptron()``'s (target <= 1.5); the best rule on 20 Newsgroups against
  SOL's AROW (target >= 0.8626);
- **whole-process training** on the 20 Newsgroups svmlight file, 10 passes, medians of
  ``--repeats``: ``python -m perceptrons train FILE -o MODEL --algorithm perceptron
  --update RULE --epochs 10`` (the last weights, the model SOL trains) against SOL's
  ``lsol_c`` on the same file (target: ours <= SOL's);
- **default for text**: the averaged rules on held-out fifths of the *training* sets
  only (as ``choose_text_defaults.py``: 20 Newsgroups' posts in a random 80/20 split,
  seed 0, the sentiment set's in file order, hashed into 2**20 columns and weighted by
  sublinear tf-idf as the command line does; a9a and MNIST in a random 80/20 split), with
  the decision the numbers support for ``--update auto`` on text and for the estimators'
  default ``update``.

SOL (Wu, Hoi et al. 2016; github.com/LIBOL/SOL) is a yardstick only: give the path of an
``lsol_c`` built outside the repository with ``--sol``; without it the SOL columns say so.
Missing data sets are skipped with a message. Usage::

    python benchmarks/bench_adaptive.py [--sol /path/to/lsol_c] [--datasets 20news,a9a,...]
        [--rules arow,pa-i,...] [--repeats 3] [--workdir /tmp/perceptrons-bench-adaptive]
        [--output benchmarks/RESULTS.md] [--quick]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import shlex
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import _report
from _datasets import FEATURIZERS, Dataset, loaders
from bench_stream import _child

SECTION = "bench_adaptive"
EPOCHS = 10
#: The issue's targets.
TARGET_ACCURACY_20NEWS = 0.8626  # SOL's AROW on 20 Newsgroups, as the issue quotes it
TARGET_FIT_RATIO = 1.5  # a rule's averaged fit / AveragedPerceptron()'s
#: A rule replaces the current default only when its mean held-out accuracy is ahead by
#: more than this and it is nowhere behind by more than this (held-out fifths of a few
#: thousand examples: a tenth of a point is a handful of posts).
DECISION_MARGIN = 0.002
#: --quick: the first rows of each (shuffled) split.
QUICK_TRAIN, QUICK_TEST = 1500, 600
DATASETS = ("20news", "a9a", "mnist", "sentiment")
TEXT_SETS = ("20news", "sentiment")


@dataclass(frozen=True)
class SolPeer:
    """SOL's algorithm for one of our rules: its ``-a`` name, its defaults as its source
    sets them, and whether it is the same rule or only the nearest SOL has."""

    algo: str
    defaults: str
    same: bool = True


#: Our rules -> SOL's (``RegisterModel(...)`` names of src/sol/model/olm/*.cc). SOL's
#: defaults learn no bias (``bias_eta=0``); its multiclass losses are the "max-score"
#: ones (one constraint against the best other class), as ours.
SOL_PEERS: dict[str, SolPeer] = {
    "perceptron": SolPeer("perceptron", "updates on mistakes"),
    "pa": SolPeer("pa", "-"),
    "pa-i": SolPeer("pa1", "C=1"),
    "pa-ii": SolPeer("pa2", "C=1"),
    "mira": SolPeer("pa1", "C=1 (multiclass PA-I)"),
    "arow": SolPeer("arow", "r=1, Σ starts at 1"),
    "cw": SolPeer("cw", "a=1, phi=0.5244"),
    "scw-i": SolPeer("eccw", "a=1, phi=0.5244 (exact convex CW)", same=False),
    "scw-ii": SolPeer("eccw", "a=1, phi=0.5244 (exact convex CW)", same=False),
    "sop": SolPeer("sop", "a=1"),
    "alma": SolPeer("alma2", "p=2, alpha=0.9, C=√2"),
    "ogd": SolPeer("ogd", "eta=1, power_t=0.5, hinge loss"),
    "ada-fobos": SolPeer("ada-fobos", "eta=1, delta=10"),
    "ada-rda": SolPeer("ada-rda", "eta=1, delta=10"),
}


def _rules() -> dict:
    from perceptrons.linear._update_rules import RULES

    return RULES


def _constants(rule) -> str:
    """Our rule's constants and whether it reads ``C``, as ``r=1, a=1``."""
    parts = [f"{name}={constant.default:g}" for name, constant in rule.constants.items()]
    if rule.uses_C:
        parts.append("C=1")
    return ", ".join(parts) or "-"


# --------------------------------------------------------------------------- data


@dataclass
class Files:
    """A data set as svmlight files, and the rows they hold in memory (same order)."""

    data: Dataset
    train: Path
    test: Path
    n_classes: int


def _sol_labels(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """-1/+1 for two classes (the second is +1), 0..K-1 for more (SOL's conventions)."""
    index = np.searchsorted(classes, y)
    if np.any(index >= len(classes)) or np.any(classes[np.minimum(index, len(classes) - 1)] != y):
        raise SystemExit("a test label is absent from the training labels")
    return np.where(index == 1, 1, -1) if len(classes) == 2 else index


def prepare(name: str, work: Path, quick: bool, rows: int | None = None) -> Files | None:
    """Featurize ``name``, shuffle its training rows (seed 0), keep the first ``rows``
    of them when given, write both splits as svmlight files once; None (with a
    message) when its files are absent."""
    from sklearn.datasets import dump_svmlight_file

    try:
        data = FEATURIZERS[name]()
    except FileNotFoundError as missing:
        print(f"skipping {name}: {missing}", flush=True)
        return None
    classes = np.unique(data.y_train)
    order = np.random.default_rng(0).permutation(data.X_train.shape[0])
    X_train, y_train = data.X_train[order], _sol_labels(data.y_train[order], classes)
    X_test, y_test = data.X_test, _sol_labels(data.y_test, classes)
    if rows is not None:
        X_train, y_train = X_train[:rows], y_train[:rows]
    if quick:
        X_train, y_train = X_train[:QUICK_TRAIN], y_train[:QUICK_TRAIN]
        X_test, y_test = X_test[:QUICK_TEST], y_test[:QUICK_TEST]
    data = Dataset(name, X_train, y_train, X_test, y_test, data.protocol, data.load_seconds)
    stem = f"{name}-{X_train.shape[0]}x{X_train.shape[1]}"
    paths = {split: work / f"{stem}.{split}.svm" for split in ("train", "test")}
    for split, X, y in (("train", X_train, y_train), ("test", X_test, y_test)):
        if not paths[split].exists():
            partial = paths[split].with_suffix(".partial")
            dump_svmlight_file(X, y, str(partial), zero_based=False)
            partial.replace(paths[split])  # a killed run leaves no half-written file
    return Files(data, paths["train"], paths["test"], len(classes))


# --------------------------------------------------------------------------- SOL


def _sol_accuracy(sol: str, model: Path, test: Path) -> float:
    _, _, out = _child([sol, "-t", "test", "-i", str(test), "-m", str(model)])
    # lsol_c's "test accuracy" line prints the error rate.
    match = re.search(r"test accuracy:\s*([0-9.]+)", out)
    if match is None:
        raise SystemExit(f"no 'test accuracy' line in SOL's output:\n{out}")
    return 1.0 - float(match.group(1))


def _sol_model(files: Files, algo: str, work: Path) -> Path:
    return work / f"sol.{files.data.name}.{algo}.model"


def sol_train(sol: str, files: Files, algo: str, work: Path) -> float:
    """One whole SOL training process, ``EPOCHS`` passes: its wall seconds."""
    train = [sol, "-i", str(files.train), "-a", algo, "-c", str(files.n_classes)]
    train += ["-p", str(EPOCHS), "-o", str(_sol_model(files, algo, work))]
    return _child(train)[0]


# --------------------------------------------------------------------------- ours


def _estimator(rule: str, averaged: bool):
    from perceptrons import AveragedPerceptron, Perceptron

    kind = AveragedPerceptron if averaged else Perceptron
    return kind(update=rule, max_epochs=EPOCHS, random_state=0)


def _fit(rule: str, averaged: bool, X, y) -> tuple[object, float]:
    estimator = _estimator(rule, averaged)
    started = time.perf_counter()
    estimator.fit(X, y)
    return estimator, time.perf_counter() - started


def _warm(rules: list[str], X, y) -> dict[str, str]:
    """Compile every rule's kernels for this kind of data (dense or CSR, two classes or
    more) on a few rows; the rules that refuse it, with the reason."""
    refused = {}
    # Random rows: a file sorted by label would give its first rows a single class.
    rows = np.sort(np.random.default_rng(1).permutation(X.shape[0])[:300])
    for rule in rules:
        for averaged in (False, True):
            try:
                _fit(rule, averaged, X[rows], y[rows])
            except ValueError as error:
                refused[rule] = str(error).splitlines()[0]
    return refused


@dataclass
class Ours:
    last_accuracy: float = float("nan")
    averaged_accuracy: float = float("nan")
    last_seconds: float = float("nan")
    averaged_seconds: float = float("nan")
    refused: str = ""


def measure(rules: list[str], data: Dataset, repeats: int) -> tuple[dict[str, Ours], float]:
    """Each rule's test accuracies and median fit times (interleaved repeats), and the
    median fit time of the default ``AveragedPerceptron()`` (update='perceptron')."""
    baseline = "perceptron"
    timed = rules if baseline in rules else [*rules, baseline]
    refused = _warm(timed, data.X_train, data.y_train)
    results = {rule: Ours(refused=refused.get(rule, "")) for rule in timed}
    seconds: dict[tuple[str, bool], list[float]] = {}
    for repeat in range(repeats):
        for rule in timed:
            if results[rule].refused:
                continue
            for averaged in (False, True):
                if not averaged and rule not in rules:
                    continue
                estimator, spent = _fit(rule, averaged, data.X_train, data.y_train)
                seconds.setdefault((rule, averaged), []).append(spent)
                if repeat == 0:  # deterministic: one score is enough
                    accuracy = float(estimator.score(data.X_test, data.y_test))
                    if averaged:
                        results[rule].averaged_accuracy = accuracy
                    else:
                        results[rule].last_accuracy = accuracy
    for (rule, averaged), spent in seconds.items():
        if averaged:
            results[rule].averaged_seconds = statistics.median(spent)
        else:
            results[rule].last_seconds = statistics.median(spent)
    return results, results[baseline].averaged_seconds


def _ours_command() -> list[str]:
    return [sys.executable, "-m", "perceptrons"]


def _our_model(files: Files, rule: str, work: Path) -> Path:
    return work / f"ours.{files.data.name}.{rule}.npz"


def cli_train(files: Files, rule: str, algorithm: str, work: Path) -> float:
    """One whole ``perceptrons train`` process on the svmlight file: its wall seconds."""
    model = _our_model(files, rule, work)
    train = [*_ours_command(), "train", str(files.train), "-o", str(model), "--quiet"]
    train += ["--algorithm", algorithm, "--update", rule, "--epochs", str(EPOCHS)]
    return _child(train)[0]


def cli_accuracy(files: Files, rule: str, work: Path) -> float:
    model = _our_model(files, rule, work)
    _, _, out = _child([*_ours_command(), "evaluate", str(model), str(files.test), "--json"])
    return float(json.loads(out)["accuracy"])


# --------------------------------------------------------------------------- held-out


def _split(n: int, shuffle: bool) -> tuple[np.ndarray, np.ndarray]:
    """choose_text_defaults.py's split: 80/20, random (seed 0) or in file order."""
    order = np.random.default_rng(0).permutation(n) if shuffle else np.arange(n)
    cut = int(0.8 * n)
    return order[:cut], order[cut:]


def held_out_sets(names: list[str], quick: bool):
    """(name, is_text, A, y_A, B, y_B) for the held-out fifths of the training sets."""
    from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer

    text_loaders = {
        "20news": (loaders.load_20newsgroups, True),
        "sentiment": (loaders.load_sentiment, False),
    }
    for name in names:
        try:
            if name in text_loaders:
                load, shuffle = text_loaders[name]
                docs, y = load()[:2]
                fit, held = _split(len(docs), shuffle)
                if quick:
                    fit, held = fit[:QUICK_TRAIN], held[:QUICK_TEST]
                # The command line's text features: its default tokenizer hashed into
                # 2**20 columns, weighted by sublinear tf-idf (its --weighting tfidf).
                hasher = HashingVectorizer(n_features=2**20, alternate_sign=False, norm=None)
                A = hasher.transform([docs[i] for i in fit])
                B = hasher.transform([docs[i] for i in held])
                weighting = TfidfTransformer(sublinear_tf=True).fit(A)
                yield name, True, weighting.transform(A), y[fit], weighting.transform(B), y[held]
            else:
                data = FEATURIZERS[name]()
                fit, held = _split(data.X_train.shape[0], True)
                if quick:
                    fit, held = fit[:QUICK_TRAIN], held[:QUICK_TEST]
                X, y = data.X_train, data.y_train
                yield name, False, X[fit], y[fit], X[held], y[held]
        except FileNotFoundError as missing:
            print(f"skipping the held-out part of {name}: {missing}", flush=True)


def held_out(rules: list[str], names: list[str], quick: bool, repeats: int):
    """{set: {rule: (held-out accuracy, median fit seconds / AveragedPerceptron()'s)}} of
    the averaged rules (interleaved repeats), and which sets are text."""
    scores: dict[str, dict[str, tuple[float, float]]] = {}
    text: dict[str, bool] = {}
    baseline = "perceptron"
    timed = rules if baseline in rules else [*rules, baseline]
    for name, is_text, A, ya, B, yb in held_out_sets(names, quick):
        text[name] = is_text
        refused = _warm(timed, A, ya)
        spent: dict[str, list[float]] = {rule: [] for rule in timed if rule not in refused}
        accuracy: dict[str, float] = {}
        for repeat in range(repeats):
            for rule in spent:
                estimator, seconds = _fit(rule, True, A, ya)
                spent[rule].append(seconds)
                if repeat == 0:  # deterministic: one score is enough
                    accuracy[rule] = float(estimator.score(B, yb))
        base = statistics.median(spent[baseline])
        scores[name] = {
            rule: (accuracy[rule], statistics.median(spent[rule]) / base)
            for rule in rules
            if rule in spent
        }
        for rule, (score, ratio) in scores[name].items():
            print(f"held-out {name} | {rule} | {score:.4f} | {ratio:.2f}x", flush=True)
    return scores, text


def decide(
    scores: dict[str, dict[str, tuple[float, float]]], sets: list[str], current: str
) -> tuple[str, str]:
    """The rule the held-out numbers support over ``sets``, and why in one sentence.

    A challenger must do all that the default is used for, weights and parameter mixing
    (the command line's text path trains on a VW file's importance weights, takes
    ``--class-weight`` and ``--shards``: a rule the table says refuses either cannot be
    a default), and fit within ``TARGET_FIT_RATIO`` of AveragedPerceptron()'s time on
    every set; the one of best mean accuracy replaces ``current`` only when it is ahead on
    the mean by more than ``DECISION_MARGIN`` and behind by no more than that on any set."""
    sets = [name for name in sets if name in scores]
    if not sets:
        return current, "no held-out set was measured: keep it"
    table = _rules()
    common = [
        rule
        for rule in scores[sets[0]]
        if all(rule in scores[name] for name in sets)
        and (rule == current or (table[rule].weighted and table[rule].mixing is None))
    ]

    def mean(rule: str) -> float:
        return float(np.mean([scores[name][rule][0] for name in sets]))

    # The time target filters the challengers, not the rule in place.
    fast = [
        rule
        for rule in common
        if rule == current or all(scores[n][rule][1] <= TARGET_FIT_RATIO for n in sets)
    ]
    where = ", ".join(sets)
    if current not in common:
        if not fast:
            return current, "no rule fits within the time target on every set: keep it"
        best = max(fast, key=mean)
        return best, f"`{best}` has the best mean held-out accuracy ({mean(best):.4f}) on {where}"
    best = max(fast, key=mean)
    if best == current:
        return current, (
            f"no rule within the time target has a better mean held-out accuracy than "
            f"`{current}` ({mean(current):.4f}) on {where}"
        )
    ahead = mean(best) - mean(current)
    behind = max(scores[n][current][0] - scores[n][best][0] for n in sets)
    if ahead > DECISION_MARGIN and behind <= DECISION_MARGIN:
        return best, (
            f"`{best}` beats `{current}` by {100 * ahead:+.2f} points on the mean of {where} "
            f"and loses nowhere by more than {100 * DECISION_MARGIN:.1f}"
        )
    return current, (
        f"the best challenger, `{best}`, is {100 * ahead:+.2f} points on the mean of {where} "
        f"and {100 * max(behind, 0.0):.2f} behind `{current}` on its worst set: not a clear "
        f"win (that needs > {100 * DECISION_MARGIN:.1f} ahead, <= {100 * DECISION_MARGIN:.1f} "
        "behind)"
    )


def whole_processes(
    args: argparse.Namespace,
    files: Files,
    rules: list[str],
    sol_accuracy: dict[str, float],
    work: Path,
    repeats: int,
) -> list[list[str]]:
    """The rows of the whole-process table: ours and SOL's training processes on the same
    file, interleaved (each SOL algorithm once a round), medians of ``repeats`` rounds."""
    ours: dict[str, list[float]] = {rule: [] for rule in rules}
    sol: dict[str, list[float]] = {algo: [] for algo in sol_accuracy}
    for _ in range(repeats):
        timed_this_round = set()
        for rule in rules:
            ours[rule].append(cli_train(files, rule, args.cli_algorithm, work))
            peer = SOL_PEERS.get(rule)
            if peer is not None and peer.algo in sol and peer.algo not in timed_this_round:
                sol[peer.algo].append(sol_train(args.sol, files, peer.algo, work))
                timed_this_round.add(peer.algo)
    rows = []
    for rule in rules:
        seconds = statistics.median(ours[rule])
        accuracy = cli_accuracy(files, rule, work)
        peer = SOL_PEERS.get(rule)
        if peer is not None and peer.algo in sol:
            sol_seconds = statistics.median(sol[peer.algo])
            sol_cells = [
                f"`{peer.algo}`",
                f"{sol_seconds:.2f} s, accuracy {sol_accuracy[peer.algo]:.4f}",
            ]
            ratio = f"{seconds / sol_seconds:.2f}x SOL's time"
            target = "met" if seconds <= sol_seconds else "missed"
        else:
            why = "no SOL peer" if peer is None else ("no --sol" if not args.sol else "failed")
            sol_cells, ratio, target = [why, "-"], "-", "-"
        rows.append(
            [f"`{rule}`", *sol_cells, f"{seconds:.2f} s, accuracy {accuracy:.4f}", ratio, target]
        )
        print(" | ".join(rows[-1]), flush=True)
    return rows


# --------------------------------------------------------------------------- main


def _fmt(value: float, spec: str = ".4f") -> str:
    return "-" if value != value else format(value, spec)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sol", default=None, help="path of SOL's lsol_c binary")
    parser.add_argument(
        "--datasets", default=",".join(DATASETS), help=f"comma-separated, of {', '.join(DATASETS)}"
    )
    parser.add_argument("--rules", default=None, help="comma-separated (default: every rule)")
    parser.add_argument(
        "--repeats", type=int, default=None, help="timings per median (3; --quick: 1)"
    )
    parser.add_argument("--workdir", default="/tmp/perceptrons-bench-adaptive")
    parser.add_argument("--output", default=str(Path(__file__).with_name("RESULTS.md")))
    parser.add_argument(
        "--cli-algorithm",
        default="perceptron",
        choices=("perceptron", "averaged"),
        help="our model in the whole-process rows (default: the last weights, as SOL's)",
    )
    parser.add_argument("--quick", action="store_true", help="small subsets: a smoke test")
    args = parser.parse_args(argv)
    command = "python " + shlex.join([sys.argv[0], *(argv if argv is not None else sys.argv[1:])])
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    all_rules = _rules()
    rules = list(all_rules) if args.rules is None else [r.strip() for r in args.rules.split(",")]
    unknown = [rule for rule in rules if rule not in all_rules]
    if unknown:
        parser.error(f"unknown rule(s) {', '.join(unknown)}; the rules: {', '.join(all_rules)}")
    names = [name.strip() for name in args.datasets.split(",")]
    if any(name not in DATASETS for name in names):
        parser.error(f"--datasets: of {', '.join(DATASETS)}")
    repeats = args.repeats or (1 if args.quick else 3)
    if args.sol and not Path(args.sol).is_file():
        parser.error(f"--sol {args.sol}: no such file")
    if not args.sol:
        print("SOL: no --sol given; its columns are skipped", flush=True)
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()[0]

    table: list[list[str]] = []
    process: list[list[str]] = []
    notes: list[str] = []
    best_news: tuple[float, str] | None = None
    sol_arow_news = float("nan")
    for name in names:
        files = prepare(name, work, args.quick)
        if files is None:
            continue
        print(f"{name}: {files.data.describe()}", flush=True)
        sol_results: dict[str, float] = {}  # SOL's test accuracy by algorithm
        if args.sol:
            for algo in sorted({SOL_PEERS[r].algo for r in rules if r in SOL_PEERS}):
                try:
                    sol_train(args.sol, files, algo, work)
                    sol_results[algo] = _sol_accuracy(
                        args.sol, _sol_model(files, algo, work), files.test
                    )
                except SystemExit as failure:
                    print(f"SOL {algo} on {name} failed: {failure}", flush=True)
            if name == "20news" and "arow" in sol_results:
                sol_arow_news = sol_results["arow"]
        ours, base = measure(rules, files.data, repeats)
        for rule in rules:
            result, peer = ours[rule], SOL_PEERS.get(rule)
            if peer is None:
                sol_cell, sol_acc = "none", "no SOL peer"
            else:
                nearest = "" if peer.same else " (nearest, not the same rule)"
                sol_cell = f"`{peer.algo}`{nearest}: {peer.defaults}"
                if not args.sol:
                    sol_acc = "no --sol"
                elif peer.algo in sol_results:
                    sol_acc = f"{sol_results[peer.algo]:.4f}"
                else:
                    sol_acc = "failed"
            if result.refused:
                cells = [f"refused: {result.refused}", "", "", "", ""]
            else:
                ratio = result.averaged_seconds / base
                cells = [
                    _fmt(result.last_accuracy),
                    _fmt(result.averaged_accuracy),
                    f"{result.last_seconds:.2f} / {result.averaged_seconds:.2f}",
                    f"{ratio:.2f}",
                    "met" if ratio <= TARGET_FIT_RATIO else "missed",
                ]
                if name == "20news":
                    for accuracy, kind in (
                        (result.last_accuracy, "last"),
                        (result.averaged_accuracy, "averaged"),
                    ):
                        if best_news is None or accuracy > best_news[0]:
                            best_news = (accuracy, f"`{rule}` ({kind})")
            table.append(
                [name, f"`{rule}` ({_constants(all_rules[rule])})", sol_cell, sol_acc, *cells]
            )
            print(" | ".join(table[-1]), flush=True)

        if name == "20news":
            process += whole_processes(
                args, files, [r for r in rules if not ours[r].refused], sol_results, work, repeats
            )

    # --- default for text (held-out fifths of the training sets)
    from perceptrons import Perceptron
    from perceptrons.cli._common import AUTO_UPDATE

    # The rules in place are measured too: a challenger is judged against them.
    incumbents = [AUTO_UPDATE[True], Perceptron().update]
    held_rules = [*rules, *(r for r in dict.fromkeys(incumbents) if r not in rules)]
    scores, text = held_out(held_rules, names, args.quick, repeats)

    text_sets = [n for n in scores if text[n]]
    all_sets = list(scores)
    text_choice, text_why = decide(scores, text_sets, AUTO_UPDATE[True])
    estimator_choice, estimator_why = decide(scores, all_sets, Perceptron().update)
    held_rows = []
    for rule in held_rules:
        cells = []
        for name in all_sets:
            if rule in scores[name]:
                accuracy, ratio = scores[name][rule]
                cells.append(f"{accuracy:.4f} ({ratio:.2f}x)")
            else:
                cells.append("refused")
        held_rows.append([f"`{rule}`", *cells])
    decisions = [
        f"- `--update auto` on text (now `{AUTO_UPDATE[True]}`): **`{text_choice}`**: {text_why}.",
        f"- the estimators' default `update` (now `{Perceptron().update}`), over text and "
        f"numeric sets: **`{estimator_choice}`**: {estimator_why}.",
    ]
    print("\n".join(decisions), flush=True)

    # --- the report
    if best_news is not None:
        reference = f"SOL's AROW measured here: {_fmt(sol_arow_news)}; " if args.sol else ""
        notes.append(
            f"Best rule on 20 Newsgroups: {best_news[1]}, accuracy {best_news[0]:.4f} "
            f"({reference}target >= {TARGET_ACCURACY_20NEWS}: "
            f"{'met' if best_news[0] >= TARGET_ACCURACY_20NEWS else 'missed'})."
        )
    load_after = os.getloadavg()[0]
    notes.append(
        f"Load average {load_before:.2f} before, {load_after:.2f} after; medians of {repeats} "
        f"runs. SOL runs at its defaults (listed; they learn no bias, `bias_eta=0`), ours at "
        f"our defaults (listed, with an intercept); SOL reads the training file in its shuffled "
        f"order on every pass, ours reshuffle every epoch (`random_state=0`)."
        + (" **--quick: small subsets, not the issue's numbers.**" if args.quick else "")
    )
    header = [
        "data set",
        "rule (our constants)",
        "SOL peer (its defaults)",
        "SOL accuracy",
        "ours, last weights",
        "ours, averaged",
        "fit s, last / averaged",
        "averaged fit / AveragedPerceptron()'s",
        f"<= {TARGET_FIT_RATIO}",
    ]
    process_header = [
        "rule",
        "SOL",
        "SOL: whole process",
        "ours: whole process",
        "ratio",
        "ours <= SOL's",
    ]
    held_header = ["rule", *(f"{n} ({'text' if text[n] else 'numeric'})" for n in all_sets)]
    start, end = _report.markers(SECTION)
    section = "\n".join(
        [
            start,
            "## Adaptive and second-order update rules beside SOL (`bench_adaptive.py`)",
            "",
            f"`{command}`, {started}, {_report.machine_info()}; SOL "
            f"{'at ' + args.sol if args.sol else 'not given'}.",
            "",
            f"Test accuracy after {EPOCHS} passes over the same svmlight files, and in-memory "
            "fit times (medians, this process).",
            "",
            _report.md_table(header, table),
            "",
            *notes,
            "",
            f"Whole-process training on the 20 Newsgroups svmlight file, {EPOCHS} passes: "
            f"`python -m perceptrons train FILE -o MODEL --algorithm {args.cli_algorithm} "
            f"--update RULE --epochs {EPOCHS}` against `lsol_c -i FILE -a ALGO -c 20 -p {EPOCHS} "
            "-o MODEL`; accuracy on the test file.",
            "",
            _report.md_table(process_header, process) if process else "(20 Newsgroups not run)",
            "",
            "Default for text: `AveragedPerceptron` (10 epochs) on held-out fifths of the "
            "*training* sets (test sets unread; text hashed into 2**20 columns with sublinear "
            "tf-idf, as the command line does): accuracy (fit time / "
            f"`AveragedPerceptron()`'s, medians of {repeats}).",
            "",
            _report.md_table(held_header, held_rows) if all_sets else "(no held-out set)",
            "",
            *decisions,
            end,
        ]
    )
    _report.write_section(Path(args.output), section, SECTION)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
