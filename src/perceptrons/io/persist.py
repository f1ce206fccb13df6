"""Save and load fitted models in one ``.npz`` file, without pickle.

:func:`~perceptrons.save` writes a fitted estimator of this package (the perceptrons, the voted
perceptron, both logistic regressions, both naive Bayes), or a scikit-learn ``Pipeline``
of exactly ``[TextFeaturizer, estimator]``; :func:`~perceptrons.load` reads it back -- a sparsified
model (``sparsify()``) sparsified, its memory following its nonzeros -- and
:func:`describe` returns a file's metadata, checked exactly as :func:`~perceptrons.load` checks the
file. ``save(..., resumable=False)`` leaves out what only further training needs.

Reading untrusted files
-----------------------
A model file is untrusted input: its checksum only proves that it was not damaged in
transit (anyone can recompute it). :func:`~perceptrons.load` and :func:`describe` guarantee:

* **Loading never executes code from the file.** Arrays are read with
  ``allow_pickle=False`` and only of plain dtypes (bool, integers, floats, bytes,
  unicode: no objects, structures or complex numbers), metadata is JSON, and classes
  are looked up by name in an explicit registry of this package's estimators.
* **Every array is checked against the metadata before any kernel sees it.** Every
  metadata field is checked for presence and type; hyperparameters go through the
  estimator's (and the featurizer's) own parameter rules, as ``set_params`` then ``fit``
  would; each array's dtype (``float64`` / ``int64`` exactly for the state) and shape
  are checked against the metadata and the estimator's ``state_layout`` from its
  ``.npy`` header, before its data are read; then its values: finite floats, and every
  index a compiled loop follows (the voted perceptron's support ids, classes, columns,
  CSR indices) within range.
* **Bounded memory.** The zip directory is read first: only ``.npy`` members the
  metadata names, stored or deflated, at most :data:`MAX_ARRAY_BYTES` uncompressed in
  all; the metadata is at most :data:`MAX_META_BYTES` and nests at most
  :data:`MAX_META_DEPTH` levels; every member's uncompressed size must be exactly what
  its header declares, and that header what the metadata implies (sizes the metadata
  does not fix, such as the number of support vectors, are bounded by the examples
  seen), all before anything but the metadata is decompressed.
* **One line.** Every problem is a ``ValueError`` naming the file (``FileNotFoundError``
  when there is none): an unexpected exception from a damaged file is reported the same
  way, never as a traceback.

File format, version 2
----------------------
A ZIP archive as written by ``numpy.savez_compressed`` (deflated members): one member
``<name>.npy`` per array, each in the NumPy ``.npy`` format (version 1.0 or 2.0, no
object or structured arrays). Array names:

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
``estimator/<name>.index`` and ``estimator/<name>.values``
    Instead of ``estimator/<name>``, for each name in ``meta["sparse_arrays"]``: a
    float64 state array of fixed shape stored as its nonzero elements (written so when
    that is smaller, as for hashed text models): ``index`` (int64) holds their
    positions in the array flattened in C order, strictly increasing, and ``values``
    (float64) the elements. Both have exactly the ``nnz`` the metadata gives; on
    loading, the index is checked sorted, without repeats and within the array before
    anything scatters with it.
``featurizer/<name>``
    For pipelines, each name in ``meta["featurizer"]["state_arrays"]`` (``idf`` for
    tf-idf weighting).

Metadata keys, in this order (``json.dumps`` with ``ensure_ascii=False``, no NaN):

``format``
    ``"perceptrons-model"``.
``format_version``
    ``2`` (version 1, which this reader still reads, had no ``sparse_arrays`` and
    ``resumable``: all arrays dense, the state resumable). Readers refuse versions
    newer than theirs.
``library_version``
    ``perceptrons.__version__`` of the writer.
``created``
    ISO 8601 UTC time of writing.
``algorithm``
    Class name of the estimator, one of the registry's (:data:`_ESTIMATORS`):
    ``"Perceptron"``, ``"AveragedPerceptron"``, ``"VotedPerceptron"``,
    ``"LogisticRegressionSGD"``, ``"LogisticRegressionBatch"``, ``"SequenceTagger"``,
    ``"MultinomialNaiveBayes"`` or ``"BernoulliNaiveBayes"`` (also for pipelines, whose
    last step it is).
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
``sparse_arrays``
    ``{name: nnz}`` for the state arrays stored as their nonzero elements.
``resumable``
    ``false`` when the file was saved with ``resumable=False`` (or from a model without
    its training state): the model predicts exactly, but does not continue training
    (the state then says ``"resumable": false`` too).
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

import contextlib
import hashlib
import inspect
import json
import math
import os
import re
import warnings
import zipfile
import zlib
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from numbers import Integral, Real
from pathlib import Path
from typing import IO, Any

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline

from perceptrons import _checked
from perceptrons._linear import SparseCoefMixin
from perceptrons._version import __version__
from perceptrons.features import TextFeaturizer
from perceptrons.io.files import write_atomically
from perceptrons.logistic import LogisticRegressionSGD
from perceptrons.logistic_batch import LogisticRegressionBatch
from perceptrons.naive_bayes import BernoulliNaiveBayes, MultinomialNaiveBayes
from perceptrons.perceptron import AveragedPerceptron, Perceptron
from perceptrons.tagger import SequenceTagger
from perceptrons.voted import VotedPerceptron

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MAX_ARRAY_BYTES",
    "MAX_META_BYTES",
    "MAX_META_DEPTH",
    "describe",
    "load",
    "save",
]

FORMAT = "perceptrons-model"
FORMAT_VERSION = 2

_META = "__meta__"
_DICT_ITEMS = "__items__"  # a dict with non-string keys, stored as [key, value] pairs
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
        LogisticRegressionBatch,
        SequenceTagger,
    )
}
_FEATURIZERS: dict[str, type] = {"TextFeaturizer": TextFeaturizer}

#: The most bytes the JSON metadata may take.
MAX_META_BYTES = 16 * 2**20
#: The deepest the metadata's lists and objects may nest.
MAX_META_DEPTH = 32
#: The most bytes all arrays of a file may take uncompressed (checked, like each
#: member's size, in the zip directory before anything is decompressed).
MAX_ARRAY_BYTES = 2**32
# A .npy header is at most this long (numpy's own default limit).
_MAX_HEADER = 10_000
# Label arrays (classes, feature names) take at most this many bytes.
_MAX_LABEL_BYTES = 2**26
_MAX_FEATURES = 2**31
# dtype kinds a model file's arrays may have: bool, ints, floats, bytes, unicode.
_PLAIN_KINDS = "biufSU"
_LABELS = _checked.Free("labels")
_RNG_KEY = _checked.Spec((np.dtype(np.uint32),), (624,))
_NAME = re.compile(r"[a-z][a-z0-9_]*")
# Array names under "estimator/" that persist.py itself writes.
_RESERVED = ("classes", "feature_names_in", "rng_key")
_LABEL_KINDS = "biufSU"


# --------------------------------------------------------------------------- save
def save(model: Any, path: str | os.PathLike[str], resumable: bool = True) -> Path:
    """Write a fitted model to ``path`` (one ``.npz`` file, no pickle), atomically.

    Mostly-zero weight arrays (a hashed text model's) are stored as their nonzero
    elements when that is smaller; :func:`~perceptrons.load` gives back the same model, dense or
    sparsified (``sparsify()``) as it was saved.

    Parameters
    ----------
    model : estimator or Pipeline
        A fitted estimator of this package, or a fitted scikit-learn ``Pipeline`` of
        exactly two steps, ``[TextFeaturizer, estimator]``. A ``random_state`` given as a
        ``RandomState`` instance is saved as None (see the module documentation).
    path : str or path-like
        The file to write, used as given (no suffix is added; ``.npz`` is customary).
        An existing file is replaced only once the new one is completely on disk.
    resumable : bool, default=True
        Keep what continuing to train exactly needs (``partial_fit``, ``warm_start``).
        False drops it -- an averaged model's aux array and count, the Δ trick's
        per-example weights; for other models (naive Bayes: the counts are the model;
        the voted perceptron) there is nothing to drop -- for a model that predicts
        exactly the same and holds less in memory (its file is usually smaller too, but
        not always: averaged weights can compress worse than the integer-valued weights
        and aux they replace); the loaded model refuses to continue training (a
        new ``fit`` starts afresh). A model that has no training state (pruned by
        ``sparsify(threshold=...)``, or loaded from a non-resumable file) is always
        saved non-resumable.

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
    if not isinstance(resumable, bool):
        raise ValueError(f"resumable must be True or False, got {resumable!r}")
    arrays, meta = _encode_model(model, resumable)
    arrays[_META] = np.frombuffer(_sealed_meta(meta, arrays), dtype=np.uint8)
    write_atomically(path, lambda file: _write_npz(file, arrays))
    return path


def _encode_model(model: Any, resumable: bool) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
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
    arrays, meta = _encode_estimator(estimator, resumable)
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


def _encode_estimator(
    estimator: Any, resumable: bool
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    name = type(estimator).__name__
    if callable(getattr(estimator, "kernel", None)):
        raise ValueError(
            "a callable kernel cannot be saved; refit with kernel='linear', 'poly', 'rbf' "
            "or 'precomputed' to save the model, or keep it in memory."
        )
    if not hasattr(estimator, "classes_"):
        raise NotFittedError(f"cannot save an unfitted {name}: call fit or partial_fit first.")
    params = _params_to_json(estimator)
    export = estimator.export_state
    if "resumable" in inspect.signature(export).parameters:
        state_arrays, state_values = export(resumable=resumable)
    else:  # nothing in its state serves training only
        state_arrays, state_values = export()
    clash = sorted(set(state_arrays) & set(_RESERVED))
    if clash:  # a bug in an estimator, not a user error
        raise RuntimeError(f"{name}.export_state uses reserved array names {clash}")

    arrays, sparse = _encode_state(state_arrays, estimator.state_layout(state_values))
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
        "sparse_arrays": sparse,
        "resumable": state_values.get("resumable", True) is not False,
    }
    return arrays, meta


def _encode_state(
    state_arrays: dict[str, Any], layout: dict[str, _checked.Spec]
) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """The members of the estimator's state arrays, and ``{name: nnz}`` for those
    stored as their nonzeros (``<name>.index``, ``<name>.values``: see the module
    documentation): each float64 array of fixed shape whose nonzeros take fewer bytes
    than the array."""
    arrays: dict[str, np.ndarray] = {}
    sparse: dict[str, int] = {}
    for key, value in sorted(state_arrays.items()):
        spec = layout.get(key)
        storable = spec is not None and _checked.sparse_storable(spec)
        if isinstance(value, _checked.SparseArray) or (
            storable and isinstance(value, np.ndarray) and value.dtype == np.float64
        ):
            coordinates = (
                value
                if isinstance(value, _checked.SparseArray)
                else _checked.SparseArray.from_dense(value)
            )
            if storable and coordinates.nbytes < coordinates.dense_nbytes:
                arrays[f"estimator/{key}.index"] = coordinates.index
                arrays[f"estimator/{key}.values"] = coordinates.values
                sparse[key] = coordinates.nnz
                continue
            if isinstance(value, _checked.SparseArray):
                value = value.to_dense()
        arrays[f"estimator/{key}"] = np.asarray(value)
    return arrays, sparse


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
        if _DICT_ITEMS in value:
            raise ValueError(f"cannot save {where}: the key {_DICT_ITEMS!r} is reserved.")
        return {key: _to_json(item, where) for key, item in value.items()}
    if isinstance(value, dict):
        # JSON objects have string keys only: a dict keyed by labels of other types (a
        # class_weight of numeric classes) is stored as its (key, value) pairs.
        items = []
        for key, item in value.items():
            if isinstance(key, list | tuple | dict):
                raise ValueError(f"cannot save {where}: the key {key!r} is not a scalar.")
            items.append([_to_json(key, where), _to_json(item, where)])
        return {_DICT_ITEMS: items}
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
    """A problem with the file, reported as one line by :func:`~perceptrons.load`."""


def load(path: str | os.PathLike[str]) -> Any:
    """Read a model written by :func:`~perceptrons.save`.

    The file is untrusted input: nothing from it is unpickled or evaluated, estimator
    classes come from a fixed registry, and every array and metadata field is checked
    (see the module documentation) before the model is built or a kernel sees it.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`~perceptrons.save`; it is read as untrusted input.

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
        format this version reads, is corrupted, or is inconsistent. No other exception
        (besides FileNotFoundError) comes out of a file's content.
    """
    return _read_checked(path, lambda meta, model: model)


def describe(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The metadata of a model file, checked exactly as :func:`~perceptrons.load` checks it.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`~perceptrons.save`.

    Returns
    -------
    meta : dict
        The ``__meta__`` JSON object (see the module documentation): ``algorithm``,
        ``params``, ``library_version``, ``created``, ``history``, ``featurizer`` (with
        the vocabulary of a fitted-vocabulary pipeline)...

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`~perceptrons.load`.
    """
    return _read_checked(path, lambda meta, model: meta)  # the model built, then dropped


def _read_checked(path: str | os.PathLike[str], result: Callable[[dict, Any], Any]) -> Any:
    """Read, check and build the model of a file, then return ``result(meta, model)``;
    every problem becomes one ValueError line naming the file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"cannot load {path}: no such file")
    try:
        with _open_archive(path) as archive:
            raw, meta = _read_meta(archive)
            _check_meta(meta)
            arrays = _Arrays(archive, _expected_members(meta))
            # Every member's layout against the metadata and the estimator's parameters,
            # reading only the labels; then the data, their checksum, and the values.
            estimator = _plan_estimator(meta, arrays)
            featurizer = _plan_featurizer(meta, arrays, estimator)
            problem = _check_digest(raw, meta, arrays.read_all())
            if problem is not None:
                raise _Invalid(problem)
            return result(meta, _build_model(meta, arrays, estimator, featurizer))
    except _Invalid as exc:
        raise ValueError(f"cannot load {path}: {_one_line(exc)}") from None
    except RecursionError:
        raise ValueError(f"cannot load {path}: invalid model data (nested too deeply)") from None
    except Exception as exc:
        # The estimators' own checks (import_state, check_params) raise ValueError; any
        # other exception is a check missing here, but still a refused file, in one line.
        kind = "" if type(exc) is ValueError else f"{type(exc).__name__}: "
        raise ValueError(
            f"cannot load {path}: invalid model data ({kind}{_one_line(exc)})"
        ) from None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 500 else text[:497] + "..."


# ------------------------------------------------------------ the archive, bounded
def _open_archive(path: Path) -> zipfile.ZipFile:
    """The zip archive at ``path``, its directory checked before anything is
    decompressed: ``.npy`` members only, stored or deflated, each name once, at most
    :data:`MAX_ARRAY_BYTES` uncompressed in all and the metadata at most
    :data:`MAX_META_BYTES`."""
    try:
        if path.is_file() and not zipfile.is_zipfile(path):
            with open(path, "rb") as file:
                if file.read(6) == b"\x93NUMPY":
                    raise _Invalid(
                        "not a perceptrons model file (a .npy array, not an .npz archive)"
                    )
        archive = zipfile.ZipFile(path)
    except _Invalid:
        raise
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise _Invalid(f"not a readable perceptrons model (.npz) file: {_one_line(exc)}") from None
    try:
        _check_directory(archive.infolist())
    except BaseException:
        archive.close()
        raise
    return archive


def _check_directory(members: list[zipfile.ZipInfo]) -> None:
    names = [member.filename for member in members]
    if len(set(names)) != len(names):
        raise _Invalid("not a readable perceptrons model (.npz) file: a member appears twice")
    total = 0
    for member in members:
        if not member.filename.endswith(".npy"):
            raise _Invalid(f"unexpected member {member.filename!r}: a model file holds .npy arrays")
        if member.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _Invalid(
                f"not a readable perceptrons model (.npz) file: member {member.filename!r} "
                f"uses compression method {member.compress_type}"
            )
        total += member.file_size
    if _META + ".npy" not in names:
        raise _Invalid(f"no {_META} array: not a perceptrons model file")
    if total > MAX_ARRAY_BYTES:
        raise _Invalid(
            f"the arrays would take {total:,} bytes uncompressed, more than this reader's "
            f"limit of {MAX_ARRAY_BYTES:,} (perceptrons.io.persist.MAX_ARRAY_BYTES)"
        )


def _read_header(file: IO[bytes], name: str) -> tuple[tuple[int, ...], np.dtype, bool, int]:
    """``(shape, dtype, fortran_order, header_length)`` of a ``.npy`` stream, refusing
    every dtype a model file never holds (objects, structures, complex numbers...)."""
    version = np.lib.format.read_magic(file)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(
            file, max_header_size=_MAX_HEADER
        )
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(
            file, max_header_size=_MAX_HEADER
        )
    else:
        raise _Invalid(f"{name}: .npy format version {version} (model files use 1.0 or 2.0)")
    if dtype.kind not in _PLAIN_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise _Invalid(f"{name} has dtype {dtype.str} (model files hold plain numbers and strings)")
    return shape, dtype, fortran, file.tell()


@contextlib.contextmanager
def _reading(name: str) -> Iterator[None]:
    """Damage found while decompressing or parsing member ``name`` (bad CRC, bad
    deflate stream, a flipped encryption flag, a malformed header...) as one problem."""
    try:
        yield
    except _Invalid:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, RuntimeError) as exc:
        raise _Invalid(
            f"not a readable perceptrons model (.npz) file: {name}: {_one_line(exc)}"
        ) from None
    except NotImplementedError as exc:  # an unknown compression method
        raise _Invalid(
            f"not a readable perceptrons model (.npz) file: {name}: {_one_line(exc)}"
        ) from None


