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
  are checked against the metadata and the ``state_layout`` of the estimator's engine
  from its ``.npy`` header, before its data are read; then its values: finite floats, and every
  index a compiled loop follows (the voted perceptron's support ids, classes, columns,
  CSR indices) within range.
* **What ``fit`` refuses, loading refuses.** The checks are the estimators' own, the
  ones ``fit`` runs, not a copy: ``class_weight`` holds finite weights >= 0 and names
  only classes, ``feature_names_in`` are distinct strings, a ``SequenceTagger``'s tags
  are strings; and the model derived from the state is checked as a trained one is when
  it is published. Scores must be finite for every input whose features lie in
  ``[-1, 1]``: the largest such score of class ``k`` is exactly ``Σ_j |coef_[k, j]| +
  |intercept_[k]|`` (at ``x = sign(coef_[k])``), so that sum must be finite, computed
  from the derived model (an averaged model's mean ``weights - aux / count``, naive
  Bayes' log-probabilities from the counts; the tagger's weights with its largest
  transition as intercept); a naive Bayes model must have counted some example (a
  class declared but not seen keeps its ``-inf`` prior). One pass over the model: no
  finite state that passes gives NaN or infinite scores to inputs of that size.
* **Bounded memory.** The zip directory is read first: only ``.npy`` members the
  metadata names, stored or deflated, at most :data:`MAX_ARRAY_BYTES` uncompressed in
  all, and at most that much in memory once the arrays stored as their nonzeros are
  expanded (their dense size counts), also within the memory budget of
  :func:`perceptrons._memory.check_allocation` (``PERCEPTRONS_MEMORY_LIMIT``); the
  metadata is at most :data:`MAX_META_BYTES` and nests at most
  :data:`MAX_META_DEPTH` levels; every member's uncompressed size must be exactly what
  its header declares, and that header what the metadata implies (sizes the metadata
  does not fix, such as the number of support vectors, are bounded by the examples
  seen), all before anything but the metadata is decompressed.
* **One line.** Every problem is a ``ValueError`` naming the file (``FileNotFoundError``
  when there is none): an unexpected exception from a damaged file is reported the same
  way, never as a traceback.

File format, version 3
----------------------
A ZIP archive as ``numpy.savez_compressed`` writes it (deflated members): one member
``<name>.npy`` per array, each in the NumPy ``.npy`` format (version 1.0 or 2.0, no
object or structured arrays). Array names:

``__meta__``
    uint8, 1-D: the UTF-8 bytes of a JSON object (the metadata, below).
``estimator/classes``
    The sorted labels (``classes_``): bool, integer, float, bytes (``S``) or unicode
    (``U``) dtype. Labels held in an object array of str are stored as ``U``.
``estimator/feature_names_in_text`` and ``estimator/feature_names_in_ends``
    The column names seen in ``fit`` (only when the model has them), one per input
    feature, as a string table (see ``featurizer/<name>``). Format 2 files hold them as
    one ``U`` array, ``estimator/feature_names_in``, which this reader still reads.
``estimator/rng_key``
    uint32, shape (624,): the key of the Mersenne Twister that shuffles the examples
    (``numpy.random.RandomState.get_state()[1]``), when the model has one.
``estimator/<name>``
    For each name in ``meta["state_arrays"]``: the estimator's fitted internals, as its
    engine's ``export_state`` gives them (e.g. ``weights``, ``aux`` for the linear models;
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
    For pipelines, each name in ``meta["featurizer"]["state_arrays"]``: ``idf`` for
    tf-idf weighting (float64, one per output feature), and the featurizer's strings
    as *string tables*: a fitted vocabulary's terms in column order
    (``vocabulary_text``, ``vocabulary_ends``, one term per output feature), or the
    names of a hashing featurizer's columns, when it keeps them (``hashed_names=True``):
    ``hashed_columns`` (int64, the columns
    that have names, strictly increasing, in ``[0, n_features_out)``) and their names
    (``hashed_names_text``, ``hashed_names_ends``, one per named column). A string
    table ``<t>_text``, ``<t>_ends`` holds the UTF-8 bytes of its strings one after
    another (uint8, 1-D) and where each string ends in them (int64, 1-D): string ``i``
    is ``text[ends[i-1]:ends[i]]`` (from 0 for the first), the ends non-decreasing and
    the last equal to the length of the text; checked so, with each piece valid UTF-8
    (strict: the bytes of a lone surrogate, ``ED A0 80``, are not) and the strings'
    memory within the budget (:mod:`perceptrons._memory`), before any string is made.
    Every string of a file is Unicode text: no surrogate in a table, a ``U`` array of
    labels or the metadata's JSON (a ``\\ud800`` escape), which ``save`` refuses to
    write and ``load`` refuses to read, each in one line naming where it is.

