"""The kernel perceptrons' learner core, without scikit-learn.

:class:`VotedPerceptron` (Freund & Schapire's voted perceptron with any kernel) and
:class:`BudgetPerceptron` (kernel perceptrons on a budget of support vectors): the
estimators of the same names in :mod:`perceptrons` without scikit-learn's face, what
the command line trains, saves and loads. Each is imported when first used
(:mod:`perceptrons._lazy`).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from perceptrons.kernel.budget import BudgetPerceptron
    from perceptrons.kernel.voted import VotedPerceptron

__all__ = ["BudgetPerceptron", "VotedPerceptron"]

_ORIGINS = {
    "BudgetPerceptron": "perceptrons.kernel.budget",
    "VotedPerceptron": "perceptrons.kernel.voted",
}

if not TYPE_CHECKING:
    from perceptrons._lazy import lazy_attributes

    __getattr__, __dir__ = lazy_attributes(globals(), _ORIGINS)
    del lazy_attributes
