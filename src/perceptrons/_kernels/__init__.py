"""Numba-compiled kernels: small pure functions over arrays, no Python objects inside.

``_rows`` holds the per-example pieces (score, squared norm, updates with their
averaging) for dense and CSR input; ``perceptron``, ``logistic``, ``romma`` and
``strategies`` build their epochs from them. Every cached kernel is made by
:func:`perceptrons._kernels._cache.cached_njit`, whose on-disk cache also notices an edit
to the package modules the kernel's module imports (Numba's own checks only the kernel's
file).
"""
