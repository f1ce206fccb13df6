"""The learner core's own input checks and conventions, with NumPy and SciPy alone.

scikit-learn's estimators validate their input with scikit-learn's ``validate_data``
(:mod:`perceptrons._validation` calls it); the core (:mod:`perceptrons.linear`, what the
command line trains and loads) checks it here, so that a command imports no
scikit-learn: X as a 2-D float array or sparse matrix of finite values and the width it
was fitted on, the labels as one per row, ``random_state`` by scikit-learn's
convention, and the error of a model used before it is fitted. A class says which face
it has by ``_SKLEARN_FACE`` (:func:`sklearn_face`).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "ConvergenceWarning",
    "NotFittedError",
    "check_input",
    "check_is_fitted",
    "check_label_array",
    "check_random_state",
    "not_fitted_error",
    "sklearn_face",
]

# Dense input is used as given when it already has one of these dtypes (C or F order):
# the kernels are compiled for both, so no copy is made.
FLOAT_DTYPES = (np.float64, np.float32)


def sklearn_face(estimator: Any) -> bool:
    """Whether ``estimator`` validates its input as a scikit-learn estimator (anything
    but the learner core's classes, which say ``_SKLEARN_FACE = False``)."""
    return bool(getattr(estimator, "_SKLEARN_FACE", True))


def check_input(
    estimator: Any, X: Any, *, reset: bool, accept_sparse: tuple[str, ...] = ("csr",)
) -> Any:
    """The learner core's check of X, NumPy and SciPy alone (see the module): a 2-D
    float array (float64 or float32 used as given, other real numbers converted to
    float64) or a sparse matrix in one of ``accept_sparse``'s formats (others converted
    to the first), at least one row and one column, finite values. ``reset`` records
    the width as ``n_features_in_``; otherwise X must have the recorded width."""
    name = type(estimator).__name__
    if sp.issparse(X):
        if X.format not in accept_sparse:
            X = X.asformat(accept_sparse[0])
        if X.dtype not in FLOAT_DTYPES:
            if X.dtype.kind not in "biuf":
                raise ValueError(f"{name}: X must hold real numbers, got dtype {X.dtype}.")
            X = X.astype(np.float64)
        values = X.data
    else:
        try:
            X = np.asarray(X)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{name}: X must be an array of numbers: {error}") from None
        if X.dtype not in FLOAT_DTYPES:
            if X.dtype.kind not in "biuf":
                raise ValueError(f"{name}: X must hold real numbers, got dtype {X.dtype}.")
            X = X.astype(np.float64)
        values = X
    if X.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array for X, got {X.ndim} dimension(s).")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(
            f"{name}: X of shape {X.shape}: at least one sample and one feature are required."
        )
    if not np.isfinite(values).all():
        raise ValueError(f"{name}: X contains NaN or infinity.")
    if reset:
        estimator.n_features_in_ = X.shape[1]
        estimator.__dict__.pop("feature_names_in_", None)
    else:
        expected = getattr(estimator, "n_features_in_", X.shape[1])
        if X.shape[1] != expected:
            raise ValueError(
                f"X has {X.shape[1]} features, but {name} is expecting {expected} "
                "features as input."
            )
    return X


def check_label_array(y: Any, n_samples: int) -> np.ndarray:
    """Labels as a 1-D array of ``n_samples`` (a column vector is flattened)."""
    labels = np.asarray(y)
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = labels.ravel()
    if labels.ndim != 1:
        raise ValueError(f"y must be 1-D, one label per sample; got shape {labels.shape}.")
    if labels.shape[0] != n_samples:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n_samples}, "
            f"{labels.shape[0]}]"
        )
    return labels


class ConvergenceWarning(UserWarning):
    """An optimization of the core that stopped before converging (the estimators warn
    with scikit-learn's ``ConvergenceWarning``, a UserWarning too)."""


class NotFittedError(ValueError, AttributeError):
    """A learner core's model used before training: scikit-learn's ``NotFittedError``
    for the core (the same bases); the estimators raise scikit-learn's own."""


def check_is_fitted(estimator: Any, attributes: str | tuple[str, ...] | None = None) -> None:
    """Raise a NotFittedError unless ``estimator`` has ``attributes`` (None: any fitted
    attribute, a name ending in ``_``): scikit-learn's ``check_is_fitted`` and its error
    for an estimator, this module's for the core."""
    if sklearn_face(estimator):
        from sklearn.utils.validation import check_is_fitted as sklearn_check

        sklearn_check(estimator, attributes)
        return
    if attributes is None:
        fitted = any(v.endswith("_") and not v.startswith("__") for v in vars(estimator))
    else:
        names = (attributes,) if isinstance(attributes, str) else attributes
        fitted = all(hasattr(estimator, name) for name in names)
    if not fitted:
        raise not_fitted_error(estimator)(
            f"This {type(estimator).__name__} instance is not fitted yet. Call 'fit' with "
            "appropriate arguments before using this estimator."
        )


def not_fitted_error(estimator: Any) -> type[Exception]:
    """The NotFittedError class for ``estimator``: scikit-learn's for an estimator, this
    module's for the core."""
    if sklearn_face(estimator):
        from sklearn.exceptions import NotFittedError as SklearnNotFitted

        return SklearnNotFitted
    return NotFittedError


def check_random_state(seed: Any) -> np.random.RandomState:
    """``random_state`` as a generator, by scikit-learn's convention: None the global
    one, an integer a new one seeded with it, a RandomState itself."""
    if seed is None or seed is np.random:
        return np.random.mtrand._rand
    if isinstance(seed, np.random.RandomState):
        return seed
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        return np.random.RandomState(int(seed))
    raise ValueError(f"{seed!r} cannot be used to seed a numpy.random.RandomState instance")
