"""A fitted estimator as plain values that compare bit for bit (tests/test_rollback.py,
tests/test_fuzz_models.py): a training call that failed must leave them all as they were."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from perceptrons import save


def _comparable(value: Any) -> Any:
    """``value`` as plain values that compare bit for bit (arrays as their bytes)."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if sp.issparse(value):
        value = sp.csr_matrix(value)
        return ("sparse", value.shape, *map(_comparable, (value.data, value.indices, value.indptr)))
    if isinstance(value, np.random.RandomState):
        return ("generator", _comparable(list(value.get_state())))
    if isinstance(value, list | tuple):
        return tuple(_comparable(item) for item in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _comparable(v)) for k, v in value.items()))
    if value is None or isinstance(value, bool | int | float | str | np.generic):
        return value
    return type(value).__name__  # an object of its own: the model file holds its state


def fingerprint(model: Any, directory: Path) -> dict[str, Any]:
    """Everything the estimator holds: its model file's arrays and metadata (but the
    time it was written and the checksum over it), its public fitted attributes and
    its generator."""
    path = save(model, directory / "fingerprint.npz")
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    meta = json.loads(np.load(io.BytesIO(members.pop("__meta__.npy"))).tobytes())
    for volatile in ("created", "sha256"):
        meta.pop(volatile, None)
    fitted = {
        name: _comparable(value)
        for name, value in vars(model).items()
        if name.endswith("_") and not name.startswith("_")
    }
    return {"members": members, "meta": meta, "fitted": fitted}
