"""
Imbalanced classes: what ``class_weight`` buys
==============================================

A w8a-like problem (LIBSVM's w8a: 300 sparse binary features, about 3 % positive
examples). A perceptron that only counts mistakes learns that predicting the majority
class is almost always right, so it finds few positives. Weighting the rare class
(``class_weight``, or per-example ``sample_weight``) multiplies its updates, and in the
averaged perceptron makes each of its examples count that many times in the average:
recall on the rare class goes up and precision down. ``class_weight="balanced"`` weighs
each class by ``n_samples / (n_classes * count)``, here about 16 for the positives.

The table shows the trade for a sweep of positive-class weights; the figure (when
matplotlib is installed) plots it.
"""

import sys

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import f1_score, precision_score, recall_score

from perceptrons import AveragedPerceptron


def w8a_like(n_samples: int, rng: np.random.RandomState) -> tuple[sp.csr_matrix, np.ndarray]:
    """Sparse binary features, about 12 active of 300, 3 % positives from a noisy rule."""
    n_features = 300
    X = sp.random(n_samples, n_features, density=0.04, format="csr", random_state=rng)
    X.data[:] = 1.0
    w = rng.standard_normal(n_features)
    scores = X @ w + 0.5 * rng.standard_normal(n_samples)
    y = np.where(scores > np.quantile(scores, 0.97), 1, -1)
    return X, y


X, y = w8a_like(30_000, np.random.RandomState(0))
X_train, X_test, y_train, y_test = X[:20_000], X[20_000:], y[:20_000], y[20_000:]
print(f"positives: {np.mean(y_train == 1):.1%} of {len(y_train):,} training examples\n")

settings = [("none", None)] + [(f"{{1: {k}}}", {1: k}) for k in (2, 5, 10)]
settings.append(("'balanced'", "balanced"))
rows = []
print(f"{'class_weight':<14} {'precision':>9} {'recall':>7} {'F1':>6}")
for name, class_weight in settings:
    model = AveragedPerceptron(class_weight=class_weight, random_state=0)
    predicted = model.fit(X_train, y_train).predict(X_test)
    row = (
        precision_score(y_test, predicted, zero_division=0),
        recall_score(y_test, predicted),
        f1_score(y_test, predicted),
    )
    rows.append(row)
    print(f"{name:<14} {row[0]:>9.3f} {row[1]:>7.3f} {row[2]:>6.3f}")

# class_weight is exactly a per-example sample_weight of the class's weight.
weights = np.where(y_train == 1, 5.0, 1.0)
by_sample = AveragedPerceptron(random_state=0).fit(X_train, y_train, sample_weight=weights)
by_class = AveragedPerceptron(class_weight={1: 5}, random_state=0).fit(X_train, y_train)
assert np.array_equal(by_sample.coef_, by_class.coef_)

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:  # the plotting extra is optional
    sys.exit(0)
figure, axes = plt.subplots(figsize=(5, 4))
precision, recall, _ = np.array(rows).T
axes.plot(recall, precision, "o-")
for (name, _), x, y in zip(settings, recall, precision, strict=True):
    axes.annotate(name, (x, y), textcoords="offset points", xytext=(5, 5), fontsize=8)
axes.set(xlabel="recall of the rare class", ylabel="precision", title="class_weight trade")
figure.tight_layout()
if __name__ == "__main__" and len(sys.argv) > 1:
    figure.savefig(sys.argv[1])
