"""Kernel perceptrons on a budget: at most ``budget`` support vectors, memory flat.

A kernel perceptron keeps every example it erred on, so on a stream its support set,
its memory and its time per example grow without bound. :class:`BudgetPerceptron`
holds at most ``budget`` support vectors, in storage allocated once, and on a mistake
with a full support set applies a removal rule from the literature: the randomized
budget perceptron (Cavallanti, Cesa-Bianchi & Gentile 2007), the self-tuned Forgetron
(Dekel, Shalev-Shwartz & Singer 2008), the Projectron (Orabona, Keshet & Caputo 2009)
or the budgeted passive-aggressive algorithm BPA-S (Wang & Vucetic 2010). Each rule's
oracle is in :mod:`perceptrons.reference.budget`; the estimator trains exactly as it,
a block of examples at a time: two kernel products per block (the block against the
support set, and against itself) and one compiled loop
(:func:`perceptrons._kernels.budget.budget_block`) that walks the block in order.

The estimator here is the learner core of :mod:`perceptrons.kernel.budget` under
scikit-learn's face (:mod:`perceptrons._estimator`).
"""

from __future__ import annotations

from perceptrons._estimator import ClassifierFace
from perceptrons.kernel import budget as core
from perceptrons.kernel.budget import RULES as RULES  # the removal rules, by name
from perceptrons.kernel.budget import SLOT_PARAMETERS as SLOT_PARAMETERS

__all__ = ["BudgetPerceptron"]


class BudgetPerceptron(ClassifierFace, core.BudgetPerceptron):
    """A kernel perceptron with at most ``budget`` support vectors, binary and multiclass.

    Trains online in the dual form; when a mistake finds the support set full, the
    ``removal`` rule makes room (or avoids needing it). The support vectors are stored
    in ``budget`` slots allocated on the first call, so memory stays flat however long
    the stream (``partial_fit``) runs. See the user guide's "Kernels on a budget" for
    what each rule does, its mistake bound and measurements on MNIST.

    Parameters
    ----------
    budget : int, default=1000
        The most support vectors kept.
    removal : {"projectron", "random", "forgetron", "bpa", "bpa-nn"}, default="projectron"
        ``"projectron"``: the Projectron (Orabona et al. 2009), an update within
        ``eta`` of the span of the support set, and every update once the budget is
        full, is projected onto that span instead of adding a support vector.
        ``"random"``: the randomized budget perceptron (Cavallanti et al. 2007), a
        uniformly drawn support vector is discarded. ``"forgetron"``: the self-tuned
        Forgetron (Dekel et al. 2008), every coefficient shrinks, then the oldest
        support vector is discarded. ``"bpa"``: BPA-S (Wang & Vucetic 2010),
        passive-aggressive (PA-I) updates; the support vector whose removal (its
        coefficient projected onto the new example) changes the model least is
        replaced. ``"bpa-nn"``: BPA-NN, the same with the coefficient projected onto
        the new example and the removed support vector's nearest neighbour. The
        default measured best at every budget on MNIST (the user guide's table: 4.1%
        test error with 1,000 support vectors, against 4.2% for the unbudgeted kernel
        perceptron's last model; the other rules 7-20%).
    eta : float, default=0.1
        The Projectron's projection threshold: the distance, in the kernel's feature
        space, from the span of the support set within which an update is projected.
    C : float, default=1.0
        BPA's aggressiveness (PA-I's largest step), for ``"bpa"`` and ``"bpa-nn"``.
    kernel : {"poly", "rbf", "linear"}, default="poly"
        As :class:`~perceptrons.VotedPerceptron`: ``"poly"`` is ``(gamma·<x, x'> +
        coef0) ** degree``, ``"rbf"`` is ``exp(-gamma·||x - x'||²)``.
    degree : int, default=3
        Degree of the polynomial kernel.
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel coefficient, resolved on the first training data as
        :class:`~perceptrons.VotedPerceptron` resolves it.
    coef0 : float, default=1.0
        Constant term of the polynomial kernel. There is no separate intercept
        (``fit_intercept``): the rules' bounds and updates are for a function in the
        kernel's space alone, and a bias outside it would have to be shrunk (Forgetron),
        projected (Projectron, BPA) and budgeted by rules of its own; ``coef0 > 0`` puts
        a constant feature in the polynomial kernel instead.
    max_epochs : int, default=1
        Passes over the training data in ``fit``.
    shuffle : bool, default=True
        A fresh random order every epoch, drawn from ``random_state``.
    batch_size : int, default=256
        Examples scored together by the two kernel products of a block. Any value
        gives the same model (up to the rounding of the kernel values).
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling and, for ``removal="random"``, the removals: after each
        epoch's order, one uniform number per example is drawn.
    verbose : int, default=0
        Print one line per epoch.
    device : str, torch.device, cupy.cuda.Device or None, default=None
        Where the kernel products run, as for :class:`VotedPerceptron`: None computes
        them with NumPy (BLAS), unless ``X`` is another library's array-API array,
        whose namespace and device are used; a string or ``torch.device`` names a
        PyTorch device (``"cuda"``), a ``cupy.cuda.Device`` uses CuPy. The rules'
        sequential pass and the model stay on the host. Dense input only.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.
    support_vectors_ : ndarray of shape (n_support, n_features)
        The support vectors, in their slots' order (a replacement takes the slot of
        the support vector it replaces).
    dual_coef_ : ndarray of shape (n_support, n_columns)
        Their coefficients: one column for a binary model (positive pushes towards
        ``classes_[1]``), one per class otherwise.
    history_ : list of dict
        One record per epoch: ``epoch``, ``mistakes`` (prediction mistakes),
        ``examples``, ``support_vectors``.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from perceptrons import BudgetPerceptron
    >>> X, y = load_digits(return_X_y=True)
    >>> model = BudgetPerceptron(budget=100, degree=2, random_state=0).fit(X[:1000], y[:1000])
    >>> model.support_vectors_.shape
    (100, 64)
    >>> round(model.score(X[1000:], y[1000:]), 3)
    0.833
    """
