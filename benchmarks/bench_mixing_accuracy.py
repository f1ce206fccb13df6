"""Accuracy of iterative parameter mixing at 2 to 16 shards, strategy by strategy.

Issue 13 ("Accuracy at many shards") asks which of the strategies the literature offers
keeps the mixed model within 0.5 points of the serial one at 16 shards. For each data
set and estimator (10 epochs, shuffle, ``random_state=0``), this script fits the serial
model, then ``mix_threads(n_shards=k, n_threads=2)`` for each strategy and each shard
count ``k``, and reports the test accuracy's difference from serial, in points:

* ``uniform``: the mean of the shards' weights (the default);
* ``mistakes``: weighted by each shard's mistakes (McDonald et al., 2010);
* ``sum``: the start plus the sum of the shards' changes;
* ``mixes``: ``average="mixes"``, the averaged model is the mean of the mixed weights of
  the epochs instead of the mean over every shard's examples;
* ``local2``, ``local4``: ``local_epochs=2`` or 4 (passes per shard between mixes: 20
  or 40 passes over the data for 10 mixes, 2 or 4 times the serial work);
* ``redeal``: rows dealt out to the shards afresh every epoch;
* combinations (``mistakes+redeal``, ``mistakes+mixes``...).

Which cores run the shards does not change the model (16 shards on 2 threads are the
16-thread model), so the accuracies are those of any machine; only the seconds printed
on the console depend on this one.

Usage::

    PYTHONPATH=src python benchmarks/bench_mixing_accuracy.py \\
        [--datasets synthetic,20news,mnist,a9a,sentiment] [--synthetic-rows 3600000] \\
        [--shards 2,4,8,16] [--strategies uniform,mistakes,...] \\
        [--estimators averaged,perceptron,logistic] [--other-strategies uniform,...] \\
        [--output benchmarks/RESULTS.md]

The section between ``<!-- bench_mixing_accuracy:start -->`` and
``<!-- bench_mixing_accuracy:end -->`` of the output file is rewritten after each data
set (so an interrupted run leaves the finished ones).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import shlex
import sys
import time
from pathlib import Path

import numpy as np

import _datasets  # benchmarks/ is sys.path[0]; it also puts src/ on sys.path if needed
import _report

BENCH_DIR = Path(__file__).resolve().parent
NAME = "bench_mixing_accuracy"
EPOCHS = 10
SEED = 0
TARGET = -0.5  # points: the mixed model may lose at most half a point

#: Strategy name -> keyword arguments of ``mix_threads``.
STRATEGIES: dict[str, dict] = {
    "uniform": {},
    "mistakes": {"mixing": "mistakes"},
    "sum": {"mixing": "sum"},
    "mixes": {"average": "mixes"},
    "local2": {"local_epochs": 2},
    "redeal": {"redeal": True},
    "mistakes+redeal": {"mixing": "mistakes", "redeal": True},
    "mistakes+mixes": {"mixing": "mistakes", "average": "mixes"},
    "mixes+redeal": {"average": "mixes", "redeal": True},
    "mistakes+mixes+redeal": {"mixing": "mistakes", "average": "mixes", "redeal": True},
    "local2+redeal": {"local_epochs": 2, "redeal": True},
    "local4": {"local_epochs": 4},
    "local4+redeal": {"local_epochs": 4, "redeal": True},
    "mistakes+local2": {"mixing": "mistakes", "local_epochs": 2},
    "sum+redeal": {"mixing": "sum", "redeal": True},
}
DEFAULT_STRATEGIES = (
    "uniform,mistakes,sum,mixes,local2,redeal,"
    "mistakes+redeal,mistakes+mixes,mixes+redeal,mistakes+mixes+redeal"
)


def _estimators() -> dict:
    from perceptrons import AveragedPerceptron, LogisticRegressionSGD, Perceptron

    return {
        "averaged": (
            "AveragedPerceptron",
            lambda: AveragedPerceptron(max_epochs=EPOCHS, shuffle=True, random_state=SEED),
        ),
        "perceptron": (
            "Perceptron",
            lambda: Perceptron(max_epochs=EPOCHS, shuffle=True, random_state=SEED),
        ),
        "logistic": (
            "LogisticRegressionSGD(learning_rate=1, average=True)",
            lambda: LogisticRegressionSGD(
                learning_rate=1.0, average=True, max_epochs=EPOCHS, random_state=SEED
            ),
        ),
    }


def _applies(estimator, options: dict) -> bool:
    """average='mixes' needs an averaged model."""
    return options.get("average") != "mixes" or getattr(estimator, "_averaged", False)


def study(
    data,
    make,
    strategies: list[str],
    shards: list[int],
    n_threads: int,
    serial_seeds: int = 1,
    done=None,
) -> dict:
    """Serial accuracy and, per strategy and shard count, the mixed accuracy; with
    ``serial_seeds`` > 1, also the spread of the serial accuracy over random_state
    0, 1, ... (how much a different shuffle alone moves it). ``done(results)`` is called
    after each strategy (to save what is finished)."""
    from perceptrons.parallel import mix_threads

    # JIT; the training sets may be sorted by class (20news): a random sample.
    warm = np.random.RandomState(0).choice(data.X_train.shape[0], 300, replace=False)
    make().set_params(max_epochs=1).fit(data.X_train[warm], data.y_train[warm])
    start = time.perf_counter()
    serial = make().fit(data.X_train, data.y_train)
    serial_seconds = time.perf_counter() - start
    reference = float(serial.score(data.X_test, data.y_test))
    print(f"    serial: {reference:.4f} ({serial_seconds:.1f} s)", flush=True)
    results: dict = {"serial": reference, "serial_seconds": serial_seconds, "mixed": {}}
    if serial_seeds > 1:
        add_seed_spread(results, data, make, serial_seeds)
    for name in strategies:
        options = STRATEGIES[name]
        if not _applies(make(), options):
            continue
        row = {}
        for k in shards:
            start = time.perf_counter()
            try:
                model = mix_threads(
                    make(), data.X_train, data.y_train, n_shards=k, n_threads=n_threads, **options
                )
            except ValueError as exc:  # a strategy the estimator does not support
                print(f"    {name}: not applicable ({exc})", flush=True)
                break
            seconds = time.perf_counter() - start
            accuracy = float(model.score(data.X_test, data.y_test))
            row[k] = accuracy
            print(
                f"    {name:>22} {k:>2} shards: {accuracy:.4f} "
                f"({100 * (accuracy - reference):+.2f}) {seconds:.1f} s",
                flush=True,
            )
        if row:
            results["mixed"][name] = row
            if done is not None:
                done(results)
    return results


def add_seed_spread(results: dict, data, make, serial_seeds: int) -> None:
    """The serial accuracy with random_state 0 (already in ``results``), 1, 2, ..."""
    others = [
        float(
            make()
            .set_params(random_state=seed)
            .fit(data.X_train, data.y_train)
            .score(data.X_test, data.y_test)
        )
        for seed in range(1, serial_seeds)
    ]
    results["seeds"] = [results["serial"], *others]
    print(f"    serial over {serial_seeds} seeds: {results['seeds']}", flush=True)


def _delta(results: dict, name: str, k: int) -> float | None:
    accuracy = results["mixed"].get(name, {}).get(k)
    return None if accuracy is None else 100 * (accuracy - results["serial"])


def render(all_results: dict, shards: list[int], commands: list[str], started) -> str:
    """``all_results``: estimator label -> data set name -> ((description, protocol),
    study results)."""
    start_marker, end_marker = _report.markers(NAME)
    lines = [
        start_marker,
        "## Accuracy of parameter mixing at many shards (`benchmarks/bench_mixing_accuracy.py`)",
        "",
        *[f"- Command: `{command}`" for command in commands],
        f"- Date: {started.isoformat(timespec='seconds')}",
        f"- Machine: {_report.machine_info()}",
        f"- Protocol: {EPOCHS} epochs (mixes), shuffle, random_state={SEED}; "
        "`mix_threads(estimator, X, y, n_shards=k, n_threads=2, **strategy)`. "
        "Δ = 100 × (mixed − serial test accuracy), in points; target Δ ≥ −0.5. "
        "The model does not depend on how many cores run the shards (16 shards on 2 threads "
        "give the 16-thread model), so these accuracies hold on any machine; no timing here. "
        "Strategies: `uniform` mean of the shards' weights; "
        "`mistakes` weighted by each shard's mistakes; `sum` start + Σ of the changes; "
        "`mixes` average='mixes' (mean of the mixed weights of the epochs); `local2`, "
        "`local4` local_epochs=2 or 4 (2 or 4 times the passes: 20 or 40 over the data for "
        "10 mixes); `redeal` rows "
        "dealt to the shards afresh each epoch; `a+b` both.",
        "",
    ]
    for label, per_data in all_results.items():
        lines += [f"### {label}", ""]
        names: list[str] = []
        for _, results in per_data.values():
            names += [n for n in results["mixed"] if n not in names]
        for data_name, ((description, protocol), results) in per_data.items():
            spread = ""
            if results.get("seeds"):
                seeds = results["seeds"]
                spread = (
                    f" Serial accuracy over random_state 0-{len(seeds) - 1}: "
                    f"{min(seeds):.4f}-{max(seeds):.4f} (standard deviation "
                    f"{100 * float(np.std(seeds)):.2f} points): the shuffle alone moves it "
                    "that much."
                )
            lines += [
                f"#### {data_name}: serial {results['serial']:.4f}",
                "",
                f"{description}. Protocol: {protocol}.{spread}",
                "",
            ]
            table = []
            for name in names:
                if name not in results["mixed"]:
                    continue
                deltas = [_delta(results, name, k) for k in shards]
                shown = [d for d in deltas if d is not None]
                table.append(
                    [f"`{name}`"]
                    + ["" if d is None else f"{d:+.2f}" for d in deltas]
                    + [f"{min(shown):+.2f}" if shown else "", _verdict(shown)]
                )
            header = ["strategy"] + [f"Δ {k} shards" for k in shards] + ["worst", "Δ ≥ −0.5"]
            lines += [_report.md_table(header, table), ""]
        # Summary over the data sets: the worst Δ of each data set (over the shard
        # counts), the worst at 16 (the largest count) and below, and where it meets.
        big = max(shards)
        small = [k for k in shards if k != big]
        table = []
        for name in names:
            at_big, at_small, per_set, met, complete = [], [], [], 0, True
            for results in (r for _, r in per_data.values()):
                deltas = [_delta(results, name, k) for k in shards]
                complete &= None not in deltas
                pairs = list(zip(shards, deltas, strict=True))
                at_big += [d for k, d in pairs if d is not None and k == big]
                at_small += [d for k, d in pairs if d is not None and k != big]
                shown = [d for d in deltas if d is not None]
                per_set.append(f"{min(shown):+.2f}" if shown else "")
                met += bool(shown) and min(shown) >= TARGET
            worst_data = ""
            if at_big:
                worst_data = min(
                    (n for n in per_data if _delta(per_data[n][1], name, big) is not None),
                    key=lambda n: _delta(per_data[n][1], name, big),
                )
            table.append(
                [
                    f"`{name}`",
                    *per_set,
                    f"{min(at_big):+.2f} ({worst_data})" if at_big else "",
                    f"{min(at_small):+.2f}" if at_small else "",
                    f"{met} / {len(per_data)}",
                    _verdict(at_big + at_small) + ("" if complete else " (partial)"),
                ]
            )
        lines += [
            f"#### Summary, {label}: worst Δ (points) over {', '.join(per_data)}",
            "",
            _report.md_table(
                ["strategy"]
                + [f"{n}: worst" for n in per_data]
                + [
                    f"worst at {big} shards (data set)",
                    f"worst at {', '.join(map(str, small))} shards",
                    "data sets with Δ ≥ −0.5 at every count",
                    "Δ ≥ −0.5 everywhere",
                ],
                table,
            ),
            "",
            _verdicts(per_data, names, shards),
            "",
        ]
    lines.append(end_marker)
    return "\n".join(lines)


def _verdicts(per_data: dict, names: list[str], shards: list[int]) -> str:
    """Which strategies meet the target everywhere; else the least bad worst cases, over
    every shard count and at the largest, with and without extra passes (local*)."""
    worst, worst_big = {}, {}
    for name in names:
        every = [_delta(r, name, k) for _, r in per_data.values() for k in shards]
        if None in every:
            continue  # not run on every data set and count
        worst[name] = min(every)
        worst_big[name] = min(_delta(r, name, max(shards)) for _, r in per_data.values())
    if not worst:
        return ""
    meeting = [f"`{n}`" for n in worst if worst[n] >= TARGET]
    cheap = [n for n in worst if not n.startswith("local") and "+local" not in n]
    parts = [
        "Meets Δ ≥ −0.5 at every shard count on every data set: "
        + (", ".join(meeting) if meeting else "**none**")
        + "."
    ]
    for label, pool in (("any strategy", list(worst)), ("without extra passes", cheap)):
        if pool:
            best = max(pool, key=worst.get)
            best_big = max(pool, key=worst_big.get)
            parts.append(
                f"Least bad worst case ({label}): `{best}` {worst[best]:+.2f} over every count; "
                f"at {max(shards)} shards `{best_big}` {worst_big[best_big]:+.2f}."
            )
    return " ".join(parts)


def _verdict(deltas: list[float]) -> str:
    if not deltas:
        return ""
    return "yes" if min(deltas) >= TARGET else f"no ({min(deltas):+.2f})"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="synthetic,20news,mnist,a9a,sentiment")
    parser.add_argument(
        "--synthetic-rows",
        type=int,
        default=_datasets.SYNTHETIC_ROWS,
        help="training rows of the synthetic set (full size: 3,600,000)",
    )
    parser.add_argument("--shards", default="2,4,8,16")
    parser.add_argument("--strategies", default=DEFAULT_STRATEGIES, help=f"of {list(STRATEGIES)}")
    parser.add_argument("--estimators", default="averaged", help="averaged,perceptron,logistic")
    parser.add_argument(
        "--other-strategies",
        default="uniform,mistakes,mixes,redeal,mistakes+redeal",
        help="the strategies run for the estimators other than averaged",
    )
    parser.add_argument("--threads", type=int, default=2, help="threads running the shards")
    parser.add_argument(
        "--serial-seeds",
        type=int,
        default=1,
        help="also fit the serial model with random_state 1..N-1: the seed noise",
    )
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--output", type=Path, default=BENCH_DIR / "RESULTS.md")
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help="a JSON file of earlier runs' results: read, merged with this run's (which "
        "replace those of the same estimator and data set), written back; the section "
        "then shows them all, with every command that made them",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="skip the estimators and data sets already in --results",
    )
    args = parser.parse_args(argv)
    for option in ("strategies", "other_strategies"):
        unknown = [s for s in getattr(args, option).split(",") if s not in STRATEGIES]
        if unknown:
            parser.error(f"unknown strategies {unknown}; choose from {list(STRATEGIES)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = shlex.join(["python", *sys.argv]) if argv is None else shlex.join(argv)
    started = _dt.datetime.now(_dt.timezone.utc)
    shards = [int(k) for k in args.shards.split(",")]
    estimators = _estimators()
    print(f"{NAME}: {_report.machine_info()}", flush=True)
    all_results: dict = {}
    commands = []
    if args.results is not None and args.results.exists():
        saved = json.loads(args.results.read_text())
        commands = saved["commands"]
        for label, per_data in saved["results"].items():
            for data_name, (info, results) in per_data.items():
                results["mixed"] = {
                    n: {int(k): a for k, a in row.items()} for n, row in results["mixed"].items()
                }
                all_results.setdefault(label, {})[data_name] = (tuple(info), results)
    names = [name for name in args.datasets.split(",") if name]
    if names:  # no data set: only render the saved results
        commands.append(command)

    def save() -> None:
        _report.write_section(args.output, render(all_results, shards, commands, started), NAME)
        if args.results is not None:
            args.results.write_text(json.dumps({"commands": commands, "results": all_results}))

    for name in names:
        try:
            data = _datasets.load(name, args.data_dir, synthetic_rows=args.synthetic_rows)
        except FileNotFoundError as exc:
            print(f"{name}: skipped ({exc})", flush=True)
            continue
        print(f"{data.name}: {data.describe()} ({data.load_seconds:.1f} s)", flush=True)
        for key in args.estimators.split(","):
            label, make = estimators[key]
            strategies = (args.strategies if key == "averaged" else args.other_strategies).split(
                ","
            )
            if args.resume and data.name in all_results.get(label, {}):
                print(f"  {label}: in {args.results}, skipped", flush=True)
                saved_results = all_results[label][data.name][1]
                if args.serial_seeds > 1 and len(saved_results.get("seeds", [])) < 2:
                    add_seed_spread(saved_results, data, make, args.serial_seeds)
                    save()
                continue
            print(f"  {label}", flush=True)
            info = (data.describe(), data.protocol)  # not the arrays: they are freed
            saved = all_results.setdefault(label, {}).get(data.name)

            def done(results, info=info, saved=saved, label=label, name=data.name):
                if saved is not None and saved[1]["serial"] == results["serial"]:
                    # Same serial model: keep the saved strategies this run does not run.
                    results = {
                        **results,
                        "mixed": {**saved[1]["mixed"], **results["mixed"]},
                        "seeds": results.get("seeds") or saved[1].get("seeds"),
                    }
                all_results[label][name] = (info, results)
                save()

            done(study(data, make, strategies, shards, args.threads, args.serial_seeds, done))
        del data
    if not all_results:
        print("no data set found: nothing written", flush=True)
        return 1
    save()
    print(f"wrote {args.output}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
