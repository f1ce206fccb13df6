"""
Iterative parameter mixing: accuracy and time against the number of shards
==========================================================================

Iterative parameter mixing (R. McDonald, K. Hall and G. Mann, *Distributed training
strategies for the structured perceptron*, NAACL-HLT 2010) trains one perceptron on
data split into shards. In every epoch each shard starts from the current mixed weights
and runs one ordinary epoch over its own examples, and the shards' weights are then
mixed into the start of the next epoch. :func:`perceptrons.parallel.mix_threads` runs
the shards in threads of one process. The compiled kernels release the GIL, so the
shards of an epoch can run on different cores at the same time.
:class:`perceptrons.parallel.ParameterMixing` runs the same algorithm on a Dask cluster.

The ``mixing`` argument sets how the shards' weights are combined.
``"mistakes"`` weighs each shard by the mistakes it made in the epoch, as McDonald et
al. do, and is the default for the perceptrons. ``"uniform"`` takes the plain mean.
For the averaged perceptron the model is the mean of the weights after every example
of every shard. With one shard the algorithm is the serial fit, bit for bit.

This example fits an :class:`perceptrons.AveragedPerceptron` on a synthetic sparse
five-class problem with 1, 2, 4, 8 and 16 shards and both mixings, and compares each
fit with the serial ``fit``. More shards mean fewer examples per shard between two
mixes, and the accuracy falls a little. The time can only fall where there are cores
to run the shards: the machine that built these docs may have only two.
:doc:`/benchmarks` has measurements on larger data sets (20 Newsgroups, MNIST, a9a) and
with more mixing strategies.
"""

import sys
import time

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp

from perceptrons import AveragedPerceptron
from perceptrons.parallel import mix_threads

# %%
# A sparse five-class problem
# ---------------------------
# Each example has about 15 of 2,000 features with values between 0.5 and 1.5. Its
# class is the best of five hidden linear scores plus Gaussian noise. There are 30,000
# examples to train on and 10,000 to test on.

N_TRAIN, N_TEST, N_FEATURES, PER_ROW, N_CLASSES = 30_000, 10_000, 2_000, 15, 5
rng = np.random.default_rng(0)
n = N_TRAIN + N_TEST
columns = np.sort(rng.integers(0, N_FEATURES, size=(n, PER_ROW)), axis=1)
distinct = np.ones((n, PER_ROW), dtype=bool)
distinct[:, 1:] = columns[:, 1:] != columns[:, :-1]  # a column drawn twice counts once
indptr = np.concatenate([[0], np.cumsum(distinct.sum(axis=1))])
values = rng.uniform(0.5, 1.5, size=indptr[-1])
X = sp.csr_matrix((values, columns[distinct], indptr), shape=(n, N_FEATURES))
hidden = rng.standard_normal((N_FEATURES, N_CLASSES))
y = np.argmax(X @ hidden + rng.standard_normal((n, N_CLASSES)), axis=1)
X_train, y_train, X_test, y_test = X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]


def new_model() -> AveragedPerceptron:
    """The same settings for every fit: 10 epochs, shuffled, seeded."""
    return AveragedPerceptron(max_epochs=10, random_state=0)


# Load the compiled kernels (from Numba's cache, or compile them) before any timing.
new_model().fit(X_train[:500], y_train[:500])
mix_threads(new_model(), X_train[:500], y_train[:500], n_shards=2)

# %%
# The serial fit and the mixed fits
# ---------------------------------
# ``mix_threads(estimator, X, y, n_shards, mixing, n_threads=...)`` splits the rows
# into ``n_shards`` shards and runs them on ``n_threads`` threads (by default one per
# CPU, at most one per shard). The model depends on the shards and the seed, never on
# the threads: 16 shards on 2 threads give the model that 16 threads give.
# ``AveragedPerceptron(n_shards=2).fit(X, y)`` is ``mix_threads`` with two shards and
# the default mixing.
#
# The default mixing is timed twice per shard count, as is the serial fit, and the
# faster of the two runs is kept; ``"uniform"`` is fitted once, for its accuracy.


