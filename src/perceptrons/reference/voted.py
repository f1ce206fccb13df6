"""The voted perceptron, binary and multiclass, and its prediction rules.

Voted models
------------
The voted perceptron keeps the models ``v_0 = 0, v_1, ..., v_K``, one per update (``K``
= number of updates), and the number of examples ``m_k`` each one was the current model
for, counting the example on which ``v_k`` was created (``m_0`` starts at 0). Expanding
``v_k`` into ``m_k`` copies gives the list ``w_1, ..., w_N`` of the naive scheme of the
course notes on the voted and averaged perceptron, so ``sum(m_k) = N``, ``v_K = w_N``
and ``sum(m_k v_k) = S``, the running sum of :mod:`perceptrons.reference.averaged`.
Biases ``c_k`` are kept alongside. The kernel (dual) variants, in
:mod:`perceptrons.reference.kernel`, store the update example indices and signs instead
of the vectors.

The bookkeeping of ``v_k, m_k`` is that of Cohen's lecture; the multiclass update is
that of Kuhlmann's slides.

References
----------
Course notes on the voted and averaged perceptron (they name no author or course).

M. Kuhlmann, "The perceptron learning algorithm", lecture slides, Department of Computer
and Information Science, Linköping University.

T. H. Nguyen, "Averaged perceptron note", CIS 472/572: Machine Learning, University of
Oregon.

W. Cohen, "The Perceptron", lecture slides, 10-601, Carnegie Mellon University.
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
    _row,
    epoch_orders,  # noqa: F401  (the doctests build their orders with it)
)

__all__ = [
    "multiclass_voted_perceptron",
    "multiclass_voted_perceptron_naive",
    "vote_predict",
    "voted_perceptron",
    "voted_perceptron_naive",
]


def _sign(score: float) -> int:
    """``+1`` for a positive score, ``-1`` otherwise: a zero score predicts the negative
    class, the same boundary as the mistake rule ``y * score <= 0``."""
    return 1 if score > 0 else -1


def voted_perceptron_naive(
    X: Matrix, y: np.ndarray, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Voted perceptron, naive: keep the model after every example, each with one vote.

    The first voted scheme of the course notes on the voted and averaged perceptron:
    "record the weight vector after each example in training data (not just after each
    update [...]), and then at the end of T epochs [...] you would have collected a
    total of T|D| models. At testing time, the voted perceptron simply lets all these
    models take a vote, and follows the majority."
    The bias is learned as the weight of a constant feature equal to 1 (as in Nguyen's
    averaged-perceptron note).

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
    :func:`~perceptrons.reference.voted.vote_predict` and ``votes = np.ones(N)``. The memory is
    ``O(N d)``;
    :func:`~perceptrons.reference.voted.voted_perceptron` stores the same list compressed to ``O(K
    d)``.

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

    Cohen's lecture, "Breaking it down: the voted perceptron":
    ``v_0 = 0; m_0 = 0; k = 0``; for each example ``if v_k . x_i y_i < 0:
    v_{k+1} <- v_k + x_i y_i; m_{k+1} <- 1; k <- k + 1``, ``else: m_k <- m_k + 1``. This
    is the improved scheme of the course notes on the voted and averaged perceptron:
    "only [save] the weight vectors after each update [...] and also record the number
    of votes for each weight vector". The bias ``c_k`` is the weight of a constant feature
    equal to 1 (the ``b <- b + y`` of Nguyen's averaged-perceptron note).

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
    Cohen's lecture writes ``< 0``; with ``v_0 = 0`` the first score is 0 and a strict
    rule would never update, so the mistake rule here is ``y (v_k.x + c_k) <= 0``. The
    first example therefore always updates and ``m_0 = 0`` whenever ``N >= 1``.

    ``np.repeat(V, votes, axis=0)`` is exactly
    :func:`~perceptrons.reference.voted.voted_perceptron_naive`'s list,
    ``V[-1], c[-1]`` is :func:`~perceptrons.reference.averaged.perceptron`'s result, and the
    lecture's "deterministic
    weighted average" ``a = sum(m_k v_k) / m`` (``m = N``) is
    ``votes @ V / votes.sum()``, the exact mean of
    :func:`~perceptrons.reference.averaged.averaged_perceptron_naive`.
    Predict with :func:`~perceptrons.reference.voted.vote_predict`.

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

    The multiclass perceptron of Kuhlmann's slides with the naive voted scheme of the
    course notes on the voted and averaged perceptron (record the weights after each
    example, updated or not).

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

    The voted bookkeeping of Cohen's lecture (``v_0 = 0, m_0 = 0``; on a mistake a new
    model with ``m = 1``, else ``m_k <- m_k + 1``) around the multiclass update of
    Kuhlmann's slides (``p <- argmax_k x w_k + b_k``; ``if p != y: w_p <- w_p - x;
    b_p <- b_p - 1; w_y <- w_y + x; b_y <- b_y + 1``).

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
    ``V[-1], c[-1]`` is :func:`~perceptrons.reference.multiclass.multiclass_perceptron`'s result and
    ``np.tensordot(votes, V, 1) / votes.sum()`` the exact mean of
    :func:`~perceptrons.reference.multiclass.multiclass_averaged_perceptron_naive`.

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
        The models, as returned by :func:`~perceptrons.reference.voted.voted_perceptron` or
        :func:`~perceptrons.reference.voted.multiclass_voted_perceptron` (or a naive list with
        ``votes`` all 1).
    c : ndarray of shape (K + 1,) or (K + 1, n_classes)
        Their biases.
    votes : ndarray of shape (K + 1,)
        Their non-negative numbers of votes ``m_k``.
    X : ndarray of shape (n_rows, n_features) or sparse matrix
        Rows to predict.
    rule : {"vote", "average", "last", "random"}
        ``"vote"``: the majority vote of the course notes on the voted and averaged
        perceptron. Binary: ``sign(sum_k m_k sign(v_k.x + c_k))`` with
        ``sign(s) = -1`` for ``s <= 0``, a total of exactly 0 predicting ``-1``;
        multiclass: model ``k`` gives ``m_k`` votes to its argmax class, the class with
        most votes wins.
        ``"average"``: the "deterministic approximation" of Cohen's lecture, the sign
        (binary) or argmax (multiclass) of ``sum_k m_k (v_k.x + c_k)``.
        ``"last"``: the last model ``v_K`` alone (the vanilla perceptron).
        ``"random"``: the "pick a v_k at random according to m_k/m" of Cohen's
        lecture, drawn independently for each row, in row order, as
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
