"""The one table of the online linear learners' update rules: what each is called, which
family's kernels train it, its own constants, and what it supports.

Plain Python (no NumPy): the command line builds its ``--update`` choices and help from
it without importing the learners. The estimators (:mod:`perceptrons.perceptron`) check
``update``, ``update_params`` and ``covariance`` against it; each family's kernels live in
their own module of :mod:`perceptrons._kernels`, and :mod:`perceptrons.linear._families`
plugs every family into the one engine (its epochs, its ``rule`` array, its state).

Families
--------
``"perceptron"``
    The perceptron, with margin, and the passive-aggressive rules (one kernel,
    :mod:`perceptrons._kernels.perceptron`).
``"romma"``
    ROMMA and aggressive ROMMA (lazily scaled weights, :mod:`perceptrons._kernels.romma`).
``"confidence"``
    The second-order rules that keep a Gaussian over the weights, a mean and a
    covariance (CW, exact CW, AROW, NAROW, SCW, NHERD): diagonal by default, full on request.
``"second-order"``
    The second-order perceptron and IELLIP (a correlation matrix of the examples updated
    on, or an ellipsoid), diagonal by default, full on request
    (:mod:`perceptrons._kernels.second_order`).
``"first-order"``
    ALMA (the approximate large margin algorithm, lazily scaled weights projected on
    the unit ball) and online gradient descent on the hinge loss, plain and with an L1
    penalty applied lazily (FOBOS, truncated gradient)
    (:mod:`perceptrons._kernels.first_order`).
``"adagrad"``
    AdaGrad's per-feature steps on the hinge loss, in the composite mirror descent
    (FOBOS, ``"ada-fobos"``) and regularized dual averaging (``"ada-rda"``) forms, and
    the normalized adaptive gradient (``"nag"``, Vowpal Wabbit's default update)
    (:mod:`perceptrons._kernels.adagrad`).
``"ftrl"``
    FTRL-Proximal (McMahan et al. 2013): per-coordinate rates and L1/L2, each weight a
    function of two statistics of its own (:mod:`perceptrons._kernels.ftrl`).
``"dual-averaging"``
    Regularized dual averaging on the hinge loss (Xiao 2010): the weights a closed-form
    function of the sum of the gradients and of the rounds, with a squared L2
    (``"rda"``), a mixed L1 and squared L2 (``"rda-l1"``) or the enhanced L1
    (``"erda-l1"``) regularizer (:mod:`perceptrons._kernels.dual_averaging`).
``"feature-selection"``
    Online feature selection to a budget of ``B`` features: a base rule's update, then
    ``Truncate(w, B)`` (keep the ``B`` features of best key, zero the others): PET and
    OFS (``"pet"``, ``"fofs"``, Wang, Zhao, Hoi & Jin 2014), SOFS (``"sofs"``, AROW's
    update, Wu, Hoi, Mei & Yu 2017), and AdaGrad's FOBOS and RDA updates truncated alike
    (``"adafobos-ofs"``, ``"adarda-ofs"``) (:mod:`perceptrons._kernels.feature_selection`).

Over 600 lines: one table with an entry per rule and its constants, which the command
line reads whole; split, the rules would be listed in several places.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "RULES",
    "Constant",
    "UpdateRule",
    "check_update_params",
    "rule_of",
    "subnormal",
    "subnormal_hint",
]

#: The smallest positive normal float (NumPy's ``finfo(float).tiny``).
NORMAL_MIN = sys.float_info.min


def subnormal(value: float) -> bool:
    """Whether ``value`` is a nonzero float below the normal range: the kernels divide
    by the constants, and the reciprocal of a subnormal overflows to inf."""
    return value != 0.0 and abs(value) < NORMAL_MIN


def subnormal_hint(value: Any) -> str:
    """What a refusal of ``value`` adds when ``value`` is subnormal (else nothing)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return ""
    if not subnormal(float(value)):
        return ""
    return f" (subnormal: a nonzero value must be at least {NORMAL_MIN!r} in magnitude)"


