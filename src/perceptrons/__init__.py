"""perceptrons: vanilla, averaged and voted perceptrons, exact and fast.

The public names are imported when first used (:mod:`perceptrons._lazy`): ``import
perceptrons`` itself imports neither scikit-learn, SciPy nor the compiled kernels, so
the ``perceptrons`` command starts at once and each command loads what it uses.
"""

from typing import TYPE_CHECKING

from perceptrons._registry import MODELS
from perceptrons._version import __version__ as __version__

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time, __getattr__ below
    from perceptrons._memory import MemoryBudgetError as MemoryBudgetError
    from perceptrons.budget import BudgetPerceptron as BudgetPerceptron
    from perceptrons.features import TextFeaturizer as TextFeaturizer
    from perceptrons.io.persist import load as load
    from perceptrons.io.persist import save as save
    from perceptrons.logistic import LogisticRegressionSGD as LogisticRegressionSGD
    from perceptrons.logistic_batch import LogisticRegressionBatch as LogisticRegressionBatch
    from perceptrons.naive_bayes import BernoulliNaiveBayes as BernoulliNaiveBayes
    from perceptrons.naive_bayes import MultinomialNaiveBayes as MultinomialNaiveBayes
    from perceptrons.perceptron import AveragedPerceptron as AveragedPerceptron
    from perceptrons.perceptron import Perceptron as Perceptron
    from perceptrons.sequence_features import SequenceFeaturizer as SequenceFeaturizer
    from perceptrons.tagger import SequenceTagger as SequenceTagger
    from perceptrons.voted import VotedPerceptron as VotedPerceptron

#: Where each public name is defined, imported on first use: the model classes from
#: the package's one registry (:mod:`perceptrons._registry`), then the rest.
_ORIGINS = {
    **{kind.name: kind.module for kind in MODELS},
    "MemoryBudgetError": "perceptrons._memory",
    "load": "perceptrons.io.persist",
    "save": "perceptrons.io.persist",
}

__all__ = sorted([*_ORIGINS, "__version__"])

if not TYPE_CHECKING:  # hidden from type checkers, which would then accept any name
    from perceptrons._lazy import lazy_attributes as lazy_attributes

    __getattr__, __dir__ = lazy_attributes(globals(), _ORIGINS)
    del lazy_attributes
