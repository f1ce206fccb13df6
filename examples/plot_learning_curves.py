"""
Learning curves: the vanilla perceptron is unstable, averaging and voting are not
==================================================================================

The vanilla perceptron keeps only its last weight vector. Every update moves that vector
towards the example it just got wrong, which can break examples it used to get right,
so the model it ends with depends heavily on the last few examples of its sequence. Its
error on unseen data therefore jumps up and down as training goes on, and whether the
model it returns after the final example is one of its good ones is partly luck.

Y. Freund and R. E. Schapire, "Large margin classification using the perceptron
algorithm" (Machine Learning 37(3):277-296, 1999), showed how to use *all* the
intermediate weight vectors instead. The **voted perceptron** lets each of them vote for
its prediction with a weight equal to the number of examples it survived; the
**averaged perceptron** predicts with the mean of the weight vectors after every example,
which is the same survival-weighted combination taken on the scores instead of the votes.
A vector that was replaced after one example then counts for one example, and a vector that
survived hundreds of examples counts for hundreds.

This example trains :class:`perceptrons.Perceptron`,
:class:`perceptrons.AveragedPerceptron` and :class:`perceptrons.VotedPerceptron` on
scikit-learn's handwritten digits (10 classes, native multiclass updates), feeding the
same stream of training examples to all three in chunks of 50 with ``partial_fit``, and
measures the test error after every chunk, over four epochs.
"""

import sys

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from perceptrons import AveragedPerceptron, Perceptron, VotedPerceptron

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, train_size=1000, stratify=y, random_state=0
)
classes = np.unique(y)

# %%
# One stream for all three models
# -------------------------------
# The script draws a fresh random order of the training set for every epoch and cuts it
# into chunks of 50 examples. ``shuffle=False`` makes every model process each chunk in
# the order given, so all three see exactly the same examples in the same order and make
# exactly the same updates: they differ only in how they predict.
#
# Each ``partial_fit`` call is one pass over its chunk, and it continues from where the
# previous call stopped. The vanilla and averaged perceptrons are scored on the test set
# after each call. The voted perceptron keeps its whole update sequence, and its
# ``staged_predict`` gives its predictions after each ``partial_fit`` call, from one
# computation of the kernel (here the plain inner product) between the test points and
# the support vectors.
CHUNK, EPOCHS = 50, 4
vanilla = Perceptron(shuffle=False)
averaged = AveragedPerceptron(shuffle=False)
voted = VotedPerceptron(shuffle=False)

rng = np.random.RandomState(0)
seen, errors = [], {"vanilla": [], "averaged": []}
for _ in range(EPOCHS):
    order = rng.permutation(len(y_train))
    for start in range(0, len(order), CHUNK):
        rows = order[start : start + CHUNK]
        for name, model in (("vanilla", vanilla), ("averaged", averaged)):
            model.partial_fit(X_train[rows], y_train[rows], classes=classes)
            errors[name].append(np.mean(model.predict(X_test) != y_test))
        voted.partial_fit(X_train[rows], y_train[rows], classes=classes)
        seen.append((seen[-1] if seen else 0) + len(rows))
errors["voted"] = [np.mean(predicted != y_test) for predicted in voted.staged_predict(X_test)]
seen = np.array(seen)
errors = {name: np.array(curve) for name, curve in errors.items()}

# %%
# The same updates, three predictions
# -----------------------------------
# ``VotedPerceptron(prediction="last")`` predicts with the final model of its update
# sequence, which is the vanilla perceptron: its curve is the vanilla one, point for
# point, because both made the same updates (the digits' pixel values are small integers,
# so every score is computed exactly by both).
voted.set_params(prediction="last")
last = np.array([np.mean(predicted != y_test) for predicted in voted.staged_predict(X_test)])
voted.set_params(prediction="vote")
assert np.array_equal(last, errors["vanilla"])

# %%
# How much does the test error move?
# ----------------------------------
# Over the first epoch every model improves quickly. From the second epoch on, the table
# gives the mean and the largest change of the test error between two consecutive
# checkpoints (50 training examples apart), the spread (standard deviation) of the test
# error, and its worst and final values.
after_first = seen > len(y_train)
print(f"{len(y_train)} training and {len(y_test)} test examples, checkpoints every {CHUNK}")
print(f"voted perceptron: {voted.n_updates_} updates over {EPOCHS} epochs\n")
print(
    f"{'model':<10} {'mean |change|':>13} {'max |change|':>12} {'std':>6} {'worst':>6} {'final':>6}"
)
jumps = {}
for name, curve in errors.items():
    late = curve[after_first]
    jumps[name] = np.abs(np.diff(late))
    print(
        f"{name:<10} {jumps[name].mean():>13.2%} {jumps[name].max():>12.2%} "
        f"{late.std():>6.2%} {late.max():>6.2%} {curve[-1]:>6.2%}"
    )

# The vanilla perceptron's error moves several times more between checkpoints than the
# averaged or voted perceptron's (here more than 20 times; 5 leaves a wide margin).
for stable in ("averaged", "voted"):
    assert jumps["vanilla"].mean() > 5 * jumps[stable].mean()
    assert errors["vanilla"][after_first].std() > 2 * errors[stable][after_first].std()

# %%
# The curves
# ----------
# The dotted lines mark the ends of the epochs. The vanilla perceptron's test error jumps
# from one chunk to the next for as long as training lasts, while the averaged and voted
# perceptrons, which give each intermediate model the weight of its survival time, settle
# and stay settled.
fig, ax = plt.subplots(figsize=(8, 4.5))
styles = {"vanilla": ("tab:red", 1.2), "averaged": ("tab:blue", 2.0), "voted": ("tab:green", 2.0)}
for name, curve in errors.items():
    color, width = styles[name]
    ax.plot(seen, 100 * curve, color=color, linewidth=width, label=f"{name} perceptron")
for epoch in range(1, EPOCHS):
    ax.axvline(epoch * len(y_train), color="gray", linestyle=":", linewidth=1)
ax.set(
    xlabel="training examples seen",
    ylabel="test error (%)",
    title="Digits: test error during training, one point every 50 examples",
    ylim=(0, None),
)
ax.grid(alpha=0.3)
ax.legend()
fig.tight_layout()

if __name__ == "__main__" and len(sys.argv) > 1:
    fig.savefig(sys.argv[1])
