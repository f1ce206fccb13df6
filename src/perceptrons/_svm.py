"""The linear SVM with the hinge loss, by dual coordinate descent, without scikit-learn.

What scikit-learn's ``LinearSVC(loss="hinge", penalty="l2", dual=True,
fit_intercept=False)`` fits, by the same algorithm (liblinear's, Hsieh et al. 2008:
:mod:`perceptrons._kernels.svm`), the same stopping rule (the spread of the projected
gradients of a pass at most ``tol``, on the whole set once shrinking is undone) and the
same defaults (``tol=1e-4``, ``max_iter=1000``): :func:`perceptrons.diagnostics.mistake_bound`'s
large-margin separator. An intercept is a constant feature of the caller's choosing
(``extra``), regularized like the others. The passes run here, one compiled call each;
the order of the examples is shuffled before each by a generator seeded from
``random_state`` (splitmix64, not liblinear's, so the iterates differ from
``LinearSVC``'s; the solutions agree within the stopping rule's tolerance).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from perceptrons._input import ConvergenceWarning, check_random_state

__all__ = ["hinge_svm", "squared_row_norms"]


def squared_row_norms(X: Any) -> np.ndarray:
    """``||x_i||²`` of every row of a dense array or CSR matrix, summed in float64."""
    if sp.issparse(X):
        squares = sp.csr_matrix(
            (np.square(X.data, dtype=np.float64), X.indices, X.indptr), shape=X.shape
        )
        return np.asarray(squares.sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", X, X, dtype=np.float64)


def hinge_svm(
    X: Any,
    signs: np.ndarray,
    *,
    C: float,
    extra: float = 0.0,
    tol: float = 1e-4,
    max_iter: int = 1000,
    random_state: Any = None,
) -> tuple[np.ndarray, int]:
    """Fit the L2-regularized hinge-loss SVM ``min ½||w||² + C Σ_i max(0, 1 - y_i w·x_i)``.

    Parameters
    ----------
    X : {ndarray, CSR matrix} of shape (n_samples, n_features)
        Finite float64 or float32 values (dense in any order; CSR checked by the
        caller's ``check_sparse_structure``).
    signs : ndarray of shape (n_samples,)
        The labels as -1.0 and 1.0.
    C : float
        The weight of the hinge losses, finite and > 0.
    extra : float, default=0.0
        The value of a constant feature appended to every example (0: none).
    tol : float, default=1e-4
        Stop when the projected gradients of a pass over every example lie within
        ``tol`` of each other.
    max_iter : int, default=1000
        The most passes.
    random_state : int, RandomState instance or None, default=None
        Seeds the order of the examples in each pass.

    Returns
    -------
    weights : ndarray of shape (n_features + 1,)
        ``w``, the weight of the constant feature last (0 when ``extra`` is 0).
    n_iter : int
        The passes run. At ``max_iter`` a :class:`~perceptrons._input.ConvergenceWarning`
        says that the solver stopped before converging (as ``LinearSVC`` warns).
    """
    n_samples, n_features = X.shape
    signs = np.ascontiguousarray(signs, dtype=np.float64)
    if signs.shape != (n_samples,) or not np.all(np.abs(signs) == 1.0):
        raise ValueError(f"signs must be {n_samples} values of -1.0 or 1.0.")
    for name, value in (("C", C), ("tol", tol)):
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a finite float > 0, got {value!r}.")
    if not (math.isfinite(extra) and extra >= 0):
        raise ValueError(f"extra must be a finite float >= 0, got {extra!r}.")
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter!r}.")
    from perceptrons._kernels.svm import hinge_dual_pass, shuffle_prefix

    rows = (X.data, X.indices, X.indptr) if sp.issparse(X) else X
    diag = squared_row_norms(X) + extra * extra
    alpha = np.zeros(n_samples)
    weights = np.zeros(n_features + 1)
    order = np.arange(n_samples, dtype=np.int64)
    bounds = np.array([np.inf, -np.inf])
    # One seed drawn from random_state, as scikit-learn seeds liblinear's generator.
    seed = check_random_state(random_state).randint(0, 2**63 - 1, dtype=np.int64)
    state = np.array([seed], dtype=np.uint64)
    n_active = n_samples
    n_iter = 0
    while n_iter < max_iter:
        shuffle_prefix(order, n_active, state)
        n_active, largest, smallest = hinge_dual_pass(
            rows=rows,
            signs=signs,
            extra=float(extra),
            diag=diag,
            C=float(C),
            alpha=alpha,
            weights=weights,
            order=order,
            n_active=n_active,
            bounds=bounds,
        )
        n_iter += 1
        if largest - smallest <= tol:
            if n_active == n_samples:
                break
            # Converged on the active set: check every example once more, unshrunk.
            n_active = n_samples
            bounds[:] = np.inf, -np.inf
            continue
        bounds[0] = largest if largest > 0.0 else np.inf
        bounds[1] = smallest if smallest < 0.0 else -np.inf
    if n_iter >= max_iter:
        warnings.warn(
            f"The linear SVM's dual coordinate descent stopped at max_iter={max_iter} "
            "before converging.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return weights, n_iter
