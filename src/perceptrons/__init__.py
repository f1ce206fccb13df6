"""perceptrons: vanilla, averaged and voted perceptrons, exact and fast."""

from perceptrons.features import TextFeaturizer
from perceptrons.linear import AveragedPerceptron, Perceptron
from perceptrons.logistic import LogisticRegressionSGD
from perceptrons.naive_bayes import BernoulliNaiveBayes, MultinomialNaiveBayes
from perceptrons.persist import load, save
from perceptrons.voted import VotedPerceptron

__version__ = "0.1.0"

__all__ = [
    "AveragedPerceptron",
    "BernoulliNaiveBayes",
    "LogisticRegressionSGD",
    "MultinomialNaiveBayes",
    "Perceptron",
    "TextFeaturizer",
    "VotedPerceptron",
    "__version__",
    "load",
    "save",
]