@dataclass(frozen=True)
class Constant:
    """One constant of an update rule (named as its paper names it): its default, the
    interval it must lie in, and what it does."""

    default: float
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    doc: str = ""
    #: Only whole numbers are accepted (a count: a period in rounds, a feature budget).
    integer: bool = False

    def accepts(self, value: Any) -> bool:
        # A real number (NumPy's included), not a bool and not a string that parses as one.
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        value = float(value)
        if not math.isfinite(value) or subnormal(value):
            return False
        if self.integer and not value.is_integer():
            return False
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below

    @property
    def interval(self) -> str:
        """What a value must be: ``"a finite number in [0, inf]"``, ``"an integer in [1,
        inf]"``."""
        left = "(" if self.low_open else "["
        right = ")" if self.high_open else "]"
        kind = "an integer" if self.integer else "a finite number"
        return f"{kind} in {left}{self.low:g}, {self.high:g}{right}"


@dataclass(frozen=True)
class UpdateRule:
    """An update rule of the online linear learners (see the module's families).

    ``constants``: the rule's own constants, given as ``update_params``; ``uses_C``: it
    reads the estimator's ``C`` (its aggressiveness); ``covariance``: it has the full
    covariance form besides the diagonal one; ``weighted``: it takes ``sample_weight``
    and ``class_weight``; ``delta_trick``: it takes ``delta > 0``; ``mixing``: why
    parameter mixing cannot train it (None: it can); ``averaging``: why the averaged
    model cannot be computed whatever the constants (None: it can, unless ``penalty`` is
    on); ``summary`` and ``cite``: one line each for the command line's help and
    ``inspect``; ``same_as``: the rule whose kernels and training state this one is
    (the same update under another name, with defaults of its own; None: its own).
    """

    name: str
    family: str
    summary: str
    cite: str
    constants: dict[str, Constant] = field(default_factory=dict)
    uses_C: bool = False
    uses_margin: bool = False
    covariance: bool = False
    weighted: bool = True
    delta_trick: bool = False
    mixing: str | None = None
    every_row: bool = False
    penalty: str | None = None
    averaging: str | None = None
    same_as: str | None = None

    @property
    def defaults(self) -> dict[str, float]:
        """The default value of each constant."""
        return {name: constant.default for name, constant in self.constants.items()}

    def averageable(self, constants: Mapping[str, float] | None = None) -> bool:
        """Whether the averaged model can be computed under ``constants`` (the defaults
        when None): no ``averaging`` refusal in the table and the ``penalty`` off."""
        return self.averaging is None and not self.penalized(
            self.defaults if constants is None else constants
        )

    @property
    def kernel_name(self) -> str:
        """The name the family's kernels and states know this rule by."""
        return self.same_as or self.name

    def penalized(self, constants: Mapping[str, float]) -> bool:
        """Whether ``constants`` turn on the rule's penalty that moves every weight every
        round (applied lazily, see ``penalty``)."""
        return self.penalty is not None and constants.get(self.penalty, 0.0) > 0.0

    def example_rows_only(self, constants: Mapping[str, float]) -> bool:
        """Whether an epoch with ``constants`` reads and writes only the rows of its
        examples' features and the intercept's (the diagonal form)."""
        return not (self.every_row or self.penalized(constants))


def _adagrad_constants(l1: float) -> dict[str, Constant]:
    """AdaGrad's constants (Duchi, Hazan & Singer 2011), with ``l1`` the default L1
    strength; the defaults of eta and delta match SOL's ada-fobos and ada-rda."""
    return {
        "eta": Constant(1.0, 0.0, low_open=True, doc="the learning rate"),
        "delta": Constant(
            10.0,
            0.0,
            low_open=True,
            doc="added to every per-feature step's denominator (H = delta I + diag(G)^(1/2))",
        ),
        "l1": Constant(l1, 0.0, doc="the L1 penalty (lambda) on the feature weights"),
    }


_ADAGRAD_CONSTANTS = _adagrad_constants(0.0)
# SOL's ada-fobos-l1 and ada-rda-l1 are ada-fobos and ada-rda with an L1 strength (SOL's
# default lambda is 0). This one makes a9a's models visibly sparser at the same accuracy
# (10 epochs, random_state=0: ada-fobos 120 -> 86 nonzero weights, test accuracy 0.8486
# -> 0.8484; ada-rda 117 -> 42, 0.8478 -> 0.8496).
_ADAGRAD_L1 = 0.001
_ADA_RDA_MIXING = (
    "its weights are recomputed from each shard's own sum of gradients, "
    "which would overwrite the mixed weights"
)


