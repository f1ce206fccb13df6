"""The training states of the online linear learners.

A state holds everything training needs to continue exactly where it stopped: the
weights (one row per feature plus a last row for the intercept), the averaging trick's
auxiliary array and the example count, plus what a family keeps of its own (the Δ
trick's weights, ROMMA's and logistic regression's lazy scales). :class:`CompactState`
is a state kept only in its rows with a nonzero entry: what a sparsified model holds.
The engine (:mod:`perceptrons._engine`) hands states to the compiled kernels; model
files (:mod:`perceptrons.io.persist`) store their arrays and values.

Over 600 lines: every family's training state (the perceptron's, ROMMA's, logistic
regression's, the adaptive rules', the compact and frozen forms) is a small subclass of
one base, whose layout and checks each mirrors.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from perceptrons import _checked
from perceptrons import _params as rules
from perceptrons._kernels import finite as _finite

__all__ = [
    "AdaptiveState",
    "AlmaState",
    "CompactState",
    "Frozen",
    "LogisticState",
    "PerceptronState",
    "RommaState",
    "TrainingState",
    "all_finite",
    "as_count",
    "sorted_union",
]


@dataclass
class TrainingState:
    """Everything training needs to continue exactly where it stopped.

    ``weights`` and ``aux`` have one row per feature plus a last row for the intercept
    (see :mod:`perceptrons._kernels.perceptron`); binary models keep a single column as
    a 1-D array. ``aux`` is the averaging trick's auxiliary array, empty (shape
    ``(0,)`` or ``(0, 0)``) for a model that is not averaged. ``count`` is the number of
    examples seen over all epochs and calls: their total weight when trained with
    ``sample_weight`` or ``class_weight`` (an int whenever that total is integral, a
    float otherwise).
    """

    weights: np.ndarray
    aux: np.ndarray
    count: int | float = 0

    #: What the state's arrays mean, as a continued training checks it: a state goes on
    #: only under rules that read its arrays the same way (its family, and for the
    #: adaptive rules their statistics and form; their constants may change).
    KIND: ClassVar[str] = "plain"

    #: The largest ``|x_j|`` of the inputs this state was trained on in this process,
    #: at least 1 (not stored in model files: a loaded state starts again at 1). The
    #: published model must give finite scores to every input within it (see
    #: :meth:`note_inputs`). Not a dataclass field: the states are built positionally.
    input_bound = 1.0

    def note_inputs(self, X: Any) -> None:
        """Widen :attr:`input_bound` to the largest ``|x_j|`` of ``X`` (dense or sparse,
        already checked finite), once per training call or streamed chunk: a model
        whose scores are finite on ``[-1, 1]`` may still overflow on the very examples
        it was trained on (a feature of 1.797e308 times a weight of 1), which memory and
        stream must refuse alike, whether or not an epoch scores them again."""
        values = X.data if sp.issparse(X) else np.ravel(X, order="K")
        if values.dtype != np.float64 or not values.flags.c_contiguous:
            values = np.ascontiguousarray(values, dtype=np.float64)
        self.input_bound = max(self.input_bound, float(_finite.largest_magnitude(values)))

    def kernel_arguments(self, slack: np.ndarray) -> dict[str, np.ndarray]:
        """The epoch kernels' arguments beside the weights, ``aux`` and ``count`` that
        this state holds (``slack``: the Δ trick's weights, which only the perceptron
        kernels take)."""
        return {}

    @classmethod
    def zeros(cls, n_features: int, n_columns: int, average: bool) -> TrainingState:
        shape = (n_features + 1,) if n_columns == 1 else (n_features + 1, n_columns)
        aux = np.zeros(shape) if average else np.zeros((0,) * len(shape))
        return cls(weights=np.zeros(shape), aux=aux)

    @property
    def averaged(self) -> bool:
        return self.aux.size != 0

    def model(self) -> np.ndarray:
        """The current model: the last weights, or the exact mean of all of them."""
        if not self.averaged or self.count == 0:
            return self.weights.copy()
        # weights - aux / count, in the quotient's array: one model-sized temporary.
        model = self.aux / self.count
        return np.subtract(self.weights, model, out=model)

    def model_rows(self, rows: np.ndarray) -> np.ndarray:
        """``model()[rows]``: the same arithmetic on those rows only (a state whose
        :meth:`model` differs overrides this too)."""
        weights = self.weights[rows]
        if not self.averaged or self.count == 0:
            return weights
        return weights - self.aux[rows] / self.count

    def zero_rows_stay_zero(self) -> bool:
        """Whether the model of a row whose weights and aux are all ``+0.0`` is ``+0.0``
        (so that :meth:`model_on` may leave such rows out)."""
        return True

    def model_on(self, rows: np.ndarray | None) -> np.ndarray:
        """:meth:`model`, bit for bit, formed on ``rows`` only: sorted rows that include
        every row holding a nonzero (or negative zero) weight or aux entry; the others
        are zeros, which is what the model's arithmetic gives them. The whole model
        when ``rows`` is None or the state's scales could make a zero row's model
        differ from ``+0.0``. What a hashed model costs to form after an epoch then
        follows the features its data holds, not the ``2**20`` rows."""
        if rows is None or not self.zero_rows_stay_zero():
            return self.model()
        model = np.zeros(self.weights.shape)  # zero pages: only the rows written cost
        model[rows] = self.model_rows(rows)
        return model

    def rows_in_use(self) -> np.ndarray:
        """The sorted rows holding a nonzero (or negative zero) weight or aux entry."""
        used = _used_rows(self.weights)
        if self.averaged:
            used |= _used_rows(self.aux)
        return np.flatnonzero(used)

    def n_nonzero(self, rows: np.ndarray | None = None) -> int:
        """How many feature weights of :meth:`model` are nonzero (the intercept's row not
        counted): what ``history_`` records after every epoch. Counted on ``rows``
        (sorted, holding every row in use, as :meth:`model_on` takes them), else on
        :meth:`rows_in_use`: the model is formed on the rows in use only, so the count
        costs one pass over the stored arrays and no model-sized temporary."""
        last = self.weights.shape[0] - 1
        if not self.averaged and type(self).model_rows is TrainingState.model_rows:
            # The model is the weights themselves: counted in place, without a copy.
            if rows is None:
                return int(np.count_nonzero(self.weights[:last]))
            return int(np.count_nonzero(self.weights[rows[: np.searchsorted(rows, last)]]))
        if not self.zero_rows_stay_zero():
            return int(np.count_nonzero(self.model()[:last]))
        if rows is None:
            rows = self.rows_in_use()
        return int(np.count_nonzero(self.model_rows(rows[: np.searchsorted(rows, last)])))

    def model_entries(self, index: np.ndarray) -> np.ndarray:
        """``model().ravel()[index]``, the same arithmetic without forming the whole
        model (a state whose :meth:`model` differs overrides this too)."""
        weights = self.weights.ravel()[index]
        if not self.averaged or self.count == 0:
            return weights
        return weights - self.aux.ravel()[index] / self.count

    def touched(self, stop: int) -> np.ndarray:
        """The flat positions below ``stop`` where the model may be nonzero (a weight
        or the average's bookkeeping is), ascending."""
        weights = self.weights.ravel()[:stop]
        if not self.averaged:
            return np.flatnonzero(weights)
        return np.flatnonzero((weights != 0) | (self.aux.ravel()[:stop] != 0))

    def plain_rows(self, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """The rows ``rows`` (all when None) of the true weights ``W`` and of ``A``, the
        average's bookkeeping in its plain form: the sum of the weights after each of the
        ``count`` examples is ``count * W - A`` (None for a model that is not averaged).
        Here the state already is in that form; new arrays when ``rows`` is given,
        the state's own arrays otherwise."""
        aux = self.aux if self.averaged else None
        if rows is None:
            return self.weights, aux
        return self.weights[rows], None if aux is None else aux[rows]

    def restart_count(self) -> None:
        """Count the examples (and any decay) afresh from here: a shard's epoch in
        parameter mixing starts at count 0 from the mixed weights."""
        self.count = 0

    def load_values(self, values: dict[str, Any]) -> None:
        """Take the scalar part of another state of the same family (:meth:`values`)."""
        self.count = values["count"]

    def plain_values(self) -> dict[str, Any]:
        """:meth:`values` for arrays in the plain form of :meth:`plain_rows`."""
        return {"count": as_count(self.count)}

    def arrays(self) -> dict[str, np.ndarray]:
        return {"weights": self.weights, "aux": self.aux}

    def values(self) -> dict[str, Any]:
        return {"count": as_count(self.count)}

    @classmethod
    def restore(cls, arrays: dict[str, np.ndarray], values: dict[str, Any]) -> TrainingState:
        return cls(
            weights=np.ascontiguousarray(arrays["weights"], dtype=np.float64),
            aux=np.ascontiguousarray(arrays["aux"], dtype=np.float64),
            count=_non_negative_count(values.get("count")),
        )

    @classmethod
    def layout(cls, shape: tuple[int, ...], averaged: bool) -> dict[str, _checked.Spec]:
        """The state arrays :meth:`restore` takes, for weights of ``shape``."""
        aux = shape if averaged else (0,) * len(shape)
        weights = dataclasses.replace(_checked.floats(*shape), by_row=0)
        return {"weights": weights, "aux": dataclasses.replace(_checked.floats(*aux), by_row=0)}

    def in_place(self) -> list[tuple[np.ndarray, int | None]]:
        """The arrays the epoch kernels write in place, each with the axis of its weight
        rows (None: a family's few numbers, or statistics not kept per row)."""
        return [(self.weights, 0), (self.aux, 0)]

    def _written(self, rows: np.ndarray | None) -> list[tuple[np.ndarray, Any]]:
        """Each array of :meth:`in_place` (not an empty one) and the index of what epochs
        may write in it when they write only at the weight rows ``rows`` (None: any)."""
        parts: list[tuple[np.ndarray, Any]] = []
        for array, axis in self.in_place():
            if not array.size:
                continue
            if rows is None or axis is None:
                parts.append((array, Ellipsis))
            else:
                parts.append((array, (slice(None),) * axis + (rows,)))
        return parts

    def saved(self, rows: np.ndarray | None = None) -> Callable[[], None]:
        """What puts the state back as it is now, bit for bit: for epochs that write
        only at the weight rows ``rows`` (sorted; those of their examples' features and
        the intercept's, for a rule whose epoch writes nowhere else), a copy of those
        rows alone -- not of a hashed model's ``2**20`` -- and of the family's numbers;
        None: of every array."""
        fields = dict(vars(self))
        kept = [
            (array, index, array.copy() if index is Ellipsis else array[index])
            for array, index in self._written(rows)
        ]

        def undo() -> None:
            for array, index, copy in kept:
                array[index] = copy
            # Exactly the fields of then: one set since (input_bound) goes too.
            vars(self).clear()
            vars(self).update(fields)

        return undo

    def is_finite(self, rows: np.ndarray | None = None) -> bool:
        """Whether every weight (the average's bookkeeping, a family's statistics and
        numbers) is a finite number; only at the weight rows ``rows`` where an epoch
        that wrote only there could have made one overflow (see :meth:`saved`)."""
        return all(all_finite(array[index]) for array, index in self._written(rows))

    @property
    def n_feature_rows(self) -> int:
        """The rows of the weights besides the intercept's (the features' width)."""
        return self.weights.shape[0] - 1

    def widened(self, n_rows: int) -> TrainingState:
        """This state with ``n_rows`` weight rows, the intercept's included (at least
        its own, as :meth:`CompactState.widened`): the new rows are put before the
        intercept's as a fresh state has them (weights 0, statistics at their start).
        A feature not seen yet has not been updated, so that a state widened as
        features arrive is, bit for bit, the state trained at the final width from the
        start (a stream that learns the width as it reads, see
        :func:`perceptrons.io.stream.fit_stream`)."""
        old = self.n_feature_rows
        if n_rows - 1 < old:
            raise ValueError(f"cannot widen a state of {old + 1} rows to {n_rows}")
        return self._moved_rows(n_rows - 1, [(0, 0, old), (n_rows - 1, old, 1)])

    def narrowed(self, n_rows: int) -> TrainingState:
        """This state with ``n_rows`` weight rows, the intercept's included (at most
        its own): its rows from ``n_rows - 1`` on but the intercept's, which no update
        may have touched, left out. What :meth:`widened` made room for in advance and
        no feature reached."""
        old = self.n_feature_rows
        if n_rows - 1 > old:
            raise ValueError(f"cannot narrow a state of {old + 1} rows to {n_rows}")
        return self._moved_rows(n_rows - 1, [(0, 0, n_rows - 1), (n_rows - 1, old, 1)])

    def without_first_row(self) -> TrainingState:
        """This state without its row 0, which no update may have touched: a state
        trained on 1-based indices read as 0-based is, bit for bit, the state trained on
        them read as 1-based (:func:`perceptrons.io.stream.fit_stream`)."""
        old = self.n_feature_rows
        return self._moved_rows(old - 1, [(0, 1, old)])

    def _moved_rows(self, n_rows: int, blocks: list[tuple[int, int, int]]) -> TrainingState:
        """A state for ``n_rows`` features made of blocks of this state's weight rows:
        ``(to, start, count)`` puts its rows ``start`` to ``start + count`` at row
        ``to`` on (the intercept's included); every other row as a fresh state has it,
        the family's numbers and anything not kept by row as they are. Blocks of rows,
        not lists of them: slices copy at memory speed."""
        columns = 1 if self.weights.ndim == 1 else self.weights.shape[1]
        fresh = type(self).zeros(n_rows, columns, self.averaged)
        axes = {id(array): axis for array, axis in self.in_place()}
        pairs = [(slice(to, to + n), slice(start, start + n)) for to, start, n in blocks]
        moved = {}
        for item in dataclasses.fields(self):
            array = getattr(self, item.name)
            if not isinstance(array, np.ndarray) or id(array) not in axes:
                continue
            new = getattr(fresh, item.name)  # an empty one too: its shape may have rows
            axis = axes[id(array)]
            if not array.size:
                pass
            elif axis is not None:
                for into, out in pairs:
                    new[_on_axis(axis, into)] = array[_on_axis(axis, out)]
            elif new.shape != array.shape:  # a full covariance: rows and columns alike
                for into, out in pairs:
                    for into_column, out_column in pairs:
                        new[..., into, into_column] = array[..., out, out_column]
            else:
                new[...] = array
            moved[item.name] = new
        state = dataclasses.replace(self, **moved)
        # What is not a field (input_bound) goes along.
        for name, value in vars(self).items():
            if name not in moved and name not in vars(state):
                setattr(state, name, value)
        return state


def _on_axis(axis: int, rows: slice) -> tuple[slice, ...]:
    """The index of ``rows`` along ``axis``."""
    return (*(slice(None),) * axis, rows)


def all_finite(array: np.ndarray) -> bool:
    """Whether every element is finite; checked after every epoch (and every
    ``partial_fit`` chunk), so it must cost much less than one: a compiled pass."""
    return bool(_finite.all_finite(np.ravel(array)))


@dataclass
class PerceptronState(TrainingState):
    """The perceptrons' state, plus ``slack``: the weights of the Δ trick's per-example
    features for the examples of the last ``fit`` (one row per example; None until a
    ``fit`` with ``delta > 0``); a warm-started ``fit`` on as many examples continues it."""

    slack: np.ndarray | None = None

    KIND = "perceptron"

    def kernel_arguments(self, slack: np.ndarray) -> dict[str, np.ndarray]:
        return {"slack": slack}

    def arrays(self) -> dict[str, np.ndarray]:
        arrays = super().arrays()
        if self.slack is not None:
            arrays["slack"] = self.slack
        return arrays

    @classmethod
    def layout(cls, shape: tuple[int, ...], averaged: bool) -> dict[str, _checked.Spec]:
        slack = _checked.floats(_checked.Free("slack rows"), *shape[1:], optional=True)
        return {**super().layout(shape, averaged), "slack": slack}

    @classmethod
    def restore(cls, arrays: dict[str, np.ndarray], values: dict[str, Any]) -> PerceptronState:
        state = super().restore(arrays, values)
        slack = arrays.get("slack")
        if slack is not None:
            slack = np.ascontiguousarray(slack, dtype=np.float64)
            if slack.shape[1:] != state.weights.shape[1:]:
                raise ValueError(
                    f"slack of shape {slack.shape} does not fit weights of shape "
                    f"{state.weights.shape}"
                )
        return cls(state.weights, state.aux, state.count, slack)


@dataclass
class RommaState(TrainingState):
    """ROMMA's state: the true weights are ``scale * weights`` (every row, the intercept
    included); ``scale_sum`` is the sum of the scales of the examples seen since the last
    rescale and ``sq_norm`` is ``||w||²`` (see :mod:`perceptrons._kernels.romma`).
    ``scales`` holds ``[scale, scale_sum, sq_norm]``, the array the kernels read and write."""

    scales: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))

    KIND = "romma"

    def kernel_arguments(self, slack: np.ndarray) -> dict[str, np.ndarray]:
        return {"scales": self.scales}

    def model(self) -> np.ndarray:
        scale, scale_sum, _ = self.scales
        if not self.averaged or self.count == 0:
            return scale * self.weights
        return (scale_sum * self.weights - self.aux) / self.count

    def model_rows(self, rows: np.ndarray) -> np.ndarray:
        scale, scale_sum, _ = self.scales
        weights = self.weights[rows]
        if not self.averaged or self.count == 0:
            return scale * weights
        return (scale_sum * weights - self.aux[rows]) / self.count

    def zero_rows_stay_zero(self) -> bool:
        # scale * +0.0 and (scale_sum * +0.0 - 0.0) / count are +0.0 for finite
        # scale > 0 and scale_sum >= 0 (what training keeps; a file could hold others).
        return _zero_preserving(self.scales[:2])

    def model_entries(self, index: np.ndarray) -> np.ndarray:
        return self.model().ravel()[index]

    def plain_rows(self, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """The true weights ``W = scale * v`` and, averaged, ``A = count * W - (P v - aux)``
        (the sum of the weights after each example is ``P v - aux``), as new arrays."""
        scale, scale_sum, _ = self.scales
        stored = self.weights if rows is None else self.weights[rows]
        weights = scale * stored
        if not self.averaged:
            return weights, None
        aux = self.aux if rows is None else self.aux[rows]
        return weights, self.count * weights - (scale_sum * stored - aux)

    def restart_count(self) -> None:
        super().restart_count()
        # The caller has written the true weights: scale 1, and ||w||² is theirs.
        self.scales[:] = (1.0, 0.0, float(np.vdot(self.weights, self.weights)))

    def load_values(self, values: dict[str, Any]) -> None:
        super().load_values(values)
        self.scales[:] = (values["scale"], values["scale_sum"], values["sq_norm"])

    def plain_values(self) -> dict[str, Any]:
        # The same weights unscaled: scale 1, P (the sum of the scales) is the count.
        plain = {"scale": 1.0, "scale_sum": float(self.count), "sq_norm": float(self.scales[2])}
        return {**super().plain_values(), **plain}

    def in_place(self) -> list[tuple[np.ndarray, int | None]]:
        return [*super().in_place(), (self.scales, None)]

    def values(self) -> dict[str, Any]:
        scale, scale_sum, sq_norm = self.scales
        return {
            "scale": float(scale),
            "scale_sum": float(scale_sum),
            "sq_norm": float(sq_norm),
            **super().values(),
        }

    @classmethod
    def restore(cls, arrays: dict[str, np.ndarray], values: dict[str, Any]) -> RommaState:
        state = TrainingState.restore(arrays, values)
        scale = _checked.real_value(values.get("scale"), "scale")
        scale_sum = _checked.real_value(values.get("scale_sum"), "scale_sum")
        sq_norm = _checked.real_value(values.get("sq_norm"), "sq_norm", 0.0)
        if scale <= 0.0:
            raise ValueError(f"scale must be positive, got {scale!r}")
        return cls(state.weights, state.aux, state.count, np.array([scale, scale_sum, sq_norm]))


@dataclass
class LogisticState(TrainingState):
    """Logistic regression's state: the true feature weights are
    ``scale * weights[:-1]`` (the prior's decay, applied lazily); ``scale_sum`` is the
    sum of the scales of the examples seen since the last rescale (see
    :mod:`perceptrons._kernels.logistic`). ``scales`` holds ``[scale, scale_sum]``, the
    array the kernels read and write."""

    scales: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0]))

    KIND = "logistic"

    def kernel_arguments(self, slack: np.ndarray) -> dict[str, np.ndarray]:
        return {"scales": self.scales}

    @property
    def scale(self) -> float:
        return float(self.scales[0])

    @property
    def scale_sum(self) -> float:
        return float(self.scales[1])

    def model(self) -> np.ndarray:
        scale, scale_sum = self.scales
        if not self.averaged or self.count == 0:
            model = self.weights.copy()
            model[:-1] *= scale
            return model
        model = self.weights - self.aux / self.count
        model[:-1] = (scale_sum * self.weights[:-1] - self.aux[:-1]) / self.count
        return model

    def model_rows(self, rows: np.ndarray) -> np.ndarray:
        scale, scale_sum = self.scales
        weights = self.weights[rows]
        features = rows < self.weights.shape[0] - 1
        if not self.averaged or self.count == 0:
            weights[features] *= scale
            return weights
        aux = self.aux[rows]
        model = weights - aux / self.count
        model[features] = (scale_sum * weights[features] - aux[features]) / self.count
        return model

    def zero_rows_stay_zero(self) -> bool:
        return _zero_preserving(self.scales)

    def model_entries(self, index: np.ndarray) -> np.ndarray:
        return self.model().ravel()[index]

    def plain_rows(self, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """The true weights are ``scale * v`` (the intercept row is stored as it is) and
        the sum of the weights after each example is ``P * v - aux`` for the feature
        rows (``count * v - aux`` for the intercept): rewritten in the plain form of
        :meth:`TrainingState.plain_rows`. Without decay (``scale == 1``, ``P ==
        count``) the state already is in it."""
        scale, scale_sum = self.scales
        if scale == 1.0 and (not self.averaged or scale_sum == self.count):
            return super().plain_rows(rows)
        rows = np.arange(self.weights.shape[0]) if rows is None else rows
        features = rows < self.weights.shape[0] - 1
        stored = self.weights[rows]
        weights = stored.copy()
        weights[features] *= scale
        if not self.averaged:
            return weights, None
        aux = self.aux[rows]
        # count * W - (P * v - aux), the feature rows' sum in the plain form.
        aux[features] = self.count * weights[features] - (
            scale_sum * stored[features] - aux[features]
        )
        return weights, aux

    def restart_count(self) -> None:
        super().restart_count()
        # The weights are then the true ones: the caller has written them unscaled.
        self.scales[:] = (1.0, 0.0)

    def load_values(self, values: dict[str, Any]) -> None:
        super().load_values(values)
        self.scales[:] = (values["scale"], values["scale_sum"])

    def plain_values(self) -> dict[str, Any]:
        # Unscaled weights: scale 1, and P (the sum of the scales) is the count.
        return {**super().plain_values(), "scale": 1.0, "scale_sum": float(self.count)}

    def in_place(self) -> list[tuple[np.ndarray, int | None]]:
        return [*super().in_place(), (self.scales, None)]

    def values(self) -> dict[str, Any]:
        scale, scale_sum = self.scales
        return {"scale": float(scale), "scale_sum": float(scale_sum), **super().values()}

    @classmethod
    def restore(cls, arrays: dict[str, np.ndarray], values: dict[str, Any]) -> LogisticState:
        state = super().restore(arrays, values)
        scale = _checked.real_value(values.get("scale"), "scale", 0.0, 1.0)
        scale_sum = _checked.real_value(values.get("scale_sum"), "scale_sum")
        if scale == 0.0:
            raise ValueError(f"scale must be in (0, 1], got {scale!r}")
        return cls(state.weights, state.aux, state.count, np.array([scale, scale_sum]))


@dataclass
class AdaptiveState(TrainingState):
    """The state of the rules that keep statistics of their own beside the weights
    (:mod:`perceptrons.linear._families`): a covariance, per-feature step sizes, counters.

    The weights and the average are kept explicitly, as :class:`TrainingState` keeps
    them (the model is theirs). ``stats`` holds the rule's arrays of statistics, and
    ``scalars`` its numbers (an update counter, a normalizer); both are what a model
    file stores beside the weights. Their layout is the family's, set on a subclass made
    by :func:`adaptive_state`:

    * diagonal (``FULL`` False): ``stats`` has shape ``(len(STATS), *weights.shape)``
      (one statistic per weight), or ``(len(STATS), n_features + 1)`` when the
      statistics are shared by the classes (``PER_CLASS`` False);
    * full (``FULL`` True): ``(len(STATS), columns, n_features + 1, n_features + 1)``,
      one matrix per class (``columns`` is 1 for a binary model or shared statistics),
      starting at ``STATS[k]`` times the identity.

    ``STATS`` are the initial values of the statistics (diagonal: every entry),
    ``SCALARS`` those of the numbers; ``STATS_LOW`` is the least value a statistic
    may hold (a file's are checked against it).
    """

    stats: np.ndarray = field(default_factory=lambda: np.zeros(0))
    scalars: np.ndarray = field(default_factory=lambda: np.zeros(0))

    STATS: ClassVar[tuple[float, ...]] = ()
    SCALARS: ClassVar[tuple[float, ...]] = ()
    FULL: ClassVar[bool] = False
    PER_CLASS: ClassVar[bool] = True
    STATS_LOW: ClassVar[float | None] = None
    #: Whether :meth:`model` reads ``stats`` (a lazily scaled state's scales).
    MODEL_READS_STATS: ClassVar[bool] = False
    #: Whether a diagonal ``stats`` holds one statistic per weight row (not ALMA's).
    STATS_BY_ROW: ClassVar[bool] = True

    def kernel_arguments(self, slack: np.ndarray) -> dict[str, np.ndarray]:
        return {"stats": self.stats, "scalars": self.scalars}

    @classmethod
    def stats_shape(cls, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of ``stats`` for weights of ``shape``."""
        rows = shape[0]
        columns = shape[1] if len(shape) == 2 and cls.PER_CLASS else 1
        if cls.FULL:
            return (len(cls.STATS), columns, rows, rows)
        if cls.PER_CLASS:
            return (len(cls.STATS), *shape)
        return (len(cls.STATS), rows)

    @classmethod
    def stats_entries(cls, rows: int, columns: int) -> int:
        """How many floats ``stats`` holds for ``rows`` weight rows and ``columns``
        columns (what the memory check adds for it)."""
        shape = (rows,) if columns == 1 else (rows, columns)
        return math.prod(cls.stats_shape(shape))

    @classmethod
    def initial_stats(cls, shape: tuple[int, ...]) -> np.ndarray:
        stats = np.zeros(cls.stats_shape(shape))
        for k, value in enumerate(cls.STATS):
            if cls.FULL:
                for column in range(stats.shape[1]):
                    np.fill_diagonal(stats[k, column], value)
            else:
                stats[k] = value
        return stats

    @classmethod
    def zeros(cls, n_features: int, n_columns: int, average: bool) -> AdaptiveState:
        state = TrainingState.zeros(n_features, n_columns, average)
        return cls(
            state.weights,
            state.aux,
            0,
            cls.initial_stats(state.weights.shape),
            np.array(cls.SCALARS, dtype=np.float64),
        )

    def arrays(self) -> dict[str, np.ndarray]:
        return {**super().arrays(), "stats": self.stats, "scalars": self.scalars}

    @classmethod
    def layout(cls, shape: tuple[int, ...], averaged: bool) -> dict[str, _checked.Spec]:
        # A full covariance has entries of either sign off its diagonal (checked in
        # restore); a diagonal one holds variances.
        low = None if cls.FULL else cls.STATS_LOW
        stats = _checked.floats(*cls.stats_shape(shape), low=low)
        if _row_statistics(cls):
            stats = dataclasses.replace(stats, by_row=1)
        scalars = _checked.floats(len(cls.SCALARS))
        return {**super().layout(shape, averaged), "stats": stats, "scalars": scalars}

    @classmethod
    def restore(cls, arrays: dict[str, np.ndarray], values: dict[str, Any]) -> AdaptiveState:
        state = TrainingState.restore(arrays, values)
        if "stats" not in arrays:
            # A model saved without its training state: its weights are the model. Only
            # a state whose model reads its statistics gets them, at their start (ALMA's
            # scales at 1, a few numbers); no covariance is allocated for a file that
            # holds none.
            if not cls.MODEL_READS_STATS:
                return cls(state.weights, state.aux, state.count)
            stats = cls.initial_stats(state.weights.shape)
            scalars = np.array(cls.SCALARS, dtype=np.float64)
            return cls(state.weights, state.aux, state.count, stats, scalars)
        stats = np.ascontiguousarray(arrays["stats"], dtype=np.float64)
        scalars = np.ascontiguousarray(arrays["scalars"], dtype=np.float64)
        if cls.FULL and cls.STATS_LOW is not None and stats.size:
            diagonal = np.diagonal(stats, axis1=-2, axis2=-1)
            if diagonal.min() < cls.STATS_LOW:
                raise ValueError(
                    f"stats holds a covariance with a diagonal entry below {cls.STATS_LOW:g}"
                )
        # A compact state's weights hold only some rows; its statistics are whole, or
        # those rows' (CompactState: statistics by row that start at zero).
        return cls(state.weights, state.aux, state.count, stats, scalars)

    def in_place(self) -> list[tuple[np.ndarray, int | None]]:
        # A diagonal statistic is kept per weight, its rows on the axis after the
        # statistics'; a full covariance is not kept per row.
        axis = 1 if self.STATS_BY_ROW and not self.FULL else None
        return [*super().in_place(), (self.stats, axis), (self.scalars, None)]

    #: The arguments of :func:`adaptive_state` that made this class.
    CONFIGURATION: ClassVar[tuple[tuple[Any, ...], tuple[tuple[str, Any], ...]]] = ((), ())

    def __reduce__(self) -> tuple[Any, ...]:
        # The class is made at run time: a pickle names how to make it again.
        fields = (self.weights, self.aux, self.count, self.stats, self.scalars)
        return _rebuild_adaptive_state, (type(self).CONFIGURATION, fields)


def _rebuild_adaptive_state(
    configuration: tuple[tuple[Any, ...], tuple[tuple[str, Any], ...]], fields: tuple[Any, ...]
) -> AdaptiveState:
    """An unpickled :class:`AdaptiveState`: its class made again, then its fields."""
    arguments, options = configuration
    return adaptive_state(*arguments, **dict(options))(*fields)


@cache
def adaptive_state(
    family: str,
    stats: tuple[float, ...],
    scalars: tuple[float, ...] = (),
    *,
    full: bool = False,
    per_class: bool = True,
    stats_low: float | None = None,
    base: type[AdaptiveState] = AdaptiveState,
) -> type[AdaptiveState]:
    """The :class:`AdaptiveState` subclass of one configuration (the same class for the
    same arguments, so that a state's class says how it was made)."""
    name = f"{base.__name__}[{family}{', full' if full else ''}]"
    attributes = {
        "STATS": tuple(float(v) for v in stats),
        "SCALARS": tuple(float(v) for v in scalars),
        "FULL": full,
        "PER_CLASS": per_class,
        "STATS_LOW": stats_low,
        "KIND": name,
        "CONFIGURATION": (
            (family, tuple(stats), tuple(scalars)),
            (("full", full), ("per_class", per_class), ("stats_low", stats_low), ("base", base)),
        ),
        "__module__": __name__,
        "__qualname__": name,
    }
    return dataclass(type(name, (base,), attributes))


def sorted_union(*arrays: Any) -> np.ndarray:
    """The sorted distinct int64 values of sorted arrays of row numbers: ``np.union1d``
    by one sort of their concatenation (its hashing ``unique`` costs several times as
    much on a hashed model's rows)."""
    merged = np.sort(np.concatenate([np.asarray(a, dtype=np.int64) for a in arrays]))
    if merged.shape[0] < 2:
        return merged
    return merged[np.concatenate(([True], merged[1:] != merged[:-1]))]


def _zero_preserving(scales: np.ndarray) -> bool:
    """Whether multiplying ``+0.0`` by each of ``scales`` gives ``+0.0``: finite and
    not negative."""
    return bool(np.isfinite(scales).all() and (scales >= 0).all())


def _used_rows(array: np.ndarray) -> np.ndarray:
    """Which rows of ``array`` hold a nonzero element (a negative zero counts: a row
    left out comes back as +0.0, and the state must come back bit for bit)."""
    used = (array != 0) | np.signbit(array)
    return used if used.ndim == 1 else used.any(axis=1)


def _rows_of(array: np.ndarray | _checked.SparseArray) -> np.ndarray:
    """The sorted rows of a dense or sparse array that hold a nonzero element."""
    if isinstance(array, _checked.SparseArray):
        return array.nonzero_rows()
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(_used_rows(array))


def _gather(array: np.ndarray | _checked.SparseArray, rows: np.ndarray) -> np.ndarray:
    """The rows ``rows`` (sorted, a superset of the nonzero ones) of a dense or sparse
    array, as a dense array; an empty array (no average) stays as it is."""
    if isinstance(array, _checked.SparseArray):
        width = int(np.prod(array.shape[1:], dtype=np.int64))
        out = np.zeros((rows.shape[0], *array.shape[1:]))
        flat = out.reshape(rows.shape[0], width)
        # array.check() made the index sorted and in range; rows covers every one of them.
        flat[np.searchsorted(rows, array.index // width), array.index % width] = array.values
        return out
    if array.size == 0:
        return np.ascontiguousarray(array, dtype=np.float64)
    return array[rows]


def _scattered(array: np.ndarray, rows: np.ndarray, n_rows: int) -> _checked.SparseArray:
    """The rows-only ``array`` as the coordinates of the ``n_rows``-row array it is part of."""
    width = int(np.prod(array.shape[1:], dtype=np.int64))
    flat = array.reshape(-1)
    # The flat positions, turned into the whole array's in place: np.nonzero's row and
    # column arrays, and the products of them, would hold several copies at once.
    position = np.flatnonzero((flat != 0) | np.signbit(flat))
    values = flat[position]
    columns = position % width
    position //= width
    index = rows[position].astype(np.int64, copy=False)
    del position
    index *= width
    index += columns
    return _checked.SparseArray((n_rows, *array.shape[1:]), index, values)


def _row_statistics(state: TrainingState | type[TrainingState]) -> bool:
    """Whether a state's statistics are kept by weight row in its compact form, as its
    weights are: an adaptive rule's per-weight statistics that start at zero (AdaGrad's
    sums, NAG's scales), whose rows never touched stay zero. Others (a covariance, AROW's
    variances starting at one) are kept whole."""
    cls = state if isinstance(state, type) else type(state)
    return (
        issubclass(cls, AdaptiveState)
        and not cls.FULL
        # (ALMA's statistics are per class, not per row: its own stats_shape)
        and cls.stats_shape.__func__ is AdaptiveState.stats_shape.__func__  # type: ignore[attr-defined]
        and bool(cls.STATS)
        and all(value == 0.0 for value in cls.STATS)
    )


def _statistics_rows(stats: np.ndarray | _checked.SparseArray) -> np.ndarray:
    """The sorted weight rows (axis 1) holding a nonzero statistic."""
    if isinstance(stats, _checked.SparseArray):
        width = math.prod(stats.shape[2:])
        return np.unique((stats.index // width) % stats.shape[1])
    used = np.zeros(stats.shape[1], dtype=bool)
    for statistic in stats:
        used |= _used_rows(statistic)
    return np.flatnonzero(used)


def _gather_statistics(stats: np.ndarray | _checked.SparseArray, rows: np.ndarray) -> np.ndarray:
    """The rows ``rows`` (axis 1; sorted, a superset of those holding a nonzero) of
    statistics by row, as a dense array."""
    if not isinstance(stats, _checked.SparseArray):
        return np.ascontiguousarray(stats[:, rows])
    width = math.prod(stats.shape[2:])
    out = np.zeros((stats.shape[0], rows.shape[0], width))
    statistic, rest = np.divmod(stats.index, width * stats.shape[1])
    row, column = np.divmod(rest, width)
    out[statistic, np.searchsorted(rows, row), column] = stats.values
    return out.reshape((stats.shape[0], rows.shape[0], *stats.shape[2:]))


def _statistic_major(
    scattered: _checked.SparseArray, n_rows: int, n_statistics: int
) -> tuple[np.ndarray, np.ndarray]:
    """The coordinates of row-major ``(n_rows, n_statistics, ...)`` statistics as those
    of the ``(n_statistics, n_rows, ...)`` array the state holds: sorted again."""
    width = math.prod(scattered.shape[2:])
    row, rest = np.divmod(scattered.index, n_statistics * width)
    statistic, column = np.divmod(rest, width)
    index = (statistic * n_rows + row) * width + column
    order = np.argsort(index, kind="stable")
    return index[order], scattered.values[order]


#: The memory a :class:`CompactState` may take for its table of row positions
#: (``CompactState._positions``) whatever its own size: 4 bytes a row, so ``2**21`` rows.
POSITIONS_TABLE_BYTES = 2**23


@dataclass
class CompactState:
    """A training state kept only in its rows with a nonzero weight or aux entry.

    ``rows`` are those rows, sorted, always ending with the intercept row (the last of
    the ``n_rows``), so that ``state`` -- the family's own state over those rows -- has
    its intercept last as every state does and computes its model row by row exactly as
    the whole state would. What a sparsified model keeps instead of the dense state
    (``weights`` and ``aux`` of ``(n_features + 1) x n_classes`` each): a perceptron on
    hashed text only ever touches the features of its mistakes.
    """

    rows: np.ndarray
    n_rows: int
    state: TrainingState

    @classmethod
    def of(cls, state: TrainingState) -> CompactState:
        used = _used_rows(state.weights)
        if state.averaged:
            used |= _used_rows(state.aux)
        by_row = isinstance(state, AdaptiveState) and _row_statistics(state)
        if isinstance(state, AdaptiveState) and by_row:
            for statistic in state.stats:
                used |= _used_rows(statistic)
        used[-1] = True
        rows = np.flatnonzero(used)
        aux = state.aux[rows] if state.averaged else state.aux.copy()
        stats = state.stats[:, rows] if isinstance(state, AdaptiveState) and by_row else None
        return cls(rows, state.weights.shape[0], _replace(state, state.weights[rows], aux, stats))

    @classmethod
    def restore(
        cls,
        state_class: type[TrainingState],
        arrays: dict[str, Any],
        values: dict[str, Any],
    ) -> CompactState:
        """The compact state of checked arrays (dense or :class:`~perceptrons._checked.
        SparseArray`), never expanding them to the dense state."""
        weights, aux = arrays["weights"], arrays["aux"]
        n_rows = weights.shape[0]
        last = np.array([n_rows - 1], dtype=np.int64)
        gathered = ["weights", "aux"]
        stats_rows = np.zeros(0, dtype=np.int64)
        if _row_statistics(state_class) and "stats" in arrays:
            gathered.append("stats")
            stats_rows = _statistics_rows(arrays["stats"])
        rows = sorted_union(_rows_of(weights), _rows_of(aux), stats_rows, last)
        # The family's other arrays (statistics not kept by row) are kept whole; the
        # weights, the average and statistics by row are gathered on their rows, never
        # dense.
        rows_only = {
            name: array.to_dense() if isinstance(array, _checked.SparseArray) else array
            for name, array in arrays.items()
            if name not in gathered
        }
        rows_only.update(weights=_gather(weights, rows), aux=_gather(aux, rows))
        if "stats" in gathered:
            rows_only["stats"] = _gather_statistics(arrays["stats"], rows)
        return cls(rows, n_rows, state_class.restore(rows_only, values))

    def expand(self) -> TrainingState:
        """The dense state again, bit for bit the one :meth:`of` was given."""
        state = self.state
        weights = np.zeros((self.n_rows, *state.weights.shape[1:]))
        weights[self.rows] = state.weights
        aux = state.aux
        if state.averaged:
            aux = np.zeros_like(weights)
            aux[self.rows] = state.aux
        stats = None
        if isinstance(state, AdaptiveState) and _row_statistics(state):
            stats = np.zeros((state.stats.shape[0], self.n_rows, *state.stats.shape[2:]))
            stats[:, self.rows] = state.stats
        return _replace(state, weights, aux, stats)

    def arrays(self) -> dict[str, Any]:
        """:meth:`TrainingState.arrays` with ``weights`` and ``aux`` as the coordinates of
        the whole arrays (:class:`~perceptrons._checked.SparseArray`)."""
        arrays: dict[str, Any] = dict(self.state.arrays())
        arrays["weights"] = _scattered(self.state.weights, self.rows, self.n_rows)
        if self.state.averaged:
            arrays["aux"] = _scattered(self.state.aux, self.rows, self.n_rows)
        if _row_statistics(self.state):
            # One statistic after the other, each over the rows as the weights are.
            stats = np.moveaxis(arrays["stats"], 0, 1)
            scattered = _scattered(np.ascontiguousarray(stats), self.rows, self.n_rows)
            arrays["stats"] = _checked.SparseArray(
                (stats.shape[1], self.n_rows, *stats.shape[2:]),
                *_statistic_major(scattered, self.n_rows, stats.shape[1]),
            )
        return arrays

    def published(self) -> tuple[sp.csr_matrix, np.ndarray]:
        """``(coef_, intercept_)``: the model as a CSR matrix of shape (n_columns,
        n_features) without its zeros, and the intercepts."""
        model = self.state.model()
        if model.ndim == 1:
            model = model[:, np.newaxis]
        features = model[:-1]
        rows = self.rows[:-1]
        # Class by class (a column of the state, a row of coef_): the nonzero weights
        # in row order, without the COO triplets of the whole model.
        indices, data = [], []
        for k in range(model.shape[1]):
            weights = features[:, k]
            nonzero = np.flatnonzero(weights)
            indices.append(rows[nonzero])
            data.append(weights[nonzero])
        indptr = np.zeros(model.shape[1] + 1, dtype=np.int64)
        np.cumsum([len(part) for part in indices], out=indptr[1:])
        coef = sp.csr_matrix(
            (
                np.concatenate(data) if data else np.zeros(0),
                np.concatenate(indices) if indices else np.zeros(0, dtype=np.int64),
                indptr,
            ),
            shape=(model.shape[1], self.n_rows - 1),
        )
        return coef, model[-1].copy()

    @property
    def nbytes(self) -> int:
        return int(self.rows.nbytes + sum(a.nbytes for a in self.state.arrays().values()))

    # ------------------------------------------------------------ training on its rows
    @staticmethod
    def trains(state_class: type[TrainingState]) -> bool:
        """Whether a state of ``state_class`` can be trained in its rows alone: every
        array it keeps per row starts at zero (its statistics are kept by row, or it
        keeps none), so that a row the data has not reached is zero in each of them."""
        return not issubclass(state_class, AdaptiveState) or _row_statistics(state_class)

    @classmethod
    def fresh(
        cls,
        state_class: type[TrainingState],
        features: np.ndarray,
        n_rows: int,
        n_columns: int,
        average: bool,
    ) -> CompactState:
        """A new (zero) state of ``state_class`` over the sorted feature rows
        ``features`` of ``n_rows`` rows, the intercept's added last."""
        rows = np.append(np.asarray(features, dtype=np.int64), n_rows - 1)
        return cls(rows, n_rows, state_class.zeros(rows.shape[0] - 1, n_columns, average))

    def covering(self, columns: np.ndarray) -> CompactState:
        """This state over the rows of ``columns`` too (sorted distinct feature rows):
        itself when it holds them all, else a new state whose rows not held before are
        zeros in every array kept by row -- as the dense state's are until an example
        reaches them. This state is left as it was (its other arrays, the family's
        numbers, are shared)."""
        held = self.rows
        table = self._positions()
        if table is not None and (columns.shape[0] == 0 or columns[-1] < self.n_rows):
            known = table[columns] >= 0
        else:
            position = np.searchsorted(held, columns)
            inside = position < held.shape[0]
            known = np.zeros(columns.shape[0], dtype=bool)
            known[inside] = held[position[inside]] == columns[inside]
        if known.all():
            return self
        rows = sorted_union(held, columns[~known])
        return self._with_rows(rows, np.searchsorted(rows, held))

    def local(self, X: sp.csr_matrix) -> sp.csr_matrix:
        """``X`` (CSR, every feature among :attr:`rows`) with its features renumbered
        as this state's rows: what the epoch kernels read over :attr:`state`. The
        entries keep their order, so that each example's arithmetic is the dense
        state's, term for term."""
        end = X.indptr[-1]
        table = self._positions()
        if table is None:
            indices = np.searchsorted(self.rows, X.indices[:end]).astype(X.indices.dtype)
        else:
            indices = table[X.indices[:end]].astype(X.indices.dtype, copy=False)
        return sp.csr_matrix(
            (X.data[:end], indices, X.indptr), shape=(X.shape[0], self.rows.shape[0] - 1)
        )

    def _positions(self) -> np.ndarray | None:
        """Each of the ``n_rows`` rows' position among :attr:`rows` (-1: not held), as
        a table, when it costs little beside the state (:data:`POSITIONS_TABLE_BYTES`,
        or the state's own size); else None. Renumbering a chunk's features by a lookup
        in it is several times faster than by a binary search over :attr:`rows`, which
        a hashed model's features hit all over (measured: 3.5 of 5 s of a streamed
        epoch over 500,000 VW rows went to ``searchsorted``). Made for each call, not
        kept: a fit's peak memory comes after its one renumbering."""
        if 4 * self.n_rows > max(POSITIONS_TABLE_BYTES, self.nbytes):
            return None
        table = np.full(self.n_rows, -1, dtype=np.int32)
        table[self.rows] = np.arange(self.rows.shape[0], dtype=np.int32)
        return table

    def saved(self, rows: np.ndarray | None = None) -> Callable[[], None]:
        """:meth:`TrainingState.saved` of :attr:`state` (``rows`` are its own)."""
        return self.state.saved(rows)

    def widened(self, n_rows: int) -> CompactState:
        """The same state for ``n_rows`` rows (at least :attr:`n_rows`): the rows added
        before the intercept's are zeros, which a compact state does not hold."""
        if n_rows < self.n_rows:
            raise ValueError(f"cannot narrow a state of {self.n_rows} rows to {n_rows}")
        rows = self.rows.copy()
        rows[-1] = n_rows - 1
        return CompactState(rows, n_rows, self.state)

    def without_first_row(self) -> CompactState:
        """The state without its row 0 (all zeros: the svmlight feature 0 of a file
        found to be 1-based), every other row one lower."""
        if self.rows[0] != 0:
            return CompactState(self.rows - 1, self.n_rows - 1, self.state)

        def dropped_first(array: np.ndarray, index: tuple[slice, ...]) -> np.ndarray:
            where = (*index, slice(1, None))
            return array[where].copy()

        dropped = self._mapped(dropped_first)
        return CompactState(self.rows[1:] - 1, self.n_rows - 1, dropped)

    def _with_rows(self, rows: np.ndarray, old_at: np.ndarray) -> CompactState:
        """A new compact state over ``rows`` whose rows ``old_at`` hold this state's
        rows, the others zeros."""

        def placed(array: np.ndarray, index: tuple[slice, ...]) -> np.ndarray:
            out = np.zeros(
                (*array.shape[: len(index)], rows.shape[0], *array.shape[len(index) + 1 :])
            )
            where: tuple[Any, ...] = (*index, old_at)
            out[where] = array
            return out

        return CompactState(rows, self.n_rows, self._mapped(placed))

    def _mapped(
        self, change: Callable[[np.ndarray, tuple[slice, ...]], np.ndarray]
    ) -> TrainingState:
        """:attr:`state` with each array kept by row (weights, the average, statistics
        by row) replaced by ``change(array, index)``, ``index`` the slices before its
        axis of rows; its other arrays and numbers shared."""
        state = self.state
        weights = change(state.weights, ())
        aux = change(state.aux, ()) if state.averaged else state.aux
        stats = None
        if isinstance(state, AdaptiveState) and _row_statistics(state):
            stats = change(state.stats, (slice(None),))
        return _replace(state, weights, aux, stats)


@dataclass(frozen=True)
class Frozen:
    """A fitted model without its training state: it predicts, and trains again only
    afresh. ``seen`` is how many examples (their total weight) it was trained on;
    ``pruned_at`` the threshold of ``sparsify()`` that pruned its weights (None: it was
    saved, or loaded, without its state)."""

    seen: int | float = 0
    pruned_at: float | None = None

    @property
    def reason(self) -> str:
        if self.pruned_at is None:
            return "it was saved with resumable=False"
        return f"its weights were pruned by sparsify(threshold={self.pruned_at:g})"


def _replace(
    state: TrainingState, weights: np.ndarray, aux: np.ndarray, stats: np.ndarray | None = None
) -> TrainingState:
    """``state`` with other ``weights`` and ``aux`` (and, given, an adaptive state's
    ``stats``; its own other fields and the inputs' bound kept)."""
    if stats is None:
        replaced = dataclasses.replace(state, weights=weights, aux=aux)
    else:
        assert isinstance(state, AdaptiveState)
        replaced = dataclasses.replace(state, weights=weights, aux=aux, stats=stats)
    if "input_bound" in vars(state):  # not a dataclass field: replace drops it
        replaced.input_bound = state.input_bound
    return replaced


def as_count(count: Any) -> int | float:
    """An example count as the state keeps it: an int when integral (every unweighted
    count, and old model files), else the float total of the examples' weights."""
    value = float(count)
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _non_negative_count(value: Any) -> int | float:
    """``count`` read back: an int >= 0, or a finite float >= 0 (weighted training)."""
    if rules.integer(0).accepts(value):
        return int(value)
    if rules.real(0.0).accepts(value):
        return as_count(value)
    raise ValueError(f"count must be a finite number >= 0, got {value!r}")


@dataclass
class AlmaState(AdaptiveState):
    """ALMA's state (:mod:`perceptrons._kernels.first_order`): the true weights of class
    ``c`` are ``scale_c * weights[:, c]`` (every row, the intercept included; a binary
    model has one class), so that projecting a class on the unit ball is the O(1)
    ``scale_c /= ||w_c||``. ``stats`` has shape ``(3, columns)``: per class its
    ``scale``, ``scale_sum`` (the sum of the scales, times the examples' weights, of
    the examples seen since the last rescale; the average's bookkeeping of
    :class:`RommaState`) and ``||w_c||²``. ``scalars`` is ``[k]``, the paper's update
    counter (1 before the first update). Made by :func:`adaptive_state` with
    ``base=AlmaState``."""

    MODEL_READS_STATS = True
    STATS_BY_ROW = False

    @classmethod
    def stats_shape(cls, shape: tuple[int, ...]) -> tuple[int, ...]:
        return (len(cls.STATS), shape[1] if len(shape) == 2 else 1)

    def _scales(self) -> tuple[Any, Any]:
        """``(scale, scale_sum)``: scalars for a binary model, one per column else."""
        scale, scale_sum = self.stats[0], self.stats[1]
        if self.weights.ndim == 1:
            return float(scale[0]), float(scale_sum[0])
        return scale, scale_sum

    def model(self) -> np.ndarray:
        scale, scale_sum = self._scales()
        if not self.averaged or self.count == 0:
            return scale * self.weights
        return (scale_sum * self.weights - self.aux) / self.count

    def model_rows(self, rows: np.ndarray) -> np.ndarray:
        scale, scale_sum = self._scales()
        weights = self.weights[rows]
        if not self.averaged or self.count == 0:
            return scale * weights
        return (scale_sum * weights - self.aux[rows]) / self.count

    def zero_rows_stay_zero(self) -> bool:
        return _zero_preserving(self.stats[:2])

    def model_entries(self, index: np.ndarray) -> np.ndarray:
        return self.model().ravel()[index]

    def plain_rows(self, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """The true weights ``W = scale * v`` and, averaged, ``A = count * W - (P v -
        aux)``, as :meth:`RommaState.plain_rows` (one scale per class)."""
        scale, scale_sum = self._scales()
        stored = self.weights if rows is None else self.weights[rows]
        weights = scale * stored
        if not self.averaged:
            return weights, None
        aux = self.aux if rows is None else self.aux[rows]
        return weights, self.count * weights - (scale_sum * stored - aux)

    def restart_count(self) -> None:
        super().restart_count()
        # The caller has written the true weights: scale 1, and ||w_c||² is theirs.
        columns = self.weights.reshape(self.weights.shape[0], -1)
        self.stats[0] = 1.0
        self.stats[1] = 0.0
        self.stats[2] = np.einsum("ij,ij->j", columns, columns)

    @classmethod
    def restore(cls, arrays: dict[str, np.ndarray], values: dict[str, Any]) -> AdaptiveState:
        state = super().restore(arrays, values)
        if state.stats.size and state.stats[0].min() <= 0.0:
            raise ValueError("stats holds a scale that is not positive")
        return state
