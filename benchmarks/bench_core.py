"""Whole processes on the learner core: the targets of the issue that moved the models out
of their scikit-learn estimators, beside SOL and Vowpal Wabbit in the same run.

Every measurement is one whole process (interpreter start, imports, reading, training,
saving) timed from outside, with the child's own peak RSS, the median of ``--repeats``
runs; with ``--baseline LABEL=SRC`` (repeatable) the same command also runs from an
older tree's sources (``PYTHONPATH=SRC``, the same interpreter and packages: what the
change itself did), the runs of the trees alternated:

- **a9a**, 10 passes of the perceptron (the last weights, as SOL's):
  ``perceptrons train a9a -o MODEL --algorithm perceptron --update perceptron --epochs 10``
  against ``lsol_c -i a9a -a perceptron -p 10`` (target: <= 0.7 s, <= 150 MB);
- **AROW on 20 Newsgroups TF-IDF** (the svmlight file of ``bench_adaptive.py``), 10 passes:
  ``--algorithm perceptron --update arow`` against ``lsol_c -a arow -c 20 -p 10``
  (target: no slower than SOL);
- **20 Newsgroups from text** (VW text and fastText lines, as ``bench_vw.py`` writes them),
  10 passes, our defaults, against VW's ``--oaa 20 --passes 10 -b 20 --loss_function
  hinge`` (target: no slower than VW, accuracy >= 0.8589);
- **predict one line from stdin** with the 20-class, 2**20-feature model, load included
  (target: <= 0.3 s), against VW's ``-t``;
- what importing costs: ``python -c "import sklearn.base"`` and ``import perceptrons.linear``;
- **in-memory fits** on 20 Newsgroups TF-IDF, 10 epochs: ``AveragedPerceptron`` and
  ``Perceptron`` (medians of ``--repeats`` fits in a child process per tree, after an
  untimed fit), beside scikit-learn's averaged ``SGDClassifier(loss="hinge",
  average=True, max_iter=10, tol=None)`` in the same child (target: back to the times
  of the tree before the regression, the averaged perceptron >= 4x faster than SGD).

SOL (``--sol``, an ``lsol_c`` built outside the repository) and VW (``python -m
vowpalwabbit``, the ``bench`` extra) are yardsticks only; their rows say so when absent.

Usage::

    python benchmarks/bench_core.py [--sol /path/to/lsol_c] [--baseline LABEL=/old/src ...]
        [--repeats 5] [--workdir /tmp/perceptrons-bench-core] [--output benchmarks/RESULTS.md]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.util
import json
import os
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

import _report
from bench_adaptive import prepare
from bench_stream import _child
from bench_vw import VW, _piped, _sol_accuracy, _vw_accuracy, _vw_version, write_news

SECTION = "bench_core"
TIME = "/usr/bin/time"  # GNU time: a child's own peak RSS
DATA = Path(os.environ.get("PERCEPTRONS_DATA", Path(__file__).parents[2] / "shared" / "data"))


# The in-memory fits, run in a child per tree: prints {model: median seconds}.
_FITS = """
import json, statistics, sys, time, warnings
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import SGDClassifier
from perceptrons import AveragedPerceptron, Perceptron
X, y = load_svmlight_file(sys.argv[1])
X.indices, X.indptr = X.indices.astype("int32"), X.indptr.astype("int32")  # SGD's
repeats = int(sys.argv[2])
makers = {
    "AveragedPerceptron": lambda: AveragedPerceptron(max_epochs=10, random_state=0),
    "Perceptron": lambda: Perceptron(max_epochs=10, random_state=0),
    "SGDClassifier": lambda: SGDClassifier(
        loss="hinge", average=True, max_iter=10, tol=None, random_state=0
    ),
}
times = {name: [] for name in makers}
for make in makers.values():
    make().fit(X[:500], y[:500])  # untimed: compiles or loads the kernels
for _ in range(repeats):
    for name, make in makers.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            started = time.perf_counter()
            make().fit(X, y)
            times[name].append(time.perf_counter() - started)