# FTRL-Proximal's constants (McMahan et al. 2013, Algorithm 1): the per-coordinate rate
# eta_j = alpha / (beta + sqrt(n_j)). The defaults were measured on the hinge loss (10
# epochs, averaged; accuracy and nonzero weights): 20 Newsgroups TF-IDF 0.8676 with 10.0%
# of the weights nonzero (l1 = 0: 0.8638, 23.3%; ada-fobos 0.8648, 33.9%), a9a 0.8499
# (l1 = 0: 0.8501); Vowpal Wabbit's alpha 0.005, beta 0.1, l1 0 (for its logistic loss)
# gave 0.8525 with 50.8% and 0.8259. l1 scales with the gradients, so with the features.
_FTRL_CONSTANTS = {
    "alpha": Constant(
        0.1,
        0.0,
        low_open=True,
        doc="the rates' scale: a weight's rate is alpha / (beta + sqrt(n)), n its summed "
        "squared gradients",
    ),
    "beta": Constant(
        0.1, 0.0, doc="added to sqrt(n) in every rate's denominator (the rates' start)"
    ),
    "l1": Constant(
        0.3,
        0.0,
        doc="the L1 strength lambda1: a weight is exactly 0 while abs(z) is at most l1",
    ),
    "l2": Constant(0.0, 0.0, doc="the L2 strength lambda2 on the feature weights"),
}


def _confidence_eta(default: float) -> Constant:
    """The confidence ``eta`` of the CW rules, in (0.5, 1): ``φ = Φ⁻¹(eta) > 0``."""
    return Constant(
        default,
        0.5,
        1.0,
        low_open=True,
        high_open=True,
        doc="the confidence: the probability of a correct prediction each update demands",
    )


# Online gradient descent's step (Zinkevich 2003), shared by its L1 forms.
_OGD_CONSTANTS = {
    "eta": Constant(1.0, 0.0, low_open=True, doc="the initial step size"),
    "power_t": Constant(
        0.5,
        0.0,
        doc="the decay: the t-th example's step is eta / t**power_t",
    ),
}
# The default: on a9a (10 epochs), 91 of OGD's 120 nonzero weights at 84.90% test
# accuracy against 84.91% (2e-3: 78 at 84.57%; 3e-3: 73 at 83.46%). Its scale is the
# features': TF-IDF rows of norm 1 want about 1e-4 or less (see
# perceptrons._kernels.first_order).
_OGD_L1 = Constant(
    1e-3,
    0.0,
    doc="the L1 penalty (lambda) on the feature weights: each round shrinks them by eta_t lambda",
)
_INITIAL_VARIANCE = Constant(1.0, 0.0, low_open=True, doc="the initial variance of every weight")
# The feature budget of the feature-selection family (Wang, Zhao, Hoi & Jin 2014). A
# budget rule without a budget would be its base rule, so B has a finite default: 100
# features, which leaves a small problem whole and is meant to be set for a large one.
_BUDGET = Constant(
    100.0,
    1.0,
    integer=True,
    doc="the budget: how many features (besides the intercept) keep nonzero weights",
)
_BUDGET_MIXING = (
    "the mixed model may use more than B features: each shard keeps its own B, and their "
    "mean is truncated by no rule of its own"
)
_ROMMA_MIXING = "every ROMMA update rescales all the weights, which the shards cannot share"
_ALMA_MIXING = (
    "every ALMA update projects a class's weights on the unit ball, rescaling all of them, "
    "which the shards cannot share"
)

