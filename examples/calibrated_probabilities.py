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
with those of :class:`perceptrons.LogisticRegressionSGD` on the same data.
"""

from sklearn.calibration import CalibratedClassifierCV
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
for name, model in models.items():
    model.fit(X_train, y_train)
    proba = model.predict_proba(X_test)
    accuracy = model.score(X_test, y_test)
    print(
        f"{name:<32} {accuracy:>8.3f} {log_loss(y_test, proba):>8.3f} "
        f"{brier_score_loss(y_test, proba[:, 1]):>6.3f}"
    )
    assert proba.shape == (len(y_test), 2)
