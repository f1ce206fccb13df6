"""Parameter mixing over threads of this process: the compiled kernels release the GIL."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from numpy.typing import ArrayLike

from perceptrons import _params as rules
from perceptrons.parallel._mixing import (
    Training,
    array_shards,
    check_estimator,
    resolve_mixing,
    split_rows,
)
from perceptrons.parallel._names import DEFAULT_LOCAL_EPOCHS, DEFAULT_MIXING
from perceptrons.parallel._shards import ShardData, ShardTrainer, engine_of, shard_epoch

if TYPE_CHECKING:
    from perceptrons.linear._online import OnlineLinearClassifier

__all__ = ["mix_threads"]


def resolve_threads(n_shards: int, n_threads: int | None = None) -> int:
    """The threads that run ``n_shards`` shards (already resolved, no -1): ``n_threads``
    when given, else one per CPU; never more than the shards."""
    if n_threads is None:
        n_threads = os.cpu_count() or 1
    return max(1, min(n_threads, n_shards))


def mix_threads(
    estimator: OnlineLinearClassifier,
    X: ArrayLike,
    y: ArrayLike,
    n_shards: int,
    mixing: str = DEFAULT_MIXING,
    *,
    n_threads: int | None = None,
    sample_weight: ArrayLike | None = None,
    local_epochs: int = DEFAULT_LOCAL_EPOCHS,
    redeal: bool = False,
    average: str = "examples",
) -> OnlineLinearClassifier:
    """Fit ``estimator`` in place by parameter mixing over shards run in threads.

    The algorithm of :class:`ParameterMixing` (see the module documentation), without
    Dask: the compiled kernels release the GIL, so the shards' epochs run in parallel in
    a ``ThreadPoolExecutor``. For the same shards and ``random_state`` the model is
    exactly the one :class:`ParameterMixing` fits on a Dask cluster.

    Parameters
    ----------
    estimator : Perceptron or AveragedPerceptron
        Its hyperparameters set the training (``max_epochs``, ``shuffle``,
        ``random_state``...); it is fitted in place, from zero.
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Training data.
    y : array-like of shape (n_samples,)
        Labels.
    n_shards : int
        The number of shards the rows are dealt into; -1 for one per CPU. Unlike
        scikit-learn's ``n_jobs``, it changes the model: each shard trains on its own
        rows, and the shards' weights are mixed after every epoch (one shard is the
        serial fit).
    mixing : {"auto", "uniform", "mistakes", "sum"}, default="auto"
        How the shards' weights are mixed after each epoch (see
        :class:`ParameterMixing`).
    n_threads : int, default=None
        The threads that run the shards' epochs: None for one per CPU, never more than
        ``n_shards``. The model does not depend on it (16 shards on 2 threads are the
        model 16 threads give); only the time does.
    sample_weight : array-like of shape (n_samples,) or float, default=None
        Weight of each example, as for the estimator's ``fit`` (multiplied by its
        ``class_weight``); each shard trains with the weights of its own rows.
    local_epochs : int, default=1
        Passes each shard makes over its examples between two mixes; ``max_epochs``
        counts the mixes.
    redeal : bool, default=False
        Deal the rows out to the shards afresh before every epoch (a new seeded
        permutation; with ``shuffle=True``, not with the Δ trick): the threads share
        ``X``, so nothing is copied.
    average : {"examples", "mixes"}, default="examples"
        Averaged models: the mean of the weights after every example of every shard,
        or the mean of the mixed weights of every epoch.

    Returns
    -------
    estimator : Perceptron or AveragedPerceptron
        The fitted estimator; its ``history_`` records also hold ``shard_mistakes``
        and ``shard_updates``.

    Examples
    --------
    Two shards, each half of the data, their epochs run in two threads (one per CPU, at
    most one per shard):

    >>> from sklearn.datasets import load_iris
    >>> from perceptrons import AveragedPerceptron
    >>> from perceptrons.parallel import mix_threads
    >>> X, y = load_iris(return_X_y=True)
    >>> model = mix_threads(AveragedPerceptron(max_epochs=20, random_state=0), X, y, n_shards=2)
    >>> [len(record["shard_mistakes"]) for record in model.history_][:3]
    [2, 2, 2]
    >>> bool(model.score(X, y) > 0.9)
    True
    """
    check_estimator(estimator, mixing, local_epochs, average)
    if not rules.integer(1).accepts(n_shards) and n_shards != -1:
        raise ValueError(f"n_shards must be an int >= 1 or -1, got {n_shards!r}.")
    if n_threads is not None and not rules.integer(1).accepts(n_threads):
        raise ValueError(f"n_threads must be None or an int >= 1, got {n_threads!r}.")
    if redeal and (not estimator.shuffle or engine_of(estimator).delta != 0):
        raise ValueError(
            "redeal needs shuffle=True and no Δ trick (delta=0): the rows are dealt by "
            "the shuffling generator, and each Δ weight belongs to one shard's example."
        )
    # A fit that fails (weights that overflow, an interrupt) leaves the model before it.
    with estimator._all_or_nothing():
        n_shards = (os.cpu_count() or 1) if n_shards == -1 else n_shards
        dealt = array_shards(
            estimator,
            X,
            y,
            n_shards,
            share=True,
            # Every shard's state lives in this process, besides the mixed one: all checked
            # at once, before any shard is made.
            held_here=True,
            sample_weight=sample_weight,
            local_epochs=local_epochs,
            average=average,
        )
        shards, plan, dealer = dealt.shards, dealt.plan, dealt.dealer
        # Each shard keeps its own state from epoch to epoch: the threads read and write
        # only the rows the mix and their epochs change.
        trainers = [ShardTrainer(plan) for _ in shards]
        with ThreadPoolExecutor(max_workers=resolve_threads(len(shards), n_threads)) as pool:

            def run_epoch(epoch, start, rng_states, slacks, whole_start):
                if redeal and epoch > 1 and len(shards) > 1:
                    base = shards[0]
                    parts = split_rows(base.X.shape[0], len(shards), dealer)
                    shards[:] = [
                        ShardData(base.X, base.codes, rows, base.sample_weight) for rows in parts
                    ]
                jobs = [
                    pool.submit(shard_epoch, trainers[i], shard, start, rng_states[i], slacks[i])
                    for i, shard in enumerate(shards)
                ]
                results = [job.result() for job in jobs]
                assert all(r is not None for r in results)  # the trainers are never lost
                return results

            training = Training(
                estimator,
                plan,
                resolve_mixing(estimator, mixing),
                run_epoch,
                dealt.streams,
                [s.n_samples for s in shards],
                validation=dealt.validation,
            )
            for _ in training.epochs(publish_each_epoch=False):
                pass
    return estimator
