"""The scikit-learn face of the learners: what turns a core class into an estimator.

A learner of the package is a core class, which imports no scikit-learn (the command
line trains and loads those: :mod:`perceptrons.linear`, :mod:`perceptrons._base`), under
one of these faces: :class:`EstimatorFace` adds scikit-learn's ``BaseEstimator``
(``get_params``/``set_params`` by introspection, ``clone``, ``repr``, metadata routing)
and validates input with scikit-learn's ``validate_data``; :class:`ClassifierFace`
adds ``ClassifierMixin`` and the sparse-input tag. The face comes first in the bases,
so its methods win: ``class Perceptron(ClassifierFace, linear.Perceptron)``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sklearn.base import BaseEstimator, ClassifierMixin

__all__ = ["ClassifierFace", "EstimatorFace"]


class EstimatorFace(BaseEstimator):
    """scikit-learn's estimator protocol over a core class (see the module)."""

    _SKLEARN_FACE: ClassVar[bool] = True


class ClassifierFace(ClassifierMixin, EstimatorFace):
    """A classifier's face: :class:`EstimatorFace`, ``ClassifierMixin`` (``score``,
    the classifier tag) and sparse input."""

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
