"""Logistic regression trained online by SGD, binary and multinomial.

The scikit-learn estimator over the learner core of :mod:`perceptrons.linear.logistic`
(the parameters, training and model are the core's; see :mod:`perceptrons._estimator`).
"""

from __future__ import annotations

from perceptrons._estimator import ClassifierFace
from perceptrons.linear import logistic as core

__all__ = ["LogisticRegressionSGD"]


class LogisticRegressionSGD(ClassifierFace, core.LogisticRegressionSGD):
    """Logistic regression trained online by stochastic gradient ascent (Bottou 2010).

    Binary problems (two labels, mapped to 0/1) keep one weight vector ``w`` and an
    intercept ``b``; ``p = σ(w·x + b)`` and each example updates
    ``w += λ (y - p) x``, ``b += λ (y - p)``, the gradient of the log conditional
    likelihood. With three or more labels the model is multinomial (softmax over one
    weight vector per class, one pass per epoch, not one-vs-rest):
    ``p = softmax(W x + b)`` and every class ``k`` gets ``w_k += λ ([y = k] - p_k) x``.

    The Gaussian prior's term is ``l2 = 1/σ²`` in each example's step, as in the
    textbook's SGD for the MAP estimate; summed over the ``n`` training examples this is
    the log-likelihood plus ``n`` copies of the prior's, a prior ``w ~ N(0, 1/(n l2))``
    on the whole data (the objective :class:`LogisticRegressionBatch` maximizes with
    the same ``l2``). Per example, in this order: ``p`` from the current weights; then
    the prior's decay ``w <- (1 - λ l2) w``; then the gradient step. This is the textbook
    ``w += λ (y - p) x - λ w / σ²`` with both terms taken at the old weights. The
    intercept is not regularized. The decay is applied lazily, as a global scale of the
    weights, so an update on sparse input costs O(nnz(x)), not O(n_features).

    Parameters
    ----------
    learning_rate : float, default=0.1
        ``λ``, constant over all examples.
    l2 : float, default=0.0
        ``1 / σ²``, the strength of the prior per example; 0 means no prior. Requires
        ``learning_rate * l2 < 1`` (otherwise the decay would flip or zero the weights).
    average : bool, default=False
        Averaged SGD: predict with the exact mean of the weights (and intercepts) after
        every example seen, over all epochs and every ``fit`` and ``partial_fit`` call.
        Computed as for :class:`~perceptrons.AveragedPerceptron`, with the example
        counter replaced by the running sum of the decay's scales: O(nnz(x)) per example.
    max_epochs : int, default=10
        Passes of SGD over the training data in ``fit``.
    shuffle : bool, default=True
        Shuffle the examples before every epoch (a fresh permutation drawn from
        ``random_state``); otherwise visit them in the given order.
    fit_intercept : bool, default=True
        Learn an intercept (the weight of a constant feature of value 1, without prior).
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling. The permutation of epoch ``e`` is the ``e``-th
        ``permutation`` drawn from ``check_random_state(random_state)``.
    verbose : int, default=0
        Print one line per epoch.
    class_weight : dict, "balanced" or None, default=None
        Weight of each class, ``{label: weight}`` (labels not named weigh 1), as in
        scikit-learn: example ``i`` weighs ``sample_weight[i] * class_weight[y_i]``; its
        gradient step is ``s_i`` times as large, its prior's decay is applied ``s_i``
        times (``(1 - λ l2) ** s_i``) and it counts ``s_i`` times in the average and the
        log-loss. ``"balanced"`` weighs class ``c`` by ``n_samples / (n_classes * n_c)``,
        computed on the labels given to ``fit`` (``partial_fit`` refuses it).

    Attributes
    ----------
    coef_ : ndarray or csr_matrix of shape (1, n_features) or (n_classes, n_features)
        The weights with the prior's decay applied (their exact mean over every
        example with ``average=True``): one row of log-odds weights for binary
        problems, one row of logit weights per class otherwise. A
        ``scipy.sparse.csr_matrix`` after :meth:`sparsify` (see :meth:`densify`).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The intercepts (never decayed).
    classes_ : ndarray of shape (n_classes,)
        The sorted labels; column ``k`` of :meth:`predict_proba` is ``classes_[k]``.
    history_ : list of dict
        One record per epoch over all calls: ``epoch``, ``log_loss`` (the mean log-loss
        of the epoch's examples, each computed before its own update; weighted: the
        weighted sum over the number of examples) and ``examples``. At most the 10,000
        most recent records are kept (``epoch`` still counts from the first).
    n_iter_ : int
        Epochs run by the last ``fit`` (1 after ``partial_fit``).
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    AveragedPerceptron : the same online loop with the perceptron's update.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from perceptrons.logistic import LogisticRegressionSGD
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = LogisticRegressionSGD(learning_rate=0.05, average=True, random_state=0)
    >>> clf = clf.fit(X, y)
    >>> round(clf.score(X, y), 2)
    0.97
    >>> clf.predict_proba(X[:1]).round(2).tolist()  # rows sum to 1
    [[0.97, 0.03, 0.0]]
    """
