"""The budgeted kernel perceptron's state (:class:`BudgetState`) and its model files
(:class:`BudgetCodec`, a :class:`perceptrons._engine.StateCodec`): every size and
value read from a file is checked before the compiled loop sees it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perceptrons import _checked
from perceptrons._kernels.budget import nearest_neighbours

__all__ = ["BudgetCodec", "BudgetState"]


@dataclass
class BudgetState:
    """The support slots and what the rules keep, allocated once for ``budget`` slots.

    ``support`` (budget x n_features), ``coef`` (budget x n_columns), ``norms``
    (each slot's kernel with itself), ``birth`` (when it joined), ``source`` (-1, or
    the block position of a vector not yet copied in), ``gram`` (the Gram matrix of
    the support set for the Forgetron and BPA-NN, else 0 x 0), ``inverse`` (the
    Projectron's inverse Gram matrix, else 0 x 0), ``nearest`` and
    ``nearest_distance`` (BPA-NN's nearest other slot of each slot, and how far),
    ``counters`` ``[n_occupied, clock, mistakes]``, ``totals`` ``[Q]`` (see
    :mod:`perceptrons._kernels.budget`) and the resolved ``gamma``.
    """

    support: np.ndarray
    coef: np.ndarray
    norms: np.ndarray
    birth: np.ndarray
    source: np.ndarray
    gram: np.ndarray
    inverse: np.ndarray
    nearest: np.ndarray
    nearest_distance: np.ndarray
    counters: np.ndarray
    totals: np.ndarray
    gamma: float
    # The estimator's parameters the slots were built for (its SLOT_PARAMETERS).
    parameters: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def empty(
        cls, budget: int, n_features: int, n_columns: int, removal: str, gamma: float
    ) -> BudgetState:
        def square(needed: bool) -> np.ndarray:
            return np.zeros((budget, budget) if needed else (0, 0))

        return cls(
            support=np.zeros((budget, n_features)),
            coef=np.zeros((budget, n_columns)),
            norms=np.zeros(budget),
            birth=np.zeros(budget, dtype=np.int64),
            source=np.full(budget, -1, dtype=np.int64),
            gram=square(removal in ("forgetron", "bpa-nn")),
            inverse=square(removal == "projectron"),
            nearest=np.full(budget, -1, dtype=np.int64),
            nearest_distance=np.full(budget, np.inf),
            counters=np.zeros(3, dtype=np.int64),
            totals=np.zeros(1),
            gamma=gamma,
        )

    @property
    def n_occupied(self) -> int:
        return int(self.counters[0])

    def saved(self) -> Callable[[], None]:
        """What puts the slots back as they are now, bit for bit (the rules write any
        of the arrays in place)."""
        kept = [
            (value, value.copy()) for value in vars(self).values() if isinstance(value, np.ndarray)
        ]

        def undo() -> None:
            for array, copy in kept:
                array[...] = copy

        return undo

    def is_finite(self) -> bool:
        n = self.n_occupied
        return bool(
            np.isfinite(self.coef[:n]).all()
            and np.isfinite(self.gram[:n, :n]).all()
            and np.isfinite(self.inverse[:n, :n]).all()
            and np.isfinite(self.totals).all()
        )


class BudgetCodec:
    """The state of a :class:`~perceptrons.BudgetPerceptron` (see the module)."""

    # The estimator is a perceptrons.budget.BudgetPerceptron, which imports this module.
    def __init__(self, estimator: Any) -> None:
        self.estimator = estimator

    def check_params(self) -> None:
        self.estimator._check_params()

    def export_state(self, resumable: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
        """The occupied slots as arrays, the counters as JSON values. ``resumable`` is
        ignored: the rules' matrices are small beside the support vectors, and what
        continuing needs."""
        state = self.estimator._state
        assert state is not None
        n = state.n_occupied
        arrays = {
            "support": state.support[:n],
            "coef": state.coef[:n],
            "norms": state.norms[:n],
            "birth": state.birth[:n],
        }
        if state.gram.shape[0]:
            arrays["gram"] = state.gram[:n, :n]
        if state.inverse.shape[0]:
            arrays["inverse"] = state.inverse[:n, :n]
        values = {
            "clock": int(state.counters[1]),
            "mistakes": int(state.counters[2]),
            "damage": float(state.totals[0]),
            "gamma": float(state.gamma),
        }
        return arrays, values

    def state_layout(self, values: dict[str, Any]) -> dict[str, _checked.Spec]:
        """At most ``budget`` occupied slots of ``n_features_in_`` features, one
        coefficient column per class (one when binary); born within the clock."""
        estimator = self.estimator
        n_classes = estimator.classes_.shape[0]
        n_columns = 1 if n_classes == 2 else n_classes
        clock = _checked.integer_value(values.get("clock"), "clock")
        slots = _checked.Free("support slots", min(int(estimator.budget), clock))
        specs = {
            "support": _checked.floats(slots, estimator.n_features_in_),
            "coef": _checked.floats(slots, n_columns),
            "norms": _checked.floats(slots),
            "birth": _checked.Spec(_checked.INT64, (slots,), low=1, high=clock + 1),
        }
        if estimator.removal in ("forgetron", "bpa-nn"):
            specs["gram"] = _checked.floats(slots, slots)
        if estimator.removal == "projectron":
            specs["inverse"] = _checked.floats(slots, slots)
        return specs

    def import_state(self, arrays: dict[str, Any], values: dict[str, Any]) -> None:
        """Rebuild the slots written by :meth:`export_state`, checked first."""
        estimator = self.estimator
        fits = f"{estimator.n_features_in_} features and {estimator.classes_.shape[0]} classes"
        arrays = _checked.check_arrays(arrays, self.state_layout(values), fits)
        clock = _checked.integer_value(values.get("clock"), "clock")
        mistakes = _checked.integer_value(values.get("mistakes"), "mistakes", 0, clock)
        damage = _checked.real_value(values.get("damage"), "damage")
        gamma = _checked.real_value(values.get("gamma"), "gamma", 0.0)
        if gamma == 0.0:
            raise ValueError("gamma must be > 0, got 0.0")
        n = arrays["coef"].shape[0]
        if np.unique(arrays["birth"]).size != n:
            raise ValueError("two support slots with the same birth")
        n_columns = arrays["coef"].shape[1]
        # The budget comes from the file too: its slots are checked before allocation.
        estimator._check_slot_memory(estimator.n_features_in_, n_columns)
        state = BudgetState.empty(
            int(estimator.budget), estimator.n_features_in_, n_columns, estimator.removal, gamma
        )
        state.support[:n] = arrays["support"]
        state.coef[:n] = arrays["coef"]
        state.norms[:n] = arrays["norms"]
        state.birth[:n] = arrays["birth"]
        if "gram" in arrays:
            state.gram[:n, :n] = arrays["gram"]
        if "inverse" in arrays:
            state.inverse[:n, :n] = arrays["inverse"]
        if estimator.removal == "bpa-nn":  # derived from the Gram matrix, not stored
            nearest_neighbours(n, state.norms, state.gram, state.nearest, state.nearest_distance)
        state.counters[:] = (n, clock, mistakes)
        state.totals[0] = damage
        state.parameters = estimator._slot_parameters()
        estimator._state = state
