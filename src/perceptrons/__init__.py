"""perceptrons: vanilla, averaged and voted perceptrons, exact and fast."""

from perceptrons._memory import MemoryBudgetError
from perceptrons._version import __version__
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
