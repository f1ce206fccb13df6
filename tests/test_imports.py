"""What importing the package and running a command load: only what they use.

``import perceptrons`` binds its public names lazily (:mod:`perceptrons._lazy`), the
command's parser imports no command's dependencies, and each command imports its own
modules; a model file's class is imported when the file names it. Checked in fresh
interpreters, by the modules loaded at exit (never by timing).
"""

import ast
import importlib
import inspect
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import perceptrons
import perceptrons.io.formats
import perceptrons.linear
import perceptrons.parallel
import perceptrons.reference
from perceptrons._lazy import LazyClasses
from perceptrons._registry import MODELS

SOURCE_ROOT = str(Path(perceptrons.__file__).parent.parent)

# What a light start must not load: scikit-learn (and through it SciPy's stats and
# pandas), SciPy, Numba and the compiled kernels, NumPy itself.
HEAVY = ("sklearn", "scipy", "numba", "numpy", "pandas", "perceptrons._kernels")
# What training a classifier on a numeric file has no use for.
NOT_FOR_A_CLASSIFIER = (
    "perceptrons.tagger",
    "perceptrons.sequence_features",
    "perceptrons._kernels.sequence",
    "perceptrons._kernels.sequence_features",
    "perceptrons.voted",
    "perceptrons._kernels.voted",
    "perceptrons.parallel._mixing",
    "perceptrons._kernels.mixing",
    "dask",
    "distributed",
    "matplotlib",
)