print(json.dumps({name: statistics.median(t) for name, t in times.items()}))
"""


def _ours(src: str | None) -> tuple[list[str], dict[str, str]]:
    """The ``perceptrons`` command of this interpreter, on the sources ``src`` (None:
    the installed tree), and the environment that selects them."""
    if src is None:
        return [sys.executable, "-m", "perceptrons"], {}
    return [sys.executable, "-m", "perceptrons"], {"PYTHONPATH": src}


def _runs(commands: dict[str, tuple[list[str], dict[str, str]]], repeats: int, stdin=None):
    """Each command ``repeats`` times, the commands alternated; per command (median wall
    seconds, median peak MB, last stdout)."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    peaks: dict[str, list[float]] = {name: [] for name in commands}
    outs: dict[str, str] = {}
    for command, env in commands.values():  # untimed: Numba's caches warm
        _run(command, env, stdin)
    for _ in range(repeats):
        for name, (command, env) in commands.items():
            seconds, peak, out = _run(command, env, stdin)
            times[name].append(seconds)
            peaks[name].append(peak)
            outs[name] = out
    return {
        name: (statistics.median(times[name]), statistics.median(peaks[name]), outs[name])
        for name in commands
    }


def _run(command: list[str], env: dict[str, str], stdin: str | None):
    if stdin is None:
        return _measured(command, env)
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        seconds, out = _piped(command, stdin)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return seconds, float("nan"), out