def timed(fit, *args, **kwargs) -> tuple[float, AveragedPerceptron]:
    """The time of ``fit(new_model(), X_train, y_train, ...)`` and its model."""
    started = time.perf_counter()
    model = fit(new_model(), X_train, y_train, *args, **kwargs)
    return time.perf_counter() - started, model


def serial_fit(model, X, y):
    return model.fit(X, y)


serial_runs = [timed(serial_fit) for _ in range(2)]
serial_seconds, serial = min(serial_runs, key=lambda run: run[0])
serial_accuracy = serial.score(X_test, y_test)

SHARDS = (1, 2, 4, 8, 16)
MIXINGS = {"mistakes": 2, "uniform": 1}  # mixing -> timed runs
results = {}  # (mixing, shards) -> (seconds, accuracy)
print(f"serial fit: {serial_seconds:.2f} s, test accuracy {serial_accuracy:.4f}\n")
print(f"{'mixing':<9} {'shards':>6} {'threads':>7} {'fit s':>6} {'accuracy':>8} {'Δ points':>8}")
for mixing, repeats in MIXINGS.items():
    for shards in SHARDS:
        threads = min(shards, 2)
        runs = [
            timed(mix_threads, n_shards=shards, n_threads=threads, mixing=mixing)
            for _ in range(repeats)
        ]
        seconds, mixed = min(runs, key=lambda run: run[0])
        accuracy = mixed.score(X_test, y_test)
        results[mixing, shards] = (seconds, accuracy)
        delta = 100 * (accuracy - serial_accuracy)
        print(
            f"{mixing:<9} {shards:>6} {threads:>7} {seconds:>6.2f} {accuracy:>8.4f} {delta:>+8.2f}"
        )
        if shards == 1:
            # One shard is the serial fit exactly: the same weights, bit for bit.
            assert np.array_equal(mixed.coef_, serial.coef_)
            assert np.array_equal(mixed.intercept_, serial.intercept_)

# More shards cost a little accuracy here: never more than a few points.
assert all(abs(accuracy - serial_accuracy) < 0.03 for _, accuracy in results.values())
print("\none shard: the serial model, bit for bit (both mixings)")

# %%
# The figure
# ----------
# On the left, test accuracy against the number of shards, with the serial fit as a
# dashed line. On the right, the fit time with the default mixing (the faster of two
# runs). With two cores at most two shards run at once, so more than two shards cannot
# be faster than two, and each extra shard adds its share of the mixing work in every
# epoch. These times belong to this machine and its load, so they are plotted and not
# asserted.

fig, (ax_accuracy, ax_time) = plt.subplots(1, 2, figsize=(10, 4))
for mixing, marker in zip(MIXINGS, ("o", "s"), strict=True):
    seconds, accuracy = np.array([results[mixing, s] for s in SHARDS]).T
    ax_accuracy.plot(SHARDS, accuracy, marker=marker, label=f'mixing="{mixing}"')
    if MIXINGS[mixing] > 1:
        ax_time.plot(SHARDS, seconds, marker=marker, label=f'mix_threads, mixing="{mixing}"')
ax_accuracy.axhline(serial_accuracy, color="gray", linestyle="--", label="serial fit")
ax_time.axhline(serial_seconds, color="gray", linestyle="--", label="serial fit")
for ax in (ax_accuracy, ax_time):
    ax.set_xscale("log", base=2)
    ax.set_xticks(SHARDS, [str(s) for s in SHARDS])
    ax.set_xlabel("shards (at most 2 threads)")
    ax.legend()
ax_accuracy.set(ylabel="test accuracy", title="Accuracy against shards, 10 epochs")
ax_time.set(ylabel="fit time (s)", title="Fit time against shards (this machine)", ylim=(0, None))
fig.tight_layout()

if __name__ == "__main__" and len(sys.argv) > 1:
    fig.savefig(sys.argv[1])