def loaded_modules(code: str) -> set[str]:
    """The modules loaded once ``code`` has run in a fresh interpreter (this source first
    on the path), however it ended (``main`` returns, argparse exits)."""
    script = textwrap.dedent(
        """
        import atexit, json, sys

        atexit.register(lambda: print("MODULES=" + json.dumps(sorted(sys.modules))))
        """
    ) + textwrap.dedent(code)
    env = {k: v for k, v in os.environ.items() if k != "PERCEPTRONS_DEBUG"}
    env["PYTHONPATH"] = os.pathsep.join([SOURCE_ROOT, env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("MODULES=")]
    assert lines, done.stderr
    return set(json.loads(lines[-1].removeprefix("MODULES=")))


def among(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    """The modules that are one of ``prefixes`` or inside one of them."""
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


def run_commands(*commands: tuple[str, ...]) -> str:
    """Code that runs each ``perceptrons`` command in turn, ending at the first failure."""
    calls = "".join(f"    main({list(argv)!r}),\n" for argv in commands)
    return f"import sys\nfrom perceptrons.cli import main\nsys.exit(max(\n{calls}))\n"


def test_the_check_sees_a_heavy_import():
    # So that an empty or broken probe cannot pass the tests below.
    assert "numpy" in among(loaded_modules("import numpy"), HEAVY)


def test_import_perceptrons_loads_nothing_heavy():
    modules = loaded_modules("import perceptrons\nperceptrons.__version__")
    assert "perceptrons" in modules
    assert among(modules, HEAVY) == []


@pytest.mark.parametrize(
    "argv",
    [
        ("--version",),
        ("--help",),
        ("train", "--help"),
        ("predict", "--help"),
        ("tag", "train", "--help"),
        ("train",),  # a usage error: the required arguments missing
        ("train", "data.svm", "-o", "m.npz", "--n-features", "0"),  # a refused value
    ],
    ids=" ".join,
)
def test_the_parser_alone_loads_nothing_heavy(argv):
    modules = loaded_modules(run_commands(argv))
    assert "perceptrons.cli._parser" in modules
    assert among(modules, HEAVY) == []


def test_a_classifiers_train_predict_inspect_load_no_tagger_voted_dask_or_plots(tmp_path):
    data = tmp_path / "small.svm"
    data.write_text("1 1:0.5 3:1\n-1 2:1 4:0.25\n1 1:1 4:1\n-1 2:0.5 3:0.1\n")
    model, out = tmp_path / "m.npz", tmp_path / "out"
    modules = loaded_modules(
        run_commands(
            ("train", str(data), "-o", str(model), "--quiet", "--epochs", "2"),
            ("predict", str(model), str(data), "-o", str(out)),
            ("inspect", str(model), "--json"),
        )
    )
    # The commands ran (so the probe saw real work), one after the other.
    labels = out.read_text().split()
    assert len(labels) == 4 and set(labels) <= {"1", "-1"}
    assert "perceptrons.linear.perceptron" in modules
    assert among(modules, NOT_FOR_A_CLASSIFIER) == []


# What a command on the learner core must not load: scikit-learn, and SciPy's statistics
# and pandas, which scikit-learn would import (a second and a half before any work).
NOT_FOR_THE_CORE = ("sklearn", "scipy.stats", "pandas")

SMALL_SVMLIGHT = "1 1:0.5 3:1\n-1 2:1 4:0.25\n1 1:1 4:1\n-1 2:0.5 3:0.1\n3 1:0.2 2:0.2\n"


@pytest.mark.parametrize(
    "train_options",
    [
        (),
        ("--algorithm", "averaged", "--update", "arow"),
        ("--algorithm", "logistic"),
        ("--algorithm", "averaged", "--stream", "--classes=-1,1,3"),
        ("--algorithm", "perceptron", "--dev", "{data}", "--update", "pa-i", "--sparsify", "0"),
        ("--algorithm", "multinomial-nb"),
        ("--algorithm", "bernoulli-nb", "--stream", "--classes=-1,1,3"),
        ("--algorithm", "logistic-batch"),
    ],
    ids=" ".join,
)
def test_the_commands_of_a_linear_model_import_no_scikit_learn(tmp_path, train_options):
    """train, predict, evaluate and inspect a linear model on a numeric file: the learner
    core (perceptrons.linear), never scikit-learn, SciPy's statistics or pandas."""
    data = tmp_path / "small.svm"
    data.write_text(SMALL_SVMLIGHT)
    _check_the_core_commands(tmp_path, data, train_options)


# ASCII documents (the compiled tokenizer), documents beyond ASCII (the core's analyzer
# and hash: Unicode case, combining marks, digits and whitespace), name:value pairs.
TEXT_FILES = {
    "small.txt": "".join(
        f"__label__{label} {words}\n"
        for label, words in [
            ("a", "good film"),
            ("b", "bad film"),
            ("a", "good plot"),
            ("b", "dull acting"),
            ("c", "a long film"),
        ]
    ),
    "unicode.txt": "".join(
        f"__label__{label} {words}\n"
        for label, words in [
            ("a", "Caf\u00c9 cr\u00e8me bien"),
            ("b", "\u0130stanbul \u03a3\u039f\u03a6\u0399\u0391 film"),
            ("a", "good plot"),
            ("b", "nai\u0308ve\u3000acting \u0663\u0664"),
            ("c", "a long film"),
        ]
    ),
    "small.vw": "1 | a:1 b:2\n-1 | c:1 b:0.5\n1 | a:2\n-1 | c:3\n3 | d:1\n",
    "small.counts": "a:1 b:2 #label#:pos\nc:1 #label#:neg\na:2 #label#:pos\n"
    "c:3 b:1 #label#:neg\nd:1 #label#:mid\n",
}


@pytest.mark.parametrize("name", sorted(TEXT_FILES))
@pytest.mark.parametrize("train_options", [(), ("--stream", "--weighting", "tf")], ids=" ".join)
def test_the_commands_of_a_text_model_import_no_scikit_learn(tmp_path, name, train_options):
    """The same for text: the core's featurizer and pipeline (perceptrons.text)."""
    data = tmp_path / name
    data.write_text(TEXT_FILES[name], encoding="utf-8")
    if name.endswith(".counts") and train_options:
        train_options = (*train_options, "--classes=mid,neg,pos")
    _check_the_core_commands(tmp_path, data, train_options)


@pytest.mark.parametrize("name", ["small.txt", "unicode.txt"])
def test_the_commands_of_a_learned_vocabulary_import_no_scikit_learn(tmp_path, name):
    """The same with a vocabulary learned from the text (--features vocabulary): the
    core's own CountVectorizer (perceptrons.text._vocabulary)."""
    data = tmp_path / name
    data.write_text(TEXT_FILES[name], encoding="utf-8")
    _check_the_core_commands(tmp_path, data, ("--features", "vocabulary"))


def _check_the_core_commands(tmp_path, data, train_options):
    model, out, report = tmp_path / "m.npz", tmp_path / "out", tmp_path / "report.json"
    options = tuple(option.format(data=data) for option in train_options)
    modules = loaded_modules(
        run_commands(
            ("train", str(data), "-o", str(model), "--quiet", *options),
            ("predict", str(model), str(data), "-o", str(out), "--scores"),
            ("evaluate", str(model), str(data), "--json", "-o", str(report)),
            ("inspect", str(model), "--json"),
        )
    )
    # The commands ran, one after the other (so the probe saw real work).
    assert len(out.read_text().splitlines()) == 5
    assert json.loads(report.read_text())["examples"] == 5
    assert among(modules, ("perceptrons.linear", "perceptrons.probabilistic"))
    assert among(modules, NOT_FOR_THE_CORE) == []
    faces = ("perceptrons.perceptron", "perceptrons.features", "perceptrons.naive_bayes")
    assert among(modules, (*faces, "perceptrons.logistic_batch")) == []


PACKAGES = [
    perceptrons,
    perceptrons.io.formats,
    perceptrons.linear,
    perceptrons.parallel,
    perceptrons.reference,
]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_every_public_name_resolves_to_its_defining_modules_object(package):
    assert package.__all__
    for name in package.__all__:
        value = getattr(package, name)
        assert name in dir(package)
        exec(f"from {package.__name__} import {name} as imported", namespace := {})
        assert namespace["imported"] is value
        defining = getattr(value, "__module__", None)
        if defining is not None and (inspect.isclass(value) or inspect.isfunction(value)):
            assert getattr(importlib.import_module(defining), name) is value


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_an_unknown_name_is_an_attribute_error(package):
    with pytest.raises(AttributeError, match=f"module '{package.__name__}' has no attribute"):
        package.no_such_name  # noqa: B018
    assert not hasattr(package, "no_such_name")


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_type_checkers_see_the_names_the_package_loads(package):
    """The ``if TYPE_CHECKING:`` imports (what mypy and IDEs read) are exactly the lazy
    names, each from the module it is loaded from."""
    tree = ast.parse(Path(package.__file__).read_text(encoding="utf-8"))
    seen = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    for alias in statement.names:
                        seen[alias.asname or alias.name] = statement.module
    assert seen == package._ORIGINS


def test_lazy_classes_import_a_class_when_it_is_looked_up_only():
    modules = loaded_modules(
        """
        from perceptrons._lazy import LazyClasses
        classes = LazyClasses(
            {"SequenceTagger": "perceptrons.tagger", "UserError": "perceptrons.cli._common"}
        )
        assert "SequenceTagger" in classes and "Nope" not in classes
        assert sorted(classes) == ["SequenceTagger", "UserError"] and len(classes) == 2
        assert classes.get("Nope") is None
        assert classes["UserError"].__name__ == "UserError"
        """
    )
    assert "perceptrons.cli._common" in modules
    assert "perceptrons.tagger" not in modules


def test_lazy_classes_refuse_what_is_not_a_class():
    classes = LazyClasses({"load": "perceptrons.io.persist"})
    with pytest.raises(TypeError, match="not a class"):
        classes["load"]
    with pytest.raises(KeyError):
        classes["Perceptron"]


def test_is_tagger_tells_a_tagger_from_a_classifier():
    from perceptrons import Perceptron, SequenceTagger
    from perceptrons.cli.tag import is_tagger

    assert is_tagger(SequenceTagger())
    assert not is_tagger(Perceptron())
    assert not is_tagger(object())


def test_the_tag_commands_import_no_scikit_learn(tmp_path):
    """tag train, evaluate and predict: the tagger's learner core (perceptrons.sequence)."""
    corpus = tmp_path / "small.conll"
    corpus.write_text(
        "He PRP B-NP\nreckons VBZ B-VP\nthe DT B-NP\ndeficit NN I-NP\n. . O\n\n"
        "Prices NNS B-NP\nrose VBD B-VP\n. . O\n\n"
    )
    model, out = tmp_path / "tagger.npz", tmp_path / "tagged.conll"
    modules = loaded_modules(
        run_commands(
            ("tag", "train", str(corpus), "-o", str(model), "--epochs", "2", "--quiet"),
            ("tag", "evaluate", str(model), str(corpus), "--json"),
            ("tag", "predict", str(model), str(corpus), "-o", str(out)),
        )
    )
    assert len([line for line in out.read_text().splitlines() if line.strip()]) == 8
    assert "perceptrons.sequence.tagger" in modules
    assert among(modules, NOT_FOR_THE_CORE) == []
    assert among(modules, ("perceptrons.tagger", "perceptrons.sequence_features")) == []


# Each model kind with an ONNX converter, and the options it trains with from the command
# line (the voted perceptron exports its "average" prediction, not the vote).
EXPORTED = {
    kind.algorithm: ("--prediction", "average") if kind.exports == "voted" else ()
    for kind in MODELS
    if kind.exports and kind.algorithm
}


@pytest.mark.parametrize("algorithm", sorted(EXPORTED))
def test_export_imports_no_scikit_learn(tmp_path, algorithm):
    """export of every exportable kind (linear, binarized, voted, budget forms) writes the
    graph with onnx alone: neither scikit-learn nor skl2onnx, which imports it."""
    pytest.importorskip("onnx", reason="the [onnx] extra (onnx) is not installed")
    from perceptrons.cli import main

    data = tmp_path / "small.svm"
    data.write_text(SMALL_SVMLIGHT)
    model, graph = tmp_path / "m.npz", tmp_path / "m.onnx"
    train = ("train", str(data), "-o", str(model), "--quiet", "--algorithm", algorithm)
    assert main([*train, *EXPORTED[algorithm]]) == 0  # here: only export is probed
    # The check before writing predicts with the model too (a voted perceptron's sparse
    # support by the compiled sparse product): still no scikit-learn.
    modules = loaded_modules(run_commands(("export", str(model), "-o", str(graph))))
    assert graph.stat().st_size > 0
    assert "onnx" in modules
    assert among(modules, (*NOT_FOR_THE_CORE, "skl2onnx")) == []


def test_export_of_a_text_models_classifier_imports_no_scikit_learn(tmp_path):
    pytest.importorskip("onnx", reason="the [onnx] extra (onnx) is not installed")
    data = tmp_path / "small.txt"
    data.write_text(TEXT_FILES["small.txt"])
    model, graph = tmp_path / "m.npz", tmp_path / "m.onnx"
    modules = loaded_modules(
        run_commands(
            ("train", str(data), "-o", str(model), "--quiet"),
            ("export", str(model), "-o", str(graph), "--classifier-only"),
        )
    )
    assert graph.stat().st_size > 0
    assert among(modules, (*NOT_FOR_THE_CORE, "skl2onnx")) == []


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("small.svm", ("--positive", "1")),
        # Hashed words, and diagnose's default: a vocabulary fitted on the text
        # (perceptrons.text._vocabulary, not scikit-learn's CountVectorizer).
        ("small.txt", ("--positive", "a", "--no-intercept", "--features", "hashing")),
        ("small.txt", ("--positive", "a")),
    ],
    ids=["numeric", "text", "text-vocabulary"],
)
def test_diagnose_imports_no_scikit_learn(tmp_path, name, options):
    """diagnose: the library's own SVM solver and the perceptron's learner core."""
    data = tmp_path / name
    data.write_text(SMALL_SVMLIGHT if name.endswith(".svm") else TEXT_FILES[name])
    report = tmp_path / "report.json"
    argv = ["diagnose", str(data), "--json", *options]
    modules = loaded_modules(
        f"""
        import contextlib, sys
        from perceptrons.cli import main

        with open({str(report)!r}, "w") as out, contextlib.redirect_stdout(out):
            status = main({argv!r})
        sys.exit(status)
        """
    )
    assert json.loads(report.read_text())["n_samples"] == 5
    assert "perceptrons.linear.perceptron" in modules
    assert among(modules, NOT_FOR_THE_CORE) == []
    assert among(modules, ("perceptrons.perceptron",)) == []
