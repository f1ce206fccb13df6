"""
Progressive validation in river: our learners next to river's
=============================================================

`river <https://riverml.xyz>`_ learns from a stream one example at a time, an example
being a ``dict`` of features. Its wrapper ``river.compat.convert_sklearn_to_river``
turns a scikit-learn classifier with ``partial_fit`` into a river classifier, so the
online learners of this package run in river pipelines as they are (see the user guide's
:doc:`/user_guide/river`).

This example scores three of them and three of river's own linear models by
progressive validation (Blum, Kalai and Langford, 1999) on river's bundled Phishing
data: 1,250 web pages, 9 features, always in the same order. Each example is predicted
by the model of the examples before it, then learnt. Every learner follows a running
standardisation of the features (river's ``preprocessing.StandardScaler``).

The figure shows the running accuracy. The averaged perceptron
(:class:`perceptrons.AveragedPerceptron`) and logistic regression end about four points
above the plain perceptron, whose last weights move at every mistake. Our
:class:`perceptrons.Perceptron` and river's ``linear_model.Perceptron`` are the same
algorithm from the same zero weights: they make the same prediction on every example.
"""

import sys
import time

import matplotlib.pyplot as plt
import numpy as np
from river import compat, datasets, evaluate, linear_model, metrics, preprocessing

from perceptrons import AveragedPerceptron, LogisticRegressionSGD, Perceptron

# %%
# The learners
# ------------
# Ours go through river's wrapper, which needs every class up front (sorted: river names
# the columns of ``predict_proba`` after them, and ``classes_`` is sorted). Each
# ``learn_one`` is then one ``partial_fit`` call on one row.

STREAM = list(datasets.Phishing())
CLASSES = [False, True]


def ours(estimator):
    return compat.convert_sklearn_to_river(estimator, classes=CLASSES)


learners = {
    "AveragedPerceptron (ours)": ours(AveragedPerceptron()),
    "LogisticRegressionSGD (ours)": ours(LogisticRegressionSGD()),
    "Perceptron (ours)": ours(Perceptron()),
    "linear_model.LogisticRegression (river)": linear_model.LogisticRegression(),
    "linear_model.PAClassifier (river)": linear_model.PAClassifier(),
    "linear_model.Perceptron (river)": linear_model.Perceptron(),
}

# %%
# Progressive validation
# ----------------------
# ``evaluate.iter_progressive_val_score`` yields the running metric every ``step``
# examples, here after each one. The clock covers the whole loop: river's pipeline and
# scaler, the predictions and the updates.

curves, final, seconds = {}, {}, {}
for name, learner in learners.items():
    model = preprocessing.StandardScaler() | learner  # the pipeline trains ``learner``
    accuracy = metrics.Accuracy()
    start = time.perf_counter()
    curves[name] = [
        checkpoint["Accuracy"].get()
        for checkpoint in evaluate.iter_progressive_val_score(STREAM, model, accuracy, step=1)
    ]
    seconds[name] = time.perf_counter() - start
    final[name] = accuracy.get()

print(f"{'learner':<40} {'accuracy':>8} {'seconds':>8} {'µs per example':>15}")
for name in learners:
    per_example = 1e6 * seconds[name] / len(STREAM)
    print(f"{name:<40} {final[name]:>8.2%} {seconds[name]:>8.2f} {per_example:>15,.0f}")

# %%
# The same perceptron
# -------------------
# River's perceptron updates ``w += y x`` and ``b += y`` on a mistake (a score of the
# wrong sign, or zero), from zero weights, as ours does. Fed the same standardised
# stream, the two have the same running accuracy after every example: with two classes,
# they predicted the same label every time. They end with the same weights.

ours_curve = curves["Perceptron (ours)"]
assert ours_curve == curves["linear_model.Perceptron (river)"]
river_weights = learners["linear_model.Perceptron (river)"].weights
our_weights = learners["Perceptron (ours)"].estimator.coef_[0]
assert np.allclose(our_weights, [river_weights[name] for name in STREAM[0][0]])
print(f"\nour Perceptron and river's: the same prediction on all {len(ours_curve):,} examples")

# Averaging and logistic regression beat the last weights of the perceptron.
assert final["AveragedPerceptron (ours)"] > final["Perceptron (ours)"] + 0.02
assert final["LogisticRegressionSGD (ours)"] > final["Perceptron (ours)"] + 0.02
assert final["AveragedPerceptron (ours)"] >= 0.87

# %%
# The figure
# ----------
# The running accuracy is noisy over the first hundred examples, where each one moves it
# by a point or more; the two perceptrons' curves lie on each other. Times depend on the
# machine and its load: the example prints them but asserts nothing about them. River's
# models, plain Python over dictionaries, take tens of microseconds an example, scaler
# included; ours take some thirty times longer, spent in the input checks of each
# ``partial_fit`` and ``predict`` call rather than in the update (see the user guide).

fig, ax = plt.subplots(figsize=(8, 4.5))
for name, curve in curves.items():
    examples = np.arange(1, len(curve) + 1)
    style = "-" if "ours" in name else "--"
    ax.plot(examples, curve, style, label=f"{name}: {final[name]:.1%}")
ax.set(
    xlabel="examples seen",
    ylabel="progressive accuracy",
    title="Phishing (river), standardised, one pass",
    ylim=(0.6, 1.0),
)
ax.legend(fontsize="small", loc="lower right")
fig.tight_layout()

if __name__ == "__main__" and len(sys.argv) > 1:
    fig.savefig(sys.argv[1])
