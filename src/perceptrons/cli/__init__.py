"""The ``perceptrons`` command: train, evaluate, predict, inspect, plot and demo.

Thin by design: parse the arguments, call the public API (:mod:`perceptrons.io.formats`,
:mod:`perceptrons.features`, the estimators, :mod:`perceptrons.io.persist`,
:mod:`perceptrons.plots`), print. A user's mistake (a missing or malformed file, an
unknown label, a model trained on other features) ends with a one-line message and exit
code 1; a usage error with exit code 2. ``PERCEPTRONS_DEBUG=1`` shows tracebacks.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

EXIT_DATA, EXIT_USAGE = 1, 2
ALGORITHMS = ("perceptron", "averaged", "voted")


class UserError(Exception):
    """A problem with the user's files or arguments: reported in one line."""

    def __init__(self, message: str, code: int = EXIT_DATA) -> None:
        super().__init__(message)
        self.code = code


# ------------------------------------------------------------------------ helpers
def _say(args: argparse.Namespace, text: str = "") -> None:
    """Human-readable output: stdout, or stderr when stdout carries JSON."""
    if not getattr(args, "quiet", False):
        print(text, file=sys.stderr if getattr(args, "json", False) else sys.stdout, flush=True)


def _read(args: argparse.Namespace, path: str, *, labels: bool | None, n_features=None):
    from perceptrons.io import formats as data

    dataset = data.read_data(
        path,
        args.format,
        skip_bad_lines=args.skip_bad_lines,
        labels=labels,
        label_column=args.label_column,
        n_features=n_features,
    )
    if dataset.skipped:
        line, reason = dataset.skipped[0]
        _say(
            args,
            f"{dataset.source}: skipped {len(dataset.skipped)} bad line(s), "
            f"the first at line {line}: {reason}",
        )
    return dataset


def _estimator(args: argparse.Namespace):
    from perceptrons import AveragedPerceptron, Perceptron, VotedPerceptron

    common = {
        "max_epochs": args.epochs,
        "shuffle": not args.no_shuffle,
        "random_state": args.seed,
        "delta": args.delta,
    }
    rule = {"update": args.update, "margin": args.margin, "C": args.C}
    if args.algorithm == "perceptron":
        return Perceptron(**common, **rule)
    if args.algorithm == "averaged":
        return AveragedPerceptron(**common, **rule)
    if (args.update, args.margin) != ("perceptron", 0.0):
        raise UserError("--update and --margin apply to perceptron and averaged", EXIT_USAGE)
    gamma = args.gamma if args.gamma in ("scale", "auto") else float(args.gamma)
    return VotedPerceptron(
        kernel=args.kernel,
        degree=args.degree,
        gamma=gamma,
        coef0=args.coef0,
        prediction=args.prediction,
        multiclass=args.multiclass,
        **common,
    )


def _featurizer(args: argparse.Namespace):
    from perceptrons.features import TextFeaturizer

    return TextFeaturizer(
        vocabulary="fit" if args.features == "vocabulary" else "hashing",
        n_features=args.n_features,
        ngram_range=(1, args.ngrams),
        weighting=args.weighting,
        sublinear_tf=args.weighting == "tfidf",
        tokenizer=args.tokenizer,
        min_df=args.min_df,
    )


def _split(model) -> tuple[Any, Any]:
    """A saved model is an estimator or a (featurizer, estimator) pipeline."""
    if hasattr(model, "steps"):
        return model.steps[0][1], model.steps[-1][1]
    return None, model


def _inputs(featurizer, estimator, dataset, path: str):
    """What the model's predict takes from ``dataset``: raw text or a feature matrix."""
    if featurizer is not None:
        if dataset.texts is None:
            raise UserError(
                f"{path}: the model reads raw text, but this file is {dataset.format} "
                "(numeric features); pass a text file or --format"
            )
        return dataset.texts
    if dataset.X is None:
        raise UserError(
            f"{path}: the model reads numeric features, but this file is raw text "
            f"({dataset.format}); pass a file in the training data's format"
        )
    if dataset.X.shape[1] != estimator.n_features_in_:
        raise UserError(
            f"{path}: {dataset.X.shape[1]} features, but the model was trained on "
            f"{estimator.n_features_in_}: it was trained on other features"
        )
    return dataset.X


