"""
The perceptron mistake bound as the margin shrinks
==================================================

The perceptron convergence theorem (H. D. Block, "The perceptron: a model for brain
functioning", Reviews of Modern Physics 34(1), 1962; A. B. J. Novikoff, "On convergence
proofs on perceptrons", Symposium on the Mathematical Theory of Automata, 1962): if every
example has norm :math:`\\lVert x \\rVert \\le R` and some unit vector :math:`u` separates
the examples with margin :math:`\\gamma`, that is :math:`y\\, u \\cdot x \\ge \\gamma > 0`
for every example, then the perceptron makes at most :math:`(R/\\gamma)^2` mistakes,
whatever the order of the examples, the number of epochs, the number of examples or the
dimension. Each mistake raises :math:`w \\cdot u` by at least :math:`\\gamma` and
:math:`\\lVert w \\rVert^2` by at most :math:`R^2`, so after :math:`k` mistakes
:math:`k \\gamma \\le \\lVert w \\rVert \\le \\sqrt{k} R`.

:func:`perceptrons.diagnostics.mistake_bound` measures :math:`R` and :math:`\\gamma` on a
binary data set, evaluates the bound, and trains :class:`perceptrons.Perceptron` on the
examples in the order given, epoch after epoch until an epoch without a mistake (or
``max_epochs``), counting its mistakes. This example builds data whose margin it
controls and shrinks that margin, to watch the bound and the real mistake count grow
together.
"""

import sys

import matplotlib.pyplot as plt
import numpy as np

from perceptrons.diagnostics import mistake_bound

N_SAMPLES, N_FEATURES, N_ORDERS = 1000, 20, 5


def separable_data(
    gamma: float, rng: np.random.RandomState
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Points on the unit sphere (so R = 1), separated by u = e_1 with margin exactly gamma.

    The first coordinate is ``y * m`` with ``m`` in ``[gamma, 1]``, most of them close to
    ``gamma`` (``m = gamma + (1 - gamma) U**3``, ``U`` uniform), and one exactly
    ``gamma``; the other coordinates point in a random direction, scaled so that
    ``||x|| = 1``.
    """
    y = rng.choice([-1, 1], size=N_SAMPLES)
    m = gamma + (1.0 - gamma) * rng.uniform(size=N_SAMPLES) ** 3
    m[0] = gamma
    rest = rng.standard_normal((N_SAMPLES, N_FEATURES - 1))
    rest *= (np.sqrt(1.0 - m**2) / np.linalg.norm(rest, axis=1))[:, np.newaxis]
    u = np.zeros(N_FEATURES)
    u[0] = 1.0
    return np.column_stack([y * m, rest]), y, u


# %%
# Mistakes against the bound
# --------------------------
# For each margin :math:`\gamma` the script draws 1,000 examples in 20 dimensions. It
# passes the separator ``u`` it built them with (``separator=u``), so the reported
# :math:`\gamma` is the one it controls; without ``separator=``, ``mistake_bound``
# finds a large-margin separator itself with a linear SVM (``LinearSVC``'s solver). The
# examples have no intercept (``fit_intercept=False``), so :math:`R` is exactly 1.
#
# The bound holds for every order of the examples, so the perceptron is run on five random
# orders, each until it separates the data; the table gives the fewest and the most
# mistakes.
gammas = np.array([0.02, 0.03, 0.05, 0.08, 0.12, 0.2, 0.3, 0.5])
bounds, fewest, most = [], [], []
print(f"{'gamma':>6} {'R':>5} {'bound':>8} {'mistakes (5 orders)':>20} {'most/bound':>10}")
for gamma in gammas:
    X, y, u = separable_data(gamma, np.random.RandomState(0))
    mistakes = []
    for seed in range(N_ORDERS):
        order = np.random.RandomState(seed).permutation(N_SAMPLES)
        report = mistake_bound(
            X[order], y[order], separator=u, fit_intercept=False, max_epochs=1000
        )
        assert report.converged  # an epoch without a mistake: the data are separated
        assert report.mistakes <= report.bound  # the theorem
        mistakes.append(report.mistakes)
    bounds.append(report.bound)
    fewest.append(min(mistakes))
    most.append(max(mistakes))
    span = f"{min(mistakes)} to {max(mistakes)}"
    print(
        f"{report.gamma:>6.3f} {report.R:>5.2f} {report.bound:>8.1f} {span:>20} "
        f"{max(mistakes) / report.bound:>10.2f}"
    )
bounds, fewest, most = np.array(bounds), np.array(fewest), np.array(most)
assert np.all(most <= bounds)

# How fast do the mistakes grow? The slope of log(mistakes) against log(gamma): the
# bound's is -2.
slope = np.polyfit(np.log(gammas), np.log(most), 1)[0]
print(f"\nslope of log(most mistakes) against log(gamma): {slope:.2f} (the bound's: -2)")
assert -2.5 < slope < -1.2

# %%
# The picture
# -----------
# On log-log axes the bound :math:`(R/\gamma)^2` is a straight line of slope -2. The
# real mistake counts stay below it at every margin, and grow almost as fast as it as
# the margin shrinks (the fitted slope printed above is not far from -2): most examples
# of these data lie near the margin, in many directions, so the perceptron has to find
# the separator's direction accurately. On easier data (fewer examples near the margin,
# fewer dimensions) the gap is wider: the bound is a worst case over every order and
# every data set with this :math:`R` and :math:`\gamma`.
fig, ax = plt.subplots(figsize=(6.5, 4.5))
ax.loglog(gammas, bounds, "k--", label=r"bound $(R/\gamma)^2$")
ax.fill_between(gammas, fewest, most, color="tab:blue", alpha=0.25)
ax.loglog(gammas, most, "o-", color="tab:blue", label="mistakes, most of 5 orders")
ax.loglog(gammas, fewest, "s:", color="tab:blue", markersize=4, label="mistakes, fewest")
ax.set(
    xlabel=r"margin $\gamma$ (R = 1)",
    ylabel="mistakes until convergence",
    title="Perceptron mistakes against the mistake bound",
)
ax.set_xticks(gammas, labels=[f"{gamma:g}" for gamma in gammas])
ax.minorticks_off()
ax.grid(alpha=0.3)
ax.legend()
fig.tight_layout()

if __name__ == "__main__" and len(sys.argv) > 1:
    fig.savefig(sys.argv[1])
