"""Fitted models as ONNX graphs, for serving where this library is not installed.

ONNX (the Open Neural Network Exchange format) is how linear models are commonly served:
``onnxruntime`` in C++, C#, Java or JavaScript, inference servers, browsers.
:func:`to_onnx` writes the graph of one of this library's fitted models with onnx's own
helpers, importing neither scikit-learn nor skl2onnx (``perceptrons export MODEL -o
model.onnx`` on the command line). It needs the ``onnx`` extra: ``pip install
"perceptrons[onnx]"`` (without it the module imports, and :func:`to_onnx` says what to
install).

Only a scikit-learn ``Pipeline`` ending with one of our models, its other steps
scikit-learn's, needs `skl2onnx <https://onnx.ai/sklearn-onnx/>`_, scikit-learn's ONNX
converter, which converts those steps: :func:`to_onnx` of such a pipeline registers this
library's converters with it and hands it the pipeline. Whoever calls skl2onnx's own
``to_onnx(model, X[:1])`` or ``convert_sklearn`` on our models calls
:func:`register_converters` first. Both ways write the same nodes for our models.

Every graph has the outputs

``label``
    The predicted class, shape ``(N,)``, of the type of ``classes_`` (integers as int64,
    floats as double, booleans as bool, strings as string).
``scores``
    ``decision_function``, shape ``(N,)`` for two classes, else ``(N, n_classes)``.
``probabilities``
    ``predict_proba``, shape ``(N, n_classes)``, for the models that have it
    (logistic regression, naive Bayes).

The input is dense, float64 (ONNX's ``double``) or float32: a sparse matrix is passed
as ``X.toarray()``. In float64 the scores equal the library's to rounding (the same sums
in another order: within 1e-9 relative on ordinary data) and the labels with them; in
float32 the weights are rounded to float32 too, and so are the scores.

What can be exported: the linear models (``Perceptron`` and ``AveragedPerceptron`` with
every update rule, ``LogisticRegressionSGD``, ``LogisticRegressionBatch``, both naive
Bayes), and the kernel models whose prediction is one kernel expansion: a
``BudgetPerceptron``, and a ``VotedPerceptron`` predicting by ``"average"`` or
``"last"`` (each a single weighted sum of kernel values against the support vectors,
written as ONNX matrix products; linear, polynomial, RBF and precomputed kernels),
estimators or their learner cores (what ``perceptrons.io.persist.load(..., core=True)``
reads). What cannot, refused with the reason: the voted perceptron's vote and random
pick (every intermediate model's sign, or a random draw per row), a Python kernel
function, the hashed text featurization (``TextFeaturizer``: its tokenizer and hash are
not ONNX operators) and the tagger's Viterbi decoding.

Examples
--------
>>> import numpy as np
>>> import onnxruntime as ort
>>> from sklearn.datasets import load_iris
>>> from perceptrons import AveragedPerceptron
>>> from perceptrons.io.onnx import to_onnx
>>> X, y = load_iris(return_X_y=True)
>>> model = AveragedPerceptron(random_state=0).fit(X, y)
>>> session = ort.InferenceSession(to_onnx(model).SerializeToString())
>>> labels, scores = session.run(None, {"X": X})
>>> bool(np.array_equal(labels, model.predict(X)))
True
>>> bool(np.allclose(scores, model.decision_function(X), rtol=1e-12, atol=1e-12))
True
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import scipy.sparse as sp

from perceptrons._input import check_is_fitted
from perceptrons._memory import check_allocation
from perceptrons._registry import MODELS
from perceptrons.io._onnx_graph import (
    Expansion,
    Nodes,
    Outputs,
    label_element_type,
    model_proto,
    write_outputs,
)

__all__ = ["EXPORT_REFUSALS", "register_converters", "to_onnx"]

#: The estimators whose graphs this module writes, by class name (the registry's).
EXPORTABLE = tuple(kind.name for kind in MODELS if kind.exports)
#: The form of each one's graph, from the registry (see ``ModelKind.exports``).
_FORMS = {kind.name: kind.exports for kind in MODELS if kind.exports}

#: What cannot be written as ONNX operators, and what to do instead, by class name.
EXPORT_REFUSALS = {
    "TextFeaturizer": (
        "its tokenizer and feature hashing have no ONNX operators; export the classifier "
        "alone (the pipeline's last step, or `perceptrons export --classifier-only`) and "
        "featurize the text with perceptrons before calling the ONNX model"
    ),
    "SequenceFeaturizer": (
        "its feature templates are Python string operations with no ONNX operators; "
        "tag with perceptrons (`perceptrons tag`, SequenceTagger.predict)"
    ),
    "SequenceTagger": (
        "its Viterbi decoding over the tag transitions and its string feature templates "
        "have no ONNX form; tag with perceptrons (`perceptrons tag`, "
        "SequenceTagger.predict)"
    ),
}

#: The opset a graph is written at unless asked for another (skl2onnx 1.20 wrote our
#: graphs at it), or the installed onnx's latest where that is older.
DEFAULT_OPSET = 21
#: The oldest opset our graphs are written at (ONNX 1.4's): ``Max`` broadcasts from
#: opset 8 on, whose IR version would want every constant listed among the inputs too.
MIN_OPSET = 9

# Whether register_converters has run (once is enough: skl2onnx keeps them).
_registered = False

# The most the dense weights may take: ONNX's single-file limit (protobuf's 2 GiB), less
# a margin for the rest of the graph.
_MAX_MODEL_BYTES = 2**31 - 2**20

# The dense weights' copies alive at once while a graph is made and written (measured:
# the dense array, its float64 column form, the initializer, the serialized graph and
# protobuf's own copy of it).
_EXPORT_COPIES = 5

_MISSING_ONNX = "exporting to ONNX needs onnx: pip install 'perceptrons[onnx]'"
_MISSING_SKL2ONNX = (
    "exporting to ONNX needs skl2onnx and onnx: pip install 'perceptrons[onnx]'"
    " (skl2onnx converts a scikit-learn Pipeline's other steps)"
)


def _our_name(model: Any) -> str | None:
    """The public name of ``model``'s class if it is this library's, estimator or
    learner core (scikit-learn has a ``Perceptron`` too), else None: told by the
    registry's modules, so that nothing is imported."""
    cls = type(model)
    for kind in MODELS:
        if kind.name == cls.__name__ and cls.__module__ in (kind.module, kind.core):
            return kind.name
    return None


