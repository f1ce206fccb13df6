"""The voted perceptron's model as a model file stores it
(:class:`perceptrons._engine.StateCodec`): the support vectors, the dual coefficients,
the intercepts and the update sequence, every index checked before the prediction loops
follow it."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from perceptrons import _checked
from perceptrons.kernel._store import Growable, SupportStore
from perceptrons.kernel._training import VotedTraining

__all__ = ["VotedCodec"]


class VotedCodec:
    """The state of a :class:`~perceptrons.VotedPerceptron` (see the module)."""

    def __init__(self, estimator: VotedTraining) -> None:
        self.estimator = estimator

    def check_params(self) -> None:
        self.estimator._check_params()

    def export_state(self, resumable: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
        """The fitted model as arrays and JSON values (see :mod:`perceptrons.io.persist`):
        support vectors, dual coefficients, intercepts and the update sequence.
        ``resumable`` is ignored: all of it is the model, and all training needs."""
        estimator = self.estimator
        arrays = {
            "alpha": estimator._alpha.view,
            "bias": estimator._bias,
            "updates": estimator._updates.view,
        }
        assert estimator._support is not None
        support = estimator._support.matrix()
        if estimator._support.precomputed:
            arrays["support_indices"] = support
        elif estimator._support.sparse:
            arrays.update(
                support_data=support.data,
                support_indices=support.indices,
                support_indptr=support.indptr,
            )
        else:
            arrays["support"] = support
        if estimator._primal:
            arrays["weights"] = estimator._weights
        values = {
            "n_seen": int(estimator._n_seen),
            "epoch_ends": [int(e) for e in estimator._epoch_ends],
            "gamma": float(estimator._gamma),
            "native": bool(estimator._native),
            "primal": bool(estimator._primal),
            "sparse_support": bool(estimator._support.sparse),
        }
        if estimator._update_weights is not None:  # trained with sample weights
            arrays["update_weights"] = estimator._update_weights.view
            values["weight_seen"] = float(estimator._weight_seen)
            values["weight_ends"] = [float(w) for w in estimator._weight_ends]
        return arrays, values

    def import_state(self, arrays: dict[str, Any], values: dict[str, Any]) -> None:
        """Rebuild the model written by :meth:`export_state`.

        The state may come from an untrusted file: every array is checked against
        ``n_features_in_``, ``classes_`` and the parameters (:meth:`state_layout`), and
        every index the compiled loops follow (support ids, classes, columns, CSR
        indices) is range-checked before the model is changed.
        """
        estimator = self.estimator
        n_features, n_classes = estimator.n_features_in_, estimator.classes_.shape[0]
        fits = f"{n_features} features and {n_classes} classes"
        arrays = _checked.check_arrays(arrays, self.state_layout(values), fits)
        precomputed = estimator.kernel == "precomputed"
        native = _checked.boolean_value(values.get("native"), "native")
        if native != (n_classes > 2 and estimator.multiclass == "native"):
            raise ValueError(
                f"native={native} contradicts multiclass={estimator.multiclass!r} with "
                f"{n_classes} classes"
            )
        primal = _checked.boolean_value(values.get("primal"), "primal")
        if primal != (estimator.kernel == "linear"):
            raise ValueError(f"primal={primal} contradicts kernel={estimator.kernel!r}")
        gamma = _checked.real_value(values.get("gamma"), "gamma", 0.0)
        if gamma == 0.0:
            raise ValueError("gamma must be > 0, got 0.0")
        n_seen = _checked.integer_value(values.get("n_seen"), "n_seen")
        epoch_ends = values.get("epoch_ends")
        if not isinstance(epoch_ends, list):
            kind = type(epoch_ends).__name__
            raise ValueError(f"epoch_ends must be a list of ints, got a {kind}")
        ends = [_checked.integer_value(e, "an epoch end", 0, n_seen) for e in epoch_ends]
        if np.any(np.diff(ends) < 0):
            raise ValueError("epoch_ends must be non-decreasing")
        n_columns = arrays["bias"].shape[0]
        n_support = arrays["alpha"].shape[0]
        self._check_updates(arrays["updates"], n_seen, n_support, native, n_columns)
        store = SupportStore(bool(values["sparse_support"]), n_features, precomputed)
        if precomputed:
            store.append(None, arrays["support_indices"])
        elif store.sparse:
            indptr = arrays["support_indptr"]
            n_stored = arrays["support_data"].shape[0]
            if (
                indptr.shape[0] != n_support + 1
                or indptr[0] != 0
                or indptr[-1] != n_stored
                or np.any(np.diff(indptr) < 0)
            ):
                raise ValueError(
                    f"support_indptr is not the row pointer of {n_support} rows holding "
                    f"{n_stored} values"
                )
            rows = sp.csr_matrix(
                (arrays["support_data"], arrays["support_indices"], indptr),
                shape=(n_support, n_features),
            )
            store.append(rows, np.arange(n_support))
        else:
            store.append(arrays["support"], np.arange(n_support))
        alpha = Growable(n_columns, np.float64)
        alpha.append(arrays["alpha"])
        updates = Growable(4, np.int64)
        updates.append(arrays["updates"])
        weighted = self._check_update_weights(arrays.get("update_weights"), values, len(ends))
        # Everything checked: the model changes only now.
        estimator._native, estimator._primal, estimator._gamma = native, primal, gamma
        estimator._n_seen, estimator._epoch_ends = n_seen, ends
        estimator._bias = arrays["bias"].copy()
        estimator._alpha, estimator._updates, estimator._support = alpha, updates, store
        estimator._kernel_name = estimator._kernel_in_use()
        if primal:
            estimator._weights = arrays["weights"].copy()
        estimator._update_weights, estimator._weight_seen, estimator._weight_ends = weighted

    @staticmethod
    def _check_update_weights(
        update_weights: np.ndarray | None, values: dict[str, Any], n_epochs: int
    ) -> tuple[Growable | None, float, list[float]]:
        """The sample-weight bookkeeping of a weighted model (absent: unweighted)."""
        if update_weights is None:
            return None, 0.0, []
        seen = _checked.real_value(values.get("weight_seen"), "weight_seen", 0.0)
        ends = values.get("weight_ends")
        if not isinstance(ends, list) or len(ends) != n_epochs:
            raise ValueError(f"weight_ends must be a list of {n_epochs} numbers")
        totals = [_checked.real_value(w, "a weight end", 0.0, seen) for w in ends]
        before = update_weights[:, 1]
        if (
            np.any(np.diff(totals) < 0)
            or np.any(np.diff(before) < 0)
            or (before.size and before[-1] > seen)
        ):
            raise ValueError("the weights seen must be non-decreasing and at most weight_seen")
        grown = Growable(2, np.float64)
        grown.append(update_weights)
        return grown, seen, totals

    def state_layout(self, values: dict[str, Any]) -> dict[str, _checked.Spec]:
        """The arrays :meth:`import_state` accepts: shapes from ``n_features_in_``,
        ``classes_`` and the parameters; the sizes of the support set and the update
        sequence bounded by the examples seen (``n_seen``)."""
        estimator = self.estimator
        n_classes, n_features = estimator.classes_.shape[0], estimator.n_features_in_
        n_columns = 1 if n_classes == 2 else n_classes
        n_seen = _checked.integer_value(values.get("n_seen"), "n_seen")
        sparse = _checked.boolean_value(values.get("sparse_support"), "sparse_support")
        support = _checked.Free("support vectors", n_seen)
        n_updates = _checked.Free("updates", n_seen * n_columns)
        specs = {
            "alpha": _checked.floats(support, n_columns),
            "bias": _checked.floats(n_columns),
            "updates": _checked.Spec(_checked.INT64, (n_updates, 4)),
            # Trained with sample weights: each update's step and the weight before it.
            "update_weights": _checked.floats(n_updates, 2, low=0.0, optional=True),
        }
        if estimator.kernel == "precomputed":
            specs["support_indices"] = _checked.indices(support, high=n_features)
        elif sparse:
            stored = _checked.Free("stored values", n_seen * n_features)
            specs["support_data"] = _checked.floats(stored)
            specs["support_indices"] = _checked.indices(
                stored, high=n_features, dtypes=_checked.INDEX
            )
            specs["support_indptr"] = _checked.Spec(
                _checked.INDEX, (_checked.Free("row pointers", n_seen + 1),)
            )
        else:
            specs["support"] = _checked.floats(support, n_features)
        if estimator.kernel == "linear":
            native = n_classes > 2 and estimator.multiclass == "native"
            rows = (n_features + 1, n_columns) if native else (n_columns, n_features + 1)
            specs["weights"] = _checked.floats(*rows)
        return specs

    @staticmethod
    def _check_updates(
        updates: np.ndarray, n_seen: int, n_support: int, native: bool, n_columns: int
    ) -> None:
        """Every index of the update sequence in range: the prediction loops follow them
        without bounds checks."""
        if updates.shape[0] == 0:
            return
        positions, support, first, second = updates.T
        if positions.min() < 0 or positions.max() >= n_seen or np.any(np.diff(positions) < 0):
            raise ValueError(f"update positions must be non-decreasing, in [0, {n_seen})")
        if support.min() < 0 or support.max() >= n_support:
            raise ValueError(f"support ids of the updates outside [0, {n_support})")
        if native:
            if min(first.min(), second.min()) < 0 or max(first.max(), second.max()) >= n_columns:
                raise ValueError(f"classes of the updates outside [0, {n_columns})")
            if np.any(first == second):
                raise ValueError("an update whose gold and predicted classes are equal")
        else:
            if first.min() < 0 or first.max() >= n_columns:
                raise ValueError(f"columns of the updates outside [0, {n_columns})")
            if not np.all(np.abs(second) == 1):
                raise ValueError("update signs must be -1 or +1")
