"""The boundary every classifier shares: input validation and label bookkeeping.

Labels of any type are mapped once to integer codes (indices into the sorted
``classes_``); kernels only ever see codes, and predictions map back.

Two faces validate input: the scikit-learn estimators through scikit-learn's own
``validate_data`` (its conventions and messages, which its estimator checks hold them
to), and the learner core (the command line's models, :mod:`perceptrons.linear`)
through :func:`check_input`, NumPy and SciPy alone, so that a command imports no
scikit-learn. A class says which by ``_SKLEARN_FACE``; both give the kernels the same
arrays, checked the same way (:func:`check_sparse_structure`, finite values).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from numbers import Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from perceptrons._input import FLOAT_DTYPES, check_input, check_label_array, sklearn_face
from perceptrons._memory import array_bytes, check_allocation, memory_limit


def validate_training_data(
    estimator: Any, X: ArrayLike, y: ArrayLike, *, reset: bool
) -> tuple[Any, np.ndarray]:
    """Check X (any float array or CSR, converted once) and classification labels y."""
    check_sparse_structure(X)
    if not sklearn_face(estimator):
        data = check_input(estimator, X, reset=reset, accept_sparse=("csr",))
        labels = check_label_array(y, data.shape[0])
        check_labels(labels, sklearn_checks=False)
        return data, labels
    from sklearn.utils.validation import validate_data

    with np.errstate(over="ignore", invalid="ignore"):  # scikit-learn's sum of X
        data, labels = validate_data(
            estimator, X, y, reset=reset, accept_sparse="csr", dtype=FLOAT_DTYPES
        )
    # validate_data has made the labels 1-D (scikit-learn's column_or_1d). Whether a few
    # labels are classes depends on their set alone, whose answer is remembered:
    # scikit-learn's check costs a third of a one-example partial_fit (an online
    # learner's every call, in river say). Over 20 labels, the check may also warn that
    # so many classes for so few labels look like a regression target: it runs on them.
    if labels.shape[0] > 20 or labels.dtype.hasobject or not _labels_allowed(np.unique(labels)):
        check_labels(labels)  # on a few labels, to refuse them, naming one
    if reset and hasattr(estimator, "feature_names_in_"):
        check_feature_names(estimator.feature_names_in_, type(estimator).__name__)
    return data, labels


def checked_batch(estimator: Any, X: Any, y: Any) -> bool:
    """Whether a later batch of a stream can skip :func:`validate_training_data`: its
    reader (the compiled svmlight reader, or the parsed cache of its chunks) has
    already checked what that would, row by row -- index arrays within the width,
    finite values and labels -- so only what such a batch is, in O(1), is checked here:
    a float64 CSR matrix of the estimator's width over 1-D numeric labels, one per row,
    and labels that ``classes_`` (which every label must be one of) allows."""
    return (
        sp.issparse(X)
        and X.format == "csr"
        and X.dtype == np.float64
        and X.ndim == 2
        and X.shape[1] == getattr(estimator, "n_features_in_", -1)
        and not hasattr(estimator, "feature_names_in_")
        and isinstance(y, np.ndarray)
        and y.ndim == 1
        and y.dtype.kind in "fiu"
        and y.shape[0] == X.shape[0]
        and X.indptr.shape == (X.shape[0] + 1,)
        and X.indptr[0] == 0
        and X.indptr[-1] == X.indices.shape[0] == X.data.shape[0]
        and _labels_allowed(estimator.classes_, sklearn_checks=sklearn_face(estimator))
    )


# check_labels' answers, by class set (and whether scikit-learn's checks ran)
_ALLOWED_CLASSES: dict[tuple[str, bytes, bool], bool] = {}


def _labels_allowed(classes: np.ndarray, *, sklearn_checks: bool = True) -> bool:
    """Whether labels drawn from ``classes`` pass :func:`check_labels` (they do exactly
    when the whole set does); remembered, as scikit-learn's check takes a millisecond
    for any size and a stream asks for every chunk."""
    if not isinstance(classes, np.ndarray) or classes.dtype.hasobject:
        return False
    key = (classes.dtype.str, classes.tobytes(), sklearn_checks)
    if key not in _ALLOWED_CLASSES:
        if len(_ALLOWED_CLASSES) >= 64:
            _ALLOWED_CLASSES.clear()
        try:
            check_labels(classes, sklearn_checks=sklearn_checks)
        except ValueError:
            _ALLOWED_CLASSES[key] = False
        else:
            _ALLOWED_CLASSES[key] = True
    return _ALLOWED_CLASSES[key]


def validate_prediction_data(
    estimator: Any, X: ArrayLike, *, accept_sparse: str | tuple[str, ...] = ("csr", "csc")
) -> Any:
    """Check X against what ``estimator`` was fitted on (width, finiteness, dtype)."""
    check_sparse_structure(X)
    if not sklearn_face(estimator):
        formats = (accept_sparse,) if isinstance(accept_sparse, str) else tuple(accept_sparse)
        return check_input(estimator, X, reset=False, accept_sparse=formats)
    from sklearn.utils.validation import validate_data

    # scikit-learn's finiteness check sums X first: huge finite values overflow the sum.
    with np.errstate(over="ignore", invalid="ignore"):
        return validate_data(
            estimator, X, reset=False, accept_sparse=accept_sparse, dtype=FLOAT_DTYPES
        )


def check_sparse_structure(X: Any) -> None:
    """Refuse a CSR or CSC matrix whose index arrays do not describe its shape.

    SciPy checks the index arrays of a matrix built from ``(data, indices, indptr)`` only
    on request, and its C++ routines (conversion, products) and our kernels read them
    without bounds checks: an index past the declared width would read or write outside
    the arrays. Checked once per call, O(nnz): ``indptr`` starts at 0, never decreases
    and ends at the number of stored values; every index is in ``[0, width)``.
    """
    if not sp.issparse(X) or X.format not in ("csr", "csc"):
        return
    n_major, n_minor = X.shape if X.format == "csr" else X.shape[::-1]
    axis = "column" if X.format == "csr" else "row"
    indptr, indices, data = X.indptr, X.indices, X.data
    problems = []
    if indptr.ndim != 1 or indptr.shape[0] != n_major + 1:
        problems.append(f"indptr has {indptr.size} entries for {n_major} rows + 1")
    elif indptr[0] != 0 or np.any(np.diff(indptr) < 0) or indptr[-1] != indices.shape[0]:
        problems.append(f"indptr must start at 0, never decrease and end at nnz={indices.shape[0]}")
    if data.shape[0] != indices.shape[0]:
        problems.append(f"{data.shape[0]} stored values for {indices.shape[0]} indices")
    if indices.size and (indices.min() < 0 or indices.max() >= n_minor):
        problems.append(
            f"{axis} indices must be in [0, {n_minor}), found "
            f"{int(indices.min())}..{int(indices.max())}"
        )
    if problems:
        raise ValueError(
            f"malformed sparse {X.format.upper()} matrix of shape {X.shape}: "
            + "; ".join(problems)
            + "."
        )


# A float label is a class when scikit-learn can compare it as a 64-bit integer: a whole
# number at or beyond 2**63 (1e300, 2.0**63) cannot be cast, so scikit-learn's
# ``type_of_target`` calls it continuous (its metrics too), with a cast warning.
_INTEGER_CLASS_BOUND = 2.0**63


def check_labels(labels: np.ndarray, *, sklearn_checks: bool = True) -> None:
    """Classification labels: refuse a regression target, or numbers that cannot be
    classes (non-finite, fractional, whole but beyond the 64-bit integers), with a
    message naming one of them; ``sklearn_checks``: scikit-learn's
    ``check_classification_targets`` too (the estimators'; the core refuses what is
    not a number, a string or a bool by its dtype)."""
    if labels.dtype.kind == "f":
        values = np.asarray(labels, dtype=np.float64)
        finite = values[np.isfinite(values)]
        problems = (
            (finite[finite != np.round(finite)], "non-integer numbers", "a regression target"),
            (values[~np.isfinite(values)], "non-finite numbers", "a regression target"),
            (
                finite[(finite >= _INTEGER_CLASS_BOUND) | (finite < -_INTEGER_CLASS_BOUND)],
                "whole numbers beyond the 64-bit integers",
                "identifiers: renumber them within +-2**63",
            ),
        )
        for found, kind, looks_like in problems:
            if found.size:
                # "Unknown label type: continuous" is scikit-learn's phrase (its checks match it).
                raise ValueError(
                    "Unknown label type: continuous. Labels must be classes (integers or "
                    f"strings); got {kind} such as {float(found[0])!r}: this looks like "
                    f"{looks_like}."
                )
    if not sklearn_checks:
        if labels.dtype.kind not in "biufUSO":
            raise ValueError(f"Unknown label type: labels of dtype {labels.dtype}.")
        # scikit-learn's warning, in its words, on as many labels.
        n_labels = labels.shape[0]
        if n_labels > 20 and np.unique(labels).shape[0] > max(2, round(0.5 * n_labels)):
            warnings.warn(
                "The number of unique classes is greater than 50% of the number of samples. "
                "`y` could represent a regression problem, not a classification problem.",
                UserWarning,
                stacklevel=3,
            )
        return
    from sklearn.utils.multiclass import check_classification_targets

    check_classification_targets(labels)


def check_sample_weight(
    sample_weight: Any, n_samples: int, *, incremental: bool = False
) -> np.ndarray | None:
    """``sample_weight`` as a C-contiguous float64 array of shape (n_samples,), or None.

    scikit-learn's conventions: None means every weight 1, a number is every
    example's weight; the weights must be finite, non-negative and, for a whole
    training set, not all zero. One batch of ``partial_fit`` may weigh 0 in all (a
    stream's chunk of zero-importance examples): it changes nothing.
    """
    if sample_weight is None:
        return None
    if isinstance(sample_weight, Real) and not isinstance(sample_weight, bool | np.bool_):
        weights = np.full(n_samples, float(sample_weight))
    else:
        try:
            weights = np.array(sample_weight, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise ValueError(f"sample_weight must be numbers, one per sample: {error}") from None
        if weights.shape != (n_samples,):
            raise ValueError(
                f"sample_weight has shape {weights.shape}, expected ({n_samples},): one "
                "weight per sample."
            )
    if not np.all(np.isfinite(weights)):
        raise ValueError("sample_weight must be finite (it holds NaN or infinity).")
    if np.any(weights < 0):
        raise ValueError(
            f"sample_weight must be non-negative, got {float(weights.min())!r}: a weight "
            "scales an example's update, and a negative one would unlearn it."
        )
    if n_samples and not incremental and not np.any(weights):
        raise ValueError("sample_weight must contain at least one non-zero number.")
    return np.ascontiguousarray(weights)


def class_weight_per_class(
    class_weight: Any, classes: np.ndarray, y: np.ndarray, *, incremental: bool, name: str
) -> np.ndarray | None:
    """The weight of each class of ``classes`` (scikit-learn's ``compute_class_weight``),
    or None without ``class_weight``. ``"balanced"`` is computed from ``y``, so only
    ``fit`` accepts it (as scikit-learn's ``SGDClassifier``)."""
    if class_weight is None:
        return None
    if isinstance(class_weight, str) and class_weight == "balanced" and incremental:
        raise ValueError(
            f"{name}: class_weight='balanced' is not supported by partial_fit: one batch "
            "does not tell the class frequencies. Compute them once with "
            "sklearn.utils.class_weight.compute_class_weight('balanced', classes=classes, "
            "y=y) on enough of the labels and pass the resulting dict as class_weight."
        )
    check_class_weight(class_weight, classes, name)
    present = np.isin(classes, y)
    if isinstance(class_weight, str) and class_weight == "balanced":
        # Absent classes get no weight (scikit-learn's compute_class_weight would refuse).
        weights = np.ones(classes.shape[0])
        weights[present] = balanced_class_weight(classes[present], y)
        return weights
    weights = np.ones(classes.shape[0])
    for label, weight in class_weight.items():
        weights[np.searchsorted(classes, label)] = weight
    return weights


def balanced_class_weight(classes: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``n_samples / (n_classes * count)`` per class of ``classes`` (each present in
    ``y``): scikit-learn's ``compute_class_weight("balanced")``, the same arithmetic."""
    codes = np.searchsorted(classes, y)
    # A label that is no class (encode refuses it next) is counted with none.
    counts = np.bincount(codes, minlength=classes.shape[0])[: classes.shape[0]]
    counts = counts.astype(np.float64)
    return len(y) / (len(classes) * counts)


def example_weights(
    estimator: Any,
    sample_weight: Any,
    classes: np.ndarray,
    labels: np.ndarray,
    *,
    incremental: bool,
) -> np.ndarray | None:
    """Each example's weight ``sample_weight[i] * class_weight[y_i]`` for a training
    call of ``estimator`` on ``labels`` (None when neither is given: the unweighted
    path), every part checked."""
    weights = check_sample_weight(sample_weight, labels.shape[0], incremental=incremental)
    per_class = class_weight_per_class(
        getattr(estimator, "class_weight", None),
        classes,
        labels,
        incremental=incremental,
        name=type(estimator).__name__,
    )
    if per_class is None:
        return weights
    return effective_weights(weights, per_class, encode(classes, labels, estimator))


def effective_weights(
    sample_weight: np.ndarray | None, per_class: np.ndarray | None, codes: np.ndarray
) -> np.ndarray | None:
    """Example ``i``'s weight ``sample_weight[i] * class_weight[y_i]`` (None: all 1)."""
    if per_class is None:
        return sample_weight
    weights = per_class[codes]
    return weights if sample_weight is None else sample_weight * weights


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


class NonFiniteScores(ValueError):
    """Scores that are, or can be, inf or NaN: a training kernel met one (finite weights
    and features whose products or sums overflow), or a model's weights are so large
    that inputs of moderate size overflow (:func:`check_linear_model`). The epoch loop
    (:func:`perceptrons._engine.run_epochs`) turns it into its one-line error; the call
    leaves the estimator as it was before it."""


class NonFiniteStep(NonFiniteScores):
    """An update rule's own arithmetic overflowed or divided by zero in a training kernel
    (see :mod:`perceptrons._kernels._rows`): its step was inf or NaN. The epoch loop's
    one-line error names the rule (and its constants, when they were given)."""


_MAGNITUDE_BLOCK = 1 << 16


def check_linear_model(
    coef: Any, intercept: np.ndarray, estimator: Any, bound: float = 1.0
) -> None:
    """Raise :class:`NonFiniteScores` unless every input whose features lie in
    ``[-bound, bound]`` (``bound >= 1``) gets finite scores from ``coef`` (dense or
    sparse, one row per class) and ``intercept``.

    The largest score of such an input is exactly ``bound Σ_j |coef[k, j]| +
    |intercept[k]|`` (at ``x = bound sign(coef[k])``), so the criterion is that this sum
    is finite for every class ``k``: one pass over the model, the cost of forming it.
    It implies that ``coef`` and ``intercept`` are finite. A model fitted on moderate
    data meets it; the check is the same for a model just trained and one read from a
    file (``bound`` 1); training passes the range of its inputs
    (:attr:`perceptrons._states.TrainingState.input_bound`), so that the model scores
    its own training examples finitely, whether or not an epoch scored them after the
    last update.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        if sp.issparse(coef):
            coef = sp.csr_matrix(coef)
            coef.sum_duplicates()
            # |coef| sharing coef's indices: abs(coef) would copy them too.
            absolute = sp.csr_matrix(
                (np.abs(coef.data), coef.indices, coef.indptr), shape=coef.shape
            )
            magnitude = np.asarray(absolute.sum(axis=1)).ravel()
        else:  # by blocks of columns: a hashed model's |coef| would double its memory
            coef = np.asarray(coef)
            magnitude = np.zeros(coef.shape[0])
            for start in range(0, coef.shape[1], _MAGNITUDE_BLOCK):
                magnitude += np.abs(coef[:, start : start + _MAGNITUDE_BLOCK]).sum(axis=1)
        magnitude = magnitude * bound + np.abs(intercept)
    if not np.isfinite(magnitude).all():
        raise NonFiniteScores(
            f"{type(estimator).__name__}: the model gives non-finite scores (inf/NaN) to "
            f"inputs whose features lie in [-{bound:g}, {bound:g}]: a class's weights and "
            "intercept add up (in absolute value) beyond the largest float."
        )


def check_class_weight(class_weight: Any, classes: np.ndarray, name: str) -> None:
    """``class_weight`` (its parameter rule already accepted it: None, ``"balanced"``
    or a dict) against the classes: a dict names only classes, each weight a finite
    number >= 0. The one check of ``fit`` and of a model file's parameters."""
    if isinstance(class_weight, dict):
        known = set(classes.tolist())
        unknown = [label for label in class_weight if label not in known]
        if unknown:
            raise ValueError(
                f"{name}: class_weight names labels that are not classes: {unknown!r}; "
                f"the classes are {classes.tolist()!r}."
            )
        bad = {k: v for k, v in class_weight.items() if not _non_negative_number(v)}
        if bad:
            raise ValueError(
                f"{name}: class_weight values must be finite numbers >= 0, got {bad!r}."
            )


def _non_negative_number(value: Any) -> bool:
    return (
        isinstance(value, Real)
        and not isinstance(value, bool | np.bool_)
        and bool(np.isfinite(float(value)))
        and float(value) >= 0
    )


def check_feature_names(names: Any, name: str) -> None:
    """``feature_names_in_`` as scikit-learn records them: distinct strings."""
    values = np.asarray(names, dtype=object).tolist()
    if not all(isinstance(value, str) for value in values):
        raise ValueError(f"{name}: feature names must be strings.")
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise ValueError(f"{name}: feature names must be distinct; {value!r} repeats.")
        seen.add(value)


def check_scores(
    scores: np.ndarray,
    estimator: Any,
    intercept: np.ndarray | None = None,
    first_row: int = 0,
) -> np.ndarray:
    """``scores``, the prediction scores of ``estimator``, unless one is inf or NaN:
    finite weights give them only for features too large for the model (their products
    or sums overflow), and a NaN score predicts nothing. An infinite ``intercept`` (naive
    Bayes' prior of a class declared but not seen yet) is the model's own certainty: the
    scores equal to it in its column are kept. Compute the scores under
    ``np.errstate(over="ignore", invalid="ignore")``: this is the one report.
    ``first_row``: the row of X that ``scores[0]`` belongs to (scores by blocks)."""
    if not np.isfinite(scores).all():
        table = scores.reshape(scores.shape[0], -1)
        wrong = ~np.isfinite(table)
        if intercept is not None:
            certain = np.isinf(intercept)
            wrong &= ~(certain & (table == np.where(certain, intercept, 0.0)))
        rows = np.flatnonzero(wrong.any(axis=1))
        if rows.shape[0] == 0:
            return scores
        raise NonFiniteRows(type(estimator).__name__, rows.shape[0], first_row + int(rows[0]))
    return scores


class NonFiniteRows(ValueError):
    """Rows of X whose scores are inf or NaN (see :func:`check_scores`): ``count`` of
    them, the first at row ``first``."""

    def __init__(self, estimator_name: str, count: int, first: int) -> None:
        self.estimator_name, self.count, self.first = estimator_name, count, first
        super().__init__(
            f"{estimator_name}: non-finite scores (inf/NaN) for {count} row(s) of X (the "
            f"first: row {first}): their features are too large for the model; scale them "
            "as the training data were scaled."
        )


def labels_from_scores(classes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Binary: a positive score predicts ``classes[1]``; else the argmax, ties lowest."""
    if scores.ndim == 1:
        return classes[(scores > 0).astype(np.intp)]
    return classes[np.argmax(scores, axis=1)]


#: The most memory one block of scores takes when :func:`predict_in_batches` scores the
#: rows a block at a time (64 MiB: 8,192 rows of 1,024 classes; less under a lower
#: memory limit).
SCORE_BATCH_BYTES = 2**26


def n_score_columns(classes: np.ndarray) -> int:
    """The columns of a model's scores: one for two classes, else one per class."""
    return 1 if classes.shape[0] == 2 else classes.shape[0]


def check_scores_memory(n_samples: int, n_columns: int) -> None:
    """Refuse, before it is allocated, a matrix of scores that would not fit in memory
    (``decision_function``, ``predict_proba``: their results are the whole matrix)."""
    check_allocation(
        array_bytes(n_samples, n_columns),
        f"the scores ({n_samples:,} rows x {n_columns:,} columns)",
        "score fewer rows at a time (predict and score do: they work in blocks)",
    )


def predict_in_batches(
    decision_function: Callable[[Any], np.ndarray], classes: np.ndarray, X: Any
) -> np.ndarray:
    """The labels :func:`labels_from_scores` gives for ``decision_function(X)``, scored
    a block of rows at a time when the whole matrix of scores (``n_samples x
    n_classes``) would take more than :data:`SCORE_BATCH_BYTES`: predicting (and
    ``score``, the CLI's accuracies) then needs memory for one block, whatever the
    number of rows and classes."""
    # A block within the memory budget too, however low it is set.
    limit = memory_limit()[0]
    block_bytes = SCORE_BATCH_BYTES if limit is None else min(SCORE_BATCH_BYTES, limit // 8)
    rows_per_batch = max(1, block_bytes // array_bytes(n_score_columns(classes)))
    n_samples = _num_samples(X)
    if n_samples <= rows_per_batch:
        return labels_from_scores(classes, decision_function(X))
    if sp.issparse(X):
        X = X if X.format in ("csr", "csc") else sp.csr_matrix(X)
    elif not hasattr(X, "iloc") and not hasattr(X, "shape"):
        X = np.asarray(X)  # a list of rows: sliceable
    labels, count, first, name = [], 0, -1, ""
    for start in range(0, n_samples, rows_per_batch):
        block = _rows(X, slice(start, start + rows_per_batch))
        try:
            labels.append(labels_from_scores(classes, decision_function(block)))
        except NonFiniteRows as error:  # counted over every block, numbered in X
            count, name = count + error.count, error.estimator_name
            first = start + error.first if first < 0 else first
    if count:
        raise NonFiniteRows(name, count, first)
    return np.concatenate(labels)


def _num_samples(X: Any) -> int:
    """The rows of an array-like, 0 when it is no array (``decision_function`` then
    says what is wrong with it)."""
    shape = getattr(X, "shape", None)
    if shape is not None:
        return int(shape[0]) if len(shape) else 0
    try:
        return len(X)
    except TypeError:
        return 0


def _rows(X: Any, rows: slice) -> Any:
    """Rows of an array, a sparse matrix or a pandas DataFrame."""
    if hasattr(X, "iloc"):
        return X.iloc[rows]
    return X[rows]


def canonical_csr(X) -> sp.csr_matrix:
    """CSR matrix, float64, sorted indices without duplicates, int32 index arrays: the
    layout the kernels read without a copy (what every featurizer gives)."""
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    if X.nnz < 2**31:
        X.indices = X.indices.astype(np.int32, copy=False)
        X.indptr = X.indptr.astype(np.int32, copy=False)
    return X