def _refusal(model: Any) -> str | None:
    """Why ``model`` (an estimator, fitted or not) cannot be exported, if it cannot."""
    name = _our_name(model)
    if name in EXPORT_REFUSALS:
        return f"{name} cannot be exported to ONNX: {EXPORT_REFUSALS[name]}."
    if _FORMS.get(name or "") == "voted":
        if callable(model.kernel):
            return (
                "VotedPerceptron with a Python kernel function cannot be exported to ONNX: "
                "a function is not an ONNX operator; use kernel='linear', 'poly', 'rbf' or "
                "'precomputed'."
            )
        if model.prediction not in ("average", "last"):
            return (
                f"VotedPerceptron with prediction={model.prediction!r} cannot be exported "
                "to ONNX: "
                + (
                    "the vote needs the sign of every intermediate model's score, and a "
                    "sign at a score of zero flips with the order of the additions, so no "
                    "graph can promise the library's labels"
                    if model.prediction == "vote"
                    else "it draws a random model per row"
                )
                + "; set_params(prediction='average') (or 'last') exports one kernel "
                "expansion, the same model without refitting."
            )
    return None


def _classes_and_columns(model: Any) -> tuple[np.ndarray, int]:
    classes = np.asarray(model.classes_)
    return classes, 1 if classes.shape[0] == 2 else classes.shape[0]


