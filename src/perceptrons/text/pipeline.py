"""A text featurizer and a classifier as one model, without scikit-learn.

:class:`TextPipeline` is what the command line trains on text, saves and loads: the
two steps of scikit-learn's ``make_pipeline(TextFeaturizer(...), estimator)`` (a model
file holds either; :func:`perceptrons.io.persist.load` gives back a scikit-learn
``Pipeline``, or with ``core=True`` this), with the verbs the command line uses:
``predict``, ``decision_function``, ``predict_proba`` and ``score`` on raw documents.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["TextPipeline"]


class TextPipeline:
    """``[(name, featurizer), (name, classifier)]``: documents in, labels out.

    Parameters
    ----------
    steps : list of (str, object)
        The featurizer (``transform`` of documents) and the classifier, named as
        scikit-learn's ``make_pipeline`` names them (the lower-cased class names).

    Examples
    --------
    >>> from perceptrons.linear import Perceptron
    >>> from perceptrons.text import TextFeaturizer, TextPipeline
    >>> model = TextPipeline.of(TextFeaturizer(weighting="tf"), Perceptron(shuffle=False))
    >>> model.fit(["good film", "bad film", "good plot", "bad acting"], [1, 0, 1, 0])
    TextPipeline(textfeaturizer, perceptron)
    >>> model.predict(["a good one"]).tolist()
    [1]
    """

    def __init__(self, steps: list[tuple[str, Any]]) -> None:
        if len(steps) != 2:
            raise ValueError(
                f"a TextPipeline has two steps, a featurizer and a classifier: {steps}"
            )
        self.steps = list(steps)

    @classmethod
    def of(cls, featurizer: Any, classifier: Any) -> TextPipeline:
        """The pipeline of ``featurizer`` and ``classifier``, named as ``make_pipeline``
        names them."""
        return cls([(type(step).__name__.lower(), step) for step in (featurizer, classifier)])

    @property
    def named_steps(self) -> dict[str, Any]:
        return dict(self.steps)

    @property
    def featurizer(self) -> Any:
        return self.steps[0][1]

    @property
    def classifier(self) -> Any:
        return self.steps[1][1]

    @property
    def classes_(self) -> np.ndarray:
        return self.classifier.classes_

    def __repr__(self) -> str:
        return f"TextPipeline({', '.join(name for name, _ in self.steps)})"

    def fit(self, texts: Any, y: Any, **fit_params: Any) -> TextPipeline:
        """Fit the featurizer on ``texts``, then the classifier on its features."""
        self.classifier.fit(self.featurizer.fit_transform(texts), y, **fit_params)
        return self

    def predict(self, texts: Any) -> np.ndarray:
        return self.classifier.predict(self.featurizer.transform(texts))

    def decision_function(self, texts: Any) -> np.ndarray:
        return self.classifier.decision_function(self.featurizer.transform(texts))

    def predict_proba(self, texts: Any) -> np.ndarray:
        return self.classifier.predict_proba(self.featurizer.transform(texts))

    def score(self, texts: Any, y: Any, sample_weight: Any = None) -> float:
        return float(self.classifier.score(self.featurizer.transform(texts), y, sample_weight))
