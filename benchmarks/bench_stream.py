"""Streaming benchmark: one streamed epoch of a generated svmlight file, at parse speed?

Issue 13's target: ``perceptrons train --stream`` on a file of 2.5M rows of 30 binary
features (about 590 MB) at >= 500,000 examples/s end to end on one core, >= 5x
scikit-learn's ``load_svmlight_file`` on the same bytes, memory flat. The file is
generated with NumPy into ``--workdir`` (kept there and reused by later runs with the
same ``--rows``, ``--nnz``, ``--features``): rows of ``--nnz`` distinct feature indices
with value 1, labelled by a hidden linear separator with noise.

Every measurement runs in its own child process, timed from outside (interpreter start,
imports and the JIT cache load included) with its own peak RSS:

- ``train --stream``: ``perceptrons train --stream --epochs 1`` (averaged perceptron,
  the defaults: no ``--classes``, no width), pinned to one core with ``taskset`` and
  unpinned; its own report gives the epoch's seconds apart from the rest of the run;
  and ``--epochs 3`` (the epochs after the first read the parse cache);
- ``predict`` and ``evaluate`` over the same file (the compiled reader beside the
  scoring);
- SOL's ``lsol_c -a perceptron`` on the same file when ``--sol`` gives its path (a
  loading thread beside a learning thread: both cores);
- ``parse only``: the compiled streaming reader alone, one pass
  (:func:`perceptrons.io.stream.scan`);
- ``scikit-learn``: ``load_svmlight_file`` on the same file;
- the text path: the same rows as a Vowpal Wabbit file (``label | 12:1 40:1 ...``) and
  as a Blitzer et al. counts file (``12:1 40:1 ... #label#:1``) through
  ``train --stream --features hashing`` (``TextFeaturizer(tokenizer="pairs")``), on the
  first ``--text-rows`` rows: with the compiled hashing reader
  (:mod:`perceptrons._kernels.hashing`) and with the reference Python path it replaced
  (read_data's line parser, then the featurizer), forced in the child by
  ``perceptrons.io.stream._COMPILED_TEXT = False``.

A smaller file (a tenth of the rows) is streamed too, to show that peak memory does not
grow with the file.

Usage::

    python benchmarks/bench_stream.py [--rows 2500000] [--nnz 30] [--features 100000]
        [--chunk-size 20000] [--text-rows 50000] [--workdir /tmp/perceptrons-stream]
        [--sol /path/to/lsol_c] [--output benchmarks/RESULTS.md]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import _report

SECTION = "bench_stream"
BLOCK = 50_000  # rows formatted at a time
DISTINCT = 10  # distinct blocks drawn; the file cycles through them in random orders
TARGET_RATE = 500_000
TARGET_RATIO = 5.0


def _block(rng, w: np.ndarray, n_features: int, nnz: int) -> tuple[np.ndarray, np.ndarray]:
    """BLOCK rows: sorted distinct 1-based indices, labels from ``w`` with noise."""
    # Distinct sorted indices: sorted draws from [1, n - nnz], the k-th shifted by k.
    columns = np.sort(rng.integers(1, n_features - nnz + 2, size=(BLOCK, nnz)), axis=1)
    columns += np.arange(nnz)
    scores = w[columns].sum(axis=1)
    labels = np.where(scores + rng.normal(scale=1.0, size=BLOCK) > 0, 1, -1)
    return labels, columns


def _svmlight_text(labels: np.ndarray, columns: np.ndarray) -> str:
    lines = [
        f"{label} " + " ".join(f"{c}:1" for c in row.tolist())
        for label, row in zip(labels.tolist(), columns, strict=True)
    ]
    return "\n".join(lines) + "\n"


def _vw_text(labels: np.ndarray, columns: np.ndarray) -> str:
    lines = [
        f"{label} | " + " ".join(f"{c}:1" for c in row.tolist())
        for label, row in zip(labels.tolist(), columns, strict=True)
    ]
    return "\n".join(lines) + "\n"


def _counts_text(labels: np.ndarray, columns: np.ndarray) -> str:
    lines = [
        " ".join(f"{c}:1" for c in row.tolist()) + f" #label#:{label}"
        for label, row in zip(labels.tolist(), columns, strict=True)
    ]
    return "\n".join(lines) + "\n"


_TEXTS = {"svmlight": _svmlight_text, "vw": _vw_text, "counts": _counts_text}
# The child for the reference text path: the CLI with the compiled reader switched off.
_REFERENCE = (
    "import sys; from perceptrons.io import stream; stream._COMPILED_TEXT = False; "
    "from perceptrons.cli import main; raise SystemExit(main())"
)


def generate(path: Path, rows: int, nnz: int, n_features: int, seed: int, fmt: str) -> Path:
    """Write ``rows`` examples to ``path`` unless a file made with these settings is
    there (a stamp file beside it records them)."""
    stamp = path.with_name(path.name + ".json")
    settings = {"rows": rows, "nnz": nnz, "features": n_features, "seed": seed, "format": fmt}
    if path.exists() and stamp.exists() and json.loads(stamp.read_text()) == settings:
        return path
    w = np.random.default_rng(0).normal(size=n_features + 1)
    rng = np.random.default_rng(seed)
    text = _TEXTS[fmt]
    blocks: list[str] = []
    written = 0
    started = time.perf_counter()
    with path.open("w") as out:
        while written < rows:
            if len(blocks) < DISTINCT:
                blocks.append(text(*_block(rng, w, n_features, nnz)))
                order = [len(blocks) - 1]
            else:
                order = rng.permutation(len(blocks)).tolist()
            for index in order:
                take = min(BLOCK, rows - written)
                if take <= 0:
                    break
                block = blocks[index]
                if take < BLOCK:  # the first `take` lines
                    block = "".join(block.splitlines(keepends=True)[:take])
                out.write(block)
                written += take
    stamp.write_text(json.dumps(settings))
    size = path.stat().st_size / 2**20
    print(
        f"generated {path} ({rows:,} rows, {size:.0f} MB) in {time.perf_counter() - started:.0f} s"
    )
    return path


def _child(
    command: list[str], pin: bool = False, env: dict[str, str] | None = None
) -> tuple[float, float, str]:
    """Run ``command`` (with ``env`` added to the environment); (wall seconds, peak RSS
    in MB, stdout).

    The peak RSS is the command's own, measured by GNU ``time`` (``/usr/bin/time``)
    where there is one: a child forked from this (large) process counts the pages it
    shares with it before its ``exec`` in its ``ru_maxrss``, which then says this
    process's size for any command smaller (SOL's 5 MB read 348 MB). Without GNU
    ``time``, ``wait4``'s figure, a bound from above."""
    if pin and shutil.which("taskset"):
        command = ["taskset", "-c", "0", *command]
    gnu_time = Path("/usr/bin/time")
    started = time.perf_counter()
    with (
        tempfile.TemporaryFile("w+") as out,
        tempfile.TemporaryFile("w+") as err,
        tempfile.NamedTemporaryFile("w+", suffix=".peak") as peak_file,
    ):
        timed = [str(gnu_time), "-f", "%M", "-o", peak_file.name] if gnu_time.exists() else []
        child = subprocess.Popen(
            [*timed, *command],
            stdout=out,
            stderr=err,
            text=True,
            env={**os.environ, **(env or {})},
        )
        # wait4 gives this child's own peak RSS (RUSAGE_CHILDREN keeps the max of all).
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
        peak_kb = usage.ru_maxrss
        if timed:
            peak_file.seek(0)
            lines = peak_file.read().split()
            peak_kb = int(lines[-1]) if lines and lines[-1].isdigit() else peak_kb
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{shlex.join(command)} failed:\n{stderr}")
    return seconds, peak_kb / 1024, stdout


