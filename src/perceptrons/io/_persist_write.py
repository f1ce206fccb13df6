"""Writing a model file: an estimator (and a pipeline's featurizer) as the arrays and
metadata of :mod:`perceptrons.io.persist`'s format, their state from their engine's
``export_state`` (a :class:`~perceptrons._engine.StateCodec`)."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import numpy as np

from perceptrons import _checked, _input
from perceptrons._engine import StateCodec
from perceptrons._version import __version__
from perceptrons.io._persist_format import (
    FORMAT,
    FORMAT_VERSION,
    RESERVED,
    Registry,
    labels_to_array,
    params_to_json,
    to_json,
)

__all__ = ["encode_model"]


def encode_model(
    model: Any, resumable: bool, registries: Sequence[Registry]
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays and the metadata (all but its checksum) of a file holding ``model``, an
    estimator of one of ``registries`` (the estimators' and the core's) or a pipeline
    of one of their featurizers and an estimator."""
    featurizer = None
    estimator = model
    registry = registries[0]
    estimators = [r.estimators for r in registries]
    if is_pipeline(model):
        steps = model.steps
        if (
            len(steps) != 2
            or registered(steps[0][1], [r.featurizers for r in registries]) is None
            or registered(steps[1][1], estimators) is None
        ):
            kinds = [type(step).__name__ for _, step in steps]
            raise ValueError(
                f"cannot save a Pipeline of {kinds}: only [TextFeaturizer, estimator] "
                f"pipelines can be saved, with an estimator among {sorted(registry.estimators)}."
            )
        featurizer, estimator = steps[0][1], steps[1][1]
    elif registered(model, estimators) is None:
        raise ValueError(
            f"cannot save a {type(model).__name__}: only {sorted(registry.estimators)} and "
            "Pipelines of [TextFeaturizer, estimator] can be saved."
        )
    arrays, meta = encode_estimator(estimator, resumable)
    meta["pipeline"] = None if featurizer is None else {"steps": [name for name, _ in steps]}
    meta["featurizer"] = None
    if featurizer is not None:
        feature_arrays, meta["featurizer"] = encode_featurizer(featurizer)
        arrays.update(feature_arrays)
    return arrays, meta


def is_pipeline(model: Any) -> bool:
    """Whether ``model`` is a pipeline: the core's :class:`~perceptrons.text.TextPipeline`
    or a scikit-learn Pipeline (none can exist before scikit-learn's pipeline module is
    imported: the command line's models never are)."""
    from perceptrons.text.pipeline import TextPipeline

    if isinstance(model, TextPipeline):
        return True
    if "sklearn.pipeline" not in sys.modules:
        return False
    from sklearn.pipeline import Pipeline

    return isinstance(model, Pipeline)


def registered(instance: Any, tables: Sequence[Mapping[str, type]]) -> type | None:
    """The class of one of ``tables`` for ``instance``'s exact type (subclasses are not
    saved)."""
    kind = type(instance)
    for classes in tables:
        # The table whose class lives in the instance's module, looked up alone: the
        # others are not imported (the core's model never imports scikit-learn's face).
        module_of = getattr(classes, "module_of", None)
        if module_of is not None and module_of(kind.__name__) != kind.__module__:
            continue
        cls = classes.get(kind.__name__)
        if cls is kind:
            return cls
    return None


def encode_estimator(
    estimator: Any, resumable: bool
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    name = type(estimator).__name__
    if callable(getattr(estimator, "kernel", None)):
        raise ValueError(
            "a callable kernel cannot be saved; refit with kernel='linear', 'poly', 'rbf' "
            "or 'precomputed' to save the model, or keep it in memory."
        )
    if not hasattr(estimator, "classes_"):
        raise _input.not_fitted_error(estimator)(
            f"cannot save an unfitted {name}: call fit or partial_fit first."
        )
    params = params_to_json(estimator)
    codec: StateCodec = estimator._codec()
    state_arrays, state_values = codec.export_state(resumable=resumable)
    clash = sorted(set(state_arrays) & set(RESERVED))
    if clash:  # a bug in an estimator's engine, not a user error
        raise RuntimeError(f"{name}'s export_state uses reserved array names {clash}")

    arrays, sparse = encode_state(state_arrays, codec.state_layout(state_values))
    classes, classes_dtype = labels_to_array(estimator.classes_, "classes_")
    arrays["estimator/classes"] = classes
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        # A string table: a unicode array would take the longest name's size for each.
        stored, _ = labels_to_array(names, "feature_names_in_")
        if stored.dtype.kind != "U":
            raise ValueError("cannot save feature_names_in_: the names must be strings.")
        table = _checked.pack_strings([str(name) for name in names], "feature_names_in_")
        arrays["estimator/feature_names_in_text"], arrays["estimator/feature_names_in_ends"] = table
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
        "history": to_json(getattr(estimator, "history_", []), "history_"),
        "rng": rng_meta,
        "state": to_json(state_values, f"{name} state"),
        "state_arrays": sorted(state_arrays),
        "sparse_arrays": sparse,
        "resumable": state_values.get("resumable", True) is not False,
    }
    return arrays, meta


def encode_state(
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
        coordinates = None
        if isinstance(value, _checked.SparseArray):
            coordinates = value
        elif storable and isinstance(value, np.ndarray) and value.dtype == np.float64:
            # Counted before any is gathered: a dense array costs no coordinates.
            coordinates = _checked.SparseArray.if_smaller(value)
        if storable and coordinates is not None and coordinates.nbytes < coordinates.dense_nbytes:
            arrays[f"estimator/{key}.index"] = coordinates.index
            arrays[f"estimator/{key}.values"] = coordinates.values
            sparse[key] = coordinates.nnz
            continue
        if isinstance(value, _checked.SparseArray):
            value = value.to_dense()
        arrays[f"estimator/{key}"] = np.asarray(value)
    return arrays, sparse


def encode_featurizer(featurizer: Any) -> tuple[dict[str, np.ndarray], dict]:
    name = type(featurizer).__name__
    if not hasattr(featurizer, "n_features_out_"):
        raise _input.not_fitted_error(featurizer)(
            f"cannot save a pipeline whose {name} is not fitted."
        )
    codec: StateCodec = featurizer._codec()
    state_arrays, state_values = codec.export_state()
    arrays = {f"featurizer/{key}": np.asarray(value) for key, value in state_arrays.items()}
    meta = {
        "algorithm": name,
        "params": params_to_json(featurizer),
        "state": to_json(state_values, f"{name} state"),
        "state_arrays": sorted(state_arrays),
    }
    return arrays, meta
