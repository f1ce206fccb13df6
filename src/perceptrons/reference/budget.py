"""Kernel perceptrons on a budget: at most ``budget`` support vectors, whatever the stream.

One function per paper, each a plain loop over the examples written next to the
paper's pseudocode, on a precomputed Gram matrix ``K`` of the training examples:

``randomized_budget_perceptron``
    Cavallanti, Cesa-Bianchi & Gentile (2007): the kernel perceptron; on a mistake with
    a full support set, a support vector drawn uniformly at random is discarded first.
``forgetron``
    Dekel, Shalev-Shwartz & Singer (2008), the self-tuned Forgetron: on a mistake with a
    full support set, every coefficient is shrunk by the largest ``phi`` in (0, 1] that
    keeps the accumulated damage ``Q`` of the removals within ``15/32`` of the mistakes
    ``M``, then the oldest support vector is removed.
``projectron``
    Orabona, Keshet & Caputo (2009), the Projectron: on a mistake, if the new example
    lies within ``eta`` of the span of the support set (in the kernel's feature space),
    its update is projected onto that span and no support vector is added; otherwise it
    is added and the inverse Gram matrix of the support set grows by the block-inverse
    formula.
``budgeted_pa``
    Wang & Vucetic (2010), BPA-S and BPA-NN: the passive-aggressive PA-I update
    (Crammer et al. 2006); with a full support set, the new example replaces the
    support vector whose removal, with its coefficient projected onto the new example
    (and, BPA-NN, onto its nearest neighbour), changes the model least.

Support slots
-------------
The support set is a list of ``budget`` slots, filled in order; a new support vector
that replaces another takes its slot. The oracles return the slots in that order (the
example of each slot and its coefficients), which is also the order of the estimator's
``support_vectors_`` (:class:`perceptrons.BudgetPerceptron`).

Binary and multiclass
---------------------
With ``n_classes=None`` the labels are ``{+1, -1}`` and each support vector has one
coefficient; the model's score is ``f(x) = sum_s coef[s] K[x_s, x]``, a mistake is
``y f(x) <= 0`` and the update direction is ``e = y``. With ``n_classes`` (int codes
``0 .. n_classes - 1``) the support vectors are shared by the classes and each has one
coefficient per class (Crammer & Singer 2003): the prediction is the highest-scoring
class, ties to the lowest index; on a mistake the update direction is ``e = +1`` for the
gold class and ``-1`` for the predicted one, so that the binary rules apply to the
vector ``e * phi(x_t)`` (the Kesler construction). How each paper's scalar quantities
extend is said in each function.

References
----------
G. Cavallanti, N. Cesa-Bianchi and C. Gentile, "Tracking the best hyperplane with a
simple budget Perceptron", Machine Learning 69(2-3):143-167, 2007.

O. Dekel, S. Shalev-Shwartz and Y. Singer, "The Forgetron: a kernel-based perceptron on
a budget", SIAM Journal on Computing 37(5):1342-1372, 2008.

F. Orabona, J. Keshet and B. Caputo, "Bounded kernel-based online learning", Journal of
Machine Learning Research 10:2643-2666, 2009 (the Projectron, ICML 2008).

Z. Wang and S. Vucetic, "Online passive-aggressive algorithms on a budget", AISTATS
2010, JMLR W&CP 9:908-915.

K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz and Y. Singer, "Online
passive-aggressive algorithms", Journal of Machine Learning Research 7:551-585, 2006.

K. Crammer and Y. Singer, "Ultraconservative online algorithms for multiclass
problems", Journal of Machine Learning Research 3:951-991, 2003.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perceptrons.reference._common import (
    _as_orders,
    epoch_orders,  # noqa: F401  (the doctests build their orders with it)
)

__all__ = ["budgeted_pa", "forgetron", "projectron", "randomized_budget_perceptron"]

Result = tuple[np.ndarray, np.ndarray, int]


def _gram(K: np.ndarray, n_samples: int) -> np.ndarray:
    """``K`` as the (n_samples, n_samples) float64 Gram matrix of the examples."""
    K = np.asarray(K, dtype=np.float64)
    if K.shape != (n_samples, n_samples):
        raise ValueError(f"K must have shape {(n_samples, n_samples)}, got {K.shape}")
    return K


def _in_order(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix.T @ vector`` summed term by term in index order: ``0 + m_0 v_0 + m_1 v_1
    + ...``. A model reached by projections or shrinking can score exactly zero in
    exact arithmetic, and only a fixed order of the rounding makes two implementations
    (this one and the compiled loop) call such a tie the same way."""
    total = np.zeros(matrix.shape[1:])
    for j in range(matrix.shape[0]):
        total = total + matrix[j] * vector[j]
    return total


