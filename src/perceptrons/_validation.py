"""The boundary every classifier shares: input validation and label bookkeeping.

Labels of any type are mapped once to integer codes (indices into the sorted
``classes_``); kernels only ever see codes, and predictions map back.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d, validate_data

# Dense input is used as given when it already has one of these dtypes (C or F order):
# the kernels are compiled for both, so no copy is made.
FLOAT_DTYPES = (np.float64, np.float32)


def validate_training_data(
    estimator: Any, X: ArrayLike, y: ArrayLike, *, reset: bool
) -> tuple[Any, np.ndarray]:
    """Check X (any float array or CSR, converted once) and classification labels y."""
    data, labels = validate_data(
        estimator, X, y, reset=reset, accept_sparse="csr", dtype=FLOAT_DTYPES
    )
    labels = column_or_1d(labels, warn=True)
    check_classification_targets(labels)
    return data, labels


def validate_prediction_data(
    estimator: Any, X: ArrayLike, *, accept_sparse: str | tuple[str, ...] = ("csr", "csc")
) -> Any:
    """Check X against what ``estimator`` was fitted on (width, finiteness, dtype)."""
    return validate_data(estimator, X, reset=False, accept_sparse=accept_sparse, dtype=FLOAT_DTYPES)


def label_set(
    y: np.ndarray, classes: ArrayLike | None, estimator: Any, *, incremental: bool
) -> np.ndarray:
    """The sorted labels a model will know: ``classes`` if given, else those of ``y``."""
    labels = np.unique(y) if classes is None else np.unique(np.asarray(classes))
    if labels.shape[0] < 2:
        where = "in y" if classes is None else "in classes"
        hint = (
            " Pass every label with classes=... on the first partial_fit call."
            if incremental and classes is None
            else ""
        )
        raise ValueError(
            f"{type(estimator).__name__} needs at least two classes, but there is only "
            f"{labels.shape[0]} class {where}: {labels.tolist()!r}.{hint}"
        )
    return labels


def check_same_classes(classes: ArrayLike | None, known: np.ndarray) -> None:
    """A later ``partial_fit(classes=...)`` must repeat the first call's classes."""
    if classes is not None and not np.array_equal(np.unique(np.asarray(classes)), known):
        raise ValueError(
            f"classes={np.asarray(classes).tolist()!r} differs from the classes of "
            f"the first call, {known.tolist()!r}."
        )


def encode(known: np.ndarray, y: np.ndarray, estimator: Any) -> np.ndarray:
    """Labels to their indices in the sorted ``known``; an unknown label is an error."""
    try:
        codes = np.searchsorted(known, y)
    except TypeError:  # labels of another type than the classes (e.g. str vs int)
        codes = np.zeros(len(y), dtype=np.intp)
    codes = np.minimum(codes, known.shape[0] - 1)
    unseen = known[codes] != y
    if np.any(unseen):
        raise ValueError(
            f"y contains labels never declared to {type(estimator).__name__}: "
            f"{sorted(set(np.asarray(y)[unseen].tolist()), key=str)!r}; known classes are "
            f"{known.tolist()!r} (pass classes= to the first partial_fit call)."
        )
    return codes.astype(np.int64)


def labels_from_scores(classes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Binary: a positive score predicts ``classes[1]``; else the argmax, ties lowest."""
    if scores.ndim == 1:
        return classes[(scores > 0).astype(np.intp)]
    return classes[np.argmax(scores, axis=1)]
