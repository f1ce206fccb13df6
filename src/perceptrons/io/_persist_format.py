"""The model file's format: its metadata, checked field by field, its checksum, and
plain JSON and label arrays for what an estimator holds (see :mod:`perceptrons.io.persist`,
whose module documentation specifies the format)."""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from perceptrons import _checked

__all__ = [
    "DICT_ITEMS",
    "DIGEST_LENGTH",
    "FORMAT",
    "FORMAT_VERSION",
    "META",
    "RENAMED_PARAMS",
    "RESERVED",
    "Invalid",
    "Registry",
    "array_names",
    "check_digest",
    "check_meta",
    "checksum",
    "depth",
    "dict_from_items",
    "expected_members",
    "field",
    "labels_from_array",
    "labels_to_array",
    "names_as_table",
    "one_line",
    "params_from_json",
    "params_to_json",
    "sealed_meta",
    "short",
    "sparse_arrays",
    "strings_problem",
    "to_json",
]

FORMAT = "perceptrons-model"
FORMAT_VERSION = 3

META = "__meta__"
DICT_ITEMS = "__items__"  # a dict with non-string keys, stored as [key, value] pairs
DIGEST_LENGTH = 64
MAX_FEATURES = 2**31
NAME = re.compile(r"[a-z][a-z0-9_]*")
# Array names under "estimator/" that persist.py itself writes.
RESERVED = (
    "classes",
    "feature_names_in",
    "feature_names_in_ends",
    "feature_names_in_text",
    "rng_key",
)
# dtype kinds of labels: bool, ints, floats, bytes, unicode.
LABEL_KINDS = "biufSU"


@dataclass(frozen=True)
class Registry:
    """The only classes a file can name, by name: loading never imports or evaluates
    anything else."""

    estimators: Mapping[str, type]
    featurizers: Mapping[str, type]


class Invalid(Exception):
    """A problem with the file, reported as one line by :func:`~perceptrons.load`."""


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 500 else text[:497] + "..."


