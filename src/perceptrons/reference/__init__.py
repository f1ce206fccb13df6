"""Reference implementations ("oracles") of the perceptron algorithms in the seeds.

Every function here follows the pseudocode of one source document in
``/work/shared/seeds/`` line by line: a loop over the examples, a prediction, and an
update when the prediction is a mistake. They are slow on purpose and exist so that
the compiled estimators can be tested against something that can be read next to the
seed it comes from.

Conventions
-----------
``X``
    A dense ndarray of shape ``(n_samples, n_features)`` or any ``scipy.sparse`` matrix
    or array (converted once to CSR). Rows are read one at a time through
    :func:`_row`, which returns a dense 1-D float64 copy, so dense and sparse inputs go
    through exactly the same arithmetic and give bit-identical results. All weights are
    float64.
``y``
    Binary functions: labels in ``{+1, -1}`` (int or float). Multiclass functions: int
    class codes ``0 .. n_classes - 1``; ``n_classes`` is passed explicitly.
``orders``
    A sequence of 1-D integer index arrays, one per epoch: epoch ``e`` visits
    ``X[orders[e][0]], X[orders[e][1]], ...``. The whole run therefore sees a sequence of
    ``N = sum(len(o) for o in orders)`` examples; :func:`epoch_orders` builds ``orders``
    the way the estimators do.
Binary mistake
    ``y * (w @ x + b) <= 0``. A score of exactly zero is a mistake, so the very first
    example always triggers an update (with ``w = 0`` a strict ``< 0`` would never
    update at all). Seeds 002 and 003's vanilla pseudocode and Python code write
    ``<= 0``; seed 003's averaged pseudocode and seed 004 write ``< 0``; we use
    ``<= 0`` everywhere.
Multiclass prediction
    ``p = argmax_k (W[k] @ x + b[k])``, ties going to the lowest class index (what
    ``np.argmax`` does). On a mistake ``p != y``: ``W[p] -= x; b[p] -= 1; W[y] += x;
    b[y] += 1`` (seed 001).
Bias
    Seeds 000 and 003 have no bias. Here the bias is always learned, as the weight of an
    implicit constant feature equal to 1, which is exactly seed 002's ``b <- b + y``.
Averages
    Write ``w_t, b_t`` for the weights after the ``t``-th example of the sequence
    (``t = 1 .. N``, updated or not) and ``w_0 = 0, b_0 = 0`` for the start. The
    *exact mean* is ``(w_1 + ... + w_N) / N``, and the *running sum*
    ``S = w_1 + ... + w_N``. The seeds' averaged perceptrons return different
    normalisations of ``S``; every function returns what its seed returns and its
    docstring states how that relates to the exact mean:

    ========================================  ==================  =================
    function                                  returns             exact mean
    ========================================  ==================  =================
    ``averaged_perceptron_naive``             ``S / N``           result
    ``averaged_perceptron_delta_list``        ``S``               ``result / N``
    ``averaged_perceptron_fast``              ``S``               ``result / N``
    ``averaged_perceptron_wb``                ``S / (N + 1)``     ``result (N+1)/N``
    ``averaged_perceptron_decreasing_step``   ``S / N``           result
    ``multiclass_averaged_perceptron``        ``S / (N + 1)``     ``result (N+1)/N``
    ``multiclass_averaged_perceptron_naive``  ``S / N``           result
    ========================================  ==================  =================
Voted models
    The voted perceptron (seeds 000 and 004) keeps the models ``v_0 = 0, v_1, ..., v_K``,
    one per update (``K`` = number of updates), and the number of examples ``m_k``
    each one was the current model for, counting the example on which ``v_k`` was
    created (``m_0`` starts at 0). Expanding ``v_k`` into ``m_k`` copies gives the list
    ``w_1, ..., w_N`` of seed 000's naive scheme, so ``sum(m_k) = N``, ``v_K = w_N``
    and ``sum(m_k v_k) = S``. Biases ``c_k`` are kept alongside. The kernel (dual)
    variants store the update example indices and signs instead of the vectors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

__all__ = [
    "averaged_perceptron_decreasing_step",
    "averaged_perceptron_delta_list",
    "averaged_perceptron_fast",
    "averaged_perceptron_naive",
    "averaged_perceptron_wb",
    "dual_kernel_perceptron",
    "dual_vote_scores",
    "dual_voted_perceptron",
    "epoch_orders",
    "multiclass_averaged_perceptron",
    "multiclass_averaged_perceptron_naive",
    "multiclass_perceptron",
    "multiclass_voted_perceptron",
    "multiclass_voted_perceptron_naive",
    "perceptron",
    "vote_predict",
    "voted_perceptron",
    "voted_perceptron_naive",
]

# What the functions accept as ``X``: dense, or any scipy.sparse matrix or array.
Matrix = np.ndarray | sp.spmatrix | sp.sparray


# --------------------------------------------------------------------------- helpers


def epoch_orders(
    n_samples: int,
    n_epochs: int,
    shuffle: bool = False,
    random_state: int | None = None,
) -> list[np.ndarray]:
    """Return the per-epoch visiting orders, drawn exactly as the estimators draw them.

    Parameters
    ----------
    n_samples : int
        Number of training examples.
    n_epochs : int
        Number of passes over the data.
    shuffle : bool, default=False
        If false every epoch visits ``0, 1, ..., n_samples - 1``.
    random_state : int or None, default=None
        Seed of ``np.random.RandomState``, used only when ``shuffle`` is true.

    Returns
    -------
    orders : list of ndarray of shape (n_samples,)
        ``[np.arange(n_samples)] * n_epochs`` without shuffling; with shuffling
        ``rs = np.random.RandomState(random_state)`` then
        ``[rs.permutation(n_samples) for _ in range(n_epochs)]``.

    Examples
    --------
    >>> [o.tolist() for o in epoch_orders(3, 2)]
    [[0, 1, 2], [0, 1, 2]]
    >>> a = epoch_orders(5, 3, shuffle=True, random_state=0)
    >>> b = epoch_orders(5, 3, shuffle=True, random_state=0)
    >>> all((p == q).all() for p, q in zip(a, b))
    True
    """
    if not shuffle:
        return [np.arange(n_samples)] * n_epochs
    rs = np.random.RandomState(random_state)
    return [rs.permutation(n_samples) for _ in range(n_epochs)]


def _as_matrix(X: Matrix) -> np.ndarray | sp.csr_matrix:
    """Sparse input to CSR (row indexing), dense input to a 2-D float64 ndarray."""
    if sp.issparse(X):
        return sp.csr_matrix(X, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    return X


def _row(X: np.ndarray | sp.csr_matrix, i: int) -> np.ndarray:
    """Row ``i`` of ``X`` as a dense 1-D float64 array (a copy for sparse input)."""
    if sp.issparse(X):
        return np.asarray(X[i].todense(), dtype=np.float64).ravel()
    return np.asarray(X[i], dtype=np.float64).ravel()


def _as_orders(orders: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [np.asarray(order, dtype=np.intp).ravel() for order in orders]


def _n_examples(orders: Sequence[np.ndarray]) -> int:
    """``N``: the length of the whole example sequence of a run."""
    return sum(len(order) for order in orders)


def _binary_labels(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64).ravel()
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError("binary labels must be +1 or -1")
    return y


def _class_codes(y: np.ndarray, n_classes: int) -> np.ndarray:
    y = np.asarray(y).ravel()
    codes = y.astype(np.intp)
    if not np.array_equal(codes, y) or np.any(codes < 0) or np.any(codes >= n_classes):
        raise ValueError(f"class codes must be integers in 0..{n_classes - 1}")
    return codes


def _require_examples(n: int) -> None:
    if n == 0:
        raise ValueError("the mean over an empty example sequence is undefined")


# --------------------------------------------------------------------------- binary


def perceptron(
    X: Matrix, y: np.ndarray, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, float, list[int]]:
    """Vanilla binary perceptron with a bias.

    Seed 003, "perceptron pseudocode" (``w = 0; repeat: for (x_i, y_i): score =
    y w.x_i; if score <= 0: w = w + y x``), with the bias of seed 002 lines 2, 7 and 9
    (``b <- 0``; the score is ``y (w.x + b)``; ``b <- b + y``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Labels in ``{+1, -1}``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, see :func:`epoch_orders`.

    Returns
    -------
    w : ndarray of shape (n_features,)
        The last weight vector ``w_N``.
    b : float
        The last bias ``b_N``.
    mistakes : list of int
        Number of mistakes (= updates) in each epoch, ``len(mistakes) == len(orders)``.

    Notes
    -----
    A score of exactly zero is a mistake (``<= 0``), so the first example always
    updates. This is the last point of the trajectory whose average the averaged
    variants compute; it is not itself an average.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    >>> y = np.array([1, -1, 1, -1])
    >>> w, b, mistakes = perceptron(X, y, epoch_orders(4, 1))
    >>> w.tolist(), b, mistakes  # updates on examples 1, 2 and 4
    ([2.0, 1.0], -1.0, [3])
    """
    X = _as_matrix(X)
    y = _binary_labels(y)
    w = np.zeros(X.shape[1])
    b = 0.0
    mistakes = []
    for order in _as_orders(orders):
        n_mistakes = 0
        for i in order:
            x = _row(X, i)
            if y[i] * (w @ x + b) <= 0:
                w = w + y[i] * x
                b = b + y[i]
                n_mistakes += 1
        mistakes.append(n_mistakes)
    return w, float(b), mistakes


def averaged_perceptron_naive(
    X: Matrix, y: np.ndarray, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, float]:
    """Averaged perceptron, naive: add the weights to a running sum after every example.

    Seed 003, "averaged perceptron pseudocode (naive)": ``w_{t+1} = w_t + y_i x_i`` on a
    mistake, else ``w_{t+1} = w_t``; ``t = t + 1``; return ``(w_1 + ... + w_{NT}) / NT``.
    Seed 000's running sum ``w_s <- w_s + w^(i)`` after the ``i``-th example is the same
    computation. The bias is learned as the weight of a constant feature equal to 1
    (seed 002's ``b <- b + y``) and averaged the same way.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Labels in ``{+1, -1}``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, ``N = sum(len(o) for o in orders) >= 1``.

    Returns
    -------
    w_avg : ndarray of shape (n_features,)
        The exact mean ``(w_1 + ... + w_N) / N`` of the weight vectors after every
        example (``w_0 = 0`` is not included).
    b_avg : float
        The exact mean ``(b_1 + ... + b_N) / N`` of the biases.

    Notes
    -----
    Mistake rule ``y (w.x + b) <= 0``; the seed's pseudocode writes ``< 0``, which with
    ``w_0 = 0`` would never update (its Python code writes ``<= 0``).

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    >>> y = np.array([1, -1, 1, -1])
    >>> w, b = averaged_perceptron_naive(X, y, epoch_orders(4, 1))
    >>> w.tolist(), b  # ([1, 0] + [1, -1] + [1, -1] + [2, 1]) / 4, (1 + 0 + 0 - 1) / 4
    ([1.25, -0.25], 0.0)
    """
    X = _as_matrix(X)
    y = _binary_labels(y)
    orders = _as_orders(orders)
    n_total = _n_examples(orders)
    _require_examples(n_total)
    w = np.zeros(X.shape[1])
    b = 0.0
    w_sum = np.zeros(X.shape[1])
    b_sum = 0.0
    for order in orders:
        for i in order:
            x = _row(X, i)
            if y[i] * (w @ x + b) <= 0:
                w = w + y[i] * x
                b = b + y[i]
            # after EVERY example, updated or not
            w_sum = w_sum + w
            b_sum = b_sum + b
    return w_sum / n_total, float(b_sum / n_total)


def averaged_perceptron_delta_list(
    X: Matrix, y: np.ndarray, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, float]:
    """Averaged perceptron from the list of updates, each weighted by its remaining life.

    Seed 000, the "Δw" scheme: store the update vectors ``Δw^(i) = y x`` (with the
    position of the example where each happened) instead of the weight vectors, and at
    the end output ``w_s = Σ life_i Δw^(i)``, where an update made at the ``t``-th
    example (``t = 1 .. N``) lives for ``N - t + 1`` examples: the one where it happened
    and every later one (the seed's ``4Δw1 + 3Δw2 + 2Δw3 + 1Δw4`` for four updates on
    four examples). The bias updates ``Δb = y`` are stored and weighted the same way.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Labels in ``{+1, -1}``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, ``N = sum(len(o) for o in orders)``.

    Returns
    -------
    w_sum : ndarray of shape (n_features,)
        The running sum ``S = w_1 + ... + w_N`` (the seed notes normalising is
        unnecessary since it does not change the direction). Exact mean: ``w_sum / N``.
    b_sum : float
        ``b_1 + ... + b_N``. Exact mean: ``b_sum / N``.

    Notes
    -----
    Mistake rule ``y (w.x + b) <= 0``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    >>> y = np.array([1, -1, 1, -1])
    >>> w, b = averaged_perceptron_delta_list(X, y, epoch_orders(4, 1))
    >>> w.tolist(), b  # updates at t = 1, 2, 4, lives 4, 3, 1: 4 [1, 0] + 3 [0, -1] + [1, 2]
    ([5.0, -1.0], 0.0)
    """
    X = _as_matrix(X)
    y = _binary_labels(y)
    orders = _as_orders(orders)
    n_total = _n_examples(orders)
    w = np.zeros(X.shape[1])
    b = 0.0
    updates: list[tuple[int, np.ndarray, float]] = []  # (t, Δw, Δb), t = 1 .. N
    t = 0
    for order in orders:
        for i in order:
            t += 1
            x = _row(X, i)
            if y[i] * (w @ x + b) <= 0:
                delta_w = y[i] * x
                delta_b = y[i]
                w = w + delta_w
                b = b + delta_b
                updates.append((t, delta_w, delta_b))
    w_sum = np.zeros(X.shape[1])
    b_sum = 0.0
    for t, delta_w, delta_b in updates:
        life = n_total - t + 1  # examples t, t+1, ..., N all see this update
        w_sum = w_sum + life * delta_w
        b_sum = b_sum + life * delta_b
    return w_sum, float(b_sum)


def averaged_perceptron_fast(
    X: Matrix, y: np.ndarray, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, float]:
    """Averaged perceptron with Daumé's auxiliary vector ``w_a`` and example counter ``c``.

    Seed 000, the "fastest" scheme: on an update ``w <- w + Δw`` also do
    ``w_a <- w_a + c Δw``; ``c`` counts examples (not updates); output ``c w - w_a``.
    The bias uses its own auxiliary scalar ``b_a`` the same way.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Labels in ``{+1, -1}``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, ``N = sum(len(o) for o in orders)``.

    Returns
    -------
    w_sum : ndarray of shape (n_features,)
        ``c w - w_a`` with ``c = N``, which equals the running sum
        ``S = w_1 + ... + w_N``. Exact mean: ``w_sum / N``.
    b_sum : float
        ``c b - b_a = b_1 + ... + b_N``. Exact mean: ``b_sum / N``.

    Notes
    -----
    ``c`` is the number of examples seen *before* the current one: it starts at 0 and
    is incremented after each example, after its possible update. This is the seed's
    ``w_a = 0 Δw1 + 1 Δw2 + 2 Δw3 + 3 Δw4``: an update at the ``t``-th example is
    added to ``w_a`` with weight ``t - 1``, so in ``N w - w_a`` it carries weight
    ``N - t + 1``, its remaining life. The invariant ``c w - w_a = w_1 + ... + w_c``
    holds after every example. Mistake rule ``y (w.x + b) <= 0``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    >>> y = np.array([1, -1, 1, -1])
    >>> w, b = averaged_perceptron_fast(X, y, epoch_orders(4, 1))
    >>> w.tolist(), b  # the running sum S; S / 4 is the exact mean
    ([5.0, -1.0], 0.0)
    """
    X = _as_matrix(X)
    y = _binary_labels(y)
    w = np.zeros(X.shape[1])
    b = 0.0
    w_a = np.zeros(X.shape[1])
    b_a = 0.0
    c = 0
    for order in _as_orders(orders):
        for i in order:
            x = _row(X, i)
            if y[i] * (w @ x + b) <= 0:
                delta_w = y[i] * x
                delta_b = y[i]
                w = w + delta_w
                b = b + delta_b
                w_a = w_a + c * delta_w
                b_a = b_a + c * delta_b
            c += 1
    return c * w - w_a, float(c * b - b_a)


def averaged_perceptron_wb(
    X: Matrix, y: np.ndarray, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, float]:
    """Binary averaged perceptron with bias, as in seed 002 (Algorithm 1).

    Seed 002 lines 2-16: ``w, b, u, β <- 0; c <- 1``; for each example: ``if y(wx + b)
    <= 0: w <- w + yx; b <- b + y; u <- u + ycx; β <- β + yc``; then ``c <- c + 1``
    (line 13, after every example); return ``w - u/c, b - β/c``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Labels in ``{+1, -1}``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, ``N = sum(len(o) for o in orders)``.

    Returns
    -------
    w : ndarray of shape (n_features,)
        ``w - u / c`` exactly as the seed returns it. Since ``c`` starts at 1 and is
        incremented after each of the ``N`` examples, ``c = N + 1`` at the end and this
        equals ``S / (N + 1)`` with ``S = w_1 + ... + w_N``: the mean over the ``N + 1``
        vectors ``w_0 = 0, w_1, ..., w_N``. Exact mean after every example:
        ``w * (N + 1) / N``.
    b : float
        ``b - β / c = (b_1 + ... + b_N) / (N + 1)``; exact mean ``b * (N + 1) / N``.

    Notes
    -----
    The seed's proof states that the final ``c`` is ``N``, but with line 4
    (``c <- 1``) and line 13 (``c <- c + 1`` after every example) it is ``N + 1``; an
    update at the ``t``-th example (``t = 1 .. N``) happens with ``c = t``, so
    ``w - u/c = Σ y x (N + 1 - t) / (N + 1) = S / (N + 1)``. The factor is the same for
    ``w`` and ``b``, so the predicted labels (the sign of the score) equal those of the
    exact mean. The implementation follows the pseudocode, not the proof.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    >>> y = np.array([1, -1, 1, -1])
    >>> w, b = averaged_perceptron_wb(X, y, epoch_orders(4, 1))
    >>> (w * 5).round(12).tolist(), b * 5  # c = N + 1 = 5: the result is S / 5
    ([5.0, -1.0], 0.0)
    """
    X = _as_matrix(X)
    y = _binary_labels(y)
    w = np.zeros(X.shape[1])  # line 2
    b = 0.0
    u = np.zeros(X.shape[1])  # line 3
    beta = 0.0
    c = 1  # line 4
    for order in _as_orders(orders):  # line 5
        for i in order:  # line 6
            x = _row(X, i)
            if y[i] * (w @ x + b) <= 0:  # line 7
                w = w + y[i] * x  # line 8
                b = b + y[i]  # line 9
                u = u + y[i] * c * x  # line 10
                beta = beta + y[i] * c  # line 11
            c += 1  # line 13
    return w - u / c, float(b - beta / c)  # line 16


def averaged_perceptron_decreasing_step(
    X: Matrix, y: np.ndarray, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, float]:
    """Seed 003's "better averaged perceptron": updates weighted by a decreasing step.

    Seed 003: ``w = 0; a = 0; step = N |T|``; for each example: ``if score <= 0: w = w +
    y_i x_i; a = a + step / (N |T|) y_i x_i``; ``step = step - 1`` (after every
    example); ``return a``. The bias keeps its own ``a_b = a_b + step / (N |T|) y_i``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Labels in ``{+1, -1}``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch; ``N = sum(len(o) for o in orders)`` plays the role
        of the seed's ``N |T|`` (epochs times training-set size).

    Returns
    -------
    a : ndarray of shape (n_features,)
        ``Σ (N - t + 1) / N · y x`` over the updates (the ``t``-th example has
        ``step = N - t + 1``), i.e. ``S / N``: the exact mean of ``w_1, ..., w_N``.
    a_b : float
        The exact mean ``(b_1 + ... + b_N) / N`` of the biases.

    Notes
    -----
    The seed's pseudocode writes ``score < 0`` but its Python code (and its vanilla
    pseudocode) writes ``<= 0``; we use ``<= 0``. Up to floating-point rounding
    (``step / N`` per update instead of one division at the end) this is the same as
    :func:`averaged_perceptron_naive`.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    >>> y = np.array([1, -1, 1, -1])
    >>> a, a_b = averaged_perceptron_decreasing_step(X, y, epoch_orders(4, 1))
    >>> a.tolist(), a_b
    ([1.25, -0.25], 0.0)
    """
    X = _as_matrix(X)
    y = _binary_labels(y)
    orders = _as_orders(orders)
    n_total = _n_examples(orders)  # the seed's N·|T|
    w = np.zeros(X.shape[1])
    b = 0.0
    a = np.zeros(X.shape[1])
    a_b = 0.0
    step = n_total
    for order in orders:
        for i in order:
            x = _row(X, i)
            score = y[i] * (w @ x + b)
            if score <= 0:
                w = w + y[i] * x
                b = b + y[i]
                a = a + step / n_total * y[i] * x
                a_b = a_b + step / n_total * y[i]
            step = step - 1
    return a, float(a_b)


# --------------------------------------------------------------------------- multiclass


def multiclass_perceptron(
    X: Matrix, y: np.ndarray, n_classes: int, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Multiclass perceptron: one weight vector and bias per class (seed 001).

    Seed 001, "The perceptron learning algorithm": ``w_k <- 0; b_k <- 0``; for each
    example ``p <- argmax_k x w_k + b_k``; ``if p != y: w_p <- w_p - x; b_p <- b_p - 1;
    w_y <- w_y + x; b_y <- b_y + 1``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Integer class codes in ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes ``K``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, see :func:`epoch_orders`.

    Returns
    -------
    W : ndarray of shape (n_classes, n_features)
        The last weight vectors.
    b : ndarray of shape (n_classes,)
        The last biases.
    mistakes : list of int
        Number of mistakes (= updates) in each epoch.

    Notes
    -----
    Ties in the argmax go to the lowest class index, so at the start (all scores 0)
    class 0 is predicted. Every update adds ``x`` to one row and subtracts it from
    another, so the rows of ``W`` (and the entries of ``b``) always sum to zero. With
    ``n_classes=2`` this is a valid run, but not the same as :func:`perceptron`.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    >>> y = np.array([0, 1, 2, 2])
    >>> W, b, mistakes = multiclass_perceptron(X, y, 3, epoch_orders(4, 1))
    >>> W.tolist(), b.tolist(), mistakes  # example 1: tie, class 0 predicted, correct
    ([[0.0, -1.0], [1.0, 1.0], [-1.0, 0.0]], [-1.0, 0.0, 1.0], [2])
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    W = np.zeros((n_classes, X.shape[1]))
    b = np.zeros(n_classes)
    mistakes = []
    for order in _as_orders(orders):
        n_mistakes = 0
        for i in order:
            x = _row(X, i)
            p = int(np.argmax(W @ x + b))  # ties: lowest class index
            if p != y[i]:
                W[p] = W[p] - x
                b[p] = b[p] - 1
                W[y[i]] = W[y[i]] + x
                b[y[i]] = b[y[i]] + 1
                n_mistakes += 1
        mistakes.append(n_mistakes)
    return W, b, mistakes


def multiclass_averaged_perceptron(
    X: Matrix, y: np.ndarray, n_classes: int, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Multiclass averaged perceptron with a counter, as in seed 001.

    Seed 001, "The averaged perceptron learning algorithm": ``w_k, b_k`` and auxiliary
    ``w̃_k, b̃_k`` start at 0, ``count <- 1``; on a mistake ``p != y``: ``w_p <- w_p - x;
    b_p <- b_p - 1; w̃_p <- w̃_p - count x; b̃_p <- b̃_p - count`` and ``w_y <- w_y + x;
    b_y <- b_y + 1; w̃_y <- w̃_y + count x; b̃_y <- b̃_y + count``; ``count <- count + 1``
    after every example; finally ``w_k <- w_k - w̃_k / count; b_k <- b_k - b̃_k / count``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Integer class codes in ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes ``K``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, ``N = sum(len(o) for o in orders)``.

    Returns
    -------
    W : ndarray of shape (n_classes, n_features)
        ``W - W_aux / count`` with ``count = N + 1`` at the end, i.e.
        ``(W_1 + ... + W_N) / (N + 1)``, the mean over ``W_0 = 0, W_1, ..., W_N``.
        Exact mean after every example: ``W * (N + 1) / N``.
    b : ndarray of shape (n_classes,)
        ``(b_1 + ... + b_N) / (N + 1)``; exact mean ``b * (N + 1) / N``.

    Notes
    -----
    The same ``N + 1`` as seed 002 (:func:`averaged_perceptron_wb`): an update at the
    ``t``-th example happens with ``count = t``. All classes share the factor, so the
    argmax predictions equal those of the exact mean. The seed's slides print the
    weights and the auxiliary weights with the same symbol (the auxiliary ones in red);
    here they are ``W`` and ``W_aux``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    >>> y = np.array([0, 1, 2, 2])
    >>> W, b = multiclass_averaged_perceptron(X, y, 3, epoch_orders(4, 1))
    >>> (W * 5).round(12).tolist(), (b * 5).round(12).tolist()  # count = 5: S = 5 W
    ([[0.0, -3.0], [2.0, 3.0], [-2.0, 0.0]], [-3.0, 1.0, 2.0])
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    W = np.zeros((n_classes, X.shape[1]))
    b = np.zeros(n_classes)
    W_aux = np.zeros((n_classes, X.shape[1]))
    b_aux = np.zeros(n_classes)
    count = 1
    for order in _as_orders(orders):
        for i in order:
            x = _row(X, i)
            p = int(np.argmax(W @ x + b))  # ties: lowest class index
            if p != y[i]:
                W[p] = W[p] - x
                b[p] = b[p] - 1
                W_aux[p] = W_aux[p] - count * x
                b_aux[p] = b_aux[p] - count
                W[y[i]] = W[y[i]] + x
                b[y[i]] = b[y[i]] + 1
                W_aux[y[i]] = W_aux[y[i]] + count * x
                b_aux[y[i]] = b_aux[y[i]] + count
            count = count + 1
    return W - W_aux / count, b - b_aux / count


def multiclass_averaged_perceptron_naive(
    X: Matrix, y: np.ndarray, n_classes: int, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Multiclass averaged perceptron, naive: a running sum after every example.

    The multiclass perceptron of seed 001 combined with seed 000's naive averaging
    (``w_s <- w_s + w^(i)`` after the ``i``-th example, updated or not), applied to
    every class's weights and bias.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Integer class codes in ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes ``K``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, ``N = sum(len(o) for o in orders) >= 1``.

    Returns
    -------
    W_avg : ndarray of shape (n_classes, n_features)
        The exact mean ``(W_1 + ... + W_N) / N``.
    b_avg : ndarray of shape (n_classes,)
        The exact mean ``(b_1 + ... + b_N) / N``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    >>> y = np.array([0, 1, 2, 2])
    >>> W, b = multiclass_averaged_perceptron_naive(X, y, 3, epoch_orders(4, 1))
    >>> W.tolist(), b.tolist()
    ([[0.0, -0.75], [0.5, 0.75], [-0.5, 0.0]], [-0.75, 0.25, 0.5])
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    orders = _as_orders(orders)
    n_total = _n_examples(orders)
    _require_examples(n_total)
    W = np.zeros((n_classes, X.shape[1]))
    b = np.zeros(n_classes)
    W_sum = np.zeros((n_classes, X.shape[1]))
    b_sum = np.zeros(n_classes)
    for order in orders:
        for i in order:
            x = _row(X, i)
            p = int(np.argmax(W @ x + b))  # ties: lowest class index
            if p != y[i]:
                W[p] = W[p] - x
                b[p] = b[p] - 1
                W[y[i]] = W[y[i]] + x
                b[y[i]] = b[y[i]] + 1
            # after EVERY example, updated or not
            W_sum = W_sum + W
            b_sum = b_sum + b
    return W_sum / n_total, b_sum / n_total


# --------------------------------------------------------------------------- voted


def _sign(score: float) -> int:
    """``+1`` for a positive score, ``-1`` otherwise: a zero score predicts the negative
    class, the same boundary as the mistake rule ``y * score <= 0``."""
    return 1 if score > 0 else -1


def voted_perceptron_naive(
    X: Matrix, y: np.ndarray, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Voted perceptron, naive: keep the model after every example, each with one vote.

    Seed 000, the first voted scheme: "record the weight vector after each example in
    training data (not just after each update [...]), and then at the end of T epochs
    [...] you would have collected a total of T|D| models. At testing time, the voted
    perceptron simply lets all these models take a vote, and follows the majority."
    The bias is learned as the weight of a constant feature equal to 1 (seed 002).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Labels in ``{+1, -1}``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, ``N = sum(len(o) for o in orders)``.

    Returns
    -------
    W_models : ndarray of shape (N, n_features)
        ``W_models[t - 1] = w_t``, the weights after the ``t``-th example (updated or
        not); ``w_0 = 0`` is not included.
    b_models : ndarray of shape (N,)
        ``b_models[t - 1] = b_t``.

    Notes
    -----
    Mistake rule ``y (w.x + b) <= 0``. Every model has one vote: predict with
    :func:`vote_predict` and ``votes = np.ones(N)``. The memory is ``O(N d)``;
    :func:`voted_perceptron` stores the same list compressed to ``O(K d)``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    >>> y = np.array([1, -1, 1, -1])
    >>> W, b = voted_perceptron_naive(X, y, epoch_orders(4, 1))
    >>> W.tolist(), b.tolist()  # no update on example 3: w_3 = w_2
    ([[1.0, 0.0], [1.0, -1.0], [1.0, -1.0], [2.0, 1.0]], [1.0, 0.0, 0.0, -1.0])
    """
    X = _as_matrix(X)
    y = _binary_labels(y)
    orders = _as_orders(orders)
    n_total = _n_examples(orders)
    w = np.zeros(X.shape[1])
    b = 0.0
    W_models = np.zeros((n_total, X.shape[1]))
    b_models = np.zeros(n_total)
    t = 0
    for order in orders:
        for i in order:
            x = _row(X, i)
            if y[i] * (w @ x + b) <= 0:
                w = w + y[i] * x
                b = b + y[i]
            # after EVERY example, updated or not: one model, one vote
            W_models[t] = w
            b_models[t] = b
            t += 1
    return W_models, b_models


def voted_perceptron(
    X: Matrix, y: np.ndarray, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Voted perceptron: a model after every update, with its number of votes.

    Seed 004, "Breaking it down: the voted perceptron": ``v_0 = 0; m_0 = 0; k = 0``;
    for each example ``if v_k . x_i y_i < 0: v_{k+1} <- v_k + x_i y_i; m_{k+1} <- 1;
    k <- k + 1``, ``else: m_k <- m_k + 1``. This is seed 000's improved scheme: "only
    [save] the weight vectors after each update [...] and also record the number of
    votes for each weight vector". The bias ``c_k`` is the weight of a constant feature
    equal to 1 (seed 002's ``b <- b + y``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Labels in ``{+1, -1}``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, ``N = sum(len(o) for o in orders)``.

    Returns
    -------
    V : ndarray of shape (K + 1, n_features)
        The models ``v_0 = 0, v_1, ..., v_K``; ``K`` is the number of updates.
    c : ndarray of shape (K + 1,)
        Their biases ``c_0 = 0, c_1, ..., c_K``.
    votes : ndarray of int of shape (K + 1,)
        ``m_0, ..., m_K``: the number of examples each model was current for, counting
        the example it was created on. ``votes.sum() == N``.

    Notes
    -----
    The seed writes ``< 0``; with ``v_0 = 0`` the first score is 0 and a strict rule
    would never update, so the mistake rule here is ``y (v_k.x + c_k) <= 0``. The
    first example therefore always updates and ``m_0 = 0`` whenever ``N >= 1``.

    ``np.repeat(V, votes, axis=0)`` is exactly :func:`voted_perceptron_naive`'s list,
    ``V[-1], c[-1]`` is :func:`perceptron`'s result, and the seed's "deterministic
    weighted average" ``a = sum(m_k v_k) / m`` (``m = N``) is
    ``votes @ V / votes.sum()``, the exact mean of :func:`averaged_perceptron_naive`.
    Predict with :func:`vote_predict`.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    >>> y = np.array([1, -1, 1, -1])
    >>> V, c, votes = voted_perceptron(X, y, epoch_orders(4, 1))
    >>> V.tolist(), c.tolist(), votes.tolist()  # v_2 also survives example 3
    ([[0.0, 0.0], [1.0, 0.0], [1.0, -1.0], [2.0, 1.0]], [0.0, 1.0, 0.0, -1.0], [0, 1, 2, 1])
    """
    X = _as_matrix(X)
    y = _binary_labels(y)
    V = [np.zeros(X.shape[1])]  # v_0
    c = [0.0]
    votes = [0]  # m_0
    k = 0
    for order in _as_orders(orders):
        for i in order:
            x = _row(X, i)
            if y[i] * (V[k] @ x + c[k]) <= 0:  # a mistake was made
                V.append(V[k] + y[i] * x)  # v_{k+1} <- v_k + x_i y_i
                c.append(c[k] + y[i])
                votes.append(1)  # m_{k+1} <- 1
                k = k + 1
            else:
                votes[k] = votes[k] + 1  # upweight the k-th classifier
    return np.array(V), np.array(c), np.array(votes, dtype=np.int64)


def multiclass_voted_perceptron_naive(
    X: Matrix, y: np.ndarray, n_classes: int, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Multiclass voted perceptron, naive: the models after every example, one vote each.

    Seed 001's multiclass perceptron with seed 000's naive voted scheme (record the
    weights after each example, updated or not).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Integer class codes in ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, ``N = sum(len(o) for o in orders)``.

    Returns
    -------
    W_models : ndarray of shape (N, n_classes, n_features)
        ``W_models[t - 1] = W_t``, the weights after the ``t``-th example.
    b_models : ndarray of shape (N, n_classes)
        ``b_models[t - 1] = b_t``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    >>> y = np.array([0, 1, 2, 2])
    >>> W, b = multiclass_voted_perceptron_naive(X, y, 3, epoch_orders(4, 1))
    >>> W.shape, b.tolist()  # example 1 predicted correctly by W_0 = 0: b_1 = b_0
    ((4, 3, 2), [[0.0, 0.0, 0.0], [-1.0, 1.0, 0.0], [-1.0, 0.0, 1.0], [-1.0, 0.0, 1.0]])
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    orders = _as_orders(orders)
    n_total = _n_examples(orders)
    W = np.zeros((n_classes, X.shape[1]))
    b = np.zeros(n_classes)
    W_models = np.zeros((n_total, n_classes, X.shape[1]))
    b_models = np.zeros((n_total, n_classes))
    t = 0
    for order in orders:
        for i in order:
            x = _row(X, i)
            p = int(np.argmax(W @ x + b))  # ties: lowest class index
            if p != y[i]:
                W[p] = W[p] - x
                b[p] = b[p] - 1
                W[y[i]] = W[y[i]] + x
                b[y[i]] = b[y[i]] + 1
            # after EVERY example, updated or not (a copy: W is updated in place)
            W_models[t] = W
            b_models[t] = b
            t += 1
    return W_models, b_models


def multiclass_voted_perceptron(
    X: Matrix, y: np.ndarray, n_classes: int, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Multiclass voted perceptron: a model after every update, with its votes.

    Seed 004's voted bookkeeping (``v_0 = 0, m_0 = 0``; on a mistake a new model with
    ``m = 1``, else ``m_k <- m_k + 1``) around seed 001's multiclass update (``p <-
    argmax_k x w_k + b_k``; ``if p != y: w_p <- w_p - x; b_p <- b_p - 1; w_y <- w_y +
    x; b_y <- b_y + 1``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Integer class codes in ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, ``N = sum(len(o) for o in orders)``.

    Returns
    -------
    V : ndarray of shape (K + 1, n_classes, n_features)
        The models ``V_0 = 0, V_1, ..., V_K``; ``K`` is the number of updates.
    c : ndarray of shape (K + 1, n_classes)
        Their biases.
    votes : ndarray of int of shape (K + 1,)
        ``m_0, ..., m_K``, ``votes.sum() == N``.

    Notes
    -----
    Unlike the binary case, ``m_0`` can be positive: ``V_0 = 0`` predicts class 0
    (ties go to the lowest class index), which is correct for examples of class 0.
    ``V[-1], c[-1]`` is :func:`multiclass_perceptron`'s result and
    ``np.tensordot(votes, V, 1) / votes.sum()`` the exact mean of
    :func:`multiclass_averaged_perceptron_naive`.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    >>> y = np.array([0, 1, 2, 2])
    >>> V, c, votes = multiclass_voted_perceptron(X, y, 3, epoch_orders(4, 1))
    >>> votes.tolist(), c.tolist()  # V_0 is right on example 1, V_2 on example 4
    ([1, 1, 2], [[0.0, 0.0, 0.0], [-1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]])
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    V = [np.zeros((n_classes, X.shape[1]))]  # V_0
    c = [np.zeros(n_classes)]
    votes = [0]  # m_0
    k = 0
    for order in _as_orders(orders):
        for i in order:
            x = _row(X, i)
            p = int(np.argmax(V[k] @ x + c[k]))  # ties: lowest class index
            if p != y[i]:
                W = V[k].copy()
                b = c[k].copy()
                W[p] = W[p] - x
                b[p] = b[p] - 1
                W[y[i]] = W[y[i]] + x
                b[y[i]] = b[y[i]] + 1
                V.append(W)
                c.append(b)
                votes.append(1)  # m_{k+1} <- 1
                k = k + 1
            else:
                votes[k] = votes[k] + 1
    return np.array(V), np.array(c), np.array(votes, dtype=np.int64)


def vote_predict(
    V: np.ndarray,
    c: np.ndarray,
    votes: np.ndarray,
    X: Matrix,
    rule: str,
    random_state: int | None = None,
) -> np.ndarray:
    """Predict with a voted perceptron's models ``V, c`` and their ``votes``.

    Binary models (``V.ndim == 2``) predict ``+1`` or ``-1``, a score ``<= 0`` giving
    ``-1`` everywhere; multiclass models (``V.ndim == 3``) predict class codes, ties
    going to the lowest class index everywhere.

    Parameters
    ----------
    V : ndarray of shape (K + 1, n_features) or (K + 1, n_classes, n_features)
        The models, as returned by :func:`voted_perceptron` or
        :func:`multiclass_voted_perceptron` (or a naive list with ``votes`` all 1).
    c : ndarray of shape (K + 1,) or (K + 1, n_classes)
        Their biases.
    votes : ndarray of shape (K + 1,)
        Their non-negative numbers of votes ``m_k``.
    X : ndarray of shape (n_rows, n_features) or sparse matrix
        Rows to predict.
    rule : {"vote", "average", "last", "random"}
        ``"vote"``: seed 000's majority vote. Binary:
        ``sign(sum_k m_k sign(v_k.x + c_k))`` with ``sign(s) = -1`` for ``s <= 0``,
        a total of exactly 0 predicting ``-1``; multiclass: model ``k`` gives ``m_k``
        votes to its argmax class, the class with most votes wins.
        ``"average"``: seed 004's "deterministic approximation", the sign (binary) or
        argmax (multiclass) of ``sum_k m_k (v_k.x + c_k)``.
        ``"last"``: the last model ``v_K`` alone (the vanilla perceptron).
        ``"random"``: seed 004's "pick a v_k at random according to m_k/m", drawn
        independently for each row, in row order, as
        ``rs.choice(len(votes), p=votes / votes.sum())`` with
        ``rs = np.random.RandomState(random_state)``.
    random_state : int or None, default=None
        Seed for ``rule="random"``; ignored otherwise.

    Returns
    -------
    predictions : ndarray of int of shape (n_rows,)
        ``+1`` / ``-1`` (binary) or class codes (multiclass).

    Examples
    --------
    >>> V = np.array([[0.0], [1.0], [-1.0]])  # scores 0, x, -x
    >>> c = np.zeros(3)
    >>> votes = np.array([0, 2, 1])
    >>> X = np.array([[1.0], [-1.0], [0.0]])
    >>> vote_predict(V, c, votes, X, "vote").tolist()  # 2 - 1 = 1; -2 + 1; -2 - 1
    [1, -1, -1]
    >>> vote_predict(V, c, votes, X, "last").tolist()
    [-1, 1, -1]
    """
    V = np.asarray(V, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    votes = np.asarray(votes)
    X = _as_matrix(X)
    if rule not in ("vote", "average", "last", "random"):
        raise ValueError(f"rule must be 'vote', 'average', 'last' or 'random', got {rule!r}")
    if V.ndim not in (2, 3) or c.shape != V.shape[:-1] or votes.shape != V.shape[:1]:
        raise ValueError(f"inconsistent shapes V {V.shape}, c {c.shape}, votes {votes.shape}")
    if len(votes) == 0 or np.any(votes < 0):
        raise ValueError("votes must be a non-empty array of non-negative numbers")
    if V.shape[-1] != X.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features, the models {V.shape[-1]}")
    multiclass = V.ndim == 3
    if rule == "random":
        if votes.sum() <= 0:
            raise ValueError("rule='random' needs at least one vote")
        rs = np.random.RandomState(random_state)
        p = votes / votes.sum()
    predictions = np.zeros(X.shape[0], dtype=np.int64)
    for r in range(X.shape[0]):
        x = _row(X, r)
        scores = V @ x + c  # (K + 1,) or (K + 1, n_classes): one row per model
        if rule == "vote" and multiclass:
            tally = np.zeros(V.shape[1])
            for k in range(len(votes)):
                tally[int(np.argmax(scores[k]))] += votes[k]
            predictions[r] = int(np.argmax(tally))  # ties: lowest class index
        elif rule == "vote":
            total = 0
            for k in range(len(votes)):
                total = total + votes[k] * _sign(scores[k])
            predictions[r] = _sign(total)
        elif rule == "average" and multiclass:
            predictions[r] = int(np.argmax(votes @ scores))
        elif rule == "average":
            predictions[r] = _sign(votes @ scores)
        else:
            k = len(votes) - 1 if rule == "last" else rs.choice(len(votes), p=p)
            predictions[r] = int(np.argmax(scores[k])) if multiclass else _sign(scores[k])
    return predictions


# --------------------------------------------------------------------------- kernel (dual)


def _as_kernel(K: np.ndarray | sp.spmatrix | sp.sparray) -> np.ndarray:
    """A kernel matrix as a dense 2-D float64 ndarray."""
    K = np.asarray(K.toarray() if sp.issparse(K) else K, dtype=np.float64)
    if K.ndim != 2:
        raise ValueError(f"a kernel matrix must be 2-D, got shape {K.shape}")
    return K


def _as_gram(K_train: np.ndarray, n_samples: int) -> np.ndarray:
    K = _as_kernel(K_train)
    if K.shape != (n_samples, n_samples):
        raise ValueError(f"K_train must have shape {(n_samples, n_samples)}, got {K.shape}")
    return K


def dual_kernel_perceptron(
    K_train: np.ndarray, y: np.ndarray, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, float, list[int]]:
    """Dual (kernel) binary perceptron on a precomputed Gram matrix.

    The textbook dual form of :func:`perceptron` (seed 003's ``w = w + y x`` on a
    mistake, seed 002's bias): since every update adds ``y_t x_t``, the weights are
    ``w = sum_i alpha_i x_i`` with ``alpha_i`` the signed number of updates on example
    ``i``, and ``w.x_t = sum_i alpha_i K[i, t]`` with ``K[i, t] = x_i.x_t`` or any
    other kernel ``phi(x_i).phi(x_t)``.

    Parameters
    ----------
    K_train : ndarray of shape (n_samples, n_samples)
        The Gram matrix ``K[i, t] = k(x_i, x_t)``.
    y : ndarray of shape (n_samples,)
        Labels in ``{+1, -1}``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, see :func:`epoch_orders`.

    Returns
    -------
    alpha : ndarray of shape (n_samples,)
        ``alpha[i]``: the signed count of updates on example ``i`` (``+1`` for each
        update with ``y_i = +1``, ``-1`` for each with ``y_i = -1``), as floats.
    b : float
        The bias, ``alpha.sum()``.
    mistakes : list of int
        Number of mistakes (= updates) in each epoch.

    Notes
    -----
    The score of example ``t`` is ``sum_i alpha[i] K[i, t] + b``; a mistake is
    ``y_t * score <= 0``, after which ``alpha[t] += y_t; b += y_t``. With the linear
    kernel ``K = X X^T`` this is :func:`perceptron` exactly (same mistakes,
    ``w = alpha @ X``, same ``b``). The bias is a separate learned constant, as the
    weight of a constant feature equal to 1 would be, on top of whatever constant the
    kernel itself contains (e.g. the ``+ 1`` of ``(x.x' + 1)^2``).

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    >>> y = np.array([1, -1, 1, -1])
    >>> alpha, b, mistakes = dual_kernel_perceptron(X @ X.T, y, epoch_orders(4, 1))
    >>> alpha.tolist(), b, mistakes, (alpha @ X).tolist()  # perceptron's w, b
    ([1.0, -1.0, 0.0, -1.0], -1.0, [3], [2.0, 1.0])
    """
    y = _binary_labels(y)
    K = _as_gram(K_train, len(y))
    alpha = np.zeros(len(y))
    b = 0.0
    mistakes = []
    for order in _as_orders(orders):
        n_mistakes = 0
        for t in order:
            score = alpha @ K[:, t] + b
            if y[t] * score <= 0:
                alpha[t] = alpha[t] + y[t]
                b = b + y[t]
                n_mistakes += 1
        mistakes.append(n_mistakes)
    return alpha, float(b), mistakes


def dual_voted_perceptron(
    K_train: np.ndarray, y: np.ndarray, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Kernel voted perceptron: the update sequence and the votes of every model.

    The run of :func:`dual_kernel_perceptron` with seed 004's voted bookkeeping. A
    kernel voted perceptron cannot store ``v_k``; it stores the ``j``-th update's
    example ``i_j`` and sign ``y_j``, so that ``v_k = sum_{j <= k} y_j phi(x_{i_j})``.

    Parameters
    ----------
    K_train : ndarray of shape (n_samples, n_samples)
        The Gram matrix ``K[i, t] = k(x_i, x_t)``.
    y : ndarray of shape (n_samples,)
        Labels in ``{+1, -1}``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, ``N = sum(len(o) for o in orders)``.

    Returns
    -------
    update_examples : ndarray of int of shape (K,)
        ``i_1, ..., i_K``: the example index of each update, in order.
    update_signs : ndarray of shape (K,)
        ``y_1, ..., y_K``: the label (``+1.0`` / ``-1.0``) of each update.
    votes : ndarray of int of shape (K + 1,)
        ``m_0, ..., m_K`` as in :func:`voted_perceptron`; ``votes.sum() == N``.
    b_seq : ndarray of shape (K + 1,)
        The biases ``b_k = sum_{j <= k} y_j`` of ``v_0, ..., v_K`` (``b_0 = 0``).

    Notes
    -----
    Mistake rule ``y_t (sum_i alpha_i K[i, t] + b) <= 0`` with the current ``alpha``.
    Score new rows with :func:`dual_vote_scores`. With ``K = X X^T``,
    ``votes`` and ``b_seq`` equal :func:`voted_perceptron`'s ``votes`` and ``c``, and
    ``V[k] = sum_{j <= k} update_signs[j - 1] X[update_examples[j - 1]]``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    >>> y = np.array([1, -1, 1, -1])
    >>> ex, signs, votes, b_seq = dual_voted_perceptron(X @ X.T, y, epoch_orders(4, 1))
    >>> ex.tolist(), signs.tolist(), votes.tolist(), b_seq.tolist()
    ([0, 1, 3], [1.0, -1.0, -1.0], [0, 1, 2, 1], [0.0, 1.0, 0.0, -1.0])
    """
    y = _binary_labels(y)
    K = _as_gram(K_train, len(y))
    alpha = np.zeros(len(y))  # the current model v_k in dual form
    b = 0.0
    update_examples = []
    update_signs = []
    votes = [0]  # m_0
    b_seq = [0.0]
    for order in _as_orders(orders):
        for t in order:
            score = alpha @ K[:, t] + b
            if y[t] * score <= 0:
                alpha[t] = alpha[t] + y[t]
                b = b + y[t]
                update_examples.append(t)
                update_signs.append(y[t])
                votes.append(1)  # m_{k+1} <- 1
                b_seq.append(b)
            else:
                votes[-1] = votes[-1] + 1
    return (
        np.array(update_examples, dtype=np.intp),
        np.array(update_signs, dtype=np.float64),
        np.array(votes, dtype=np.int64),
        np.array(b_seq),
    )


def dual_vote_scores(
    K_test_train: np.ndarray,
    update_examples: np.ndarray,
    update_signs: np.ndarray,
    votes: np.ndarray,
) -> np.ndarray:
    """Scores of every intermediate model ``v_0, ..., v_K`` of a kernel voted perceptron.

    For a row ``x``, ``score_0 = 0`` and ``score_k = score_{k-1} + y_k (K(x_{i_k}, x) +
    1)``: one kernel evaluation per update, the prefix sums giving all ``K + 1`` scores
    in ``O(K)``. The ``+ 1`` is the bias as a constant feature: ``sum_{j <= k} y_j`` is
    ``b_seq[k]`` of :func:`dual_voted_perceptron`.

    Parameters
    ----------
    K_test_train : ndarray of shape (n_rows, n_samples)
        ``K_test_train[r, i] = k(x_r, x_i)`` between the rows to score and the training
        examples.
    update_examples : ndarray of int of shape (K,)
        From :func:`dual_voted_perceptron`.
    update_signs : ndarray of shape (K,)
        From :func:`dual_voted_perceptron`.
    votes : ndarray of shape (K + 1,)
        From :func:`dual_voted_perceptron`; only its length is used (checked against
        ``K + 1``).

    Returns
    -------
    scores : ndarray of shape (n_rows, K + 1)
        ``scores[r, k]`` is the score of model ``v_k`` on row ``r``.

    Notes
    -----
    With the linear kernel ``K_test_train = X_test X^T``, ``scores[r, k]`` equals
    ``V[k] @ X_test[r] + c[k]`` for ``V, c`` of :func:`voted_perceptron` on the same
    run. The binary rules of :func:`vote_predict` apply to the scores unchanged, e.g.
    ``"vote"``: ``sum_k votes[k] * (1 if scores[r, k] > 0 else -1) > 0``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    >>> y = np.array([1, -1, 1, -1])
    >>> ex, signs, votes, _ = dual_voted_perceptron(X @ X.T, y, epoch_orders(4, 1))
    >>> x = np.array([[1.0, 1.0]])
    >>> dual_vote_scores(x @ X.T, ex, signs, votes).tolist()  # v_k.x + c_k
    [[0.0, 2.0, 0.0, 2.0]]
    """
    K = _as_kernel(K_test_train)
    update_examples = np.asarray(update_examples, dtype=np.intp).ravel()
    update_signs = np.asarray(update_signs, dtype=np.float64).ravel()
    if len(update_signs) != len(update_examples) or len(votes) != len(update_examples) + 1:
        raise ValueError("need K update examples, K update signs and K + 1 votes")
    scores = np.zeros((K.shape[0], len(update_examples) + 1))
    for r in range(K.shape[0]):
        score = 0.0  # v_0 = 0, b_0 = 0
        for j in range(len(update_examples)):
            score = score + update_signs[j] * (K[r, update_examples[j]] + 1.0)
            scores[r, j + 1] = score
    return scores


# --------------------------------------------------------------------------- logistic regression

__all__ += ["logistic_regression_sgd"]


def _sigmoid(z: float) -> float:
    """``1 / (1 + exp(-z))`` without overflowing ``exp`` for large ``|z|``."""
    if z >= 0:
        return 1.0 / (1.0 + np.exp(-z))
    e = np.exp(z)
    return e / (1.0 + e)


def _softmax(z: np.ndarray) -> np.ndarray:
    """``exp(z_k) / sum_j exp(z_j)``, shifted by ``max(z)`` so that ``exp`` cannot overflow."""
    e = np.exp(z - z.max())
    return e / e.sum()


def logistic_regression_sgd(
    X: Matrix,
    y: np.ndarray,
    orders: Sequence[np.ndarray],
    learning_rate: float,
    l2: float,
    n_classes: int | None = None,
) -> tuple[np.ndarray, np.ndarray | float, np.ndarray, np.ndarray | float, list[float]]:
    """Logistic regression trained online by SGD, with an optional Gaussian prior.

    Seed 004, "Stochastic gradients (SGD) for logistic regression": for each example
    ``p = (1 + exp(-x·w))^-1; w <- w + λ (y - p) x``, and its "Regularization" slides:
    the prior ``w^j ~ N(0, σ²)`` adds ``- λ w^j / σ²`` to the update of every weight
    (the MAP estimate). With ``l2 = 1/σ²`` one example does, both terms at the old ``w``::

        p = σ(w·x + b)
        w = (1 - λ l2) w + λ (y - p) x      # = w + λ (y - p) x - λ w / σ²
        b = b + λ (y - p)                   # the intercept has no prior

    Multinomial (``n_classes`` given): ``p = softmax(W x + b)`` and, for every class
    ``k``, ``W[k] = (1 - λ l2) W[k] + λ ([y = k] - p_k) x; b[k] += λ ([y = k] - p_k)``:
    the same gradient of the log conditional likelihood, one row per class.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Binary (``n_classes=None``): labels in ``{0, 1}``, as in the seed.
        Multinomial: integer class codes in ``0 .. n_classes - 1``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, ``N = sum(len(o) for o in orders) >= 1``.
    learning_rate : float
        ``λ``, constant.
    l2 : float
        ``1 / σ²``, the strength of the prior (0: none).
    n_classes : int or None, default=None
        ``None`` for the binary model, else the number of classes ``K``.

    Returns
    -------
    w : ndarray of shape (n_features,) or (n_classes, n_features)
        The last weights ``w_N``.
    b : float or ndarray of shape (n_classes,)
        The last intercept(s).
    w_mean : ndarray, same shape as ``w``
        The exact mean ``(w_1 + ... + w_N) / N`` of the weights after every example,
        from a naive running sum.
    b_mean : float or ndarray of shape (n_classes,)
        The exact mean of the intercepts.
    losses : list of float
        Per epoch, the mean log-loss ``-log p(y | x)`` of its examples, each computed
        with the weights before that example's update.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> w, b, w_mean, b_mean, losses = logistic_regression_sgd(
    ...     X, np.array([1, 0]), epoch_orders(2, 1), learning_rate=1.0, l2=0.0)
    >>> w.tolist(), b  # p = σ(0) on x_1: +0.5 x_1; then p = σ(b) = σ(0.5) on x_2
    ([0.5, -0.6224593312018546], -0.1224593312018546)
    >>> w_mean.tolist(), round(losses[0], 6)  # ([0.5, 0] + [0.5, -0.62]) / 2
    ([0.5, -0.3112296656009273], 0.833612)
    """
    X = _as_matrix(X)
    orders = _as_orders(orders)
    n_total = _n_examples(orders)
    _require_examples(n_total)
    decay = 1.0 - learning_rate * l2
    multinomial = n_classes is not None
    if multinomial:
        y = _class_codes(y, n_classes)
        w, b = np.zeros((n_classes, X.shape[1])), np.zeros(n_classes)
    else:
        y = np.asarray(y, dtype=np.float64).ravel()
        if not np.all((y == 0.0) | (y == 1.0)):
            raise ValueError("binary labels must be 0 or 1")
        w, b = np.zeros(X.shape[1]), 0.0
    w_sum, b_sum = np.zeros_like(w), np.zeros_like(b)
    losses = []
    for order in orders:
        epoch_loss = 0.0
        for i in order:
            x = _row(X, i)
            if multinomial:
                z = w @ x + b
                p = _softmax(z)
                target = np.zeros(n_classes)
                target[y[i]] = 1.0
                epoch_loss += np.logaddexp.reduce(z) - z[y[i]]  # -log p[y]
                w = decay * w + learning_rate * np.outer(target - p, x)
                b = b + learning_rate * (target - p)
            else:
                z = w @ x + b
                p = _sigmoid(z)
                epoch_loss += np.logaddexp(0.0, z) - y[i] * z  # -log p(y | x)
                w = decay * w + learning_rate * (y[i] - p) * x
                b = b + learning_rate * (y[i] - p)
            # after EVERY example
            w_sum = w_sum + w
            b_sum = b_sum + b
        losses.append(float(epoch_loss / max(len(order), 1)))
    if not multinomial:
        return w, float(b), w_sum / n_total, float(b_sum / n_total), losses
    return w, b, w_sum / n_total, b_sum / n_total, losses


# ----------------------------------------------------------- margin and passive-aggressive
def _pa_step(loss: float, sq_norm: float, variant: str, C: float) -> float:
    """Crammer et al. (2006): the step of PA, PA-I and PA-II for a positive loss."""
    if variant == "pa":
        return loss / sq_norm
    if variant == "pa-i":
        return min(C, loss / sq_norm)
    return loss / (sq_norm + 1.0 / (2.0 * C))


def linear_update_rule(
    X: Matrix,
    y: np.ndarray,
    orders: Sequence[np.ndarray],
    *,
    rule: str = "margin",
    margin: float = 0.0,
    C: float = 1.0,
) -> tuple[np.ndarray, float, np.ndarray, float, int]:
    """The binary perceptron with margin, and the passive-aggressive updates.

    Seed 004 names "many variants" of the perceptron; these are the classic two.
    ``rule="margin"``: the perceptron with margin τ, update ``w += y x``, ``b += y``
    whenever ``y (w·x + b) <= τ`` (τ = 0 is the vanilla perceptron of seed 003).
    ``rule`` in ``"pa"``, ``"pa-i"``, ``"pa-ii"`` (Crammer, Dekel, Keshet, Shalev-Shwartz &
    Singer 2006): with the hinge loss ``l = max(0, 1 - y (w·x + b))`` and
    ``q = ||x||² + 1`` (the bias is the weight of a constant feature 1), step
    ``tau = l / q``, ``min(C, l / q)`` or ``l / (q + 1 / (2 C))``, then ``w += tau y x``,
    ``b += tau y``.

    Returns
    -------
    w, b : the final weights and bias
    w_mean, b_mean : the exact mean of the weights after every example (the averaged model)
    updates : int, the number of examples that changed the weights
    """
    X = _as_matrix(X)
    y = _binary_labels(y)
    w = np.zeros(X.shape[1])
    b = 0.0
    w_sum = np.zeros(X.shape[1])
    b_sum = 0.0
    updates = 0
    for order in _as_orders(orders):
        for i in order:
            x = _row(X, i)
            signed = y[i] * (w @ x + b)
            if rule == "margin":
                step = 1.0 if signed <= margin else 0.0
            else:
                loss = 1.0 - signed
                step = _pa_step(loss, x @ x + 1.0, rule, C) if loss > 0.0 else 0.0
            if step != 0.0:
                w = w + step * y[i] * x
                b = b + step * y[i]
                updates += 1
            w_sum = w_sum + w
            b_sum = b_sum + b
    n = _n_examples(orders)
    _require_examples(n)
    return w, float(b), w_sum / n, float(b_sum / n), updates


def multiclass_linear_update_rule(
    X: Matrix,
    y: np.ndarray,
    n_classes: int,
    orders: Sequence[np.ndarray],
    *,
    rule: str = "margin",
    margin: float = 0.0,
    C: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Multiclass perceptron with margin and multiclass passive-aggressive updates.

    With margin 0 the rule is seed 001's: update when the argmax (ties to the lowest
    class) is not the gold class ``g``, moving ``+x`` to ``g`` and ``-x`` to the predicted
    class. Otherwise let ``p`` be the best class other than ``g`` (ties to the lowest):
    ``rule="margin"`` updates the same way (with ``p``) when ``s_g - s_p <= margin``; the
    passive-aggressive rules use the loss ``l = max(0, 1 - (s_g - s_p))`` and
    ``q = 2 (||x||² + 1)`` (two rows move, Crammer et al. 2006, multiclass
    single-prototype), step ``tau`` as in :func:`linear_update_rule`, and move
    ``+tau x`` to ``g``, ``-tau x`` to ``p``. Returns the final ``W`` (K, d) and ``b``, their
    exact mean over every example, and the number of updates.
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    W = np.zeros((n_classes, X.shape[1]))
    b = np.zeros(n_classes)
    W_sum = np.zeros_like(W)
    b_sum = np.zeros_like(b)
    updates = 0
    for order in _as_orders(orders):
        for i in order:
            x = _row(X, i)
            scores = W @ x + b
            gold = y[i]
            if rule == "margin" and margin == 0.0:
                other = int(np.argmax(scores))
                step = 1.0 if other != gold else 0.0
            else:
                rest = scores.copy()
                rest[gold] = -np.inf
                other = int(np.argmax(rest))
                gap = scores[gold] - scores[other]
                if rule == "margin":
                    step = 1.0 if gap <= margin else 0.0
                else:
                    loss = 1.0 - gap
                    step = _pa_step(loss, 2.0 * (x @ x + 1.0), rule, C) if loss > 0.0 else 0.0
            if step != 0.0:
                W[gold] = W[gold] + step * x
                W[other] = W[other] - step * x
                b[gold] += step
                b[other] -= step
                updates += 1
            W_sum = W_sum + W
            b_sum = b_sum + b
    n = _n_examples(orders)
    _require_examples(n)
    return W, b, W_sum / n, b_sum / n, updates
