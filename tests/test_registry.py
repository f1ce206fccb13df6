"""The one registry of model classes (perceptrons._registry) and what it drives: the
package's public names, the model files, the command line's --algorithm, the ONNX
converters and the learner core of each kind that has one."""

import importlib
import inspect

import numpy as np
import pytest

import perceptrons
from perceptrons._registry import ALGORITHMS, MODELS, kind_of
from perceptrons.cli import main
from perceptrons.cli._parser import build_parser
from perceptrons.io import persist

SMALL = "".join(
    f"{label} 1:{0.1 * (i % 7) + (label + 1) / 2:.1f} 2:{0.3 * (i % 3):.1f} 4:1\n"
    for i, label in enumerate([1, -1, 3] * 12)
)


def test_the_public_classes_are_the_registrys():
    classes = {name for name in perceptrons.__all__ if inspect.isclass(getattr(perceptrons, name))}
    registered = {kind.name for kind in MODELS}
    # MemoryBudgetError is an exception, not a model.
    assert classes - {"MemoryBudgetError"} == registered
    for kind in MODELS:
        assert getattr(perceptrons, kind.name) is getattr(
            importlib.import_module(kind.module), kind.name
        )


def test_kind_of_finds_an_entry_and_refuses_another_name():
    assert kind_of("BudgetPerceptron").algorithm == "budget"
    with pytest.raises(KeyError):
        kind_of("SGDClassifier")


def test_the_files_name_the_registrys_classes():
    saved = {kind.name for kind in MODELS if kind.saves and kind.role != "featurizer"}
    assert set(persist._REGISTRY.estimators) == saved
    assert set(persist._REGISTRY.featurizers) == {
        kind.name for kind in MODELS if kind.saves and kind.role == "featurizer"
    }


def test_the_command_line_trains_every_registered_classifier():
    parser = build_parser()
    train = parser._subparsers._group_actions[0].choices["train"]  # type: ignore[union-attr]
    (algorithm,) = [a for a in train._actions if a.dest == "algorithm"]
    assert tuple(algorithm.choices) == tuple(ALGORITHMS)
    trainable = {kind.name for kind in MODELS if kind.role == "classifier"}
    assert set(ALGORITHMS.values()) == trainable


def test_the_budget_perceptrons_removal_rules_are_the_parsers():
    from perceptrons.budget import RULES

    parser = build_parser()
    train = parser._subparsers._group_actions[0].choices["train"]  # type: ignore[union-attr]
    (removal,) = [a for a in train._actions if a.dest == "removal"]
    assert set(removal.choices) == set(RULES)


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_every_algorithm_trains_saves_loads_and_predicts(tmp_path, algorithm, capsys):
    """From the command line, as the registry names it; the file loads as the estimator
    (the library) and as its core (the command line), which predict alike."""
    data, model, out = tmp_path / "small.svm", tmp_path / "m.npz", tmp_path / "labels"
    data.write_text(SMALL)
    assert main(["train", str(data), "-o", str(model), "--algorithm", algorithm, "--quiet"]) == 0
    assert main(["predict", str(model), str(data), "-o", str(out)]) == 0
    kind = kind_of(ALGORITHMS[algorithm])
    assert persist.describe(model)["algorithm"] == kind.name
    estimator = persist.load(model)
    assert type(estimator) is getattr(perceptrons, kind.name)
    core = persist.load(model, core=True)
    assert type(core).__name__ == kind.name
    assert type(core).__module__ == (kind.core or kind.module)
    X = perceptrons.io.formats.read_data(str(data), labels=True).X
    labels = [str(label) for label in core.predict(X)]
    assert labels == out.read_text().split()
    np.testing.assert_array_equal(core.predict(X), estimator.predict(X))


CORE_CLASSIFIERS = [k for k in MODELS if k.core and k.role == "classifier"]


@pytest.mark.parametrize("kind", CORE_CLASSIFIERS, ids=lambda k: k.name)
def test_an_estimator_is_its_core_under_scikit_learns_face(kind):
    from sklearn.base import BaseEstimator, clone

    core = getattr(importlib.import_module(kind.core), kind.name)
    estimator = getattr(perceptrons, kind.name)
    assert issubclass(estimator, core) and estimator is not core
    assert not issubclass(core, BaseEstimator)
    assert core().get_params() == estimator().get_params()
    # A numeric parameter of each: epochs, smoothing, iterations.
    name = next(p for p in ("max_epochs", "alpha", "max_iter") if p in core().get_params())
    assert clone(estimator(**{name: 3})).get_params()[name] == 3
    # The core's parameters are set as the estimator's are, and refused alike.
    learner = core().set_params(**{name: 4})
    assert getattr(learner, name) == 4
    with pytest.raises(ValueError, match="Invalid parameter 'nope'"):
        learner.set_params(nope=1)


