"""``perceptrons train``: in memory, streamed (``--stream``) or by parameter mixing."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from perceptrons.cli import mixing
from perceptrons.cli._common import (
    ALGORITHMS,
    EXIT_USAGE,
    UserError,
    check_options,
    check_outputs,
    confusion_path,
    counts_text,
    curve_of,
    estimator_class,
    make_estimator,
    make_featurizer,
    nonzero_text,
    read,
    say,
    train_with_curve,
    training_algorithm,
)


def cmd_train(args: argparse.Namespace) -> int:
    """Train a model on a data file and save it."""
    import numpy as np

    from perceptrons.io.prepare import training_features

    args.algorithm = training_algorithm(args)
    check_options(args, [args.algorithm])
    _check_training_mode(args)
    confusion = confusion_path(args.plot) if args.plot and args.dev else None
    check_outputs(args, [args.output], plots=[args.plot, confusion])
    if len(args.data) > 1 or (args.stream and mixing.mixing_requested(args)):
        return _train_files(args)
    if args.stream:
        return _train_stream(args)
    started = time.perf_counter()
    featurizer = _pairs_featurizer(args, args.data[0])
    train = read(args, args.data[0], labels=True, featurizer=featurizer, fit=True)
    featurized = featurizer is not None and train.texts is None  # read_featurized's
    dev = None
    if args.dev:
        dev = read(
            args, args.dev, labels=True, featurizer=featurizer if featurized else None, fit=False
        )
    text = featurized or train.texts is not None
    estimator = make_estimator(args, labels=train.y, text=text)
    if not featurized:
        featurizer = make_featurizer(args, train.format) if train.texts is not None else None
    X, X_dev = training_features(train, dev, featurizer=featurizer)
    # The documents are featurized: not held through training (their features are).
    train.texts = None
    if dev is not None:
        dev.texts = None
    sample_weight = train.sample_weight
    parallel = mixing.mixing_requested(args)
    if sample_weight is not None:
        trainer = "parameter mixing" if parallel else args.algorithm
        method = _training_method(args, estimator)
        if not _takes_weights(method):
            raise UserError(
                f"{train.source} has importance weights, which {trainer} cannot use "
                "(choose another --algorithm)",
                EXIT_USAGE,
            )
    weighted = "" if sample_weight is None else ", weighted by the file's importance weights"
    say(
        args,
        f"{train.source}: {X.shape[0]:,} examples, {X.shape[1]:,} features "
        f"({train.format}), {len(np.unique(train.y))} classes{weighted}",
    )
    y_dev = dev.y if dev is not None else None
    summary = None
    if parallel:
        estimator, records, summary = mixing.train_in_memory(
            args, estimator, X, train.y, X_dev, y_dev, sample_weight
        )
    else:
        records = train_with_curve(
            args, estimator, X, train.y, X_dev, y_dev, sample_weight=sample_weight
        )
    # Scored before the file is written: a model that cannot score its data (non-finite
    # scores) is refused in one line with no file left behind.
    train_accuracy = float(estimator.score(X, train.y))
    dev_accuracy = float(estimator.score(X_dev, y_dev)) if dev is not None else None
    n_examples, n_features = (int(n) for n in X.shape)
    if summary is None or dev is not None:
        # Not held while the model file is written (the training features are
        # scored already; the parallel report scores them when there is no dev set).
        X = None
    model = _pipeline(featurizer, estimator)
    path = save_model(args, model, estimator)
    result: dict[str, Any] = {
        "model": str(path),
        "algorithm": args.algorithm,
        "examples": n_examples,
        "features": n_features,
        "classes": [str(c) for c in estimator.classes_],
        "sample_weights": sample_weight is not None,
        "epochs": records,
        "train_accuracy": train_accuracy,
        "seconds": round(time.perf_counter() - started, 3),
    }
    if dev_accuracy is not None:
        result["dev_accuracy"] = dev_accuracy
    say(args, f"train accuracy {result['train_accuracy']:.4f}; model written to {path}")
    if summary is not None:
        scored = (X_dev, y_dev, "dev") if dev is not None else (X, train.y, "train")
        result["parallel"] = mixing.report(args, summary, estimator, *scored)
    if args.plot:
        _plot_training(args, records, estimator, X_dev, y_dev)
    if args.json:
        print(json.dumps(result, indent=2))
    return 0


def _pipeline(featurizer: Any, estimator: Any) -> Any:
    """The model a file holds: ``[featurizer, estimator]`` for text (the core's
    :class:`~perceptrons.text.TextPipeline`), else the estimator alone."""
    if featurizer is None:
        return estimator
    from perceptrons.text.pipeline import TextPipeline

    return TextPipeline.of(featurizer, estimator)


def _pairs_featurizer(args: argparse.Namespace, path: str):
    """The featurizer of a ``vw`` or ``counts`` file, made before reading it so that
    the file is read and featurized in one pass (``read``'s ``featurizer``); ``None``
    for other files (and standard input), featurized after reading."""
    from perceptrons.io.formats import WEIGHTED_TEXT_FORMATS, detect_format

    fmt = args.format
    if fmt == "auto":
        if path == "-" or not os.path.isfile(path):
            return None  # read_data words what is wrong
        fmt = detect_format(path)
    if fmt not in WEIGHTED_TEXT_FORMATS or args.ngrams > 1:  # --ngrams: make_featurizer's error
        return None
    return make_featurizer(args, fmt)


def _train_files(args: argparse.Namespace) -> int:
    """train FILE... --shards/--scheduler (or --stream with them): one shard per file,
    read (streamed) by a Dask worker; the data never passes through here."""

    started = time.perf_counter()
    estimator = make_estimator(args, numeric_labels=True)
    estimator, records, summary, dev = mixing.train_files(
        args, estimator, mixing.classes_option(args.classes)
    )
    X_dev, y_dev = dev if dev is not None else (None, None)
    path = save_model(args, estimator, estimator)
    how = "streamed" if args.stream else "read"
    say(args, f"{len(args.data)} DATA files, each {how} by a worker; model written to {path}")
    result: dict[str, Any] = {
        "model": str(path),
        "algorithm": args.algorithm,
        "streamed": bool(args.stream),
        "files": [str(p) for p in args.data],
        "examples": records[-1]["examples"] if records else 0,
        "features": int(estimator.n_features_in_),
        "classes": [str(c) for c in estimator.classes_],
        "epochs": records,
        "seconds": round(time.perf_counter() - started, 3),
    }
    if dev is not None:
        result["dev_accuracy"] = float(estimator.score(X_dev, y_dev))
    result["parallel"] = mixing.report(args, summary, estimator, X_dev, y_dev, "dev")
    if args.plot:
        _plot_training(args, records, estimator, X_dev, y_dev)
    if args.json:
        print(json.dumps(result, indent=2))
    return 0


def _training_method(args: argparse.Namespace, estimator: Any) -> Any:
    """What training calls: the mixer's (threads' or Dask's) or the estimator's
    fit_epochs, else fit."""
    if mixing.mixing_requested(args):
        from perceptrons.parallel import ParameterMixing, mix_threads

        return mix_threads if mixing.backend(args) == "threads" else ParameterMixing.fit_epochs
    return getattr(estimator, "fit_epochs", estimator.fit)


def _takes_weights(method: Any) -> bool:
    import inspect

    return "sample_weight" in inspect.signature(method).parameters


def _check_training_mode(args: argparse.Namespace) -> None:
    """--stream and --shards/--scheduler need an algorithm that can do them."""
    estimator = estimator_class(args.algorithm)
    parallel = mixing.mixing_requested(args)
    if args.stream and not parallel and not hasattr(estimator, "partial_fit"):
        raise UserError(
            f"--stream needs an algorithm with partial_fit; {args.algorithm} has none",
            EXIT_USAGE,
        )
    if parallel:  # the mixing algorithm (and its kernels) imported only to mix
        from perceptrons.parallel._mixing import mixing_refusal

        if mixing_refusal(estimator()) is not None:
            mixable = [
                name for name in ALGORITHMS if mixing_refusal(estimator_class(name)()) is None
            ]
            raise UserError(
                f"--shards and --scheduler train by parameter mixing, which {args.algorithm} "
                f"cannot do (it can: {', '.join(mixable)})",
                EXIT_USAGE,
            )
    mixing.check_usage(args)


def _train_stream(args: argparse.Namespace) -> int:
    """train --stream: chunks of the file through partial_fit, memory bounded by a chunk."""
    from tqdm import tqdm

    from perceptrons.io import stream
    from perceptrons.io.formats import TEXT_FORMATS, detect_format
    from perceptrons.io.prepare import model_inputs

    started = time.perf_counter()
    (data,) = args.data
    fmt = detect_format(data) if args.format == "auto" else args.format
    featurizer = None
    if fmt in TEXT_FORMATS:
        if args.features != "hashing":
            raise UserError(
                "--stream trains text with --features hashing (a vocabulary needs the whole "
                "file first)",
                EXIT_USAGE,
            )
        featurizer = make_featurizer(args, fmt)
    classes = args.classes.split(",") if args.classes else None
    if args.class_weight == "balanced":
        raise UserError(
            "--class-weight balanced needs the class frequencies of the whole file; "
            "--stream trains chunk by chunk: give LABEL:WEIGHT,... instead",
            EXIT_USAGE,
        )
    estimator = make_estimator(
        args, numeric_labels=fmt in ("svmlight", "vw"), text=featurizer is not None
    )
    if fmt == "vw" and not _takes_weights(estimator.partial_fit):
        raise UserError(
            f"{data}: vw files may carry importance weights, which {args.algorithm} "
            "cannot use when streaming (choose another --algorithm)",
            EXIT_USAGE,
        )
    # Training without epochs (naive Bayes counts) reads the file once.
    epochs = args.epochs if hasattr(estimator, "fit_epochs") else 1
    model = _pipeline(featurizer, estimator)
    dev = read(args, args.dev, labels=True) if args.dev else None
    size = os.path.getsize(data)
    # tf-idf: the parse pass that counts the idf, then the epochs.
    passes = epochs + (featurizer is not None and featurizer.weighting == "tfidf")
    bar = tqdm(
        total=size * passes,
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
        # The seconds are rounded to the millisecond: a shorter epoch has 0.
        seconds = max(record["seconds"], 0.001)
        line = (
            f"epoch {record['epoch']}: "
            + (
                counts_text(record)
                if "mistakes" in record
                else f"mean log-loss {record['log_loss']:.4f}"
            )
            + " in "
            f"{record['examples']} examples ({record['examples'] / seconds:,.0f} "
            "examples/s)" + nonzero_text(record)
        )
        if dev is not None:
            record["dev_accuracy"] = float(model.score(model_inputs(model, dev), dev.y))
            line += f", dev accuracy {record['dev_accuracy']:.4f}"
        bar.clear()
        say(args, line)

    with bar:
        report = stream.fit_stream(
            estimator,
            data,
            format=fmt,
            epochs=epochs,
            chunk_size=args.chunk_size,
            featurizer=featurizer,
            classes=classes,
            shuffle_window=args.shuffle_window,
            cache=False if args.no_cache else (args.cache_dir or None),
            random_state=args.seed,
            skip_bad_lines=args.skip_bad_lines,
            # Without a bar shown, no progress calls: each makes the model current
            # (a dense average per chunk for the averaged perceptron).
            progress=None if bar.disable else progress,
            on_epoch=on_epoch,
            # Only --dev scores the model between epochs: else it is formed once.
            publish_each_epoch=dev is not None,
        )
    path = save_model(args, model, estimator)
    weighted = " (examples weighted by the file's importance weights)" if report.weighted else ""
    say(args, f"model written to {path}{weighted}")
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


def add_saving_options(train: argparse.ArgumentParser) -> None:
    """The model-file options of ``train``: a non-resumable and a sparse model."""
    saving = train.add_argument_group("the model file")
    saving.add_argument(
        "--no-resumable",
        action="store_true",
        help="leave out what only further training needs (an averaged model's aux array): "
        "a smaller file that predicts the same, but cannot continue training",
    )
    saving.add_argument(
        "--sparsify",
        metavar="THRESHOLD",
        type=float,
        default=None,
        help="keep the weights sparse (in the file and once loaded, memory follows the "
        "nonzeros), dropping those with |w| <= THRESHOLD; 0 keeps the model exact",
    )


def save_model(args: argparse.Namespace, model: Any, estimator: Any) -> Any:
    """Save ``model`` to ``--output`` as ``--no-resumable`` and ``--sparsify`` ask."""
    from perceptrons.io import persist

    threshold = getattr(args, "sparsify", None)
    if threshold is not None:
        if not hasattr(estimator, "sparsify"):
            raise UserError(
                f"--sparsify: {type(estimator).__name__} has no linear weights to sparsify",
                EXIT_USAGE,
            )
        try:
            estimator.sparsify(threshold=threshold)
        except ValueError as exc:
            raise UserError(f"--sparsify: {exc}", EXIT_USAGE) from None
    return persist.save(model, args.output, resumable=not getattr(args, "no_resumable", False))


def _plot_training(args, records, estimator, X_dev, y_dev) -> None:
    """train --plot: the learning curves and, with --dev, the confusion matrix."""
    from perceptrons import plots
    from perceptrons._metrics import confusion_matrix

    curve = curve_of(records)
    written = [
        plots.learning_curves({args.algorithm: curve}, args.plot, title=", ".join(args.data))
    ]
    if y_dev is not None:
        matrix = confusion_matrix(y_dev, estimator.predict(X_dev), estimator.classes_)
        written.append(
            plots.confusion_matrix(matrix, estimator.classes_, confusion_path(args.plot))
        )
    say(args, "plots written to " + ", ".join(str(p) for p in written))