def _expansion(model: Any) -> Expansion:
    """The weights, offsets and features of a fitted exportable ``model``."""
    reason = _refusal(model)
    if reason is not None:
        raise ValueError(reason)
    name = _our_name(model)
    if name not in EXPORTABLE:
        raise ValueError(
            f"{type(model).__name__} is not a perceptrons estimator; only "
            + ", ".join(EXPORTABLE)
            + " have converters here (scikit-learn's own have skl2onnx's)."
        )
    check_is_fitted(model, "classes_")
    classes, n_columns = _classes_and_columns(model)
    form = _FORMS[name]
    if form == "voted":
        return _voted_expansion(model, classes, n_columns)
    if form == "budget":
        _check_size(model, model.support_vectors_.shape[0] * (model.n_features_in_ + n_columns))
        return Expansion(
            weights=np.asarray(model.dual_coef_, dtype=np.float64).reshape(-1, n_columns),
            offset=np.zeros(n_columns),
            classes=classes,
            **_kernel_parameters(model, model._state.gamma, model.support_vectors_),
        )
    _check_size(model, model.n_features_in_ * n_columns)
    coef = model.coef_.toarray() if sp.issparse(model.coef_) else np.asarray(model.coef_)
    binarize = None
    if form == "binarized":
        # binarize=None takes features already 0 or 1: thresholding at 0.5 keeps them.
        binarize = 0.5 if model.binarize is None else float(model.binarize)
    return Expansion(
        weights=np.asarray(coef, dtype=np.float64).T.reshape(-1, n_columns),
        offset=np.asarray(model.intercept_, dtype=np.float64).reshape(n_columns),
        classes=classes,
        binarize=binarize,
    )


def _check_size(model: Any, n_values: int) -> None:
    """Refuse, before the dense weights are formed, a graph beyond ONNX's single-file
    limit (protobuf's 2 GiB) or one whose making would not fit in memory: the dense
    weights (a sparsified model's too), the graph's initializer and its serialized
    bytes, as many as :data:`_EXPORT_COPIES` copies of the weights at once."""
    size = 8 * n_values
    name = type(model).__name__
    if size > _MAX_MODEL_BYTES:
        raise ValueError(
            f"{name}: its weights as dense arrays take {size / 2**30:.1f} GiB, "
            "beyond ONNX's 2 GiB single-file limit; train on fewer features (or, for a "
            "kernel model, a smaller support set) to export it."
        )
    check_allocation(
        _EXPORT_COPIES * size,
        f"{name}'s ONNX graph ({n_values:,} dense float64 weights, held "
        f"{_EXPORT_COPIES} times while the graph is made and serialized)",
        "train on fewer features to export it",
    )


def _kernel_parameters(model: Any, gamma: float, support: Any) -> dict[str, Any]:
    kernel = model.kernel
    if kernel == "precomputed":
        return {"kernel": kernel}
    dense = support.toarray() if sp.issparse(support) else np.asarray(support)
    return {
        "kernel": kernel,
        "support": np.asarray(dense, dtype=np.float64),
        "gamma": float(gamma),
        "coef0": float(model.coef0),
        "degree": int(model.degree),
    }


