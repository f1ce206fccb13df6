"""The check of an exported graph (:func:`perceptrons.io.onnx.to_onnx`'s ``check``,
``perceptrons export`` by default): onnx's checker, an onnxruntime session, and its
labels equal to the model's ``predict`` on probe rows drawn from the model alone (the
training rows are not known at export), ties included.

onnx and onnxruntime are imported where they are used: this module imports without them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from perceptrons.io._onnx_graph import plain

__all__ = ["MISSING_ONNXRUNTIME", "check_graph", "probe_rows"]

MISSING_ONNXRUNTIME = (
    "checking the ONNX graph needs onnxruntime: pip install 'perceptrons[onnx]', or skip "
    "the check (to_onnx(..., check=False), perceptrons export --no-check)"
)

#: Probe rows of each kind :func:`probe_rows` draws.
_PROBES = 48


def probe_rows(model: Any) -> list[np.ndarray]:
    """The rows the check runs a fitted ``model`` (or pipeline) on, drawn from it alone.

    The training rows are not known at export, so the rows are drawn from what the
    model holds, the same ones on every call (a seeded generator): a row of zeros
    (every linear score its intercept: ties where intercepts are equal), rows of small
    integers (exact sums: ties where weights cancel), normal rows, and rows in the
    model's domain: non-negative counts for multinomial naive Bayes, 0/1 rows or rows
    about the threshold for Bernoulli naive Bayes; for kernel models the support
    vectors themselves, rows near them and rows far from them (kernel values of 0:
    ties), or, for a precomputed kernel, kernel values in [0, 1].

    Parameters
    ----------
    model : estimator or Pipeline
        A fitted model that :func:`to_onnx` exports.

    Returns
    -------
    list of ndarray of shape (n_rows, n_features)
        Groups of float64 rows; the check skips a group the model's own ``predict``
        refuses (scores beyond float64).
    """
    last = model.steps[-1][1] if hasattr(model, "steps") else model
    width = int(model.n_features_in_ if hasattr(model, "n_features_in_") else last.n_features_in_)
    rng = np.random.default_rng(0)
    normal = rng.normal(size=(_PROBES, width))
    integers = rng.integers(-2, 3, size=(_PROBES, width)).astype(np.float64)
    groups: list[np.ndarray] = [np.zeros((1, width)), integers, normal]
    name = type(last).__name__ if last is model else None
    kernel = getattr(last, "kernel", None) if hasattr(last, "support_vectors_") else None
    if name == "MultinomialNaiveBayes":
        groups = [groups[0], np.abs(integers), rng.poisson(1.0, size=(_PROBES, width)) * 1.0]
    elif name == "BernoulliNaiveBayes":
        threshold = last.binarize
        ones = (rng.random(size=(_PROBES, width)) < 0.5).astype(np.float64)
        groups = [groups[0], ones] + ([] if threshold is None else [normal + threshold])
    elif kernel == "precomputed":
        groups.append(rng.random(size=(_PROBES, width)))
    elif kernel is not None:
        support = np.asarray(
            last.support_vectors_.toarray()
            if sp.issparse(last.support_vectors_)
            else last.support_vectors_,
            dtype=np.float64,
        )[:_PROBES]
        if support.shape[0]:
            scale = max(1.0, float(np.max(np.abs(support))))
            groups += [support, support + 0.1 * scale * normal[: support.shape[0]]]
            groups.append(support[rng.integers(0, support.shape[0], _PROBES)] + 1e3 * scale)
    return groups


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


def check_graph(graph: Any, model: Any) -> None:
    """The graph passes onnx's checker, loads in onnxruntime, and its labels are
    ``model.predict``'s on :func:`probe_rows` (see :func:`to_onnx`'s ``check``)."""
    import onnx

    try:
        onnx.checker.check_model(graph, full_check=True)
    except Exception as error:  # the checker's errors have no common class
        reason = _first_line(error)
        raise ValueError(f"to_onnx: the graph fails onnx's checker: {reason}") from error
    try:
        import onnxruntime
    except ImportError as error:
        raise ImportError(MISSING_ONNXRUNTIME) from error
    try:
        session = onnxruntime.InferenceSession(
            graph.SerializeToString(), providers=["CPUExecutionProvider"]
        )
    except Exception as error:  # onnxruntime's errors are its own
        raise ValueError(
            f"to_onnx: onnxruntime {onnxruntime.__version__} cannot load the graph: "
            f"{_first_line(error)}"
        ) from error
    element = graph.graph.input[0].type.tensor_type.elem_type
    float_type = np.float32 if element == onnx.TensorProto.FLOAT else np.float64
    compared, wrong, example = 0, 0, ""
    for rows in probe_rows(model):
        try:
            expected = np.asarray(model.predict(rows))
            scores = np.asarray(model.decision_function(rows))
        except ValueError:  # the model refuses these rows itself: nothing to compare
            continue
        try:
            labels = np.concatenate(
                [
                    session.run(["label"], {"X": rows[start : start + 16].astype(float_type)})[0]
                    for start in range(0, rows.shape[0], 16)
                ]
            )
        except Exception as error:  # onnxruntime's errors are its own
            raise ValueError(
                f"to_onnx: onnxruntime fails to run the graph: {_first_line(error)}"
            ) from error
        if expected.dtype.kind == "u":  # (int64 in the graph: compared as integers)
            labels = labels.astype(expected.dtype)
        kept = np.ones(rows.shape[0], dtype=bool)
        if float_type is np.float32:
            kept = _beyond_float32_rounding(scores)
        differ = np.flatnonzero(kept & (labels != expected))
        compared += int(kept.sum())
        if differ.size and not wrong:
            row = differ[0]
            example = f" (predict gives {plain(expected[row])!r}, the graph {plain(labels[row])!r})"
        wrong += differ.size
    if wrong:
        raise ValueError(
            f"to_onnx: the graph's labels differ from predict on {wrong} of {compared} "
            f"probe rows{example}; please report it (check=False / --no-check writes it)."
        )


def _beyond_float32_rounding(scores: np.ndarray) -> np.ndarray:
    """The rows whose label a float32 graph must get: tied (ties are exact in float32
    too) or ahead by more than float32 rounding of the scores."""
    if scores.ndim == 1:
        margin = np.abs(scores)
    else:
        ordered = np.sort(scores, axis=1)
        margin = ordered[:, -1] - ordered[:, -2]
    scale = max(1e-300, float(np.max(np.abs(scores)))) if scores.size else 1.0
    return (margin == 0) | (margin > 1e-3 * scale)
