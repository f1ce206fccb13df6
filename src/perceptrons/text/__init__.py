"""Text features for the learner core, without scikit-learn.

:class:`TextFeaturizer` (raw texts to sparse term features, hashed or from a learned
vocabulary; the estimator of the same name in :mod:`perceptrons` is it under
scikit-learn's face), :class:`TfidfWeighting` (its sublinear tf, idf and row norms) and
:class:`TextPipeline` (a featurizer and a classifier, as the command line trains, saves
and loads them). Each is imported when first used (:mod:`perceptrons._lazy`).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from perceptrons.text.featurizer import TextFeaturizer
    from perceptrons.text.pipeline import TextPipeline
    from perceptrons.text.weighting import TfidfWeighting

__all__ = ["TextFeaturizer", "TextPipeline", "TfidfWeighting"]

_ORIGINS = {
    "TextFeaturizer": "perceptrons.text.featurizer",
    "TextPipeline": "perceptrons.text.pipeline",
    "TfidfWeighting": "perceptrons.text.weighting",
}

if not TYPE_CHECKING:
    from perceptrons._lazy import lazy_attributes

    __getattr__, __dir__ = lazy_attributes(globals(), _ORIGINS)
    del lazy_attributes