def _voted_expansion(model: Any, classes: np.ndarray, n_columns: int) -> Expansion:
    """The voted perceptron's ``"average"`` or ``"last"`` model as one kernel expansion.

    After its ``n`` updates ``c_1..c_n`` (each adds ``c_i (K(x, x_i) + b²)`` to a class
    score), the last model is their sum; model ``k`` (after ``k`` updates) has
    ``votes[k]`` votes and the last one ``last``, so the vote-weighted average gives
    update ``i`` the weight of the models it is in: ``(votes[i+1] + ... + votes[n-1] +
    last) / total``. The expansion's coefficient of support vector ``j`` sums those of
    its updates; ``b² Σ`` of each column's coefficients is the offset.
    """
    from perceptrons._kernels.voted import stage_totals

    sequences = model._sequences([model._n_seen])
    support = model._support.matrix()
    n_support = model.n_features_in_ if model.kernel == "precomputed" else support.shape[0]
    width = 0 if model.kernel == "precomputed" else model.n_features_in_
    _check_size(model, n_support * (width + n_columns))
    weights = np.zeros((n_support, n_columns))
    average = model.prediction == "average"

    def update_weights(votes: np.ndarray, n: int, last: float) -> np.ndarray:
        if not average:
            return np.ones(n)
        _, totals = stage_totals(votes, np.array([n]), np.array([last]))
        if totals[0] <= 0:
            return np.zeros(n)
        # The votes of the models after update i: votes[i + 1] + ... + votes[n - 1].
        after = np.zeros(n)
        after[: n - 1] = np.cumsum(votes[1:n][::-1])[::-1]
        return (after + last) / totals[0]

    if model._native:
        ids, gold, predicted, steps, votes, counts, last = sequences[0]
        n = int(counts[0])
        share = update_weights(votes, n, float(last[0]))
        if steps.shape[0] == n and n:
            share = share * steps[:n]
        rows = support[ids[:n]] if model.kernel == "precomputed" else ids[:n]
        np.add.at(weights, (rows, gold[:n]), share)
        np.add.at(weights, (rows, predicted[:n]), -share)
    else:
        for column, (ids, signs, votes, counts, last) in enumerate(sequences):
            n = int(counts[0])
            share = update_weights(votes, n, float(last[0])) * signs[:n]
            rows = support[ids[:n]] if model.kernel == "precomputed" else ids[:n]
            np.add.at(weights[:, column], rows, share)
    bias_sq = 1.0 if model.fit_intercept else 0.0
    gamma = getattr(model, "_gamma", 1.0)
    return Expansion(
        weights=weights,
        offset=bias_sq * weights.sum(axis=0),
        classes=classes,
        **_kernel_parameters(model, gamma, support),
    )


# ------------------------------------------------------------------------ skl2onnx
def _has_probabilities(model: Any) -> bool:
    from perceptrons._linear import LogLinearProbabilities

    return isinstance(model, LogLinearProbabilities)


def _skl2onnx_type(element_type: int) -> Any:
    """skl2onnx's tensor type of an ONNX element type."""
    from onnx import TensorProto
    from skl2onnx.common import data_types as types

    by_element: dict[int, Any] = {
        TensorProto.BOOL: types.BooleanTensorType,
        TensorProto.INT64: types.Int64TensorType,
        TensorProto.DOUBLE: types.DoubleTensorType,
        TensorProto.STRING: types.StringTensorType,
    }
    return by_element[element_type]()


def _parser(scope: Any, model: Any, inputs: list[Any], custom_parsers: Any = None) -> list[Any]:
    """Declare the operator of one of our estimators and its outputs."""
    reason = _refusal(model)
    if reason is not None:
        raise ValueError(reason)
    operator = scope.declare_local_operator(_alias(model), model)
    operator.inputs = inputs
    label_type = _skl2onnx_type(label_element_type(np.asarray(model.classes_)))
    label = scope.declare_local_variable("label", label_type)
    scores = scope.declare_local_variable("scores", inputs[0].type.__class__())
    operator.outputs.extend([label, scores])
    if _has_probabilities(model):
        operator.outputs.append(
            scope.declare_local_variable("probabilities", inputs[0].type.__class__())
        )
    return operator.outputs


def _alias_of(name: str) -> str:
    """The name a class's converter is registered under."""
    return f"Perceptrons{name}"


def _alias(model: Any) -> str:
    return _alias_of(type(model).__name__)


def _refusing_parser(scope: Any, model: Any, inputs: Any, custom_parsers: Any = None) -> Any:
    raise ValueError(_refusal(model))


def _shapes(operator: Any) -> None:
    """The outputs' shapes: ``(N,)`` labels, scores as ``decision_function``'s."""
    n_rows = operator.inputs[0].get_first_dimension()
    classes, n_columns = _classes_and_columns(operator.raw_operator)
    operator.outputs[0].type.shape = [n_rows]
    operator.outputs[1].type.shape = [n_rows] if n_columns == 1 else [n_rows, n_columns]
    if len(operator.outputs) > 2:
        operator.outputs[2].type.shape = [n_rows, classes.shape[0]]


