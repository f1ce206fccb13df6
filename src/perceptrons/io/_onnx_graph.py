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

__all__ = [
    "Expansion",
    "Graph",
    "Nodes",
    "Outputs",
    "label_element_type",
    "model_proto",
    "write_outputs",
]


@dataclass
class Expansion:
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


@dataclass(frozen=True)
class Outputs:
    """The names of a graph's outputs (``probabilities`` None: the model has none)."""

    label: str = "label"
    scores: str = "scores"
    probabilities: str | None = None


def label_element_type(classes: np.ndarray) -> int:
    """The ONNX element type of the ``label`` output: integers as int64, floats as
    double, booleans as bool, strings as string."""
    from onnx import TensorProto

    if classes.dtype.kind == "b":
        return TensorProto.BOOL
    if classes.dtype.kind in "iu":
        return TensorProto.INT64
    if classes.dtype.kind == "f":
        return TensorProto.DOUBLE
    if all(isinstance(label, str) for label in classes):
        return TensorProto.STRING
    raise ValueError(
        f"classes_ of dtype {classes.dtype} cannot be ONNX labels: only integers, floats, "
        "booleans and strings can; fit the model on such labels."
    )


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


def write_outputs(graph: Nodes, form: Expansion, X: str, outputs: Outputs) -> None:
    """The nodes from the input ``X`` to the outputs: features, scores, labels and
    probabilities."""
    features = X
    if form.binarize is not None:
        above = graph.node("Greater", [features, graph.constant(form.binarize, "threshold")])
        features = graph.node("Cast", [above], to=graph.float_type)
    elif form.kernel is not None:
        features = _kernel_values(graph, features, form)
    products = graph.node("MatMul", [features, graph.constant(form.weights, "weights")])
    scores = graph.node("Add", [products, graph.constant(form.offset, "offset")])
    binary = form.weights.shape[1] == 1
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
    n_columns = form.weights.shape[1]
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
