"""Kernel matrices through the array API: NumPy with BLAS by default, PyTorch or CuPy on
a device.

A kernel perceptron spends its time on kernel values: every example is scored against
every support vector. :class:`KernelMatrix` computes a block of them, ``K(A, B)`` for
the rows of ``A`` against the rows of ``B``, as one matrix product followed by a few
element-wise operations, in the array namespace of a :class:`Backend`
(``array-api-compat`` gives NumPy, PyTorch and CuPy one interface; ``array-api-strict``
checks in the tests that nothing else is used). The compiled, sequential parts of
training and prediction only ever see small blocks of kernel values, brought back to
the host as NumPy arrays.

Every backend computes a kernel by the same operations in the same order (the matrix
product, then ``gamma *``, ``+ coef0`` and the power by repeated squaring), so where
the arithmetic is exact (small integer features) every backend and every block size
gives bit-identical kernel values, hence identical models; elsewhere they differ by the
rounding of the matrix product, which BLAS and cuBLAS sum in their own orders.

SciPy sparse input stays on NumPy (the array API has no sparse arrays): its products
go through SciPy, the element-wise part is the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "DEVICE_RULE_TEXT",
    "NUMPY",
    "Backend",
    "KernelMatrix",
    "device_accepted",
    "input_backend",
    "overflow_error",
    "resolve_backend",
    "rows_per_block",
    "to_host",
]


@dataclass(frozen=True)
class Backend:
    """An array namespace (``array_api_compat``'s wrapper of it) and a device in it."""

    xp: Any
    device: Any
    name: str

    @property
    def is_numpy(self) -> bool:
        return self.name == "numpy"

    def asarray(self, array: Any, dtype: str = "float64") -> Any:
        """``array`` (NumPy, or already this backend's) as this backend's array on its
        device, of the namespace's ``dtype`` (by name: float64, int64)."""
        if self.is_numpy:
            return np.asarray(array, dtype=dtype)
        return self.xp.asarray(array, dtype=getattr(self.xp, dtype), device=self.device)

    def to_numpy(self, array: Any) -> np.ndarray:
        """A C-contiguous NumPy copy (or view, on NumPy) of this backend's ``array``."""
        if self.is_numpy:
            return np.ascontiguousarray(array)
        return np.ascontiguousarray(to_host(array))

    def all_finite(self, array: Any) -> bool:
        """Whether every value of this backend's ``array`` is finite (checked where the
        array is: one boolean travels)."""
        if self.is_numpy:
            return bool(np.isfinite(array).all())
        return bool(self.xp.all(self.xp.isfinite(array)))

    def zeros(self, shape: tuple[int, ...]) -> Any:
        if self.is_numpy:
            return np.zeros(shape)
        return self.xp.zeros(shape, dtype=self.xp.float64, device=self.device)

    def take_rows(self, array: Any, rows: Any) -> Any:
        """``array[rows]`` (rows: this backend's int64 array, or NumPy's on NumPy)."""
        if self.is_numpy:
            return array[rows]
        return self.xp.take(array, rows, axis=0)


#: The default backend: NumPy on the host, products by BLAS (or SciPy for sparse input).
NUMPY = Backend(np, "cpu", "numpy")


def resolve_backend(device: Any, X: Any = None) -> Backend:
    """The backend a ``device=`` parameter and an input ``X`` ask for.

    ``device`` None: the namespace and device of ``X`` when it is an array-API array
    other than NumPy's (a PyTorch tensor, a CuPy array...), else NumPy. A string or a
    ``torch.device``: PyTorch on that device (``"cuda"``, ``"cuda:1"``, ``"cpu"``,
    ``"mps"``). A ``cupy.cuda.Device``: CuPy on it.
    """
    import array_api_compat as compat

    if device is None:
        if X is None or sp.issparse(X) or not compat.is_array_api_obj(X):
            return NUMPY
        if compat.is_numpy_array(X):
            return NUMPY
        xp = compat.array_namespace(X)
        found = compat.device(X)
        return Backend(xp, found, f"{xp.__name__.rsplit('.', 1)[-1]}:{found}")
    kind = type(device).__module__.split(".")[0]
    if isinstance(device, str) or kind == "torch":
        return _torch_backend(device)
    if kind == "cupy":
        import array_api_compat.cupy as xp

        return Backend(xp, device, f"cupy:{device.id}")
    raise ValueError(
        f"device must be None, a PyTorch device (a string such as 'cuda' or a "
        f"torch.device) or a cupy.cuda.Device, got {device!r}."
    )


#: What a ``device=`` parameter may be (the parameter rules' description).
DEVICE_RULE_TEXT = (
    "None, a PyTorch device (a string such as 'cuda', or a torch.device) or a cupy.cuda.Device"
)


def device_accepted(value: Any) -> bool:
    """Whether ``value`` has a ``device=`` parameter's type (its library is looked for
    when the device is used: :func:`resolve_backend`)."""
    return (
        value is None
        or isinstance(value, str)
        or type(value).__module__.split(".")[0] in ("torch", "cupy")
    )


def input_backend(owner: str, device: Any, X: Any, kernel: Any) -> tuple[Backend, Any]:
    """The backend of an estimator's kernel products and its input ``X`` on the host.

    ``device`` (else ``X``'s namespace) picks the backend, as :func:`resolve_backend`;
    ``X`` comes back as NumPy (or SciPy), where it is validated and the model is kept.
    A backend other than NumPy needs a built-in ``kernel`` (a callable or precomputed
    one is evaluated on the host) and dense input (the array API has no sparse arrays):
    both are refused first, with or without the device's library. ``owner`` names the
    estimator in the errors.
    """
    if device is None:
        backend = resolve_backend(None, X)
        if backend.is_numpy:
            return backend, X
    if kernel == "precomputed" or callable(kernel):
        name = "callable" if callable(kernel) else kernel
        raise ValueError(
            f"{owner}: device={device!r} computes the built-in kernels; kernel={name!r} "
            "is evaluated on the host (device=None, NumPy input)."
        )
    if sp.issparse(X):
        raise ValueError(
            f"{owner}: device={device!r} computes kernel products on dense arrays (the "
            "array API has no sparse ones); train on sparse input with device=None, or "
            "densify it."
        )
    return resolve_backend(device, X), to_host(X)


#: Kernel blocks at prediction time hold about this many values (128 MB of float64).
PREDICT_BLOCK_VALUES = 2**24


def rows_per_block(n_support: int) -> int:
    """Rows whose kernel values against ``n_support`` support vectors fill a block."""
    return max(1, PREDICT_BLOCK_VALUES // max(1, n_support))


def overflow_error(owner: str, epoch: int) -> ValueError:
    """The error of a training epoch whose kernel values overflowed (inf or NaN): every
    score would be meaningless, so the call stops (and the estimator is put back as it
    was before it)."""
    return ValueError(
        f"{owner}: kernel values became non-finite (inf/NaN) in epoch {epoch}: the "
        "features are too large for the kernel; scale the features (e.g. "
        "StandardScaler/MaxAbsScaler). The estimator is left as it was before this call "
        "(no silently wrong model)."
    )


def _torch_backend(device: Any) -> Backend:
    try:
        import array_api_compat.torch as xp
        import torch
    except ImportError as error:  # PyTorch is optional: only a device needs it
        raise ValueError(
            f"device={device!r} computes the kernel products with PyTorch, which is not "
            "installed (pip install torch); device=None uses NumPy."
        ) from error
    try:
        found = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(f"device={device!r} is not a PyTorch device: {error}") from error
    if found.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r}: PyTorch finds no CUDA device on this machine.")
    if found.type == "cuda" and found.index is None:
        found = torch.device("cuda", torch.cuda.current_device())
    if found.type == "cuda" and found.index >= torch.cuda.device_count():
        raise ValueError(
            f"device={device!r}: PyTorch finds {torch.cuda.device_count()} CUDA device(s) "
            "on this machine."
        )
    return Backend(xp, found, f"torch:{found}")


def to_host(X: Any) -> Any:
    """``X`` as NumPy if it is another library's array-API array, else ``X`` itself
    (NumPy arrays, SciPy matrices, lists: what scikit-learn's validation takes)."""
    import array_api_compat as compat

    if sp.issparse(X) or not compat.is_array_api_obj(X) or compat.is_numpy_array(X):
        return X
    if compat.is_torch_array(X):
        return X.detach().cpu().numpy()
    if compat.is_cupy_array(X):
        return X.get()
    return np.from_dlpack(X)  # array-api-strict and any other CPU library


class KernelMatrix:
    """Blocks ``K(A, B)`` of a built-in kernel, computed on ``backend``.

    ``kernel`` is "linear", "poly" (``(gamma <a, b> + coef0) ** degree``) or "rbf"
    (``exp(-gamma ||a - b||²)``). ``A`` and ``B`` are the backend's 2-D float64 arrays,
    or SciPy sparse matrices on NumPy.
    """

    def __init__(
        self, kernel: str, degree: int, gamma: float, coef0: float, backend: Backend = NUMPY
    ) -> None:
        if kernel not in ("linear", "poly", "rbf"):
            raise ValueError(f"KernelMatrix: unknown kernel {kernel!r}.")
        self.kernel, self.degree, self.gamma, self.coef0 = kernel, degree, gamma, coef0
        self.backend = backend

    def block(self, A: Any, B: Any) -> Any:
        """The kernel matrix between the rows of ``A`` and of ``B``, shape
        ``(A.shape[0], B.shape[0])``, on the backend (values that overflow are inf or
        NaN: the callers check what they read)."""
        products = self._products(A, B)
        if self.kernel == "linear":
            return products
        if self.kernel == "poly":
            products *= self.gamma
            products += self.coef0
            return _power(products, self.degree)
        # rbf: ||a||² + ||b||² - 2<a, b>, clipped at 0 against cancellation.
        products *= -2.0
        products += self._squared_norms(A)[:, None]
        products += self._squared_norms(B)[None, :]
        if self.backend.is_numpy:
            np.maximum(products, 0.0, out=products)
            products *= -self.gamma
            return np.exp(products, out=products)
        distances = self.backend.xp.clip(products, min=0.0)
        distances *= -self.gamma
        return self.backend.xp.exp(distances)

    def _products(self, A: Any, B: Any) -> Any:
        if self.backend.is_numpy:
            if sp.issparse(A) and sp.issparse(B):
                # The compiled product of two sparse matrices writes the dense result
                # directly (scipy's builds a sparse one first: several times slower).
                from perceptrons._linear import sparse_scores

                dtype = np.result_type(A.dtype, B.dtype)
                return sparse_scores(sp.csr_matrix(A), B).astype(dtype, copy=False)
            return np.asarray(A @ B.T)
        return self.backend.xp.matmul(A, self.backend.xp.matrix_transpose(B))

    def _squared_norms(self, A: Any) -> Any:
        if sp.issparse(A):
            return np.asarray(A.multiply(A).sum(axis=1)).ravel()
        if self.backend.is_numpy:
            return np.einsum("ij,ij->i", A, A)
        return self.backend.xp.sum(A * A, axis=1)


def _power(values: Any, degree: int) -> Any:
    """``values ** degree`` for an int ``degree >= 1`` by repeated squaring, in place
    where it can: the same multiplications in the same order on every backend (a
    library's ``pow`` rounds its own way), and faster than ``pow``."""
    result = None
    while True:
        if degree & 1:
            if result is None:
                result = values if degree == 1 else values * 1.0
            else:
                result *= values
        degree >>= 1
        if not degree:
            return result
        values *= values
