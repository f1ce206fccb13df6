"""ONNX export (perceptrons.io.onnx, ``perceptrons export``): onnxruntime's labels,
scores and probabilities equal the library's, for every exportable estimator, binary and
multiclass, trained on dense and on sparse input; what cannot be exported is refused with
the reason."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

onnx = pytest.importorskip("onnx", reason="the [onnx] extra (onnx) is not installed")
ort = pytest.importorskip("onnxruntime", reason="the [onnx] extra (onnxruntime) is not installed")

import perceptrons  # noqa: E402
from perceptrons import (  # noqa: E402
    AveragedPerceptron,
    BernoulliNaiveBayes,
    BudgetPerceptron,
    LogisticRegressionBatch,
    LogisticRegressionSGD,
    MultinomialNaiveBayes,
    Perceptron,
    VotedPerceptron,
)
from perceptrons._registry import MODELS  # noqa: E402
from perceptrons.io import onnx as onnx_export  # noqa: E402
from perceptrons.linear._update_rules import RULES  # noqa: E402
from rule_problems import averaged as averaged_for  # noqa: E402


def _session(model, dtype=np.float64):
    graph = onnx_export.to_onnx(model, dtype=dtype)
    onnx.checker.check_model(graph, full_check=True)
    return ort.InferenceSession(graph.SerializeToString(), providers=["CPUExecutionProvider"])


def _outputs(model, X, dtype=np.float64):
    session = _session(model, dtype)
    dense = X.toarray() if sp.issparse(X) else X
    names = [output.name for output in session.get_outputs()]
    return dict(zip(names, session.run(None, {"X": dense.astype(dtype)}), strict=True))


def assert_same_predictions(model, X, *, scores_tol=1e-9):
    """float64: labels exactly, scores (and probabilities) to ``scores_tol``, relative
    to the scores' scale."""
    got = _outputs(model, X)
    expected = model.decision_function(X)
    assert got["scores"].shape == expected.shape
    assert got["scores"].dtype == np.float64
    scale = max(1.0, float(np.max(np.abs(expected))))
    np.testing.assert_allclose(got["scores"], expected, rtol=0, atol=scores_tol * scale)
    np.testing.assert_array_equal(got["label"], model.predict(X))
    if hasattr(model, "predict_proba"):
        np.testing.assert_allclose(got["probabilities"], model.predict_proba(X), atol=1e-9)
    else:
        assert "probabilities" not in got
    return got


def _problem(n_classes, seed=0, n=80, d=7, sparse=False, counts=False):
    rng = np.random.default_rng(seed)
    if counts:
        X = rng.poisson(1.0, size=(n, d)).astype(np.float64)
    else:
        X = rng.normal(size=(n, d))
        if sparse:
            X[rng.random(size=X.shape) < 0.6] = 0.0
    centers = rng.normal(scale=2.0, size=(n_classes, d))
    y = np.argmin(((X[:, None, :] - centers[None]) ** 2).sum(axis=2), axis=1)
    y[:n_classes] = np.arange(n_classes)  # every class present
    return (sp.csr_matrix(X) if sparse else X), y