class _Model:
    """The support slots (example index per slot) and their coefficients."""

    def __init__(self, K: np.ndarray, y: np.ndarray, n_classes: int | None, budget: int):
        if int(budget) < 1:
            raise ValueError(f"budget must be >= 1, got {budget}")
        self.K, self.y, self.budget = K, np.asarray(y), int(budget)
        self.multiclass = n_classes is not None
        self.n_columns = 1 if n_classes is None else int(n_classes)
        self.slots: list[int] = []
        self.coef = np.zeros((0, self.n_columns))

    def scores(self, t: int) -> np.ndarray:
        """``f(x_t)``, one score per column, summed over the slots in order."""
        return _in_order(self.coef, self.K[self.slots, t])

    def predicted(self, scores: np.ndarray) -> int:
        """The predicted class (multiclass: the argmax, ties to the lowest index)."""
        return int(np.argmax(scores))

    def mistake(self, t: int, scores: np.ndarray) -> bool:
        if self.multiclass:
            return self.predicted(scores) != int(self.y[t])
        return bool(self.y[t] * scores[0] <= 0)

    def direction(self, t: int, scores: np.ndarray) -> np.ndarray:
        """``e``: ``y_t`` (binary), or +1 gold / -1 predicted (multiclass)."""
        e = np.zeros(self.n_columns)
        if self.multiclass:
            e[int(self.y[t])] += 1.0
            e[self.predicted(scores)] -= 1.0
        else:
            e[0] = float(self.y[t])
        return e

    def add(self, t: int, coef: np.ndarray) -> None:
        self.slots.append(int(t))
        self.coef = np.vstack([self.coef, coef])

    def replace(self, slot: int, t: int, coef: np.ndarray) -> None:
        self.slots[slot] = int(t)
        self.coef[slot] = coef

    def result(self, mistakes: int) -> Result:
        return np.array(self.slots, dtype=np.int64), self.coef.copy(), mistakes


def randomized_budget_perceptron(
    K: np.ndarray,
    y: np.ndarray,
    orders: Sequence[np.ndarray],
    budget: int,
    uniforms: Sequence[np.ndarray],
    n_classes: int | None = None,
) -> Result:
    """The randomized budget perceptron (Cavallanti, Cesa-Bianchi & Gentile 2007).

    The paper's pseudocode, in the kernel (dual) form: predict ``sign(f(x_t))``; on a
    mistake, if the support set already holds ``budget`` examples, discard one of them
    drawn uniformly at random; then add ``x_t`` with coefficient ``y_t``. Multiclass:
    the new support vector's coefficients are ``e`` (+1 gold, -1 predicted).

    Parameters
    ----------
    K : ndarray of shape (n_samples, n_samples)
        Gram matrix of the training examples.
    y : ndarray of shape (n_samples,)
        Labels in ``{+1, -1}``, or class codes when ``n_classes`` is given.
    orders : sequence of 1-D int arrays
        One visiting order per epoch (:func:`~perceptrons.reference.epoch_orders`).
    budget : int
        The most support vectors kept.
    uniforms : sequence of 1-D float arrays
        Per epoch, one uniform number in [0, 1) per position of its order: the example
        at position ``i`` discards slot ``floor(uniforms[e][i] * budget)`` (the random
        draw, made by the caller so that the estimator can use the same numbers).
    n_classes : int, optional
        Number of classes for the multiclass form (None: binary).

    Returns
    -------
    slots : ndarray of shape (n_support,)
        The training example held in each support slot.
    coef : ndarray of shape (n_support, n_columns)
        Their coefficients (one column when binary).
    mistakes : int
        Prediction mistakes over all epochs.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.5]])
    >>> y = np.array([1, -1, 1, -1])
    >>> orders = epoch_orders(4, 1)
    >>> slots, coef, mistakes = randomized_budget_perceptron(
    ...     X @ X.T + 1, y, orders, budget=1, uniforms=[np.zeros(4)])
    >>> slots.tolist(), coef.ravel().tolist(), mistakes
    ([3], [-1.0], 4)
    """
    model = _Model(_gram(K, len(y)), y, n_classes, budget)
    mistakes = 0
    for order, draws in zip(_as_orders(orders), uniforms, strict=True):
        for t, u in zip(order, draws, strict=True):
            scores = model.scores(t)
            if not model.mistake(t, scores):
                continue
            mistakes += 1
            e = model.direction(t, scores)
            if len(model.slots) == model.budget:
                # "discard a support vector chosen uniformly at random", whose slot
                # the new support vector takes.
                model.replace(min(int(u * model.budget), model.budget - 1), t, e)
            else:
                model.add(t, e)
    return model.result(mistakes)