Metadata keys, in this order (``json.dumps`` with ``ensure_ascii=False``, no NaN):

``format``
    ``"perceptrons-model"``.
``format_version``
    ``3``. Readers refuse versions newer than theirs; this one reads versions 1 to 3.
    Version 2 kept the featurizer's strings in the metadata (``vocabulary``: the list
    of terms; ``hashed_names``: ``[column, name]`` pairs, in ``featurizer.state``),
    where a vocabulary of trigrams outgrew :data:`MAX_META_BYTES`; version 3 keeps them
    in string tables (arrays, above), as it does ``feature_names_in_`` (a ``U`` array
    in version 2: the longest name's size for every name); a version 2 reader would
    refuse its arrays with a misleading message rather than say that the file is newer,
    hence the new version. Version 1 had no
    ``sparse_arrays`` and ``resumable``: all arrays dense, the state resumable.
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
    voted perceptron's ``prediction="random"`` rule draws fresh numbers. A parameter
    renamed since a file was written is read under its new name (the one table of
    renames is ``RENAMED_PARAMS`` in ``perceptrons.io._persist_format``): ``n_jobs``,
    the number of shards of ``Perceptron`` and ``AveragedPerceptron``, is now
    ``n_shards``; :func:`describe` shows the file's own names.
``classes``
    ``{"dtype": ..., "array": "estimator/classes"}``: ``dtype`` is the NumPy dtype string
    of ``classes_`` (e.g. ``"<i8"``, ``"<U3"``, ``"|b1"``), or ``"object"`` when the labels
    were Python strings in an object array (restored as such).
``n_features_in``
    Number of input features (int).
``feature_names_in``
    ``true`` when the model has ``feature_names_in_`` (restored as an object array).
``history``
    ``history_``: a list of objects, one per epoch (or iteration), at most the most
    recent :data:`perceptrons._engine.MAX_HISTORY` (10,000) of them; a longer list (a
    file written before the bound) is read, and its last 10,000 kept.
``rng``
    ``null`` or ``{"array": "estimator/rng_key", "algorithm": "MT19937", "pos": int,
    "has_gauss": int, "cached_gaussian": float}``: with the key, the rest of
    ``RandomState.get_state()``.
``state``
    The JSON half of the ``export_state`` of the estimator's engine (counters, flags).
``state_arrays``
    Sorted names of the estimator's state arrays (stored as ``estimator/<name>``).
``sparse_arrays``
    ``{name: nnz}`` for the state arrays stored as their nonzero elements.
``resumable``
    ``false`` when the file was saved with ``resumable=False`` (or from a model without
    its training state): the model predicts exactly, but does not continue training
    (the state then says ``"resumable": false`` too). An online linear classifier's
    such file whose ``weights`` are in ``sparse_arrays`` is loaded sparsified.
``pipeline``
    ``null`` for a bare estimator, else ``{"steps": [featurizer_name, estimator_name]}``.
``featurizer``
    ``null``, or for pipelines ``{"algorithm": "TextFeaturizer", "params": {...},
    "state": {...}, "state_arrays": [...]}``; ``state`` holds ``n_features_out`` (the
    vocabulary and the hashed names are arrays: see ``featurizer/<name>``).
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

import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from perceptrons._lazy import LazyClasses
from perceptrons._registry import MODELS
from perceptrons.io._persist_format import (
    FORMAT,
    FORMAT_VERSION,
    META,
    Invalid,
    Registry,
    check_digest,
    check_meta,
    expected_members,
    one_line,
    sealed_meta,
)
from perceptrons.io._persist_read import (
    Arrays,
    build_model,
    check_memory,
    load_sparsified,
    open_archive,
    plan_estimator,
    plan_featurizer,
    read_meta,
)
from perceptrons.io._persist_write import encode_model
from perceptrons.io.files import write_atomically

if TYPE_CHECKING:
    from perceptrons._engine import StateCodec
    from perceptrons.budget import BudgetPerceptron
    from perceptrons.features import TextFeaturizer
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


# The only classes a file can name; loading never imports or evaluates anything else.
# Each class's module is imported when a file names it (LazyClasses): a perceptron's
# file loads neither the tagger nor the voted perceptron, nor their compiled kernels.
# The registry of the package's models (perceptrons._registry) says which they are.


def _registry(core: bool) -> Registry:
    """The classes files may name: the estimators, or (``core``) the learner core where
    a kind has one (:mod:`perceptrons.linear`: no scikit-learn imported)."""
    kinds = [kind for kind in MODELS if kind.saves]

    def table(featurizers: bool) -> LazyClasses:
        return LazyClasses(
            {
                kind.name: kind.module_of(core)
                for kind in kinds
                if (kind.role == "featurizer") == featurizers
            }
        )

    return Registry(table(False), table(True))


_REGISTRY = _registry(core=False)
_CORE_REGISTRY = _registry(core=True)

if TYPE_CHECKING:
    # The type checker holds the codec of every class a file can name to StateCodec,
    # which reading and writing use (a Protocol over the classes would not: their
    # scikit-learn bases are untyped, so they would pass any).
    def _stored_codec(
        model: Perceptron
        | AveragedPerceptron
        | VotedPerceptron
        | BudgetPerceptron
        | MultinomialNaiveBayes
        | BernoulliNaiveBayes
        | LogisticRegressionSGD
        | LogisticRegressionBatch
        | SequenceTagger
        | TextFeaturizer,
    ) -> StateCodec:
        return model._codec()


#: The most bytes the JSON metadata may take.
MAX_META_BYTES = 16 * 2**20
#: The deepest the metadata's lists and objects may nest.
MAX_META_DEPTH = 32
#: The most bytes all arrays of a file may take uncompressed (checked, like each
#: member's size, in the zip directory before anything is decompressed).
MAX_ARRAY_BYTES = 2**32


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
        new ``fit`` starts afresh). Its weights, when stored as their nonzeros (a
        sparse model's: an L1 penalty's, a feature budget's, a hashed model's), load as
        them: ``coef_`` a CSR matrix, memory that follows the nonzeros. A model that
        has no training state (pruned by ``sparsify(threshold=...)``, or loaded from a
        non-resumable file) is always saved non-resumable.

    Returns
    -------
    path : Path
        The file written.

    Raises
    ------
    ValueError
        For a model that cannot be saved: another type, a callable kernel, a
        hyperparameter or label type that has no JSON or array form, metadata larger
        than :data:`~perceptrons.io.persist.MAX_META_BYTES` (which
        :func:`~perceptrons.load` would refuse).
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
    arrays, meta = encode_model(model, resumable, (_REGISTRY, _CORE_REGISTRY))
    sealed = sealed_meta(meta, arrays)
    if len(sealed) > MAX_META_BYTES:
        # What this library writes, it must read: refused here, not by load.
        sizes = {key: len(json.dumps(value, ensure_ascii=False)) for key, value in meta.items()}
        largest = max(sizes, key=sizes.__getitem__)
        raise ValueError(
            f"cannot save {path}: the metadata would take {len(sealed):,} bytes, more than "
            f"{MAX_META_BYTES:,} (perceptrons.io.persist.MAX_META_BYTES), {sizes[largest]:,} "
            f"of them in {largest!r}"
        )
    arrays[META] = np.frombuffer(sealed, dtype=np.uint8)
    write_atomically(path, lambda file: _write_npz(file, arrays))
    return path


