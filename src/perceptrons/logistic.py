"""Logistic regression trained online by SGD, binary and multinomial.

Configuration on the shared online engine (:mod:`perceptrons._online`), with its own
kernels (:mod:`perceptrons._kernels.logistic`) and the lazy scale of its prior.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from perceptrons import _params as rules
from perceptrons._kernels import logistic as _kernels
from perceptrons._linear import LogLinearProbabilities
from perceptrons._online import OnlineLinearClassifier
from perceptrons._states import LogisticState, TrainingState

__all__ = ["LogisticRegressionSGD"]

# The lazy prior's scale is folded back into the weights when it falls below this; a
# rescale costs O(n_features), once every log(min_scale) / log(1 - learning_rate * l2)
# examples. The averaged model's two terms, P * v and aux, grow to about 1 / min_scale
# times the sum they represent just before a rescale: its relative rounding error is
# about 2e-16 / min_scale, hence a larger threshold when averaging (at most ~2e-12).
_MIN_SCALE = 1e-9
_MIN_SCALE_AVERAGED = 1e-4


class LogisticRegressionSGD(LogLinearProbabilities, OnlineLinearClassifier):
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

    _state_class = LogisticState

    _rules: ClassVar[dict[str, rules.Rule]] = {
        **OnlineLinearClassifier._rules,
        "learning_rate": rules.real(0.0, inclusive=False),
        "l2": rules.real(0.0),
        "average": rules.boolean(),
        "class_weight": rules.class_weight(),
    }

    def __init__(
        self,
        *,
        learning_rate: float = 0.1,
        l2: float = 0.0,
        average: bool = False,
        max_epochs: int = 10,
        shuffle: bool = True,
        fit_intercept: bool = True,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
        class_weight: dict[Any, float] | str | None = None,
    ) -> None:
        self.learning_rate = learning_rate
        self.l2 = l2
        self.average = average
        self.max_epochs = max_epochs
        self.shuffle = shuffle
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.verbose = verbose
        self.class_weight = class_weight

    @property
    def _averaged(self) -> bool:
        return self.average

    def _check_params(self) -> None:
        """Each parameter's own rule, then the rules between parameters."""
        super()._check_params()
        if self.learning_rate * self.l2 >= 1.0:
            raise ValueError(
                f"{type(self).__name__}: learning_rate * l2 must be < 1 (each example "
                f"multiplies the weights by 1 - learning_rate * l2), got learning_rate="
                f"{self.learning_rate!r} and l2={self.l2!r}."
            )

    def _targets(self, codes: np.ndarray) -> np.ndarray:
        """0.0/1.0 for binary problems, class indices otherwise."""
        return codes.astype(np.float64) if self.classes_.shape[0] == 2 else codes

    def _epoch_kernel(
        self, state: TrainingState, multiclass: bool, slack: np.ndarray
    ) -> tuple[Callable[..., tuple[Any, int]], dict[str, Any]]:
        assert isinstance(state, LogisticState)  # the _state_class of this family
        kernel = _kernels.multinomial_epoch if multiclass else _kernels.binary_epoch
        rule = _kernels.sgd_rule(
            float(self.learning_rate),
            1.0 - float(self.learning_rate) * float(self.l2),
            bias_feature=1.0 if self.fit_intercept else 0.0,
            min_scale=_MIN_SCALE_AVERAGED if self.average else _MIN_SCALE,
        )
        return kernel, {"scales": state.scales, "rule": rule}

    def _epoch_record(self, statistic: float, n_examples: int, mistakes: int) -> dict[str, Any]:
        return {"log_loss": float(statistic) / max(n_examples, 1), "examples": n_examples}

    def _describe(self, record: dict[str, Any]) -> str:
        return f"mean log-loss {record['log_loss']:.4f} over {record['examples']} examples"