# Regularized dual averaging (Xiao 2010). The defaults, measured on a9a (the given
# split, 10 epochs, random_state=0): sigma = 0.003 is the best of 1e-5..1 (84.9% test
# accuracy; SOL's sigma = 1 leaves the weights too small to reach the hinge's margin:
# 76.4%, the majority class); gamma = 1 the best of 0.1..100 (84.8%). l1 = 1e-4 keeps
# 93 of the 118 weights rda uses at the same 84.9% (erda-l1: 91, 84.85%); on 20
# Newsgroups TF-IDF (unit rows) it keeps 0.34% of the weights at 76.7% against rda's
# 83.4% (l1 = 1e-5: 8.9% at 82.5%; 1e-3 keeps 63 weights, 41%, though a9a loses only
# 0.2 points at 1e-3): text wants a smaller l1.
_RDA_SIGMA = Constant(
    0.003,
    0.0,
    low_open=True,
    doc="sigma: the squared L2 regularizer (sigma/2)||w||^2; the weights are divided by sigma t",
)
_RDA_L1 = Constant(0.0001, 0.0, doc="the L1 penalty (lambda) on the feature weights")
_RDA_MIXING = (
    "its weights are recomputed from each shard's own sum of gradients, which would "
    "overwrite the mixed weights"
)
_RDA_AVERAGING = (
    "its weights are recomputed from the sum of the gradients and the rounds, so every "
    "weight moves every round, which the average cannot follow at O(nnz) cost"
)

#: The families in the order the table lists them (the command line's help, inspect).
FAMILIES = (
    "perceptron",
    "romma",
    "confidence",
    "second-order",
    "first-order",
    "adagrad",
    "ftrl",
    "dual-averaging",
    "feature-selection",
)

