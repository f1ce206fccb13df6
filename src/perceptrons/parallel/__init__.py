"""Iterative parameter mixing: one perceptron trained on data split across workers.

McDonald, Hall & Mann (2010), "Distributed training strategies for the structured
perceptron", algorithm 2. The training data is split into shards; every epoch, each shard
starts from the current *mixed* weights and runs one ordinary perceptron epoch over its
own examples (with the estimator's own compiled kernel), then the shards' weights are
mixed into the next epoch's start:

* ``mixing="uniform"``: their mean, μ_i = 1 / n_shards;
* ``mixing="mistakes"``: μ_i proportional to the mistakes k_i shard i made this epoch
  (uniform in an epoch without any mistake), the weighting of McDonald et al. (for the
  margin rules, which also update on correct examples, k_i counts the updates);
* ``mixing="sum"``: μ_i = 1, the start plus every shard's change, as if the shards'
  updates had been made one after the other from the same start (it diverges from 4
  shards on every data set of ``benchmarks/RESULTS.md``: there for comparison);
* ``mixing="auto"`` (the default): "mistakes" for the perceptrons, the most accurate
  rule at 2 to 16 shards in ``benchmarks/bench_mixing_accuracy.py``, and "uniform" for
  logistic regression, which makes no mistakes to count.

That is, ``W' = W + Σ μ_i (W_i - W)``, intercept row included. The vanilla
:class:`~perceptrons.Perceptron` then predicts with the last mixed weights. With
``local_epochs=k`` each shard makes ``k`` passes over its examples between two mixes.

Every estimator the compiled kernels drive can be mixed: :class:`~perceptrons.Perceptron`
and :class:`~perceptrons.AveragedPerceptron` with any update rule (perceptron, PA, PA-I,
PA-II), and :class:`~perceptrons.LogisticRegressionSGD` (each shard's lazily scaled
weights are rewritten as true weights before they are mixed).

**The averaged model.** For :class:`~perceptrons.AveragedPerceptron`, each shard also
returns the sum of its weight vectors after each of its examples this epoch (read off its
auxiliary vector: ``n * weights - aux``, the kernels' own averaging trick, started afresh
from the mixed weights). The fitted model predicts with

    (Σ over epochs and shards of those sums) / (total examples seen),

the plain mean of every intermediate weight vector of every shard, one per example
visited. The mixed vectors themselves are not added (a shard that makes no mistake adds
its start, the mixed vector, once per example, as the serial average does). With one
shard this is exactly the serial averaged perceptron: its state, count and average
included, simply continues from epoch to epoch, bit for bit. ``average="mixes"``
instead predicts with the mean of the mixed weights of the epochs.

Shards and shuffling
--------------------
Arrays are split into ``n_shards`` shards of near-equal size: contiguous blocks of
rows when the estimator has ``shuffle=False``, otherwise rows dealt out by a seeded random
permutation (each shard keeping its rows in their original order). Each shard visits its
examples in a fresh order every epoch when ``shuffle=True``, drawn from its own
``RandomState``: shard 0 draws from ``check_random_state(random_state)`` itself, exactly
like the serial fit, so one shard reproduces the serial fit, shuffles included; shard
``i >= 1`` draws from a ``RandomState`` seeded by the ``i``-th child of
``SeedSequence(k)``, ``k`` being the first ``randint(2**31 - 1)`` a copy of that
generator gives (child 0 seeds the dealing of rows). The generator's state travels
with each shard's task and comes back advanced, so a task run again after a failure
draws the same order, and a run is a function of ``random_state`` only: the same for
threads (:func:`mix_threads`) and for any Dask cluster.

Dask arrays are split along their row chunks (rechunked into ``n_shards`` near-equal
blocks when ``n_shards`` is given), and a list of files gives one shard per file,
read by the worker itself; neither is dealt out again, ``shuffle`` only reorders
examples within each shard.

``early_stopping`` stops as the serial fit does, by the same loop
(:func:`perceptrons._engine.run_epochs`); its ``validation_fraction`` is held out of
in-memory arrays before the rows are dealt (files and Dask arrays refuse it: their rows
stay on the workers). Not supported: ``warm_start`` (every fit starts from zero). The Δ trick
(``delta``) is: each example's own weight stays with its shard.

Data movement: changed rows, not weight matrices
------------------------------------------------
An epoch changes only the weight rows of the features of the examples it updated on
(Collins' perceptron touches ``d_Δw ≪ d`` features). So each shard keeps its own state
from epoch to epoch (a :class:`~perceptrons.parallel._shards.ShardTrainer`, in its
thread, or on the Dask worker that holds the shard's data) and the exchange is sparse:

* after its epoch, a shard sends back the rows of its weights and of its averaging
  bookkeeping at the features of the examples it updated on (found from the kernels'
  mistake log; logistic regression updates on every example: its shard's features),
  with their indices; past half of the rows it sends the whole matrices instead, and
  logistic regression with a prior (which decays every weight) always does;
* the client mixes those rows. For the average it keeps the averaging trick at its own
  level: the sum of every weight vector so far is ``count * W - A``, and a mix adds
  ``A' = A + (count + N) D - Σ_i (n_i δ_i - A_i)`` at the changed rows only
  (``D = Σ μ_i δ_i`` the mixed change, ``δ_i`` and ``A_i`` shard i's change and
  bookkeeping, ``N = Σ n_i``), so untouched rows keep ``W`` and ``A`` exactly;
* the next epoch's start is the mixed rows that changed, sent once (to one worker, from
  which the others fetch it); every other row of a shard's state already holds it.

The first epoch sends nothing: every shard starts from the zero model. Threads share
``X`` and exchange the same rows in memory. On Dask, each epoch's record in
``ParameterMixing.history_`` says how many rows changed and how many bytes were sent
and received (``changed_rows``, ``bytes_sent``, ``bytes_received``).

Files are read by the workers: each file is one shard, read whole, or with
``stream=True`` read ``chunk_size`` lines at a time every epoch, so a worker's memory
holds one chunk and the model whatever the file's size.

Faults
------
When a worker dies, Dask reruns the tasks it was running elsewhere;
a shard whose data was lost with it is scattered again from the client's copy (shards
of files and Dask arrays are read or computed again by the workers). Its new trainer
has no state: it asks for the whole start (the client's mixed state), and the shard's
epoch is rerun from it and the same generator state, so the model is the one an
uninterrupted run gives. After ``max_retries`` such recoveries within one epoch
the fit stops with a ``RuntimeError`` naming the lost workers; an error raised by a
task itself (bad data, say) is raised as it is, never retried.

Layout
------
:mod:`perceptrons.parallel._mixing` (the mixing and the epoch loop) and
:mod:`perceptrons.parallel._shards` (a shard's side: its data and epoch) hold the
algorithm (no Dask import); :func:`mix_threads` (module ``perceptrons.parallel.threads``)
runs the shards in threads, :class:`ParameterMixing` (module ``perceptrons.parallel.dask``,
its workers' tasks and cluster plumbing in ``perceptrons.parallel._dask_runner`` and
``perceptrons.parallel._dask_cluster``) on a Dask cluster.
"""

from typing import TYPE_CHECKING

from perceptrons.parallel._names import MIXINGS

if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ below
    from perceptrons.parallel.dask import ParameterMixing
    from perceptrons.parallel.threads import mix_threads

__all__ = ["MIXINGS", "ParameterMixing", "mix_threads"]

#: The mixing rules: the mean of the shards' weights, their mean weighted by mistakes,
#: the start plus the sum of the shards' changes; "auto" is "mistakes" for the
#: perceptrons and "uniform" for logistic regression (which makes no mistakes to count).
MIXINGS = MIXINGS

# Imported on first use (perceptrons._lazy): the command's parser reads MIXINGS alone.
_ORIGINS = {
    "ParameterMixing": "perceptrons.parallel.dask",
    "mix_threads": "perceptrons.parallel.threads",
}

if not TYPE_CHECKING:  # hidden from type checkers, which would then accept any name
    from perceptrons._lazy import lazy_attributes

    __getattr__, __dir__ = lazy_attributes(globals(), _ORIGINS)
    del lazy_attributes
