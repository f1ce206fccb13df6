"""The nodes of an exported model's graph, written with onnx's own helpers.

:mod:`perceptrons.io.onnx` reads a fitted model into an :class:`Expansion` (what the
graph computes); :func:`write_outputs` writes the nodes that compute the outputs from
it into a :class:`Nodes`: a :class:`Graph` here, which :func:`model_proto` makes a
whole model of (no skl2onnx, no scikit-learn), or skl2onnx's container when the model
is the last step of a scikit-learn ``Pipeline`` (:mod:`perceptrons.io.onnx` adapts it).
Both write the same nodes, so a model alone and a pipeline's last step compute alike.

onnx is imported where it is used: this module imports without the ``onnx`` extra.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

#: The oldest opset our graphs are written at (ONNX 1.4's): ``Max`` broadcasts from
#: opset 8 on, whose IR version would want every constant listed among the inputs too.
MIN_OPSET = 9

__all__ = [
    "MIN_OPSET",
    "Expansion",
    "Graph",
    "Nodes",
    "Outputs",
    "Updates",
    "label_element_type",
    "model_proto",
    "plain",
    "write_outputs",
]


@dataclass
class Updates:
    """One score column of the voted perceptron as the library sums it
    (:mod:`perceptrons._kernels.voted`): its updates in order, each adding ``steps[j]
    (F[:, columns[j]] + shift)``, the running sum ``P`` the score of each model.

    ``"last"`` (``total`` None): the last model's score, ``P[-1]``. The average of a
    binary sequence (``on_scores``): ``(Σ_j weights[j] P[j] + last P[-1]) / total``,
    ``weights[j]`` the votes of the model after update ``j`` (0 for the last). The
    native multiclass average: ``P[-1] - Σ_j weights[j] T[j] / total``, ``T[j]`` update
    ``j``'s term and ``weights[j]`` the votes before it. Each sum runs in the library's
    order (``CumSum``), so the graph rounds as the library does: a score the library
    finds exactly 0 (a tie) is 0 in the graph too.
    """

    columns: np.ndarray  # (m,) int64: the column of F each update reads
    steps: np.ndarray  # (m,)
    weights: np.ndarray | None = None  # (m,): the average's
    last: float = 0.0
    total: float | None = None
    on_scores: bool = True


@dataclass
class Expansion:
    """What a graph computes: ``scores = F @ weights + offset``, where ``F`` is ``X``
    itself (linear), ``X`` binarized (Bernoulli naive Bayes) or the kernel values
    against ``support`` (kernel models); or, with ``updates`` (the voted perceptron),
    each score column summed update by update (:class:`Updates`), ``F + shift`` its
    terms, ``weights`` then unused and of shape ``(0, n_columns)``."""

    weights: np.ndarray  # (n_inputs, n_columns): coef_.T, or the dual coefficients
    offset: np.ndarray  # (n_columns,)
    classes: np.ndarray
    binarize: float | None = None
    kernel: str | None = None  # None: linear in X; else "linear", "poly", "rbf", "precomputed"
    support: np.ndarray | None = None  # (n_support, n_features), dense
    gamma: float = 1.0
    coef0: float = 0.0
    degree: int = 1
    updates: list[Updates] | None = None
    shift: float = 0.0

    @property
    def n_columns(self) -> int:
        return self.weights.shape[1]

    @property
    def min_opset(self) -> int:
        """The oldest opset the graph can be written at: ``CumSum`` is opset 11's."""
        return 11 if self.updates is not None else MIN_OPSET


@dataclass(frozen=True)
class Outputs:
    """The names of a graph's outputs (``probabilities`` None: the model has none)."""

    label: str = "label"
    scores: str = "scores"
    probabilities: str | None = None


def label_element_type(classes: np.ndarray) -> int:
    """The ONNX element type of the ``label`` output: integers as int64, floats as
    double, booleans as bool, strings as string; a ValueError naming the labels that
    none of them carries exactly (unsigned integers from 2**63, floats wider than a
    double, any other kind)."""
    from onnx import TensorProto

    kind, dtype = classes.dtype.kind, classes.dtype
    if kind == "b":
        return TensorProto.BOOL
    if kind == "i" or (kind == "u" and (not classes.size or classes.max() < 2**63)):
        return TensorProto.INT64
    if kind == "u":
        raise ValueError(
            f"the label {classes.max()} ({dtype}) is beyond ONNX's int64 labels "
            f"(at most {2**63 - 1}); fit the model on labels within int64 or on strings."
        )
    if kind == "f":
        back = classes.astype(np.float64).astype(dtype)
        differ = (back != classes) & ~(np.isnan(back) & np.isnan(classes))
        if differ.any():
            label = classes[np.flatnonzero(differ)[0]]
            raise ValueError(
                f"the label {label!r} ({dtype}) is not a double, ONNX's widest float "
                "label; fit the model on float64 labels."
            )
        return TensorProto.DOUBLE
    if kind == "U" or (kind == "O" and all(isinstance(label, str) for label in classes)):
        return TensorProto.STRING
    example = f" such as {classes[0]!r}" if classes.size else ""
    raise ValueError(
        f"labels of dtype {dtype}{example} cannot be ONNX labels: only integers (within "
        "int64), floats, booleans and strings can; fit the model on such labels."
    )