RULES: dict[str, UpdateRule] = {
    rule.name: rule
    for rule in sorted(
        (
            UpdateRule(
                "perceptron",
                "perceptron",
                "the perceptron (with margin)",
                "Rosenblatt 1958",
                uses_margin=True,
                delta_trick=True,
            ),
            UpdateRule(
                "pa", "perceptron", "passive-aggressive", "Crammer et al. 2006", delta_trick=True
            ),
            UpdateRule(
                "pa-i",
                "perceptron",
                "passive-aggressive PA-I",
                "Crammer et al. 2006",
                uses_C=True,
                delta_trick=True,
            ),
            UpdateRule(
                "pa-ii",
                "perceptron",
                "passive-aggressive PA-II",
                "Crammer et al. 2006",
                uses_C=True,
                delta_trick=True,
            ),
            UpdateRule(
                "mira",
                "perceptron",
                "1-best MIRA (the same as PA-I)",
                "Crammer & Singer 2003",
                uses_C=True,
                delta_trick=True,
            ),
            UpdateRule(
                "romma",
                "romma",
                "ROMMA",
                "Li & Long 2002",
                weighted=False,
                mixing=_ROMMA_MIXING,
                every_row=True,
            ),
            UpdateRule(
                "aggressive-romma",
                "romma",
                "aggressive ROMMA",
                "Li & Long 2002",
                weighted=False,
                mixing=_ROMMA_MIXING,
                every_row=True,
            ),
            UpdateRule(
                "arow",
                "confidence",
                "adaptive regularization of weight vectors (AROW)",
                "Crammer, Kulesza & Dredze 2009",
                constants={
                    "r": Constant(
                        1.0,
                        0.0,
                        low_open=True,
                        doc="the regularization: larger r, smaller and slower-shrinking steps",
                    ),
                    "a": Constant(
                        1.0, 0.0, low_open=True, doc="the initial variance of every weight"
                    ),
                },
                covariance=True,
            ),
            # The second-order family (perceptrons._kernels.second_order).
            UpdateRule(
                "sop",
                "second-order",
                "the second-order perceptron",
                "Cesa-Bianchi, Conconi & Gentile 2005",
                constants={
                    "a": Constant(
                        1.0,
                        0.0,
                        low_open=True,
                        doc="the correlation matrix's initial a I: larger a, closer to the "
                        "first-order perceptron",
                    ),
                },
                covariance=True,
            ),
            UpdateRule(
                "iellip",
                "second-order",
                "the improved ellipsoid method (IELLIP)",
                "Yang, Jin & Ye 2009",
                constants={
                    "a": Constant(
                        1.0,
                        0.0,
                        low_open=True,
                        doc="the initial ellipsoid a I (the steps are invariant to its scale)",
                    ),
                    "b": Constant(
                        0.3,
                        0.0,
                        1.0,
                        low_open=True,
                        high_open=True,
                        doc="the decay of c per example: the ellipsoid's memory",
                    ),
                    "c": Constant(
                        0.1,
                        0.0,
                        1.0,
                        low_open=True,
                        high_open=True,
                        doc="how much a mistake first shrinks the ellipsoid along x",
                    ),
                },
                covariance=True,
            ),
            # ---------------------------------------------------------------- first-order
            UpdateRule(
                "alma",
                "first-order",
                "ALMA_2, the approximate large margin algorithm",
                "Gentile 2001",
                constants={
                    "alpha": Constant(
                        0.9,
                        0.0,
                        1.0,
                        low_open=True,
                        doc="the approximation: update while the normalized margin is at most "
                        "(1 - alpha) B / sqrt(k) (k: the updates so far, from 1)",
                    ),
                    "B": Constant(
                        1.0 / 0.9,
                        0.0,
                        low_open=True,
                        doc="the margin's scale; the paper's B = 1/alpha at the default alpha "
                        "(set it to 1/alpha with another alpha to keep the paper's choice)",
                    ),
                    "step": Constant(
                        math.sqrt(2.0),
                        0.0,
                        low_open=True,
                        doc="the paper's C: the k-th update adds step / sqrt(k) times the "
                        "normalized example",
                    ),
                },
                mixing=_ALMA_MIXING,
                every_row=True,
            ),
            UpdateRule(
                "ogd",
                "first-order",
                "online gradient descent on the hinge loss",
                "Zinkevich 2003",
                constants=_OGD_CONSTANTS,
            ),
            UpdateRule(
                "fobos-l1",
                "first-order",
                "forward-backward splitting (FOBOS) with L1, on the hinge loss",
                "Duchi & Singer 2009",
                constants={**_OGD_CONSTANTS, "l1": _OGD_L1},
                penalty="l1",
            ),
            UpdateRule(
                "stg",
                "first-order",
                "sparse online learning via truncated gradient, on the hinge loss",
                "Langford, Li & Zhang 2009",
                constants={
                    **_OGD_CONSTANTS,
                    "l1": _OGD_L1,
                    # k = 1 by default, as SOL's stg: the paper's K > 1 saves the
                    # eager truncation's O(dimension) pass, which the lazy form never
                    # makes, and truncating every round is the most even shrinking.
                    "k": Constant(
                        1.0,
                        1.0,
                        integer=True,
                        doc="the period: every k-th round truncates the weights by k times "
                        "the round's eta_t l1 (k = 1: fobos-l1)",
                    ),
                },
                penalty="l1",
            ),
            # The adagrad family: per-feature steps from each feature's gradient history
            # (perceptrons._kernels.adagrad).
            UpdateRule(
                "ada-fobos",
                "adagrad",
                "AdaGrad, composite mirror descent (FOBOS) form, on the hinge loss",
                "Duchi, Hazan & Singer 2011",
                constants=_ADAGRAD_CONSTANTS,
                penalty="l1",
            ),
            UpdateRule(
                "ada-rda",
                "adagrad",
                "AdaGrad, regularized dual averaging (RDA) form, on the hinge loss",
                "Duchi, Hazan & Singer 2011",
                constants=_ADAGRAD_CONSTANTS,
                mixing=_ADA_RDA_MIXING,
                every_row=True,
                penalty="l1",
            ),
            UpdateRule(
                "ada-fobos-l1",
                "adagrad",
                "ada-fobos with an L1 penalty on by default (SOL's name)",
                "Duchi, Hazan & Singer 2011",
                constants=_adagrad_constants(_ADAGRAD_L1),
                penalty="l1",
                same_as="ada-fobos",
            ),
            UpdateRule(
                "ada-rda-l1",
                "adagrad",
                "ada-rda with an L1 penalty on by default (SOL's name)",
                "Duchi, Hazan & Singer 2011",
                constants=_adagrad_constants(_ADAGRAD_L1),
                mixing=_ADA_RDA_MIXING,
                every_row=True,
                penalty="l1",
                same_as="ada-rda",
            ),
            UpdateRule(
                "nag",
                "adagrad",
                "normalized adaptive gradient (NAG, Vowpal Wabbit's default), on the hinge loss",
                "Ross, Mineiro & Langford 2013",
                constants={
                    "eta": Constant(0.5, 0.0, low_open=True, doc="the learning rate"),
                },
            ),
            UpdateRule(
                "ftrl",
                "ftrl",
                "FTRL-Proximal with per-coordinate rates and L1/L2, on the hinge loss",
                "McMahan et al. 2013",
                constants=_FTRL_CONSTANTS,
                mixing=(
                    "its weights are recomputed from each shard's own statistics z and n, "
                    "which would overwrite the mixed weights"
                ),
            ),
            # The dual-averaging family (perceptrons._kernels.dual_averaging).
            UpdateRule(
                "rda",
                "dual-averaging",
                "regularized dual averaging (RDA), squared L2, on the hinge loss",
                "Xiao 2010",
                constants={"sigma": _RDA_SIGMA},
                mixing=_RDA_MIXING,
                every_row=True,
                averaging=_RDA_AVERAGING,
            ),
            UpdateRule(
                "rda-l1",
                "dual-averaging",
                "regularized dual averaging (RDA), mixed L1 and squared L2, on the hinge loss",
                "Xiao 2010",
                constants={"sigma": _RDA_SIGMA, "l1": _RDA_L1},
                mixing=_RDA_MIXING,
                every_row=True,
                penalty="l1",
                averaging=_RDA_AVERAGING,
            ),
            UpdateRule(
                "erda-l1",
                "dual-averaging",
                "enhanced L1 regularized dual averaging, on the hinge loss",
                "Xiao 2010",
                constants={
                    "gamma": Constant(
                        1.0,
                        0.0,
                        low_open=True,
                        doc="gamma: the proximal term's beta_t = gamma sqrt(t); the weights "
                        "are divided by gamma sqrt(t)",
                    ),
                    "rho": Constant(
                        0.0,
                        0.0,
                        doc="rho: the enhanced threshold lambda + gamma rho / sqrt(t) of the "
                        "averaged gradient (0: plain L1)",
                    ),
                    "l1": _RDA_L1,
                },
                mixing=_RDA_MIXING,
                every_row=True,
                penalty="l1",
                averaging=_RDA_AVERAGING,
            ),
            # The confidence family's other rules (with AROW above).
            UpdateRule(
                "cw",
                "confidence",
                "confidence-weighted learning (CW, the variance form)",
                "Dredze, Crammer & Pereira 2008",
                constants={
                    "eta": _confidence_eta(0.7),
                    "a": _INITIAL_VARIANCE,
                },
                covariance=True,
                weighted=False,
            ),
            UpdateRule(
                "eccw",
                "confidence",
                "exact convex confidence-weighted learning (the standard-deviation form)",
                "Crammer, Dredze & Pereira 2008",
                constants={
                    # eta = 0.7: phi = 0.5244, SOL's eccw default (and CW's here).
                    "eta": _confidence_eta(0.7),
                    "a": _INITIAL_VARIANCE,
                },
                covariance=True,
                # A constraint, not a loss: nothing for a weight to multiply (as CW).
                weighted=False,
            ),
            UpdateRule(
                "scw-i",
                "confidence",
                "soft confidence-weighted learning SCW-I",
                "Wang, Zhao & Hoi 2012",
                constants={
                    "eta": _confidence_eta(0.75),
                    "a": _INITIAL_VARIANCE,
                },
                uses_C=True,
                covariance=True,
            ),
            UpdateRule(
                "scw-ii",
                "confidence",
                "soft confidence-weighted learning SCW-II",
                "Wang, Zhao & Hoi 2012",
                constants={
                    "eta": _confidence_eta(0.9),
                    "a": _INITIAL_VARIANCE,
                },
                uses_C=True,
                covariance=True,
            ),
            UpdateRule(
                "narow",
                "confidence",
                "narrow adaptive regularization (NAROW)",
                "Orabona & Crammer 2010",
                constants={
                    "b": Constant(
                        1.0,
                        0.0,
                        low_open=True,
                        doc="updates only where the variance exceeds 1 / b; larger b, more updates",
                    ),
                    "a": _INITIAL_VARIANCE,
                },
                covariance=True,
            ),
            UpdateRule(
                "nherd",
                "confidence",
                "normal herding (NHERD)",
                "Crammer & Lee 2010",
                constants={"a": _INITIAL_VARIANCE},
                uses_C=True,
                covariance=True,
            ),
            # The feature-selection family: a base rule's update, then Truncate(w, B)
            # (perceptrons._kernels.feature_selection).
            UpdateRule(
                "pet",
                "feature-selection",
                "the perceptron with truncation to a budget of B features (PET)",
                "Wang, Zhao, Hoi & Jin 2014",
                constants={
                    "eta": Constant(
                        1.0,
                        0.0,
                        low_open=True,
                        doc="the step (it scales the weights, not the predictions)",
                    ),
                    "B": _BUDGET,
                },
                mixing=_BUDGET_MIXING,
                every_row=True,
            ),
            UpdateRule(
                "fofs",
                "feature-selection",
                "online feature selection by sparse projection (OFS, first order)",
                "Wang, Zhao, Hoi & Jin 2014",
                constants={
                    # eta <= 1 and l2 < 1: the shrinking factor 1 - l2 * eta is positive.
                    "eta": Constant(0.2, 0.0, 1.0, low_open=True, doc="the step size"),
                    "l2": Constant(
                        0.01,
                        0.0,
                        1.0,
                        low_open=True,
                        high_open=True,
                        doc="the L2 penalty (lambda): every update shrinks the feature weights "
                        "by 1 - l2 * eta and projects them on the ball of radius 1 / sqrt(l2)",
                    ),
                    "B": _BUDGET,
                },
                mixing=_BUDGET_MIXING,
                every_row=True,
            ),
            UpdateRule(
                "sofs",
                "feature-selection",
                "second-order online feature selection (SOFS: AROW's update, the B most "
                "confident features kept)",
                "Wu, Hoi, Mei & Yu 2017",
                constants={
                    "r": Constant(
                        1.0,
                        0.0,
                        low_open=True,
                        doc="AROW's regularization: larger r, smaller and slower-shrinking steps",
                    ),
                    "a": _INITIAL_VARIANCE,
                    "B": _BUDGET,
                },
                mixing=_BUDGET_MIXING,
                every_row=True,
            ),
            UpdateRule(
                "adafobos-ofs",
                "feature-selection",
                "AdaGrad (FOBOS form) with the B features of largest steps' denominators kept",
                "Duchi, Hazan & Singer 2011; Wu, Hoi, Mei & Yu 2017",
                constants={
                    "eta": _ADAGRAD_CONSTANTS["eta"],
                    "delta": _ADAGRAD_CONSTANTS["delta"],
                    "B": _BUDGET,
                },
                mixing=_BUDGET_MIXING,
                every_row=True,
            ),
            UpdateRule(
                "adarda-ofs",
                "feature-selection",
                "AdaGrad (RDA form) with the B features of largest steps' denominators kept",
                "Duchi, Hazan & Singer 2011; Wu, Hoi, Mei & Yu 2017",
                constants={
                    "eta": _ADAGRAD_CONSTANTS["eta"],
                    "delta": _ADAGRAD_CONSTANTS["delta"],
                    "B": _BUDGET,
                },
                mixing=_BUDGET_MIXING,
                every_row=True,
            ),
        ),
        key=lambda rule: FAMILIES.index(rule.family),  # stable: the table's order within
    )
}


def rule_of(name: str) -> UpdateRule:
    """The rule called ``name`` (a ValueError listing the rules otherwise)."""
    try:
        return RULES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"update must be one of {', '.join(map(repr, RULES))}, got {name!r}"
        ) from None


def check_update_params(owner: str, rule: UpdateRule, params: Any) -> dict[str, float]:
    """The rule's constants: its defaults, overridden by ``params`` (a dict or None), each
    checked; a ValueError names an unknown or invalid one."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ValueError(
            f"{owner}: update_params must be a dict or None, got {type(params).__name__}"
        )
    unknown = [name for name in params if name not in rule.constants]
    if unknown:
        known = ", ".join(rule.constants) or "none"
        raise ValueError(
            f"{owner}: update={rule.name!r} has no constant {unknown[0]!r} in update_params "
            f"(its constants: {known})"
        )
    values = {}
    for name, constant in rule.constants.items():
        value = params.get(name, constant.default)
        if not constant.accepts(value):
            raise ValueError(
                f"{owner}: update_params[{name!r}] for update={rule.name!r} must be "
                f"{constant.interval}, got {value!r}{subnormal_hint(value)}"
            )
        values[name] = float(value)
    return values
