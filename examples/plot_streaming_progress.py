"""
Streaming a file larger than memory, with a progress bar
========================================================

:func:`perceptrons.io.stream.fit_stream` trains an estimator on a data file that it reads
``chunk_size`` lines at a time, handing each chunk to the estimator's ``partial_fit``.
Each epoch reads the file again. A reader thread parses the next chunks while the
estimator trains on the current one, so memory holds a few chunks and the model,
whatever the size of the file.

This example writes a synthetic svmlight file of 300,000 lines, streams it through an
:class:`perceptrons.AveragedPerceptron` and a :class:`perceptrons.Perceptron` with a
``tqdm`` progress bar, and records the held-out accuracy after every chunk. It then
checks the promise of the streaming module: when the order is fixed (the estimator's
``shuffle=False`` and no ``shuffle_window``), one streamed pass gives exactly the model
that an in-memory ``fit`` with ``max_epochs=1, shuffle=False`` gives, bit for bit. The
perceptrons make the same updates in the same order either way, and the average covers
the same examples.

The figure shows what one pass over a stream buys. The averaged model improves steadily
as chunks arrive. The last weights of the plain perceptron jump from chunk to chunk,
because every mistake moves them. For the throughput of the compiled reader on a large
file, see the streaming section of :doc:`/benchmarks`.
"""

import os
import sys
import tempfile
import time

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
from tqdm import tqdm

from perceptrons import AveragedPerceptron, Perceptron
from perceptrons.io.formats import read_data
from perceptrons.io.stream import fit_stream, scan

# %%
# A synthetic sparse problem
# --------------------------
# Each example has about 12 of 5,000 binary features, like a short bag of words. Its
# label is the sign of a hidden linear score plus Gaussian noise, so no separator is
# perfect. The last 20,000 rows are kept in memory as a held-out set. The first
# 300,000 rows are written as an svmlight file (1-based indices, ``label i:1 j:1 ...``)
# in a temporary directory.

N_TRAIN, N_TEST, N_FEATURES, PER_ROW = 300_000, 20_000, 5_000, 12
CHUNK_SIZE = 10_000
rng = np.random.default_rng(0)
n = N_TRAIN + N_TEST
columns = np.sort(rng.integers(0, N_FEATURES, size=(n, PER_ROW)), axis=1)
distinct = np.ones((n, PER_ROW), dtype=bool)
distinct[:, 1:] = columns[:, 1:] != columns[:, :-1]  # a column drawn twice counts once
indptr = np.concatenate([[0], np.cumsum(distinct.sum(axis=1))])
X = sp.csr_matrix((np.ones(indptr[-1]), columns[distinct], indptr), shape=(n, N_FEATURES))
hidden = rng.standard_normal(N_FEATURES)
y = np.where(X @ hidden + rng.standard_normal(n) > 0, 1, -1)
X_train, y_train, X_test, y_test = X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]


def write_svmlight(path: str, X: sp.csr_matrix, y: np.ndarray) -> None:
    """``label index:1 ...`` per row, with 1-based indices (all values are 1)."""
    cells = np.array([f" {j}:1" for j in range(1, X.shape[1] + 1)], dtype=object)
    pieces = np.empty(X.shape[0] + X.nnz, dtype=object)
    is_label = np.zeros(pieces.shape[0], dtype=bool)
    is_label[np.arange(X.shape[0]) + X.indptr[:-1]] = True  # each row's label first
    pieces[is_label] = np.where(y > 0, "\n1", "\n-1").astype(object)
    pieces[~is_label] = cells[X.indices]
    with open(path, "w") as file:
        file.write("".join(pieces.tolist())[1:] + "\n")


workdir = tempfile.TemporaryDirectory()
path = os.path.join(workdir.name, "train.svm")
write_svmlight(path, X_train, y_train)
print(f"{path}: {N_TRAIN:,} lines, {os.path.getsize(path) / 1e6:.1f} MB")

# %%
# The first pass
# --------------
# Streaming needs every label and, for svmlight, the width of the rows before it
# trains. :func:`~perceptrons.io.stream.scan` reads the file once to find them. By
# default ``fit_stream`` makes this pass itself. Here it is made once, and what it finds
# is given to both trainings, so neither reads the file twice.

found = scan(path, chunk_size=CHUNK_SIZE)
print(
    f"scan: {found.n_examples:,} examples, classes {found.classes.tolist()}, "
    f"{found.n_features:,} features, zero_based={found.zero_based}\n"
)


# %%
# Streaming, with a progress bar
# ------------------------------
# ``fit_stream`` calls ``progress(bytes, examples)`` after each chunk is trained, with
# the bytes of the file read and the examples trained since the previous call. The
# model is current at that point, so the callback can score it. The bar below counts
# bytes, as ``perceptrons train --stream`` does. The command line passes tqdm
# ``disable=None``, which hides the bar when stderr is not a terminal; here
# ``disable=False`` shows it in any case. tqdm writes to stderr, so the bar appears in a
# console but not on this page. The svmlight reader takes the file 1 MiB at a time, so
# the bar moves in steps of 1 MiB. The clock in the callback leaves out the time spent
# scoring.


