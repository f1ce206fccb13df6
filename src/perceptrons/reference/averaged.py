"""The binary perceptron and its averaged variants, after the lecture notes cited below.

Averages
--------
Write ``w_t, b_t`` for the weights after the ``t``-th example of the sequence
(``t = 1 .. N``, updated or not) and ``w_0 = 0, b_0 = 0`` for the start. The *exact
mean* is ``(w_1 + ... + w_N) / N``, and the *running sum* ``S = w_1 + ... + w_N``. The
averaged perceptrons of the notes return different normalisations of ``S``; every
function returns what its source returns and its docstring states how that relates to
the exact mean:

========================================  ==================  =================
function                                  returns             exact mean
========================================  ==================  =================
``averaged_perceptron_naive``             ``S / N``           result
``averaged_perceptron_delta_list``        ``S``               ``result / N``
``averaged_perceptron_improved``          ``S``               ``result / N``
``averaged_perceptron_fast``              ``S``               ``result / N``
``averaged_perceptron_wb``                ``S / (N + 1)``     ``result (N+1)/N``
``averaged_perceptron_decreasing_step``   ``S / N``           result
========================================  ==================  =================

The multiclass averages are in :mod:`perceptrons.reference.multiclass`, except the
multiclass Δw list,
:func:`~perceptrons.reference.averaged.multiclass_averaged_perceptron_delta_list` (returns ``S``),
which is here beside its binary form.

References
----------
Course notes on the voted and averaged perceptron (they name no author or course).

M. Kuhlmann, "The perceptron learning algorithm", lecture slides, Department of Computer
and Information Science, Linköping University.

T. H. Nguyen, "Averaged perceptron note", CIS 472/572: Machine Learning, University of
Oregon.

R. Johansson, "Machine Learning for NLP, bonus lecture: the averaged perceptron",
lecture notes, 11 September 2015.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perceptrons.reference._common import (
    Matrix,
    _as_matrix,
    _as_orders,
    _binary_labels,
    _class_codes,
    _n_examples,
    _require_examples,
    _row,
    epoch_orders,  # noqa: F401  (the doctests build their orders with it)
)

__all__ = [
    "averaged_perceptron_decreasing_step",
    "averaged_perceptron_delta_list",
    "averaged_perceptron_fast",
    "averaged_perceptron_improved",
    "averaged_perceptron_naive",
    "averaged_perceptron_wb",
    "multiclass_averaged_perceptron_delta_list",
    "perceptron",
]


def perceptron(
    X: Matrix, y: np.ndarray, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, float, list[int]]:
    """Vanilla binary perceptron with a bias.

    The "perceptron pseudocode" of Johansson's lecture (2015) (``w = 0; repeat: for
    (x_i, y_i): score = y w.x_i; if score <= 0: w = w + y x``), with the bias of lines 2,
    7 and 9 of Nguyen's averaged-perceptron note (``b <- 0``; the score is
    ``y (w.x + b)``; ``b <- b + y``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Labels in ``{+1, -1}``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, see :func:`~perceptrons.reference.epoch_orders`.

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

    Johansson's lecture (2015), "averaged perceptron pseudocode (naive)":
    ``w_{t+1} = w_t + y_i x_i`` on a mistake, else ``w_{t+1} = w_t``; ``t = t + 1``;
    return ``(w_1 + ... + w_{NT}) / NT``. The running sum ``w_s <- w_s + w^(i)`` after the
    ``i``-th example, in the course notes on the voted and averaged perceptron, is the
    same computation. The bias is learned as the weight of a constant feature equal to 1
    (the ``b <- b + y`` of Nguyen's averaged-perceptron note) and averaged the same way.

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
    Mistake rule ``y (w.x + b) <= 0``; Johansson's naive pseudocode writes ``< 0``, which
    with ``w_0 = 0`` would never update (his Python code writes ``<= 0``).

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

    The "Δw" scheme of the course notes on the voted and averaged perceptron: store the
    update vectors ``Δw^(i) = y x`` (with the position of the example where each
    happened) instead of the weight vectors, and at the end output
    ``w_s = Σ life_i Δw^(i)``, where an update made at the ``t``-th example
    (``t = 1 .. N``) lives for ``N - t + 1`` examples: the one where it happened and
    every later one (the notes' ``4Δw1 + 3Δw2 + 2Δw3 + 1Δw4`` for four updates on four
    examples). The bias updates ``Δb = y`` are stored and weighted the same way.

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
        The running sum ``S = w_1 + ... + w_N`` (the notes observe that normalising is
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

    The "fastest" scheme of the course notes on the voted and averaged perceptron: on an
    update ``w <- w + Δw`` also do ``w_a <- w_a + c Δw``; ``c`` counts examples (not
    updates); output ``c w - w_a``. The bias uses its own auxiliary scalar ``b_a`` the
    same way.

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
    is incremented after each example, after its possible update. This is the notes'
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
    """Binary averaged perceptron with bias, as in Nguyen's note (Algorithm 1).

    Lines 2-16 of Algorithm 1 in Nguyen's averaged-perceptron note:
    ``w, b, u, β <- 0; c <- 1``; for each example: ``if y(wx + b) <= 0: w <- w + yx;
    b <- b + y; u <- u + ycx; β <- β + yc``; then ``c <- c + 1`` (line 13, after every
    example); return ``w - u/c, b - β/c``.

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
        ``w - u / c`` exactly as the note returns it. Since ``c`` starts at 1 and is
        incremented after each of the ``N`` examples, ``c = N + 1`` at the end and this
        equals ``S / (N + 1)`` with ``S = w_1 + ... + w_N``: the mean over the ``N + 1``
        vectors ``w_0 = 0, w_1, ..., w_N``. Exact mean after every example:
        ``w * (N + 1) / N``.
    b : float
        ``b - β / c = (b_1 + ... + b_N) / (N + 1)``; exact mean ``b * (N + 1) / N``.

    Notes
    -----
    The note's proof states that the final ``c`` is ``N``, but with line 4
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
    """Johansson's "better averaged perceptron": updates weighted by a decreasing step.

    Johansson's lecture (2015): ``w = 0; a = 0; step = N |T|``; for each example:
    ``if score <= 0: w = w + y_i x_i; a = a + step / (N |T|) y_i x_i``;
    ``step = step - 1`` (after every example); ``return a``. The bias keeps its own
    ``a_b = a_b + step / (N |T|) y_i``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Labels in ``{+1, -1}``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch; ``N = sum(len(o) for o in orders)`` plays the role
        of the lecture's ``N |T|`` (epochs times training-set size).

    Returns
    -------
    a : ndarray of shape (n_features,)
        ``Σ (N - t + 1) / N · y x`` over the updates (the ``t``-th example has
        ``step = N - t + 1``), i.e. ``S / N``: the exact mean of ``w_1, ..., w_N``.
    a_b : float
        The exact mean ``(b_1 + ... + b_N) / N`` of the biases.

    Notes
    -----
    The lecture's pseudocode writes ``score < 0`` but its Python code (and its vanilla
    pseudocode) writes ``<= 0``; we use ``<= 0``. Up to floating-point rounding
    (``step / N`` per update instead of one division at the end) this is the same as
    :func:`~perceptrons.reference.averaged.averaged_perceptron_naive`.

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
    n_total = _n_examples(orders)  # the lecture's N·|T|
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


def averaged_perceptron_improved(
    X: Matrix, y: np.ndarray, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, float]:
    """Averaged perceptron from the models after each update and their survival counts.

    The first improvement of the naive average in the course notes on the voted and
    averaged perceptron: "save the weight vector after each update, and keep track of
    each weight vector's 'vote'. At the end just output a weighted sum
    ``w_s = Σ_i w^(i) v_i``". The models are ``w^(0) = 0, w^(1), ..., w^(U)``
    (``U`` updates); ``v_k`` counts the examples after which ``w^(k)`` was the
    current model, the one that created it included. The bias is kept alongside.

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
        ``Σ_k v_k w^(k)``, the running sum ``S = w_1 + ... + w_N``. Exact mean:
        ``w_sum / N``.
    b_sum : float
        ``Σ_k v_k b^(k) = b_1 + ... + b_N``. Exact mean: ``b_sum / N``.

    Notes
    -----
    Mistake rule ``y (w.x + b) <= 0``. The models and votes are those of
    :func:`perceptrons.reference.voted.voted_perceptron`; only the output differs (their
    weighted sum instead of a vote).

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    >>> y = np.array([1, -1, 1, -1])
    >>> w, b = averaged_perceptron_improved(X, y, epoch_orders(4, 1))
    >>> w.tolist(), b  # 1 [1, 0] + 2 [1, -1] + 1 [2, 1]: the running sum S
    ([5.0, -1.0], 0.0)
    """
    X = _as_matrix(X)
    y = _binary_labels(y)
    models = [np.zeros(X.shape[1])]  # w^(0)
    biases = [0.0]
    votes = [0]
    for order in _as_orders(orders):
        for i in order:
            x = _row(X, i)
            if y[i] * (models[-1] @ x + biases[-1]) <= 0:
                models.append(models[-1] + y[i] * x)  # a new model, stored whole
                biases.append(biases[-1] + y[i])
                votes.append(0)
            votes[-1] += 1  # it survives this example
    w_sum = np.zeros(X.shape[1])
    b_sum = 0.0
    for model, bias, vote in zip(models, biases, votes, strict=True):
        w_sum = w_sum + vote * model
        b_sum = b_sum + vote * bias
    return w_sum, float(b_sum)


def multiclass_averaged_perceptron_delta_list(
    X: Matrix, y: np.ndarray, n_classes: int, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Multiclass averaged perceptron from the list of updates and their remaining life.

    The "Δw" scheme of the course notes on the voted and averaged perceptron
    (:func:`~perceptrons.reference.averaged.averaged_perceptron_delta_list`) around the multiclass
    update of Kuhlmann's
    slides (``p <- argmax_k w_k.x + b_k``; if ``p != y``: ``w_p <- w_p - x;
    b_p <- b_p - 1; w_y <- w_y + x; b_y <- b_y + 1``): each update is stored as ``x``
    with its classes ``y, p`` and the position ``t`` of its example, and at the end
    weighted by its life ``N - t + 1``.

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
    W_sum : ndarray of shape (n_classes, n_features)
        The running sum ``W_1 + ... + W_N``. Exact mean: ``W_sum / N``.
    b_sum : ndarray of shape (n_classes,)
        ``b_1 + ... + b_N``. Exact mean: ``b_sum / N``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    >>> y = np.array([0, 1, 2, 2])
    >>> W, b = multiclass_averaged_perceptron_delta_list(X, y, 3, epoch_orders(4, 1))
    >>> (W / 4).tolist(), (b / 4).tolist()  # the exact mean
    ([[0.0, -0.75], [0.5, 0.75], [-0.5, 0.0]], [-0.75, 0.25, 0.5])
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    orders = _as_orders(orders)
    n_total = _n_examples(orders)
    W = np.zeros((n_classes, X.shape[1]))
    b = np.zeros(n_classes)
    updates: list[tuple[int, np.ndarray, int, int]] = []  # (t, x, gold, predicted)
    t = 0
    for order in orders:
        for i in order:
            t += 1
            x = _row(X, i)
            p = int(np.argmax(W @ x + b))  # ties: lowest class index
            if p != y[i]:
                W[p] = W[p] - x
                b[p] = b[p] - 1
                W[y[i]] = W[y[i]] + x
                b[y[i]] = b[y[i]] + 1
                updates.append((t, x, int(y[i]), p))
    W_sum = np.zeros((n_classes, X.shape[1]))
    b_sum = np.zeros(n_classes)
    for t, x, gold, predicted in updates:
        life = n_total - t + 1
        W_sum[gold] = W_sum[gold] + life * x
        b_sum[gold] = b_sum[gold] + life
        W_sum[predicted] = W_sum[predicted] - life * x
        b_sum[predicted] = b_sum[predicted] - life
    return W_sum, b_sum
