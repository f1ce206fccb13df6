"""The kernel perceptrons' learner core, without scikit-learn.

:class:`VotedPerceptron` (Freund & Schapire's voted perceptron with any kernel) and
:class:`BudgetPerceptron` (kernel perceptrons on a budget of support vectors): the
estimators of the same names in :mod:`perceptrons` without scikit-learn's face, what
the command line trains, saves and loads. Each is imported when first used
(:mod:`perceptrons._lazy`).

The package's API to the rest of the library is this module and its two cores,
``voted.py`` and ``budget.py``. What they are built from is private to the package and
imported by no other: ``_training.py`` (the voted perceptron's epochs), ``_store.py`` and
``_scores.py`` (its stores and staged scores), ``_voted_codec.py`` and
``_budget_codec.py`` (the model files' state) and ``_gram.py`` (kernel matrices through
the array API: NumPy, PyTorch, CuPy).
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
