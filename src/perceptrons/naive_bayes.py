"""Naive Bayes as a linear classifier: multinomial (counts) and Bernoulli (presence).

As W. Cohen's lecture "The Perceptron" (10-601, Carnegie Mellon University) puts it,
"Naïve Bayes is also linear": the naive Bayes rule

    argmax_c  log P(c) + Σ_j log P(x_j | c)

is, for these two event models, an argmax of linear functions of ``x``, one per class:

Multinomial
    ``log P(x | c) = Σ_j x_j log p_cj`` (up to the multinomial coefficient, which is the
    same for every class), so class ``c`` has weights ``w_cj = log p_cj`` and bias
    ``b_c = log P(c)``, with ``p_cj = (N_cj + α) / (Σ_k N_ck + α n_features)`` and
    ``N_cj`` the total count of feature ``j`` in class ``c``.
Bernoulli
    ``log P(x | c) = Σ_j x_j log p_cj + (1 - x_j) log(1 - p_cj)``
    ``= Σ_j x_j [log p_cj - log(1 - p_cj)] + Σ_j log(1 - p_cj)``, so
    ``w_cj = log p_cj - log(1 - p_cj)`` (the log odds of the feature being present) and
    ``b_c = log P(c) + Σ_j log(1 - p_cj)``, with ``p_cj = (N_cj + α) / (n_c + 2α)``,
    ``N_cj`` the number of class-``c`` examples where feature ``j`` is present and
    ``n_c`` the number of class-``c`` examples; ``x`` is binarized first.

Training is counting: ``fit`` and ``partial_fit`` add a batch's per-class feature
counts (one sparse-times-dense product, so sparse input is never densified) and
recompute the weights from the counts. The weights are then exposed exactly like the
perceptrons' (``coef_``, ``intercept_``, ``decision_function``), so all the linear
models of this package can be compared, inspected and saved the same way.

Over 600 lines: both event models share one base class, its codec and the derivation
above, which is the documentation of both.

The estimators here are the learner core of :mod:`perceptrons.probabilistic.naive_bayes`
under scikit-learn's face (:mod:`perceptrons._estimator`).
"""

from __future__ import annotations

from typing import Any

from perceptrons._estimator import ClassifierFace
from perceptrons.probabilistic import naive_bayes as core

__all__ = ["BernoulliNaiveBayes", "MultinomialNaiveBayes"]


class _NaiveBayesFace(ClassifierFace):
    """What both faces add: the tags of a generative model."""

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        # Like scikit-learn's naive Bayes: a generative model need not reach the
        # accuracy the common checks demand of discriminative classifiers.
        tags.classifier_tags.poor_score = True
        return tags


_SHARED_PARAMETERS = """
    Parameters
    ----------
    alpha : float, default=1.0
        Additive (Laplace for 1, Lidstone otherwise) smoothing of the counts; must be
        > 0, so that every weight is finite.
    fit_prior : bool, default=True
        Learn the class priors from the class frequencies; otherwise uniform priors.
    class_prior : array-like of shape (n_classes,), default=None
        Prior probabilities of the classes (in the order of ``classes_``); overrides
        ``fit_prior``. Must be positive; need not sum to 1 (the posterior
        probabilities are normalized anyway). A list saves with
        :func:`perceptrons.save`; an ndarray does not.
    class_weight : dict, "balanced" or None, default=None
        Weight of each class, ``{label: weight}`` (labels not named weigh 1): a row of
        class ``c`` is counted ``sample_weight[i] * class_weight[c]`` times (in
        ``feature_count_`` and ``class_count_``, hence also in the learned prior).
        ``"balanced"`` weighs class ``c`` by ``n_samples / (n_classes * n_c)``, computed on
        the labels given to ``fit`` (``partial_fit`` refuses it).
"""

_SHARED_ATTRIBUTES = """
    Attributes
    ----------
    coef_ : ndarray or csr_matrix of shape (1, n_features) or (n_classes, n_features)
        The linear weights: per class, the coefficients of ``x`` in ``log P(c, x)``.
        For two classes, one row: the second class's weights minus the first's. A
        ``scipy.sparse.csr_matrix`` after :meth:`sparsify` (see :meth:`densify`).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The biases, alike (for two classes the log prior odds plus, for Bernoulli, the
        difference of the ``Σ_j log(1 - p_cj)`` terms).
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        ``log p_cj``, the smoothed log probability of feature ``j`` given class ``c``.
    class_log_prior_ : ndarray of shape (n_classes,)
        ``log P(c)``: learned, uniform or from ``class_prior``.
    feature_count_ : ndarray of shape (n_classes, n_features)
        The counts every weight is computed from, summed over all ``fit`` and
        ``partial_fit`` batches since the last ``fit``.
    class_count_ : ndarray of shape (n_classes,)
        Number of training examples of each class.
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.
    n_features_in_ : int
        Number of features seen in ``fit``.
"""