class _Container(Nodes):
    """Nodes added to a skl2onnx container, named by its scope."""

    def __init__(self, scope: Any, container: Any, dtype: type) -> None:
        super().__init__(dtype)
        self.scope, self.container = scope, container

    def name(self, base: str) -> str:
        return str(self.scope.get_unique_variable_name(base))

    def add_initializer(self, tensor: Any) -> None:
        self.container.initializers.append(tensor)

    def add_node(self, op: str, inputs: list[str], output: str, attrs: dict[str, Any]) -> None:
        self.container.add_node(
            op, inputs, [output], name=self.scope.get_unique_operator_name(op), **attrs
        )


def _converter(scope: Any, operator: Any, container: Any) -> None:
    """The graph of one estimator inside skl2onnx's: the nodes :func:`to_onnx` writes."""
    from skl2onnx.common.data_types import FloatTensorType

    dtype = np.float32 if isinstance(operator.inputs[0].type, FloatTensorType) else np.float64
    names = [output.full_name for output in operator.outputs]
    outputs = Outputs(names[0], names[1], names[2] if len(names) > 2 else None)
    form = _expansion(operator.raw_operator)
    write_outputs(_Container(scope, container, dtype), form, operator.inputs[0].full_name, outputs)


def register_converters() -> None:
    """Register this library's converters with skl2onnx (idempotent).

    After it, skl2onnx's ``to_onnx`` and ``convert_sklearn`` convert our estimators,
    alone or as the last step of a scikit-learn ``Pipeline``, and refuse with the reason
    the ones that cannot be exported. :func:`to_onnx` calls it when given a pipeline;
    call it before calling skl2onnx yourself.

    Raises
    ------
    ImportError
        Without skl2onnx (the ``onnx`` extra), saying what to install.
    """
    global _registered
    if _registered:
        return
    try:
        from skl2onnx import update_registered_converter
    except ImportError as error:
        raise ImportError(_MISSING_SKL2ONNX) from error
    import perceptrons

    for name in EXPORTABLE:
        update_registered_converter(
            getattr(perceptrons, name), _alias_of(name), _shapes, _converter, parser=_parser
        )
    for name in EXPORT_REFUSALS:
        update_registered_converter(
            getattr(perceptrons, name),
            _alias_of(name),
            _shapes,
            _converter,
            parser=_refusing_parser,
        )
    _registered = True


# -------------------------------------------------------------------------- to_onnx
def _input_of(model: Any, X: Any, dtype: type) -> tuple[int, type]:
    """The width and float type of the graph's input: ``X``'s, else the model's width
    and ``dtype``."""
    if X is not None:
        if sp.issparse(X):
            raise ValueError(
                "to_onnx: X is sparse; ONNX graphs take dense input: pass X[:1].toarray()."
            )
        sample = np.asarray(X)
        if sample.ndim != 2:
            raise ValueError(f"to_onnx: X must be 2-D (rows of features), not {sample.ndim}-D.")
        if sample.dtype not in (np.float32, np.float64):
            sample = sample.astype(np.float64)
        width = sample.shape[1]
        dtype = sample.dtype.type
    else:
        width = model.n_features_in_
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"to_onnx: dtype must be numpy.float32 or numpy.float64, not {dtype!r}.")
    return int(width), dtype


def _opset(target_opset: int | None) -> int:
    """The opset to write: ``target_opset``, else :data:`DEFAULT_OPSET`, within what
    the installed onnx knows."""
    from onnx.defs import onnx_opset_version

    latest = onnx_opset_version()
    if target_opset is None:
        return min(DEFAULT_OPSET, latest)
    if isinstance(target_opset, bool) or not isinstance(target_opset, int | np.integer):
        raise ValueError(f"to_onnx: target_opset must be an int, not {target_opset!r}.")
    if not MIN_OPSET <= target_opset <= latest:
        raise ValueError(
            f"to_onnx: target_opset {target_opset} is outside {MIN_OPSET}..{latest}: opsets "
            f"before {MIN_OPSET} lack operators the graphs use, and the installed onnx "
            f"knows none after {latest}."
        )
    return int(target_opset)


