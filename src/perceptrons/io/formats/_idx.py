"""The ``idx`` format (MNIST's binary arrays): :func:`read_idx`, and images with their
labels as data.
"""

from __future__ import annotations

import gzip
import io
import math
import os
import stat
import zlib
from pathlib import Path

import numpy as np

from perceptrons._memory import MemoryBudgetError, array_bytes, check_allocation
from perceptrons.io.formats._common import (
    _READ_BLOCK,
    DataFormatError,
    LabeledData,
    _check_rows,
    _open_error,
    open_binary,
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


def _read_exactly(stream: io.BufferedIOBase, n_bytes: int, name: str) -> bytearray:
    """Up to ``n_bytes`` of ``stream`` (fewer at its end), read a block at a time into
    one buffer of that size: the caller checked the size against the memory limit."""
    out = bytearray(n_bytes)
    view = memoryview(out)
    filled = 0
    while filled < n_bytes:
        try:
            n_read = stream.readinto(view[filled : filled + _READ_BLOCK])
        except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
            raise ValueError(f"{name!r}: corrupt gzip stream ({exc})") from None
        if not n_read:
            break
        filled += n_read
    del view
    del out[filled:]
    return out


def read_idx(path: str | os.PathLike[str]) -> np.ndarray:
    """Read an IDX file (the MNIST format), plain or gzip-compressed.

    The header is validated: two zero bytes, a known type code, the number of
    dimensions, then one big-endian 32-bit size per dimension; the payload must
    hold exactly ``prod(sizes) * itemsize`` bytes. The payload's size is checked
    against the memory limit (:func:`perceptrons._memory.check_allocation`) before it
    is read, and a gzip file is decompressed a block at a time, only as far as the
    header says (and one byte more, to refuse trailing data).

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
    MemoryBudgetError
        If the payload the header declares would exceed the memory limit.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{str(path)!r}: no such file")
    name = str(path)
    stream, counter = open_binary(name)
    with stream, counter:
        size = None  # the size on disk of a regular uncompressed file, else unknown
        if stream is counter:
            status = os.fstat(stream.fileno())
            size = status.st_size if stat.S_ISREG(status.st_mode) else None
        return _read_idx_stream(stream, name, size)


def _read_idx_stream(stream: io.BufferedIOBase, name: str, size: int | None) -> np.ndarray:
    head = bytes(_read_exactly(stream, 4, name))
    if len(head) < 4:
        raise ValueError(f"{name!r}: too short for an IDX header ({len(head)} bytes)")
    if head[0] != 0 or head[1] != 0:
        raise ValueError(
            f"{name!r}: bad IDX magic number 0x{head.hex()} (must start with two zero bytes)"
        )
    type_code, ndim = head[2], head[3]
    if type_code not in _IDX_DTYPES:
        raise ValueError(f"{name!r}: unknown IDX data type code 0x{type_code:02x}")
    if ndim == 0:
        raise ValueError(f"{name!r}: IDX header declares 0 dimensions")
    if ndim > _IDX_MAX_DIMS:
        raise ValueError(
            f"{name!r}: IDX header declares {ndim} dimensions (at most {_IDX_MAX_DIMS} are read)"
        )
    header_len = 4 + 4 * ndim
    sizes = bytes(_read_exactly(stream, 4 * ndim, name))
    if len(sizes) < 4 * ndim:
        raise ValueError(
            f"{name!r}: truncated IDX header ({4 + len(sizes)} bytes, need {header_len} "
            f"for {ndim} dimensions)"
        )
    shape = tuple(int(s) for s in np.frombuffer(sizes, dtype=">u4"))
    dtype = _IDX_DTYPES[type_code]
    expected = math.prod(shape) * dtype.itemsize  # Python ints: no overflow

    def mismatch(actual: str) -> ValueError:
        return ValueError(
            f"{name!r}: IDX size mismatch: header declares shape {shape} of {dtype} "
            f"({expected} payload bytes) but the file holds {actual} payload bytes"
        )

    if size is not None:  # the size on disk says it before anything is read
        actual = size - header_len
        if actual != expected:
            raise mismatch(str(actual))
    # The payload, then its copy in native byte order.
    check_allocation(
        2 * expected, f"{name}: the IDX payload of shape {shape} of {dtype} (and its copy)"
    )
    payload = _read_exactly(stream, expected, name)
    if len(payload) < expected:
        raise mismatch(str(len(payload)))
    if _read_exactly(stream, 1, name):  # one byte more says there is more, unread
        raise mismatch(f"more than {expected}")
    data = np.frombuffer(payload, dtype=dtype).reshape(shape)
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
    except MemoryBudgetError:
        raise  # already one line naming the file, and a MemoryError for those who catch it
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
    pixels = math.prod(images.shape[1:])
    check_allocation(array_bytes(n, pixels), f"{name}: {n:,} images of {pixels:,} pixels as floats")
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
