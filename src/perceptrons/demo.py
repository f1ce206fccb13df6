"""``perceptrons demo``: the perceptrons and their linear cousins on bundled data.

No arguments, no network, no data files: trains the vanilla perceptron, the voted and
averaged perceptrons (Freund & Schapire, "Large margin classification using the
perceptron algorithm", 1999; averaging as in Collins, 2002, with Daumé's 2006
auxiliary-vector trick), the passive-aggressive update (Crammer et al., "Online
passive-aggressive algorithms", 2006), logistic regression trained by SGD and
multinomial naive Bayes and, as a yardstick, scikit-learn's ``Perceptron`` and averaged
``SGDClassifier``, on the handwritten digits and the breast-cancer sets; prints accuracy
and fit time; draws the learning curves (training mistakes and test error per epoch) of
the three perceptrons on the digits, where the vanilla perceptron's instability shows.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron as SkPerceptron
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from perceptrons import (
    AveragedPerceptron,
    LogisticRegressionSGD,
    MultinomialNaiveBayes,
    Perceptron,
    VotedPerceptron,
)

#: The ``random_state`` of each run: accuracy is averaged over these shuffled orders.
RANDOM_STATES = range(5)


def _datasets():
    """Train/test splits (70/30, stratified); features scaled on the training part.

    Each split also carries the raw, non-negative features, for multinomial naive Bayes.
    """
    for name, loader in (("digits", load_digits), ("breast cancer", load_breast_cancer)):
        X, y = loader(return_X_y=True)
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.3, random_state=0, stratify=y
        )
        scaler = StandardScaler().fit(X_train)
        scaled = (scaler.transform(X_train), scaler.transform(X_test))
        yield name, *scaled, y_train, y_test, (X_train, X_test)


# Models that read the raw counts rather than the standardized features.
_RAW_COUNTS = {"MultinomialNaiveBayes"}


def _models(epochs: int) -> dict[str, Callable[[int], Any]]:
    return {
        "Perceptron": lambda state: Perceptron(max_epochs=epochs, random_state=state),
        "AveragedPerceptron": lambda state: AveragedPerceptron(
            max_epochs=epochs, random_state=state
        ),
        "VotedPerceptron": lambda state: VotedPerceptron(max_epochs=epochs, random_state=state),
        "VotedPerceptron (poly 2)": lambda state: VotedPerceptron(
            kernel="poly", degree=2, max_epochs=epochs, random_state=state
        ),
        "Perceptron (PA-I)": lambda state: Perceptron(
            update="pa-i", C=0.1, max_epochs=epochs, random_state=state
        ),
        "LogisticRegressionSGD": lambda state: LogisticRegressionSGD(
            learning_rate=0.01, average=True, max_epochs=epochs, random_state=state
        ),
        "MultinomialNaiveBayes": lambda state: MultinomialNaiveBayes(),
        "sklearn Perceptron": lambda state: SkPerceptron(
            max_iter=epochs, tol=None, random_state=state
        ),
        "sklearn SGD (averaged)": lambda state: SGDClassifier(
            loss="perceptron",
            learning_rate="constant",
            eta0=1.0,
            penalty=None,
            average=True,
            max_iter=epochs,
            tol=None,
            random_state=state,
        ),
    }


def run(
    output_dir: Path = Path("."), epochs: int = 10, say: Callable[[str], object] = print
) -> int:
    """Print the comparison table and write the learning-curve PNG; return 0.

    Accuracy is the mean ± standard deviation over 5 shuffled orders of the training
    data (``random_state`` 0 to 4): the spread shows the vanilla perceptron's
    instability that voting and averaging cure.
    """
    datasets = list(_datasets())
    _warm_up(datasets[0])
    say(f"{'data set':<14} {'model':<27} {'test accuracy':>16} {'fit ms':>8}")
    say("-" * 68)
    for name, X_train, X_test, y_train, y_test, raw in datasets:
        for label, make in _models(epochs).items():
            train, test = raw if label in _RAW_COUNTS else (X_train, X_test)
            accuracies, seconds = [], []
            for random_state in RANDOM_STATES:
                model = make(random_state)
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    model.fit(train, y_train)
                seconds.append(time.perf_counter() - start)
                accuracies.append(model.score(test, y_test))
            accuracy = f"{np.mean(accuracies):.4f} ± {np.std(accuracies):.4f}"
            say(f"{name:<14} {label:<27} {accuracy:>16} {1e3 * np.median(seconds):>8.1f}")
    say(
        f"\n(accuracy: mean ± sd over {len(RANDOM_STATES)} shuffled orders of the training "
        f"data, {epochs} epochs)"
    )
    _learning_curves(datasets[0], epochs, Path(output_dir), say)
    return 0


def _warm_up(dataset) -> None:
    """Compile the kernels once, so that fit times measure training, not Numba."""
    _, X_train, _, y_train, _, _ = dataset
    warm: tuple[Any, ...] = (Perceptron(max_epochs=1), AveragedPerceptron(max_epochs=1))
    warm += (Perceptron(max_epochs=1, update="pa-i"), LogisticRegressionSGD(max_epochs=1))
    for model in warm:
        model.fit(X_train[:60], y_train[:60])
    for kernel in ("linear", "poly"):
        VotedPerceptron(kernel=kernel, max_epochs=1).fit(X_train[:60], y_train[:60]).predict(
            X_train[:5]
        )


def _learning_curves(dataset, epochs: int, output_dir: Path, say) -> None:
    from perceptrons import plots

    name, X_train, X_test, y_train, y_test, _ = dataset
    curves = {}
    for label, model in (
        ("vanilla", Perceptron(max_epochs=epochs, random_state=0)),
        ("averaged", AveragedPerceptron(max_epochs=epochs, random_state=0)),
        ("voted", VotedPerceptron(max_epochs=epochs, random_state=0)),
    ):
        mistakes, errors = [], []
        for record in model.fit_epochs(X_train, y_train):
            mistakes.append(record["mistakes"])
            errors.append(1.0 - model.score(X_test, y_test))
        curves[label] = {"mistakes": mistakes, "dev_error": errors}
    path = output_dir / "perceptrons-demo.png"
    try:
        plots.learning_curves(curves, path, title=f"{name}: vanilla vs averaged vs voted")
    except plots.PlottingUnavailable as missing:
        say(f"\nno learning-curve PNG: {missing}")
        return
    say(f"\nlearning curves (training mistakes, test error per epoch) written to {path}")