#: zlib's level for the members. The fastest: on a 20-class 2**20-feature averaged
#: model (17 MB of arrays, its nonzeros) level 1 takes 0.16 s of CPU for a 4.8 MB file,
#: numpy.savez_compressed's level 6 0.85 s for 4.4 MB.
COMPRESS_LEVEL = 1


def _write_npz(file: IO[bytes], arrays: dict[str, np.ndarray]) -> None:
    """The archive ``numpy.savez_compressed`` writes (deflated ``<name>.npy``
    members), at :data:`COMPRESS_LEVEL`. A file object, not a name: numpy would append
    ".npz" to a name."""
    with zipfile.ZipFile(
        file, mode="w", compression=zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL
    ) as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", mode="w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)


# --------------------------------------------------------------------------- load
def load(path: str | os.PathLike[str], *, sparse: bool = False, core: bool = False) -> Any:
    """Read a model written by :func:`~perceptrons.save`.

    The file is untrusted input: nothing from it is unpickled or evaluated, estimator
    classes come from a fixed registry, and every array and metadata field is checked
    (see the module documentation) before the model is built or a kernel sees it.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`~perceptrons.save`; it is read as untrusted input.
    sparse : bool, default=False
        Give an online linear classifier (``Perceptron``, ``AveragedPerceptron``,
        ``LogisticRegressionSGD``) back sparsified, as ``sparsify()`` leaves it:
        ``coef_`` a ``scipy.sparse`` matrix and the training state kept in its nonzero
        rows, never expanded to the dense ``n_features x n_classes`` arrays. It predicts
        bit for bit as the dense model; training continues from it. What
        to ask for to predict with a hashed model (``2**20`` rows): loading then costs
        what its nonzeros cost. A file saved with ``resumable=False`` whose weights are
        stored as their nonzeros loads so without it. The other estimators load as
        without it.
    core : bool, default=False
        Build the model as its learner core (:mod:`perceptrons.linear`,
        :mod:`perceptrons.text`: the same model without scikit-learn's face, nothing of
        scikit-learn imported) where its kind has one, as the command line does; a
        pipeline's file as a :class:`~perceptrons.text.TextPipeline`.

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
    return _read_checked(path, lambda meta, model: model, sparse=sparse, core=core)


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
        ``params``, ``library_version``, ``created``, ``history``, ``featurizer``...

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`~perceptrons.load`.
    """
    # The model is built (every check runs), then dropped: its core is enough.
    return _read_checked(path, lambda meta, model: meta, core=True)


