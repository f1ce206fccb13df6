"""Save and load fitted models in one ``.npz`` file, without pickle.

:func:`save` writes a :class:`~perceptrons.Perceptron`,
:class:`~perceptrons.AveragedPerceptron` or :class:`~perceptrons.VotedPerceptron`, or a
scikit-learn ``Pipeline`` of exactly ``[TextFeaturizer, estimator]``; :func:`load` reads
it back, and :func:`describe` returns a file's checked metadata without building the
model. Loading never runs code from the file: arrays are read with
``allow_pickle=False``, metadata is JSON, and classes are looked up by name in an explicit
registry of this package's estimators.

File format, version 1
----------------------
A ZIP archive as written by ``numpy.savez_compressed`` (deflated members): one member
``<name>.npy`` per array, each in the NumPy ``.npy`` format (version 1.0, 2.0 or 3.0, no
object arrays). Array names:

``__meta__``
    uint8, 1-D: the UTF-8 bytes of a JSON object (the metadata, below).
``estimator/classes``
    The sorted labels (``classes_``): bool, integer, float, bytes (``S``) or unicode
    (``U``) dtype. Labels held in an object array of str are stored as ``U``.
``estimator/feature_names_in``
    ``U`` array of the column names seen in ``fit`` (only when the model has them).
``estimator/rng_key``
    uint32, shape (624,): the key of the Mersenne Twister that shuffles the examples
    (``numpy.random.RandomState.get_state()[1]``), when the model has one.
``estimator/<name>``
    For each name in ``meta["state_arrays"]``: the estimator's fitted internals, as its
    ``export_state`` gives them (e.g. ``weights``, ``aux`` for the linear models;
    ``alpha``, ``bias``, ``updates``, ``support``... for the voted perceptron).
``featurizer/<name>``
    For pipelines, each name in ``meta["featurizer"]["state_arrays"]`` (``idf`` for
    tf-idf weighting).

Metadata keys, in this order (``json.dumps`` with ``ensure_ascii=False``, no NaN):

``format``
    ``"perceptrons-model"``.
``format_version``
    ``1``. Readers refuse versions newer than theirs.
``library_version``
    ``perceptrons.__version__`` of the writer.
``created``
    ISO 8601 UTC time of writing.
``algorithm``
    Class name of the estimator: ``"Perceptron"``, ``"AveragedPerceptron"`` or
    ``"VotedPerceptron"`` (also for pipelines, whose last step it is).
``params``
    The estimator's ``get_params()`` (None, bool, int, float, str and lists of them).
    A ``random_state`` given as a ``RandomState`` instance is saved as ``null`` (with a
    warning): the shuffling generator itself is saved (``rng``), so ``partial_fit``
    continues exactly, but a new ``fit`` after loading is no longer seeded, and the
    voted perceptron's ``prediction="random"`` rule draws fresh numbers.
``classes``
    ``{"dtype": ..., "array": "estimator/classes"}``: ``dtype`` is the NumPy dtype string
    of ``classes_`` (e.g. ``"<i8"``, ``"<U3"``, ``"|b1"``), or ``"object"`` when the labels
    were Python strings in an object array (restored as such).
``n_features_in``
    Number of input features (int).
``feature_names_in``
    ``true`` when ``estimator/feature_names_in`` is present (restored as an object array).
``history``
    ``history_``: a list of objects, one per epoch.
``rng``
    ``null`` or ``{"array": "estimator/rng_key", "algorithm": "MT19937", "pos": int,
    "has_gauss": int, "cached_gaussian": float}``: with the key, the rest of
    ``RandomState.get_state()``.
``state``
    The JSON half of the estimator's ``export_state`` (counters, flags).
``state_arrays``
    Sorted names of the estimator's state arrays (stored as ``estimator/<name>``).
``pipeline``
    ``null`` for a bare estimator, else ``{"steps": [featurizer_name, estimator_name]}``.
``featurizer``
    ``null``, or for pipelines ``{"algorithm": "TextFeaturizer", "params": {...},
    "state": {...}, "state_arrays": [...]}``; ``state`` holds ``n_features_out`` and, for
    a fitted vocabulary, ``vocabulary``: the list of terms in column order.
``sha256``
    Always the last key. The hexadecimal SHA-256 of, for every array in sorted name order
    (``__meta__`` included): the name in UTF-8, a newline, the dtype string (e.g.
    ``<f8``) in ASCII, a newline, the shape as comma-separated decimal integers (empty for
    a scalar), a newline, then the array's bytes in C order. For ``__meta__`` the bytes
    hashed are the JSON with the 64 digits of this value replaced by 64 ``0`` characters:
    the JSON text ends with ``"sha256": "<64 lowercase hex digits>"}``, so those digits
    are its bytes ``[-66:-2]``.

Files are written atomically: to a temporary file in the target's directory, flushed to
disk, then renamed over the target, so an existing file is never left half-written.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import warnings
import zipfile
from collections.abc import Callable
from datetime import datetime, timezone
from numbers import Integral, Real
from pathlib import Path
from typing import IO, Any

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline

from perceptrons._version import __version__
from perceptrons.features import TextFeaturizer
from perceptrons.io.files import write_atomically
from perceptrons.logistic import LogisticRegressionSGD
from perceptrons.naive_bayes import BernoulliNaiveBayes, MultinomialNaiveBayes
from perceptrons.perceptron import AveragedPerceptron, Perceptron
from perceptrons.voted import VotedPerceptron

__all__ = ["FORMAT", "FORMAT_VERSION", "describe", "load", "save"]

FORMAT = "perceptrons-model"
FORMAT_VERSION = 1

_META = "__meta__"
_DIGEST_LENGTH = 64
# The only classes a file can name; loading never imports or evaluates anything else.
_ESTIMATORS: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        Perceptron,
        AveragedPerceptron,
        VotedPerceptron,
        MultinomialNaiveBayes,
        BernoulliNaiveBayes,
        LogisticRegressionSGD,
    )
}
_FEATURIZERS: dict[str, type] = {"TextFeaturizer": TextFeaturizer}
# Array names under "estimator/" that persist.py itself writes.
_RESERVED = ("classes", "feature_names_in", "rng_key")
_LABEL_KINDS = "biufSU"


# --------------------------------------------------------------------------- save
def save(model: Any, path: str | os.PathLike[str]) -> Path:
    """Write a fitted model to ``path`` (one ``.npz`` file, no pickle), atomically.

    Parameters
    ----------
    model : estimator or Pipeline
        A fitted estimator of this package, or a fitted scikit-learn ``Pipeline`` of
        exactly two steps, ``[TextFeaturizer, estimator]``. A ``random_state`` given as a
        ``RandomState`` instance is saved as None (see the module documentation).
    path : str or path-like
        The file to write, used as given (no suffix is added; ``.npz`` is customary).
        An existing file is replaced only once the new one is completely on disk.

    Returns
    -------
    path : Path
        The file written.

    Raises
    ------
    ValueError
        For a model that cannot be saved: another type, a callable kernel, a
        hyperparameter or label type that has no JSON or array form.
    sklearn.exceptions.NotFittedError
        For an unfitted model (a subclass of ValueError).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from sklearn.datasets import load_iris
    >>> from perceptrons import AveragedPerceptron, load, save
    >>> X, y = load_iris(return_X_y=True)
    >>> model = AveragedPerceptron(random_state=0).fit(X, y)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     written = save(model, pathlib.Path(tmp) / "iris.npz")
    ...     again = load(written)
    >>> bool((again.predict(X) == model.predict(X)).all())
    True
    """
    path = Path(path)
    arrays, meta = _encode_model(model)
    arrays[_META] = np.frombuffer(_sealed_meta(meta, arrays), dtype=np.uint8)
    write_atomically(path, lambda file: _write_npz(file, arrays))
    return path


def _encode_model(model: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    featurizer = None
    estimator = model
    if isinstance(model, Pipeline):
        steps = model.steps
        if (
            len(steps) != 2
            or type(steps[0][1]) is not TextFeaturizer
            or _registered(steps[1][1]) is None
        ):
            kinds = [type(step).__name__ for _, step in steps]
            raise ValueError(
                f"cannot save a Pipeline of {kinds}: only [TextFeaturizer, estimator] "
                f"pipelines can be saved, with an estimator among {sorted(_ESTIMATORS)}."
            )
        featurizer, estimator = steps[0][1], steps[1][1]
    elif _registered(model) is None:
        raise ValueError(
            f"cannot save a {type(model).__name__}: only {sorted(_ESTIMATORS)} and "
            "Pipelines of [TextFeaturizer, estimator] can be saved."
        )
    arrays, meta = _encode_estimator(estimator)
    meta["pipeline"] = None if featurizer is None else {"steps": [name for name, _ in steps]}
    meta["featurizer"] = None
    if featurizer is not None:
        feature_arrays, meta["featurizer"] = _encode_featurizer(featurizer)
        arrays.update(feature_arrays)
    return arrays, meta


def _registered(estimator: Any) -> type | None:
    """The registry's class for ``estimator``'s exact type (subclasses are not saved)."""
    cls = _ESTIMATORS.get(type(estimator).__name__)
    return cls if cls is type(estimator) else None


def _encode_estimator(estimator: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    name = type(estimator).__name__
    if callable(getattr(estimator, "kernel", None)):
        raise ValueError(
            "a callable kernel cannot be saved; refit with kernel='linear', 'poly', 'rbf' "
            "or 'precomputed' to save the model, or keep it in memory."
        )
    if not hasattr(estimator, "classes_"):
        raise NotFittedError(f"cannot save an unfitted {name}: call fit or partial_fit first.")
    params = _params_to_json(estimator)
    state_arrays, state_values = estimator.export_state()
    clash = sorted(set(state_arrays) & set(_RESERVED))
    if clash:  # a bug in an estimator, not a user error
        raise RuntimeError(f"{name}.export_state uses reserved array names {clash}")

    arrays = {f"estimator/{key}": np.asarray(value) for key, value in state_arrays.items()}
    classes, classes_dtype = _labels_to_array(estimator.classes_, "classes_")
    arrays["estimator/classes"] = classes
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        arrays["estimator/feature_names_in"], _ = _labels_to_array(names, "feature_names_in_")
    rng = getattr(estimator, "random_state_", None)
    rng_meta = None
    if isinstance(rng, np.random.RandomState):
        algorithm, key, pos, has_gauss, cached_gaussian = rng.get_state()
        arrays["estimator/rng_key"] = np.asarray(key, dtype=np.uint32)
        rng_meta = {
            "array": "estimator/rng_key",
            "algorithm": str(algorithm),
            "pos": int(pos),
            "has_gauss": int(has_gauss),
            "cached_gaussian": float(cached_gaussian),
        }
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "algorithm": name,
        "params": params,
        "classes": {"dtype": classes_dtype, "array": "estimator/classes"},
        "n_features_in": int(estimator.n_features_in_),
        "feature_names_in": names is not None,
        "history": _to_json(getattr(estimator, "history_", []), "history_"),
        "rng": rng_meta,
        "state": _to_json(state_values, f"{name} state"),
        "state_arrays": sorted(state_arrays),
    }
    return arrays, meta


def _encode_featurizer(featurizer: TextFeaturizer) -> tuple[dict[str, np.ndarray], dict]:
    if not hasattr(featurizer, "n_features_out_"):
        raise NotFittedError("cannot save a pipeline whose TextFeaturizer is not fitted.")
    state_arrays, state_values = featurizer.export_state()
    arrays = {f"featurizer/{key}": np.asarray(value) for key, value in state_arrays.items()}
    meta = {
        "algorithm": type(featurizer).__name__,
        "params": _params_to_json(featurizer),
        "state": _to_json(state_values, "TextFeaturizer state"),
        "state_arrays": sorted(state_arrays),
    }
    return arrays, meta


def _params_to_json(estimator: Any) -> dict[str, Any]:
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
        params[key] = _to_json(value, f"parameter {key!r}")
    return params


def _to_json(value: Any, where: str) -> Any:
    """``value`` as plain JSON types (NumPy scalars become Python ones), or an error."""
    if value is None or isinstance(value, bool | str):
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
        return [_to_json(item, where) for item in value]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {key: _to_json(item, where) for key, item in value.items()}
    raise ValueError(
        f"cannot save {where}: {value!r} of type {type(value).__name__} is not None, a "
        "bool, int, float, str, or a list or dict of them."
    )


def _labels_to_array(labels: Any, where: str) -> tuple[np.ndarray, str]:
    """Labels as an array np.save writes without pickle, and the dtype to restore."""
    labels = np.asarray(labels)
    if labels.ndim == 1 and labels.dtype.kind in _LABEL_KINDS:
        return labels, labels.dtype.str
    if labels.ndim == 1 and labels.dtype.kind == "O" and all(isinstance(x, str) for x in labels):
        stored = labels.astype(str)
        # NumPy's fixed-width strings drop trailing NUL characters.
        if stored.tolist() != labels.tolist():
            raise ValueError(f"cannot save {where}: a label ends with a NUL character.")
        return stored, "object"
    kinds = sorted({type(x).__name__ for x in labels.ravel()}) if labels.dtype.kind == "O" else []
    raise ValueError(
        f"cannot save {where} of dtype {labels.dtype}"
        + (f" holding {kinds}" if kinds else "")
        + ": labels must be a 1-D array of bools, ints, floats or strings."
    )


# ----------------------------------------------------------------- checksumming
def _digest(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 over each array's name, dtype, shape and C-order bytes, by sorted name."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(name.encode("utf-8") + b"\n")
        digest.update(array.dtype.str.encode("ascii") + b"\n")
        digest.update(",".join(str(n) for n in array.shape).encode("ascii") + b"\n")
        digest.update(array.data)
    return digest.hexdigest()


def _sealed_meta(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> bytes:
    """The metadata JSON with its ``sha256`` (the last key) computed over everything."""
    meta = {key: value for key, value in meta.items() if key != "sha256"}
    meta["sha256"] = "0" * _DIGEST_LENGTH
    blank = json.dumps(meta, ensure_ascii=False, allow_nan=False).encode("utf-8")
    digest = _digest({**arrays, _META: np.frombuffer(blank, dtype=np.uint8)})
    return blank[: -_DIGEST_LENGTH - 2] + digest.encode("ascii") + blank[-2:]


def _check_digest(raw: bytes, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> str | None:
    """The problem with the file's checksum, or None when it matches."""
    stored = meta.get("sha256")
    if not (
        isinstance(stored, str)
        and len(stored) == _DIGEST_LENGTH
        and raw[-_DIGEST_LENGTH - 2 :] == stored.encode("ascii", "replace") + b'"}'
    ):
        return "no sha256 checksum at the end of the metadata"
    blank = raw[: -_DIGEST_LENGTH - 2] + b"0" * _DIGEST_LENGTH + b'"}'
    others = {name: array for name, array in arrays.items() if name != _META}
    if _digest({**others, _META: np.frombuffer(blank, dtype=np.uint8)}) != stored:
        return "checksum mismatch: the file was modified or corrupted"
    return None


