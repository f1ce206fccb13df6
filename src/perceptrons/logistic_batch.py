"""Logistic regression by full-batch gradient ascent with a backtracking line search.

The sibling of :class:`~perceptrons.logistic.LogisticRegressionSGD`: the same model,
the same Gaussian prior ``l2`` and the same optimum, reached by whole-data gradient
steps instead of one example at a time. Each iteration is two sparse (or dense) matrix
products over the whole training set, ``X @ W`` and ``X.T @ R``; there is no Python loop
over the examples and no compiled kernel is needed.

The estimator here is the learner core of :mod:`perceptrons.probabilistic.logistic_batch`
under scikit-learn's face (:mod:`perceptrons._estimator`).
"""

from __future__ import annotations

from sklearn.exceptions import ConvergenceWarning

from perceptrons._estimator import ClassifierFace
from perceptrons.probabilistic import logistic_batch as core

__all__ = ["LogisticRegressionBatch"]


class LogisticRegressionBatch(ClassifierFace, core.LogisticRegressionBatch):
    """Logistic regression by full-batch gradient ascent on the MAP objective.

    The model of :class:`~perceptrons.logistic.LogisticRegressionSGD`: binary problems
    (two labels) have one weight vector ``w`` and intercept ``b`` with
    ``p = σ(w·x + b)``; three or more labels a multinomial model, ``p = softmax(W x +
    b)``, one weight vector per class. Training maximizes the log conditional
    likelihood with a Gaussian prior ``w ~ N(0, σ²)`` (the MAP estimate; Bishop 2006,
    §4.3), written per example as a mean::

        F(w, b) = (1/n) Σ_i log P(y_i | x_i, w, b) - (l2 / 2) ||w||²

    the objective the SGD sibling's steps follow, so that both aim at the same optimum
    for the same ``l2``. Its sum form ``n F`` is the textbook ``Σ_i log P(y_i | x_i) -
    Σ_j w_j² / (2 σ²)`` with ``σ² = 1 / (n l2)``, and scikit-learn's
    ``LogisticRegression(C=1 / (n * l2))`` has the same optimum. The intercept has no
    prior.

    Each iteration is the batch update, for every weight at once::

        w_j <- w_j + ε (Σ_i (y_i - p_i) x_ij / n - l2 w_j)

    (the textbook ``w_j + ε' Σ_i x_ij (y_i - p_i) - ε' w_j / σ²`` with ``ε' = ε / n``),
    with ``ε`` chosen by a backtracking line search: the first guess is ``1/L`` (``L``
    a bound on the curvature, Böhning 1992) and then a Barzilai & Borwein (1988) step
    (adaptive, Zhou, Gao & Dai 2006), halved until the objective rises by at least
    ``1e-4 ε ||∇F||²`` (Armijo's condition, Nocedal & Wright 2006, ch. 3). Every
    accepted step therefore increases the objective (``history_`` is non-decreasing)
    and none can diverge: ``ε = 1/L`` always passes the test. Training stops when an
    iteration improves the objective by less than ``tol`` relative to its value (or not
    at all), or after ``max_iter`` iterations with
    a :class:`~sklearn.exceptions.ConvergenceWarning`.

    Unlike the SGD sibling this is not an online learner: there is no
    ``partial_fit``, no shuffling and no averaging; the result does not depend on the
    order of the examples. Bottou (2010) compares the two: a batch step costs a pass
    over the data but converges linearly to the exact optimum, while SGD's cheap steps
    reach a good test error sooner and the optimum only approximately.

    Parameters
    ----------
    l2 : float, default=1e-4
        ``1 / (n σ²)``, the strength of the prior per example, as for
        ``LogisticRegressionSGD`` (and scikit-learn's ``SGDClassifier(alpha=l2)``); 0
        means no prior, whose optimum is at infinity on separable data. The default is
        not the SGD sibling's 0 for that reason.
    tol : float, default=1e-8
        Stop when ``(F_new - F_old) / |F_old| < tol``. Measured with ``l2=1e-4``: the
        objective then ends within 1e-4 (a9a) and 5e-7 (20 Newsgroups) of the optimum,
        relative, where 1e-6 leaves 1.4e-3 and 1.2e-5.
    max_iter : int, default=1000
        The most iterations (accepted steps) of one ``fit``.
    fit_intercept : bool, default=True
        Learn an intercept (without prior).
    class_weight : dict, "balanced" or None, default=None
        Weight of each class, ``{label: weight}`` (labels not named weigh 1), as in
        scikit-learn: example ``i`` weighs ``s_i = sample_weight[i] * class_weight[y_i]``
        and the mean of ``F`` becomes ``Σ_i s_i log P(y_i | x_i) / Σ_i s_i``, so an
        integer weight is the same as repeating the example (scikit-learn's ``C`` is then
        ``1 / (l2 Σ_i s_i)``). ``"balanced"`` weighs class ``c`` by ``n_samples /
        (n_classes * n_c)``.
    verbose : int, default=0
        Print one line per iteration.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        The weights: one row of log-odds weights for binary problems, one row of logit
        weights per class otherwise.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The intercepts (zeros without ``fit_intercept``).
    classes_ : ndarray of shape (n_classes,)
        The sorted labels; column ``k`` of :meth:`predict_proba` is ``classes_[k]``.
    history_ : list of dict
        One record per iteration: ``iteration``, ``objective`` (``F`` after the step),
        ``step`` (the accepted ``ε``) and ``evaluations`` (objectives computed by its
        line search). At most the 10,000 most recent records are kept.
    n_iter_ : int
        Iterations run by the last ``fit``.
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    LogisticRegressionSGD : the same model trained online, one example at a time.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from perceptrons.logistic_batch import LogisticRegressionBatch
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = LogisticRegressionBatch(l2=1e-2, tol=1e-8).fit(X, y)
    >>> round(clf.score(X, y), 2), clf.n_iter_ < clf.max_iter  # converged
    (0.97, True)
    >>> objectives = [record["objective"] for record in clf.history_]
    >>> all(a <= b for a, b in zip(objectives, objectives[1:]))  # never decreases
    True
    >>> clf.predict_proba(X[:1]).round(2).tolist()  # rows sum to 1
    [[0.98, 0.02, 0.0]]
    """

    _convergence_warning = ConvergenceWarning