def stream(model, label):
    """Stream the file into ``model``; held-out accuracy and clock after each chunk."""
    curve = {"examples": [], "accuracy": [], "seconds": []}
    bar = tqdm(
        total=os.path.getsize(path),
        desc=label,
        unit="B",
        unit_scale=True,
        file=sys.stderr,
        disable=False,
    )
    seen, clock, last = 0, 0.0, time.perf_counter()

    def progress(n_bytes: int, n_examples: int) -> None:
        nonlocal seen, clock, last
        clock += time.perf_counter() - last
        seen += n_examples
        curve["examples"].append(seen)
        curve["seconds"].append(clock)
        curve["accuracy"].append(model.score(X_test, y_test))
        bar.set_postfix_str(f"{seen / clock:,.0f} examples/s", refresh=False)
        bar.update(n_bytes)
        last = time.perf_counter()

    report = fit_stream(
        model,
        path,
        chunk_size=CHUNK_SIZE,
        classes=found.classes,
        n_features=found.n_features,
        zero_based=found.zero_based,
        progress=progress,
    )
    bar.close()
    return report, curve


averaged = AveragedPerceptron(shuffle=False)
averaged_report, averaged_curve = stream(averaged, "averaged")
vanilla = Perceptron(shuffle=False)
vanilla_report, vanilla_curve = stream(vanilla, "perceptron")

# %%
# The same model in memory
# ------------------------
# :func:`perceptrons.io.formats.read_data` reads the whole file into one CSR matrix.
# With the file order kept and one epoch, ``fit`` makes the same updates as the stream,
# so the coefficients are equal bit for bit, and so are the mistake counts. The plain
# perceptron makes the same mistakes too: averaging changes the weights that predict,
# not the updates. More epochs over shuffled data, easy once the data is in memory,
# buy a little more accuracy.

whole = read_data(path)
in_memory = AveragedPerceptron(max_epochs=1, shuffle=False).fit(whole.X, whole.y)
assert np.array_equal(in_memory.coef_, averaged.coef_)
assert np.array_equal(in_memory.intercept_, averaged.intercept_)
assert in_memory.history_[0]["mistakes"] == averaged_report.epochs[0]["mistakes"]
assert vanilla_report.epochs[0]["mistakes"] == averaged_report.epochs[0]["mistakes"]
shuffled = AveragedPerceptron(max_epochs=5, random_state=0).fit(whole.X, whole.y)

rows = [
    ("streamed AveragedPerceptron", 1, averaged_report.epochs[0]["mistakes"], averaged),
    ("streamed Perceptron", 1, vanilla_report.epochs[0]["mistakes"], vanilla),
    ("in-memory fit, file order", 1, in_memory.history_[0]["mistakes"], in_memory),
    ("in-memory fit, shuffled", 5, shuffled.history_[-1]["mistakes"], shuffled),
]
print(f"{'model':<28} {'passes':>6} {'mistakes, last pass':>19} {'held-out accuracy':>17}")
for name, passes, mistakes, model in rows:
    print(f"{name:<28} {passes:>6} {mistakes:>19,} {model.score(X_test, y_test):>17.4f}")
print("\nstreamed and in-memory AveragedPerceptron: the same coef_ and intercept_, bit for bit")

# Averaging smooths the stream: the averaged model ends well above the last weights,
# and its accuracy falls back less often and by less than theirs.
assert averaged_curve["accuracy"][-1] > vanilla_curve["accuracy"][-1] + 0.01
drops = {
    name: -np.minimum(np.diff(curve["accuracy"]), 0).sum()
    for name, curve in (("averaged", averaged_curve), ("vanilla", vanilla_curve))
}
assert drops["averaged"] < drops["vanilla"]
assert averaged_curve["accuracy"][-1] > 0.85

# %%
# The figure
# ----------
# On the left, the held-out accuracy after each chunk of 10,000 lines. On the right,
# the examples trained against the seconds spent, scoring left out: ``partial_fit`` on
# each chunk plus any wait for the reader thread (the first chunk waits while the reader
# parses it). A straight line means that a chunk costs no more as the model sees more
# data; its slope is the throughput that the progress bar shows. Times depend on the
# machine and its load, so the example plots them but asserts nothing about them.

fig, (ax_accuracy, ax_speed) = plt.subplots(1, 2, figsize=(10, 4))
for curve, label in ((averaged_curve, "AveragedPerceptron"), (vanilla_curve, "Perceptron")):
    ax_accuracy.plot(curve["examples"], curve["accuracy"], marker=".", label=label)
    ax_speed.plot([0, *curve["seconds"]], [0, *curve["examples"]], marker=".", label=label)
ax_accuracy.set(
    xlabel="examples streamed",
    ylabel="held-out accuracy",
    title="Accuracy after each chunk, one pass",
)
ax_accuracy.legend()
ax_speed.set(
    xlabel="seconds of streaming (scoring left out)",
    ylabel="examples trained",
    title="Progress of the stream (this machine)",
    xlim=(0, None),
    ylim=(0, None),
)
ax_speed.legend()
fig.tight_layout()

workdir.cleanup()
if __name__ == "__main__" and len(sys.argv) > 1:
    fig.savefig(sys.argv[1])
