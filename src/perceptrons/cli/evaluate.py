"""``perceptrons evaluate`` and ``perceptrons predict``: a saved model on a data file."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from perceptrons.cli._common import EXIT_USAGE, UserError, check_outputs, read
from perceptrons.cli.tag import refuse_tagger
from perceptrons.io.files import write_text_atomically


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Accuracy, macro-F1, per-class scores and the confusion matrix on labelled data."""
    from perceptrons._metrics import classification_scores
    from perceptrons.io.persist import load
    from perceptrons.io.prepare import model_inputs, model_labels, split_model

    check_outputs(args, [args.output])
    # Sparse: predicts bit for bit as the dense model; the core: no scikit-learn.
    model = load(args.model, sparse=True, core=True)
    refuse_tagger(args.model, model, "evaluate")
    _, estimator = split_model(model)
    dataset = read(args, args.data, labels=True, model=model)
    inputs = model_inputs(model, dataset)
    _dense_for_many_rows(estimator, inputs)
    y_true = model_labels(model, dataset)
    y_pred = model.predict(inputs)
    classes = estimator.classes_
    scores = classification_scores(y_true, y_pred, classes)
    precision, recall, f1, support = scores.precision, scores.recall, scores.f1, scores.support
    matrix = scores.matrix
    result = {
        "examples": len(y_true),
        "accuracy": scores.accuracy,
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
        return _emit(args, json.dumps(result, indent=2) + "\n")
    lines = [
        f"{args.data}: {len(y_true):,} examples",
        f"accuracy  {result['accuracy']:.4f}",
        f"macro-F1  {result['macro_f1']:.4f}\n",
        _table(
            ["class", "precision", "recall", "F1", "support"],
            [
                [str(c), f"{p:.4f}", f"{r:.4f}", f"{f:.4f}", str(s)]
                for c, p, r, f, s in zip(classes, precision, recall, f1, support, strict=True)
            ],
        ),
        "\nconfusion matrix (rows: true class, columns: predicted)",
    ]
    names = [str(c) for c in classes]
    lines.append(
        _table(
            ["true \\ predicted", *names],
            [[name, *[str(v) for v in row]] for name, row in zip(names, matrix, strict=True)],
        )
    )
    return _emit(args, "\n".join(lines) + "\n")


def _emit(args: argparse.Namespace, text: str) -> int:
    """The command's output: to --output (atomically), else stdout."""
    if args.output:
        write_text_atomically(args.output, text)
    else:
        sys.stdout.write(text)
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


#: From this many rows on, predict and evaluate expand a model loaded sparse: dense
#: weights score about 2.4x as fast (306k against 130k documents/s on a hashed 20
#: Newsgroups model, docs/user_guide/model_files.rst), which pays for forming them.
DENSE_FROM_ROWS = 100_000


def _dense_for_many_rows(estimator: Any, inputs: Any) -> None:
    """Densify a model loaded sparse (``load(..., sparse=True)``) before it scores many
    rows; the scores are the same bit for bit either way."""
    import scipy.sparse as sp

    shape = getattr(inputs, "shape", None)
    n_rows = shape[0] if shape else len(inputs)
    if n_rows >= DENSE_FROM_ROWS and sp.issparse(getattr(estimator, "coef_", None)):
        try:
            estimator.densify()
        except MemoryError:  # refused by its estimate, nothing formed: it scores sparse
            pass


def cmd_predict(args: argparse.Namespace) -> int:
    """One label per line (and the scores with --scores, the class probabilities with
    --proba), to a file or stdout."""
    from perceptrons.io.persist import load
    from perceptrons.io.prepare import model_inputs, split_model

    check_outputs(args, [args.output])
    # Sparse: predicts bit for bit as the dense model; the core: no scikit-learn.
    model = load(args.model, sparse=True, core=True)
    refuse_tagger(args.model, model, "predict")
    _, estimator = split_model(model)
    if args.proba and not hasattr(estimator, "predict_proba"):
        raise UserError(
            f"--proba: a {type(estimator).__name__} gives scores, not probabilities; use "
            "--scores, or calibrate it with scikit-learn's CalibratedClassifierCV",
            EXIT_USAGE,
        )
    dataset = read(args, args.data, labels=None, model=model)
    inputs = model_inputs(model, dataset)
    _dense_for_many_rows(estimator, inputs)
    labels = model.predict(inputs)
    lines = [str(label) for label in labels]
    if args.scores or args.proba:
        scores = np.atleast_2d(
            model.predict_proba(inputs) if args.proba else model.decision_function(inputs)
        )
        if scores.shape[0] != len(lines):
            scores = scores.T
        lines = [
            label + "\t" + "\t".join(f"{v:.6g}" for v in row)
            for label, row in zip(lines, scores, strict=True)
        ]
    return _emit(args, "\n".join(lines) + ("\n" if lines else ""))
