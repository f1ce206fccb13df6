"""How each family of update rules (:data:`perceptrons.linear._update_rules.RULES`) plugs into
the one engine, and a configuration resolved once.

A family is one entry of :data:`FAMILIES`: its compiled epochs (binary and multiclass,
diagonal and full, chosen the same way for every family), how their ``rule`` array is
packed (each kernel module names the constants it reads, :func:`Family.rule_array`), and
its training state (:mod:`perceptrons._states`; the rules that keep statistics of their
own get an :class:`~perceptrons._states.AdaptiveState` configuration: which statistics,
their initial values, diagonal or full). The engine's loop, checks, averaging, model
files and mixing are the same for every rule.

:func:`resolve_rule` turns an estimator's ``update``, ``update_params`` and
``covariance`` into a :class:`ResolvedRule` once per configuration (checked, cached):
the epochs read it rather than look the rule up again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from perceptrons._states import (
    AlmaState,
    PerceptronState,
    RommaState,
    TrainingState,
    adaptive_state,
)
from perceptrons.linear._update_rules import UpdateRule, check_update_params, rule_of

__all__ = ["FAMILIES", "Family", "ResolvedRule", "resolve_rule"]

#: A family's epoch kernel; they return ``(updates, mistakes, count)``.
Kernel = Callable[..., tuple[Any, ...]]


@dataclass(frozen=True)
class Settings:
    """The estimator's parameters a ``rule`` array may carry beside the rule's constants."""

    bias_feature: float
    C: float
    margin: float
    delta: float


@dataclass(frozen=True)
class Family:
    """One family of rules: the module of :mod:`perceptrons._kernels` holding its epochs
    (``kernels()``, imported on first use: predicting and the command line's other
    commands need none), the names of those epochs by ``(multiclass, full)``, how its ``rule`` array
    is packed, and its training state."""

    kernels: Callable[[], ModuleType]
    epochs: Mapping[tuple[str, bool, bool], str]
    pack: Callable[[Any, str, Mapping[str, float], Settings], np.ndarray]
    state: Callable[[UpdateRule, Mapping[str, float], bool], type[TrainingState]]
    #: Whether a call with these constants on this state first recomputes every weight:
    #: a family whose weights are a function of their statistics and of the constants,
    #: when the constants changed since the weights were computed (None: never). Such a
    #: call writes every row.
    remakes: Callable[[TrainingState, Mapping[str, float]], bool] | None = None

    def epoch(self, rule: str, multiclass: bool, full: bool) -> Kernel:
        """The compiled epoch of ``rule`` in the form ``(multiclass, full)``."""
        name = self.epochs.get((rule, multiclass, full)) or self.epochs[("*", multiclass, full)]
        return getattr(self.kernels(), name)

    def rule_array(
        self, rule: str, constants: Mapping[str, float], settings: Settings
    ) -> np.ndarray:
        """The ``rule`` argument of the family's epochs."""
        return self.pack(self.kernels(), rule, constants, settings)


def _forms(prefix: str = "", *, full: bool = False, rule: str = "*") -> dict:
    """The epochs ``{prefix}binary_epoch`` and ``{prefix}multiclass_epoch`` (and their
    ``_full`` forms) of ``rule`` (``"*"``: every rule of the family)."""
    forms = {}
    for multiclass in (False, True):
        shape = "multiclass" if multiclass else "binary"
        forms[(rule, multiclass, False)] = f"{prefix}{shape}_epoch"
        if full:
            forms[(rule, multiclass, True)] = f"{prefix}{shape}_epoch_full"
    return forms


# ------------------------------------------------------------------ the states
def _perceptron_state(rule: UpdateRule, constants: Mapping[str, float], full: bool) -> type:
    return PerceptronState


def _romma_state(rule: UpdateRule, constants: Mapping[str, float], full: bool) -> type:
    return RommaState