def short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ----------------------------------------------------------------- checksumming
def checksum(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 over each array's name, dtype, shape and C-order bytes, by sorted name."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(name.encode("utf-8") + b"\n")
        digest.update(array.dtype.str.encode("ascii") + b"\n")
        digest.update(",".join(str(n) for n in array.shape).encode("ascii") + b"\n")
        digest.update(array.data)
    return digest.hexdigest()


def sealed_meta(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> bytes:
    """The metadata JSON with its ``sha256`` (the last key) computed over everything."""
    meta = {key: value for key, value in meta.items() if key != "sha256"}
    meta["sha256"] = "0" * DIGEST_LENGTH
    blank = json.dumps(meta, ensure_ascii=False, allow_nan=False).encode("utf-8")
    digest = checksum({**arrays, META: np.frombuffer(blank, dtype=np.uint8)})
    return blank[: -DIGEST_LENGTH - 2] + digest.encode("ascii") + blank[-2:]


def check_digest(raw: bytes, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> str | None:
    """The problem with the file's checksum, or None when it matches."""
    stored = meta.get("sha256")
    if not (
        isinstance(stored, str)
        and len(stored) == DIGEST_LENGTH
        and raw[-DIGEST_LENGTH - 2 :] == stored.encode("ascii", "replace") + b'"}'
    ):
        return "no sha256 checksum at the end of the metadata"
    blank = raw[: -DIGEST_LENGTH - 2] + b"0" * DIGEST_LENGTH + b'"}'
    others = {name: array for name, array in arrays.items() if name != META}
    if checksum({**others, META: np.frombuffer(blank, dtype=np.uint8)}) != stored:
        return "checksum mismatch: the file was modified or corrupted"
    return None


# ------------------------------------------------------------ JSON and labels
def params_to_json(estimator: Any) -> dict[str, Any]:
    params = {}
    for key, value in estimator.get_params(deep=False).items():
        if key == "random_state" and isinstance(value, np.random.RandomState):
            warnings.warn(
                f"{type(estimator).__name__}: random_state is a RandomState instance, "
                "which is saved as None; the shuffling state is kept, so partial_fit "
                "continues exactly, but a new fit after loading is not seeded.",
                UserWarning,
                stacklevel=5,
            )
            value = None
        if key == "device":
            # Where the kernel products ran, not part of the model (kept on the host):
            # a loaded model computes with NumPy until given a device of its machine.
            value = None
        params[key] = to_json(value, f"parameter {key!r}")
    return params


def to_json(value: Any, where: str) -> Any:
    """``value`` as plain JSON types (NumPy scalars become Python ones), or an error."""
    if isinstance(value, str):
        problem = _checked.surrogate_problem(value)
        if problem is not None:
            raise ValueError(f"cannot save {where}: a string holds {problem} (not Unicode text).")
        return value
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        number = float(value)
        if not np.isfinite(number):
            raise ValueError(f"cannot save {where}: {value!r} is not a finite number.")
        return number
    if isinstance(value, list | tuple):
        return [to_json(item, where) for item in value]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        if DICT_ITEMS in value:
            raise ValueError(f"cannot save {where}: the key {DICT_ITEMS!r} is reserved.")
        return {to_json(key, where): to_json(item, where) for key, item in value.items()}
    if isinstance(value, dict):
        # JSON objects have string keys only: a dict keyed by labels of other types (a
        # class_weight of numeric classes) is stored as its (key, value) pairs.
        items = []
        for key, item in value.items():
            if isinstance(key, list | tuple | dict):
                raise ValueError(f"cannot save {where}: the key {key!r} is not a scalar.")
            items.append([to_json(key, where), to_json(item, where)])
        return {DICT_ITEMS: items}
    raise ValueError(
        f"cannot save {where}: {value!r} of type {type(value).__name__} is not None, a "
        "bool, int, float, str, or a list or dict of them."
    )


def labels_to_array(labels: Any, where: str) -> tuple[np.ndarray, str]:
    """Labels as an array np.save writes without pickle, and the dtype to restore."""
    labels = np.asarray(labels)
    if labels.ndim == 1 and labels.dtype.kind in LABEL_KINDS:
        _check_unicode(labels, f"cannot save {where}:", ValueError)
        return labels, labels.dtype.str
    if labels.ndim == 1 and labels.dtype.kind == "O" and all(isinstance(x, str) for x in labels):
        stored = labels.astype(str)
        # NumPy's fixed-width strings drop trailing NUL characters.
        if stored.tolist() != labels.tolist():
            raise ValueError(f"cannot save {where}: a label ends with a NUL character.")
        _check_unicode(stored, f"cannot save {where}:", ValueError)
        return stored, "object"
    kinds = sorted({type(x).__name__ for x in labels.ravel()}) if labels.dtype.kind == "O" else []
    raise ValueError(
        f"cannot save {where} of dtype {labels.dtype}"
        + (f" holding {kinds}" if kinds else "")
        + ": labels must be a 1-D array of bools, ints, floats or strings."
    )


#: Hyperparameters renamed since model files were first written, ``{old: new}``: a file
#: stores its estimator's ``get_params()``, so one written before a rename names the old
#: parameter, which is read under its new name (a model file is data, not API; the
#: library itself takes the new name only). ``n_jobs``: the number of shards of
#: ``Perceptron`` and ``AveragedPerceptron``, since renamed ``n_shards``.
RENAMED_PARAMS = {"n_jobs": "n_shards"}


def params_from_json(cls: type, section: dict[str, Any]) -> dict[str, Any]:
    """Saved hyperparameters for ``cls``: JSON lists become tuples where the default is,
    and a parameter renamed since (``RENAMED_PARAMS``) under its new name."""
    params = dict(section["params"])
    signature = inspect.signature(cls).parameters  # the parameters of cls.__init__
    for old, new in RENAMED_PARAMS.items():
        if old in params and old not in signature and new in signature:
            if new in params:
                raise Invalid(f"parameters {old!r} and {new!r} are one parameter, given twice")
            params[new] = params.pop(old)
    unknown = sorted(set(params) - set(signature))
    if unknown:
        raise Invalid(f"parameters {short(unknown)} unknown to {cls.__name__}")
    for key, value in params.items():
        if isinstance(signature[key].default, tuple) and isinstance(value, list):
            params[key] = tuple(value)
        elif isinstance(value, dict) and set(value) == {DICT_ITEMS}:
            params[key] = dict_from_items(value[DICT_ITEMS], key)
    return params


def dict_from_items(items: Any, name: str) -> dict[Any, Any]:
    """The dict :func:`to_json` stored as ``(key, value)`` pairs (non-string keys)."""
    pairs = items if isinstance(items, list) else None
    if pairs is None or not all(
        isinstance(p, list) and len(p) == 2 and not isinstance(p[0], list | dict) for p in pairs
    ):
        raise Invalid(f"parameter {name!r}: {DICT_ITEMS} must be a list of [key, value] pairs")
    result = {key: value for key, value in pairs}
    if len(result) != len(pairs):
        raise Invalid(f"parameter {name!r}: duplicate keys")
    return result


def labels_from_array(stored: np.ndarray, dtype: str, name: str) -> np.ndarray:
    """The labels of the array ``name`` as the estimator held them (``dtype``: the
    metadata's); unicode checked to be text first."""
    _check_unicode(stored, f"{name} is not Unicode text:", Invalid)
    if dtype == "object":
        return np.array(stored.tolist(), dtype=object)
    return stored


def _check_unicode(labels: np.ndarray, what: str, error: type[Exception]) -> None:
    """A NumPy unicode array (UTF-32 code points, which a file may set to anything)
    holds text: no surrogate, nothing past U+10FFFF; else ``error`` after ``what``.
    Such a label would fail later, halfway through printing a prediction."""
    if labels.dtype.kind != "U" or labels.size == 0 or labels.dtype.itemsize == 0:
        return
    native = np.ascontiguousarray(labels, dtype=labels.dtype.newbyteorder("="))
    codes = native.view(np.uint32).reshape(labels.shape[0], -1)
    bad = ((codes >= 0xD800) & (codes <= 0xDFFF)) | (codes > 0x10FFFF)
    if bad.any():
        row, column = (int(i) for i in np.argwhere(bad)[0])
        kind = "a lone surrogate" if codes[row, column] <= 0xDFFF else "not a character"
        raise error(
            f"{what} label {row} holds U+{int(codes[row, column]):04X} ({kind}) at "
            f"character {column}"
        )


def strings_problem(value: Any) -> str | None:
    """What makes a string (key or value) of a JSON value no Unicode text
    (:func:`perceptrons._checked.surrogate_problem`: a ``\\ud800`` escape), or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            problem = _checked.surrogate_problem(item)
            if problem is not None:
                return problem
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


# --------------------------------------------------------------------- metadata
def field(section: dict[str, Any], key: str, kinds: type | tuple[type, ...], where: str) -> Any:
    """``section[key]``, which must exist and be of ``kinds`` (bool is not an int)."""
    if key not in section:
        raise Invalid(f"bad metadata: {where}{key} missing")
    value = section[key]
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
        raise Invalid(f"bad metadata: {where}{key} must be {names}, got {short(value)}")
    return value


def array_names(section: dict[str, Any], where: str) -> list[str]:
    names = field(section, "state_arrays", list, where)
    if not all(isinstance(n, str) and NAME.fullmatch(n) for n in names):
        raise Invalid(f"bad metadata: {where}state_arrays must be a list of plain names")
    if len(set(names)) != len(names):
        raise Invalid(f"bad metadata: {where}state_arrays names an array twice")
    return names


def check_meta(meta: dict[str, Any], registry: Registry) -> None:
    """Every field of the metadata present and of its type, before any is used."""
    algorithm = field(meta, "algorithm", str, "")
    if algorithm not in registry.estimators:
        known = sorted(registry.estimators)
        raise Invalid(f"unknown algorithm {short(algorithm)} (known: {known})")
    for key in ("library_version", "created"):
        field(meta, key, str, "")
    field(meta, "params", dict, "")
    classes = field(meta, "classes", dict, "")
    field(classes, "dtype", str, "classes.")
    if field(classes, "array", str, "classes.") != "estimator/classes":
        raise Invalid("bad metadata: classes.array must be 'estimator/classes'")
    n_features = field(meta, "n_features_in", int, "")
    if not 1 <= n_features <= MAX_FEATURES:
        raise Invalid(
            f"bad metadata: n_features_in must be in [1, {MAX_FEATURES}], got {n_features}"
        )
    field(meta, "feature_names_in", bool, "")
    history = field(meta, "history", list, "")
    if not all(isinstance(record, dict) for record in history):
        raise Invalid("bad metadata: history must be a list of objects")
    rng = field(meta, "rng", (dict, type(None)), "")
    if rng is not None:
        if field(rng, "array", str, "rng.") != "estimator/rng_key":
            raise Invalid("bad metadata: rng.array must be 'estimator/rng_key'")
        if field(rng, "algorithm", str, "rng.") != "MT19937":
            raise Invalid(f"bad metadata: rng.algorithm {short(rng['algorithm'])} is not MT19937")
        try:
            _checked.integer_value(field(rng, "pos", int, "rng."), "rng.pos", 0, 624)
            _checked.integer_value(field(rng, "has_gauss", int, "rng."), "rng.has_gauss", 0, 1)
            _checked.real_value(
                field(rng, "cached_gaussian", (int, float), "rng."), "rng.cached_gaussian"
            )
        except ValueError as exc:
            raise Invalid(f"bad metadata: {exc}") from None
    state = field(meta, "state", dict, "")
    names = array_names(meta, "")
    if set(names) & set(RESERVED):
        raise Invalid(f"bad metadata: state_arrays may not use the names {list(RESERVED)}")
    sparse = sparse_arrays(meta)
    if not set(sparse) <= set(names):
        raise Invalid("bad metadata: sparse_arrays names an array state_arrays does not")
    resumable = meta.get("resumable", True)  # absent from version 1 files: resumable
    if not isinstance(resumable, bool):
        raise Invalid(f"bad metadata: resumable must be true or false, got {short(resumable)}")
    if resumable != (state.get("resumable", True) is not False):
        raise Invalid("bad metadata: resumable differs from the state's")
    pipeline = field(meta, "pipeline", (dict, type(None)), "")
    featurizer = field(meta, "featurizer", (dict, type(None)), "")
    if (pipeline is None) != (featurizer is None):
        raise Invalid("bad metadata: a pipeline needs a featurizer, and a featurizer a pipeline")
    if pipeline is not None:
        steps = field(pipeline, "steps", list, "pipeline.")
        if not (
            len(steps) == 2
            and all(isinstance(s, str) and s and "__" not in s for s in steps)
            and steps[0] != steps[1]
        ):
            raise Invalid("bad metadata: pipeline.steps must be two distinct step names")
    if featurizer is not None:
        name = field(featurizer, "algorithm", str, "featurizer.")
        if name not in registry.featurizers:
            raise Invalid(f"unknown featurizer {short(name)}")
        field(featurizer, "params", dict, "featurizer.")
        field(featurizer, "state", dict, "featurizer.")
        array_names(featurizer, "featurizer.")


def sparse_arrays(meta: dict[str, Any]) -> dict[str, int]:
    """``meta["sparse_arrays"]`` checked: state array names to their nonzero counts
    (absent from version 1 files: none)."""
    sparse = meta.get("sparse_arrays", {})
    if not (
        isinstance(sparse, dict)
        and all(
            isinstance(count, int) and not isinstance(count, bool) and 0 <= count
            for count in sparse.values()
        )
    ):
        raise Invalid("bad metadata: sparse_arrays must map array names to ints >= 0")
    return sparse


def names_as_table(meta: dict[str, Any]) -> bool:
    """Whether the file keeps ``feature_names_in_`` as a string table (format 3), not a
    unicode array (format 2 and older: the longest name's size for each)."""
    return bool(meta["format_version"] >= 3)


def expected_members(meta: dict[str, Any]) -> set[str]:
    """The arrays the (checked) metadata announces, ``__meta__`` included."""
    expected = {META, "estimator/classes"}
    sparse = sparse_arrays(meta)
    for name in meta["state_arrays"]:
        if name in sparse:
            expected |= {f"estimator/{name}.index", f"estimator/{name}.values"}
        else:
            expected.add(f"estimator/{name}")
    if meta["feature_names_in"] and names_as_table(meta):
        expected |= {"estimator/feature_names_in_text", "estimator/feature_names_in_ends"}
    elif meta["feature_names_in"]:
        expected.add("estimator/feature_names_in")
    if meta["rng"] is not None:
        expected.add("estimator/rng_key")
    if meta["featurizer"] is not None:
        expected |= {f"featurizer/{name}" for name in meta["featurizer"]["state_arrays"]}
    return expected


def depth(value: Any) -> int:
    """How deeply lists and objects nest in a JSON value (iteratively: no recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            stack.extend(
                (child, depth + 1) for child in (item.values() if isinstance(item, dict) else item)
            )
    return deepest
