"""Numba-compiled kernels: small pure functions over arrays, no Python objects inside.

``_rows`` holds the per-example pieces (score, squared norm, updates with their
averaging) for dense and CSR input; ``perceptron``, ``logistic`` and ``voted`` build
their epochs from them.
"""
