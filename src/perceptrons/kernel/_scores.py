"""The voted perceptron's staged scores of a binary sequence, computed where the kernel
values are: prefix sums over the update sequence as array-API operations.

On NumPy, :func:`perceptrons._kernels.voted.staged_scores_binary` walks each row's
update sequence once, compiled. On a device that walk would first bring every kernel
value to the host (for a model of 48,000 support vectors, 3.8 GB per 10,000 rows);
here the same quantities are formed as whole arrays on the device instead, and only the
scores travel. For a block of rows and one binary sequence (``support``, ``signs``,
``votes``; the stages ``counts`` and ``last`` as
:meth:`perceptrons.VotedPerceptron._sequences` gives them):

- ``P = cumsum((K[:, support] + bias_sq) * signs)``: ``P[:, j]`` is the score of the
  model after update ``j`` (model ``j + 1``); the zero model scores 0;
- stage ``s`` of ``n`` updates: its last model scores ``P[:, n - 1]``; its vote adds
  ``votes[k] * sign(P_k)`` over its models ``k < n`` (prefix sums of
  ``sign(P) * votes[1:]``; the zero model's sign is -1) and ``last[s] * sign`` of its
  last model, over its total; its average the same with the scores themselves; its
  random pick the model whose cumulative votes first exceed ``draw * total``.

The numbers are those of the compiled walk up to the order of the additions (a device's
prefix sum adds in its own order): identical where the arithmetic is exact.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from perceptrons._kernels.voted import (
    RULE_AVERAGE,
    RULE_LAST,
    RULE_RANDOM,
    RULE_VOTE,
    stage_totals,
)
from perceptrons.kernel._gram import Backend

__all__ = ["staged_binary_scores"]

# Rows x updates held at once by one block's prefix sums.
_BLOCK_VALUES = 2**25


def staged_binary_scores(
    backend: Backend,
    gram: Any,
    support: np.ndarray,
    signs: np.ndarray,
    votes: np.ndarray,
    counts: np.ndarray,
    last: np.ndarray,
    bias_sq: float,
    rule: int,
    draws: np.ndarray,
) -> np.ndarray:
    """Every stage's decision values of the rows of ``gram`` (the backend's kernel
    values against the support vectors) under one binary sequence: shape
    ``(n_stages, n_rows)``, as :func:`perceptrons._kernels.voted.staged_scores_binary`."""
    n_rows, n_updates = gram.shape[0], support.shape[0]
    # The compiled walk's own running votes and stage totals: the same numbers.
    cumulative, totals = stage_totals(votes, counts, last)
    out = np.empty((counts.shape[0], n_rows))
    rows_per_block = max(1, _BLOCK_VALUES // max(1, n_updates))
    for start in range(0, n_rows, rows_per_block):
        stop = min(start + rows_per_block, n_rows)
        out[:, start:stop] = _block(
            backend,
            gram[start:stop, :],
            support,
            signs,
            votes,
            counts,
            last,
            totals,
            cumulative,
            bias_sq,
            rule,
            draws[start:stop],
        )
    return out


def _block(
    backend, gram, support, signs, votes, counts, last, totals, cumulative, bias_sq, rule, draws
) -> np.ndarray:
    xp = backend.xp
    n_rows, n_updates = gram.shape[0], support.shape[0]
    out = np.empty((counts.shape[0], n_rows))
    if n_updates == 0:  # only the zero model: it scores 0, its sign is -1
        out[:] = -1.0 if rule == RULE_VOTE else 0.0
        return out
    contributions = xp.take(gram, backend.asarray(support, "int64"), axis=1)
    contributions += bias_sq
    contributions *= backend.asarray(signs)
    scores = xp.cumulative_sum(contributions, axis=1)  # model j + 1's score in column j
    # The models before a stage's last: 1..n-1, their scores in columns 0..n-2.
    earlier, earlier_votes = scores[:, : n_updates - 1], backend.asarray(votes[1:n_updates])
    if rule == RULE_VOTE:
        # +1 where the score is positive, else -1 (a zero score predicts the negative
        # class, as in training).
        signed = xp.astype(earlier > 0.0, xp.float64) * 2.0 - 1.0
        running = xp.cumulative_sum(signed * earlier_votes, axis=1)
    elif rule == RULE_AVERAGE:
        running = xp.cumulative_sum(earlier * earlier_votes, axis=1)
    for stage, (n, extra, total) in enumerate(zip(counts, last, totals, strict=True)):
        if rule == RULE_RANDOM:
            out[stage] = _random_pick(backend, scores, cumulative[:n], n, draws * total)
            continue
        final = backend.to_numpy(scores[:, n - 1]) if n else np.zeros(n_rows)
        if rule == RULE_LAST:
            out[stage] = final
        elif rule == RULE_VOTE:
            before = backend.to_numpy(running[:, n - 2]) if n >= 2 else 0.0
            value = -votes[0] + before if n else 0.0
            value = value + extra * np.where(final > 0.0, 1.0, -1.0)
            out[stage] = value / total if total > 0 else -1.0
        else:
            before = backend.to_numpy(running[:, n - 2]) if n >= 2 else 0.0
            value = before + extra * final
            out[stage] = value / total if total > 0 else 0.0
    return out


def _random_pick(
    backend: Backend, scores: Any, cumulative: np.ndarray, n: int, targets: np.ndarray
) -> np.ndarray:
    """The score of the model each row draws: the first ``k < n`` whose cumulative votes
    exceed the row's target, else the stage's last model ``n``."""
    chosen = np.searchsorted(cumulative, targets, side="right")  # in 0..n
    picked = np.zeros(targets.shape[0])
    drawn = np.flatnonzero(chosen > 0)
    if drawn.size:
        n_updates = scores.shape[1]
        flat = backend.xp.reshape(scores, (-1,))
        where = backend.asarray(drawn * n_updates + chosen[drawn] - 1, "int64")
        picked[drawn] = backend.to_numpy(backend.xp.take(flat, where))
    return picked
