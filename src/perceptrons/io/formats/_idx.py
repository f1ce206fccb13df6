"""The ``idx`` format (MNIST's binary arrays): :func:`read_idx`, and images with their
labels as data.
"""

from __future__ import annotations

import gzip
import math
import os
import zlib
from pathlib import Path

import numpy as np

from perceptrons.io.formats._common import (
    _GZIP_MAGIC,
    DataFormatError,
    LabeledData,
    _check_rows,
    _open_error,
)

_IDX_MAX_DIMS = 32  # numpy arrays have at most 64 dimensions; IDX files use 1 to 4
# IDX type codes -> big-endian numpy dtypes.
_IDX_DTYPES: dict[int, np.dtype] = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def _read_bytes(path: Path) -> bytes:
    """Read a file, transparently gunzipping it when it starts with the gzip magic."""
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw[:2] == _GZIP_MAGIC:
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise ValueError(f"{str(path)!r}: corrupt gzip stream ({exc})") from exc
    return raw


def read_idx(path: str | os.PathLike[str]) -> np.ndarray:
    """Read an IDX file (the MNIST format), plain or gzip-compressed.

    The header is validated: two zero bytes, a known type code, the number of
    dimensions, then one big-endian 32-bit size per dimension; the payload must
    hold exactly ``prod(sizes) * itemsize`` bytes.

    Parameters
    ----------
    path : str or os.PathLike
        File to read.  Compression is detected from the content (gzip magic
        number), not from the file name.

    Returns
    -------
    numpy.ndarray
        Array of shape ``sizes`` in native byte order (``uint8`` for MNIST).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the magic number, type code or dimensions are invalid, or the payload
        size does not match the header.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{str(path)!r}: no such file")
    raw = _read_bytes(path)
    name = str(path)
    if len(raw) < 4:
        raise ValueError(f"{name!r}: too short for an IDX header ({len(raw)} bytes)")
    if raw[0] != 0 or raw[1] != 0:
        raise ValueError(
            f"{name!r}: bad IDX magic number 0x{raw[:4].hex()} (must start with two zero bytes)"
        )
    type_code, ndim = raw[2], raw[3]
    if type_code not in _IDX_DTYPES:
        raise ValueError(f"{name!r}: unknown IDX data type code 0x{type_code:02x}")
    if ndim == 0:
        raise ValueError(f"{name!r}: IDX header declares 0 dimensions")
    if ndim > _IDX_MAX_DIMS:
        raise ValueError(
            f"{name!r}: IDX header declares {ndim} dimensions (at most {_IDX_MAX_DIMS} are read)"
        )
    header_len = 4 + 4 * ndim
    if len(raw) < header_len:
        raise ValueError(
            f"{name!r}: truncated IDX header ({len(raw)} bytes, need {header_len} "
            f"for {ndim} dimensions)"
        )
    shape = tuple(int(s) for s in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    dtype = _IDX_DTYPES[type_code]
    expected = math.prod(shape) * dtype.itemsize  # Python ints: no overflow
    actual = len(raw) - header_len
    if actual != expected:
        raise ValueError(
            f"{name!r}: IDX size mismatch: header declares shape {shape} of {dtype} "
            f"({expected} payload bytes) but the file holds {actual} payload bytes"
        )
    data = np.frombuffer(raw, dtype=dtype, offset=header_len).reshape(shape)
    return data.astype(dtype.newbyteorder("="), copy=True)


def _idx_labels_path(path: Path) -> Path | None:
    """The labels file beside an images file (``images-idx3`` → ``labels-idx1``)."""
    if "images-idx3" not in path.name:
        return None
    stem = path.name.replace("images-idx3", "labels-idx1")
    alternative = stem[:-3] if stem.endswith(".gz") else stem + ".gz"
    for candidate in (path.with_name(stem), path.with_name(alternative)):
        if candidate.is_file():
            return candidate
    return None


def _read_idx_checked(path: Path, source: str) -> np.ndarray:
    try:
        return read_idx(path)
    except ValueError as exc:
        reason = str(exc)
        prefix = f"{str(path)!r}: "
        raise DataFormatError(source, reason.removeprefix(prefix)) from None


def _read_idx_data(name: str, *, labels: bool | None, n_features: int | None) -> LabeledData:
    """IDX images → pixels scaled to [0, 1]; labels from the sibling labels file."""
    path = Path(name)
    if not path.is_file():
        raise _open_error(name, FileNotFoundError() if not path.exists() else IsADirectoryError())
    images = _read_idx_checked(path, name)
    if images.dtype != np.uint8 or images.ndim < 2:
        raise DataFormatError(
            name,
            f"expected uint8 images of shape (n, rows, cols), found {images.dtype} of shape "
            f"{images.shape}",
        )
    n = images.shape[0]
    _check_rows(n, [], name)
    X = images.reshape(n, -1).astype(np.float64)
    X /= 255.0
    if n_features is not None and X.shape[1] != n_features:
        raise DataFormatError(
            name, f"images have {X.shape[1]} pixels, but {n_features} features are expected"
        )
    y = None
    if labels is not False:
        labels_path = _idx_labels_path(path)
        if labels_path is None:
            if labels:
                expected = path.name.replace("images-idx3", "labels-idx1")
                where = (
                    f"{path.with_name(expected)} does not exist"
                    if expected != path.name
                    else 'the file name does not contain "images-idx3"'
                )
                raise DataFormatError(name, f"labels are required but {where}")
        else:
            y = _read_idx_checked(labels_path, str(labels_path))
            if y.ndim != 1 or y.shape[0] != n:
                raise DataFormatError(
                    name, f"holds {n} images but {labels_path} holds labels of shape {y.shape}"
                )
            y = y.astype(np.int64)
    return LabeledData(X=X, texts=None, y=y, format="idx", source=name)
