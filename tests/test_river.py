"""Our estimators in river (https://riverml.xyz) through its scikit-learn wrapper,
``river.compat.convert_sklearn_to_river``, and its progressive validation.

The contract: river's progressive validation of a wrapped estimator is the loop a user
would write by hand -- predict the next example, score the prediction, then
``partial_fit`` on it -- over the same features in the same column order, so its
accuracy and the model it leaves are exactly those of that loop. river is an
integration target of the user guide (docs/user_guide/river.rst), never imported by
the library.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("river", reason="river (an integration target, in the [test] extra) is absent")

from river import compat, compose, datasets, evaluate, metrics, preprocessing

from perceptrons import (
    AveragedPerceptron,
    LogisticRegressionBatch,
    LogisticRegressionSGD,
    Perceptron,
)

#: river's bundled phishing-site data: 1,250 examples of 9 features, a fixed order.
PHISHING = list(datasets.Phishing())
#: river's bundled image segments: 2,310 examples of 18 features, 7 classes; the first
#: 500 keep the test fast and hold every class.
SEGMENTS = list(datasets.ImageSegments())[:500]


def by_hand(estimator: Any, examples: list[tuple[dict, Any]], classes: list, scaled: bool) -> float:
    """Progressive accuracy of ``estimator`` fed one example at a time, predict then
    ``partial_fit``, as river's wrapper would feed it (the columns in the first
    example's order; before the first example, the first class). ``scaled``: through a
    river StandardScaler of its own, updated with an example before training on it, as
    a river pipeline updates it."""
    scaler = preprocessing.StandardScaler() if scaled else None
    columns = list(examples[0][0])
    correct = 0
    for x, y in examples:
        seen = scaler.transform_one(x) if scaler is not None else x
        if hasattr(estimator, "classes_"):
            predicted = estimator.predict([[seen[c] for c in columns]])[0]
        else:
            predicted = classes[0]
        correct += bool(predicted == y)
        if scaler is not None:
            scaler.learn_one(x)
            x = scaler.transform_one(x)
        estimator.partial_fit([[x[c] for c in columns]], [y], classes=classes)
    return correct / len(examples)


def wrapped(estimator: Any, classes: list, scaled: bool) -> Any:
    learner = compat.convert_sklearn_to_river(estimator, classes=classes)
    return preprocessing.StandardScaler() | learner if scaled else learner


def final_estimator(model: Any) -> Any:
    """The scikit-learn estimator river trained (its wrapper holds a deep copy)."""
    return (model[-1] if isinstance(model, compose.Pipeline) else model).estimator


@pytest.mark.parametrize(
    ("scaled", "n_examples"), [(False, 300), (True, len(PHISHING))], ids=["raw", "scaled"]
)
def test_progressive_validation_is_predict_then_partial_fit(scaled: bool, n_examples: int) -> None:
    examples = PHISHING[:n_examples]
    model = wrapped(AveragedPerceptron(), [False, True], scaled)
    accuracy = evaluate.progressive_val_score(examples, model, metrics.Accuracy()).get()
    mine = AveragedPerceptron()
    assert accuracy == by_hand(mine, examples, [False, True], scaled)
    trained = final_estimator(model)
    assert np.array_equal(trained.coef_, mine.coef_)
    assert np.array_equal(trained.intercept_, mine.intercept_)
    if scaled:  # the user guide's figure: 89.0 % (river's own Perceptron: 85.8 %)
        assert accuracy >= 0.87


def test_multiclass_pipeline() -> None:
    classes = sorted({y for _, y in SEGMENTS})
    assert len(classes) == 7
    model = wrapped(AveragedPerceptron(), classes, scaled=True)
    accuracy = evaluate.progressive_val_score(SEGMENTS, model, metrics.Accuracy()).get()
    mine = AveragedPerceptron()
    assert accuracy == by_hand(mine, SEGMENTS, classes, scaled=True)
    assert np.array_equal(final_estimator(model).coef_, mine.coef_)
    assert accuracy >= 0.75  # 78.4 % over these 500 (87.3 % over all 2,310)


def test_probabilities_follow_the_classes() -> None:
    """river's ``predict_proba_one`` names column ``i`` of ``predict_proba`` after
    ``classes[i]``: it is right when ``classes`` is sorted, as ``classes_`` is."""
    classes = sorted({y for _, y in SEGMENTS})
    model = wrapped(LogisticRegressionSGD(), classes, scaled=True)
    loss = evaluate.progressive_val_score(SEGMENTS, model, metrics.CrossEntropy()).get()
    assert 0 < loss < 1
    assert list(final_estimator(model).classes_) == classes
    for x, _ in SEGMENTS[:50]:
        probabilities = model.predict_proba_one(x)
        assert list(probabilities) == classes
        assert sum(probabilities.values()) == pytest.approx(1)
        assert max(probabilities, key=probabilities.get) == model.predict_one(x)


def test_a_learner_without_probabilities() -> None:
    """A perceptron predicts labels, not probabilities: label metrics work, and a metric
    that needs probabilities fails at the first example, naming predict_proba."""
    assert not hasattr(Perceptron(), "predict_proba")
    model = wrapped(Perceptron(), [False, True], scaled=True)
    accuracy = evaluate.progressive_val_score(PHISHING[:300], model, metrics.Accuracy()).get()
    assert accuracy == by_hand(Perceptron(), PHISHING[:300], [False, True], scaled=True)
    assert accuracy >= 0.8
    with pytest.raises(AttributeError, match="predict_proba"):
        model.predict_proba_one(PHISHING[0][0])
    fresh = wrapped(Perceptron(), [False, True], scaled=True)
    with pytest.raises(AttributeError, match="predict_proba"):
        evaluate.progressive_val_score(PHISHING[:10], fresh, metrics.LogLoss())


def test_before_the_first_example() -> None:
    """river falls back on the first class (and even odds) when the estimator raises
    scikit-learn's NotFittedError, as ours do before their first partial_fit."""
    x = PHISHING[0][0]
    assert wrapped(AveragedPerceptron(), [False, True], scaled=True).predict_one(x) is False
    learner = wrapped(LogisticRegressionSGD(), [False, True], scaled=True)
    assert learner.predict_proba_one(x) == {False: 0.5, True: 0.5}


def test_a_batch_learner_is_refused() -> None:
    """LogisticRegressionBatch minimises the loss over the whole training set at once:
    without partial_fit, river's wrapper refuses it."""
    with pytest.raises(ValueError, match="partial_fit"):
        compat.convert_sklearn_to_river(LogisticRegressionBatch(), classes=[False, True])
