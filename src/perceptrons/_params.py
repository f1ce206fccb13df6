"""Declarative hyperparameter rules, checked at fit time (``__init__`` only stores)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, cast

import numpy as np

#: The smallest positive normal float: a nonzero real parameter must be at least this
#: in magnitude. The kernels divide by these parameters (1 / C, 1 / 2C), and the
#: reciprocal of a subnormal overflows to inf.
NORMAL_MIN = float(np.finfo(float).tiny)


@dataclass(frozen=True)
class Rule:
    """A named predicate on one hyperparameter value."""

    description: str
    accepts: Callable[[Any], bool]


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool | np.bool_)


def _is_int(value: Any) -> bool:
    return isinstance(value, Integral) and not _is_bool(value)


def _is_real(value: Any) -> bool:
    # NumPy's stubs do not know numbers.Real: isfinite takes the value as given (cast).
    return (
        isinstance(value, Real)
        and not _is_bool(value)
        and np.isfinite(cast(Any, value))
        and not _subnormal(value)
    )


def _subnormal(value: Any) -> bool:
    """Whether ``value`` is a real number, not 0, below :data:`NORMAL_MIN` in magnitude."""
    if not isinstance(value, Real) or _is_bool(value):
        return False
    magnitude = abs(float(value))
    return 0.0 < magnitude < NORMAL_MIN


def boolean(*, allow_none: bool = False) -> Rule:
    if allow_none:
        return Rule("a bool or None", lambda v: v is None or _is_bool(v))
    return Rule("a bool", _is_bool)


def integer(low: int) -> Rule:
    return Rule(f"an int >= {low}", lambda v: _is_int(v) and v >= low)


def real_open_interval(low: float, high: float, *, allow_none: bool = False) -> Rule:
    text = f"a float in the open interval ({low}, {high})" + (" or None" if allow_none else "")
    return Rule(text, lambda v: (allow_none and v is None) or (_is_real(v) and low < v < high))


def random_state() -> Rule:
    return Rule(
        "None, an int or a numpy.random.RandomState",
        lambda v: v is None or _is_int(v) or isinstance(v, np.random.RandomState),
    )


def validate(estimator: Any, rules: dict[str, Rule]) -> None:
    """Raise a ValueError naming the first hyperparameter that breaks its rule."""
    for name, rule in rules.items():
        value = getattr(estimator, name)
        if not rule.accepts(value):
            raise ValueError(
                f"{type(estimator).__name__}: parameter {name!r} must be "
                f"{rule.description}, got {value!r}"
                + (
                    f" (subnormal: at least {NORMAL_MIN!r} in magnitude, or 0)."
                    if _subnormal(value)
                    else "."
                )
            )


def real(low: float, *, inclusive: bool = True) -> Rule:
    """A finite real number above ``low`` (or equal to it when ``inclusive``)."""
    text = f"a float {'>=' if inclusive else '>'} {low}"
    return Rule(text, lambda v: _is_real(v) and (v >= low if inclusive else v > low))


def finite_real() -> Rule:
    return Rule("a finite float", _is_real)


def one_of(*options: str) -> Rule:
    return Rule(
        "one of " + ", ".join(repr(o) for o in options),
        lambda v: isinstance(v, str) and v in options,
    )


def either(*rules: Rule) -> Rule:
    """Accept a value that any of ``rules`` accepts."""
    return Rule(
        " or ".join(r.description for r in rules),
        lambda v: any(r.accepts(v) for r in rules),
    )


def callable_() -> Rule:
    return Rule("a callable", callable)


def class_weight() -> Rule:
    """scikit-learn's ``class_weight``: None, ``"balanced"`` or a dict label -> weight
    (its labels and values are checked against the classes when training)."""
    return Rule(
        "None, 'balanced' or a dict {label: weight}",
        lambda v: v is None or (isinstance(v, str) and v == "balanced") or isinstance(v, dict),
    )