def _forgetron_phi(sigma: float, mu: float, Q: float, M: int) -> float:
    """The self-tuned Forgetron's shrinking coefficient (Dekel et al. 2008, Fig. 3).

    ``phi = max{phi in (0, 1] : Psi(sigma * phi, phi * mu) + Q <= 15/32 M}`` with
    ``Psi(lambda, mu) = lambda^2 + 2 lambda - 2 lambda mu``. ``Psi(sigma phi, phi mu) =
    a phi^2 + b phi`` with ``a = sigma^2 - 2 sigma mu``, ``b = 2 sigma``; with
    ``c = Q - 15/32 M <= 0`` the largest feasible ``phi`` is 1 when ``a + b + c <= 0``,
    else the root ``(-b + sqrt(b^2 - 4ac)) / (2a)`` (``-c / b`` when ``a = 0``), written
    ``-2c / (b + sqrt(b^2 - 4ac))`` so that it stays accurate for small ``a``.
    """
    a = sigma * sigma - 2.0 * sigma * mu
    b = 2.0 * sigma
    c = Q - 15.0 / 32.0 * M
    if a + b + c <= 0.0:
        return 1.0
    return -2.0 * c / (b + np.sqrt(max(b * b - 4.0 * a * c, 0.0)))


def forgetron(
    K: np.ndarray,
    y: np.ndarray,
    orders: Sequence[np.ndarray],
    budget: int,
    n_classes: int | None = None,
) -> Result:
    """The self-tuned Forgetron (Dekel, Shalev-Shwartz & Singer 2008).

    The paper's pseudocode: on a mistake, ``M <- M + 1`` and (1) ``x_t`` joins with
    ``sigma_t = 1``. If the support set now exceeds the budget: (2) ``r`` is the oldest
    support vector; ``phi`` is the largest value in (0, 1] with ``Psi(sigma_r phi,
    y_r f''(x_r)) + Q <= 15/32 M`` (:func:`_forgetron_phi`), where ``f'`` is the model
    after step (1) and ``f'' = phi f'``; every coefficient is multiplied by ``phi``;
    ``Q <- Q + Psi(sigma_r phi, y_r f''(x_r))``; (3) ``r`` is removed (``x_t`` takes its
    slot).

    Multiclass: support vector ``r``'s coefficients are ``sigma_r e_r``, and ``y_r
    f'(x_r)`` becomes ``e_r . f'(x_r)`` (its gold score minus its then-predicted class's
    score), i.e. ``coef[r] . f'(x_r) / sigma_r`` with ``sigma_r = max_c |coef[r, c]|`` --
    the binary formula when there is one column. The paper's bound assumes
    ``K(x, x) <= 1``; ``Psi`` is used as written with any kernel.

    Parameters
    ----------
    K, y, orders, budget, n_classes
        As :func:`randomized_budget_perceptron`.

    Returns
    -------
    slots, coef, mistakes
        As :func:`randomized_budget_perceptron`.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.5]])
    >>> y = np.array([1, -1, 1, -1])
    >>> slots, coef, mistakes = forgetron(X @ X.T / 4, y, epoch_orders(4, 2), budget=2)
    >>> slots.tolist(), mistakes
    ([2, 1], 4)
    """
    model = _Model(_gram(K, len(y)), y, n_classes, budget)
    birth: list[int] = []  # when each slot's support vector joined: the oldest goes
    Q, M, clock = 0.0, 0, 0
    for order in _as_orders(orders):
        for t in order:
            clock += 1
            scores = model.scores(t)
            if not model.mistake(t, scores):
                continue
            M += 1
            e = model.direction(t, scores)
            if len(model.slots) < model.budget:  # |I'_t| <= B: sigma_t = 1, nothing else
                model.add(t, e)
                birth.append(clock)
                continue
            r = int(np.argmin(birth))  # r_t = min I_t
            f_prime = model.scores(model.slots[r]) + e * model.K[t, model.slots[r]]
            sigma = float(np.max(np.abs(model.coef[r])))
            # y_r f'_t(x_r); 0 for a support vector shrunk to nothing (phi = 0)
            mu = float(_in_order(model.coef[r], f_prime)) / sigma if sigma > 0 else 0.0
            phi = _forgetron_phi(sigma, mu, Q, M)
            model.coef = model.coef * phi  # sigma_{i,t+1} = phi sigma_{i,t}, i in I'_t
            lam = sigma * phi
            Q = Q + lam * lam + 2.0 * lam - 2.0 * lam * (phi * mu)  # Psi(lambda, y_r f''(x_r))
            model.replace(r, t, phi * e)  # I_{t+1} = I'_t \ {r_t}
            birth[r] = clock
    return model.result(M)


