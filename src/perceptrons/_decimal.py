"""The numbers of the text formats (svmlight, ``vw``, ``counts``): ASCII decimal only.

A value or a label is what C's ``strtod`` reads in the "C" locale, whole token: an
optional sign, decimal digits with at most one ``.`` (at least one digit), an optional
exponent ``e``/``E`` with an optional sign and digits; or ``inf``, ``infinity``, ``nan``
in any case, which the readers then refuse as not finite. Python's ``float()`` accepts
more (``1_000``, digits of other scripts such as ``١``, surrounding Unicode whitespace),
and so would read a token that no other reader of these formats accepts. A feature index
is ASCII decimal digits with an optional sign.

The compiled readers (:mod:`perceptrons._kernels.parse`,
:mod:`perceptrons._kernels.hashing`) only take tokens inside this rule and leave the
others to the Python readers, which apply it through :func:`decimal_number`.
"""

from __future__ import annotations

import re

__all__ = ["decimal_index", "decimal_number", "is_decimal_number"]

_NUMBER = r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)"
_INDEX = r"[+-]?[0-9]+"
# re.ASCII: under IGNORECASE, Unicode matching would fold "ı" (dotless i) onto "i".
_NUMBER_TEXT = re.compile(_NUMBER, re.IGNORECASE | re.ASCII)
_NUMBER_BYTES = re.compile(_NUMBER.encode(), re.IGNORECASE)
_INDEX_TEXT = re.compile(_INDEX, re.ASCII)
_INDEX_BYTES = re.compile(_INDEX.encode())


def is_decimal_number(token: str | bytes) -> bool:
    """Whether ``token`` is a number of the text formats (see the module's rule)."""
    pattern = _NUMBER_BYTES if isinstance(token, bytes) else _NUMBER_TEXT
    return pattern.fullmatch(token) is not None  # type: ignore[arg-type]


def decimal_number(token: str | bytes) -> float:
    """``float(token)`` for a number of the text formats, else a :class:`ValueError`.

    Examples
    --------
    >>> decimal_number("-2.5e3"), decimal_number(b".5")
    (-2500.0, 0.5)
    >>> decimal_number("1_000")
    Traceback (most recent call last):
    ...
    ValueError: not an ASCII decimal number: '1_000'
    """
    if not is_decimal_number(token):
        raise ValueError(f"not an ASCII decimal number: {token!r}")
    return float(token)


def decimal_index(token: str | bytes) -> int:
    """``int(token)`` for an index of the text formats (ASCII digits, optional sign),
    else a :class:`ValueError` (also past Python's limit on the digits of an ``int``)."""
    pattern = _INDEX_BYTES if isinstance(token, bytes) else _INDEX_TEXT
    if pattern.fullmatch(token) is None:  # type: ignore[arg-type]
        raise ValueError(f"not an ASCII decimal integer: {token!r}")
    return int(token)
