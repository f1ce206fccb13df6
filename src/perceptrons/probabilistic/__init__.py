"""The probabilistic linear classifiers' learner core, without scikit-learn.

:class:`MultinomialNaiveBayes` and :class:`BernoulliNaiveBayes` (naive Bayes as a linear
classifier) and :class:`LogisticRegressionBatch` (full-batch maximum a posteriori
logistic regression): the estimators of the same names in :mod:`perceptrons` without
scikit-learn's face, what the command line trains, saves and loads. Each is imported
when first used (:mod:`perceptrons._lazy`).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from perceptrons.probabilistic.logistic_batch import LogisticRegressionBatch
    from perceptrons.probabilistic.naive_bayes import BernoulliNaiveBayes, MultinomialNaiveBayes

__all__ = ["BernoulliNaiveBayes", "LogisticRegressionBatch", "MultinomialNaiveBayes"]

_ORIGINS = {
    "BernoulliNaiveBayes": "perceptrons.probabilistic.naive_bayes",
    "LogisticRegressionBatch": "perceptrons.probabilistic.logistic_batch",
    "MultinomialNaiveBayes": "perceptrons.probabilistic.naive_bayes",
}

if not TYPE_CHECKING:
    from perceptrons._lazy import lazy_attributes

    __getattr__, __dir__ = lazy_attributes(globals(), _ORIGINS)
    del lazy_attributes