def projectron(
    K: np.ndarray,
    y: np.ndarray,
    orders: Sequence[np.ndarray],
    budget: int,
    eta: float,
    n_classes: int | None = None,
) -> Result:
    """The Projectron (Orabona, Keshet & Caputo 2009), held to a budget.

    The paper's pseudocode: on a mistake, ``d* = K_S^{-1} k_t`` (``k_t`` the kernel
    values between the support set ``S`` and ``x_t``) and ``delta_t^2 = K(x_t, x_t) -
    k_t . d*``, the squared distance of ``phi(x_t)`` from the span of ``S``. If
    ``delta_t <= eta`` the update is projected onto the span: every support vector's
    coefficient gains ``y_t d*_j``; otherwise ``x_t`` joins with ``y_t`` and
    ``K_S^{-1}`` grows to ``[[K_S^{-1}, 0], [0, 0]] + [d*; -1][d*; -1]^T / delta_t^2``.

    The Projectron has no fixed budget (its support set is bounded through ``eta``);
    held to ``budget``, a full support set makes every update a projected one (as if
    ``eta`` were infinite), so that no support vector is ever removed. Multiclass: the
    update ``e phi(x_t)`` is projected the same way, coefficient ``j`` gaining
    ``d*_j e``. ``delta_t^2`` below 0 by rounding counts as 0. ``eta`` bounds the
    distance ``delta_t``; Orabona's DOGMA toolbox compares ``delta_t^2`` with its
    ``eta`` instead, which is this rule with ``eta`` squared.

    Parameters
    ----------
    K, y, orders, budget, n_classes
        As :func:`randomized_budget_perceptron`.
    eta : float
        The projection threshold (>= 0), a distance in the kernel's feature space.

    Returns
    -------
    slots, coef, mistakes
        As :func:`randomized_budget_perceptron`.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [-1.0, 0.5]])
    >>> y = np.array([1, -1, 1, -1])
    >>> slots, coef, mistakes = projectron(X @ X.T, y, epoch_orders(4, 1), 3, eta=0.1)
    >>> slots.tolist(), coef.ravel().tolist(), mistakes
    ([0, 1], [1.0, -1.0], 2)
    """
    model = _Model(_gram(K, len(y)), y, n_classes, budget)
    inverse = np.zeros((0, 0))  # K_S^{-1}
    mistakes = 0
    for order in _as_orders(orders):
        for t in order:
            scores = model.scores(t)
            if not model.mistake(t, scores):
                continue
            mistakes += 1
            e = model.direction(t, scores)
            k_t = model.K[model.slots, t]
            d = _in_order(inverse.T, k_t)  # K_S^{-1} k_t
            delta = np.sqrt(max(model.K[t, t] - float(_in_order(k_t, d)), 0.0))
            if delta <= eta or len(model.slots) == model.budget:
                model.coef = model.coef + np.outer(d, e)  # the projected update
                continue
            n = len(model.slots)
            grown = np.zeros((n + 1, n + 1))
            grown[:n, :n] = inverse
            v = np.append(d, -1.0)
            inverse = grown + np.outer(v, v) / (delta * delta)
            model.add(t, e)
    return model.result(mistakes)


