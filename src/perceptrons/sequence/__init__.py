"""Sequence labelling for the learner core, without scikit-learn.

:class:`SequenceTagger` (Collins' structured averaged perceptron) and
:class:`SequenceFeaturizer` (templates to per-token features): what ``perceptrons tag``
trains, saves and loads, the estimators of the same names in :mod:`perceptrons` without
scikit-learn's face. Each is imported when first used (:mod:`perceptrons._lazy`).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from perceptrons.sequence.featurizer import SequenceFeaturizer
    from perceptrons.sequence.tagger import SequenceTagger

__all__ = ["SequenceFeaturizer", "SequenceTagger"]

_ORIGINS = {
    "SequenceFeaturizer": "perceptrons.sequence.featurizer",
    "SequenceTagger": "perceptrons.sequence.tagger",
}

if not TYPE_CHECKING:
    from perceptrons._lazy import lazy_attributes

    __getattr__, __dir__ = lazy_attributes(globals(), _ORIGINS)
    del lazy_attributes