def _check_labels(estimator, y: np.ndarray, path: str) -> None:
    known = {str(label) for label in estimator.classes_}
    unseen = sorted({str(label) for label in y} - known)
    if unseen:
        shown = ", ".join(unseen[:5]) + (" ..." if len(unseen) > 5 else "")
        raise UserError(
            f"{path}: label(s) never seen in training: {shown} "
            f"(the model knows {len(known)}: {', '.join(sorted(known)[:10])})"
        )


def _as_model_labels(estimator, y: np.ndarray) -> np.ndarray:
    """File labels (read as text or numbers) in the dtype of the model's classes."""
    by_text = {str(label): label for label in estimator.classes_}
    return np.array([by_text[str(label)] for label in y], dtype=estimator.classes_.dtype)


def _write_atomically(path: str, text: str) -> None:
    target = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _progress_bar(args: argparse.Namespace, total: int, desc: str):
    from tqdm import tqdm

    # disable=None: a bar only on a terminal, so logs and pipes stay clean.
    return tqdm(
        total=total,
        desc=desc,
        unit="ex",
        unit_scale=True,
        file=sys.stderr,
        leave=False,
        disable=True if args.quiet else None,
    )


def _train_with_curve(args, estimator, X, y, X_dev=None, y_dev=None, desc="training"):
    """Fit epoch by epoch; return the per-epoch records (mistakes, dev accuracy)."""
    records = []
    total = args.epochs * X.shape[0]
    with _progress_bar(args, total, desc) as bar:
        for record in estimator.fit_epochs(X, y, progress=bar.update):
            entry = {"epoch": record["epoch"], "mistakes": record["mistakes"]}
            prefix = "" if desc == "training" else f"{desc} "
            line = f"{prefix}epoch {record['epoch']}: {record['mistakes']} mistakes in "
            line += f"{record['examples']} examples"
            if X_dev is not None:
                entry["dev_accuracy"] = float(estimator.score(X_dev, y_dev))
                line += f", dev accuracy {entry['dev_accuracy']:.4f}"
            records.append(entry)
            if args.quiet:
                continue
            bar.clear()
            _say(args, line)
    return records


# ----------------------------------------------------------------------- commands
def cmd_train(args: argparse.Namespace) -> int:
    from sklearn.pipeline import make_pipeline

    from perceptrons.io import persist

    if args.stream:
        return _train_stream(args)
    started = time.perf_counter()
    train = _read(args, args.data, labels=True)
    dev = _read(args, args.dev, labels=True) if args.dev else None
    estimator = _estimator(args)
    featurizer = None
    if train.texts is not None:
        featurizer = _featurizer(args)
        X = featurizer.fit_transform(train.texts)
        X_dev = featurizer.transform(dev.texts) if dev is not None else None
    else:
        X = train.X
        X_dev = None
        if dev is not None:
            if dev.X is None or dev.X.shape[1] > X.shape[1]:
                raise UserError(f"{args.dev}: its features do not match {args.data}'s")
            X_dev = dev.X
            if X_dev.shape[1] < X.shape[1]:  # svmlight files only list the features they use
                X_dev = _pad_columns(X_dev, X.shape[1])
    _say(
        args,
        f"{train.source}: {X.shape[0]:,} examples, {X.shape[1]:,} features "
        f"({train.format}), {len(np.unique(train.y))} classes",
    )
    y_dev = dev.y if dev is not None else None
    if args.workers or args.scheduler:
        estimator, records = _train_mixing(args, estimator, X, train.y, X_dev, y_dev)
    else:
        records = _train_with_curve(args, estimator, X, train.y, X_dev, y_dev)
    model = make_pipeline(featurizer, estimator) if featurizer is not None else estimator
    path = persist.save(model, args.output)
    result: dict[str, Any] = {
        "model": str(path),
        "algorithm": args.algorithm,
        "examples": int(X.shape[0]),
        "features": int(X.shape[1]),
        "classes": [str(c) for c in estimator.classes_],
        "epochs": records,
        "train_accuracy": float(estimator.score(X, train.y)),
        "seconds": round(time.perf_counter() - started, 3),
    }
    if dev is not None:
        result["dev_accuracy"] = records[-1]["dev_accuracy"]
    _say(args, f"train accuracy {result['train_accuracy']:.4f}; model written to {path}")
    if args.plot:
        _plot_training(args, records, estimator, X_dev, dev)
    if args.json:
        print(json.dumps(result, indent=2))
    return 0