def budgeted_pa(
    K: np.ndarray,
    y: np.ndarray,
    orders: Sequence[np.ndarray],
    budget: int,
    C: float,
    n_classes: int | None = None,
    nearest_neighbour: bool = False,
) -> Result:
    """The budgeted passive-aggressive algorithm BPA-S (Wang & Vucetic 2010).

    PA-I (Crammer et al. 2006) with the hinge loss ``l_t = max(0, 1 - y_t f(x_t))``: if
    ``l_t > 0`` the step is ``tau_t = min(C, l_t / K(x_t, x_t))`` and, while the budget
    is not full, ``x_t`` joins with coefficient ``y_t tau_t``. With a full budget, BPA-S
    adds ``x_t`` and removes one support vector ``r``, whose coefficient ``alpha_r`` is
    projected onto ``x_t`` alone: the new coefficient is ``beta = alpha_r K(x_r, x_t) /
    K(x_t, x_t) + y_t tau_t`` (the closed-form solution of PA-I's problem with the
    budget constraint), and ``r`` is the support vector for which that changes the
    model least, ``argmin_r alpha_r^2 (K(x_r, x_r) - K(x_r, x_t)^2 / K(x_t, x_t))``
    (ties to the lowest slot; the hinge term of the objective is the same for every
    ``r``).

    Multiclass: the loss is ``max(0, 1 - (f_y(x_t) - f_s(x_t)))`` with ``s`` the
    highest-scoring class other than ``y`` (ties to the lowest index), the step
    ``tau_t = min(C, l_t / (2 K(x_t, x_t)))`` (multiclass PA-I, Crammer et al. 2006)
    along ``e`` (+1 for ``y``, -1 for ``s``), the projection column by column and the
    removal criterion ``||alpha_r||^2 (K(x_r, x_r) - K(x_r, x_t)^2 / K(x_t, x_t))``. An
    example with ``K(x_t, x_t) = 0`` cannot change its own score and is skipped.
    ``mistakes`` counts prediction mistakes, as for the other rules (updates happen on
    every positive loss).

    BPA-NN (``nearest_neighbour=True``) projects ``alpha_r`` onto the span of ``x_t``
    and ``x_n``, the nearest other support vector to ``x_r`` in the kernel's feature
    space (``K(x_r, x_r) + K(x_j, x_j) - 2 K(x_r, x_j)`` least, ties to the lowest
    slot): ``(p_t, p_n) = G^{-1} (K(x_r, x_t), K(x_r, x_n))`` with ``G`` the Gram
    matrix of ``x_t, x_n``; ``x_n``'s coefficient gains ``alpha_r p_n``, ``x_t``'s is
    ``alpha_r p_t + y_t tau_t`` (the step along ``x_t``, the least change that gains
    the margin, is PA-I's as before) and the criterion is ``||alpha_r||^2 (K(x_r, x_r)
    - (K(x_r, x_t) p_t + K(x_r, x_n) p_n))``. Without a neighbour (one support vector)
    or with ``det G <= 0`` (``x_n`` and ``x_t`` parallel), it projects onto ``x_t``
    alone, as BPA-S.

    Parameters
    ----------
    K, y, orders, budget, n_classes
        As :func:`randomized_budget_perceptron`.
    C : float
        PA-I's aggressiveness (> 0), the largest step.

    Returns
    -------
    slots, coef, mistakes
        As :func:`randomized_budget_perceptron`.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [-1.0, 0.5]])
    >>> y = np.array([1, -1, 1, -1])
    >>> slots, coef, mistakes = budgeted_pa(X @ X.T, y, epoch_orders(4, 1), 2, C=1.0)
    >>> slots.tolist(), coef.ravel().round(3).tolist(), mistakes
    ([0, 1], [1.0, -1.0], 2)
    """
    model = _Model(_gram(K, len(y)), y, n_classes, budget)
    mistakes = 0
    for order in _as_orders(orders):
        for t in order:
            scores = model.scores(t)
            mistakes += int(model.mistake(t, scores))
            k_tt = model.K[t, t]
            if model.multiclass:
                gold = int(model.y[t])
                others = scores.copy()
                others[gold] = -np.inf
                other = int(np.argmax(others))
                loss = max(0.0, 1.0 - (scores[gold] - scores[other]))
                if loss <= 0.0 or k_tt <= 0.0:
                    continue
                e = np.zeros(model.n_columns)
                e[gold], e[other] = 1.0, -1.0
                tau = min(C, loss / (2.0 * k_tt))
            else:
                loss = max(0.0, 1.0 - model.y[t] * scores[0])
                if loss <= 0.0 or k_tt <= 0.0:
                    continue
                e = np.array([float(model.y[t])])
                tau = min(C, loss / k_tt)
            if len(model.slots) < model.budget:
                model.add(t, tau * e)
                continue
            k_st = model.K[model.slots, t]
            k_ss = model.K[model.slots, model.slots]
            sizes = _in_order(model.coef.T**2, np.ones(model.n_columns))
            if not nearest_neighbour:  # BPA-S
                change = sizes * (k_ss - k_st**2 / k_tt)
                r = int(np.argmin(change))
                model.replace(r, t, model.coef[r] * k_st[r] / k_tt + tau * e)
                continue
            r, n, p_t, p_n = _bpa_nn_removal(model, t, k_st, k_ss, k_tt, sizes)
            if n is not None:
                model.coef[n] = model.coef[n] + model.coef[r] * p_n
            model.replace(r, t, model.coef[r] * p_t + tau * e)
    return model.result(mistakes)


