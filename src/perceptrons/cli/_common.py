"""What the commands share: the user error, output, reading files, building models."""

from __future__ import annotations

import argparse
import sys
from typing import Any

EXIT_DATA, EXIT_USAGE = 1, 2
ALGORITHMS = ("perceptron", "averaged", "voted")


class UserError(Exception):
    """A problem with the user's files or arguments: reported in one line."""

    def __init__(self, message: str, code: int = EXIT_DATA) -> None:
        super().__init__(message)
        self.code = code


def say(args: argparse.Namespace, text: str = "") -> None:
    """Human-readable output: stdout, or stderr when stdout carries JSON."""
    if not getattr(args, "quiet", False):
        print(text, file=sys.stderr if getattr(args, "json", False) else sys.stdout, flush=True)


def read(args: argparse.Namespace, path: str, *, labels: bool | None, model: Any = None):
    """Read a data file with the input options; for ``model``, fitted to that model."""
    from perceptrons.io.formats import read_data
    from perceptrons.io.prepare import read_for_model

    options = {
        "format": args.format,
        "skip_bad_lines": args.skip_bad_lines,
        "label_column": args.label_column,
    }
    if model is None:
        dataset = read_data(path, labels=labels, **options)
    else:
        dataset = read_for_model(path, model, labels=labels, **options)
    if dataset.skipped:
        line, reason = dataset.skipped[0]
        say(
            args,
            f"{dataset.source}: skipped {len(dataset.skipped)} bad line(s), "
            f"the first at line {line}: {reason}",
        )
    return dataset


def make_estimator(args: argparse.Namespace):
    """The estimator the training options describe."""
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


def make_featurizer(args: argparse.Namespace):
    """The text featurizer the text-feature options describe."""
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


def progress_bar(args: argparse.Namespace, total: int, desc: str):
    """A progress bar on stderr, shown only on a terminal (logs and pipes stay clean)."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=desc,
        unit="ex",
        unit_scale=True,
        file=sys.stderr,
        leave=False,
        disable=True if args.quiet else None,
    )


def train_with_curve(args, estimator, X, y, X_dev=None, y_dev=None, desc="training"):
    """Fit epoch by epoch, one line each; return the records (mistakes, dev accuracy)."""
    records = []
    total = args.epochs * X.shape[0]
    with progress_bar(args, total, desc) as bar:
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
            say(args, line)
    return records