def plain(label: Any) -> Any:
    """A label as Python (and JSON) writes it, not NumPy's scalar."""
    return label.item() if isinstance(label, np.generic) else label


class Nodes:
    """Where a graph's nodes and constants go, each under a name of its own; float
    constants take the input's float type (``dtype``, float32 or float64)."""

    def __init__(self, dtype: type) -> None:
        from onnx import TensorProto

        self.dtype = dtype
        self.float_type = TensorProto.FLOAT if dtype is np.float32 else TensorProto.DOUBLE
        self.int64 = TensorProto.INT64

    def name(self, base: str) -> str:
        """A tensor name not used yet, from ``base``."""
        raise NotImplementedError

    def add_initializer(self, tensor: Any) -> None:
        raise NotImplementedError

    def add_node(self, op: str, inputs: list[str], output: str, attrs: dict[str, Any]) -> None:
        raise NotImplementedError

    def constant(self, values: Any, name: str = "const", *, exact: bool = False) -> str:
        """A constant tensor: floats in the graph's float type (``exact``: as they are,
        the labels'), integers as int64, strings as bytes; its name."""
        from onnx import numpy_helper

        array = np.asarray(values)
        if array.dtype.kind == "f":
            array = array.astype(np.float64 if exact else self.dtype)
        elif array.dtype.kind in "iu":
            array = array.astype(np.int64)
        elif array.dtype.kind != "b":
            array = np.array([str(v).encode() for v in array.ravel()], dtype=object).reshape(
                array.shape
            )
        tensor = numpy_helper.from_array(array, self.name(name))
        self.add_initializer(tensor)
        return tensor.name

    def node(self, op: str, inputs: list[str], output: str | None = None, **attrs: Any) -> str:
        """A node of operator ``op``; the name of its output."""
        output = output or self.name(op.lower())
        self.add_node(op, inputs, output, attrs)
        return output


class Graph(Nodes):
    """The nodes and constants of a graph of its own, named as skl2onnx names them
    (``matmul``, ``matmul1``...), never one of ``reserved`` (its inputs and outputs)."""

    def __init__(self, dtype: type, reserved: tuple[str, ...]) -> None:
        super().__init__(dtype)
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._used = set(reserved)
        self._seen: Counter[str] = Counter()

    def name(self, base: str) -> str:
        return self._fresh(base)

    def _fresh(self, base: str) -> str:
        while True:
            count = self._seen[base]
            self._seen[base] += 1
            candidate = f"{base}{count}" if count else base
            if candidate not in self._used:
                self._used.add(candidate)
                return candidate

    def add_initializer(self, tensor: Any) -> None:
        self.initializers.append(tensor)

    def add_node(self, op: str, inputs: list[str], output: str, attrs: dict[str, Any]) -> None:
        from onnx import helper

        # Node names live apart from tensor names; capitalized, they never meet.
        self.nodes.append(helper.make_node(op, inputs, [output], name=self._fresh(op), **attrs))


def _kernel_values(graph: Nodes, X: str, form: Expansion) -> str:
    """``K(X, support)`` as the library computes it
    (:class:`perceptrons.kernel._gram.KernelMatrix`): the products, then ``gamma``,
    ``coef0`` and the power, or the squared distances."""
    if form.kernel == "precomputed":
        return X  # the input is the kernel values against the training points
    assert form.support is not None
    products = graph.node("MatMul", [X, graph.constant(form.support.T, "support_t")])
    if form.kernel == "linear":
        return products
    if form.kernel == "poly":
        scaled = graph.node("Mul", [products, graph.constant(form.gamma, "gamma")])
        shifted = graph.node("Add", [scaled, graph.constant(form.coef0, "coef0")])
        return _power(graph, shifted, form.degree)
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


def _power(graph: Nodes, values: str, degree: int) -> str:
    """``values ** degree`` by the library's repeated squaring
    (:func:`perceptrons.kernel._gram._power`): the same multiplications in the same
    order, where ``Pow`` would round its own way."""
    result = None
    while True:
        if degree & 1:
            result = values if result is None else graph.node("Mul", [result, values])
        degree >>= 1
        if not degree:
            assert result is not None
            return result
        values = graph.node("Mul", [values, values])