def _confidence_state(rule: UpdateRule, constants: Mapping[str, float], full: bool) -> type:
    # One covariance, starting at a I (AROW's Σ_0 = I: a = 1).
    return adaptive_state(rule.family, (constants.get("a", 1.0),), full=full, stats_low=0.0)


def _second_order_state(rule: UpdateRule, constants: Mapping[str, float], full: bool) -> type:
    # Named by the rule: the two rules' statistics have different layouts.
    a = constants["a"]
    if rule.name == "sop":
        # The correlation a I + Σ x xᵀ of the examples updated on, shared by the
        # classes: its diagonal, or its inverse (full).
        initial = 1.0 / a if full else a
        return adaptive_state(rule.name, (initial,), full=full, per_class=False, stats_low=0.0)
    # IELLIP: the ellipsoid per class (up to its scale), starting at a I, and c_t.
    return adaptive_state(rule.name, (a,), (constants["c"],), full=full, stats_low=0.0)


def _first_order_state(rule: UpdateRule, constants: Mapping[str, float], full: bool) -> type:
    if rule.name == "alma":
        # Per class: scale 1, scale_sum 0, ||w||² 0; the update counter k from 1.
        return adaptive_state(rule.name, (1.0, 0.0, 0.0), (1.0,), stats_low=0.0, base=AlmaState)
    if rule.name == "stg":
        # t; the rounds since the last truncation and their total weight.
        return adaptive_state(rule.name, (), (0.0, 0.0, 0.0))
    # OGD (and FOBOS-L1, whose L1 shrinking is caught up within each epoch): explicit
    # weights and t, the examples seen.
    return adaptive_state(rule.name, (), (0.0,))


def _adagrad_state(rule: UpdateRule, constants: Mapping[str, float], full: bool) -> type:
    # The sums of squared gradients G (and RDA's sum of gradients u, of either sign;
    # NAG's scales s), all from 0; scalars: the rounds' weight t (NAG: and N).
    name = rule.kernel_name
    if name == "ada-fobos":
        return adaptive_state(name, (0.0,), (0.0,), stats_low=0.0)
    if name == "ada-rda":
        # RDA's scalars also hold the eta, delta and l1 its weights were made with.
        return adaptive_state(name, (0.0, 0.0), (0.0, 0.0, 0.0, 0.0))
    return adaptive_state(name, (0.0, 0.0), (0.0, 0.0), stats_low=0.0)


def _ftrl_state(rule: UpdateRule, constants: Mapping[str, float], full: bool) -> type:
    # z (of either sign) and n, from 0; scalars: the alpha, beta, l1 and l2 the weights
    # were computed with (0 before the first epoch).
    return adaptive_state(rule.name, (0.0, 0.0), (0.0, 0.0, 0.0, 0.0))


def _ftrl_remakes(state: TrainingState, constants: Mapping[str, float]) -> bool:
    scalars = getattr(state, "scalars", None)
    return scalars is not None and not _ftrl_kernels().made_with(scalars, constants)


def _dual_averaging_state(rule: UpdateRule, constants: Mapping[str, float], full: bool) -> type:
    # The sum of the gradients u (of either sign) from 0; scalars: the rounds' weight t,
    # then the sigma, gamma, rho and l1 the weights were made with.
    return adaptive_state(rule.name, (0.0,), (0.0, 0.0, 0.0, 0.0, 0.0))


def _feature_selection_state(rule: UpdateRule, constants: Mapping[str, float], full: bool) -> type:
    # The base rule's statistics (sofs: AROW's variances from a; the AdaGrad rules: G,
    # and RDA's u of either sign); the kept features' heap is rebuilt by every call.
    if rule.name == "sofs":
        return adaptive_state(rule.name, (constants["a"],), stats_low=0.0)
    if rule.name == "adafobos-ofs":
        return adaptive_state(rule.name, (0.0,), stats_low=0.0)
    if rule.name == "adarda-ofs":
        return adaptive_state(rule.name, (0.0, 0.0))
    return adaptive_state(rule.name, ())