class _Arrays:
    """The archive's arrays, read lazily: headers first, then data only once the
    members' declared sizes match their headers and the metadata's expectations."""

    def __init__(self, archive: zipfile.ZipFile, expected: set[str]) -> None:
        members = {info.filename[: -len(".npy")]: info for info in archive.infolist()}
        missing = sorted(expected - set(members))
        if missing:
            raise _Invalid(f"arrays missing: {', '.join(missing)}")
        unexpected = sorted(set(members) - expected)
        if unexpected:
            raise _Invalid(f"unexpected arrays: {', '.join(unexpected)}")
        self._archive = archive
        self.layouts: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
        for name, info in members.items():
            if name == _META:
                continue
            with _reading(name), archive.open(info) as file:
                shape, dtype, _, header = _read_header(file, name)
            size = header + math.prod(shape) * dtype.itemsize
            if size != info.file_size:
                raise _Invalid(
                    f"{name}: the archive declares {info.file_size:,} bytes, its header "
                    f"{size:,} (shape {shape}, dtype {dtype.str})"
                )
            self.layouts[name] = (shape, dtype)
        self._data: dict[str, np.ndarray] = {}

    def check(self, name: str, spec: _checked.Spec, sizes: dict[str, int], fits: str) -> None:
        """Check a member's declared layout against ``spec``, before reading it."""
        shape, dtype = self.layouts[name]
        _checked.check_layout(name, shape, dtype, spec, sizes, fits)

    def __getitem__(self, name: str) -> np.ndarray:
        """The array ``name``, read once (its layout already checked by the caller)."""
        if name not in self._data:
            with _reading(name), self._archive.open(name + ".npy") as file:
                self._data[name] = np.lib.format.read_array(
                    file, allow_pickle=False, max_header_size=_MAX_HEADER
                )
        return self._data[name]

    def read_all(self) -> dict[str, np.ndarray]:
        """Every array but ``__meta__``."""
        return {name: self[name] for name in self.layouts}