def _measured(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, stdout) of ``command``. The peak is GNU time's
    (``%M``) where it is installed: a child's own ``ru_maxrss`` from ``wait4`` counts
    the pages of the forking benchmark process too, until the exec."""
    if not Path(TIME).exists():
        return _child(command, env=env)
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as peak:
        seconds, _, out = _child([TIME, "-f", "%M", "-o", peak.name, *command], env=env)
        kilobytes = float(Path(peak.name).read_text().split()[-1])
    return seconds, kilobytes / 1024, out


def _accuracy(command: list[str], env: dict[str, str], model: Path, test: Path) -> float:
    _, _, out = _child([*command, "evaluate", str(model), str(test), "--json"], env=env)
    return float(json.loads(out)["accuracy"])


def _met(ok: bool) -> str:
    return "met" if ok else "missed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sol", default=None, help="path of SOL's lsol_c binary")
    parser.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="LABEL=SRC",
        help="src/ of an older tree to compare, named LABEL (repeatable)",
    )
    parser.add_argument("--repeats", type=int, default=5, help="runs per measurement")
    parser.add_argument("--workdir", default="/tmp/perceptrons-bench-core")
    parser.add_argument("--output", default=str(Path(__file__).with_name("RESULTS.md")))
    parser.add_argument("--no-write", action="store_true", help="print the section only")
    parser.add_argument(
        "--fits-baseline",
        action="append",
        default=[],
        metavar="LABEL=SRC",
        help="an older tree for the in-memory fits only (one without the rules or options "
        "the whole-process rows use)",
    )
    args = parser.parse_args(argv)
    command_line = "python " + shlex.join([sys.argv[0], *(argv or sys.argv[1:])])
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()[0]
    has_vw = importlib.util.find_spec("vowpalwabbit") is not None
    trees = {"new": _ours(None)}
    for given in args.baseline:
        label, _, src = given.partition("=")
        trees[label] = _ours(src)
    rows: list[list[str]] = []

    def add(task: str, ours: dict, peer: str, target: str) -> None:
        cells = [task, *(ours.get(tree, "-") for tree in trees), peer, target]
        rows.append(cells)
        print(" | ".join(cells), flush=True)

    # --- importing
    imports = {
        "sklearn.base": [sys.executable, "-c", "import sklearn.base"],
        "perceptrons.linear": [
            sys.executable,
            "-c",
            "from perceptrons.linear import Perceptron; Perceptron",
        ],
    }
    timed = _runs({k: (v, {}) for k, v in imports.items()}, args.repeats)
    add(
        "import `perceptrons.linear` (NumPy, SciPy sparse, Numba: the core)",
        {"new": f"{timed['perceptrons.linear'][0]:.2f} s"},
        f"`import sklearn.base`: {timed['sklearn.base'][0]:.2f} s",
        "",
    )

    def versus_sol(name: str, train: Path, test: Path, rule: str, algo: str, classes: int):
        """Ours (``--update rule``, 10 passes, every tree) and SOL's ``algo`` on one
        svmlight file: the cells, SOL's cell, our new tree's and SOL's medians."""
        options = ["--quiet", "--algorithm", "perceptron", "--update", rule, "--epochs", "10"]
        commands = {
            tree: (
                [*cmd, "train", str(train), "-o", str(work / f"{name}.{tree}.npz"), *options],
                env,
            )
            for tree, (cmd, env) in trees.items()
        }
        timed = _runs(commands, args.repeats)
        cells = {}
        for tree, (cmd, env) in trees.items():
            seconds, peak, _ = timed[tree]
            accuracy = _accuracy(cmd, env, work / f"{name}.{tree}.npz", test)
            cells[tree] = f"{seconds:.2f} s, {peak:.0f} MB, accuracy {accuracy:.4f}"
        if not args.sol:
            return cells, "SOL: no --sol given", timed["new"], None
        model = work / f"{name}.sol.model"
        sol_command = [args.sol, "-i", str(train), "-a", algo, "-c", str(classes), "-p", "10"]
        sol = _runs({"sol": ([*sol_command, "-o", str(model)], {})}, args.repeats)["sol"]
        accuracy = _sol_accuracy(args.sol, model, test)
        peer = f"SOL {sol[0]:.2f} s, {sol[1]:.0f} MB, accuracy {accuracy:.4f}"
        return cells, peer, timed["new"], sol

    # --- a9a, 10 passes of the perceptron
    a9a, a9a_test = DATA / "a9a" / "a9a", DATA / "a9a" / "a9a.t"
    if a9a.exists():
        cells, peer, (seconds, peak, _), _ = versus_sol(
            "a9a", a9a, a9a_test, "perceptron", "perceptron", 2
        )
        add(
            "`train` a9a (32,561 rows), 10 passes, perceptron",
            cells,
            peer,
            f"<= 0.7 s: {_met(seconds <= 0.7)}; <= 150 MB: {_met(peak <= 150)}",
        )
    else:
        print(f"skipping a9a: {a9a} is absent", flush=True)

    # --- AROW on 20 Newsgroups TF-IDF
    files = prepare("20news", work, quick=False)
    if files is not None:
        cells, peer, ours, sol = versus_sol("arow", files.train, files.test, "arow", "arow", 20)
        target = "no slower than SOL: not measured"
        if sol is not None:
            ratio = ours[0] / sol[0]
            target = f"no slower than SOL: {_met(ratio <= 1.0)} ({ratio:.2f}x SOL's time)"
        add("`train --update arow`, 20 Newsgroups TF-IDF svmlight, 10 passes", cells, peer, target)

    # --- 20 Newsgroups from text, and predicting one line
    try:
        news = write_news(work)
    except FileNotFoundError as missing:
        print(f"skipping 20 Newsgroups text: {missing}", flush=True)
        news = None
    if news is not None:
        vw_time = vw_acc = None
        if has_vw:
            vw_model = work / "news.vw.model"
            cache = Path(str(news["train.vw"]) + ".cache")
            train = [*VW, "-d", str(news["train.vw"]), "--oaa", "20", "--passes", "10", "-c"]
            train += ["-k", "-b", "20", "--loss_function", "hinge", "-f", str(vw_model)]
            train += ["--quiet", "--cache_file", str(cache)]
            vw_time = _runs({"vw": (train, {})}, args.repeats)["vw"][0]
            predictions = work / "news.vw.pred"
            _child(
                [
                    *VW,
                    "-t",
                    "-i",
                    str(vw_model),
                    "-d",
                    str(news["test.vw"]),
                    "-p",
                    str(predictions),
                    "--quiet",
                ]
            )
            vw_acc = _vw_accuracy(predictions, news["test.vw"])
        for kind, label in (("vw", "VW text"), ("ft", "fastText lines")):
            commands = {
                tree: (
                    [
                        *cmd,
                        "train",
                        str(news[f"train.{kind}"]),
                        "-o",
                        str(work / f"news.{kind}.{tree}.npz"),
                        "--quiet",
                    ],
                    env,
                )
                for tree, (cmd, env) in trees.items()
            }
            timed = _runs(commands, args.repeats)
            cells = {}
            accuracy = {}
            for tree, (cmd, env) in trees.items():
                seconds, peak, _ = timed[tree]
                model = work / f"news.{kind}.{tree}.npz"
                accuracy[tree] = _accuracy(cmd, env, model, news[f"test.{kind}"])
                cells[tree] = f"{seconds:.2f} s, {peak:.0f} MB, accuracy {accuracy[tree]:.4f}"
            seconds = timed["new"][0]
            if vw_time is not None:
                peer = f"VW `-b 20 --loss_function hinge` {vw_time:.2f} s, accuracy {vw_acc:.4f}"
                target = (
                    f"no slower than VW: {_met(seconds <= vw_time)} "
                    f"({seconds / vw_time:.2f}x); accuracy >= 0.8589: "
                    f"{_met(round(accuracy['new'], 4) >= 0.8589)}"
                )
            else:
                peer = "VW: not installed (the bench extra)"
                target = f"accuracy >= 0.8589: {_met(round(accuracy['new'], 4) >= 0.8589)}"
            add(f"`train` 20 Newsgroups from {label}, 10 passes, defaults", cells, peer, target)

        line = news["test.ft"].open().readline().split(" ", 1)[1]
        commands = {
            tree: (
                [*cmd, "predict", str(work / f"news.ft.{tree}.npz"), "-", "--format", "lines"],
                env,
            )
            for tree, (cmd, env) in trees.items()
        }
        timed = _runs(commands, args.repeats, stdin=line)
        cells = {tree: f"{timed[tree][0]:.2f} s" for tree in trees}
        peer = "VW: not installed"
        if has_vw:
            vw_predict = _runs(
                {
                    "vw": (
                        [
                            *VW,
                            "-t",
                            "-i",
                            str(work / "news.vw.model"),
                            "-p",
                            "/dev/stdout",
                            "--quiet",
                        ],
                        {},
                    )
                },
                args.repeats,
                stdin="| " + line,
            )["vw"][0]
            peer = f"VW `-t` {vw_predict:.2f} s"
        seconds = timed["new"][0]
        add(
            "predict one line from stdin, 20 classes, 2**20 features, model load included",
            cells,
            peer,
            f"<= 0.3 s: {_met(seconds <= 0.3)}",
        )

    fit_trees = dict(trees)
    for given in args.fits_baseline:
        label, _, src = given.partition("=")
        fit_trees[label] = _ours(src)
    if files is not None:
        fits = {}
        for tree, (_, env) in fit_trees.items():
            _, _, out = _measured(
                [sys.executable, "-c", _FITS, str(files.train), str(args.repeats)], env
            )
            fits[tree] = json.loads(out.strip().splitlines()[-1])
        for model in ("AveragedPerceptron", "Perceptron"):
            cells = {tree: f"{fits[tree][model]:.3f} s" for tree in trees}
            cells["new"] += "".join(
                f" ({tree}: {fits[tree][model]:.3f} s)" for tree in fit_trees if tree not in trees
            )
            sgd = fits["new"]["SGDClassifier"]
            ratio = sgd / fits["new"][model]
            target = ""
            if model == "AveragedPerceptron":
                target = f"{ratio:.1f}x SGD's speed, >= 4x: {_met(ratio >= 4)}"
            before = [fits[tree][model] for tree in fit_trees if tree != "new"]
            if before:
                best = min(before)
                target += f"; {fits['new'][model] / best:.2f}x the fastest tree's time"
            add(
                f"in-memory `{model}().fit`, 20 Newsgroups TF-IDF, 10 epochs",
                cells,
                f"scikit-learn's averaged SGD {sgd:.3f} s",
                target.lstrip("; "),
            )

    load_after = os.getloadavg()[0]
    header = ["task", "perceptrons", *(f"at {tree}" for tree in trees if tree != "new")]
    header += ["peer, same run", "target"]
    start, end = _report.markers(SECTION)
    baseline = "".join(
        f"; {given.replace('=', ' at ')}" for given in [*args.baseline, *args.fits_baseline]
    )
    section = "\n".join(
        [
            start,
            "## Whole processes on the learner core (`bench_core.py`)",
            "",
            f"`{command_line}`, {started}, {_report.machine_info()}; Vowpal Wabbit "
            f"{_vw_version() if has_vw else 'not installed'}; SOL "
            f"{'at ' + args.sol if args.sol else 'not given'}{baseline}.",
            "",
            _report.md_table(header, rows),
            "",
            f"Medians of {args.repeats} runs (the trees alternated, after an untimed run "
            "of each), wall time and the child's own peak RSS; load average "
            f"{load_before:.2f} before, {load_after:.2f} after.",
            end,
        ]
    )
    _report.publish(section, SECTION, args.output, not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
