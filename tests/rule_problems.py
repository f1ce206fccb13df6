"""The random problems the oracle tests of the update rules draw (hypothesis): a few
examples of a few features, some entries zero, every class present; and the averaged
estimator of a rule where it has one."""

import numpy as np
from hypothesis import strategies as st

from perceptrons import AveragedPerceptron, Perceptron
from perceptrons.linear._update_rules import RULES


def averaged(rule, params=None):
    """AveragedPerceptron where ``rule`` can be averaged under ``params`` (over its
    defaults), else Perceptron: the table's ``averaging`` refusal, or a ``penalty`` that
    moves every weight every round turned on (ada-fobos-l1's default l1 > 0, for one)."""
    table = RULES[rule]
    averageable = table.averageable({**table.defaults, **(params or {})})
    return AveragedPerceptron if averageable else Perceptron


@st.composite
def problems(draw, max_classes=4, zeros=True, scales=None):
    """``(X, y, k)``: ``k`` classes (2 to ``max_classes``), ``k`` to 20 examples of 1 to
    5 features, about 30% of the entries zero (``zeros``), each column multiplied by
    one of ``scales`` when given (features of different scales)."""
    k = draw(st.integers(2, max_classes))
    n = draw(st.integers(k, 20))
    d = draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    X = rng.normal(size=(n, d))
    if zeros:
        X = X * (rng.random((n, d)) < 0.7)
    if scales is not None:
        X = X * rng.choice(scales, d)
    y = np.concatenate([np.arange(k), rng.integers(0, k, size=n - k)])
    rng.shuffle(y)
    return X, y, k