def _read_checked(
    path: str | os.PathLike[str],
    result: Callable[[dict, Any], Any],
    sparse: bool = False,
    core: bool = False,
) -> Any:
    """Read, check and build the model of a file (sparsified with ``sparse``: see
    :func:`load`), then return ``result(meta, model)``; every problem becomes one
    ValueError line naming the file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"cannot load {path}: no such file")
    try:
        # The limits are read now: a caller may have changed them.
        with open_archive(path, MAX_ARRAY_BYTES) as archive:
            raw, meta = read_meta(archive, MAX_META_BYTES, MAX_META_DEPTH)
            check_meta(meta, _REGISTRY)
            registry = _CORE_REGISTRY if core else _REGISTRY
            arrays = Arrays(archive, expected_members(meta))
            # Every member's layout against the metadata and the estimator's parameters,
            # reading only the labels; then the data, their checksum, and the values.
            estimator = plan_estimator(meta, arrays, registry)
            if sparse:
                load_sparsified(meta, estimator)
            featurizer = plan_featurizer(meta, arrays, estimator, registry)
            check_memory(meta, arrays, estimator, MAX_ARRAY_BYTES)
            problem = check_digest(raw, meta, arrays.read_all())
            if problem is not None:
                raise Invalid(problem)
            return result(meta, build_model(meta, arrays, estimator, featurizer, core=core))
    except Invalid as exc:
        raise ValueError(f"cannot load {path}: {one_line(exc)}") from None
    except RecursionError:
        raise ValueError(f"cannot load {path}: invalid model data (nested too deeply)") from None
    except Exception as exc:
        # The engines' own checks (import_state, check_params) raise ValueError; any
        # other exception is a check missing here, but still a refused file, in one line.
        kind = "" if isinstance(exc, ValueError) else f"{type(exc).__name__}: "
        raise ValueError(
            f"cannot load {path}: invalid model data ({kind}{one_line(exc)})"
        ) from None