def _train(
    path: Path,
    args,
    pin: bool,
    text: bool = False,
    chunk_size: int = 0,
    env: dict[str, str] | None = None,
    reference: bool = False,
    epochs: int = 1,
) -> dict:
    model = path.with_suffix(".model.npz")
    command = [
        sys.executable,
        *(["-c", _REFERENCE] if reference else ["-m", "perceptrons"]),
        "train",
        str(path),
        "-o",
        str(model),
        "--stream",
        "--chunk-size",
        str(chunk_size or args.chunk_size),
        "--epochs",
        str(epochs),
        "--json",
        "--quiet",
    ]
    if text:
        command += ["--features", "hashing", "--weighting", "tf"]
    seconds, peak, out = _child(command, pin, env)
    report = json.loads(out)
    return {
        "wall": seconds,
        "inside": report["seconds"],
        "epoch": sum(epoch["seconds"] for epoch in report["epochs"]),
        "examples": sum(epoch["examples"] for epoch in report["epochs"]),
        "peak": peak,
        "model": model,
    }


def _parse_only(path: Path, chunk_size: int, pin: bool) -> tuple[float, float, float]:
    """(wall s, s inside the child, peak MB) of one pass of the compiled reader."""
    code = (
        "import sys, time; from perceptrons.io.stream import scan; t = time.perf_counter(); "
        f"scan(sys.argv[1], 'svmlight', chunk_size={chunk_size}); "
        "print(time.perf_counter() - t)"
    )
    seconds, peak, out = _child([sys.executable, "-c", code, str(path)], pin)
    return seconds, float(out), peak


