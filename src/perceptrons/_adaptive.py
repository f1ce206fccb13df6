"""The glue between the estimators and the families of update rules that keep
statistics of their own (:data:`perceptrons._update_rules.RULES`: ``"confidence"``,
``"second-order"``, ``"first-order"``, ``"adagrad"``).

A rule is plugged into the one engine by three things, looked up here by its family:
its training state (an :class:`~perceptrons._states.AdaptiveState` configuration: which
statistics, their initial values, diagonal or full), its compiled epochs (binary and
multiclass, with the signature of :mod:`perceptrons._kernels.confidence`), and the
``rule`` array those epochs read. The engine's loop, checks, averaging, model files
and mixing are the same for every rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from perceptrons._states import AdaptiveState, AlmaState, adaptive_state
from perceptrons._update_rules import UpdateRule

__all__ = ["epoch_kernel", "state_class"]


def state_class(
    rule: UpdateRule, constants: dict[str, float], covariance: str
) -> type[AdaptiveState]:
    """The training state of ``rule`` with its ``constants`` (checked) and
    ``covariance`` (``"diagonal"`` or ``"full"``)."""
    full = covariance == "full"
    if rule.family == "confidence":
        # One covariance, starting at a I (AROW's Σ_0 = I: a = 1).
        return adaptive_state(rule.family, (constants.get("a", 1.0),), full=full, stats_low=0.0)
    if rule.family == "second-order":
        # Named by the rule: the two rules' statistics have different layouts.
        a = constants["a"]
        if rule.name == "sop":
            # The correlation a I + Σ x xᵀ of the examples updated on, shared by the
            # classes: its diagonal, or its inverse (full).
            initial = 1.0 / a if full else a
            return adaptive_state(rule.name, (initial,), full=full, per_class=False, stats_low=0.0)
        # IELLIP: the ellipsoid per class (up to its scale), starting at a I, and c_t.
        return adaptive_state(rule.name, (a,), (constants["c"],), full=full, stats_low=0.0)
    if rule.family == "first-order":
        if rule.name == "alma":
            # Per class: scale 1, scale_sum 0, ||w||² 0; the update counter k from 1.
            return adaptive_state(rule.name, (1.0, 0.0, 0.0), (1.0,), stats_low=0.0, base=AlmaState)
        # OGD: explicit weights and t, the examples seen.
        return adaptive_state(rule.name, (), (0.0,))
    if rule.family == "adagrad":
        # The sums of squared gradients G (and RDA's sum of gradients u, of either sign;
        # NAG's scales s), all from 0; scalars: the rounds' weight t (NAG: and N).
        if rule.name == "ada-fobos":
            return adaptive_state(rule.name, (0.0,), (0.0,), stats_low=0.0)
        if rule.name == "ada-rda":
            # RDA's scalars also hold the eta, delta and l1 its weights were made with.
            return adaptive_state(rule.name, (0.0, 0.0), (0.0, 0.0, 0.0, 0.0))
        return adaptive_state(rule.name, (0.0, 0.0), (0.0, 0.0), stats_low=0.0)
    raise ValueError(f"no training state for the {rule.family!r} family")


def epoch_kernel(
    rule: UpdateRule,
    constants: dict[str, float],
    covariance: str,
    multiclass: bool,
    *,
    bias_feature: float,
    C: float,
) -> tuple[Callable[..., tuple[Any, Any]], np.ndarray]:
    """``(kernel, rule array)``: the compiled epoch of ``rule`` and what it reads."""
    if rule.family == "confidence":
        from perceptrons._kernels import confidence

        kernels = {
            ("diagonal", False): confidence.binary_epoch,
            ("diagonal", True): confidence.multiclass_epoch,
            ("full", False): confidence.binary_epoch_full,
            ("full", True): confidence.multiclass_epoch_full,
        }
        kernel = kernels[covariance, multiclass]
        return kernel, confidence.confidence_rule(rule.name, bias_feature, C, constants)
    if rule.family == "second-order":
        from perceptrons._kernels import second_order

        prefix = "sop" if rule.name == "sop" else "iellip"
        suffix = "_full" if covariance == "full" else ""
        shape = "multiclass" if multiclass else "binary"
        kernel = getattr(second_order, f"{prefix}_{shape}_epoch{suffix}")
        return kernel, second_order.second_order_rule(rule.name, bias_feature, C, constants)
    if rule.family == "first-order":
        from perceptrons._kernels import first_order

        kernel = first_order.KERNELS[rule.name, multiclass]
        return kernel, first_order.first_order_rule(rule.name, bias_feature, constants)
    if rule.family == "adagrad":
        from perceptrons._kernels import adagrad

        # (An averaged model with l1 > 0 is refused by the estimator's parameter check.)
        kernel = adagrad.multiclass_epoch if multiclass else adagrad.binary_epoch
        return kernel, adagrad.adagrad_rule(rule.name, bias_feature, constants)
    raise ValueError(f"no kernels for the {rule.family!r} family")