def _train_stream(args: argparse.Namespace) -> int:
    """train --stream: chunks of the file through partial_fit, memory bounded by a chunk."""
    from sklearn.pipeline import make_pipeline
    from tqdm import tqdm

    from perceptrons.io import persist, stream
    from perceptrons.io.formats import detect_format

    started = time.perf_counter()
    fmt = detect_format(args.data) if args.format == "auto" else args.format
    featurizer = None
    if fmt in ("fasttext", "tsv", "sentiment", "lines"):
        if args.features != "hashing" or args.weighting == "tfidf":
            raise UserError(
                "--stream trains text with --features hashing and --weighting tf or binary "
                "(a vocabulary or idf weights need the whole file first)",
                EXIT_USAGE,
            )
        featurizer = _featurizer(args)
    estimator = _estimator(args)
    dev = _read(args, args.dev, labels=True) if args.dev else None
    classes = args.classes.split(",") if args.classes else None
    size = os.path.getsize(args.data)
    bar = tqdm(
        total=size * args.epochs,
        unit="B",
        unit_scale=True,
        file=sys.stderr,
        leave=False,
        disable=True if args.quiet else None,
    )
    examples_seen = [0, time.perf_counter()]

    def progress(n_bytes: int, n_examples: int) -> None:
        examples_seen[0] += n_examples
        rate = examples_seen[0] / max(time.perf_counter() - examples_seen[1], 1e-9)
        bar.set_postfix_str(f"{rate:,.0f} examples/s", refresh=False)
        bar.update(n_bytes)

    def on_epoch(record: dict) -> None:
        line = (
            f"epoch {record['epoch']}: {record['mistakes']} mistakes in "
            f"{record['examples']} examples ({record['examples'] / record['seconds']:,.0f} "
            "examples/s)"
        )
        if dev is not None:
            inputs = (
                dev.texts
                if featurizer is not None
                else _pad_columns(dev.X, estimator.n_features_in_)
            )
            model = make_pipeline(featurizer, estimator) if featurizer is not None else estimator
            record["dev_accuracy"] = float(model.score(inputs, dev.y))
            line += f", dev accuracy {record['dev_accuracy']:.4f}"
        bar.clear()
        _say(args, line)

    with bar:
        report = stream.fit_stream(
            estimator,
            args.data,
            format=fmt,
            epochs=args.epochs,
            chunk_size=args.chunk_size,
            featurizer=featurizer,
            classes=classes,
            shuffle_window=args.shuffle_window,
            random_state=args.seed,
            skip_bad_lines=args.skip_bad_lines,
            progress=progress,
            on_epoch=on_epoch,
        )
    model = make_pipeline(featurizer, estimator) if featurizer is not None else estimator
    path = persist.save(model, args.output)
    _say(args, f"model written to {path}")
    if args.json:
        result = {
            "model": str(path),
            "algorithm": args.algorithm,
            "streamed": True,
            "examples": report.epochs[-1]["examples"],
            "classes": [str(c) for c in estimator.classes_],
            "epochs": report.epochs,
            "seconds": round(time.perf_counter() - started, 3),
        }
        print(json.dumps(result, indent=2))
    return 0


