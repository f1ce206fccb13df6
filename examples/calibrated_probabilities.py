"""
Probabilities from a perceptron: calibration
============================================

A perceptron's score ``w·x + b`` ranks examples but is not a probability: its scale
grows with every update. The perceptrons therefore have no ``predict_proba``.
scikit-learn's :class:`~sklearn.calibration.CalibratedClassifierCV` fits a map from
scores to probabilities on held-out folds: Platt's sigmoid (``method="sigmoid"``) or
isotonic regression (``method="isotonic"``). Logistic regression and naive Bayes have
their own ``predict_proba``.

The table compares the log-loss and Brier score of the calibrated averaged perceptron
with those of :class:`perceptrons.LogisticRegressionSGD` on the same data. The figure is
a reliability diagram: the test examples are grouped by predicted probability of the
positive class, and for each group the fraction that really is positive is plotted
against the mean predicted probability. Well calibrated probabilities lie on the
diagonal.
"""

import sys

import matplotlib.pyplot as plt
import numpy as np
from sklearn.calibration import CalibratedClassifierCV, calibration_curve
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import brier_score_loss, log_loss
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from perceptrons import AveragedPerceptron, LogisticRegressionSGD

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.4, random_state=0)

models = {
    "averaged perceptron + sigmoid": CalibratedClassifierCV(
        make_pipeline(StandardScaler(), AveragedPerceptron(random_state=0)),
        method="sigmoid",
        cv=5,
    ),
    "averaged perceptron + isotonic": CalibratedClassifierCV(
        make_pipeline(StandardScaler(), AveragedPerceptron(random_state=0)),
        method="isotonic",
        cv=5,
    ),
    "logistic regression (SGD)": make_pipeline(
        StandardScaler(), LogisticRegressionSGD(random_state=0)
    ),
}
print(f"{'model':<32} {'accuracy':>8} {'log-loss':>8} {'Brier':>6}")
probabilities = {}
for name, model in models.items():
    model.fit(X_train, y_train)
    proba = model.predict_proba(X_test)
    probabilities[name] = proba[:, 1]
    accuracy = model.score(X_test, y_test)
    print(
        f"{name:<32} {accuracy:>8.3f} {log_loss(y_test, proba):>8.3f} "
        f"{brier_score_loss(y_test, proba[:, 1]):>6.3f}"
    )
    assert proba.shape == (len(y_test), 2)

# %%
# Reliability diagram
# -------------------
# The test examples are grouped into five bins of predicted probability, each 0.2 wide
# (bins with no example are left out). A point below the diagonal means that the model
# gave those examples too high a probability of being positive, a point above it too low
# a one. The lower panel counts the examples in each bin: most predictions on this data
# set are close to 0 or 1, so the middle bins hold only a few examples each and their
# fractions are noisy (in a bin of ten examples, one example more or less moves the point
# by 0.1).
fig, (ax, counts) = plt.subplots(
    2, 1, figsize=(6, 7), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
)
ax.plot([0, 1], [0, 1], color="gray", linestyle="--", label="perfectly calibrated")
edges = np.linspace(0, 1, 6)
for (name, positive), marker in zip(probabilities.items(), "osD", strict=True):
    fraction, mean_predicted = calibration_curve(y_test, positive, n_bins=5)
    (line,) = ax.plot(mean_predicted, fraction, marker=marker, label=name)
    counts.hist(positive, bins=edges, histtype="step", linewidth=1.5, color=line.get_color())
ax.set(
    ylabel="fraction of positives",
    title=f"Breast cancer: reliability diagram ({len(y_test)} test examples)",
    xlim=(-0.02, 1.02),
    ylim=(-0.02, 1.02),
)
ax.grid(alpha=0.3)
ax.legend(loc="upper left", fontsize=9)
counts.set(
    xlabel="predicted probability of the positive class (above: mean of each bin)",
    ylabel="examples",
    yscale="log",
)
counts.grid(alpha=0.3)
fig.tight_layout()

if __name__ == "__main__" and len(sys.argv) > 1:
    fig.savefig(sys.argv[1])
