"""The one table of the online linear learners' update rules: what each is called, which
family's kernels train it, its own constants, and what it supports.

Plain Python (no NumPy): the command line builds its ``--update`` choices and help from
it without importing the learners. The estimators (:mod:`perceptrons.perceptron`) check
``update``, ``update_params`` and ``covariance`` against it; each family's kernels live in
their own module of :mod:`perceptrons._kernels` (see :mod:`perceptrons._adaptive` for the
families that keep per-feature statistics).

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
    on, or an ellipsoid).
``"gradient"``
    The first-order adaptive rules: ALMA, OGD, AdaGrad (FOBOS and RDA) and the
    normalized adaptive update.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RULES", "Constant", "UpdateRule", "check_update_params", "rule_of"]


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

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            try:  # NumPy scalars
                value = float(value)
            except (TypeError, ValueError):
                return False
            if isinstance(value, bool):
                return False
        value = float(value)
        if not math.isfinite(value):
            return False
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below

    @property
    def interval(self) -> str:
        left = "(" if self.low_open else "["
        right = ")" if self.high_open else "]"
        return f"{left}{self.low:g}, {self.high:g}{right}"


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
_ROMMA_MIXING = "every ROMMA update rescales all the weights, which the shards cannot share"

RULES: dict[str, UpdateRule] = {
    rule.name: rule
    for rule in (
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
            "romma", "romma", "ROMMA", "Li & Long 2002", weighted=False, mixing=_ROMMA_MIXING
        ),
        UpdateRule(
            "aggressive-romma",
            "romma",
            "aggressive ROMMA",
            "Li & Long 2002",
            weighted=False,
            mixing=_ROMMA_MIXING,
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
                "a": Constant(1.0, 0.0, low_open=True, doc="the initial variance of every weight"),
            },
            covariance=True,
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
                f"finite number in {constant.interval}, got {value!r}"
            )
        values[name] = float(value)
    return values