# ------------------------------------------------------------------ the rule arrays
# 1-best MIRA (Crammer & Singer 2003) is the multiclass PA-I update: the same kernel.
_PERCEPTRON_KINDS = {"perceptron": "PERCEPTRON", "pa": "PA", "pa-i": "PA_I", "mira": "PA_I"}
_PERCEPTRON_KINDS["pa-ii"] = "PA_II"


def _pack_perceptron(kernels: Any, rule: str, constants: Mapping, settings: Settings):
    kind = getattr(kernels, _PERCEPTRON_KINDS[rule])
    return kernels.update_rule(
        kind,
        settings.margin,
        settings.C,
        bias_feature=settings.bias_feature,
        delta=settings.delta,
    )


def _pack_romma(kernels: Any, rule: str, constants: Mapping, settings: Settings):
    return kernels.romma_rule(
        aggressive=rule == "aggressive-romma", bias_feature=settings.bias_feature
    )


def _pack_constants(function: str, *, with_C: bool) -> Callable[..., np.ndarray]:
    """The packing of a family whose kernel module's ``function(rule, bias_feature,
    [C,] constants)`` names the constants its kernels read."""

    def pack(kernels: Any, rule: str, constants: Mapping, settings: Settings) -> np.ndarray:
        head = (settings.bias_feature, settings.C) if with_C else (settings.bias_feature,)
        return getattr(kernels, function)(rule, *head, constants)

    return pack


# Each family's kernels, imported on first use (written out, so that the import graph
# test sees them).
def _perceptron_kernels() -> ModuleType:
    from perceptrons._kernels import perceptron

    return perceptron


def _romma_kernels() -> ModuleType:
    from perceptrons._kernels import romma

    return romma


def _confidence_kernels() -> ModuleType:
    from perceptrons._kernels import confidence

    return confidence


def _second_order_kernels() -> ModuleType:
    from perceptrons._kernels import second_order

    return second_order


def _first_order_kernels() -> ModuleType:
    from perceptrons._kernels import first_order

    return first_order


def _adagrad_kernels() -> ModuleType:
    from perceptrons._kernels import adagrad

    return adagrad


def _ftrl_kernels() -> ModuleType:
    from perceptrons._kernels import ftrl

    return ftrl


def _dual_averaging_kernels() -> ModuleType:
    from perceptrons._kernels import dual_averaging

    return dual_averaging


def _feature_selection_kernels() -> ModuleType:
    from perceptrons._kernels import feature_selection

    return feature_selection


#: Every family of :data:`perceptrons.linear._update_rules.FAMILIES`.
FAMILIES: dict[str, Family] = {
    "perceptron": Family(_perceptron_kernels, _forms(), _pack_perceptron, _perceptron_state),
    "romma": Family(_romma_kernels, _forms(), _pack_romma, _romma_state),
    "confidence": Family(
        _confidence_kernels,
        _forms(full=True),
        _pack_constants("confidence_rule", with_C=True),
        _confidence_state,
    ),
    "second-order": Family(
        _second_order_kernels,
        {
            **_forms("sop_", full=True, rule="sop"),
            **_forms("iellip_", full=True, rule="iellip"),
        },
        _pack_constants("second_order_rule", with_C=True),
        _second_order_state,
    ),
    "first-order": Family(
        _first_order_kernels,
        {
            **_forms("alma_", rule="alma"),
            # FOBOS-L1 and STG are OGD with a lazy L1 penalty: OGD's epochs.
            **{
                form: epoch
                for r in ("ogd", "fobos-l1", "stg")
                for form, epoch in _forms("ogd_", rule=r).items()
            },
        },
        _pack_constants("first_order_rule", with_C=False),
        _first_order_state,
    ),
    "adagrad": Family(
        _adagrad_kernels, _forms(), _pack_constants("adagrad_rule", with_C=False), _adagrad_state
    ),
    "ftrl": Family(
        _ftrl_kernels,
        _forms(),
        _pack_constants("ftrl_rule", with_C=False),
        _ftrl_state,
        remakes=_ftrl_remakes,
    ),
    "dual-averaging": Family(
        _dual_averaging_kernels,
        _forms(),
        _pack_constants("dual_averaging_rule", with_C=False),
        _dual_averaging_state,
    ),
    "feature-selection": Family(
        _feature_selection_kernels,
        _forms(),
        _pack_constants("feature_selection_rule", with_C=False),
        _feature_selection_state,
    ),
}


