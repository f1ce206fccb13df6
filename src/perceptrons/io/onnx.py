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
as ``X.toarray()``. In float64 the scores equal the library's to rounding (the same sums,
some in another order: within 1e-9 relative on ordinary data) and the labels with them,
ties included: where the library's arithmetic is exact the graph's is too (the voted
perceptron's sums run update by update in the library's order), so a score the library
finds exactly 0 is 0 in the graph, and both break ties alike. In float32 the weights are
rounded to float32 too, and so are the scores.

``to_onnx(model, check=True)`` (``perceptrons export`` unless ``--no-check``) checks the
graph before handing it over: onnx's checker, an onnxruntime session, and its labels
equal to ``predict`` on :func:`probe_rows`; the command writes no file when it fails.

What can be exported: the linear models (``Perceptron`` and ``AveragedPerceptron`` with
every update rule, ``LogisticRegressionSGD``, ``LogisticRegressionBatch``, both naive
Bayes), and the kernel models whose prediction is one kernel expansion: a
``BudgetPerceptron``, and a ``VotedPerceptron`` predicting by ``"average"`` or
``"last"`` (each a sum of kernel values against the support vectors, written update by
update with ``CumSum``, opset 11; linear, polynomial, RBF and precomputed kernels),
estimators or their learner cores (what ``perceptrons.io.persist.load(..., core=True)``
reads). What cannot, refused with the reason: the voted perceptron's vote and random
pick (every intermediate model's sign, or a random draw per row), a Python kernel
function, the hashed text featurization (``TextFeaturizer``: its tokenizer and hash are
not ONNX operators) and the tagger's Viterbi decoding.

Over 600 lines: one reader per exportable kind (linear, binarized, budget, the voted
perceptron's update sequences), what to_onnx refuses before writing (labels, dtypes,
widths, opsets) and skl2onnx's registration all read the same models, and each other's
refusals; the nodes (``_onnx_graph``) and the check (``_onnx_check``) live apart.

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
from perceptrons.io._onnx_check import check_graph, probe_rows
from perceptrons.io._onnx_graph import (
    MIN_OPSET,
    Expansion,
    Nodes,
    Outputs,
    Updates,
    label_element_type,
    model_proto,
    plain,
    write_outputs,
)

__all__ = ["EXPORT_REFUSALS", "probe_rows", "register_converters", "to_onnx"]

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
    label_element_type(classes)  # labels ONNX cannot carry are refused by name
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
    """The voted perceptron's ``"average"`` or ``"last"`` model, each score column its
    update sequence as the library sums it (see :class:`Updates`).

    Update ``k`` adds ``c_k (K(x, x_k) + b²)`` to a class score; model ``m`` (after
    ``m`` updates) has ``votes[m]`` votes and the last one ``last``. A binary (or
    one-vs-rest) column's average is ``Σ_m votes[m] P_m + last P_n`` over the total
    votes; the native multiclass average the last model's scores less each update's
    term times the votes before it (``cumulative[k]``), over the total.
    """
    from perceptrons._kernels.voted import stage_totals

    sequences = model._sequences([model._n_seen])
    support = model._support.matrix()
    precomputed = model.kernel == "precomputed"
    n_support = model.n_features_in_ if precomputed else support.shape[0]
    n_updates = sum(sequence[0].shape[0] for sequence in sequences)
    # The kernel values, the support vectors, and each score column's gathered terms
    # (two a native update, one a binary one) of a row.
    _check_size(model, n_support * (1 if precomputed else 1 + model.n_features_in_) + 2 * n_updates)
    average = model.prediction == "average"

    def columns_of(ids: np.ndarray) -> np.ndarray:
        return np.asarray(support[ids] if precomputed else ids, dtype=np.int64)

    none = Updates(np.zeros(0, dtype=np.int64), np.zeros(0))
    updates: list[Updates] = []
    if model._native:
        ids, gold, predicted, steps, votes, counts, last = sequences[0]
        n = int(counts[0])
        step = steps[:n] if steps.shape[0] == n and n else np.ones(n)
        cumulative, totals = stage_totals(votes, counts, last)
        for column in range(n_columns):
            up, down = gold[:n] == column, predicted[:n] == column
            mine = up | down
            if average and totals[0] <= 0:  # no votes: the library's scores are 0
                updates.append(none)
                continue
            signed = np.where(up, step, -step)[mine]
            updates.append(
                Updates(
                    columns_of(ids[:n][mine]),
                    signed,
                    weights=cumulative[:n][mine] if average else None,
                    total=float(totals[0]) if average else None,
                    on_scores=False,
                )
            )
    else:
        for ids, signs, votes, counts, last in sequences:
            n = int(counts[0])
            _, totals = stage_totals(votes, counts, last)
            if average and totals[0] <= 0:
                updates.append(none)
                continue
            weights = None
            if average:  # model j + 1's votes weigh the score after update j
                weights = np.zeros(n)
                weights[: n - 1] = votes[1:n]
            updates.append(
                Updates(
                    columns_of(ids[:n]),
                    np.asarray(signs[:n], dtype=np.float64),
                    weights=weights,
                    last=float(last[0]),
                    total=float(totals[0]) if average else None,
                )
            )
    return Expansion(
        weights=np.zeros((0, n_columns)),
        offset=np.zeros(n_columns),
        classes=classes,
        updates=updates,
        shift=1.0 if model.fit_intercept else 0.0,
        **_kernel_parameters(model, getattr(model, "_gamma", 1.0), support),
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
    if container.target_opset < form.min_opset:
        raise ValueError(
            f"{type(operator.raw_operator).__name__}'s graph needs opset {form.min_opset} or "
            f"later, not {container.target_opset}."
        )
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
def _float_type(dtype: Any) -> type:
    """``dtype`` (a type, a ``numpy.dtype`` or its name) as numpy.float32 or float64."""
    try:
        kind = np.dtype(dtype).type
    except TypeError:
        kind = None
    if kind not in (np.float32, np.float64):
        raise ValueError(f"to_onnx: dtype must be float32 or float64, not {dtype!r}.")
    return kind


def _input_of(model: Any, X: Any, dtype: Any) -> tuple[int, type]:
    """The width and float type of the graph's input: ``X``'s, else the model's width
    and ``dtype``; a sample of another width than the model's is refused."""
    dtype = _float_type(dtype)
    expected: Any = getattr(model, "n_features_in_", None)
    if X is None:
        return int(expected), dtype
    if sp.issparse(X):
        raise ValueError(
            "to_onnx: X is sparse; ONNX graphs take dense input: pass X[:1].toarray()."
        )
    sample = np.asarray(X)
    if sample.ndim != 2:
        raise ValueError(f"to_onnx: X must be 2-D (rows of features), not {sample.ndim}-D.")
    if expected is not None and sample.shape[1] != expected:
        raise ValueError(
            f"to_onnx: X has {sample.shape[1]} columns, but {type(model).__name__} takes "
            f"{expected} features (n_features_in_); pass a sample of its input."
        )
    return int(sample.shape[1]), (
        sample.dtype.type if sample.dtype in (np.float32, np.float64) else np.float64
    )


def _opset(target_opset: int | None, minimum: int = MIN_OPSET, what: str = "the graphs") -> int:
    """The opset to write: ``target_opset``, else :data:`DEFAULT_OPSET`, from
    ``minimum`` (what ``what`` needs) to the installed onnx's latest."""
    from onnx.defs import onnx_opset_version

    latest = onnx_opset_version()
    if target_opset is None:
        return max(minimum, min(DEFAULT_OPSET, latest))
    if isinstance(target_opset, bool) or not isinstance(target_opset, int | np.integer):
        raise ValueError(f"to_onnx: target_opset must be an int, not {target_opset!r}.")
    if not minimum <= target_opset <= latest:
        raise ValueError(
            f"to_onnx: target_opset {target_opset} is outside {minimum}..{latest}: "
            f"{what} need opset {minimum} or later, and the installed onnx {_onnx_version()} "
            f"knows none after {latest}."
        )
    return int(target_opset)


def _onnx_version() -> str:
    import onnx

    return str(onnx.__version__)


def to_onnx(
    model: Any,
    X: Any = None,
    *,
    dtype: Any = np.float64,
    target_opset: int | None = None,
    check: bool = False,
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
        A dense sample of the input, as wide as the model's (``n_features_in_``): its
        float type (float32 or float64; others are taken as float64) makes the graph's
        input. By default, ``n_features_in_`` columns of ``dtype``.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        The input's float type when ``X`` is not given (a type, a ``numpy.dtype`` or its
        name); float32 rounds the weights too. Labels keep their type either way.
    target_opset : int, default=None
        The ONNX opset to write, from 9 (11 for a ``VotedPerceptron``, whose graph sums
        with ``CumSum``) to the installed onnx's latest (default: 21, or the installed
        onnx's latest where that is older; a pipeline: skl2onnx's latest supported).
    check : bool, default=False
        Check the graph before returning it (``perceptrons export`` does unless told
        ``--no-check``): onnx's full checker, an onnxruntime session (which needs
        onnxruntime: an ImportError says so, never a silent skip), and the session's
        labels equal to ``model.predict`` on the probe rows of :func:`probe_rows`
        (float32 graphs: on the rows whose scores are tied or apart by more than
        float32 rounding). Off by default: it builds a session and predicts with the
        model, which costs more than writing the graph.

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
        fitted, its weights exceed ONNX's 2 GiB single-file limit, its labels are not
        ONNX's (unsigned integers from 2**63, say); if ``dtype``, ``X``'s width or the
        opset is not one the graph can take; with ``check``, if the graph fails it
        (the message says how).
    ImportError
        Without onnx (or, for a pipeline, skl2onnx; with ``check``, onnxruntime),
        saying what to install.
    """
    if hasattr(model, "steps"):
        graph, last = _pipeline_to_onnx(model, X, dtype, target_opset)
        _describe(graph, last)
        if check:
            check_graph(graph, model)
        return graph
    try:
        import onnx  # noqa: F401
    except ImportError as error:
        raise ImportError(_MISSING_ONNX) from error
    from perceptrons._version import __version__

    form = _expansion(model)
    width, dtype = _input_of(model, X, dtype)
    opset = _opset(target_opset, form.min_opset, f"{type(model).__name__}'s graphs")
    graph = model_proto(
        form,
        name=type(model).__name__,
        width=width,
        dtype=dtype,
        opset=opset,
        probabilities=_has_probabilities(model),
        producer_version=__version__,
    )
    _describe(graph, model)
    if check:
        check_graph(graph, model)
    return graph


def _pipeline_to_onnx(
    pipeline: Any, X: Any, dtype: Any, target_opset: int | None
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
    if target_opset is not None:  # (None: skl2onnx's latest supported)
        _opset(target_opset, _expansion(last).min_opset, f"{type(last).__name__}'s graphs")
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
            "classes": json.dumps([plain(label) for label in np.asarray(model.classes_)]),
        },
    )