def _read_meta(archive: zipfile.ZipFile) -> tuple[bytes, dict[str, Any]]:
    info = archive.getinfo(_META + ".npy")
    if info.file_size > MAX_META_BYTES + _MAX_HEADER:
        raise _Invalid(f"bad metadata: {_META} is larger than {MAX_META_BYTES:,} bytes")
    with _reading(_META), archive.open(info) as file:
        shape, dtype, _, _ = _read_header(file, _META)
        if dtype != np.uint8 or len(shape) != 1:
            raise _Invalid(f"{_META} must be a 1-D uint8 array, got {dtype} {shape}")
        if shape[0] > MAX_META_BYTES:
            raise _Invalid(f"bad metadata: {_META} is larger than {MAX_META_BYTES:,} bytes")
        raw = file.read(shape[0])
    if len(raw) != shape[0]:
        raise _Invalid(f"{_META} is truncated")
    try:
        meta = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise _Invalid(f"bad metadata: {_META} is nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, too many digits
        raise _Invalid(f"bad metadata: {_META} is not UTF-8 JSON ({_one_line(exc)})") from None
    if not isinstance(meta, dict):
        raise _Invalid(f"bad metadata: {_META} is not a JSON object")
    if _depth(meta) > MAX_META_DEPTH:
        raise _Invalid(f"bad metadata: nested deeper than {MAX_META_DEPTH} levels")
    if meta.get("format") != FORMAT:
        raise _Invalid(f"not a perceptrons model file (format {_short(meta.get('format'))})")
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _Invalid(f"bad metadata: format_version {_short(version)} is not a positive int")
    if version > FORMAT_VERSION:
        raise _Invalid(
            f"written by a newer perceptrons (format {version} > {FORMAT_VERSION}); upgrade"
        )
    return raw, meta


def _depth(value: Any) -> int:
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


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --------------------------------------------------------------------- metadata
def _field(section: dict[str, Any], key: str, kinds: type | tuple[type, ...], where: str) -> Any:
    """``section[key]``, which must exist and be of ``kinds`` (bool is not an int)."""
    if key not in section:
        raise _Invalid(f"bad metadata: {where}{key} missing")
    value = section[key]
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
        raise _Invalid(f"bad metadata: {where}{key} must be {names}, got {_short(value)}")
    return value


def _array_names(section: dict[str, Any], where: str) -> list[str]:
    names = _field(section, "state_arrays", list, where)
    if not all(isinstance(n, str) and _NAME.fullmatch(n) for n in names):
        raise _Invalid(f"bad metadata: {where}state_arrays must be a list of plain names")
    if len(set(names)) != len(names):
        raise _Invalid(f"bad metadata: {where}state_arrays names an array twice")
    return names


def _check_meta(meta: dict[str, Any]) -> None:
    """Every field of the metadata present and of its type, before any is used."""
    algorithm = _field(meta, "algorithm", str, "")
    if algorithm not in _ESTIMATORS:
        raise _Invalid(f"unknown algorithm {_short(algorithm)} (known: {sorted(_ESTIMATORS)})")
    for key in ("library_version", "created"):
        _field(meta, key, str, "")
    _field(meta, "params", dict, "")
    classes = _field(meta, "classes", dict, "")
    _field(classes, "dtype", str, "classes.")
    if _field(classes, "array", str, "classes.") != "estimator/classes":
        raise _Invalid("bad metadata: classes.array must be 'estimator/classes'")
    n_features = _field(meta, "n_features_in", int, "")
    if not 1 <= n_features <= _MAX_FEATURES:
        raise _Invalid(
            f"bad metadata: n_features_in must be in [1, {_MAX_FEATURES}], got {n_features}"
        )
    _field(meta, "feature_names_in", bool, "")
    history = _field(meta, "history", list, "")
    if not all(isinstance(record, dict) for record in history):
        raise _Invalid("bad metadata: history must be a list of objects")
    rng = _field(meta, "rng", (dict, type(None)), "")
    if rng is not None:
        if _field(rng, "array", str, "rng.") != "estimator/rng_key":
            raise _Invalid("bad metadata: rng.array must be 'estimator/rng_key'")
        if _field(rng, "algorithm", str, "rng.") != "MT19937":
            raise _Invalid(f"bad metadata: rng.algorithm {_short(rng['algorithm'])} is not MT19937")
        try:
            _checked.integer_value(_field(rng, "pos", int, "rng."), "rng.pos", 0, 624)
            _checked.integer_value(_field(rng, "has_gauss", int, "rng."), "rng.has_gauss", 0, 1)
            _checked.real_value(
                _field(rng, "cached_gaussian", (int, float), "rng."), "rng.cached_gaussian"
            )
        except ValueError as exc:
            raise _Invalid(f"bad metadata: {exc}") from None
    state = _field(meta, "state", dict, "")
    names = _array_names(meta, "")
    if set(names) & set(_RESERVED):
        raise _Invalid(f"bad metadata: state_arrays may not use the names {list(_RESERVED)}")
    sparse = _sparse_arrays(meta)
    if not set(sparse) <= set(names):
        raise _Invalid("bad metadata: sparse_arrays names an array state_arrays does not")
    resumable = meta.get("resumable", True)  # absent from version 1 files: resumable
    if not isinstance(resumable, bool):
        raise _Invalid(f"bad metadata: resumable must be true or false, got {_short(resumable)}")
    if resumable != (state.get("resumable", True) is not False):
        raise _Invalid("bad metadata: resumable differs from the state's")
    pipeline = _field(meta, "pipeline", (dict, type(None)), "")
    featurizer = _field(meta, "featurizer", (dict, type(None)), "")
    if (pipeline is None) != (featurizer is None):
        raise _Invalid("bad metadata: a pipeline needs a featurizer, and a featurizer a pipeline")
    if pipeline is not None:
        steps = _field(pipeline, "steps", list, "pipeline.")
        if not (
            len(steps) == 2
            and all(isinstance(s, str) and s and "__" not in s for s in steps)
            and steps[0] != steps[1]
        ):
            raise _Invalid("bad metadata: pipeline.steps must be two distinct step names")
    if featurizer is not None:
        name = _field(featurizer, "algorithm", str, "featurizer.")
        if name not in _FEATURIZERS:
            raise _Invalid(f"unknown featurizer {_short(name)}")
        _field(featurizer, "params", dict, "featurizer.")
        _field(featurizer, "state", dict, "featurizer.")
        _array_names(featurizer, "featurizer.")


def _sparse_arrays(meta: dict[str, Any]) -> dict[str, int]:
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
        raise _Invalid("bad metadata: sparse_arrays must map array names to ints >= 0")
    return sparse


def _expected_members(meta: dict[str, Any]) -> set[str]:
    """The arrays the (checked) metadata announces, ``__meta__`` included."""
    expected = {_META, "estimator/classes"}
    sparse = _sparse_arrays(meta)
    for name in meta["state_arrays"]:
        if name in sparse:
            expected |= {f"estimator/{name}.index", f"estimator/{name}.values"}
        else:
            expected.add(f"estimator/{name}")
    if meta["feature_names_in"]:
        expected.add("estimator/feature_names_in")
    if meta["rng"] is not None:
        expected.add("estimator/rng_key")
    if meta["featurizer"] is not None:
        expected |= {f"featurizer/{name}" for name in meta["featurizer"]["state_arrays"]}
    return expected


# ------------------------------------------------------------------ the model
def _plan_estimator(meta: dict[str, Any], arrays: _Arrays) -> Any:
    """The estimator with its parameters (checked by its own rules), labels and input
    records; every estimator array's declared layout checked, none of them read yet."""
    cls = _ESTIMATORS[meta["algorithm"]]
    estimator = cls(**_params_from_json(cls, meta))
    estimator._check_params()  # the rules of set_params and fit
    n_features = meta["n_features_in"]
    sizes: dict[str, int] = {}
    classes_dtype = meta["classes"]["dtype"]
    name = "estimator/classes"
    spec = _checked.Spec(_label_dtypes(arrays, name, classes_dtype), (_LABELS,))
    arrays.check(name, spec, sizes, "the metadata")
    classes = _labels_from_array(arrays[name], classes_dtype)
    _check_classes(classes)
    estimator.classes_ = classes
    estimator.n_features_in_ = n_features
    if meta["feature_names_in"]:
        name = "estimator/feature_names_in"
        spec = _checked.Spec(_label_dtypes(arrays, name, "object"), (n_features,))
        arrays.check(name, spec, sizes, f"{n_features} features")
        estimator.feature_names_in_ = _labels_from_array(arrays[name], "object")
    estimator.history_ = list(meta["history"])
    if meta["rng"] is not None:
        arrays.check("estimator/rng_key", _RNG_KEY, sizes, "MT19937")
    fits = f"{n_features} features and {classes.shape[0]} classes"
    layout = estimator.state_layout(meta["state"])
    _check_layouts(arrays, "estimator/", meta["state_arrays"], layout, fits, _sparse_arrays(meta))
    return estimator


def _plan_featurizer(meta: dict[str, Any], arrays: _Arrays, estimator: Any) -> Any:
    """The pipeline's featurizer with its parameters (checked by its own rules) and
    its arrays' layouts checked, or None for a bare estimator."""
    info = meta["featurizer"]
    if info is None:
        return None
    featurizer = _FEATURIZERS[info["algorithm"]](**_params_from_json(TextFeaturizer, info))
    featurizer._validate_params()  # the rules of set_params and fit
    state = info["state"]
    n_out = _field(state, "n_features_out", int, "featurizer.state.")
    if n_out != estimator.n_features_in_:
        raise _Invalid(
            f"the featurizer makes {n_out} features, the estimator takes {estimator.n_features_in_}"
        )
    if featurizer.vocabulary == "fit":
        terms = _field(state, "vocabulary", list, "featurizer.state.")
        if not all(isinstance(term, str) for term in terms):
            raise _Invalid("bad metadata: the vocabulary must be a list of strings")
    else:
        pairs = state.get("hashed_names", [])  # absent from older files
        if not isinstance(pairs, list):
            raise _Invalid("bad metadata: hashed_names must be a list of [column, name] pairs")
        if not all(
            isinstance(pair, list)
            and len(pair) == 2
            and isinstance(pair[0], int)
            and not isinstance(pair[0], bool)
            and isinstance(pair[1], str)
            for pair in pairs
        ):
            raise _Invalid("bad metadata: hashed_names must be a list of [column, name] pairs")
    layout = {"idf": _checked.floats(n_out)} if featurizer.weighting == "tfidf" else {}
    _check_layouts(arrays, "featurizer/", info["state_arrays"], layout, f"{n_out} features")
    return featurizer


def _build_model(meta: dict[str, Any], arrays: _Arrays, estimator: Any, featurizer: Any) -> Any:
    """The planned estimator and featurizer given their state (whose values their
    ``import_state`` checks), as a Pipeline when the file holds one."""
    estimator.import_state(_state_arrays(meta, arrays, estimator), meta["state"])
    if meta["rng"] is not None:
        info = meta["rng"]
        rng = np.random.RandomState()
        rng.set_state(
            (
                "MT19937",
                arrays["estimator/rng_key"],
                info["pos"],
                info["has_gauss"],
                float(info["cached_gaussian"]),
            )
        )
        estimator.random_state_ = rng
    if featurizer is None:
        return estimator
    info = meta["featurizer"]
    names = info["state_arrays"]
    featurizer.import_state({name: arrays[f"featurizer/{name}"] for name in names}, info["state"])
    first, second = meta["pipeline"]["steps"]
    return Pipeline([(first, featurizer), (second, estimator)])


def _state_arrays(meta: dict[str, Any], arrays: _Arrays, estimator: Any) -> dict[str, Any]:
    """The estimator's state arrays, those stored sparse as checked
    :class:`~perceptrons._checked.SparseArray` (expanded for an estimator that cannot
    keep them sparse)."""
    sparse = _sparse_arrays(meta)
    layout = estimator.state_layout(meta["state"])
    state: dict[str, Any] = {}
    for name in meta["state_arrays"]:
        if name not in sparse:
            state[name] = arrays[f"estimator/{name}"]
            continue
        coordinates = _checked.SparseArray(
            tuple(layout[name].shape),  # fixed sizes: checked by _check_layouts
            arrays[f"estimator/{name}.index"],
            arrays[f"estimator/{name}.values"],
        )
        coordinates.check(f"estimator/{name}")
        keeps_sparse = isinstance(estimator, SparseCoefMixin)
        state[name] = coordinates if keeps_sparse else coordinates.to_dense()
    return state


def _check_layouts(
    arrays: _Arrays,
    prefix: str,
    names: list[str],
    specs: dict[str, _checked.Spec],
    fits: str,
    sparse: dict[str, int] | None = None,
) -> None:
    """The arrays ``prefix + name`` are exactly those of ``specs`` (optional ones may
    be absent), each of its declared layout: checked before their data are read. An
    array stored sparse (``sparse``: name to nonzero count) must be a float64 array of
    fixed shape, its ``.index`` (int64) and ``.values`` (float64) exactly that many
    long, no more than the array has elements."""
    sparse = sparse or {}
    problem = _checked.names_problem(specs, names, prefix)
    if problem is not None:
        raise _Invalid(problem)
    sizes: dict[str, int] = {}
    for name in names:
        spec = specs[name]
        if name not in sparse:
            arrays.check(prefix + name, spec, sizes, fits)
            continue
        if not _checked.sparse_storable(spec):
            raise _Invalid(f"{prefix}{name} cannot be stored sparse")
        nnz, size = sparse[name], math.prod(d for d in spec.shape if isinstance(d, int))
        if nnz > size:
            raise _Invalid(f"{prefix}{name}: {nnz} nonzeros for an array of {size} elements")
        arrays.check(prefix + name + ".index", _checked.Spec(_checked.INT64, (nnz,)), sizes, fits)
        arrays.check(
            prefix + name + ".values", _checked.Spec(_checked.FLOAT64, (nnz,)), sizes, fits
        )


def _label_dtypes(arrays: _Arrays, name: str, dtype: str) -> tuple[np.dtype, ...]:
    """The dtype a label array must have: the metadata's, or any unicode for
    ``"object"``; at most :data:`_MAX_LABEL_BYTES` in all."""
    shape, stored = arrays.layouts[name]
    if math.prod(shape) * stored.itemsize > _MAX_LABEL_BYTES:
        raise _Invalid(f"{name} takes more than {_MAX_LABEL_BYTES:,} bytes")
    if dtype == "object":
        if stored.kind != "U":
            raise _Invalid(f"object labels stored as {stored}, expected unicode")
        return (stored,)
    if stored.str != dtype:
        raise _Invalid(f"labels stored as {stored.str}, but the metadata says {_short(dtype)}")
    return (stored,)


def _check_classes(classes: np.ndarray) -> None:
    if classes.shape[0] < 2:
        raise _Invalid(f"{classes.shape[0]} classes: a classifier has at least 2")
    if classes.dtype.kind == "f" and not np.isfinite(classes).all():
        raise _Invalid("the classes include NaN or infinity")
    ordered = np.unique(classes)
    if ordered.shape != classes.shape or not (ordered == classes).all():
        raise _Invalid("the classes must be distinct and sorted")


def _params_from_json(cls: type, section: dict[str, Any]) -> dict[str, Any]:
    """Saved hyperparameters for ``cls``: JSON lists become tuples where the default is."""
    params = dict(section["params"])
    signature = inspect.signature(cls).parameters  # the parameters of cls.__init__
    unknown = sorted(set(params) - set(signature))
    if unknown:
        raise _Invalid(f"parameters {_short(unknown)} unknown to {cls.__name__}")
    for key, value in params.items():
        if isinstance(signature[key].default, tuple) and isinstance(value, list):
            params[key] = tuple(value)
        elif isinstance(value, dict) and set(value) == {_DICT_ITEMS}:
            params[key] = _dict_from_items(value[_DICT_ITEMS], key)
    return params


def _dict_from_items(items: Any, name: str) -> dict[Any, Any]:
    """The dict :func:`_to_json` stored as ``(key, value)`` pairs (non-string keys)."""
    pairs = items if isinstance(items, list) else None
    if pairs is None or not all(
        isinstance(p, list) and len(p) == 2 and not isinstance(p[0], list | dict) for p in pairs
    ):
        raise _Invalid(f"parameter {name!r}: {_DICT_ITEMS} must be a list of [key, value] pairs")
    result = {key: value for key, value in pairs}
    if len(result) != len(pairs):
        raise _Invalid(f"parameter {name!r}: duplicate keys")
    return result


def _labels_from_array(stored: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "object":
        return np.array(stored.tolist(), dtype=object)
    return stored
