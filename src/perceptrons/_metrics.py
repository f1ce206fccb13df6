"""Classification scores for the command line, with NumPy alone.

``perceptrons evaluate`` reports accuracy, per-class precision, recall, F1 and support,
and the confusion matrix: scikit-learn's ``accuracy_score``,
``precision_recall_fscore_support(labels=classes, zero_division=0)`` and
``confusion_matrix(labels=classes)``, counted the same way (the tests hold them equal),
so that the command imports no scikit-learn (whose import alone takes longer than
scoring a million rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "ClassificationScores",
    "classification_scores",
    "confusion_matrix",
    "scores_of_confusion",
]


def confusion_matrix(y_true: Any, y_pred: Any, classes: np.ndarray) -> np.ndarray:
    """``matrix[i, j]``: the examples of true class ``classes[i]`` predicted as
    ``classes[j]`` (int64); examples whose true or predicted label is none of ``classes``
    are left out, as scikit-learn's ``confusion_matrix(labels=classes)`` leaves them."""
    classes = np.asarray(classes)
    n_classes = classes.shape[0]
    true_codes, true_known = _codes(np.asarray(y_true), classes)
    pred_codes, pred_known = _codes(np.asarray(y_pred), classes)
    known = true_known & pred_known
    pairs = true_codes[known] * n_classes + pred_codes[known]
    counts = np.bincount(pairs, minlength=n_classes * n_classes)
    return counts.reshape(n_classes, n_classes).astype(np.int64)


def _codes(labels: np.ndarray, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each label's index in the sorted ``classes``, and whether it is one of them."""
    if labels.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    try:
        codes = np.searchsorted(classes, labels)
    except TypeError:  # labels of another type than the classes: none is a class
        return np.zeros(labels.shape[0], dtype=np.int64), np.zeros(labels.shape[0], dtype=bool)
    codes = np.minimum(codes, classes.shape[0] - 1)
    return codes.astype(np.int64), classes[codes] == labels


@dataclass
class ClassificationScores:
    """What ``evaluate`` reports, per class in the order of ``classes``."""

    accuracy: float
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    support: np.ndarray
    matrix: np.ndarray


def classification_scores(y_true: Any, y_pred: Any, classes: np.ndarray) -> ClassificationScores:
    """Accuracy over every example, and per class of ``classes`` precision, recall, F1
    (0 where undefined: scikit-learn's ``zero_division=0``) and support."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    classes = np.asarray(classes)
    n_classes = classes.shape[0]
    matrix = confusion_matrix(y_true, y_pred, classes)
    # Per class, over every example (as scikit-learn counts them): an example whose
    # true label is no class still counts as a prediction of its predicted class.
    true_codes, true_known = _codes(y_true, classes)
    pred_codes, pred_known = _codes(y_pred, classes)
    hits = true_known & pred_known & (true_codes == pred_codes)
    true_positives = np.bincount(true_codes[hits], minlength=n_classes).astype(np.float64)
    predicted = np.bincount(pred_codes[pred_known], minlength=n_classes).astype(np.float64)
    support = np.bincount(true_codes[true_known], minlength=n_classes)
    accuracy = float(np.mean(y_true == y_pred)) if y_true.shape[0] else 0.0
    return _scores(accuracy, true_positives, predicted, support, matrix)


def scores_of_confusion(matrix: np.ndarray) -> ClassificationScores:
    """:func:`classification_scores` from the confusion matrix alone, for examples whose
    true and predicted labels are all classes (as ``evaluate`` checks them): counts
    summed over the chunks of a file give the scores of the whole file, bit for bit.
    """
    matrix = np.asarray(matrix, dtype=np.int64)
    n_examples = int(matrix.sum())
    # np.mean of the hits: their count (exact in float64) over the examples.
    accuracy = float(np.float64(np.trace(matrix)) / n_examples) if n_examples else 0.0
    true_positives = np.diagonal(matrix).astype(np.float64)
    predicted = matrix.sum(axis=0).astype(np.float64)
    return _scores(accuracy, true_positives, predicted, matrix.sum(axis=1), matrix)


def _scores(
    accuracy: float,
    true_positives: np.ndarray,
    predicted: np.ndarray,
    support: np.ndarray,
    matrix: np.ndarray,
) -> ClassificationScores:
    actual = support.astype(np.float64)
    false_positives, false_negatives = predicted - true_positives, actual - true_positives
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(predicted > 0, true_positives / predicted, 0.0)
        recall = np.where(actual > 0, true_positives / actual, 0.0)
        # scikit-learn's F-score: 2 tp / (2 tp + fn + fp), not 2 p r / (p + r).
        denominator = 2 * true_positives + false_negatives + false_positives
        f1 = np.where(denominator > 0, 2 * true_positives / denominator, 0.0)
    return ClassificationScores(accuracy, precision, recall, f1, support, matrix)
