"""The vanilla and the averaged perceptron, binary and natively multiclass: the core.

Both are configuration on the shared online engine (:mod:`perceptrons.linear._online`): its
training path, epoch loop and prediction, with the perceptron kernels
(:mod:`perceptrons._kernels.perceptron`) and the update rules they implement, and the
ROMMA kernels (:mod:`perceptrons._kernels.romma`), whose lazily scaled weights have
their own training state (:class:`~perceptrons._states.RommaState`). The classes here
import no scikit-learn; :class:`perceptrons.Perceptron` and
:class:`perceptrons.AveragedPerceptron` are them under scikit-learn's face.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from perceptrons import _params as rules
from perceptrons._states import PerceptronState, TrainingState
from perceptrons.linear._families import ResolvedRule, Settings, resolve_rule
from perceptrons.linear._online import OnlineLinearClassifier
from perceptrons.linear._update_rules import RULES

__all__ = ["AveragedPerceptron", "Perceptron"]

# An empty mistake log: the kernels then log nothing, at no cost.
_NO_MISTAKE_LOG = np.empty((0, 2), dtype=np.int64)


class PerceptronRules(OnlineLinearClassifier):
    """The perceptrons' parameters and kernels; subclasses say whether they average."""

    _logs_updates = True

    _rules: ClassVar[dict[str, rules.Rule]] = {
        **OnlineLinearClassifier._rules,
        "warm_start": rules.boolean(),
        "early_stopping": rules.boolean(),
        "validation_fraction": rules.real_open_interval(0.0, 1.0, allow_none=True),
        "n_iter_no_change": rules.integer(1),
        "delta": rules.real(0.0),
        "update": rules.one_of(*RULES),
        "covariance": rules.one_of("diagonal", "full"),
        "margin": rules.real(0.0),
        "C": rules.real(0.0, inclusive=False),
        "n_shards": rules.Rule(
            "None, -1 or an int >= 1",
            lambda v: v is None or v == -1 or rules.integer(1).accepts(v),
        ),
        "class_weight": rules.class_weight(),
    }

    def __init__(
        self,
        *,
        max_epochs: int = 10,
        shuffle: bool = True,
        fit_intercept: bool = True,
        warm_start: bool = False,
        early_stopping: bool = False,
        validation_fraction: float | None = None,
        n_iter_no_change: int = 5,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
        delta: float = 0.0,
        update: str = "perceptron",
        margin: float = 0.0,
        C: float = 1.0,
        n_shards: int | None = None,
        class_weight: dict[Any, float] | str | None = None,
        update_params: dict[str, float] | None = None,
        covariance: str = "diagonal",
    ) -> None:
        self.max_epochs = max_epochs
        self.shuffle = shuffle
        self.fit_intercept = fit_intercept
        self.warm_start = warm_start
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.random_state = random_state
        self.verbose = verbose
        self.delta = delta
        self.update = update
        self.margin = margin
        self.C = C
        self.n_shards = n_shards
        self.class_weight = class_weight
        self.update_params = update_params
        self.covariance = covariance

    def _resolved_rule(self) -> ResolvedRule:
        """``update``, ``update_params`` and ``covariance`` resolved (checked, and the
        same object for the same values: see :func:`perceptrons.linear._families.resolve_rule`)."""
        return resolve_rule(type(self).__name__, self.update, self.update_params, self.covariance)

    @property
    def _state_class(self) -> type[TrainingState]:  # type: ignore[override]
        """The rule family's training state (:mod:`perceptrons.linear._families`)."""
        if not isinstance(self.update, str) or self.update not in RULES:
            return PerceptronState  # (an unknown rule is refused by _check_params)
        return self._resolved_rule().state_class

    def _example_rows_only(self, state: TrainingState, weight: float) -> bool:
        """Whether the rule's epoch writes only the rows of its examples' features (and
        the intercept's): not a rule of the table's ``every_row`` (ROMMA's and ALMA's
        rescaling of every weight, ada-rda's recomputing of every weight under new
        constants), nor one whose ``penalty`` is on (the L1 shrinking brings every weight
        up to date at the end of an epoch), nor a full covariance's update (``Σx``
        reaches every feature seen before), nor a call whose new constants recompute
        every weight of ``state`` first (FTRL's, see ``Family.remakes``)."""
        resolved = self._resolved_rule()
        if resolved.covariance == "full":
            return False
        remakes = resolved.family.remakes
        if remakes is not None and remakes(state, resolved.constants):
            return False
        return resolved.rule.example_rows_only(resolved.constants)

    def _mixing_refusal(self) -> str | None:
        """Why parameter mixing cannot train this rule (the table's reason), if so."""
        resolved = self._resolved_rule()
        rule = resolved.rule
        if rule.mixing is not None:
            return f"update={self.update!r}: {rule.mixing}"
        if resolved.covariance == "full":
            return (
                f"update={self.update!r} with covariance='full': each shard's covariance "
                "is a dense matrix over all features, which the mixing does not combine"
            )
        return None

    def _check_params(self) -> None:
        super()._check_params()
        resolved = self._resolved_rule()
        rule, constants = resolved.rule, resolved.constants
        name = type(self).__name__
        if rule.averaging is not None and self._averaged:
            raise ValueError(
                f"{name}: update={self.update!r} cannot be averaged: {rule.averaging}; use "
                "Perceptron (the last weights; the command line's --algorithm perceptron)."
            )
        if rule.penalized(constants) and self._averaged:
            raise ValueError(
                f"{name}: update={self.update!r} with {rule.penalty} > 0 cannot be averaged: the "
                "penalty moves every weight every round (applied lazily), which the average "
                "cannot follow at O(nnz) cost; use Perceptron (the last weights; the command "
                "line's --algorithm perceptron) or "
                f"{rule.penalty}=0."
            )
        if self.covariance == "full" and not rule.covariance:
            raise ValueError(
                f"{name}: update={self.update!r} has no full-covariance form; "
                "covariance='full' applies to "
                + ", ".join(repr(r.name) for r in RULES.values() if r.covariance)
            )
        refused = {
            "delta > 0 (the Δ trick)": (
                self.delta > 0 and not rule.delta_trick,
                "its per-example features would be rescaled with every update"
                if rule.family == "romma"
                else "its per-example features have no statistics of their own",
            ),
            "class_weight": (
                self.class_weight is not None and not rule.weighted,
                f"{rule.summary} has no weighted form",
            ),
            "n_shards other than None or 1 (parameter mixing)": (
                self.n_shards not in (None, 1) and self._mixing_refusal() is not None,
                (self._mixing_refusal() or "").partition(": ")[2],
            ),
        }
        for what, (given, why) in refused.items():
            if given:
                raise ValueError(f"{name}: update={self.update!r} does not support {what}: {why}.")

    def _check_sample_weight(self, sample_weight: ArrayLike | None) -> None:
        rule = RULES.get(self.update) if isinstance(self.update, str) else None
        if sample_weight is not None and rule is not None and not rule.weighted:
            raise ValueError(
                f"{type(self).__name__}: update={self.update!r} does not support "
                f"sample_weight ({rule.summary} has no weighted form); pass sample_weight=None."
            )

    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> PerceptronRules:
        self._check_sample_weight(sample_weight)
        if self.n_shards not in (None, 1):
            self._check_params()
            # Imported here: perceptrons.parallel drives estimators through the engine API
            # and never imports this module, so there is no import circle.
            from perceptrons.parallel.threads import mix_threads

            mix_threads(self, X, y, n_shards=self.n_shards, sample_weight=sample_weight)
            return self
        super().fit(X, y, sample_weight=sample_weight)
        return self

    fit.__doc__ = OnlineLinearClassifier.fit.__doc__

    def fit_epochs(
        self,
        X: ArrayLike,
        y: ArrayLike,
        progress: Callable[[int], object] | None = None,
        sample_weight: ArrayLike | None = None,
        *,
        publish_each_epoch: bool = True,
    ) -> Iterator[dict[str, Any]]:
        if self.n_shards not in (None, 1):
            raise ValueError(
                "fit_epochs trains serially; with n_shards > 1 use fit, or "
                "perceptrons.parallel.ParameterMixing(...).fit_epochs"
            )
        self._check_sample_weight(sample_weight)
        yield from super().fit_epochs(
            X, y, progress, sample_weight=sample_weight, publish_each_epoch=publish_each_epoch
        )

    fit_epochs.__doc__ = OnlineLinearClassifier.fit_epochs.__doc__

    def partial_fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        classes: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> PerceptronRules:
        self._check_sample_weight(sample_weight)
        super().partial_fit(X, y, classes, sample_weight=sample_weight)
        return self

    partial_fit.__doc__ = OnlineLinearClassifier.partial_fit.__doc__

    def _non_finite_cause(self, what: str) -> str | None:
        if not isinstance(self.update, str) or self.update not in RULES:
            return None
        return self._resolved_rule().non_finite_cause(what)

    def _targets(self, codes: np.ndarray) -> np.ndarray:
        """-1/+1 floats for binary problems, class indices otherwise."""
        if self.classes_.shape[0] == 2:
            return np.where(codes == 1, 1.0, -1.0)
        return codes

    def _epoch_kernel(
        self, state: TrainingState, multiclass: bool, slack: np.ndarray
    ) -> tuple[Callable[..., tuple[Any, ...]], dict[str, Any]]:
        resolved = self._resolved_rule()
        # A state continues under the same family and statistics (its KIND; the
        # constants may change between calls).
        if state.KIND != resolved.state_class.KIND:
            raise ValueError(
                f"{type(self).__name__}: update={self.update!r} cannot continue a state "
                "trained with another family of update rules or other statistics (ROMMA "
                "scales its weights; the adaptive rules keep statistics of their own); "
                "call fit (without warm_start) to start again."
            )
        settings = Settings(
            bias_feature=1.0 if self.fit_intercept else 0.0,
            C=float(self.C),
            margin=float(self.margin),
            delta=float(self.delta),
        )
        arguments = {
            **state.kernel_arguments(slack),
            "mistake_log": _NO_MISTAKE_LOG,
            "rule": resolved.rule_array(settings),
        }
        return resolved.epoch(multiclass), arguments

    def _epoch_record(self, statistic: float, n_examples: int, mistakes: int) -> dict[str, Any]:
        # The kernels' statistic counts the updates; "mistakes" the wrong predictions
        # made before them (equal for the perceptron without margin).
        return {"mistakes": int(mistakes), "updates": int(statistic), "examples": n_examples}

    def _describe(self, record: dict[str, Any]) -> str:
        extra = (
            f", validation score {record['validation_score']:.4f}"
            if "validation_score" in record
            else ""
        )
        counts = f"{record['mistakes']} mistakes"
        if "updates" in record:
            counts += f", {record['updates']} updates"
        return f"{counts} in {record['examples']} examples{extra}"


class Perceptron(PerceptronRules):
    """The vanilla perceptron's learner core: :class:`perceptrons.Perceptron` without
    scikit-learn (the same parameters, training and model)."""

    _averaged = False


class AveragedPerceptron(PerceptronRules):
    """The averaged perceptron's learner core: :class:`perceptrons.AveragedPerceptron`
    without scikit-learn (the same parameters, training and model)."""

    _averaged = True