@pytest.mark.parametrize("kind", CORE_CLASSIFIERS, ids=lambda k: k.name)
def test_the_core_trains_the_estimators_model_bit_for_bit(kind):
    """The same parameters, the same data: the same weights and history, dense and
    sparse, the core validating input with NumPy alone."""
    import scipy.sparse as sp

    core = getattr(importlib.import_module(kind.core), kind.name)
    estimator = getattr(perceptrons, kind.name)
    params = {
        k: v for k, v in {"random_state": 1, "max_epochs": 3}.items() if k in core().get_params()
    }
    rng = np.random.RandomState(0)
    X = np.abs(rng.randn(60, 5))  # counts for naive Bayes
    y = np.array(["a", "b", "c"])[rng.randint(0, 3, 60)]
    for data in (X, sp.csr_matrix(np.where(X > 0.7, X, 0.0))):
        ours = core(**params).fit(data, y)
        theirs = estimator(**params).fit(data, y)
        np.testing.assert_array_equal(ours.decision_function(data), theirs.decision_function(data))
        if hasattr(theirs, "coef_"):  # a linear model (not the kernel perceptrons)
            np.testing.assert_array_equal(ours.coef_, theirs.coef_)
            np.testing.assert_array_equal(ours.intercept_, theirs.intercept_)
        assert getattr(ours, "history_", None) == getattr(theirs, "history_", None)
        assert ours.score(data, y) == theirs.score(data, y)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"weighting": "tf", "sublinear_tf": True},
        {"tokenizer": "pairs"},
        {"vocabulary": "fit", "ngram_range": (1, 2)},
    ],
    ids=str,
)
def test_the_core_featurizer_gives_the_estimators_features(params):
    from sklearn.base import BaseEstimator

    from perceptrons.text import TextFeaturizer

    texts = ["good film", "Bad film, bad plot", "été chaud", "a:1 b:2", "good plot"]
    assert not issubclass(TextFeaturizer, BaseEstimator)
    assert issubclass(perceptrons.TextFeaturizer, TextFeaturizer)
    ours = TextFeaturizer(**params).fit_transform(texts)
    theirs = perceptrons.TextFeaturizer(**params).fit_transform(texts)
    assert (ours != theirs).nnz == 0 and ours.shape == theirs.shape


def test_the_core_refuses_bad_input_in_one_line():
    from perceptrons.linear import Perceptron

    with pytest.raises(ValueError, match="NaN or infinity"):
        Perceptron().fit(np.array([[np.nan], [1.0]]), [0, 1])
    with pytest.raises(ValueError, match="2-D"):
        Perceptron().fit(np.ones(3), [0, 1, 0])
    with pytest.raises(ValueError, match="real numbers"):
        Perceptron().fit(np.array([["a"], ["b"]]), [0, 1])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        Perceptron().fit(np.ones((3, 2)), [0, 1])
    model = Perceptron().fit(np.eye(2), [0, 1])
    with pytest.raises(ValueError, match="X has 3 features, but Perceptron is expecting 2"):
        model.predict(np.ones((1, 3)))
    with pytest.raises(ValueError, match="not fitted"):
        Perceptron().predict(np.eye(2))


def test_exports_are_the_registrys():
    pytest.importorskip("skl2onnx")
    from perceptrons.io import onnx

    assert set(onnx.EXPORTABLE) == {kind.name for kind in MODELS if kind.exports}
    # Every kind is either exported or refused with a reason.
    for kind in MODELS:
        assert bool(kind.exports) != (kind.name in onnx.EXPORT_REFUSALS), kind.name


@pytest.mark.parametrize("kind", [k for k in MODELS if k.core], ids=lambda k: k.name)
def test_the_face_replaces_only_scikit_learns_protocol(kind):
    """What scikit-learn's bases put before the core's methods: its parameters protocol
    and ClassifierMixin's score (the same accuracy), nothing the core defines else (a
    namesake such as BaseEstimator._validate_params would silently replace the core's)."""
    core = getattr(importlib.import_module(kind.core), kind.name)
    face = getattr(importlib.import_module(kind.module), kind.name)
    shadowed = set()
    for name in dir(core):
        if name.startswith("__") or not callable(getattr(core, name)):
            continue
        owner = next(c for c in face.__mro__ if name in c.__dict__)
        if owner.__module__.startswith("sklearn"):
            shadowed.add(name)
    assert shadowed <= {"get_params", "set_params", "score"}
