"""The vanilla and the averaged perceptron, binary and natively multiclass.

The scikit-learn estimators over the learner core of :mod:`perceptrons.linear.perceptron`
(the parameters, training and model are the core's; see :mod:`perceptrons._estimator`).
"""

from __future__ import annotations

from perceptrons._estimator import ClassifierFace
from perceptrons.linear import perceptron as core

__all__ = ["AveragedPerceptron", "Perceptron"]

_SHARED_PARAMETERS = """
    Parameters
    ----------
    max_epochs : int, default=10
        Number of passes over the training data in ``fit``.
    shuffle : bool, default=True
        Visit the examples in a fresh random order every epoch, drawn from
        ``random_state``; otherwise in the given order.
    fit_intercept : bool, default=True
        Learn a bias (updated like the weight of a constant feature of value 1).
    warm_start : bool, default=False
        Let ``fit`` continue from the previous state instead of starting from zero.
    early_stopping : bool, default=False
        Stop early: after the first epoch without an update (the model converged;
        for the perceptron without margin, an epoch without a mistake) or, when
        ``validation_fraction`` is set, when the accuracy on a held-out stratified
        split has not improved for ``n_iter_no_change`` epochs.
    validation_fraction : float or None, default=None
        Share of the training data held out for early stopping (used only with
        ``early_stopping=True``). The held-out examples are never trained on.
    n_iter_no_change : int, default=5
        Epochs without improvement of the validation score before stopping.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling and the validation split. The permutation of epoch ``e``
        is the ``e``-th ``permutation`` drawn from ``check_random_state(random_state)``.
    verbose : int, default=0
        Print one line per epoch.
    delta : float, default=0.0
        The Δ trick (Freund & Schapire 1999), which lets the perceptron converge on data that no
        hyperplane separates: train exactly as if every training example had one more
        feature of its own, of value ``delta`` (``X`` becomes ``[X | delta * I]``),
        without building those columns. A mistake on an example also updates its own
        feature's weight, so that example alone can be fixed. Only training sees these
        features: ``coef_`` and prediction use the real ones. In ``fit`` the examples
        keep their features' weights over all epochs, and over a warm-started ``fit`` on
        as many examples. Each ``partial_fit`` batch holds new examples, each seen once,
        so there ``delta`` leaves the perceptron update's mistakes and steps unchanged
        (the passive-aggressive steps still count ``delta**2`` in the squared norm of
        ``x``). Costs ``n_samples`` floats of memory
        (``n_samples * n_classes`` for multiclass); 0 turns it off.
    update : {"perceptron", "pa", "pa-i", "pa-ii", "mira", "romma", "aggressive-romma", \
"cw", "eccw", "arow", "narow", "scw-i", "scw-ii", "nherd", "sop", "iellip", "alma", "ogd", \
"fobos-l1", "stg", "ada-fobos", "ada-rda", "ada-fobos-l1", "ada-rda-l1", "nag", "ftrl", "rda", \
"rda-l1", "erda-l1"}, default="perceptron"
        The update rule. ``"perceptron"``: add ``y x`` when ``y (w·x + b) <= margin``
        (multiclass: ``+x`` to the gold class, ``-x`` to the predicted one; with a
        positive ``margin``, also when the gold score beats the best other class by no
        more than ``margin``). The passive-aggressive rules (Crammer et al. 2006) step
        by ``tau y x`` whenever the hinge loss ``l = max(0, 1 - y (w·x + b))`` is
        positive (multiclass: ``1 -`` the gold score's lead over the best other class),
        with ``tau = l / ||x||²`` (``"pa"``), ``min(C, l / ||x||²)`` (``"pa-i"``) or
        ``l / (||x||² + 1 / (2 C))`` (``"pa-ii"``); ``||x||²`` counts the bias feature,
        and doubles for multiclass, where two rows move. ``"mira"`` is ``"pa-i"`` under
        its other name: the multiclass PA-I update, with its single constraint against
        the best other class and its step clipped at ``C``, is 1-best MIRA (Crammer &
        Singer 2003); the same model bit for bit, binary and multiclass.
        ``"romma"`` and ``"aggressive-romma"`` are the relaxed online maximum margin
        algorithm (Li & Long 2002): on a mistake (``y (w·x + b) <= 0``; aggressive:
        whenever ``y (w·x + b) < 1``), ``w`` becomes the shortest vector with
        ``w·w_old >= ||w_old||²`` and ``y (w·x + b) >= 1``: ``w <- c w_old + d x``, with
        ``c = (||x||² ||w_old||² - y z) / D``, ``d = ||w_old||² (y - z) / D``,
        ``z = w_old·x`` and ``D = ||x||² ||w_old||² - z²`` (the bias is a constant
        feature, part of ``w``); ``w <- y x / ||x||²`` when that alone satisfies both
        constraints (the first update, from ``w = 0``) and when ``x`` is parallel to
        ``w_old`` (a rule of this library: the paper assumes separable data, where the
        constraints never conflict). Multiclass ROMMA is the Kesler construction: one
        joint weight vector over all classes, the example ``Φ(x, gold) - Φ(x, best
        other)`` of norm² ``2 ||x||²``, every class's row scaled by ``c``. The scaling
        is kept lazily (O(nnz(x)) per update, see :mod:`perceptrons._kernels.romma`).
        ROMMA ignores ``margin`` and ``C`` and has no weighted or augmented form: it
        refuses ``delta > 0``, ``class_weight``, ``sample_weight`` and ``n_shards`` > 1
        (parameter mixing). Averaging and ``history_`` (which counts the mistakes and
        the updates of each epoch) work with every rule, and the Δ trick with the
        rules above.

        The adaptive and second-order rules keep statistics of their own beside the
        weights (a covariance, a correlation matrix, sums of squared gradients), their
        constants given by ``update_params``; the user guide's page "Adaptive and
        second-order updates" gives their updates and guarantees:

        - ``"cw"``: confidence-weighted learning, its variance form (Dredze, Crammer &
          Pereira 2008); no weighted form;
        - ``"eccw"``: exact convex confidence-weighted learning, the standard-deviation
          form (Crammer, Dredze & Pereira 2008); no weighted form;
        - ``"arow"``: adaptive regularization of weight vectors (Crammer, Kulesza &
          Dredze 2009);
        - ``"narow"``: AROW with a data-dependent regularization (Orabona & Crammer
          2010);
        - ``"scw-i"``, ``"scw-ii"``: soft confidence-weighted learning (Wang, Zhao & Hoi
          2012);
        - ``"nherd"``: normal herding (Crammer & Lee 2010);
        - ``"sop"``: the second-order perceptron (Cesa-Bianchi, Conconi & Gentile 2005);
        - ``"iellip"``: the improved ellipsoid method (Yang, Jin & Ye 2009);
        - ``"alma"``: approximate large margin algorithm (Gentile 2001);
        - ``"ogd"``: online gradient descent (Zinkevich 2003);
        - ``"fobos-l1"``, ``"stg"``: online gradient descent with an L1 penalty ``l1``
          (on by default, so these are not averaged), by forward-backward splitting
          (Duchi & Singer 2009) and by the truncated gradient every ``k`` rounds
          (Langford, Li & Zhang 2009), applied lazily: sparse models at O(nnz(x)) per
          update;
        - ``"ada-fobos"``, ``"ada-rda"``: AdaGrad, composite mirror descent and dual
          averaging forms (Duchi, Hazan & Singer 2011);
        - ``"ada-fobos-l1"``, ``"ada-rda-l1"``: the same two rules under SOL's names,
          their L1 strength ``l1`` on by default (0.001);
        - ``"nag"``: the normalized adaptive gradient (Ross, Mineiro & Langford 2013),
          Vowpal Wabbit's default update;
        - ``"ftrl"``: FTRL-Proximal with per-coordinate rates and L1/L2 (McMahan et
          al. 2013), on the hinge loss: with ``l1 > 0`` a sparse model, averaged exactly;
        - ``"rda"``, ``"rda-l1"``, ``"erda-l1"``: regularized dual averaging with a
          squared L2, a mixed L1 and squared L2, and the enhanced L1 regularizer (Xiao
          2010), the weights a function of the sum of the gradients and the rounds (so
          they cannot be averaged, nor mixed); ``l1`` makes the model sparse.

        The confidence rules are multiclass with one constraint against the best other
        class and a covariance per class (Crammer, Dredze & Kulesza 2009). These rules
        refuse ``delta > 0``.
    n_shards : int or None, default=None
        ``fit`` by iterative parameter mixing (McDonald, Hall & Mann 2010; see
        :func:`perceptrons.parallel.mix_threads`): the data split in ``n_shards`` shards
        (-1: one per CPU), each epoch run on every shard from the mixed weights, the
        shards' weights averaged, weighted by their updates (their mistakes, for the
        perceptron without margin); the shards run in threads, one per CPU at most. A
        different algorithm from the serial perceptron, close in accuracy: unlike
        scikit-learn's ``n_jobs``, the number of shards changes the model (the number
        of threads does not). None or 1 trains serially (and exactly as the textbook).
        ``partial_fit`` and ``fit_epochs`` are serial.
    margin : float, default=0.0
        ``update="perceptron"`` only: also update correct examples whose (signed) score
        is at most ``margin``: the perceptron with margin.
    C : float, default=1.0
        Aggressiveness of PA-I (MIRA) and PA-II (larger: bigger steps, less
        regularization), and of the adaptive rules that read it (the user guide's
        table of rules says which).
    class_weight : dict, "balanced" or None, default=None
        Weight of each class, ``{label: weight}`` (labels not named weigh 1), as in
        scikit-learn: example ``i`` weighs ``sample_weight[i] * class_weight[y_i]``, and
        a weight multiplies its update step (``w += s_i * step * y x``) and counts it
        ``s_i`` times in the average. ``"balanced"`` weighs class ``c`` by
        ``n_samples / (n_classes * n_c)``, computed on the labels given to ``fit``
        (``partial_fit`` refuses it: one batch does not tell the class frequencies).
        The adaptive and second-order rules say each what a weight counts (AROW: the
        example's loss ``s_i`` times, its ``r`` becoming ``r / s_i``; the user guide's
        page lists them all; CW refuses weights); weight 0 leaves the example out.
    update_params : dict or None, default=None
        The constants of the adaptive and second-order rules, named as their papers
        name them, e.g. ``{"r": 0.1}`` for ``update="arow"``; constants not given keep
        their defaults (None: all of them). An unknown name or a value outside the
        constant's interval is a ValueError naming it; the other rules take none.
        ``perceptrons inspect`` prints a model's constants, and ``perceptrons train
        --update-param NAME=VALUE`` sets them on the command line.
    covariance : {"diagonal", "full"}, default="diagonal"
        The covariance (or correlation matrix) of the rules that have a full form:
        ``"diagonal"`` keeps one variance per weight (the diagonal of the precision),
        O(nnz(x)) per update, for many features; ``"full"`` keeps a
        ``(n_features + 1)²`` matrix per class, O(n_features²) per update and in
        memory, for a few thousand features at most. The other rules refuse
        ``"full"``, and parameter mixing (``n_shards`` > 1) refuses it.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        The weights that predict: the last ones (:class:`Perceptron`) or the exact
        mean of all of them (:class:`AveragedPerceptron`); one row for binary
        problems, one per class otherwise.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The biases, last or averaged alike.
    classes_ : ndarray of shape (n_classes,)
        The sorted labels; a binary model's positive score predicts ``classes_[1]``.
    history_ : list of dict
        One record per epoch over all calls: ``epoch``, ``mistakes`` (the examples
        whose prediction, made before the update, was wrong: binary ``y score <= 0``,
        a zero score counting as a mistake; multiclass the highest-scoring class, ties
        to the lowest, not the gold one; with ``delta``, the scores include the
        example's own Δ feature), ``updates`` (the examples the rule updated the
        weights on; the margin rules also update on correct predictions of too small
        a margin; equal to ``mistakes`` for the perceptron without margin and the
        mistake-driven rules sop and iellip), ``examples``, and ``validation_score``
        when early stopping holds data out. At most the 10,000
        most recent records are kept (``epoch`` still counts from the first).
    n_iter_ : int
        Epochs run by the last ``fit`` (1 after ``partial_fit``).
    n_features_in_ : int
        Number of features seen in ``fit``.
"""