def to_onnx(
    model: Any,
    X: Any = None,
    *,
    dtype: type = np.float64,
    target_opset: int | None = None,
) -> Any:
    """The ONNX graph of a fitted model.

    Parameters
    ----------
    model : estimator or Pipeline
        A fitted estimator of this library or its learner core (see the module
        documentation for which), or a scikit-learn ``Pipeline`` ending with one whose
        other steps skl2onnx converts (the pipeline needs skl2onnx; the model alone
        needs onnx only).
    X : array-like of shape (n_samples, n_features), default=None
        A dense sample of the input: its width and float type (float32 or float64) make
        the graph's input. By default, ``n_features_in_`` columns of ``dtype``.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        The input's float type when ``X`` is not given; float32 rounds the weights too.
    target_opset : int, default=None
        The ONNX opset to write, from 9 to the installed onnx's latest (default: 21, or
        the installed onnx's latest where that is older; a pipeline: skl2onnx's latest
        supported).

    Returns
    -------
    onnx.ModelProto
        A graph with input ``X`` and outputs ``label``, ``scores`` and, for models
        with ``predict_proba``, ``probabilities``; its metadata properties name
        the estimator, this library's version and ``classes`` (JSON: the columns'
        labels).

    Raises
    ------
    ValueError
        If the model cannot be exported (the message says why and what to do), is not
        fitted, its weights exceed ONNX's 2 GiB single-file limit, or the opset is out
        of range.
    ImportError
        Without onnx (or, for a pipeline, skl2onnx), saying what to install.
    """
    if hasattr(model, "steps"):
        graph, last = _pipeline_to_onnx(model, X, dtype, target_opset)
        _describe(graph, last)
        return graph
    try:
        import onnx  # noqa: F401
    except ImportError as error:
        raise ImportError(_MISSING_ONNX) from error
    from perceptrons._version import __version__

    form = _expansion(model)
    width, dtype = _input_of(model, X, dtype)
    graph = model_proto(
        form,
        name=type(model).__name__,
        width=width,
        dtype=dtype,
        opset=_opset(target_opset),
        probabilities=_has_probabilities(model),
        producer_version=__version__,
    )
    _describe(graph, model)
    return graph


def _pipeline_to_onnx(
    pipeline: Any, X: Any, dtype: type, target_opset: int | None
) -> tuple[Any, Any]:
    """A scikit-learn Pipeline through skl2onnx, our converters registered; the graph
    and the pipeline's last step."""
    steps = [step for _, step in pipeline.steps]
    for step in steps:  # (first: what cannot be exported is refused without skl2onnx)
        reason = _refusal(step)
        if reason is not None:
            raise ValueError(reason)
    register_converters()  # without the extra, it says what to install
    from skl2onnx import to_onnx as skl2onnx_to_onnx
    from skl2onnx.common.data_types import DoubleTensorType, FloatTensorType

    last = steps[-1]
    check_is_fitted(last, "classes_")
    width, dtype = _input_of(pipeline if hasattr(pipeline, "n_features_in_") else last, X, dtype)
    tensor = FloatTensorType if dtype is np.float32 else DoubleTensorType
    graph = skl2onnx_to_onnx(
        pipeline, initial_types=[("X", tensor([None, width]))], target_opset=target_opset
    )
    return graph, last


def _describe(graph: Any, model: Any) -> None:
    """What a server reads to describe the model: who made it, and the label order of
    the scores' and probabilities' columns."""
    from onnx.helper import set_model_props

    from perceptrons._version import __version__

    set_model_props(
        graph,
        {
            "perceptrons_version": __version__,
            "estimator": type(model).__name__,
            "classes": json.dumps([_plain(label) for label in np.asarray(model.classes_)]),
        },
    )


def _plain(label: Any) -> Any:
    """A label as JSON writes it."""
    return label.item() if isinstance(label, np.generic) else label
