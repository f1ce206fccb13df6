"""
Kernel voted perceptrons: decision regions on three 2-D problems
================================================================

The perceptron only ever adds and subtracts training examples, so its weight vector is
a signed sum of the examples it got wrong, :math:`w = \\sum_j y_j x_j`, and its score on a
point is a sum of inner products, :math:`w \\cdot x = \\sum_j y_j \\langle x_j, x \\rangle`.
Replacing the inner product by a kernel :math:`k(x_j, x)` trains the same algorithm in
the kernel's feature space without ever forming it. Y. Freund and R. E. Schapire, "Large
margin classification using the perceptron algorithm" (Machine Learning
37(3):277-296, 1999), ran their voted perceptron this way, with polynomial kernels.

:class:`perceptrons.VotedPerceptron` takes ``kernel="linear"``, ``"poly"``
(:math:`(\\gamma \\langle x, x' \\rangle + c_0)^d`, parameters ``gamma``, ``coef0`` and
``degree``), ``"rbf"`` (:math:`\\exp(-\\gamma \\lVert x - x' \\rVert^2)`), a callable, or
``"precomputed"``. With the default ``gamma="scale"``, :math:`\\gamma` is
``1 / (n_features * X.var())`` of the training data. It stores each example that caused an
update once (the support vectors) and its predictions combine every intermediate model
(``prediction="vote"`` by default).

This example fits a linear, a cubic polynomial and a Gaussian (RBF) kernel to three
classic problems that no straight line separates: two interleaved half moons, two
concentric circles, and XOR (the label is the sign of :math:`x_1 x_2`), and draws the
decision regions each one learns.
"""

import sys

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_circles, make_moons
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from perceptrons import VotedPerceptron


def make_xor(n_samples: int, random_state: int) -> tuple[np.ndarray, np.ndarray]:
    """Points uniform in the square [-1, 1]², labelled 1 where x1 * x2 > 0, else 0."""
    X = np.random.RandomState(random_state).uniform(-1, 1, size=(n_samples, 2))
    return X, (X[:, 0] * X[:, 1] > 0).astype(int)


problems = {
    "moons": make_moons(400, noise=0.15, random_state=0),
    "circles": make_circles(400, noise=0.08, factor=0.5, random_state=0),
    "XOR": make_xor(400, random_state=0),
}
kernels = {
    "linear": {"kernel": "linear"},
    "poly, degree 3": {"kernel": "poly", "degree": 3},
    "RBF": {"kernel": "rbf"},
}

# %%
# Training
# --------
# Each problem's 400 points are standardized, then split in half: 200 to train on, 200 to
# test. Every model runs 10 epochs over its training half, each in a fresh random order
# drawn from ``random_state``. The table gives the accuracy on both halves and the number of
# support vectors (training examples that caused at least one update).
print(f"{'problem':<8} {'kernel':<15} {'train acc':>9} {'test acc':>8} {'support':>7}")
fitted, accuracy = {}, {}
for problem, (X, y) in problems.items():
    X = StandardScaler().fit_transform(X)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.5, stratify=y, random_state=0
    )
    for kernel, params in kernels.items():
        model = VotedPerceptron(max_epochs=10, random_state=0, **params).fit(X_train, y_train)
        train, test = model.score(X_train, y_train), model.score(X_test, y_test)
        fitted[problem, kernel] = model, X_train, y_train
        accuracy[problem, kernel] = train, test
        n_support = model.support_vectors_.shape[0]
        print(f"{problem:<8} {kernel:<15} {train:>9.3f} {test:>8.3f} {n_support:>7}")

# A nonlinear kernel fits every one of these problems far better than the linear one.
for problem in problems:
    linear_train, linear_test = accuracy[problem, "linear"]
    for kernel in ("poly, degree 3", "RBF"):
        train, test = accuracy[problem, kernel]
        assert train > linear_train + 0.1 and test > linear_test
        assert train > 0.9 and test > 0.9

# %%
# Decision regions
# ----------------
# Each panel colours the plane by the class the model predicts and shows its training
# points, with the training accuracy in the title. The linear kernel's panels are not
# straight lines everywhere: under ``prediction="vote"`` every intermediate linear model
# votes, and a majority of several half-planes is not itself a half-plane (with
# ``prediction="average"`` or ``"last"`` the linear kernel gives one straight boundary).
# The polynomial and RBF kernels follow the shape of each problem.
fig, axes = plt.subplots(len(problems), len(kernels), figsize=(10, 10), sharex="row", sharey="row")
for row, problem in enumerate(problems):
    for column, kernel in enumerate(kernels):
        model, X_train, y_train = fitted[problem, kernel]
        ax = axes[row, column]
        low, high = X_train.min(axis=0) - 0.5, X_train.max(axis=0) + 0.5
        grid_x, grid_y = np.meshgrid(
            np.linspace(low[0], high[0], 120), np.linspace(low[1], high[1], 120)
        )
        regions = model.predict(np.column_stack([grid_x.ravel(), grid_y.ravel()]))
        ax.contourf(
            grid_x, grid_y, regions.reshape(grid_x.shape), levels=1, cmap="coolwarm", alpha=0.3
        )
        for label, color in zip(model.classes_, ("tab:blue", "tab:red"), strict=True):
            mine = y_train == label
            ax.scatter(
                *X_train[mine].T,
                s=12,
                color=color,
                edgecolor="k",
                linewidth=0.3,
                label=f"class {label}",
            )
        ax.set_title(
            f"{problem}, {kernel}: train acc {accuracy[problem, kernel][0]:.2f}", fontsize=10
        )
        ax.set(
            xlabel="$x_1$ (standardized)" if row == len(problems) - 1 else "",
            ylabel="$x_2$ (standardized)" if column == 0 else "",
        )
axes[0, 0].legend(loc="lower left", fontsize=8)
fig.suptitle("VotedPerceptron decision regions (prediction='vote', 10 epochs)")
fig.tight_layout()

if __name__ == "__main__" and len(sys.argv) > 1:
    fig.savefig(sys.argv[1])