class Perceptron(ClassifierFace, core.Perceptron):
    __doc__ = (
        """The vanilla perceptron (Rosenblatt), binary or natively multiclass.

    Binary problems (two labels, mapped to -1/+1) keep one weight vector ``w`` and a
    bias ``b``; an example is a mistake when ``y (w·x + b) <= 0`` and then
    ``w += y x``, ``b += y``. With three or more labels there is one weight vector and
    bias per class, the prediction is the argmax, and a mistake subtracts ``x`` from
    the predicted class and adds it to the gold class (one pass per epoch, not
    one-vs-rest). ``update`` selects other rules of the same family: the perceptron with
    margin, the passive-aggressive updates (PA, PA-I, PA-II; Crammer et al. 2006), 1-best
    MIRA (Crammer & Singer 2003, the multiclass PA-I), ROMMA and aggressive ROMMA (Li &
    Long 2002), and the adaptive and second-order rules (CW, AROW, NAROW, SCW, NHERD, the
    second-order perceptron, IELLIP, ALMA, OGD, AdaGrad, NAG), whose constants are
    ``update_params``.
"""
        + _SHARED_PARAMETERS
        + """
    See Also
    --------
    AveragedPerceptron : the same updates, predicting with the mean weights.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from perceptrons import Perceptron
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = Perceptron(max_epochs=20, random_state=0).fit(X, y)
    >>> clf.coef_.shape
    (3, 4)
    >>> round(clf.score(X, y), 2)
    0.82

    ROMMA keeps the shortest weight vector that classifies the examples it updated on
    with margin 1. On the two linearly separable iris species it makes 2 mistakes, then
    an epoch without one (early stopping ends there):

    >>> two = y < 2
    >>> romma = Perceptron(update="romma", early_stopping=True, random_state=0)
    >>> [record["mistakes"] for record in romma.fit(X[two], y[two]).history_]
    [2, 0]
    """
    )


