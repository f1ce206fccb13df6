"""Reading a model file as untrusted input: the archive's directory and every
``.npy`` header checked before anything is decompressed, every array's layout checked
against the metadata and the engine's ``state_layout`` before it is read, and the model
built through its engine's ``import_state`` (a :class:`~perceptrons._engine.StateCodec`;
see :mod:`perceptrons.io.persist`)."""

from __future__ import annotations

import contextlib
import json
import math
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from perceptrons import _checked, _validation
from perceptrons._engine import MAX_HISTORY, StateCodec
from perceptrons._linear import SparseCoefMixin
from perceptrons._memory import MemoryBudgetError, array_bytes, check_allocation
from perceptrons.io._persist_format import (
    FORMAT,
    FORMAT_VERSION,
    META,
    Invalid,
    Registry,
    depth,
    field,
    labels_from_array,
    names_as_table,
    one_line,
    params_from_json,
    short,
    sparse_arrays,
    strings_problem,
)

__all__ = [
    "Arrays",
    "build_model",
    "check_memory",
    "load_sparsified",
    "open_archive",
    "plan_estimator",
    "plan_featurizer",
    "read_meta",
]

# A .npy header is at most this long (numpy's own default limit).
MAX_HEADER = 10_000
# Label arrays (classes, feature names) take at most this many bytes.
MAX_LABEL_BYTES = 2**26
# dtype kinds a model file's arrays may have: bool, ints, floats, bytes, unicode.
PLAIN_KINDS = "biufSU"
LABELS = _checked.Free("labels")
RNG_KEY = _checked.Spec((np.dtype(np.uint32),), (624,))


# ------------------------------------------------------------ the archive, bounded
def open_archive(path: Path, max_array_bytes: int) -> zipfile.ZipFile:
    """The zip archive at ``path``, its directory checked before anything is
    decompressed: ``.npy`` members only, stored or deflated, each name once, at most
    ``max_array_bytes`` uncompressed in all."""
    try:
        if path.is_file() and not zipfile.is_zipfile(path):
            with open(path, "rb") as file:
                if file.read(6) == b"\x93NUMPY":
                    raise Invalid(
                        "not a perceptrons model file (a .npy array, not an .npz archive)"
                    )
        archive = zipfile.ZipFile(path)
    except Invalid:
        raise
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise Invalid(f"not a readable perceptrons model (.npz) file: {one_line(exc)}") from None
    try:
        check_directory(archive.infolist(), max_array_bytes)
    except BaseException:
        archive.close()
        raise
    return archive


def check_directory(members: list[zipfile.ZipInfo], max_array_bytes: int) -> None:
    names = [member.filename for member in members]
    if len(set(names)) != len(names):
        raise Invalid("not a readable perceptrons model (.npz) file: a member appears twice")
    total = 0
    for member in members:
        if not member.filename.endswith(".npy"):
            raise Invalid(f"unexpected member {member.filename!r}: a model file holds .npy arrays")
        if member.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise Invalid(
                f"not a readable perceptrons model (.npz) file: member {member.filename!r} "
                f"uses compression method {member.compress_type}"
            )
        total += member.file_size
    if META + ".npy" not in names:
        raise Invalid(f"no {META} array: not a perceptrons model file")
    if total > max_array_bytes:
        raise Invalid(
            f"the arrays would take {total:,} bytes uncompressed, more than this reader's "
            f"limit of {max_array_bytes:,} (perceptrons.io.persist.MAX_ARRAY_BYTES)"
        )


def read_header(file: IO[bytes], name: str) -> tuple[tuple[int, ...], np.dtype, bool, int]:
    """``(shape, dtype, fortran_order, header_length)`` of a ``.npy`` stream, refusing
    every dtype a model file never holds (objects, structures, complex numbers...)."""
    version = np.lib.format.read_magic(file)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(
            file, max_header_size=MAX_HEADER
        )
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(
            file, max_header_size=MAX_HEADER
        )
    else:
        raise Invalid(f"{name}: .npy format version {version} (model files use 1.0 or 2.0)")
    if dtype.kind not in PLAIN_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise Invalid(f"{name} has dtype {dtype.str} (model files hold plain numbers and strings)")
    return shape, dtype, fortran, file.tell()