# Every update rule, plain and averaged: weights of every rule are a linear model.
@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("update", sorted(RULES))
def test_every_update_rule_round_trips(update, n_classes):
    for averaged, sparse in ((False, False), (True, True)):
        X, y = _problem(n_classes, seed=len(update), sparse=sparse)
        # (a rule whose defaults penalize every weight every round: its last weights)
        cls = averaged_for(update) if averaged else Perceptron
        model = cls(update=update, max_epochs=3, random_state=0).fit(X, y)
        assert_same_predictions(model, X)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize(
    "make",
    [
        lambda: LogisticRegressionSGD(max_epochs=3, random_state=0),
        lambda: LogisticRegressionBatch(max_iter=50),
        lambda: MultinomialNaiveBayes(alpha=0.5),
        lambda: BernoulliNaiveBayes(binarize=1.0),
        lambda: BernoulliNaiveBayes(binarize=None),
    ],
    ids=["logistic-sgd", "logistic-batch", "multinomial-nb", "bernoulli-nb", "bernoulli-binary"],
)
def test_probabilistic_models_round_trip(make, n_classes, sparse):
    X, y = _problem(n_classes, counts=True)
    model = make()
    if getattr(model, "binarize", 0.0) is None:
        X = (X > 0).astype(np.float64)
    X = sp.csr_matrix(X) if sparse else X
    model.fit(X, y)
    got = assert_same_predictions(model, X)
    np.testing.assert_allclose(got["probabilities"].sum(axis=1), 1.0, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(
    n_classes=st.integers(2, 5),
    n_features=st.integers(1, 12),
    seed=st.integers(0, 2**16),
    sparse=st.booleans(),
    fit_intercept=st.booleans(),
)
def test_random_problems_round_trip(n_classes, n_features, seed, sparse, fit_intercept):
    X, y = _problem(n_classes, seed=seed, n=40, d=n_features, sparse=sparse)
    for model in (
        AveragedPerceptron(max_epochs=2, random_state=seed, fit_intercept=fit_intercept),
        LogisticRegressionSGD(max_epochs=2, random_state=seed, fit_intercept=fit_intercept),
    ):
        assert_same_predictions(model.fit(X, y), X)


def test_float32_graphs_within_float32_rounding():
    X, y = _problem(3, n=200)
    model = LogisticRegressionSGD(max_epochs=3, random_state=0).fit(X, y)
    got = _outputs(model, X, np.float32)
    assert got["scores"].dtype == np.float32
    expected = model.decision_function(X)
    scale = float(np.max(np.abs(expected)))
    np.testing.assert_allclose(got["scores"], expected, rtol=0, atol=1e-5 * scale)
    np.testing.assert_allclose(got["probabilities"], model.predict_proba(X), atol=1e-5)
    # Labels agree wherever the best score leads the next by more than float32 rounding.
    ordered = np.sort(expected, axis=1)
    clear = ordered[:, -1] - ordered[:, -2] > 1e-4 * scale
    assert clear.mean() > 0.9
    np.testing.assert_array_equal(got["label"][clear], model.predict(X)[clear])


@pytest.mark.parametrize(
    "labels",
    [
        np.array(["ham", "spam"]),
        np.array(["b", "a", "c"]),
        np.array([-3, 7]),
        np.array([1.0, 3.0, -2.0]),
        np.array([False, True]),
    ],
    ids=["strings-binary", "strings", "integers", "floats", "booleans"],
)
def test_labels_keep_their_type(labels):
    X, codes = _problem(len(labels))
    model = Perceptron(max_epochs=2, random_state=0).fit(X, labels[codes])
    got = assert_same_predictions(model, X)
    assert got["label"].dtype.kind == {"U": "O", "i": "i", "f": "f", "b": "b"}[labels.dtype.kind]
    properties = {p.key: p.value for p in onnx_export.to_onnx(model).metadata_props}
    assert json.loads(properties["classes"]) == model.classes_.tolist()
    assert properties["estimator"] == "Perceptron"
    assert properties["perceptrons_version"] == perceptrons.__version__


def test_sparsified_model_exports_its_dense_weights():
    X, y = _problem(3, sparse=True)
    model = AveragedPerceptron(max_epochs=3, random_state=0).fit(X, y).sparsify()
    assert sp.issparse(model.coef_)
    assert_same_predictions(model, X)


def test_skl2onnx_to_onnx_converts_our_models_and_pipelines():
    pytest.importorskip("skl2onnx", reason="the [onnx] extra (skl2onnx) is not installed")
    from skl2onnx import to_onnx

    onnx_export.register_converters()
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _problem(3)
    pipeline = make_pipeline(StandardScaler(), AveragedPerceptron(random_state=0)).fit(X, y)
    for dtype in (np.float64, np.float32):
        graph = to_onnx(pipeline, X[:1].astype(dtype))
        session = ort.InferenceSession(graph.SerializeToString())
        labels, scores = session.run(None, {"X": X.astype(dtype)})
        tol = 1e-9 if dtype is np.float64 else 1e-4
        expected = pipeline.decision_function(X)
        np.testing.assert_allclose(scores, expected, atol=tol * np.max(np.abs(expected)))
        if dtype is np.float64:
            np.testing.assert_array_equal(labels, pipeline.predict(X))
    # Also through perceptrons' own function, the input's width taken from the model.
    graph = onnx_export.to_onnx(pipeline)
    assert graph.graph.input[0].type.tensor_type.shape.dim[1].dim_value == X.shape[1]


def test_float_labels_in_a_float32_graph():
    """The labels keep their type whatever the input's: float labels are doubles in a
    float32 graph too (skl2onnx's graphs rounded them to float32 and failed to load)."""
    X, codes = _problem(3)
    labels = np.array([1.0, 3.0, -2.0])[codes]
    model = Perceptron(max_epochs=2, random_state=0).fit(X, labels)
    got = _outputs(model, X, np.float32)
    assert got["label"].dtype == np.float64
    clear = np.sort(model.decision_function(X), axis=1)
    clear = clear[:, -1] - clear[:, -2] > 1e-4 * np.max(np.abs(clear))
    np.testing.assert_array_equal(got["label"][clear], model.predict(X)[clear])


def test_opsets():
    X, y = _problem(2, counts=True)
    model = LogisticRegressionSGD(max_epochs=2, random_state=0).fit(X, y)
    graph = onnx_export.to_onnx(model)
    assert [(o.domain, o.version) for o in graph.opset_import] == [("", 21)]
    assert graph.ir_version == 10  # the oldest IR version with opset 21: what runtimes read
    assert graph.producer_name == "perceptrons"
    for opset in (onnx_export.MIN_OPSET, 13, 17):
        graph = onnx_export.to_onnx(model, target_opset=opset)
        onnx.checker.check_model(graph, full_check=True)
        assert [o.version for o in graph.opset_import] == [opset]
        session = ort.InferenceSession(graph.SerializeToString())
        labels, _, probabilities = session.run(None, {"X": X})
        np.testing.assert_array_equal(labels, model.predict(X))
        np.testing.assert_allclose(probabilities, model.predict_proba(X), atol=1e-9)
    latest = onnx.defs.onnx_opset_version()
    for opset in (onnx_export.MIN_OPSET - 1, latest + 1):
        with pytest.raises(ValueError, match=f"target_opset {opset} is outside"):
            onnx_export.to_onnx(model, target_opset=opset)


@pytest.mark.parametrize("kind", [k for k in MODELS if k.exports], ids=lambda k: k.name)
def test_the_learner_core_exports_the_same_graph(kind):
    """What the command line loads (persist.load(..., core=True)) exports as the
    estimator does: the same nodes and constants, the same outputs."""
    X, y = _problem(3, counts=True)
    make = {"VotedPerceptron": {"prediction": "average"}, "BudgetPerceptron": {"budget": 10}}
    params = make.get(kind.name, {})
    if "random_state" in inspect.signature(getattr(perceptrons, kind.name)).parameters:
        params["random_state"] = 0
    face = getattr(perceptrons, kind.name)(**params)
    core = getattr(importlib.import_module(kind.core), kind.name)(**params)
    assert type(core) is not type(face)
    graphs = [onnx_export.to_onnx(model.fit(X, y)) for model in (face, core)]
    for graph in graphs:
        onnx.checker.check_model(graph, full_check=True)
    assert graphs[0].graph == graphs[1].graph


# ------------------------------------------------------------------ kernel models
@pytest.mark.parametrize("prediction", ["average", "last"])
@pytest.mark.parametrize("kernel", ["linear", "poly", "rbf"])
@pytest.mark.parametrize(("n_classes", "multiclass"), [(2, "native"), (3, "native"), (3, "ovr")])
def test_voted_perceptron_average_and_last_round_trip(prediction, kernel, n_classes, multiclass):
    X, y = _problem(n_classes, n=60, d=5)
    model = VotedPerceptron(
        kernel=kernel,
        degree=3,
        prediction=prediction,
        multiclass=multiclass,
        max_epochs=3,
        random_state=0,
    ).fit(X, y)
    assert_same_predictions(model, X)


def test_voted_perceptron_weights_sparse_input_and_several_calls():
    X, y = _problem(3, n=60, d=6, sparse=True)
    weights = np.random.default_rng(1).integers(1, 4, size=y.shape[0]).astype(np.float64)
    model = VotedPerceptron(kernel="poly", degree=2, prediction="average", random_state=0)
    model.fit(X, y, sample_weight=weights)
    model.partial_fit(X[:30], y[:30])  # a later call: the votes of its models count too
    assert_same_predictions(model, X)
    assert_same_predictions(model.set_params(prediction="last"), X)


@pytest.mark.parametrize("multiclass", ["native", "ovr"])
def test_voted_perceptron_delta_trick_and_no_intercept(multiclass):
    X, y = _problem(3, n=60, d=4)
    for params in ({"delta": 0.5}, {"fit_intercept": False}):
        model = VotedPerceptron(
            kernel="poly", degree=2, prediction="average", multiclass=multiclass, **params
        )
        assert_same_predictions(model.fit(X, y), X)


def test_budget_perceptron_sparse_input():
    X, y = _problem(3, n=60, d=6, sparse=True)
    model = BudgetPerceptron(budget=10, kernel="linear", random_state=0).fit(X, y)
    assert_same_predictions(model, X)


def test_voted_perceptron_precomputed_kernel_round_trips():
    from sklearn.metrics.pairwise import polynomial_kernel

    X, y = _problem(3, n=50, d=4)
    gram = polynomial_kernel(X, X, degree=2)
    model = VotedPerceptron(kernel="precomputed", prediction="average", random_state=0)
    model.fit(gram, y)
    assert_same_predictions(model, gram)


@pytest.mark.parametrize("removal", ["projectron", "random", "forgetron", "bpa", "bpa-nn"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_budget_perceptron_round_trips(removal, n_classes):
    X, y = _problem(n_classes, n=80, d=5)
    kernel = "poly" if removal == "bpa-nn" else "rbf"
    model = BudgetPerceptron(budget=12, removal=removal, kernel=kernel, random_state=0)
    assert_same_predictions(model.fit(X, y), X)


# ------------------------------------------------------------------------ refusals
@pytest.mark.parametrize(
    ("model", "fragments"),
    [
        (VotedPerceptron(prediction="vote"), ["prediction='vote'", "sign", "'average'"]),
        (VotedPerceptron(prediction="random"), ["random model per row", "'average'"]),
        (VotedPerceptron(kernel=lambda a, b: a @ b.T), ["Python kernel function"]),
    ],
    ids=["vote", "random", "callable-kernel"],
)
def test_what_cannot_be_exported_is_refused_with_the_reason(model, fragments):
    X, y = _problem(2, n=30, d=3)
    model.fit(X, y)
    with pytest.raises(ValueError) as error:
        onnx_export.to_onnx(model)
    for fragment in fragments:
        assert fragment in str(error.value)
    # The same refusal through skl2onnx's own entry point.
    pytest.importorskip("skl2onnx", reason="the [onnx] extra (skl2onnx) is not installed")
    from skl2onnx import to_onnx

    onnx_export.register_converters()

    with pytest.raises(ValueError, match="cannot be exported to ONNX"):
        to_onnx(model, X[:1])


def test_text_featurizer_and_tagger_are_refused():
    from sklearn.pipeline import make_pipeline

    from perceptrons import SequenceTagger, TextFeaturizer

    texts = ["good film", "bad film", "good plot", "bad plot"] * 3
    pipeline = make_pipeline(TextFeaturizer(), Perceptron(random_state=0))
    pipeline.fit(texts, [1, 0, 1, 0] * 3)
    with pytest.raises(ValueError, match=r"TextFeaturizer cannot be exported.*feature hashing"):
        onnx_export.to_onnx(pipeline)
    # Its classifier alone exports, taking the featurizer's vectors.
    features = pipeline[0].transform(texts)
    assert_same_predictions(pipeline[-1], features)
    tagger = SequenceTagger(max_epochs=1).fit([["a", "b"], ["b", "a"]], [["X", "Y"], ["Y", "X"]])
    with pytest.raises(ValueError, match=r"SequenceTagger cannot be exported.*Viterbi"):
        onnx_export.to_onnx(tagger)


def test_bad_calls_are_refused():
    X, y = _problem(2)
    with pytest.raises(Exception, match="not fitted"):
        onnx_export.to_onnx(Perceptron())
    model = Perceptron(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="X is sparse"):
        onnx_export.to_onnx(model, sp.csr_matrix(X[:1]))
    with pytest.raises(ValueError, match="dtype must be"):
        onnx_export.to_onnx(model, dtype=np.int32)
    from sklearn.linear_model import Perceptron as SklearnPerceptron

    with pytest.raises(ValueError, match="not a perceptrons estimator"):
        onnx_export._expansion(SklearnPerceptron().fit(X, y))


def test_models_beyond_the_single_file_limit_are_refused(monkeypatch):
    X, y = _problem(2)
    models = [
        Perceptron(random_state=0).fit(sp.csr_matrix(X), y).sparsify(),
        VotedPerceptron(prediction="average", kernel="rbf").fit(X, y),
        BudgetPerceptron(budget=5).fit(X, y),
    ]
    with pytest.raises(ValueError, match="2-D"):
        onnx_export.to_onnx(models[0], X[0])
    monkeypatch.setattr(onnx_export, "_MAX_MODEL_BYTES", 8)
    for model in models:
        with pytest.raises(ValueError, match="2 GiB single-file limit"):
            onnx_export.to_onnx(model)


# ----------------------------------------------------------------------------- CLI
def _run_cli(*args):
    from perceptrons.cli import main

    return main([str(arg) for arg in args])


def test_cli_export_round_trips_a_model_file(tmp_path, capsys):
    X, y = _problem(3, counts=True)
    model = MultinomialNaiveBayes().fit(X, np.array(["x", "y", "z"])[y])
    path, out = tmp_path / "model.npz", tmp_path / "model.onnx"
    perceptrons.save(model, path)
    assert _run_cli("export", path, "-o", out) == 0
    assert "outputs label, scores, probabilities" in capsys.readouterr().out
    session = ort.InferenceSession(str(out))
    labels, scores, probabilities = session.run(None, {"X": X})
    np.testing.assert_array_equal(labels, model.predict(X))
    np.testing.assert_allclose(scores, model.decision_function(X), rtol=1e-12)
    np.testing.assert_allclose(probabilities, model.predict_proba(X), atol=1e-9)
    assert _run_cli("export", path, "-o", out, "--dtype", "float32") == 0
    session = ort.InferenceSession(str(out))
    assert session.get_inputs()[0].type == "tensor(float)"


def test_cli_export_refusals(tmp_path, capsys):
    from perceptrons import SequenceTagger

    X, y = _problem(2)
    path = tmp_path / "voted.npz"
    perceptrons.save(VotedPerceptron(prediction="vote").fit(X, y), path)
    out = tmp_path / "voted.onnx"
    assert _run_cli("export", path, "-o", out) == 2
    assert "prediction='vote'" in capsys.readouterr().err
    assert not out.exists()  # nothing half-written
    assert _run_cli("export", path, "-o", path) != 0  # never overwrites the input
    assert "input" in capsys.readouterr().err
    tagger = SequenceTagger(max_epochs=1).fit([["a", "b"]], [["X", "Y"]])
    perceptrons.save(tagger, tmp_path / "tagger.npz")
    assert _run_cli("export", tmp_path / "tagger.npz", "-o", out) == 2
    assert "Viterbi" in capsys.readouterr().err


def test_cli_export_text_model_needs_classifier_only(tmp_path, capsys):
    from perceptrons.io.prepare import split_model

    train = tmp_path / "train.tsv"
    rows = [f"{'a' if i % 2 else 'b'}\tword{i % 2} other{i % 3} common" for i in range(40)]
    train.write_text("\n".join(rows) + "\n")
    model_path, out = tmp_path / "text.npz", tmp_path / "text.onnx"
    assert _run_cli("train", train, "-o", model_path, "--quiet") == 0
    assert _run_cli("export", model_path, "-o", out) == 2
    assert "--classifier-only" in capsys.readouterr().err
    assert _run_cli("export", model_path, "-o", out, "--classifier-only") == 0
    featurizer, estimator = split_model(perceptrons.load(model_path))
    features = featurizer.transform(["word1 other2 common", "word0 other0"])
    labels, _ = ort.InferenceSession(str(out)).run(None, {"X": features.toarray()})
    np.testing.assert_array_equal(labels, estimator.predict(features))


def _without(tmp_path, package, code, *args):
    """``code`` (or, ``code`` None, ``python ARGS``) run in a child process where
    importing ``package`` (None: nothing) fails."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    if package is not None:
        shim = tmp_path / package
        shim.mkdir(parents=True)
        (shim / "__init__.py").write_text(f"raise ImportError('{package} is absent')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    command = [sys.executable, *(["-c", code] if code is not None else []), *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def _cli_refuses(done, *fragments):
    """A child's ``perceptrons`` command failed with one error line holding ``fragments``."""
    assert done.returncode != 0, done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[-3000:]
    assert lines[0].startswith("perceptrons: error: ")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_missing_extra_is_named(tmp_path):
    """Without skl2onnx, the exporter imports and exports our models alone (onnx writes
    them); a scikit-learn Pipeline, which needs skl2onnx, says which extra to install.
    Without onnx, exporting says so."""
    export = (
        "import numpy as np, perceptrons.io.onnx as o\n"
        "from perceptrons import Perceptron\n"
        "model = Perceptron().fit(np.eye(2), [0, 1])\n"
        "graph = o.to_onnx(model)\n"
    )
    done = _without(tmp_path / "a", "skl2onnx", export + "print(graph.graph.output[0].name)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["label"]
    pipeline = "from sklearn.pipeline import make_pipeline\no.to_onnx(make_pipeline(model))"
    done = _without(tmp_path / "b", "skl2onnx", export.replace("graph = ", "") + pipeline)
    assert done.returncode != 0
    assert "ImportError: exporting to ONNX needs skl2onnx" in done.stderr
    assert "pip install 'perceptrons[onnx]'" in done.stderr
    done = _without(tmp_path / "c", "onnx", export)
    assert done.returncode != 0
    assert "ImportError: exporting to ONNX needs onnx" in done.stderr
    assert "pip install 'perceptrons[onnx]'" in done.stderr


# ------------------------------------------------------------------ the check (issue 39)
def _iris_rows():
    """Iris, and 1,000 rows about it three standard deviations wide: many far from
    every training row, where an RBF kernel's values vanish and scores tie."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    return X, y, rng.normal(size=(1000, 4)) * X.std(axis=0) * 3 + X.mean(axis=0)


@pytest.mark.parametrize("prediction", ["last", "average"])
def test_voted_perceptron_ties_break_as_predict(prediction):
    """Where the library's voted scores are exactly 0 (each update adds K + b² = 1 far
    from the support vectors), the graph's are too: it sums as the library does (the
    graph once summed K @ w + b² Σ w, 1e-18 instead of 0, and "last" disagreed with
    predict on 350 of 1,000 rows, 4 of 300 with a precomputed kernel)."""
    X, y, rows = _iris_rows()
    for labels, multiclass in ((y, "native"), (y, "ovr"), (y == 1, "native")):
        model = VotedPerceptron(
            kernel="rbf",
            gamma=5.0,
            max_epochs=3,
            prediction=prediction,
            multiclass=multiclass,
            random_state=0,
        ).fit(X, labels)
        if prediction == "last":  # ties the graph must break alike
            scores = model.decision_function(rows).reshape(len(rows), -1)
            assert np.sum(np.all(scores == 0, axis=1)) > 100
        assert_same_predictions(model, rows)
    gram = np.exp(-5.0 * ((X[:, None] - X[None]) ** 2).sum(axis=2))
    probe = np.exp(-5.0 * ((rows[:300, None] - X[None]) ** 2).sum(axis=2))
    model = VotedPerceptron(kernel="precomputed", prediction=prediction, random_state=0)
    assert_same_predictions(model.fit(gram, y), probe)


def _kinds_to_check():
    """A model of every exportable kind, binary and multiclass, and data it takes."""
    rng = np.random.default_rng(1)
    X = rng.integers(-2, 3, size=(60, 5)).astype(np.float64)
    y3 = rng.integers(0, 3, 60)
    models = []
    for y in (y3, (y3 == 1).astype(int)):
        models += [
            (Perceptron(max_epochs=3, random_state=0), X, y),
            (AveragedPerceptron(update="pa-i", max_epochs=3, random_state=0), X, y),
            (LogisticRegressionSGD(max_epochs=2, random_state=0), X, y),
            (LogisticRegressionBatch(max_iter=20), X, y),
            (MultinomialNaiveBayes(), np.abs(X), y),
            (BernoulliNaiveBayes(), X, y),
            (BernoulliNaiveBayes(binarize=None), (X > 0) * 1.0, y),
            (BudgetPerceptron(budget=8, kernel="rbf", random_state=0), X, y),
            (BudgetPerceptron(budget=8, kernel="poly", degree=3, random_state=0), X, y),
        ]
        for prediction in ("last", "average"):
            for kernel, multiclass in (("rbf", "native"), ("poly", "ovr"), ("linear", "native")):
                voted = VotedPerceptron(
                    kernel=kernel, prediction=prediction, multiclass=multiclass, max_epochs=3
                )
                models.append((voted.set_params(random_state=0, gamma=5.0), X, y))
    return models


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_every_kind_passes_the_check():
    """The check (onnx's checker, an onnxruntime session, its labels equal to predict
    on the probe rows, ties included) passes for every kind the converters write,
    binary and multiclass, float64 and float32."""
    for model, X, y in _kinds_to_check():
        model.fit(X, y)
        for dtype in (np.float64, np.float32):
            onnx_export.to_onnx(model, dtype=dtype, check=True)
    # The probe rows: from the model alone, deterministic, holding ties.
    model = VotedPerceptron(kernel="rbf", gamma=5.0, prediction="last", random_state=0)
    model.fit(X, y)
    first, again = onnx_export.probe_rows(model), onnx_export.probe_rows(model)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert all(rows.shape[1] == X.shape[1] for rows in first)
    ties = sum(int(np.sum(model.decision_function(rows) == 0)) for rows in first)
    assert ties > 10


def _miswritten(monkeypatch):
    """Graphs whose scores are the model's negated: the check must catch them."""
    expansion = onnx_export._expansion

    def negated(model):
        form = expansion(model)
        form.weights, form.offset = -form.weights, -form.offset
        return form

    monkeypatch.setattr(onnx_export, "_expansion", negated)


def test_the_check_refuses_a_graph_whose_labels_differ(tmp_path, capsys, monkeypatch):
    X, y = _problem(3)
    model = Perceptron(random_state=0).fit(X, y)
    path, out = tmp_path / "model.npz", tmp_path / "model.onnx"
    perceptrons.save(model, path)
    _miswritten(monkeypatch)
    with pytest.raises(ValueError, match=r"labels differ from predict on \d+ of \d+ probe rows"):
        onnx_export.to_onnx(model, check=True)
    onnx_export.to_onnx(model)  # unchecked: written as asked
    assert _run_cli("export", path, "-o", out) != 0
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "labels differ from predict" in error[0]
    assert not out.exists()
    assert _run_cli("export", path, "-o", out, "--no-check") == 0
    assert "unchecked" in capsys.readouterr().out


def test_refusals_up_front(tmp_path):
    """Labels ONNX cannot carry, opsets out of range (per kind), dtypes and samples of
    the wrong width are refused in one line, never a graph that fails later (uint64
    labels from 2**63 were wrapped into int64; a 3-column sample of a 4-feature model
    made a graph that failed at run time; np.dtype('float32') built a float64 input)."""
    X, y = _problem(2, d=4)
    huge = np.array([2**63, 2**64 - 1], dtype=np.uint64)
    with pytest.raises(ValueError, match=r"18446744073709551615 \(uint64\) is beyond ONNX"):
        onnx_export.to_onnx(Perceptron(random_state=0).fit(X, huge[y]))
    small = np.array([3, 2**63 - 1], dtype=np.uint64)
    model = Perceptron(random_state=0).fit(X, small[y])
    onnx_export.to_onnx(model, check=True)  # within int64: exported, and equal
    for labels, fragment in (
        (np.array([b"a", b"b"]), "dtype |S1"),
        (np.array([1, "a"], dtype=object), "dtype object"),
        (np.array([1 + 1j, 2j]), "dtype complex128"),
    ):
        with pytest.raises(ValueError, match=fragment.replace("|", r"\|")):
            onnx_export.label_element_type(labels)
    if np.finfo(np.longdouble).eps < np.finfo(np.float64).eps:
        wide = np.array([1, 1 + np.finfo(np.longdouble).eps], dtype=np.longdouble)
        with pytest.raises(ValueError, match="is not a double"):
            onnx_export.label_element_type(wide)
    model = Perceptron(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="X has 3 columns, but Perceptron takes 4 features"):
        onnx_export.to_onnx(model, np.zeros((1, 3)))
    for dtype in (np.dtype("float32"), "float32", np.float32):
        graph = onnx_export.to_onnx(model, dtype=dtype)
        assert graph.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    for dtype in ("bogus", np.dtype("int64"), np.float16):
        with pytest.raises(ValueError, match="dtype must be float32 or float64"):
            onnx_export.to_onnx(model, dtype=dtype)
    voted = VotedPerceptron(prediction="last", random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=r"target_opset 10 is outside 11\.\..*VotedPerceptron"):
        onnx_export.to_onnx(voted, target_opset=10)
    onnx_export.to_onnx(voted, target_opset=11, check=True)
    pytest.importorskip("skl2onnx", reason="the [onnx] extra (skl2onnx) is not installed")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    pipeline = make_pipeline(StandardScaler(), Perceptron(random_state=0)).fit(X, y)
    with pytest.raises(ValueError, match="target_opset 99 is outside"):
        onnx_export.to_onnx(pipeline, target_opset=99)
    onnx_export.to_onnx(pipeline, check=True)


def test_cli_export_refusals_are_one_line_and_write_nothing(tmp_path):
    """In a child process (a graph onnxruntime rejects could crash it): uint64 labels
    from 2**63, opsets 1 and 99 (7 for an RBF budget model), float labels in a float32
    graph (kept as doubles: the file passes the check), a missing onnxruntime."""
    X, y = _problem(2, d=4)
    files = {
        "huge": Perceptron(random_state=0).fit(X, np.array([2**63, 5], dtype=np.uint64)[y]),
        "floats": Perceptron(random_state=0).fit(X, np.array([1.0, -2.0])[y]),
        "budget": BudgetPerceptron(budget=5, kernel="rbf", random_state=0).fit(X, y),
    }
    for name, model in files.items():
        perceptrons.save(model, tmp_path / f"{name}.npz")
    out = tmp_path / "out.onnx"

    def export(model, *options, without=None):
        args = ["-m", "perceptrons", "export", tmp_path / f"{model}.npz", "-o", out, *options]
        return _without(tmp_path / f"child-{model}-{len(options)}", without, None, *args)

    _cli_refuses(export("huge"), "9223372036854775808 (uint64) is beyond ONNX's int64")
    _cli_refuses(export("floats", "--opset", "1"), "target_opset 1 is outside 9..")
    _cli_refuses(export("budget", "--opset", "7"), "target_opset 7 is outside 9..")
    _cli_refuses(export("budget", "--opset", "99"), "target_opset 99 is outside 9..")
    _cli_refuses(export("floats", without="onnxruntime"), "needs onnxruntime", "--no-check")
    assert not out.exists()
    done = export("floats", "--dtype", "float32")
    assert done.returncode == 0, done.stderr
    session = ort.InferenceSession(str(out))
    labels, _ = session.run(None, {"X": X.astype(np.float32)})
    assert session.get_inputs()[0].type == "tensor(float)"
    assert labels.dtype == np.float64 and set(labels) <= {1.0, -2.0}
