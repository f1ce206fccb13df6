"""Vanilla vs averaged perceptron on scikit-learn's bundled handwritten digits.

Runs offline in a few seconds: ``python examples/digits.py``. Prints test accuracy and
fit time for our two perceptrons and, as a yardstick, scikit-learn's ``Perceptron`` and
its averaged ``SGDClassifier``, over several shuffling seeds so that the vanilla
perceptron's instability (seed 000) shows in the spread of its accuracy.
"""

import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron as SkPerceptron
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import train_test_split

from perceptrons import AveragedPerceptron, Perceptron

MODELS = {
    "perceptrons.Perceptron": lambda seed: Perceptron(max_epochs=10, random_state=seed),
    "perceptrons.AveragedPerceptron": lambda seed: AveragedPerceptron(
        max_epochs=10, random_state=seed
    ),
    "sklearn Perceptron": lambda seed: SkPerceptron(max_iter=10, tol=None, random_state=seed),
    "sklearn SGDClassifier (averaged)": lambda seed: SGDClassifier(
        loss="perceptron",
        learning_rate="constant",
        eta0=1,
        penalty=None,
        average=True,
        max_iter=10,
        tol=None,
        random_state=seed,
    ),
}


def main(seeds: range = range(5)) -> dict[str, tuple[float, float, float]]:
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=0, stratify=y
    )
    Perceptron(max_epochs=1).fit(X_train[:50], y_train[:50])  # compile before timing
    AveragedPerceptron(max_epochs=1).fit(X_train[:50], y_train[:50])
    results = {}
    print(f"digits: {len(y_train)} train / {len(y_test)} test, 10 classes, 10 epochs")
    print(f"{'model':<34} {'accuracy (mean ± sd over seeds)':>32} {'fit ms':>8}")
    for name, make in MODELS.items():
        accuracies, times = [], []
        for seed in seeds:
            model = make(seed)
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model.fit(X_train, y_train)
            times.append(time.perf_counter() - start)
            accuracies.append(model.score(X_test, y_test))
        mean, sd, ms = np.mean(accuracies), np.std(accuracies), 1e3 * np.median(times)
        results[name] = (mean, sd, ms)
        print(f"{name:<34} {mean:>24.4f} ± {sd:.4f} {ms:>8.1f}")
    return results


if __name__ == "__main__":
    main()