_BINARY_NOTE = """
    Notes
    -----
    Binary problems are exposed like the binary perceptrons: ``coef_`` has one row
    (the weights of ``classes_[1]`` minus those of ``classes_[0]``),
    ``decision_function`` is 1-D (the posterior log odds) and a positive score predicts
    ``classes_[1]``. :meth:`predict_joint_log_proba` gives the per-class scores. The
    predictions are scikit-learn's (``{sk}``, whose ``feature_log_prob_`` and
    ``class_log_prior_`` are the same), except where two classes tie: exactly, or
    within floating-point rounding (the binary score is computed as one difference,
    scikit-learn compares two sums). Unlike scikit-learn, ``alpha`` must be positive and
    ``partial_fit``'s first call may omit ``classes`` when its batch holds every label.
"""


class MultinomialNaiveBayes(_NaiveBayesFace, core.MultinomialNaiveBayes):
    __doc__ = (
        """Multinomial naive Bayes (counts, e.g. word counts), as a linear classifier.

    Each class ``c`` has the weights ``coef_[c, j] = log p_cj`` and the bias
    ``intercept_[c] = log P(c)``, where ``p_cj = (N_cj + alpha) / (N_c + alpha
    n_features)`` is the smoothed share of feature ``j`` in the counts of class ``c``,
    so that ``decision_function(X) = X @ coef_.T + intercept_`` is the per-class joint
    log-likelihood (McCallum & Nigam 1998). Features must be non-negative (counts, or tf-idf-like
    weights).
"""
        + _SHARED_PARAMETERS
        + _SHARED_ATTRIBUTES
        + _BINARY_NOTE.format(sk="sklearn.naive_bayes.MultinomialNB")
        + """
    See Also
    --------
    BernoulliNaiveBayes : the presence/absence event model.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from perceptrons.naive_bayes import MultinomialNaiveBayes
    >>> X, y = load_digits(return_X_y=True)
    >>> clf = MultinomialNaiveBayes().fit(X[:1200], y[:1200])
    >>> clf.coef_.shape
    (10, 64)
    >>> round(clf.score(X[1200:], y[1200:]), 3)
    0.869

    A binary text problem has one row of weights, positive for ``classes_[1]``:

    >>> from sklearn.feature_extraction.text import CountVectorizer
    >>> docs = ["good fun film", "great fun", "dull film", "bad dull plot"]
    >>> vectorizer = CountVectorizer()
    >>> X = vectorizer.fit_transform(docs)
    >>> clf = MultinomialNaiveBayes().fit(X, ["neg" if "dull" in d else "pos" for d in docs])
    >>> clf.coef_.shape
    (1, 7)
    >>> clf.predict(vectorizer.transform(["fun plot", "dull fun"])).tolist()
    ['pos', 'neg']
    """
    )

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags


class BernoulliNaiveBayes(_NaiveBayesFace, core.BernoulliNaiveBayes):
    __doc__ = (
        """Bernoulli naive Bayes (feature present or absent), as a linear classifier.

    With ``p_cj = (N_cj + alpha) / (n_c + 2 alpha)`` the smoothed share of class-``c``
    examples where feature ``j`` is present, ``log P(x | c) = Σ_j x_j log p_cj +
    (1 - x_j) log(1 - p_cj)`` is linear in the binarized ``x``: each class has the
    weights ``coef_[c, j] = log p_cj - log(1 - p_cj)`` (computed from the counts as
    ``log(N_cj + alpha) - log(n_c - N_cj + alpha)``, without cancellation) and the bias
    ``intercept_[c] = log P(c) + Σ_j log(1 - p_cj)``, so that ``decision_function(X) =
    binarized(X) @ coef_.T + intercept_`` is the per-class joint log-likelihood.
"""
        + _SHARED_PARAMETERS
        + """    binarize : float or None, default=0.0
        Features above this threshold count as present, the others as absent. None
        means the input is already binary: then any value other than 0 and 1 is an
        error.
"""
        + _SHARED_ATTRIBUTES
        + _BINARY_NOTE.format(sk="sklearn.naive_bayes.BernoulliNB")
        + """
    See Also
    --------
    MultinomialNaiveBayes : the count event model.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from perceptrons.naive_bayes import BernoulliNaiveBayes
    >>> X, y = load_digits(return_X_y=True)
    >>> clf = BernoulliNaiveBayes(binarize=4.0).fit(X[:1200], y[:1200])
    >>> round(clf.score(X[1200:], y[1200:]), 3)
    0.858
    """
    )
