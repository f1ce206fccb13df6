"""Logistic regression trained online by SGD, binary and multinomial: the core.

Configuration on the shared online engine (:mod:`perceptrons.linear._online`), with its own
kernels (:mod:`perceptrons._kernels.logistic`) and the lazy scale of its prior. The
class here imports no scikit-learn; :class:`perceptrons.LogisticRegressionSGD` is it
under scikit-learn's face.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from perceptrons import _params as rules
from perceptrons._kernels import logistic as _kernels
from perceptrons._linear import LogLinearProbabilities
from perceptrons._states import LogisticState, TrainingState
from perceptrons.linear._online import OnlineLinearClassifier

__all__ = ["LogisticRegressionSGD"]

# The lazy prior's scale is folded back into the weights when it falls below this; a
# rescale costs O(n_features), once every log(min_scale) / log(1 - learning_rate * l2)
# examples. The averaged model's two terms, P * v and aux, grow to about 1 / min_scale
# times the sum they represent just before a rescale: its relative rounding error is
# about 2e-16 / min_scale, hence a larger threshold when averaging (at most ~2e-12).
_MIN_SCALE = 1e-9
_MIN_SCALE_AVERAGED = 1e-4


class LogisticRegressionSGD(LogLinearProbabilities, OnlineLinearClassifier):
    """Logistic regression's learner core: :class:`perceptrons.LogisticRegressionSGD`
    without scikit-learn (the same parameters, training and model)."""

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

    @property
    def _dense_changes(self) -> bool:
        # The L2 prior decays every weight with every example.
        return float(self.l2) > 0.0

    def _example_rows_only(self, state: TrainingState, weight: float) -> bool:
        """The prior's decay is the O(1) ``scale *= decay`` but when ``scale`` falls
        below ``min_scale``: then every weight is rescaled. Epochs over examples of
        total weight ``weight`` leave ``scale`` at ``scale * decay ** weight`` (a
        rescale aside); with a margin of 2 for its rounding, none can happen."""
        if not self._dense_changes:
            return True
        assert isinstance(state, LogisticState)  # the _state_class of this family
        decay = 1.0 - float(self.learning_rate) * float(self.l2)
        min_scale = _MIN_SCALE_AVERAGED if self.average else _MIN_SCALE
        return bool(state.scale * decay**weight > 2.0 * min_scale)

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
        return kernel, {**state.kernel_arguments(slack), "rule": rule}

    def _epoch_record(self, statistic: float, n_examples: int, mistakes: int) -> dict[str, Any]:
        return {"log_loss": float(statistic) / max(n_examples, 1), "examples": n_examples}

    def _describe(self, record: dict[str, Any]) -> str:
        return f"mean log-loss {record['log_loss']:.4f} over {record['examples']} examples"
