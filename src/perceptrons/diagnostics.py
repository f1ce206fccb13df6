"""How hard is a binary problem for the perceptron? The mistake bound, measured.

The perceptron convergence theorem (Block 1962; Novikoff 1962): if every example has
norm ``||x|| <= R`` and a unit vector ``u`` separates the examples with margin
``y u·x >= γ > 0``, then the perceptron makes at most ``(R/γ)²`` mistakes on *any*
sequence of them, over any number of epochs, whatever the dimension.
:func:`mistake_bound` measures ``R`` and ``γ`` on a data set, evaluates the bound, and
runs this package's :class:`~perceptrons.Perceptron` on the same sequence to
compare it with the mistakes actually made.

Everything lives in the space the perceptron learns in: with ``fit_intercept=True`` the
bias is the weight of a constant feature of value 1, so each example is ``(x, 1)``, ``R``
is the largest ``||(x, 1)||`` and the separator ``u`` includes the bias.

When no separator is at hand (the data are not separable, or the one tried does not
separate them) the Δ trick of Freund & Schapire (1999, Theorem 2) still gives a bound:
for any ``γ > 0`` let ``d_i = max(0, γ - y_i u·x_i)`` and ``D = sqrt(Σ d_i²)``; the
perceptron trained with ``Perceptron(delta=sqrt(R * D))`` (every example gets a feature
of its own of value Δ) makes at most ``((R + D) / γ)²`` mistakes, and then separates the
augmented data.

References
----------
H. D. Block, "The perceptron: a model for brain functioning", Reviews of Modern Physics
34(1):123-135, 1962.

A. B. J. Novikoff, "On convergence proofs on perceptrons", Proceedings of the Symposium
on the Mathematical Theory of Automata, 12:615-622, 1962.

Y. Freund and R. E. Schapire, "Large margin classification using the perceptron
algorithm", Machine Learning 37(3):277-296, 1999.

C.-J. Hsieh, K.-W. Chang, C.-J. Lin, S. S. Keerthi and S. Sundararajan, "A dual
coordinate descent method for large-scale linear SVM", ICML 2008 (the default
separator's solver).
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from perceptrons._input import ConvergenceWarning, check_input, check_label_array
from perceptrons._svm import hinge_svm, squared_row_norms
from perceptrons._validation import check_labels, check_sparse_structure
from perceptrons.linear.perceptron import Perceptron

__all__ = ["MistakeBound", "mistake_bound"]

# Epochs shown by the text report before "..." (to_dict always has them all).
_EPOCHS_SHOWN = 12


@dataclass(frozen=True)
class MistakeBound:
    """The perceptron mistake bound of a binary data set, next to the real mistakes.

    Made by :func:`mistake_bound`. All geometry is in the space the perceptron learns
    in: with an intercept, each example is ``(x, 1)`` and ``u`` includes the bias.

    Attributes
    ----------
    n_samples : int
        Number of examples.
    n_features : int
        Number of features of ``X`` (without the bias feature).
    fit_intercept : bool
        Whether the constant feature 1 was appended (to the examples, to ``u``, to ``R``).
    separator_source : str
        Where the unit separator ``u`` comes from.
    R : float
        ``max_i ||x_i||`` (of ``(x_i, 1)`` with an intercept).
    gamma : float
        The margin of ``u``: ``min_i y_i u·x_i`` with ``||u|| = 1``; ``<= 0`` when ``u``
        does not separate the data.
    separable : bool
        ``gamma > 0``: ``u`` separates the data (``False`` says nothing about other
        separators, only that this one does not).
    separator_errors : int
        Examples that ``u`` does not classify correctly (``y_i u·x_i <= 0``).
    bound : float or None
        ``(R / gamma)²`` when separable, else ``None``: the perceptron makes at most this
        many mistakes on any ordering of the examples, over all epochs.
    gamma_delta : float
        The target margin ``γ`` of the Δ-trick bound: the one in ``(0, R]`` that makes
        ``delta_bound`` smallest (see the Notes of :func:`mistake_bound`).
    D : float
        ``sqrt(Σ_i max(0, gamma_delta - y_i u·x_i)²)``: how far the examples fall short
        of the target margin.
    delta : float
        ``Δ = sqrt(R * D)``, the ``delta`` to train :class:`~perceptrons.Perceptron`
        with for ``delta_bound`` to hold (0 means plain training).
    delta_bound : float
        ``((R + D) / gamma_delta)²`` (Freund & Schapire 1999): the most mistakes
        ``Perceptron(delta=delta, shuffle=False)`` can make before it converges.
    mistakes : int
        Mistakes the plain perceptron (``delta=0``) made on the examples in the given
        order, summed over ``epochs``.
    mistakes_per_epoch : tuple of int
        Its mistakes in each epoch.
    converged : bool
        Whether its last epoch had no mistake (it then separates the data).
    epochs : int
        Epochs run: until one without a mistake, or ``max_epochs``.
    """

    n_samples: int
    n_features: int
    fit_intercept: bool
    separator_source: str
    R: float
    gamma: float
    separable: bool
    separator_errors: int
    bound: float | None
    gamma_delta: float
    D: float
    delta: float
    delta_bound: float
    mistakes: int
    mistakes_per_epoch: tuple[int, ...]
    converged: bool
    epochs: int

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-serializable values (``bound`` is ``None`` if not separable).

        Returns
        -------
        report : dict
            One entry per attribute; ``mistakes_per_epoch`` is a list.
        """
        report = asdict(self)
        report["mistakes_per_epoch"] = list(self.mistakes_per_epoch)
        return report

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as a JSON string; ``kwargs`` go to :func:`json.dumps`."""
        return json.dumps(self.to_dict(), **kwargs)

    def to_text(self) -> str:
        """A readable multi-line report.

        Returns
        -------
        text : str
            Lines without a trailing newline.
        """
        space = "(x, 1)" if self.fit_intercept else "x"
        bias = " + 1 bias feature" if self.fit_intercept else ""
        if self.separable:
            verdict = "separable by u"
            bound = f"{_num(self.bound)}  (R/γ)²: any order, any number of epochs"
        else:
            verdict = (
                f"NOT separated by u ({self.separator_errors} of {self.n_samples} "
                "examples on the wrong side or on the hyperplane)"
            )
            bound = "none (u does not separate the data: see the Δ trick below)"
        outcome = (
            f"converged after {self.epochs} epochs (the last without a mistake)"
            if self.converged
            else f"did not converge in {self.epochs} epochs"
        )
        shown = ", ".join(str(m) for m in self.mistakes_per_epoch[:_EPOCHS_SHOWN])
        if self.epochs > _EPOCHS_SHOWN:
            shown += ", ..."
        lines = [
            "Perceptron mistake bound (Block 1962, Novikoff 1962; Δ trick: Freund & Schapire 1999)",
            f"  data          {self.n_samples} examples, {self.n_features} features{bias}",
            f"  separator u   {self.separator_source}",
            f"  R             {_num(self.R)}  = max ||{space}||",
            f"  γ             {_num(self.gamma)}  = min y u·{space}, ||u|| = 1: {verdict}",
            f"  bound         {bound}",
            "  Δ trick       with target margin γ_Δ, D = sqrt(Σ max(0, γ_Δ - y u·x)²), "
            "Δ = sqrt(R D)",
            f"    γ_Δ         {_num(self.gamma_delta)}",
            f"    D           {_num(self.D)}",
            f"    Δ           {_num(self.delta)}",
            f"    bound       {_num(self.delta_bound)}  ((R + D)/γ_Δ)², "
            f"training with Perceptron(delta={_num(self.delta)})",
            f"  mistakes      {self.mistakes}  (Perceptron, given order, no shuffle: {outcome})",
            f"  per epoch     {shown}",
        ]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


def _num(value: float | None) -> str:
    return "none" if value is None else f"{value:.6g}"


def mistake_bound(
    X: ArrayLike,
    y: ArrayLike,
    separator: Any = None,
    fit_intercept: bool = True,
    C: float = 1e4,
    max_epochs: int = 100,
    random_state: int | np.random.RandomState | None = 0,
) -> MistakeBound:
    """Measure the perceptron mistake bound of a binary problem and the real mistakes.

    Computes ``R``, the margin ``γ`` of a unit separator ``u`` and the bound ``(R/γ)²``
    (Block 1962; Novikoff 1962), the Δ-trick bound ``((R + D)/γ_Δ)²`` (Freund &
    Schapire 1999, Theorem 2) that holds even without a separator, and trains
    :class:`~perceptrons.Perceptron` on the examples in the given order
    (``shuffle=False``) until an epoch has no mistake, to report the mistakes it
    actually makes. The bounds hold for any order of the examples.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The examples, in the order the perceptron sees them. Sparse input is never
        densified (norms and margins use sparse products).
    y : array-like of shape (n_samples,)
        Exactly two distinct labels; the larger one (``classes_[1]`` of the
        perceptron) is +1. For a multiclass problem, run one-vs-rest yourself:
        ``mistake_bound(X, y == label)`` for each ``label``.
    separator : None, fitted linear model or array-like, default=None
        The separator ``u`` (normalized here to unit norm):

        - ``None``: the linear SVM with the hinge loss and ``C``, fitted on ``[X | 1]``
          (on ``X`` without an intercept), so that the bias is a regularized part of
          ``u``, as in the bound: what scikit-learn's ``LinearSVC(C=C, loss="hinge",
          fit_intercept=False)`` fits, by the same dual coordinate descent as its
          liblinear (Hsieh et al. 2008) with the same stopping rule (``tol=1e-4``,
          ``max_iter=1000``), compiled here. A large ``C`` approximates the
          hard-margin SVM, the separator of largest margin (smallest bound). The rows
          are divided by ``R`` first: the same direction of largest margin, and the
          same meaning of ``C`` at every scale of ``X``.
          If the solver does not converge, ``separator_source`` says so: the bound is
          still valid, only looser. For more solver iterations, fit your own model
          (``LinearSVC(max_iter=...)``) and pass it.
        - a fitted binary linear model with ``coef_`` of shape (1, n_features) or
          (n_features,) and ``intercept_`` (any scikit-learn linear classifier, or a
          :class:`~perceptrons.Perceptron`); its ``classes_``, if any, must be the
          labels of ``y``.
        - a weight vector of length ``n_features`` (no bias) or ``n_features + 1``
          (the bias last).

        Without an intercept, a separator with a non-zero bias is an error.
    fit_intercept : bool, default=True
        Whether the perceptron learns a bias, i.e. whether the constant feature 1 is
        part of the examples (and of ``R``).
    C : float, default=1e4
        The ``C`` of the default separator, the linear SVM's.
    max_epochs : int, default=100
        Most epochs of the perceptron run.
    random_state : int, RandomState instance or None, default=0
        Seeds the linear SVM's coordinate descent (the perceptron does not shuffle).

    Returns
    -------
    report : MistakeBound
        Print it for a readable report; ``to_dict()`` for JSON.

    Raises
    ------
    ValueError
        On NaN or infinite values, labels that are not exactly two classes, a
        separator of the wrong shape, zero or not finite, or all-zero examples.

    Notes
    -----
    **The target margin of the Δ trick.** The Δ-trick bound holds for every
    ``γ > 0`` (and every unit ``u``): with ``d_i = max(0, γ - y_i u·x_i)``,
    ``D = sqrt(Σ d_i²)`` and ``Δ = sqrt(R D)``, the data ``[X | Δ I]`` are separated by
    ``u' = (u, y_1 d_1/Δ, ..., y_n d_n/Δ) / Z``, ``Z = sqrt(1 + D²/Δ²)``, with margin
    ``γ/Z`` and radius ``sqrt(R² + Δ²)``, so the perceptron with ``delta=Δ`` makes at
    most ``(R² + Δ²) Z² / γ² = ((R + D)/γ)²`` mistakes. A small ``γ`` makes the
    denominator small, a large one makes ``D`` large. ``gamma_delta`` is the ``γ``
    that minimizes the bound over ``0 < γ <= R`` (no example can have a margin above
    ``R``; beyond it the bound only tends to ``n``), found exactly: ``D(γ)²`` is
    quadratic between consecutive margins. The same unit ``u`` serves both bounds.
    On separable data ``γ = gamma`` gives ``D = 0``, ``Δ = 0`` and the plain bound, so
    ``delta_bound <= bound``; it is usually smaller, but then holds for training with
    ``delta=Δ``, not for plain training.

    **The bound counts mistakes** ``y w·x <= 0``, as this package's perceptron does
    (a zero score is a mistake); with margin ``γ`` each one raises ``w·u`` by at least
    ``γ`` and ``||w||²`` by at most ``R²``, hence ``k γ <= ||w|| <= sqrt(k) R``.

    Examples
    --------
    >>> from perceptrons.diagnostics import mistake_bound
    >>> X = [[1.0, 2.0], [2.0, 1.0], [-1.0, -1.0], [-2.0, -1.0]]
    >>> report = mistake_bound(X, [1, 1, 0, 0], separator=[1.0, 1.0], fit_intercept=False)
    >>> round(report.R ** 2, 6), round(report.gamma ** 2, 6), round(report.bound, 6)
    (5.0, 2.0, 2.5)
    >>> report.mistakes, report.mistakes_per_epoch, report.converged
    (1, (1, 0), True)
    >>> print(report)  # doctest: +ELLIPSIS
    Perceptron mistake bound (Block 1962, Novikoff 1962; Δ trick: Freund & Schapire 1999)
      data          4 examples, 2 features
      separator u   given weight vector of length 2
      R             2.23607  = max ||x||
      γ             1.41421  = min y u·x, ||u|| = 1: separable by u
      bound         2.5  (R/γ)²: any order, any number of epochs
    ...
      mistakes      1  (Perceptron, given order, no shuffle: converged after 2 epochs ...)
      per epoch     1, 0
    """
    data, signs, labels = _check_data(X, y)  # X validated: finite floats, dense or CSR
    if isinstance(max_epochs, bool) or not isinstance(max_epochs, int | np.integer):
        raise ValueError(f"max_epochs must be an int >= 1, got {max_epochs!r}.")
    if max_epochs < 1:
        raise ValueError(f"max_epochs must be an int >= 1, got {max_epochs!r}.")
    bias = 1.0 if fit_intercept else 0.0

    squared_norms = squared_row_norms(data) + bias
    R = float(np.sqrt(squared_norms.max()))
    if R == 0.0:
        raise ValueError("Every example is the zero vector: no separator, no bound.")

    if separator is None:
        weights, source = _svc_separator(data, signs, bias, R, C=C, random_state=random_state)
    else:
        weights, source = _given_separator(separator, data.shape[1], labels, fit_intercept)
    norm = float(np.linalg.norm(weights))
    weights = weights / norm
    # The margins y_i u·(x_i, 1): one sparse (or dense) product, no augmented copy.
    margins = signs * (
        np.asarray(data @ weights[:-1], dtype=np.float64).ravel() + bias * weights[-1]
    )
    gamma = float(margins.min())
    separable = gamma > 0.0
    bound = (R / gamma) ** 2 if separable else None

    gamma_delta = _best_target_margin(margins, R)
    D = _shortfall(margins, gamma_delta)

    perceptron = Perceptron(
        max_epochs=max_epochs,
        shuffle=False,
        fit_intercept=fit_intercept,
        early_stopping=True,  # without held-out data: stop after an epoch without mistakes
        random_state=random_state,
        # The bound is the plain rule's: update (and count) only when y w·x <= 0.
        update="perceptron",
        margin=0.0,
    ).fit(data, labels)
    per_epoch = tuple(int(record["mistakes"]) for record in perceptron.history_)

    return MistakeBound(
        n_samples=int(data.shape[0]),
        n_features=int(data.shape[1]),
        fit_intercept=bool(fit_intercept),
        separator_source=source,
        R=R,
        gamma=gamma,
        separable=bool(separable),
        separator_errors=int(np.count_nonzero(margins <= 0.0)),
        bound=bound,
        gamma_delta=gamma_delta,
        D=D,
        delta=math.sqrt(R * D),
        delta_bound=((R + D) / gamma_delta) ** 2,
        mistakes=sum(per_epoch),
        mistakes_per_epoch=per_epoch,
        converged=per_epoch[-1] == 0,
        epochs=len(per_epoch),
    )


def _check_data(X: ArrayLike, y: ArrayLike) -> tuple[Any, np.ndarray, np.ndarray]:
    """Finite float X (CSR or dense), and y of exactly two labels as ±1 signs."""
    check_sparse_structure(X)
    data = check_input(_Input(), X, reset=True, accept_sparse=("csr",))
    labels = check_label_array(y, data.shape[0])
    classes = np.unique(labels)
    if classes.shape[0] > 2:
        raise ValueError(
            f"The mistake bound is for binary problems, but y has {classes.shape[0]} "
            "classes. Run one-vs-rest yourself: mistake_bound(X, y == label) per label."
        )
    check_labels(labels, sklearn_checks=False)  # classes, not a regression target
    if classes.shape[0] != 2:
        raise ValueError(
            f"y must hold exactly two classes, got {classes.tolist()[:5]!r}: the "
            "perceptron needs both a positive and a negative class."
        )
    signs = np.where(labels == classes[1], 1.0, -1.0)
    return data, signs, labels


class _Input:
    """The examples' stand-in for the estimator :func:`~perceptrons._input.check_input`
    checks input for; its messages name it (as ``mistake_bound``)."""


_Input.__name__ = "mistake_bound"


def _svc_separator(
    X: Any,
    signs: np.ndarray,
    bias: float,
    R: float,
    *,
    C: float,
    random_state: int | np.random.RandomState | None,
) -> tuple[np.ndarray, str]:
    """The hinge-loss SVM on [X | 1] / R: the bias is a regularized coordinate of u, as
    in R."""
    if not (isinstance(C, int | float | np.number) and np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a finite float > 0, got {C!r}.")
    # Dividing every (x, 1) by R leaves the direction of largest margin unchanged and
    # gives C the same meaning at every scale of X (hinge losses of unit-radius data).
    max_iter = 1000  # LinearSVC's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        weights, _ = hinge_svm(
            X * (1.0 / R),
            signs,
            C=float(C),
            extra=bias / R,
            max_iter=max_iter,
            random_state=random_state,
        )
    for other in caught:  # only the convergence warning is reported another way
        if not issubclass(other.category, ConvergenceWarning):
            warnings.warn(other.message, other.category, stacklevel=3)
    space = "[X | 1] / R" if bias else "X / R"
    source = f"linear SVM (C={C:g}, hinge loss, dual coordinate descent) on {space}, unit norm"
    if any(issubclass(w.category, ConvergenceWarning) for w in caught):
        source += f" (stopped at max_iter={max_iter} before converging)"
    if not np.any(weights):
        raise ValueError("The linear SVM returned a zero separator; pass separator= yourself.")
    return weights, source


def _given_separator(
    separator: Any, n_features: int, labels: np.ndarray, fit_intercept: bool
) -> tuple[np.ndarray, str]:
    """A fitted binary linear model or a weight vector, as n_features + 1 weights."""
    if hasattr(separator, "coef_"):
        name = type(separator).__name__
        coef = np.asarray(separator.coef_, dtype=np.float64)
        if coef.ndim == 2 and coef.shape[0] == 1:
            coef = coef[0]
        if coef.shape != (n_features,):
            raise ValueError(
                f"The separator {name} has coef_ of shape {np.shape(separator.coef_)}; "
                f"a binary model on {n_features} features has shape (1, {n_features})."
            )
        intercept = np.ravel(np.asarray(getattr(separator, "intercept_", 0.0), dtype=np.float64))
        if intercept.shape != (1,):
            raise ValueError(
                f"The separator {name} has intercept_ of shape {intercept.shape}; "
                "a binary model has one intercept."
            )
        classes = getattr(separator, "classes_", None)
        if classes is not None and not np.array_equal(np.asarray(classes), np.unique(labels)):
            raise ValueError(
                f"The separator {name} was fitted on classes {np.asarray(classes).tolist()!r}, "
                f"but y holds {np.unique(labels).tolist()!r}."
            )
        weights = np.append(coef, intercept)
        source = f"given {name} (coef_, intercept_), unit norm"
    else:
        try:
            weights = np.asarray(separator, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"separator must be None, a fitted linear model or a weight vector ({exc})"
            ) from exc
        if weights.ndim != 1 or weights.shape[0] not in (n_features, n_features + 1):
            raise ValueError(
                f"A separator vector must have length {n_features} (n_features) or "
                f"{n_features + 1} (n_features + 1, the bias last); got shape {weights.shape}."
            )
        source = f"given weight vector of length {weights.shape[0]}"
        if weights.shape[0] == n_features:
            weights = np.append(weights, 0.0)
    if not np.all(np.isfinite(weights)):
        raise ValueError("The separator has NaN or infinite weights.")
    if not np.any(weights):
        raise ValueError("The separator is the zero vector: it has no direction.")
    if not fit_intercept and weights[-1] != 0.0:
        raise ValueError(
            f"The separator has a bias ({weights[-1]:g}) but fit_intercept=False: the "
            "perceptron then learns without a bias feature, and so must u."
        )
    return weights, source


def _best_target_margin(margins: np.ndarray, R: float) -> float:
    """The γ in (0, R] with the smallest Δ-trick bound ((R + D(γ))/γ)², exactly.

    With the margins sorted, D(γ)² = k γ² - 2 γ S₁ + S₂ on each piece between
    consecutive margins, from the number k of margins below γ and their sum S₁ and sum
    of squares S₂. On a piece, f(γ) = (R + D(γ))/γ is smooth, and f'(γ) = 0 gives
    γ S₁ - S₂ = R D(γ), whose square is the quadratic in γ solved below; the minimum is
    at a piece's end or at one of those roots. Beyond R (a margin no example can reach
    with ||x|| <= R) the bound only tends to n, one mistake per example (Δ → ∞).
    """
    ordered = np.sort(margins)
    sums = np.concatenate(([0.0], np.cumsum(ordered)))
    squares = np.concatenate(([0.0], np.cumsum(ordered**2)))
    # |u·x| <= ||x|| <= R: the positive margins all lie in (0, R].
    ends = np.unique(np.append(ordered[(ordered > 0.0) & (ordered < R)], R))
    starts = np.concatenate(([0.0], ends[:-1]))
    k = np.searchsorted(ordered, starts, side="right").astype(np.float64)
    s1, s2 = sums[k.astype(np.intp)], squares[k.astype(np.intp)]
    a, b, c = s1**2 - R**2 * k, -2.0 * s1 * (s2 - R**2), s2 * (s2 - R**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        # The cancellation-free form of the two roots (also right when a = 0).
        q = -0.5 * (b + np.copysign(np.sqrt(b**2 - 4.0 * a * c), b))
        roots = np.concatenate([q / a, c / q])
    low, high = np.tile(starts, 2), np.tile(ends, 2)
    inside = np.isfinite(roots) & (roots > low) & (roots < high)
    candidates = np.concatenate([ends, roots[inside]])

    below = np.searchsorted(ordered, candidates, side="left")
    squared = candidates**2 * below - 2.0 * candidates * sums[below] + squares[below]
    scores = (R + np.sqrt(np.maximum(squared, 0.0))) / candidates
    best = candidates[np.argmin(scores)]
    # The prefix sums round: a root a hair from its piece's end can look better than
    # the end itself. Settle between them with exact sums.
    piece = np.searchsorted(ends, best, side="left")
    near = [best, ends[piece]] + ([ends[piece - 1]] if piece > 0 else [])
    return float(min(near, key=lambda gamma: (R + _shortfall(margins, gamma)) / gamma))


def _shortfall(margins: np.ndarray, gamma: float) -> float:
    """Freund & Schapire's (1999) D = sqrt(Σ_i max(0, γ - y_i u·x_i)²)."""
    return float(np.sqrt(np.sum(np.maximum(0.0, gamma - margins) ** 2)))