@contextlib.contextmanager
def reading(name: str) -> Iterator[None]:
    """Damage found while decompressing or parsing member ``name`` (bad CRC, bad
    deflate stream, a flipped encryption flag, a malformed header...) as one problem."""
    try:
        yield
    except Invalid:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, RuntimeError) as exc:
        raise Invalid(
            f"not a readable perceptrons model (.npz) file: {name}: {one_line(exc)}"
        ) from None
    except NotImplementedError as exc:  # an unknown compression method
        raise Invalid(
            f"not a readable perceptrons model (.npz) file: {name}: {one_line(exc)}"
        ) from None


class Arrays:
    """The archive's arrays, read lazily: headers first, then data only once the
    members' declared sizes match their headers and the metadata's expectations."""

    def __init__(self, archive: zipfile.ZipFile, expected: set[str]) -> None:
        members = {info.filename[: -len(".npy")]: info for info in archive.infolist()}
        missing = sorted(expected - set(members))
        if missing:
            raise Invalid(f"arrays missing: {', '.join(missing)}")
        unexpected = sorted(set(members) - expected)
        if unexpected:
            raise Invalid(f"unexpected arrays: {', '.join(unexpected)}")
        self._archive = archive
        self.layouts: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
        for name, info in members.items():
            if name == META:
                continue
            with reading(name), archive.open(info) as file:
                shape, dtype, _, header = read_header(file, name)
            size = header + math.prod(shape) * dtype.itemsize
            if size != info.file_size:
                raise Invalid(
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
            with reading(name), self._archive.open(name + ".npy") as file:
                self._data[name] = np.lib.format.read_array(
                    file, allow_pickle=False, max_header_size=MAX_HEADER
                )
        return self._data[name]

    def read_all(self) -> dict[str, np.ndarray]:
        """Every array but ``__meta__``."""
        return {name: self[name] for name in self.layouts}


def read_meta(
    archive: zipfile.ZipFile, max_meta_bytes: int, max_meta_depth: int
) -> tuple[bytes, dict[str, Any]]:
    """The metadata's JSON text and object: at most ``max_meta_bytes`` long, nested at
    most ``max_meta_depth`` deep, of this format and a version this reader reads."""
    info = archive.getinfo(META + ".npy")
    if info.file_size > max_meta_bytes + MAX_HEADER:
        raise Invalid(f"bad metadata: {META} is larger than {max_meta_bytes:,} bytes")
    with reading(META), archive.open(info) as file:
        shape, dtype, _, _ = read_header(file, META)
        if dtype != np.uint8 or len(shape) != 1:
            raise Invalid(f"{META} must be a 1-D uint8 array, got {dtype} {shape}")
        if shape[0] > max_meta_bytes:
            raise Invalid(f"bad metadata: {META} is larger than {max_meta_bytes:,} bytes")
        raw = file.read(shape[0])
    if len(raw) != shape[0]:
        raise Invalid(f"{META} is truncated")
    try:
        meta = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise Invalid(f"bad metadata: {META} is nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, too many digits
        raise Invalid(f"bad metadata: {META} is not UTF-8 JSON ({one_line(exc)})") from None
    if not isinstance(meta, dict):
        raise Invalid(f"bad metadata: {META} is not a JSON object")
    if depth(meta) > max_meta_depth:
        raise Invalid(f"bad metadata: nested deeper than {max_meta_depth} levels")
    problem = strings_problem(meta)  # a "\ud800" escape: UTF-8 holds no surrogate
    if problem is not None:
        raise Invalid(f"bad metadata: a string of {META} holds {problem}, not Unicode text")
    if meta.get("format") != FORMAT:
        raise Invalid(f"not a perceptrons model file (format {short(meta.get('format'))})")
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise Invalid(f"bad metadata: format_version {short(version)} is not a positive int")
    if version > FORMAT_VERSION:
        raise Invalid(
            f"written by a newer perceptrons (format {version} > {FORMAT_VERSION}); upgrade"
        )
    return raw, meta


# ------------------------------------------------------------------ the model
def plan_estimator(meta: dict[str, Any], arrays: Arrays, registry: Registry) -> Any:
    """The estimator with its parameters (checked by its own rules), labels and input
    records; every estimator array's declared layout checked, none of them read yet."""
    cls = registry.estimators[meta["algorithm"]]
    estimator = cls(**params_from_json(cls, meta))
    estimator._codec().check_params()  # the rules of set_params and fit
    n_features = meta["n_features_in"]
    sizes: dict[str, int] = {}
    classes_dtype = meta["classes"]["dtype"]
    name = "estimator/classes"
    spec = _checked.Spec(label_dtypes(arrays, name, classes_dtype), (LABELS,))
    arrays.check(name, spec, sizes, "the metadata")
    classes = labels_from_array(arrays[name], classes_dtype, name)
    check_classes(classes)
    # The rules fit applies to what it is given, applied to what the file gives.
    _validation.check_class_weight(getattr(estimator, "class_weight", None), classes, cls.__name__)
    estimator.classes_ = classes
    estimator.n_features_in_ = n_features
    if meta["feature_names_in"] and names_as_table(meta):
        table = {
            f"estimator/{k}": s for k, s in _checked.strings("feature_names_in", n_features).items()
        }
        for name, spec in table.items():
            arrays.check(name, spec, sizes, f"{n_features} features")
        text, ends = (arrays[name] for name in table)
        names = np.array(
            _checked.unpack_strings(text, ends, "estimator/feature_names_in"), dtype=object
        )
        _validation.check_feature_names(names, cls.__name__)
        estimator.feature_names_in_ = names
    elif meta["feature_names_in"]:
        name = "estimator/feature_names_in"
        spec = _checked.Spec(label_dtypes(arrays, name, "object"), (n_features,))
        arrays.check(name, spec, sizes, f"{n_features} features")
        names = labels_from_array(arrays[name], "object", name)
        _validation.check_feature_names(names, cls.__name__)
        estimator.feature_names_in_ = names
    estimator.history_ = list(meta["history"])[-MAX_HISTORY:]  # older files: unbounded
    if meta["rng"] is not None:
        arrays.check("estimator/rng_key", RNG_KEY, sizes, "MT19937")
    fits = f"{n_features} features and {classes.shape[0]} classes"
    codec: StateCodec = estimator._codec()
    layout = codec.state_layout(meta["state"])
    check_layouts(arrays, "estimator/", meta["state_arrays"], layout, fits, sparse_arrays(meta))
    return estimator


def plan_featurizer(
    meta: dict[str, Any], arrays: Arrays, estimator: Any, registry: Registry
) -> Any:
    """The pipeline's featurizer with its parameters (checked by its own rules) and
    its arrays' layouts checked, or None for a bare estimator."""
    info = meta["featurizer"]
    if info is None:
        return None
    cls = registry.featurizers[info["algorithm"]]
    featurizer = cls(**params_from_json(cls, info))
    codec: StateCodec = featurizer._codec()
    codec.check_params()  # the rules of set_params and fit
    state = info["state"]
    n_out = field(state, "n_features_out", int, "featurizer.state.")
    if n_out != estimator.n_features_in_:
        raise Invalid(
            f"the featurizer makes {n_out} features, the estimator takes {estimator.n_features_in_}"
        )
    # Format 2 files hold the vocabulary or the hashed names in the metadata, format 3
    # files in arrays (see the featurizer's state_layout).
    if featurizer.vocabulary == "fit" and "vocabulary" in state:
        terms = field(state, "vocabulary", list, "featurizer.state.")
        if not all(isinstance(term, str) for term in terms):
            raise Invalid("bad metadata: the vocabulary must be a list of strings")
    elif featurizer.vocabulary != "fit":
        pairs = state.get("hashed_names", [])  # absent from older files
        if not isinstance(pairs, list):
            raise Invalid("bad metadata: hashed_names must be a list of [column, name] pairs")
        if not all(
            isinstance(pair, list)
            and len(pair) == 2
            and isinstance(pair[0], int)
            and not isinstance(pair[0], bool)
            and isinstance(pair[1], str)
            for pair in pairs
        ):
            raise Invalid("bad metadata: hashed_names must be a list of [column, name] pairs")
    layout = codec.state_layout(state)
    check_layouts(arrays, "featurizer/", info["state_arrays"], layout, f"{n_out} features")
    return featurizer


def check_memory(
    meta: dict[str, Any], arrays: Arrays, estimator: Any, max_array_bytes: int
) -> None:
    """The memory the arrays will take once read, before any is: every member's data
    (their layouts checked) and, for each array stored as its nonzeros that the model
    will expand, its dense size -- a file of a few kilobytes can name an array of
    gigabytes that way -- or, kept compact, the size of the rows holding them. At most
    ``max_array_bytes`` in all, and within the memory budget
    (:func:`perceptrons._memory.check_allocation`)."""
    total = sum(math.prod(shape) * dtype.itemsize for shape, dtype in arrays.layouts.values())
    expanded = []
    codec: StateCodec = estimator._codec()
    layout = codec.state_layout(meta["state"])
    expands = expands_sparse(meta, estimator)
    sparse = sparse_arrays(meta)
    # Kept compact, the arrays kept by row hold the rows with a nonzero in any of them
    # (and the intercept's): at most one per nonzero, or all of an array stored dense.
    by_row = [name for name, spec in layout.items() if spec.by_row is not None]
    rows = 1
    for name in by_row:
        if name in sparse:
            rows += sparse[name]
        elif f"estimator/{name}" in arrays.layouts:  # (an empty aux holds no row)
            stored, _ = arrays.layouts[f"estimator/{name}"]
            rows += math.prod(stored) and stored[layout[name].by_row or 0]
    for name, nnz in sorted(sparse.items()):
        # Fixed sizes only: check_layouts refused any other array stored sparse.
        shape = tuple(d for d in layout[name].shape if isinstance(d, int))
        axis = layout[name].by_row
        if not expands and axis is not None and shape:
            shape = (*shape[:axis], min(rows, shape[axis]), *shape[axis + 1 :])
        total += array_bytes(*shape)
        expanded.append(f"estimator/{name}: {nnz:,} nonzeros of {shape}")
    how = "expanding" if expands else "keeping the rows of"
    what = "the model's arrays" + (f" ({how} {'; '.join(expanded)})" if expanded else "")
    if total > max_array_bytes:
        raise Invalid(
            f"{what} would take {total:,} bytes in memory, more than this reader's limit "
            f"of {max_array_bytes:,} (perceptrons.io.persist.MAX_ARRAY_BYTES)"
        )
    try:
        check_allocation(total, f"loading {what}")
    except MemoryBudgetError as exc:
        raise Invalid(str(exc)) from None


def expands_sparse(meta: dict[str, Any], estimator: Any) -> bool:
    """Whether the arrays stored as their nonzeros are expanded to dense ones on
    loading: always, but for a sparsified model (``sparsify()``) of an estimator that
    keeps them compact (``SparseCoefMixin._loads_sparsified_compact``; naive Bayes
    expands its counts)."""
    compact = isinstance(estimator, SparseCoefMixin) and estimator._loads_sparsified_compact
    return not (compact and meta["state"].get("sparsified") is True)


def load_sparsified(meta: dict[str, Any], estimator: Any) -> None:
    """Have an online linear classifier built sparsified, as ``sparsify()`` leaves it
    (``coef_`` sparse, its training state compact, never expanded): the metadata's
    state marked so (only in memory: the checksum covers the file's own bytes). The
    other estimators are built as the file says."""
    from perceptrons.linear._online import OnlineLinearClassifier

    if isinstance(estimator, OnlineLinearClassifier):
        meta["state"]["sparsified"] = True


def build_model(
    meta: dict[str, Any], arrays: Arrays, estimator: Any, featurizer: Any, *, core: bool = False
) -> Any:
    """The planned estimator and featurizer given their state (whose values their
    ``import_state`` checks), as a pipeline when the file holds one (scikit-learn's, or
    with ``core`` a :class:`~perceptrons.text.TextPipeline`)."""
    codec: StateCodec = estimator._codec()
    codec.import_state(state_arrays(meta, arrays, estimator), meta["state"])
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
    featurizer_codec: StateCodec = featurizer._codec()
    featurizer_codec.import_state(
        {name: arrays[f"featurizer/{name}"] for name in names}, info["state"]
    )
    first, second = meta["pipeline"]["steps"]
    if core:  # the command line's: no scikit-learn
        from perceptrons.text.pipeline import TextPipeline

        return TextPipeline([(first, featurizer), (second, estimator)])
    from sklearn.pipeline import Pipeline

    return Pipeline([(first, featurizer), (second, estimator)])


def state_arrays(meta: dict[str, Any], arrays: Arrays, estimator: Any) -> dict[str, Any]:
    """The estimator's state arrays, those stored sparse as checked
    :class:`~perceptrons._checked.SparseArray` (expanded for an estimator that cannot
    keep them sparse)."""
    sparse = sparse_arrays(meta)
    codec: StateCodec = estimator._codec()
    layout = codec.state_layout(meta["state"])
    state: dict[str, Any] = {}
    for name in meta["state_arrays"]:
        if name not in sparse:
            state[name] = arrays[f"estimator/{name}"]
            continue
        shape = tuple(d for d in layout[name].shape if isinstance(d, int))
        assert len(shape) == len(layout[name].shape)  # fixed sizes: checked by check_layouts
        coordinates = _checked.SparseArray(
            shape,
            arrays[f"estimator/{name}.index"],
            arrays[f"estimator/{name}.values"],
        )
        coordinates.check(f"estimator/{name}")
        keeps_sparse = isinstance(estimator, SparseCoefMixin)  # its engine decides
        state[name] = coordinates if keeps_sparse else coordinates.to_dense()
    return state


def check_layouts(
    arrays: Arrays,
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
        raise Invalid(problem)
    sizes: dict[str, int] = {}
    for name in names:
        spec = specs[name]
        if name not in sparse:
            arrays.check(prefix + name, spec, sizes, fits)
            continue
        if not _checked.sparse_storable(spec):
            raise Invalid(f"{prefix}{name} cannot be stored sparse")
        nnz, size = sparse[name], math.prod(d for d in spec.shape if isinstance(d, int))
        if nnz > size:
            raise Invalid(f"{prefix}{name}: {nnz} nonzeros for an array of {size} elements")
        arrays.check(prefix + name + ".index", _checked.Spec(_checked.INT64, (nnz,)), sizes, fits)
        arrays.check(
            prefix + name + ".values", _checked.Spec(_checked.FLOAT64, (nnz,)), sizes, fits
        )


def label_dtypes(arrays: Arrays, name: str, dtype: str) -> tuple[np.dtype, ...]:
    """The dtype a label array must have: the metadata's, or any unicode for
    ``"object"``; at most :data:`MAX_LABEL_BYTES` in all."""
    shape, stored = arrays.layouts[name]
    if math.prod(shape) * stored.itemsize > MAX_LABEL_BYTES:
        raise Invalid(f"{name} takes more than {MAX_LABEL_BYTES:,} bytes")
    if dtype == "object":
        if stored.kind != "U":
            raise Invalid(f"object labels stored as {stored}, expected unicode")
        return (stored,)
    if stored.str != dtype:
        raise Invalid(f"labels stored as {stored.str}, but the metadata says {short(dtype)}")
    return (stored,)


def check_classes(classes: np.ndarray) -> None:
    if classes.shape[0] < 2:
        raise Invalid(f"{classes.shape[0]} classes: a classifier has at least 2")
    if classes.dtype.kind == "f" and not np.isfinite(classes).all():
        raise Invalid("the classes include NaN or infinity")
    ordered = np.unique(classes)
    if ordered.shape != classes.shape or not (ordered == classes).all():
        raise Invalid("the classes must be distinct and sorted")
