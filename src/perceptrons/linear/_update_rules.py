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
    covariance (CW, AROW, NAROW, SCW, NHERD): diagonal by default, full on request.
``"second-order"``
    The second-order perceptron and IELLIP (a correlation matrix of the examples updated
    on, or an ellipsoid), diagonal by default, full on request
    (:mod:`perceptrons._kernels.second_order`).
``"first-order"``
    ALMA (the approximate large margin algorithm, lazily scaled weights projected on
    the unit ball) and online gradient descent on the hinge loss
    (:mod:`perceptrons._kernels.first_order`).
``"adagrad"``
    AdaGrad's per-feature steps on the hinge loss, in the composite mirror descent
    (FOBOS, ``"ada-fobos"``) and regularized dual averaging (``"ada-rda"``) forms, and
    the normalized adaptive gradient (``"nag"``, Vowpal Wabbit's default update)
    (:mod:`perceptrons._kernels.adagrad`).
``"feature-selection"``
    Online feature selection to a budget of ``B`` features: a base rule's update, then
    ``Truncate(w, B)`` (keep the ``B`` features of best key, zero the others): PET and
    OFS (``"pet"``, ``"fofs"``, Wang, Zhao, Hoi & Jin 2014), SOFS (``"sofs"``, AROW's
    update, Wu, Hoi, Mei & Yu 2017), and AdaGrad's FOBOS and RDA updates truncated alike
    (``"adafobos-ofs"``, ``"adarda-ofs"``) (:mod:`perceptrons._kernels.feature_selection`).
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
    #: Whether only whole numbers are accepted (a count, such as a feature budget).
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
        left = "(" if self.low_open else "["
        right = ")" if self.high_open else "]"
        interval = f"{left}{self.low:g}, {self.high:g}{right}"
        return f"{interval} (an integer)" if self.integer else interval


@dataclass(frozen=True)
class UpdateRule:
    """An update rule of the online linear learners (see the module's families).

    ``constants``: the rule's own constants, given as ``update_params``; ``uses_C``: it
    reads the estimator's ``C`` (its aggressiveness); ``covariance``: it has the full
    covariance form besides the diagonal one; ``weighted``: it takes ``sample_weight``
    and ``class_weight``; ``delta_trick``: it takes ``delta > 0``; ``mixing``: why
    parameter mixing cannot train it (None: it can); ``summary`` and ``cite``: one line
    each for the command line's help and ``inspect``.
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

    def penalized(self, constants: Mapping[str, float]) -> bool:
        """Whether ``constants`` turn on the rule's penalty that moves every weight every
        round (applied lazily, see ``penalty``)."""
        return self.penalty is not None and constants.get(self.penalty, 0.0) > 0.0

    def example_rows_only(self, constants: Mapping[str, float]) -> bool:
        """Whether an epoch with ``constants`` reads and writes only the rows of its
        examples' features and the intercept's (the diagonal form)."""
        return not (self.every_row or self.penalized(constants))


# AdaGrad's constants (Duchi, Hazan & Singer 2011); the defaults of eta and delta match
# SOL's ada-fobos and ada-rda.
_ADAGRAD_CONSTANTS = {
    "eta": Constant(1.0, 0.0, low_open=True, doc="the learning rate"),
    "delta": Constant(
        10.0,
        0.0,
        low_open=True,
        doc="added to every per-feature step's denominator (H = delta I + diag(G)^(1/2))",
    ),
    "l1": Constant(0.0, 0.0, doc="the L1 penalty (lambda) on the feature weights"),
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

#: The families in the order the table lists them (the command line's help, inspect).
FAMILIES = (
    "perceptron",
    "romma",
    "confidence",
    "second-order",
    "first-order",
    "adagrad",
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
                constants={
                    "eta": Constant(1.0, 0.0, low_open=True, doc="the initial step size"),
                    "power_t": Constant(
                        0.5,
                        0.0,
                        doc="the decay: the t-th example's step is eta / t**power_t",
                    ),
                },
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
                mixing=(
                    "its weights are recomputed from each shard's own sum of gradients, "
                    "which would overwrite the mixed weights"
                ),
                every_row=True,
                penalty="l1",
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
                f"{owner}: update_params[{name!r}] for update={rule.name!r} must be a "
                f"finite number in {constant.interval}, got {value!r}{subnormal_hint(value)}"
            )
        values[name] = float(value)
    return values