# ------------------------------------------------------------------ file writing
def _write_npz(file: IO[bytes], arrays: dict[str, np.ndarray]) -> None:
    # A file object, not a name: numpy would append ".npz" to a name. Compressed, because
    # hashed text models are mostly zeros (2^20 rows by class).
    np.savez_compressed(file, allow_pickle=False, **arrays)


# --------------------------------------------------------------------------- load
class _Invalid(Exception):
    """A problem with the file, reported as one line by :func:`load`."""


def load(path: str | os.PathLike[str]) -> Any:
    """Read a model written by :func:`save`.

    Never unpickles or evaluates anything from the file: arrays are read with
    ``allow_pickle=False`` and estimator classes come from a fixed registry.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save`; it is read as untrusted input.

    Returns
    -------
    model : estimator or Pipeline
        The fitted model, predicting exactly as the saved one did; ``partial_fit``
        continues exactly as it would have without the save.

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    ValueError
        With one line naming the file and the problem, if it is not a model file of a
        format this version reads, or is corrupted.
    """
    return _read_checked(path, _decode_model)


def describe(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The metadata of a model file, checked exactly as :func:`load` checks it.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save`.

    Returns
    -------
    meta : dict
        The ``__meta__`` JSON object (see the module documentation): ``algorithm``,
        ``params``, ``library_version``, ``created``, ``history``, ``featurizer`` (with
        the vocabulary of a fitted-vocabulary pipeline)...

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`load`.
    """
    return _read_checked(path, lambda meta, arrays: meta)


def _read_checked(path: str | os.PathLike[str], build: Callable[[dict, dict], Any]) -> Any:
    """Read and check a model file, then ``build(meta, arrays)``; problems become one
    ValueError line naming the file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"cannot load {path}: no such file")
    try:
        arrays = _read_arrays(path)
        raw, meta = _read_meta(arrays)
        problem = _check_digest(raw, meta, arrays)
        if problem is not None:
            raise _Invalid(problem)
        _check_contents(meta, arrays)
        return build(meta, arrays)
    except _Invalid as exc:
        raise ValueError(f"cannot load {path}: {_one_line(exc)}") from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise ValueError(
            f"cannot load {path}: invalid model data ({type(exc).__name__}: {_one_line(exc)})"
        ) from exc


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _read_arrays(path: Path) -> dict[str, np.ndarray]:
    try:
        archive = np.load(path, allow_pickle=False)
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise _Invalid("not a perceptrons model file (a .npy array, not an .npz archive)")
        with archive:
            return {name: archive[name] for name in archive.files}
    except _Invalid:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
        raise _Invalid(f"not a readable perceptrons model (.npz) file: {_one_line(exc)}") from None
    except Exception as exc:
        # A damaged archive can also make zipfile or the .npy reader raise RuntimeError
        # (a flipped "encrypted" flag), NotImplementedError (compression method),
        # zlib.error, MemoryError...: every one means the file is unreadable.
        raise _Invalid(
            f"not a readable perceptrons model (.npz) file: {type(exc).__name__}: {_one_line(exc)}"
        ) from None


def _read_meta(arrays: dict[str, np.ndarray]) -> tuple[bytes, dict[str, Any]]:
    if _META not in arrays:
        raise _Invalid(f"no {_META} array: not a perceptrons model file")
    stored = arrays[_META]
    if stored.dtype != np.uint8 or stored.ndim != 1:
        raise _Invalid(f"{_META} must be a 1-D uint8 array, got {stored.dtype} {stored.shape}")
    raw = stored.tobytes()
    try:
        meta = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _Invalid(f"bad metadata: {_META} is not UTF-8 JSON ({_one_line(exc)})") from None
    if not isinstance(meta, dict):
        raise _Invalid(f"bad metadata: {_META} is not a JSON object")
    if meta.get("format") != FORMAT:
        raise _Invalid(f"not a perceptrons model file (format {meta.get('format')!r})")
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _Invalid(f"bad metadata: format_version {version!r} is not a positive int")
    if version > FORMAT_VERSION:
        raise _Invalid(
            f"written by a newer perceptrons (format {version} > {FORMAT_VERSION}); upgrade"
        )
    return raw, meta


def _check_contents(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """Known classes only, and exactly the arrays the metadata announces."""
    algorithm = meta.get("algorithm")
    if not isinstance(algorithm, str) or algorithm not in _ESTIMATORS:
        raise _Invalid(f"unknown algorithm {algorithm!r} (known: {sorted(_ESTIMATORS)})")
    expected = {_META, "estimator/classes"}
    expected |= {f"estimator/{name}" for name in meta["state_arrays"]}
    if meta["feature_names_in"]:
        expected.add("estimator/feature_names_in")
    if meta["rng"] is not None:
        expected.add(meta["rng"]["array"])
    featurizer = meta["featurizer"]
    if featurizer is not None:
        if featurizer.get("algorithm") not in _FEATURIZERS:
            raise _Invalid(f"unknown featurizer {featurizer.get('algorithm')!r}")
        expected |= {f"featurizer/{name}" for name in featurizer["state_arrays"]}
    missing = sorted(expected - set(arrays))
    if missing:
        raise _Invalid(f"arrays missing: {', '.join(missing)}")
    unexpected = sorted(set(arrays) - expected)
    if unexpected:
        raise _Invalid(f"unexpected arrays: {', '.join(unexpected)}")


def _decode_model(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> Any:
    estimator = _decode_estimator(meta, arrays)
    if meta["featurizer"] is None:
        if meta["pipeline"] is not None:
            raise _Invalid("a pipeline without a featurizer")
        return estimator
    info = meta["featurizer"]
    featurizer = _FEATURIZERS[info["algorithm"]](**_params_from_json(TextFeaturizer, info))
    featurizer.import_state(
        {name: arrays[f"featurizer/{name}"] for name in info["state_arrays"]}, info["state"]
    )
    first, second = meta["pipeline"]["steps"]
    return Pipeline([(str(first), featurizer), (str(second), estimator)])


def _decode_estimator(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> Any:
    cls = _ESTIMATORS[meta["algorithm"]]
    estimator = cls(**_params_from_json(cls, meta))
    estimator.classes_ = _labels_from_array(arrays["estimator/classes"], meta["classes"]["dtype"])
    estimator.n_features_in_ = int(meta["n_features_in"])
    if meta["feature_names_in"]:
        names = arrays["estimator/feature_names_in"]
        estimator.feature_names_in_ = _labels_from_array(names, "object")
    estimator.history_ = list(meta["history"])
    state = {name: arrays[f"estimator/{name}"] for name in meta["state_arrays"]}
    estimator.import_state(state, meta["state"])
    if meta["rng"] is not None:
        info = meta["rng"]
        rng = np.random.RandomState()
        rng.set_state(
            (
                str(info["algorithm"]),
                arrays[info["array"]],
                int(info["pos"]),
                int(info["has_gauss"]),
                float(info["cached_gaussian"]),
            )
        )
        estimator.random_state_ = rng
    return estimator


def _params_from_json(cls: type, section: dict[str, Any]) -> dict[str, Any]:
    """Saved hyperparameters for ``cls``: JSON lists become tuples where the default is."""
    params = dict(section["params"])
    signature = inspect.signature(cls).parameters  # the parameters of cls.__init__
    unknown = sorted(set(params) - set(signature))
    if unknown:
        raise _Invalid(f"parameters {unknown} unknown to {cls.__name__}")
    for key, value in params.items():
        if isinstance(signature[key].default, tuple) and isinstance(value, list):
            params[key] = tuple(value)
    return params


def _labels_from_array(stored: np.ndarray, dtype: str) -> np.ndarray:
    if stored.ndim != 1:
        raise _Invalid(f"labels of shape {stored.shape}, expected 1-D")
    if dtype == "object":
        if stored.dtype.kind != "U":
            raise _Invalid(f"object labels stored as {stored.dtype}, expected unicode")
        return np.array(stored.tolist(), dtype=object)
    if stored.dtype.str != dtype:
        raise _Invalid(f"labels stored as {stored.dtype.str}, but the metadata says {dtype}")
    return stored