def _summed_updates(graph: Nodes, features: str, X: str, form: Expansion) -> str:
    """The score columns of :class:`Updates`, ``(N, n_columns)``."""
    assert form.updates is not None
    if form.shift:
        features = graph.node("Add", [features, graph.constant(form.shift, "bias_sq")])
    axis = graph.constant(np.array(1), "axis")
    columns = []
    for updates in form.updates:
        m = updates.columns.shape[0]
        if not m:  # no update: the zero model, whatever X
            first = graph.node("Gather", [X, graph.constant(np.array([0]), "first")], axis=1)
            columns.append(graph.node("Mul", [first, graph.constant(0.0, "zero")]))
            continue
        last = graph.constant(np.array([m - 1]), "last")
        terms = graph.node("Gather", [features, graph.constant(updates.columns, "columns")], axis=1)
        terms = graph.node("Mul", [terms, graph.constant(updates.steps, "steps")])
        running = graph.node("CumSum", [terms, axis])
        score = graph.node("Gather", [running, last], axis=1)
        if updates.total is not None:
            assert updates.weights is not None
            weighted = graph.node(
                "Mul",
                [running if updates.on_scores else terms, graph.constant(updates.weights, "votes")],
            )
            weighted = graph.node("Gather", [graph.node("CumSum", [weighted, axis]), last], axis=1)
            total = graph.constant(updates.total, "total")
            if updates.on_scores:
                final = graph.node("Mul", [score, graph.constant(updates.last, "last_votes")])
                score = graph.node("Div", [graph.node("Add", [weighted, final]), total])
            else:
                score = graph.node("Sub", [score, graph.node("Div", [weighted, total])])
        columns.append(score)
    if len(columns) == 1:
        return columns[0]
    return graph.node("Concat", columns, axis=1)


def write_outputs(graph: Nodes, form: Expansion, X: str, outputs: Outputs) -> None:
    """The nodes from the input ``X`` to the outputs: features, scores, labels and
    probabilities."""
    features = X
    if form.binarize is not None:
        above = graph.node("Greater", [features, graph.constant(form.binarize, "threshold")])
        features = graph.node("Cast", [above], to=graph.float_type)
    elif form.kernel is not None:
        features = _kernel_values(graph, features, form)
    if form.updates is not None:
        products = _summed_updates(graph, features, X, form)
    else:
        products = graph.node("MatMul", [features, graph.constant(form.weights, "weights")])
    scores = graph.node("Add", [products, graph.constant(form.offset, "offset")])
    binary = form.n_columns == 1
    if binary:
        flat = graph.node("Reshape", [scores, graph.constant(np.array([-1]), "shape")])
        graph.node("Identity", [flat], outputs.scores)
        positive = graph.node("Greater", [flat, graph.constant(0.0, "zero")])
        index = graph.node("Cast", [positive], to=graph.int64)
    else:
        graph.node("Identity", [scores], outputs.scores)
        index = graph.node("ArgMax", [scores], axis=1, keepdims=0)
    classes = graph.constant(form.classes, "classes", exact=True)
    graph.node("Gather", [classes, index], outputs.label, axis=0)
    if outputs.probabilities is not None:
        if binary:
            negative = graph.node("Sigmoid", [graph.node("Neg", [scores])])
            positive_probability = graph.node("Sigmoid", [scores])
            graph.node("Concat", [negative, positive_probability], outputs.probabilities, axis=1)
        else:
            graph.node("Softmax", [scores], outputs.probabilities, axis=1)


def model_proto(
    form: Expansion,
    *,
    name: str,
    width: int,
    dtype: type,
    opset: int,
    probabilities: bool,
    producer_version: str,
) -> Any:
    """The ``onnx.ModelProto`` of one model: input ``X`` of ``width`` columns of
    ``dtype``, outputs ``label``, ``scores`` and (``probabilities``) ``probabilities``,
    written at ``opset`` with the oldest IR version that has it (what a runtime reads)."""
    from onnx import helper

    outputs = Outputs(probabilities="probabilities" if probabilities else None)
    graph = Graph(dtype, reserved=("X", "label", "scores", "probabilities"))
    write_outputs(graph, form, "X", outputs)
    n_columns = form.n_columns
    declared = [
        helper.make_tensor_value_info(outputs.label, label_element_type(form.classes), [None]),
        helper.make_tensor_value_info(
            outputs.scores, graph.float_type, [None] if n_columns == 1 else [None, n_columns]
        ),
    ]
    if outputs.probabilities is not None:
        declared.append(
            helper.make_tensor_value_info(
                outputs.probabilities, graph.float_type, [None, form.classes.shape[0]]
            )
        )
    body = helper.make_graph(
        graph.nodes,
        f"ONNX({name})",
        [helper.make_tensor_value_info("X", graph.float_type, [None, width])],
        declared,
        graph.initializers,
    )
    opsets = [helper.make_opsetid("", opset)]
    return helper.make_model(
        body,
        opset_imports=opsets,
        ir_version=helper.find_min_ir_version_for(opsets),
        producer_name="perceptrons",
        producer_version=producer_version,
    )
