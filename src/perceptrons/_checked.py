"""Declarative checks of state read from an untrusted source (a model file).

Each family says what its state arrays must look like as a dict of :class:`Spec`
(``state_layout``); :func:`check_layout` checks a declared shape and dtype against it
(before the data are read: :mod:`perceptrons.io.persist` checks the ``.npy`` headers so),
and :func:`check_arrays` checks the arrays themselves: the exact set of names, dtypes,
shapes, finiteness and the range of every index. Numba does no bounds checks: an index
array is safe for a kernel only once its range has been checked here.

A dimension of a :class:`Spec` is an int (exact) or a :class:`Free` size, named so that
arrays sharing it must agree (e.g. the voted perceptron's support vectors and dual
coefficients) and bounded by what the metadata implies.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from perceptrons._memory import check_allocation, format_bytes

__all__ = [
    "Free",
    "SparseArray",
    "Spec",
    "boolean_value",
    "check_arrays",
    "check_layout",
    "count_value",
    "integer_value",
    "pack_strings",
    "real_value",
    "strings",
    "surrogate_problem",
    "unpack_strings",
]

# Sizes and counters above this are refused (exact in float64, far from int64 overflow).
MAX_COUNT = 2**53


@dataclass(frozen=True)
class Free:
    """A size not fixed by the metadata: named (equal wherever it appears in one
    check) and at most ``at_most``."""

    name: str
    at_most: int = MAX_COUNT


Dim = int | Free


@dataclass(frozen=True)
class Spec:
    """What one state array must be.

    ``dtypes``: the accepted dtypes, exactly (native byte order); ``shape``: one
    :data:`Dim` per axis. Float arrays must be finite unless ``finite`` is False; values
    (float or int) must lie in ``[low, high)`` (``high`` exclusive, either may be None).
    ``optional`` arrays may be absent. ``by_row``: the axis of the weight rows along
    which a compact (sparsified) state keeps only the rows holding a nonzero, None for
    an array it keeps whole (what a loader's memory estimate counts).
    """

    dtypes: tuple[np.dtype, ...]
    shape: tuple[Dim, ...]
    low: float | None = None
    high: float | None = None
    finite: bool = True
    optional: bool = False
    by_row: int | None = None


FLOAT64 = (np.dtype(np.float64),)
INT64 = (np.dtype(np.int64),)
UINT8 = (np.dtype(np.uint8),)
INDEX = (np.dtype(np.int32), np.dtype(np.int64))  # scipy's sparse index arrays


def floats(*shape: Dim, low: float | None = None, optional: bool = False) -> Spec:
    """Finite float64 values of ``shape``, at least ``low`` when given."""
    return Spec(FLOAT64, shape, low=low, optional=optional)


def indices(*shape: Dim, high: int, dtypes: tuple[np.dtype, ...] = INT64) -> Spec:
    """Integers in ``[0, high)``: indices a kernel may use without a bounds check."""
    return Spec(dtypes, shape, low=0, high=high)


def check_layout(
    name: str,
    shape: tuple[int, ...],
    dtype: np.dtype,
    spec: Spec,
    sizes: dict[str, int],
    fits: str = "the metadata",
) -> None:
    """Check a declared ``shape`` and ``dtype`` against ``spec`` (no data needed).

    ``sizes`` collects the values of the :class:`Free` dimensions seen so far, so that
    arrays sharing one agree; ``fits`` says what the shapes derive from, for messages
    (e.g. ``"5 features and 3 classes"``).
    """
    if dtype not in spec.dtypes:
        wanted = " or ".join(str(d) for d in spec.dtypes)
        raise ValueError(f"{name} has dtype {dtype.str}, expected {wanted}")
    if len(shape) != len(spec.shape):
        expected = str(tuple(_dim(d) for d in spec.shape)).replace("'", "")
        raise ValueError(f"{name} of shape {shape} do not fit {fits} (expected {expected})")
    for axis, (got, want) in enumerate(zip(shape, spec.shape, strict=True)):
        if isinstance(want, Free):
            if got > want.at_most:
                raise ValueError(
                    f"{name} has {got} {want.name} (axis {axis}), more than the {want.at_most} "
                    "the metadata allows"
                )
            if sizes.setdefault(want.name, got) != got:
                raise ValueError(
                    f"{name} has {got} {want.name} (axis {axis}), other arrays {sizes[want.name]}"
                )
        elif got != want:
            expected = str(tuple(_dim(d) for d in spec.shape)).replace("'", "")
            raise ValueError(f"{name} of shape {shape} do not fit {fits} (expected {expected})")


def _dim(dim: Dim) -> str:
    return dim.name if isinstance(dim, Free) else str(dim)


def check_values(name: str, array: np.ndarray, spec: Spec) -> None:
    """Finiteness and range of ``array``'s values (its layout already checked)."""
    if array.size == 0:
        return
    if array.dtype.kind == "f" and spec.finite and not _finite(array):
        raise ValueError(f"{name} holds NaN or infinite values")
    if spec.low is not None and array.min() < spec.low:
        wanted = "non-negative" if spec.low == 0 else f">= {spec.low:g}"
        raise ValueError(f"{name} holds values below {spec.low:g}: they must be {wanted}")
    if spec.high is not None and array.max() >= spec.high:
        raise ValueError(f"{name} holds values of {spec.high:g} or more")


def _finite(array: np.ndarray) -> bool:
    """Whether every element is finite, by blocks: no mask of the array's size."""
    flat = array.ravel()
    return all(bool(np.isfinite(flat[a:b]).all()) for a, b in _blocks(flat))


def names_problem(specs: Mapping[str, Spec], names: Iterable[str], prefix: str = "") -> str | None:
    """What is wrong with the set of array ``names`` for ``specs`` (a required one
    missing, one not specified), or None: every array is named, optional ones may be
    absent. ``prefix`` is the names' prefix in messages (a file's member names)."""
    present = set(names)
    missing = sorted(n for n, s in specs.items() if n not in present and not s.optional)
    if missing:
        return f"state arrays missing: {', '.join(prefix + n for n in missing)}"
    unknown = sorted(present - set(specs))
    if unknown:
        return f"unexpected state arrays: {', '.join(prefix + n for n in unknown)}"
    return None


def check_arrays(
    arrays: Mapping[str, Any], specs: Mapping[str, Spec], fits: str = "the metadata"
) -> dict[str, Any]:
    """``arrays`` checked against ``specs``: exactly the names specified (optional ones
    may be absent), every layout and value; returned C-contiguous.

    A :class:`SparseArray` is checked as the dense array it stands for (its layout,
    its stored values) and as coordinates (:meth:`SparseArray.check`); it is returned
    as it is, for the caller to expand or keep.
    ``fits`` says what the shapes derive from, for messages.
    """
    problem = names_problem(specs, arrays)
    if problem is not None:
        raise ValueError(problem)
    sizes: dict[str, int] = {}
    checked: dict[str, Any] = {}
    for name, value in arrays.items():
        spec = specs[name]
        if isinstance(value, SparseArray):
            if not sparse_storable(spec):
                raise ValueError(f"{name} cannot be stored sparse")
            check_layout(name, value.shape, value.values.dtype, spec, sizes, fits)
            value.check(name)
            check_values(name, value.values, spec)
            checked[name] = value
            continue
        array = np.asarray(value)
        check_layout(name, array.shape, array.dtype, spec, sizes, fits)
        check_values(name, array, spec)
        checked[name] = np.ascontiguousarray(array)
    return checked


def sparse_storable(spec: Spec) -> bool:
    """Whether arrays of ``spec`` may be given as a :class:`SparseArray`: float64
    arrays whose every size the metadata fixes."""
    return spec.dtypes == FLOAT64 and all(isinstance(dim, int) for dim in spec.shape)


@dataclass(frozen=True)
class SparseArray:
    """A float64 array of ``shape`` given by its nonzero elements: ``index`` holds
    their positions in the flattened (C order) array, strictly increasing, and
    ``values`` the elements. What a model file stores instead of a mostly-zero array
    (a hashed model touches few of its ``2**20`` rows); :meth:`check` is what makes
    ``index`` safe to scatter with."""

    shape: tuple[int, ...]
    index: np.ndarray
    values: np.ndarray

    @classmethod
    def from_dense(cls, array: np.ndarray) -> SparseArray:
        array = np.ascontiguousarray(array, dtype=np.float64)
        flat = array.ravel()
        index = np.concatenate(
            [start + np.flatnonzero(_stored(flat[start:stop])) for start, stop in _blocks(flat)]
            or [np.zeros(0, dtype=np.int64)]
        ).astype(np.int64, copy=False)
        return cls(array.shape, index, flat[index])

    @classmethod
    def if_smaller(cls, array: np.ndarray) -> SparseArray | None:
        """:meth:`from_dense` when the coordinates take fewer bytes than ``array`` and
        fit in the memory budget, else None (keep the array dense): counted first, so
        that a dense array (a full covariance) costs no coordinates at all."""
        array = np.ascontiguousarray(array, dtype=np.float64)
        flat = array.ravel()
        nnz = sum(int(np.count_nonzero(_stored(flat[a:b]))) for a, b in _blocks(flat))
        if 16 * nnz >= array.nbytes:
            return None
        try:
            check_allocation(16 * nnz, f"the coordinates of {nnz:,} nonzeros")
        except MemoryError:  # the dense form needs nothing more: written as it is
            return None
        return cls.from_dense(array)

    @property
    def nnz(self) -> int:
        return int(self.index.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.index.nbytes + self.values.nbytes)

    @property
    def dense_nbytes(self) -> int:
        return math.prod(self.shape) * 8

    def check(self, name: str) -> None:
        """Coordinates a scatter may follow without a bounds check: 1-D int64 index and
        float64 values of one length, the index strictly increasing (sorted, no
        duplicates) within the array's size."""
        index, values = self.index, self.values
        size = math.prod(self.shape)
        if index.dtype != np.int64 or index.ndim != 1:
            raise ValueError(f"{name}: the index must be a 1-D int64 array")
        if values.dtype != np.float64 or values.shape != index.shape:
            raise ValueError(
                f"{name}: {values.shape} float64 values expected for {index.shape[0]} indices"
            )
        if index.shape[0] > size:
            raise ValueError(f"{name}: {index.shape[0]} nonzeros in an array of {size} elements")
        if index.shape[0] and (index[0] < 0 or index[-1] >= size):
            raise ValueError(f"{name}: an index lies outside [0, {size})")
        if index.shape[0] > 1 and not bool((index[1:] > index[:-1]).all()):
            raise ValueError(f"{name}: the index must be strictly increasing (sorted, no repeats)")

    def to_dense(self) -> np.ndarray:
        array = np.zeros(math.prod(self.shape))
        array[self.index] = self.values
        return array.reshape(self.shape)

    def nonzero_rows(self) -> np.ndarray:
        """The sorted rows (first axis) holding a nonzero element: one pass, the
        index being increasing (:meth:`check`), not a sort."""
        rows = self.index // max(math.prod(self.shape[1:]), 1)
        if rows.shape[0] < 2:
            return rows
        return rows[np.concatenate(([True], rows[1:] != rows[:-1]))]


# Elements scanned at a time for nonzeros: the masks of a scan take this many bytes,
# not one per element of the array (a full covariance's d x d).
_BLOCK = 2**20


def _blocks(flat: np.ndarray) -> list[tuple[int, int]]:
    size = flat.shape[0]
    return [(start, min(start + _BLOCK, size)) for start in range(0, size, _BLOCK)]


def _stored(values: np.ndarray) -> np.ndarray:
    """Which ``values`` a sparse form stores: the nonzeros, and the negative zeros (the
    array must come back bit for bit)."""
    return (values != 0) | np.signbit(values)


# ---------------------------------------------------------------- string tables
# Python's memory per string of a table, beyond its characters: the str object, the
# list's pointer, and a vectorizer's dict entry for it (an estimate, for the check).
STRING_OVERHEAD = 160


def strings(text: str, ends: Dim) -> dict[str, Spec]:
    """The two arrays of a table of ``ends`` strings stored as ``<text>_text`` (uint8:
    the UTF-8 bytes of all the strings, one after another) and ``<text>_ends`` (int64:
    where each string ends in them; see :func:`pack_strings`)."""
    return {
        f"{text}_text": Spec(UINT8, (Free(f"{text} bytes"),)),
        f"{text}_ends": Spec(INT64, (ends,), low=0),
    }


def surrogate_problem(value: str) -> str | None:
    """What makes ``value`` no Unicode text, or None: a lone surrogate (a str may hold
    one, from ``"\\ud800"`` or ``surrogateescape``; strict UTF-8 encodes none, so no
    file holds one and printing it fails)."""
    if value.isascii():
        return None
    found = _SURROGATE.search(value)
    if found is None:
        return None
    return f"a lone surrogate, U+{ord(found.group()):04X}, at character {found.start()}"


_SURROGATE = re.compile("[\ud800-\udfff]")


def pack_strings(values: list[str], name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(text, ends)``: the UTF-8 bytes of ``values`` one after another (uint8) and
    where each ends in them (int64): string ``i`` is ``text[ends[i - 1]:ends[i]]``
    (from 0 for the first). A few bytes a string, where a JSON list or a NumPy ``U``
    array would take the longest string's size times four for each. A string that is
    no Unicode text (:func:`surrogate_problem`) is a ValueError naming ``name``."""
    try:
        encoded = [value.encode("utf-8") for value in values]
    except UnicodeEncodeError:
        for i, value in enumerate(values):
            problem = surrogate_problem(value)
            if problem is not None:
                raise ValueError(
                    f"cannot save {name}: string {i} holds {problem} (not Unicode text, "
                    "which UTF-8 cannot encode)"
                ) from None
        raise
    ends = np.cumsum([len(item) for item in encoded], dtype=np.int64)
    return np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(), ends.reshape(-1)


def unpack_strings(text: np.ndarray, ends: np.ndarray, name: str) -> list[str]:
    """The strings :func:`pack_strings` stored, checked first: ``text`` 1-D uint8,
    ``ends`` 1-D int64, non-decreasing from 0 up to exactly the length of ``text``,
    every piece valid UTF-8 (strict: a lone surrogate's bytes, ``ED A0 80``, are not),
    and the strings' memory within the budget of :mod:`perceptrons._memory`."""
    if text.dtype != np.uint8 or text.ndim != 1:
        raise ValueError(f"{name}_text must be a 1-D uint8 array")
    if ends.dtype != np.int64 or ends.ndim != 1:
        raise ValueError(f"{name}_ends must be a 1-D int64 array")
    n_bytes, n_strings = int(text.shape[0]), int(ends.shape[0])
    if n_strings == 0:
        if n_bytes:
            raise ValueError(f"{name}: {n_bytes} bytes of text for no strings")
        return []
    if ends[0] < 0 or ends[-1] != n_bytes:
        raise ValueError(f"{name}_ends must run from 0 to the {n_bytes} bytes of {name}_text")
    if n_strings > 1 and not bool((ends[1:] >= ends[:-1]).all()):
        raise ValueError(f"{name}_ends must be non-decreasing")
    check_allocation(
        n_strings * STRING_OVERHEAD + 4 * n_bytes,
        f"{name} ({n_strings:,} strings of {format_bytes(n_bytes)} of UTF-8)",
    )
    data = text.tobytes()
    stops = ends.tolist()
    pieces = list(zip([0, *stops[:-1]], stops, strict=True))
    try:
        whole = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}_text is not UTF-8 at byte {exc.start}: {exc.reason}") from None
    if len(whole) == n_bytes:  # ASCII: bytes and characters line up
        return [whole[start:stop] for start, stop in pieces]
    strings = []
    for start, stop in pieces:
        try:
            strings.append(data[start:stop].decode("utf-8"))
        except UnicodeDecodeError as exc:  # the ends cut a character
            raise ValueError(
                f"{name}_text is not UTF-8 at byte {start + exc.start}: {name}_ends cut a character"
            ) from None
    return strings


# ------------------------------------------------------------------ JSON values
def _is_int(value: Any) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool | np.bool_)


def integer_value(value: Any, name: str, low: int = 0, high: int = MAX_COUNT) -> int:
    """``value`` as an int in ``[low, high]``, or a ValueError naming it."""
    if not (_is_int(value) and low <= value <= high):
        raise ValueError(f"{name} must be an int in [{low}, {high}], got {_short(value)}")
    return int(value)


def real_value(value: Any, name: str, low: float = -math.inf, high: float = math.inf) -> float:
    """``value`` as a finite float in ``[low, high]``, or a ValueError naming it."""
    number = math.nan
    if isinstance(value, Real) and not isinstance(value, bool | np.bool_):
        try:
            number = float(value)
        except OverflowError:  # an int beyond float64
            number = math.inf
    if not (math.isfinite(number) and low <= number <= high):
        raise ValueError(f"{name} must be a finite number in [{low}, {high}], got {_short(value)}")
    return number


def count_value(value: Any, name: str = "count") -> int | float:
    """A count of (possibly weighted) examples: a finite number in ``[0, 2**53]``,
    kept an int when integral."""
    number = real_value(value, name, 0.0, float(MAX_COUNT))
    return int(number) if number == int(number) else number


def boolean_value(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false, got {_short(value)}")
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
