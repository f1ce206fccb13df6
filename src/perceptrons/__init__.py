"""perceptrons: vanilla, averaged and voted perceptrons, exact and fast.

The public names are imported when first used (:mod:`perceptrons._lazy`): ``import
perceptrons`` itself imports neither scikit-learn, SciPy nor the compiled kernels, so
the ``perceptrons`` command starts at once and each command loads what it uses.
"""

from typing import TYPE_CHECKING

from perceptrons._version import __version__

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time, __getattr__ below
    from perceptrons._memory import MemoryBudgetError
    from perceptrons.budget import BudgetPerceptron
    from perceptrons.features import TextFeaturizer
    from perceptrons.io.persist import load, save
    from perceptrons.logistic import LogisticRegressionSGD
    from perceptrons.logistic_batch import LogisticRegressionBatch
    from perceptrons.naive_bayes import BernoulliNaiveBayes, MultinomialNaiveBayes
    from perceptrons.perceptron import AveragedPerceptron, Perceptron
    from perceptrons.sequence_features import SequenceFeaturizer
    from perceptrons.tagger import SequenceTagger
    from perceptrons.voted import VotedPerceptron

__all__ = [
    "AveragedPerceptron",
    "BernoulliNaiveBayes",
    "BudgetPerceptron",
    "LogisticRegressionBatch",
    "LogisticRegressionSGD",
    "MemoryBudgetError",
    "MultinomialNaiveBayes",
    "Perceptron",
    "SequenceFeaturizer",
    "SequenceTagger",
    "TextFeaturizer",
    "VotedPerceptron",
    "__version__",
    "load",
    "save",
]

#: Where each public name is defined, imported on first use.
_ORIGINS = {
    "AveragedPerceptron": "perceptrons.perceptron",
    "BernoulliNaiveBayes": "perceptrons.naive_bayes",
    "BudgetPerceptron": "perceptrons.budget",
    "LogisticRegressionBatch": "perceptrons.logistic_batch",
    "LogisticRegressionSGD": "perceptrons.logistic",
    "MemoryBudgetError": "perceptrons._memory",
    "MultinomialNaiveBayes": "perceptrons.naive_bayes",
    "Perceptron": "perceptrons.perceptron",
    "SequenceFeaturizer": "perceptrons.sequence_features",
    "SequenceTagger": "perceptrons.tagger",
    "TextFeaturizer": "perceptrons.features",
    "VotedPerceptron": "perceptrons.voted",
    "load": "perceptrons.io.persist",
    "save": "perceptrons.io.persist",
}

if not TYPE_CHECKING:  # hidden from type checkers, which would then accept any name
    from perceptrons._lazy import lazy_attributes

    __getattr__, __dir__ = lazy_attributes(globals(), _ORIGINS)
    del lazy_attributes
