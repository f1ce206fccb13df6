"""
The cost table of the averaged and voted perceptrons, on real and synthetic data
================================================================================

Freund & Schapire (1999) vote or average every intermediate model of the perceptron;
Daumé (2006) computes the average with one auxiliary vector. Between them lie seven
ways of training that give the same model at very different costs
(:mod:`perceptrons.complexity`). This script trains all seven:

1. on scikit-learn's digits (10 classes, 64 features): the same averaged model from
   every averaged strategy, the same vote from both voted ones, and what each stores;
2. on sparse synthetic data (10 nonzero features per example), with the dimension
   ``d`` multiplied by 16: how each strategy's time and storage grow with ``d``, beside
   the table's prediction, in a table and on log-log axes, where a cost proportional to
   ``d`` is a line of slope 1 and a cost that does not depend on ``d`` is flat.
   ``benchmarks/bench_complexity.py`` measures all three factors (``d``, ``T|D|``,
   ``U``) and fits the exponents.
"""

import sys

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_digits

from perceptrons.complexity import COST_TABLE, STRATEGIES, train_strategy

# --- 1. one model, seven costs -------------------------------------------------------
X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = X[:1200], X[1200:], y[:1200], y[1200:]
for strategy in STRATEGIES:  # compile (or load) the kernels first: not timed below
    train_strategy(strategy, X_train[:50], y_train[:50], max_epochs=1)
fits = {s: train_strategy(s, X_train, y_train, max_epochs=5, random_state=0) for s in STRATEGIES}
# The fastest of three trainings: a single one times the machine's noise as well.
seconds = {
    s: min(
        train_strategy(s, X_train, y_train, max_epochs=5, random_state=0).train_seconds
        for _ in range(3)
    )
    for s in STRATEGIES
}
U = fits["vanilla"].n_updates
print(f"digits: T|D| = 5 x {len(y_train)} = {5 * len(y_train)} examples, U = {U} updates\n")
print(f"{'strategy':<18} {'space':<13} {'time':<13} {'stored KiB':>10} {'ms':>7} {'test acc':>8}")
for name, fit in fits.items():
    space, time = COST_TABLE[name]
    accuracy = np.mean(fit.predict(X_test) == y_test)
    print(
        f"{name:<18} {space:<13} {time:<13} {fit.stored_bytes / 1024:>10.0f} "
        f"{seconds[name] * 1e3:>7.2f} {accuracy:>8.3f}"
    )
averaged = [fits[s].coef_ for s in STRATEGIES if s.startswith("averaged")]
assert all(np.allclose(c, averaged[0], rtol=1e-9, atol=1e-9) for c in averaged)
naive, improved = fits["voted_naive"], fits["voted_improved"]
assert np.array_equal(naive.predict(X_test), improved.predict(X_test))
assert naive.storage["models"].shape[0] == 5 * len(y_train)  # a model per example
assert improved.storage["models"].shape[0] == U + 1  # a model per update, and v_0
print("\nevery averaged strategy: the same mean; both voted ones: the same vote\n")


# --- 2. growth with the dimension ----------------------------------------------------
def sparse_problem(d: int, n: int = 2000, nnz: int = 10) -> tuple[sp.csr_matrix, np.ndarray]:
    """``n`` rows of ``nnz`` distinct features among ``d``, random labels."""
    rng = np.random.RandomState(0)
    indices = np.concatenate([rng.choice(d, nnz, replace=False) for _ in range(n)])
    indptr = np.arange(0, nnz * (n + 1), nnz)
    X = sp.csr_matrix((np.ones(indices.size), indices, indptr), shape=(n, d))
    return X, rng.randint(2, size=n)


def best_time(strategy: str, X: sp.csr_matrix, y: np.ndarray) -> tuple[float, int]:
    """The fastest of five trainings (one is noise at these sub-millisecond sizes)."""
    runs = [train_strategy(strategy, X, y, max_epochs=1, random_state=0) for _ in range(5)]
    return min(r.train_seconds for r in runs), runs[0].stored_bytes


DIMENSIONS = (1024, 16384)
small, large = (sparse_problem(d) for d in DIMENSIONS)
print("sparse data, 2000 examples, 1 epoch, random labels; d from 1024 to 16384 (x16):\n")
print(f"{'strategy':<18} {'time x':>7} {'space x':>8}   table (space, time)")
measured = {}  # strategy -> ((seconds at each d), (stored bytes at each d))
for name in STRATEGIES:
    (t_small, b_small), (t_large, b_large) = best_time(name, *small), best_time(name, *large)
    measured[name] = ((t_small, t_large), (b_small, b_large))
    space, time = COST_TABLE[name]
    print(f"{name:<18} {t_large / t_small:>7.1f} {b_large / b_small:>8.1f}   {space}, {time}")
print(
    "\nStorage in d: x16 for every O(d) or O(U d) term, about x1 for the Δw list (its U nnz "
    "term dominates). Time: the O(T|D| d) and O(U d) strategies grow with d; the others "
    "hardly do (their cost is the updates and the scoring of every example)."
)

# %%
# The same measurements on log-log axes. Each line joins a strategy's two points: a
# line parallel to the dotted one grows in proportion to ``d``, and a flat line does
# not grow with ``d``. Strategies that store the same arrays share a line on the right.
# Times are the fastest of five runs on this machine: small ones are noisy, and they
# are only plotted, never asserted.
fig, (ax_time, ax_space) = plt.subplots(1, 2, figsize=(11, 4.5))
for name in STRATEGIES:
    seconds, stored = measured[name]
    style = "--" if name.startswith("voted") else "-"
    ax_time.plot(DIMENSIONS, seconds, style, marker="o", label=name)
    ax_space.plot(DIMENSIONS, stored, style, marker="o")
for ax, values in ((ax_time, 0), (ax_space, 1)):
    lowest = min(measured[name][values][0] for name in STRATEGIES)
    reference = "∝ d (slope 1)" if ax is ax_time else None
    ax.plot(DIMENSIONS, [lowest / 2, lowest / 2 * 16], ":", color="gray", label=reference)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(DIMENSIONS, [f"{d:,}" for d in DIMENSIONS])
    ax.set_xlabel("dimension d (sparse data, 2000 examples, 1 epoch)")
ax_time.set(ylabel="training time (s, fastest of 5)", title="Time against d")
ax_space.set(ylabel="stored bytes", title="Storage against d")
fig.legend(loc="center right", fontsize=8)
fig.tight_layout(rect=(0, 0, 0.84, 1))

if __name__ == "__main__" and len(sys.argv) > 1:
    fig.savefig(sys.argv[1])