def _sklearn(path: Path, pin: bool) -> tuple[float, float, float]:
    """(wall s, s inside the child, peak MB) of ``load_svmlight_file``."""
    code = (
        "import sys, time; from sklearn.datasets import load_svmlight_file; "
        "t = time.perf_counter(); load_svmlight_file(sys.argv[1]); print(time.perf_counter() - t)"
    )
    seconds, peak, out = _child([sys.executable, "-c", code, str(path)], pin)
    return seconds, float(out), peak


def _reading(command: str, model: Path, path: Path) -> tuple[float, float]:
    """(wall s, peak MB) of ``perceptrons predict`` (labels to a file) or ``evaluate``
    over ``path``."""
    out = path.with_suffix(".predictions")
    extra = ["-o", str(out)] if command == "predict" else ["--json"]
    seconds, peak, _ = _child(
        [sys.executable, "-m", "perceptrons", command, str(model), str(path), *extra]
    )
    out.unlink(missing_ok=True)
    return seconds, peak


def _sol(sol: str, path: Path) -> tuple[float, float]:
    """(wall s, peak MB) of SOL's perceptron, one pass over ``path``."""
    model = path.with_suffix(".sol.model")
    seconds, peak, _ = _child([sol, "-i", str(path), "-a", "perceptron", "-o", str(model)])
    model.unlink(missing_ok=True)
    return seconds, peak


