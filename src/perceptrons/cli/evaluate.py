"""``perceptrons evaluate`` and ``perceptrons predict``: a saved model on a data file."""

from __future__ import annotations

import argparse
import codecs
import json
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

import numpy as np

from perceptrons.cli._common import EXIT_USAGE, UserError, check_outputs, read
from perceptrons.cli.tag import refuse_tagger
from perceptrons.io.files import write_atomically, write_text_atomically


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Accuracy, macro-F1, per-class scores and the confusion matrix on labelled data."""
    from perceptrons._metrics import scores_of_confusion
    from perceptrons.io.persist import load
    from perceptrons.io.prepare import known_labels, split_model, unseen_labels_error

    check_outputs(args, [args.output])
    # Sparse: predicts bit for bit as the dense model; the core: no scikit-learn.
    model = load(args.model, sparse=True, core=True)
    refuse_tagger(args.model, model, "evaluate")
    _, estimator = split_model(model)
    classes = estimator.classes_
    # Counts, not labels, summed chunk by chunk: memory flat in the file's size.
    counts = {"matrix": np.zeros((len(classes), len(classes)), dtype=np.int64)}
    unseen: set[str] = set()

    def consume(batches: Iterator[tuple[Any, Any]]) -> None:
        from perceptrons._metrics import confusion_matrix

        counts["matrix"] = np.zeros_like(counts["matrix"])
        unseen.clear()
        rows = 0
        for chunk, (X, y) in enumerate(batches):
            rows += X.shape[0]
            _dense_for_many_rows(estimator, rows, chunk)
            y_true, new = known_labels(model, y)
            unseen.update(new)
            if y_true is not None and not unseen:
                counts["matrix"] += confusion_matrix(y_true, estimator.predict(X), classes)

    _score_file(args, model, consume, labels=True)
    if unseen:  # as model_labels says it, once the whole file is read
        raise unseen_labels_error(model, args.data, unseen)
    scores = scores_of_confusion(counts["matrix"])
    n_examples = int(counts["matrix"].sum())
    precision, recall, f1, support = scores.precision, scores.recall, scores.f1, scores.support
    matrix = scores.matrix
    result = {
        "examples": n_examples,
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
        f"{args.data}: {n_examples:,} examples",
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


def _score_file(
    args: argparse.Namespace,
    model: Any,
    consume: Callable[[Iterator[tuple[Any, Any]]], object],
    *,
    labels: bool | None,
) -> None:
    """``consume`` over ``(X, y)`` chunks of the data file, ``X`` the model's estimator's
    input: read a chunk at a time by the compiled readers where
    :func:`~perceptrons.io.prepare.score_in_chunks` can tell the whole file's reading,
    else read whole (one chunk), which words the errors and skips bad lines as today.
    ``consume`` starts afresh on each call."""
    from perceptrons.io.prepare import model_inputs, score_in_chunks, split_model

    if score_in_chunks(args.data, model, consume, format=args.format):
        return
    dataset = read(args, args.data, labels=labels, model=model)
    inputs = model_inputs(model, dataset)
    featurizer, _ = split_model(model)
    y = dataset.y
    if labels:
        from perceptrons.io.prepare import model_labels

        model_labels(model, dataset)  # the file's labels checked before any scoring
    X = inputs if featurizer is None else featurizer.transform(inputs)
    consume(iter([(X, y)]))


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


def _dense_for_many_rows(estimator: Any, n_rows: int, chunk: int = 0) -> None:
    """Densify a model loaded sparse (``load(..., sparse=True)``) once it has ``n_rows``
    rows to score (those of the chunks so far), or from the second chunk (``chunk``
    counts from 0) on: a sparse model scores a chunk at the cost of a pass over its
    nonzeros, which the dense weights, formed once, pay no more. The scores are the
    same bit for bit either way."""
    import scipy.sparse as sp

    many = n_rows >= DENSE_FROM_ROWS or chunk >= 1
    if many and sp.issparse(getattr(estimator, "coef_", None)):
        try:
            estimator.densify()
        except MemoryError:  # refused by its estimate, nothing formed: it scores sparse
            pass


def cmd_predict(args: argparse.Namespace) -> int:
    """One label per line (and the scores with --scores, the class probabilities with
    --proba), to a file or stdout, written as the chunks of the data are scored (to a
    temporary file renamed at the end: nothing is written on an error)."""
    from perceptrons.io.persist import load
    from perceptrons.io.prepare import split_model

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

    def write(out: IO[bytes]) -> None:
        def consume(batches: Iterator[tuple[Any, Any]]) -> None:
            out.seek(0)
            out.truncate()
            rows = 0
            for chunk, (X, _) in enumerate(batches):
                rows += X.shape[0]
                _dense_for_many_rows(estimator, rows, chunk)
                out.write(_prediction_lines(args, estimator, X).encode("utf-8"))

        _score_file(args, model, consume, labels=None)

    if args.output:
        write_atomically(args.output, write)
        return 0
    with tempfile.TemporaryFile() as spool:  # stdout gets nothing on an error
        write(spool)
        spool.seek(0)
        # A piece may end inside a character (a label not ASCII): decoded as a stream.
        decoder = codecs.getincrementaldecoder("utf-8")()
        while piece := spool.read(_SPOOL_PIECE):
            sys.stdout.write(decoder.decode(piece))
        sys.stdout.write(decoder.decode(b"", final=True))
    return 0


_SPOOL_PIECE = 1 << 20  # bytes of the spooled predictions copied to stdout at a time


def _prediction_lines(args: argparse.Namespace, estimator: Any, X: Any) -> str:
    """The lines of ``predict`` for the rows of ``X``: the label, then with ``--scores``
    or ``--proba`` the scores or probabilities, tab-separated."""
    labels = estimator.predict(X)
    # Each distinct label written once (np.unique's items are the labels' own scalars).
    values, inverse = np.unique(labels, return_inverse=True)
    texts = np.array([str(value) for value in values], dtype=object)
    lines = texts[inverse.reshape(-1)].tolist()
    if args.scores or args.proba:
        scores = np.atleast_2d(
            estimator.predict_proba(X) if args.proba else estimator.decision_function(X)
        )
        if scores.shape[0] != len(lines):
            scores = scores.T
        lines = [
            label + "\t" + "\t".join(f"{v:.6g}" for v in row)
            for label, row in zip(lines, scores, strict=True)
        ]
    return "\n".join(lines) + ("\n" if lines else "")