@dataclass(frozen=True)
class ResolvedRule:
    """An update rule with its checked constants and form: what the epochs read."""

    rule: UpdateRule
    constants: Mapping[str, float]
    #: ``"diagonal"`` or ``"full"`` (a rule without a full form is diagonal).
    covariance: str
    state_class: type[TrainingState]

    @property
    def family(self) -> Family:
        return FAMILIES[self.rule.family]

    def epoch(self, multiclass: bool) -> Kernel:
        """The compiled epoch for a multiclass model or not."""
        return self.family.epoch(self.rule.kernel_name, multiclass, self.covariance == "full")

    def rule_array(self, settings: Settings) -> np.ndarray:
        return self.family.rule_array(self.rule.kernel_name, self.constants, settings)

    def non_finite_cause(self, what: str) -> str | None:
        """Why ``what`` (scores, weights, steps) became non-finite under this rule, and
        what to do (see :func:`perceptrons._engine.non_finite_message`): the constants
        given away from their defaults, which the kernels' arithmetic met first; else,
        for a step (the rule's own arithmetic, :mod:`perceptrons._kernels._rows`), the
        features or sample weights; else None (the features' scale, the usual words)."""
        defaults = {name: constant.default for name, constant in self.rule.constants.items()}
        given = {name: v for name, v in self.constants.items() if v != defaults[name]}
        rule = self.rule.name
        if given:
            values = ", ".join(f"{name}={value!r}" for name, value in given.items())
            usual = ", ".join(f"{name}={defaults[name]!r}" for name in given)
            return (
                f"update={rule!r} with {values} made its arithmetic overflow on these "
                f"features; bring the constant nearer its default ({usual}) or scale the "
                "features (e.g. StandardScaler/MaxAbsScaler)"
            )
        if what == "steps":
            return (
                f"update={rule!r} made its arithmetic overflow on these features or sample "
                "weights (too large, or too small: a square below 1e-308 is 0); scale the "
                "features (e.g. StandardScaler/MaxAbsScaler) or the sample weights"
            )
        return None


def resolve_rule(owner: str, update: Any, update_params: Any, covariance: Any) -> ResolvedRule:
    """``update`` with its ``update_params`` and ``covariance`` resolved (a ValueError,
    naming ``owner``, for an unknown rule or an invalid constant). The same arguments
    give the same object: a fit resolves its rule once, not once per epoch."""
    try:
        # Each value's type is part of the key: True == 1 and hash alike, but a bool is
        # refused where 1 is accepted.
        params = (
            None
            if update_params is None
            else tuple(sorted((name, type(v), v) for name, v in update_params.items()))
        )
        key = (owner, type(update), update, params, type(covariance), covariance)
        hash(key)
    except (AttributeError, TypeError):  # not a dict of hashable numbers: no cache
        return _resolve(owner, update, update_params, covariance)
    return _resolve_cached(key)


@functools.lru_cache(maxsize=256)
def _resolve_cached(key: tuple) -> ResolvedRule:
    owner, _, update, params, _, covariance = key
    constants = None if params is None else {name: value for name, _, value in params}
    return _resolve(owner, update, constants, covariance)


def _resolve(owner: str, update: Any, update_params: Any, covariance: Any) -> ResolvedRule:
    rule = rule_of(update)
    constants = check_update_params(owner, rule, update_params)
    form = covariance if rule.covariance and covariance == "full" else "diagonal"
    state_class = FAMILIES[rule.family].state(rule, constants, form == "full")
    return ResolvedRule(rule, constants, form, state_class)