def _accuracy(model: Path, test: Path) -> float:
    evaluation = subprocess.run(
        [sys.executable, "-m", "perceptrons", "evaluate", str(model), str(test), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(evaluation.stdout)["accuracy"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_500_000, help="rows of the file")
    parser.add_argument("--nnz", type=int, default=30, help="binary features per row")
    parser.add_argument("--features", type=int, default=100_000, help="feature indices 1..N")
    parser.add_argument("--chunk-size", type=int, default=20_000)
    parser.add_argument("--text-rows", type=int, default=50_000, help="rows of the vw file")
    parser.add_argument("--workdir", default="/tmp/perceptrons-stream")
    parser.add_argument("--sol", default=None, help="path of SOL's lsol_c binary")
    parser.add_argument("--output", default=str(Path(__file__).with_name("RESULTS.md")))
    args = parser.parse_args(argv)
    command = "python " + " ".join(shlex.quote(a) for a in [sys.argv[0], *(argv or sys.argv[1:])])
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    small_rows = max(args.rows // 10, 1)
    tag = f"{args.nnz}x{args.features}"
    big = generate(
        work / f"train-{args.rows}-{tag}.svm", args.rows, args.nnz, args.features, 1, "svmlight"
    )
    small = generate(
        work / f"train-{small_rows}-{tag}.svm", small_rows, args.nnz, args.features, 1, "svmlight"
    )
    test = generate(work / f"test-50000-{tag}.svm", 50_000, args.nnz, args.features, 2, "svmlight")
    texts = {
        fmt: generate(
            work / f"train-{args.text_rows}-{tag}.{fmt}",
            args.text_rows,
            args.nnz,
            args.features,
            1,
            fmt,
        )
        for fmt in ("vw", "counts")
    }
    size_mb = big.stat().st_size / 2**20

    rows, notes = [], []
    load_before = os.getloadavg()[0]

    def add(
        what: str,
        path: Path,
        examples: int,
        inside: float,
        wall: float,
        peak: float,
        extra: str = "",
    ) -> float:
        rate = examples / inside
        rows.append(
            [
                what,
                f"{path.stat().st_size / 2**20:,.0f} MB",
                f"{examples:,}",
                f"{inside:.2f}",
                f"{rate:,.0f}",
                f"{wall:.2f}",
                f"{peak:,.0f}",
                extra,
            ]
        )
        print(rows[-1], flush=True)
        return rate

    sk_wall, sk_inside, sk_peak = _sklearn(big, pin=True)
    add(
        "scikit-learn `load_svmlight_file` (reads only)",
        big,
        args.rows,
        sk_inside,
        sk_wall,
        sk_peak,
    )
    parse_wall, parse_inside, parse_peak = _parse_only(big, args.chunk_size, pin=True)
    parse_rate = add(
        "compiled streaming reader alone (`stream.scan`, reads only)",
        big,
        args.rows,
        parse_inside,
        parse_wall,
        parse_peak,
        f"{sk_inside / parse_inside:.1f}x scikit-learn",
    )
    one = _train(big, args, pin=True)
    accuracy = _accuracy(one["model"], test)
    one_rate = add(
        "`train --stream --epochs 1`",
        big,
        args.rows,
        one["inside"],
        one["wall"],
        one["peak"],
        f"{sk_inside / one['inside']:.1f}x scikit-learn's read alone; the epoch "
        f"alone {one['examples'] / one['epoch']:,.0f}/s; accuracy {accuracy:.4f}",
    )
    two = _train(big, args, pin=False)
    two_rate = add(
        "same on 2 cores (the reader thread on the other core)",
        big,
        args.rows,
        two["inside"],
        two["wall"],
        two["peak"],
        f"the epoch alone {two['examples'] / two['epoch']:,.0f}/s",
    )
    if args.sol:
        sol_wall, sol_peak = _sol(args.sol, big)
        add(
            "SOL `lsol_c -a perceptron` (2 cores: loading and learning threads)",
            big,
            args.rows,
            sol_wall,
            sol_wall,
            sol_peak,
            f"`train --stream` on 2 cores: {sol_wall / two['wall']:.2f}x "
            "SOL's rows/s, whole processes",
        )
    three = _train(big, args, pin=False, epochs=3)
    add(
        "`train --stream --epochs 3` on 2 cores (epochs 2 and 3 from the parse cache)",
        big,
        3 * args.rows,
        three["inside"],
        three["wall"],
        three["peak"],
        f"the epochs alone {three['examples'] / three['epoch']:,.0f}/s",
    )
    for verb in ("predict", "evaluate"):
        wall, peak = _reading(verb, two["model"], big)
        add(
            f"`{verb}` over the file on 2 cores (whole process)",
            big,
            args.rows,
            wall,
            wall,
            peak,
            "`s` is the wall time" + (": labels written to a file" if verb == "predict" else ""),
        )
    single = _train(big, args, pin=False, env={"OPENBLAS_NUM_THREADS": "1"})
    add(
        "same on 2 cores, `OPENBLAS_NUM_THREADS=1`",
        big,
        args.rows,
        single["inside"],
        single["wall"],
        single["peak"],
        f"the epoch alone {single['examples'] / single['epoch']:,.0f}/s",
    )
    bigger = _train(big, args, pin=True, chunk_size=5 * args.chunk_size)
    add(
        f"same with `--chunk-size {5 * args.chunk_size}`",
        big,
        args.rows,
        bigger["inside"],
        bigger["wall"],
        bigger["peak"],
        f"the epoch alone {bigger['examples'] / bigger['epoch']:,.0f}/s: fewer `partial_fit` calls",
    )
    tenth = _train(small, args, pin=True)
    add(
        "same, a tenth of the rows (memory flat?)",
        small,
        small_rows,
        tenth["inside"],
        tenth["wall"],
        tenth["peak"],
        f"the epoch alone {tenth['examples'] / tenth['epoch']:,.0f}/s",
    )
    text_runs, text_rates = [], {}
    for fmt, path in texts.items():
        for reference in (True, False):
            run = _train(path, args, pin=True, text=True, reference=reference)
            how = "reference Python path (before)" if reference else "compiled hashing reader"
            text_rates[fmt, reference] = run["examples"] / run["epoch"]
            add(
                f"text path: the same rows as `{fmt}`, `--features hashing`, {how}",
                path,
                args.text_rows,
                run["inside"],
                run["wall"],
                run["peak"],
                f"the epoch alone {run['examples'] / run['epoch']:,.0f}/s",
            )
            text_runs.append(run)
    for run in (one, two, three, single, bigger, tenth, *text_runs):
        run["model"].unlink(missing_ok=True)

    load = os.getloadavg()[0]
    notes.append(
        f"Load average {load_before:.1f} before and {load:.1f} after the runs on "
        f"{os.cpu_count()} CPUs: other work shared the machine, and a run pinned to one core "
        "shares it with whatever else the scheduler puts there."
    )
    met_rate = one_rate >= TARGET_RATE
    ratio = sk_inside / one["inside"]
    notes.append(
        f"Targets, one core, end to end: >= {TARGET_RATE:,} examples/s: "
        f"**{'met' if met_rate else 'missed'}** ({one_rate:,.0f}/s; {two_rate:,.0f}/s on 2 "
        f"cores); >= {TARGET_RATIO:.0f}x scikit-learn's `load_svmlight_file` on the same "
        f"bytes: **{'met' if ratio >= TARGET_RATIO else 'missed'}** ({ratio:.1f}x for the "
        f"whole training run, {sk_inside / parse_inside:.1f}x for the reader alone at "
        f"{parse_rate:,.0f} rows/s); peak RSS {one['peak']:,.0f} MB for the file against "
        f"{tenth['peak']:,.0f} MB for a tenth of it."
    )
    notes.append(
        'Text path (`vw` and `counts` with a hashing `TextFeaturizer(tokenizer="pairs")`, '
        "`--weighting tf`, no names of hashed columns kept, the default): the compiled "
        "reader parses, lowercases and hashes in one pass; the epoch alone "
        + ", ".join(
            f"`{fmt}` {text_rates[fmt, False]:,.0f}/s against {text_rates[fmt, True]:,.0f}/s "
            f"({text_rates[fmt, False] / text_rates[fmt, True]:.1f}x)"
            for fmt in texts
        )
        + ". The models are the reference path's bit for bit (tests/test_hashing_reader.py); "
        "`s` is the whole run inside the child, reading, training and saving."
    )
    header = [
        "run (one core unless said)",
        "file",
        "examples",
        "s",
        "examples/s",
        "wall s",
        "peak RSS MB",
        "notes",
    ]
    start_marker, end_marker = _report.markers(SECTION)
    section = "\n".join(
        [
            start_marker,
            "## Streaming at parse speed (`benchmarks/bench_stream.py`)",
            "",
            f"- Command: `{command}`",
            f"- Date: {started}",
            f"- Machine: {_report.machine_info()}",
            f"- Data: generated svmlight, {args.rows:,} rows ({size_mb:,.0f} MB) of {args.nnz} "
            f"distinct binary features among {args.features:,}, labels from a hidden separator "
            f"with noise; `--chunk-size {args.chunk_size}`, averaged perceptron. Every run is a "
            "child process pinned to one core with `taskset` unless said; `s` is timed inside "
            "it (for training, `train --json`'s seconds: the epochs, whatever pass reads the "
            "file before them, and saving the model), `wall s` from outside (interpreter "
            "start, imports and loading the JIT cache added); examples/s is examples / `s`. "
            "Peak RSS is the child's own. Accuracy on 50,000 held-out rows.",
            "",
            _report.md_table(header, rows),
            "",
            "\n\n".join(notes),
            end_marker,
        ]
    )
    print(section)
    _report.write_section(Path(args.output), section, SECTION)
    return 0


if __name__ == "__main__":
    sys.exit(main())
