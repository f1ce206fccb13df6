"""Fitted models as ONNX graphs, for serving where this library is not installed.

ONNX (the Open Neural Network Exchange format) is how linear models are commonly served:
``onnxruntime`` in C++, C#, Java or JavaScript, inference servers, browsers. This module
registers converters for this library's estimators with `skl2onnx
<https://onnx.ai/sklearn-onnx/>`_, scikit-learn's ONNX converter, so that its
``to_onnx(model, X[:1])`` converts them alone or as the last step of a scikit-learn
``Pipeline`` (importing this module registers them); :func:`to_onnx` does the same with
the input's width and type taken from the model. Needs the ``onnx`` extra: ``pip install
"perceptrons[onnx]"`` (without it the module imports, and :func:`to_onnx` says what to
install). On the command line: ``perceptrons export MODEL -o model.onnx``.

Every graph has the outputs

``label``
    The predicted class, shape ``(N,)``, of the type of ``classes_`` (integers as int64,
    floats as double, booleans as bool, strings as string).
``scores``
    ``decision_function``, shape ``(N,)`` for two classes, else ``(N, n_classes)``.
``probabilities``
    ``predict_proba``, shape ``(N, n_classes)``, for the models that have it
    (logistic regression, naive Bayes).

The input is dense, float64 (``DoubleTensorType``) or float32: a sparse matrix is passed
as ``X.toarray()``. In float64 the scores equal the library's to rounding (the same sums
in another order: within 1e-9 relative on ordinary data) and the labels with them; in
float32 the weights are rounded to float32 too, and so are the scores.

What can be exported: the linear models (``Perceptron`` and ``AveragedPerceptron`` with
every update rule, ``LogisticRegressionSGD``, ``LogisticRegressionBatch``, both naive
Bayes), and the kernel models whose prediction is one kernel expansion: a
``BudgetPerceptron``, and a ``VotedPerceptron`` predicting by ``"average"`` or
``"last"`` (each a single weighted sum of kernel values against the support vectors,
written as ONNX matrix products; linear, polynomial, RBF and precomputed kernels). What
cannot, refused with the reason: the voted perceptron's vote and random pick (every
intermediate model's sign, or a random draw per row), a Python kernel function, the
hashed text featurization (``TextFeaturizer``: its tokenizer and hash are not ONNX
operators) and the tagger's Viterbi decoding.

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
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from perceptrons._registry import MODELS

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

# Whether register_converters has run (once is enough: skl2onnx keeps them).
_registered = False

# The most the dense weights may take: ONNX's single-file limit (protobuf's 2 GiB), less
# a margin for the rest of the graph.
_MAX_MODEL_BYTES = 2**31 - 2**20


@dataclass
class _Expansion:
    """What a graph computes: ``scores = features(X) @ weights + offset``, where the
    features are ``X`` itself (linear), ``X`` binarized (Bernoulli naive Bayes) or the
    kernel values against ``support`` (kernel models)."""

    weights: np.ndarray  # (n_inputs, n_columns): coef_.T, or the dual coefficients
    offset: np.ndarray  # (n_columns,)
    classes: np.ndarray
    binarize: float | None = None
    kernel: str | None = None  # None: linear in X; else "linear", "poly", "rbf", "precomputed"
    support: np.ndarray | None = None  # (n_support, n_features), dense
    gamma: float = 1.0
    coef0: float = 0.0
    degree: int = 1


def _our_name(model: Any) -> str | None:
    """The public name of ``model``'s class if it is this library's (scikit-learn has a
    ``Perceptron`` too), else None."""
    import perceptrons

    name = type(model).__name__
    return name if getattr(perceptrons, name, None) is type(model) else None


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


def _expansion(model: Any) -> _Expansion:
    """The weights, offsets and features of a fitted exportable ``model``."""
    from sklearn.utils.validation import check_is_fitted

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
        return _Expansion(
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
    return _Expansion(
        weights=np.asarray(coef, dtype=np.float64).T.reshape(-1, n_columns),
        offset=np.asarray(model.intercept_, dtype=np.float64).reshape(n_columns),
        classes=classes,
        binarize=binarize,
    )


def _check_size(model: Any, n_values: int) -> None:
    """Refuse, before the dense weights are formed, a graph beyond ONNX's single-file
    limit (protobuf's 2 GiB)."""
    size = 8 * n_values
    if size > _MAX_MODEL_BYTES:
        raise ValueError(
            f"{type(model).__name__}: its weights as dense arrays take {size / 2**30:.1f} GiB, "
            "beyond ONNX's 2 GiB single-file limit; train on fewer features (or, for a "
            "kernel model, a smaller support set) to export it."
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


def _voted_expansion(model: Any, classes: np.ndarray, n_columns: int) -> _Expansion:
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
    return _Expansion(
        weights=weights,
        offset=bias_sq * weights.sum(axis=0),
        classes=classes,
        **_kernel_parameters(model, gamma, support),
    )


# ------------------------------------------------------------------------ skl2onnx
def _label_type(classes: np.ndarray) -> Any:
    from skl2onnx.common import data_types as types

    if classes.dtype.kind == "b":
        return types.BooleanTensorType()
    if classes.dtype.kind in "iu":
        return types.Int64TensorType()
    if classes.dtype.kind == "f":
        return types.DoubleTensorType()
    if all(isinstance(label, str) for label in classes):
        return types.StringTensorType()
    raise ValueError(
        f"classes_ of dtype {classes.dtype} cannot be ONNX labels: only integers, floats, "
        "booleans and strings can; fit the model on such labels."
    )


def _has_probabilities(model: Any) -> bool:
    from perceptrons._linear import LogLinearProbabilities

    return isinstance(model, LogLinearProbabilities)


def _parser(scope: Any, model: Any, inputs: list[Any], custom_parsers: Any = None) -> list[Any]:
    """Declare the operator of one of our estimators and its outputs."""
    reason = _refusal(model)
    if reason is not None:
        raise ValueError(reason)
    operator = scope.declare_local_operator(_alias(model), model)
    operator.inputs = inputs
    label = scope.declare_local_variable("label", _label_type(np.asarray(model.classes_)))
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


class _Graph:
    """Nodes added to a skl2onnx container, with constants of the input's float type."""

    def __init__(self, scope: Any, container: Any, dtype: type) -> None:
        from onnx import TensorProto

        self.scope, self.container, self.dtype = scope, container, dtype
        self.float_type = TensorProto.FLOAT if dtype is np.float32 else TensorProto.DOUBLE
        self.int64 = TensorProto.INT64

    def constant(self, values: Any, name: str = "const") -> str:
        from onnx import numpy_helper

        array = np.asarray(values)
        if array.dtype.kind == "f":
            array = array.astype(self.dtype)
        elif array.dtype.kind in "iu":
            array = array.astype(np.int64)
        elif array.dtype.kind != "b":
            array = np.array([str(v).encode() for v in array.ravel()], dtype=object).reshape(
                array.shape
            )
        tensor = numpy_helper.from_array(array, self.scope.get_unique_variable_name(name))
        self.container.initializers.append(tensor)
        return tensor.name

    def node(self, op: str, inputs: list[str], output: str | None = None, **attrs: Any) -> str:
        output = output or self.scope.get_unique_variable_name(op.lower())
        self.container.add_node(
            op, inputs, [output], name=self.scope.get_unique_operator_name(op), **attrs
        )
        return output


def _kernel_values(graph: _Graph, X: str, form: _Expansion) -> str:
    """``K(X, support)`` as the library computes it (:class:`perceptrons._gram.KernelMatrix`):
    the products, then ``gamma``, ``coef0`` and the power, or the squared distances."""
    if form.kernel == "precomputed":
        return X  # the input is the kernel values against the training points
    assert form.support is not None
    products = graph.node("MatMul", [X, graph.constant(form.support.T, "support_t")])
    if form.kernel == "linear":
        return products
    if form.kernel == "poly":
        scaled = graph.node("Mul", [products, graph.constant(form.gamma, "gamma")])
        shifted = graph.node("Add", [scaled, graph.constant(form.coef0, "coef0")])
        return graph.node("Pow", [shifted, graph.constant(float(form.degree), "degree")])
    # rbf: ||x||² - 2<x, s> + ||s||², clipped at 0, times -gamma, exponentiated.
    ones = graph.constant(np.ones((form.support.shape[1], 1)), "ones")
    squares = graph.node("MatMul", [graph.node("Mul", [X, X]), ones])
    distances = graph.node("Mul", [products, graph.constant(-2.0, "minus_two")])
    distances = graph.node("Add", [distances, squares])
    norms = np.einsum("ij,ij->i", form.support, form.support)
    distances = graph.node("Add", [distances, graph.constant(norms[np.newaxis, :], "norms")])
    distances = graph.node("Max", [distances, graph.constant(0.0, "zero")])
    scaled = graph.node("Mul", [distances, graph.constant(-form.gamma, "minus_gamma")])
    return graph.node("Exp", [scaled])


def _converter(scope: Any, operator: Any, container: Any) -> None:
    """The graph of one estimator: features, scores, labels and probabilities."""
    from skl2onnx.common.data_types import FloatTensorType

    form = _expansion(operator.raw_operator)
    dtype = np.float32 if isinstance(operator.inputs[0].type, FloatTensorType) else np.float64
    graph = _Graph(scope, container, dtype)
    features = operator.inputs[0].full_name
    if form.binarize is not None:
        above = graph.node("Greater", [features, graph.constant(form.binarize, "threshold")])
        features = graph.node("Cast", [above], to=graph.float_type)
    elif form.kernel is not None:
        features = _kernel_values(graph, features, form)
    products = graph.node("MatMul", [features, graph.constant(form.weights, "weights")])
    scores = graph.node("Add", [products, graph.constant(form.offset, "offset")])
    label, score_output = operator.outputs[0].full_name, operator.outputs[1].full_name
    binary = form.weights.shape[1] == 1
    if binary:
        flat = graph.node("Reshape", [scores, graph.constant(np.array([-1]), "shape")])
        graph.node("Identity", [flat], score_output)
        positive = graph.node("Greater", [flat, graph.constant(0.0, "zero")])
        index = graph.node("Cast", [positive], to=graph.int64)
    else:
        graph.node("Identity", [scores], score_output)
        index = graph.node("ArgMax", [scores], axis=1, keepdims=0)
    graph.node("Gather", [graph.constant(form.classes, "classes"), index], label, axis=0)
    if len(operator.outputs) > 2:
        probabilities = operator.outputs[2].full_name
        if binary:
            negative = graph.node("Sigmoid", [graph.node("Neg", [scores])])
            graph.node("Concat", [negative, graph.node("Sigmoid", [scores])], probabilities, axis=1)
        else:
            graph.node("Softmax", [scores], probabilities, axis=1)


def register_converters() -> None:
    """Register this library's converters with skl2onnx (done on import; idempotent).

    After it, skl2onnx's ``to_onnx`` and ``convert_sklearn`` convert our estimators,
    alone or as the last step of a scikit-learn ``Pipeline``, and refuse with the reason
    the ones that cannot be exported.
    """
    global _registered
    if _registered:
        return
    try:
        from skl2onnx import update_registered_converter
    except ImportError as error:
        raise ImportError(
            "exporting to ONNX needs skl2onnx and onnx: pip install 'perceptrons[onnx]'"
        ) from error
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


def _check_exportable(model: Any) -> Any:
    """The estimators of ``model`` (a Pipeline's steps too) are all exportable; its
    last step."""
    steps = [step for _, step in model.steps] if hasattr(model, "steps") else [model]
    for step in steps:
        reason = _refusal(step)
        if reason is not None:
            raise ValueError(reason)
    return steps[-1]


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
        A fitted estimator of this library (see the module documentation for which), or
        a scikit-learn ``Pipeline`` ending with one whose other steps skl2onnx converts.
    X : array-like of shape (n_samples, n_features), default=None
        A dense sample of the input: its width and float type (float32 or float64) make
        the graph's input. By default, ``n_features_in_`` columns of ``dtype``.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        The input's float type when ``X`` is not given; float32 rounds the weights too.
    target_opset : int, default=None
        The ONNX opset to write (default: skl2onnx's latest supported).

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
        fitted, or its weights exceed ONNX's 2 GiB single-file limit.
    """
    register_converters()  # (first: without the extra, it says what to install)
    from skl2onnx import to_onnx as skl2onnx_to_onnx
    from skl2onnx.common.data_types import DoubleTensorType, FloatTensorType
    from sklearn.utils.validation import check_is_fitted

    last = _check_exportable(model)
    check_is_fitted(last, "classes_")
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
        width = model.n_features_in_ if hasattr(model, "n_features_in_") else last.n_features_in_
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"to_onnx: dtype must be numpy.float32 or numpy.float64, not {dtype!r}.")
    tensor = FloatTensorType if dtype is np.float32 else DoubleTensorType
    graph = skl2onnx_to_onnx(
        model, initial_types=[("X", tensor([None, int(width)]))], target_opset=target_opset
    )
    # What a server reads to describe the model: who made it, and the label order of the
    # scores' and probabilities' columns.
    from onnx.helper import set_model_props

    from perceptrons._version import __version__

    set_model_props(
        graph,
        {
            "perceptrons_version": __version__,
            "estimator": type(last).__name__,
            "classes": json.dumps([_plain(label) for label in np.asarray(last.classes_)]),
        },
    )
    return graph


def _plain(label: Any) -> Any:
    """A label as JSON writes it."""
    return label.item() if isinstance(label, np.generic) else label


try:  # registered on import where the extra is installed; else to_onnx says what to install
    register_converters()
except ImportError:
    pass
