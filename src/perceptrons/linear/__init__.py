"""The learner core of the online linear classifiers, without scikit-learn.

:class:`Perceptron`, :class:`AveragedPerceptron` (every update rule of
:mod:`perceptrons.linear._update_rules`) and :class:`LogisticRegressionSGD` here are what the
command line trains, loads and predicts with: the same parameters, training, model and
files as the estimators of the same names in :mod:`perceptrons`, which are these classes
under scikit-learn's face (:mod:`perceptrons._estimator`). Importing a class loads
NumPy, SciPy's sparse matrices and its compiled kernels, never scikit-learn; each is
imported when first used (:mod:`perceptrons._lazy`).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from perceptrons.linear.logistic import LogisticRegressionSGD
    from perceptrons.linear.perceptron import AveragedPerceptron, Perceptron

__all__ = ["AveragedPerceptron", "LogisticRegressionSGD", "Perceptron"]

_ORIGINS = {
    "AveragedPerceptron": "perceptrons.linear.perceptron",
    "LogisticRegressionSGD": "perceptrons.linear.logistic",
    "Perceptron": "perceptrons.linear.perceptron",
}

if not TYPE_CHECKING:
    from perceptrons._lazy import lazy_attributes

    __getattr__, __dir__ = lazy_attributes(globals(), _ORIGINS)
    del lazy_attributes