def _train_mixing(args, estimator, X, y, X_dev, y_dev):
    """train --workers/--scheduler: iterative parameter mixing on a Dask cluster."""
    if args.algorithm == "voted":
        raise UserError("--workers and --scheduler train perceptron or averaged", EXIT_USAGE)
    try:
        from perceptrons.parallel import ParameterMixing
    except ImportError as missing:  # pragma: no cover - the extra is in the test set
        raise UserError(f'{missing}: pip install "perceptrons[distributed]"') from None
    mixing = ParameterMixing(estimator, n_partitions=args.workers, client=args.scheduler)
    records = []
    for record in mixing.fit_epochs(X, y):
        entry = {"epoch": record["epoch"], "mistakes": record["mistakes"]}
        line = (
            f"epoch {record['epoch']}: {record['mistakes']} mistakes in {record['examples']} "
            f"examples on {len(record['shard_mistakes'])} workers"
        )
        if X_dev is not None:
            entry["dev_accuracy"] = float(mixing.score(X_dev, y_dev))
            line += f", dev accuracy {entry['dev_accuracy']:.4f}"
        records.append(entry)
        _say(args, line)
    return mixing.estimator_, records


def _pad_columns(X, n_columns: int):
    import scipy.sparse as sp

    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_columns))


def _plot_training(args, records, estimator, X_dev, dev) -> None:
    from sklearn.metrics import confusion_matrix

    from perceptrons import plots

    curve = {"mistakes": [r["mistakes"] for r in records]}
    if dev is not None:
        curve["dev_error"] = [1 - r["dev_accuracy"] for r in records]
    written = [plots.learning_curves({args.algorithm: curve}, args.plot, title=args.data)]
    if dev is not None:
        matrix = confusion_matrix(dev.y, estimator.predict(X_dev), labels=estimator.classes_)
        confusion_path = Path(args.plot).with_name(Path(args.plot).stem + "-confusion.png")
        written.append(plots.confusion_matrix(matrix, estimator.classes_, confusion_path))
    _say(args, "plots written to " + ", ".join(str(p) for p in written))


def _load_model(path: str):
    from perceptrons.io import persist

    return persist.load(path)


def cmd_evaluate(args: argparse.Namespace) -> int:
    from sklearn.metrics import accuracy_score, confusion_matrix, precision_recall_fscore_support

    model = _load_model(args.model)
    featurizer, estimator = _split(model)
    n_features = None if featurizer is not None else estimator.n_features_in_
    dataset = _read(args, args.data, labels=True, n_features=n_features)
    inputs = _inputs(featurizer, estimator, dataset, args.data)
    _check_labels(estimator, dataset.y, args.data)
    y_true = _as_model_labels(estimator, dataset.y)
    y_pred = model.predict(inputs)
    classes = estimator.classes_
    precision, recall, f1, support = precision_recall_fscore_support(
        y_true, y_pred, labels=classes, zero_division=0
    )
    matrix = confusion_matrix(y_true, y_pred, labels=classes)
    result = {
        "examples": len(y_true),
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "macro_f1": float(np.mean(f1)),
        "classes": {
            str(c): {
                "precision": float(p),
                "recall": float(r),
                "f1": float(f),
                "support": int(s),
            }
            for c, p, r, f, s in zip(classes, precision, recall, f1, support, strict=True)
        },
        "confusion_matrix": matrix.tolist(),
        "labels": [str(c) for c in classes],
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{args.data}: {len(y_true):,} examples")
    print(f"accuracy  {result['accuracy']:.4f}")
    print(f"macro-F1  {result['macro_f1']:.4f}\n")
    print(
        _table(
            ["class", "precision", "recall", "F1", "support"],
            [
                [str(c), f"{p:.4f}", f"{r:.4f}", f"{f:.4f}", str(s)]
                for c, p, r, f, s in zip(classes, precision, recall, f1, support, strict=True)
            ],
        )
    )
    print("\nconfusion matrix (rows: true class, columns: predicted)")
    names = [str(c) for c in classes]
    print(
        _table(
            ["true \\ predicted", *names],
            [[name, *[str(v) for v in row]] for name, row in zip(names, matrix, strict=True)],
        )
    )
    return 0


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        cells = [
            str(c).rjust(w) if i else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells))
    return "\n".join(lines)