class AveragedPerceptron(ClassifierFace, core.AveragedPerceptron):
    __doc__ = (
        """The averaged perceptron: the perceptron's updates, the mean of its weights.

    Trains exactly like :class:`Perceptron` but predicts with the mean of the weight
    vectors and biases after every example seen, over all epochs and every ``fit`` and
    ``partial_fit`` call. The mean is computed with the auxiliary-vector-and-counter
    trick (Daumé 2006): O(nnz(x)) extra work per update, O(1) per correct example,
    one extra weight matrix of memory, and it can be read at any time.
"""
        + _SHARED_PARAMETERS
        + """
    See Also
    --------
    Perceptron : the same updates, predicting with the last weights.
    VotedPerceptron : every intermediate model votes (``prediction="average"`` is
        this model).

    Examples
    --------
    The mean of the weights generalizes better than the last ones (held-out digits):

    >>> from sklearn.datasets import load_digits
    >>> from perceptrons import AveragedPerceptron, Perceptron
    >>> X, y = load_digits(return_X_y=True)
    >>> averaged = AveragedPerceptron(random_state=0).fit(X[:1000], y[:1000])
    >>> vanilla = Perceptron(random_state=0).fit(X[:1000], y[:1000])
    >>> round(averaged.score(X[1000:], y[1000:]), 3), round(vanilla.score(X[1000:], y[1000:]), 3)
    (0.923, 0.906)

    On imbalanced classes, ``class_weight="balanced"`` weighs each class inversely to
    its frequency, so that the rare class is found far more often:

    >>> from sklearn.datasets import make_classification
    >>> from sklearn.metrics import balanced_accuracy_score, recall_score
    >>> X, y = make_classification(
    ...     n_samples=1000, weights=[0.95], flip_y=0.02, class_sep=0.5, random_state=0)
    >>> for class_weight in (None, "balanced"):
    ...     model = AveragedPerceptron(class_weight=class_weight, random_state=0)
    ...     predicted = model.fit(X[:500], y[:500]).predict(X[500:])
    ...     recall = recall_score(y[500:], predicted)  # of the rare class 1
    ...     balanced = balanced_accuracy_score(y[500:], predicted)
    ...     print(class_weight, round(recall, 3), round(balanced, 3))
    None 0.194 0.593
    balanced 0.722 0.745
    """
    )