def _bpa_nn_removal(
    model: _Model, t: int, k_st: np.ndarray, k_ss: np.ndarray, k_tt: float, sizes: np.ndarray
) -> tuple[int, int | None, float, float]:
    """BPA-NN's choice: the slot ``r`` to remove, the slot ``n`` of its nearest neighbour
    that takes part of it (None: projected onto ``x_t`` alone) and the projection
    ``(p_t, p_n)``, for the least ``||alpha_r||^2`` times the projection's residual."""
    S = model.slots
    best: tuple[float, int, int | None, float, float] | None = None
    for r in range(len(S)):
        n, p_t, p_n = None, k_st[r] / k_tt, 0.0
        residual = k_ss[r] - k_st[r] ** 2 / k_tt
        others = [j for j in range(len(S)) if j != r]
        if others:
            distances = [k_ss[r] + k_ss[j] - 2.0 * model.K[S[r], S[j]] for j in others]
            m = others[int(np.argmin(distances))]  # ties to the lowest slot
            g_t, g_n, k_tn = k_st[r], model.K[S[r], S[m]], k_st[m]
            det = k_tt * k_ss[m] - k_tn * k_tn
            if det > 0.0:
                n = m
                p_t = (k_ss[m] * g_t - k_tn * g_n) / det
                p_n = (k_tt * g_n - k_tn * g_t) / det
                residual = k_ss[r] - (g_t * p_t + g_n * p_n)
        change = sizes[r] * residual
        if best is None or change < best[0]:
            best = (change, r, n, p_t, p_n)
    assert best is not None
    return best[1:]