def cmd_predict(args: argparse.Namespace) -> int:
    model = _load_model(args.model)
    featurizer, estimator = _split(model)
    n_features = None if featurizer is not None else estimator.n_features_in_
    dataset = _read(args, args.data, labels=None, n_features=n_features)
    inputs = _inputs(featurizer, estimator, dataset, args.data)
    labels = model.predict(inputs)
    lines = [str(label) for label in labels]
    if args.scores:
        scores = np.atleast_2d(model.decision_function(inputs))
        if scores.shape[0] != len(lines):
            scores = scores.T
        lines = [
            label + "\t" + "\t".join(f"{v:.6g}" for v in row)
            for label, row in zip(lines, scores, strict=True)
        ]
    text = "\n".join(lines) + ("\n" if lines else "")
    if args.output:
        _write_atomically(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from perceptrons.io import persist

    model = _load_model(args.model)
    meta = persist.describe(args.model)
    featurizer, estimator = _split(model)
    names = featurizer.feature_names() if featurizer is not None else None
    result = {
        "model": args.model,
        "algorithm": type(estimator).__name__,
        "library_version": meta.get("library_version"),
        "created": meta.get("created"),
        "hyperparameters": estimator.get_params(),
        "classes": [str(c) for c in estimator.classes_],
        "features": int(estimator.n_features_in_),
        "featurizer": featurizer.get_params() if featurizer is not None else None,
        "history": estimator.history_,
        "top_features": _top_features(estimator, names, args.top),
    }
    if args.json:
        print(json.dumps(result, indent=2, default=str))
        return 0
    print(f"{args.model}: {result['algorithm']} (perceptrons {result['library_version']})")
    print(
        "hyperparameters: " + ", ".join(f"{k}={v!r}" for k, v in result["hyperparameters"].items())
    )
    print(f"classes ({len(result['classes'])}): {', '.join(result['classes'])}")
    print(f"features: {result['features']:,}", end="")
    if featurizer is not None:
        settings = featurizer.get_params()
        print(" from text: " + ", ".join(f"{k}={v!r}" for k, v in settings.items()))
    else:
        print()
    print("training history:")
    for record in result["history"]:
        print("  " + ", ".join(f"{k} {v}" for k, v in record.items()))
    if result["top_features"] is None:
        print(f"top features: none (a {estimator.kernel!r} kernel has no weights per feature)")
        return 0
    for entry in result["top_features"]:
        print(f"class {entry['class']}:")
        print("  + " + ", ".join(f"{n} ({w:+.3g})" for n, w in entry["positive"]))
        print("  - " + ", ".join(f"{n} ({w:+.3g})" for n, w in entry["negative"]))
    return 0


def _top_features(estimator, names, k: int):
    """The largest and smallest weights of each class, by feature name."""
    try:
        coef = np.asarray(estimator.coef_)
    except AttributeError:
        return None

    def name(j: int) -> str:
        if names is not None:
            return str(names[j])
        return f"feature {j}"

    rows = (
        [(estimator.classes_[1], coef[0])]
        if coef.shape[0] == 1
        else list(zip(estimator.classes_, coef, strict=True))
    )
    top = []
    for label, weights in rows:
        order = np.argsort(weights, kind="stable")
        positive = [(name(j), float(weights[j])) for j in order[::-1][:k] if weights[j] > 0]
        negative = [(name(j), float(weights[j])) for j in order[:k] if weights[j] < 0]
        top.append({"class": str(label), "positive": positive, "negative": negative})
    return top


def cmd_plot(args: argparse.Namespace) -> int:
    from sklearn.metrics import confusion_matrix
    from sklearn.model_selection import train_test_split

    from perceptrons import AveragedPerceptron, Perceptron, VotedPerceptron, plots

    plots._pyplot()  # fail early, before training, when matplotlib is missing
    train = _read(args, args.data, labels=True)
    dev = _read(args, args.dev, labels=True) if args.dev else None
    if train.texts is not None:
        featurizer = _featurizer(args)
        if dev is None:
            texts, dev_texts, y, y_dev = train_test_split(
                train.texts, train.y, test_size=0.2, random_state=args.seed, stratify=train.y
            )
        else:
            texts, y, dev_texts, y_dev = train.texts, train.y, dev.texts, dev.y
        X = featurizer.fit_transform(texts)
        X_dev = featurizer.transform(dev_texts)
    else:
        if dev is None:
            X, X_dev, y, y_dev = train_test_split(
                train.X, train.y, test_size=0.2, random_state=args.seed, stratify=train.y
            )
        else:
            X, y, X_dev, y_dev = train.X, train.y, _pad_columns(dev.X, train.X.shape[1]), dev.y
    common = {"max_epochs": args.epochs, "random_state": args.seed}
    models = {
        "perceptron": Perceptron(**common),
        "averaged": AveragedPerceptron(**common),
        "voted": VotedPerceptron(**common),
    }
    curves = {}
    for name, estimator in models.items():
        records = _train_with_curve(args, estimator, X, y, X_dev, y_dev, desc=name)
        curves[name] = {
            "mistakes": [r["mistakes"] for r in records],
            "dev_error": [1 - r["dev_accuracy"] for r in records],
        }
        _say(args, f"{name}: final dev error {curves[name]['dev_error'][-1]:.4f}")
    where = "held-out 20%" if dev is None else args.dev
    written = [plots.learning_curves(curves, args.output, title=f"{args.data} (dev: {where})")]
    averaged = models["averaged"]
    matrix = confusion_matrix(y_dev, averaged.predict(X_dev), labels=averaged.classes_)
    confusion = args.confusion or Path(args.output).with_name(
        Path(args.output).stem + "-confusion.png"
    )
    written.append(
        plots.confusion_matrix(matrix, averaged.classes_, confusion, "averaged perceptron")
    )
    _say(args, "plots written to " + ", ".join(str(p) for p in written))
    return 0


def cmd_diagnose(args: argparse.Namespace) -> int:
    from perceptrons.diagnostics import mistake_bound

    dataset = _read(args, args.data, labels=True)
    X = dataset.X if dataset.texts is None else _featurizer(args).fit_transform(dataset.texts)
    labels = np.unique(dataset.y)
    if args.positive is not None:
        known = {str(label): label for label in labels}
        if args.positive not in known:
            raise UserError(f"--positive {args.positive}: no such label in {args.data}")
        y = np.where(dataset.y == known[args.positive], args.positive, "rest")
    elif len(labels) > 2:
        raise UserError(
            f"{args.data} has {len(labels)} classes; the mistake bound is for two: pass "
            "--positive LABEL to diagnose one class against the rest",
            EXIT_USAGE,
        )
    else:
        y = dataset.y
    report = mistake_bound(
        X, y, fit_intercept=not args.no_intercept, C=args.C, max_epochs=args.epochs
    )
    print(report.to_json() if args.json else report.to_text())
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from perceptrons import demo

    return demo.run(output_dir=Path(args.output_dir), epochs=args.epochs, say=print)


# ------------------------------------------------------------------------- parser
def _add_data_options(parser: argparse.ArgumentParser) -> None:
    from perceptrons.io.formats import FORMATS

    group = parser.add_argument_group("input files")
    group.add_argument(
        "--format",
        choices=("auto", *FORMATS),
        default="auto",
        help="file format (default: detected from the name and content)",
    )
    group.add_argument(
        "--skip-bad-lines",
        action="store_true",
        help="skip and count malformed lines instead of stopping",
    )
    group.add_argument(
        "--label-column",
        default=None,
        help="CSV: the label column's name or index (default: label/class/target/y, else the last)",
    )


def _add_training_options(parser: argparse.ArgumentParser, *, algorithm: bool) -> None:
    group = parser.add_argument_group("training")
    if algorithm:
        group.add_argument("--algorithm", choices=ALGORITHMS, default="averaged")
    group.add_argument("--epochs", type=_positive_int, default=10)
    group.add_argument("--seed", type=int, default=0, help="seeds shuffling (default 0)")
    group.add_argument("--no-shuffle", action="store_true", help="keep the file's order")
    group.add_argument("--delta", type=float, default=0.0, help="the Δ trick (default 0)")
    if algorithm:
        group.add_argument(
            "--update",
            choices=("perceptron", "pa", "pa-i", "pa-ii"),
            default="perceptron",
            help="update rule: the perceptron's, or passive-aggressive (PA, PA-I, PA-II)",
        )
        group.add_argument(
            "--margin",
            type=float,
            default=0.0,
            help="perceptron with margin: also update when y·score <= MARGIN",
        )
        group.add_argument("--C", type=float, default=1.0, help="PA-I/PA-II aggressiveness")
        group.add_argument(
            "--kernel",
            choices=("linear", "poly", "rbf"),
            default="linear",
            help="voted perceptron only",
        )
        group.add_argument("--degree", type=_positive_int, default=3)
        group.add_argument("--gamma", default="scale", help="'scale', 'auto' or a number")
        group.add_argument("--coef0", type=float, default=1.0)
        group.add_argument(
            "--prediction", choices=("vote", "average", "last", "random"), default="vote"
        )
        group.add_argument("--multiclass", choices=("native", "ovr"), default="native")
    text = parser.add_argument_group("text features (text formats only)")
    text.add_argument("--features", choices=("hashing", "vocabulary"), default="hashing")
    text.add_argument(
        "--n-features",
        type=_positive_int,
        default=2**20,
        help="hashing: number of hashed features (default 2^20)",
    )
    text.add_argument("--ngrams", type=_positive_int, default=1, help="word n-grams up to N")
    text.add_argument("--weighting", choices=("tf", "binary", "tfidf"), default="tf")
    text.add_argument("--tokenizer", choices=("regex", "whitespace"), default="regex")
    text.add_argument(
        "--min-df",
        type=_positive_int,
        default=1,
        help="vocabulary: keep words in at least N documents",
    )


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="perceptrons",
        description="Vanilla, averaged and voted perceptrons from the command line.",
    )
    from perceptrons._version import __version__

    parser.add_argument("--version", action="version", version=f"perceptrons {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser("demo", help="compare the perceptrons on built-in data")
    demo.add_argument("--output-dir", default=".", help="where the PNG goes (default .)")
    demo.add_argument("--epochs", type=_positive_int, default=10)
    demo.set_defaults(run=cmd_demo)

    train = commands.add_parser("train", help="train a model on a data file")
    train.add_argument("data", metavar="DATA")
    train.add_argument("-o", "--output", required=True, metavar="MODEL")
    train.add_argument("--dev", metavar="FILE", help="development data, scored every epoch")
    train.add_argument(
        "--plot", metavar="PNG", help="write learning curves (and a confusion matrix)"
    )
    train.add_argument("--quiet", action="store_true")
    train.add_argument("--json", action="store_true", help="print metrics as JSON")
    cluster = train.add_argument_group("distributed (iterative parameter mixing on Dask)")
    cluster.add_argument(
        "--workers",
        type=_positive_int,
        metavar="N",
        help="shards on N local worker processes (127.0.0.1)",
    )
    cluster.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="a Dask scheduler, e.g. tcp://HOST:8786 (shards: its workers)",
    )
    streaming = train.add_argument_group("streaming (files larger than memory)")
    streaming.add_argument(
        "--stream",
        action="store_true",
        help="read the file in chunks; memory does not grow with its size",
    )
    streaming.add_argument(
        "--chunk-size", type=_positive_int, default=10_000, help="lines per chunk (default 10000)"
    )
    streaming.add_argument(
        "--shuffle-window",
        type=int,
        default=0,
        metavar="CHUNKS",
        help="shuffle examples within windows of this many chunks",
    )
    streaming.add_argument(
        "--classes", help="every label, comma-separated (else a first pass finds them)"
    )
    _add_training_options(train, algorithm=True)
    _add_data_options(train)
    train.set_defaults(run=cmd_train)

    evaluate = commands.add_parser("evaluate", help="score a model on labelled data")
    evaluate.add_argument("model", metavar="MODEL")
    evaluate.add_argument("data", metavar="DATA")
    evaluate.add_argument("--json", action="store_true")
    _add_data_options(evaluate)
    evaluate.set_defaults(run=cmd_evaluate)

    predict = commands.add_parser("predict", help="label new data, one label per line")
    predict.add_argument("model", metavar="MODEL")
    predict.add_argument("data", metavar="DATA", help="a file, or - for standard input")
    predict.add_argument("-o", "--output", metavar="OUT")
    predict.add_argument("--scores", action="store_true", help="add the scores after each label")
    _add_data_options(predict)
    predict.set_defaults(run=cmd_predict)

    inspect = commands.add_parser("inspect", help="describe a model file")
    inspect.add_argument("model", metavar="MODEL")
    inspect.add_argument("--top", type=_positive_int, default=10, help="features per class")
    inspect.add_argument("--json", action="store_true")
    inspect.set_defaults(run=cmd_inspect)

    diagnose = commands.add_parser(
        "diagnose", help="the perceptron's mistake bound (R/γ)² on a data set, and its mistakes"
    )
    diagnose.add_argument("data", metavar="DATA")
    diagnose.add_argument("--positive", metavar="LABEL", help="multiclass: this class vs rest")
    diagnose.add_argument(
        "--epochs",
        type=_positive_int,
        default=100,
        help="most epochs the perceptron may take to converge (default 100)",
    )
    diagnose.add_argument(
        "--C",
        type=float,
        default=1e4,
        help="C of the LinearSVC that finds the separator (default 1e4)",
    )
    diagnose.add_argument("--no-intercept", action="store_true", help="no bias feature")
    diagnose.add_argument("--json", action="store_true")
    text = diagnose.add_argument_group("text features (text formats only)")
    text.add_argument("--features", choices=("hashing", "vocabulary"), default="vocabulary")
    text.add_argument("--n-features", type=_positive_int, default=2**20)
    text.add_argument("--ngrams", type=_positive_int, default=1)
    text.add_argument("--weighting", choices=("tf", "binary", "tfidf"), default="tf")
    text.add_argument("--tokenizer", choices=("regex", "whitespace"), default="regex")
    text.add_argument("--min-df", type=_positive_int, default=1)
    _add_data_options(diagnose)
    diagnose.set_defaults(run=cmd_diagnose)

    plot = commands.add_parser("plot", help="learning curves of the three perceptrons")
    plot.add_argument("data", metavar="DATA")
    plot.add_argument("-o", "--output", default="learning-curves.png", metavar="PNG")
    plot.add_argument("--dev", metavar="FILE", help="development data (default: hold out 20%%)")
    plot.add_argument("--confusion", metavar="PNG", help="confusion matrix of the averaged model")
    plot.add_argument("--quiet", action="store_true")
    _add_training_options(plot, algorithm=False)
    _add_data_options(plot)
    plot.set_defaults(run=cmd_plot)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; return its exit code (0 success, 1 data error, 2 usage error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except UserError as error:
        return _fail(str(error), error.code)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:
        return 0
    except Exception as error:  # a user's mistake reported by the library: one line
        if os.environ.get("PERCEPTRONS_DEBUG"):
            raise
        from perceptrons.plots import PlottingUnavailable

        if isinstance(error, PlottingUnavailable):
            return _fail(str(error), EXIT_DATA)
        if isinstance(error, (ValueError, OSError, KeyError)):
            return _fail(_one_line(error), EXIT_DATA)
        raise


def _one_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    if isinstance(error, FileNotFoundError) and error.filename and str(error.filename) not in text:
        text = f"{error.filename}: no such file"
    return " ".join(text.split())


def _fail(message: str, code: int) -> int:
    print(f"perceptrons: error: {message}", file=sys.stderr)
    return code
