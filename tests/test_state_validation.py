"""One validation for parameters and state, from the user or from a file (issue 26):
what ``fit`` refuses, ``load`` refuses, with the same one line; and scores that
overflow stop training, like weights that overflow, and are refused at prediction."""

import json
import os
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

import perceptrons as P
from perceptrons._checked import pack_strings
from perceptrons.io._persist_format import META, checksum

HUGE = np.array([[1e308, 1e308], [-1e308, -1e308], [1e308, -1e308], [-1e308, 1e308]])
HUGE_Y = np.array([0, 1, 0, 1])
SMALL = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])


def _one_line(error: pytest.ExceptionInfo) -> str:
    text = str(error.value)
    assert "\n" not in text, text
    return text


def _tamper(path, edit):
    """Rewrite the model file at ``path``: ``edit(meta, arrays)`` changes the metadata
    and arrays in place; the checksum is recomputed (it only detects damage)."""
    with np.load(path, allow_pickle=False) as stored:
        arrays = {name: stored[name] for name in stored.files}
    meta = json.loads(arrays.pop(META).tobytes().decode("utf-8"))
    edit(meta, arrays)
    arrays[META] = _sealed(meta, arrays)
    os.remove(path)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, array in arrays.items():
            with archive.open(name + ".npy", "w") as member:
                np.lib.format.write_array(member, np.asarray(array), allow_pickle=False)


def _sealed(meta, arrays):
    """The metadata with its checksum, as the format documents it; NaN and infinities
    written as Python's json writes them (a hostile file may hold them)."""
    meta = {key: value for key, value in meta.items() if key != "sha256"}
    meta["sha256"] = "0" * 64
    blank = json.dumps(meta, ensure_ascii=False).encode("utf-8")
    digest = checksum({**arrays, META: np.frombuffer(blank, dtype=np.uint8)})
    return np.frombuffer(blank[:-66] + digest.encode("ascii") + blank[-2:], dtype=np.uint8)


def _refused(path, *fragments):
    with pytest.raises(ValueError) as error:
        P.load(path)
    text = _one_line(error)
    assert text.startswith(f"cannot load {path}"), text
    for fragment in fragments:
        assert fragment in text, text


# ------------------------------------------------------------------ parameters
def test_class_weight_minus_infinity_is_refused_by_fit_and_by_load(tmp_path):
    with pytest.raises(ValueError) as error:
        P.MultinomialNaiveBayes(class_weight={1: -np.inf}).fit(SMALL, [0, 1, 0, 1])
    assert "class_weight" in _one_line(error)
    path = tmp_path / "nb.npz"
    P.save(P.MultinomialNaiveBayes(class_weight={1: 2.0}).fit(SMALL, [0, 1, 0, 1]), path)
    P.load(path)  # the untampered file loads

    def minus_infinity(meta, arrays):
        meta["params"]["class_weight"]["__items__"][0][1] = -np.inf

    _tamper(path, minus_infinity)
    _refused(path, "class_weight")


def test_class_weight_naming_no_class_is_refused_by_load(tmp_path):
    path = tmp_path / "batch.npz"
    P.save(P.LogisticRegressionBatch(class_weight={1: 2.0}).fit(SMALL, [0, 1, 0, 1]), path)

    def unknown_label(meta, arrays):
        meta["params"]["class_weight"]["__items__"][0][0] = 7

    _tamper(path, unknown_label)
    _refused(path, "class_weight names labels that are not classes")


def test_duplicate_feature_names_are_refused_by_fit_and_by_load(tmp_path):
    frame = pd.DataFrame(SMALL, columns=["a", "a"])
    with pytest.raises(ValueError):
        P.Perceptron().fit(frame, [0, 1, 0, 1])
    path = tmp_path / "named.npz"
    P.save(P.Perceptron().fit(pd.DataFrame(SMALL, columns=["a", "b"]), [0, 1, 0, 1]), path)

    def duplicate(meta, arrays):
        text, ends = pack_strings(["a", "a"], "feature_names_in_")
        arrays["estimator/feature_names_in_text"] = text
        arrays["estimator/feature_names_in_ends"] = ends

    _tamper(path, duplicate)
    _refused(path, "feature names must be distinct", "'a'")


def test_integer_tags_are_refused_by_fit_and_by_load(tmp_path):
    sentences = [["the", "dog"], ["a", "cat"]]
    with pytest.raises(ValueError) as error:
        P.SequenceTagger(max_epochs=1).fit(sentences, [[0, 1], [0, 1]])
    assert "not a str" in _one_line(error)
    path = tmp_path / "tagger.npz"
    P.save(P.SequenceTagger(max_epochs=1).fit(sentences, [["D", "N"], ["D", "N"]]), path)

    def integer_tags(meta, arrays):
        arrays["estimator/classes"] = np.array([0, 1], dtype=np.int64)
        meta["classes"]["dtype"] = "<i8"

    _tamper(path, integer_tags)
    _refused(path, "not a str")


# ------------------------------------------------------------ derived state
def test_naive_bayes_with_no_example_counted_is_refused_by_fit_and_by_load(tmp_path):
    with pytest.raises(ValueError) as error:
        P.MultinomialNaiveBayes(class_weight={0: 0.0, 1: 0.0}).fit(SMALL, [0, 1, 0, 1])
    assert "class counts are all 0" in _one_line(error)
    path = tmp_path / "nb.npz"
    P.save(P.MultinomialNaiveBayes().fit(SMALL, [0, 1, 0, 1]), path)

    def nothing_counted(meta, arrays):
        arrays["estimator/class_count"] = np.zeros(2)
        arrays["estimator/feature_count"] = np.zeros((2, 2))
        meta["state"]["n_seen"] = 0

    _tamper(path, nothing_counted)
    _refused(path, "class counts are all 0")


def test_naive_bayes_counts_that_overflow_the_probabilities_are_refused(tmp_path):
    path = tmp_path / "nb.npz"
    P.save(P.MultinomialNaiveBayes().fit(SMALL, [0, 1, 0, 1]), path)

    def huge_counts(meta, arrays):
        # Each count finite; their sum, the denominator of P(x_j | c), is not.
        arrays["estimator/feature_count"] = np.array([[1e308, 1e308], [1.0, 1.0]])

    _tamper(path, huge_counts)
    _refused(path, "non-finite scores")


def test_weights_of_1e308_are_refused_by_load(tmp_path):
    path = tmp_path / "perceptron.npz"
    P.save(P.Perceptron(random_state=0).fit(SMALL, [0, 1, 0, 1]), path)

    def huge_weights(meta, arrays):
        arrays["estimator/weights"] = np.array([1e308, 1e308, 0.0])

    _tamper(path, huge_weights)
    _refused(path, "non-finite scores", "[-1, 1]")


def test_averaged_weights_that_overflow_are_refused_by_load(tmp_path):
    path = tmp_path / "averaged.npz"
    P.save(P.AveragedPerceptron(random_state=0).fit(SMALL, [0, 1, 0, 1]), path)

    def huge_average(meta, arrays):
        # weights - aux / count: each finite, the mean overflows.
        arrays["estimator/weights"] = np.array([1e308, 0.0, 0.0])
        arrays["estimator/aux"] = np.array([-1e308, 0.0, 0.0])
        meta["state"]["count"] = 0.5

    _tamper(path, huge_average)
    _refused(path, "non-finite scores")


def test_a_model_of_moderate_weights_still_loads(tmp_path):
    """No false refusal: a model of large but harmless weights loads and predicts."""
    path = tmp_path / "large.npz"
    P.save(P.Perceptron(random_state=0).fit(SMALL * 1e150, [0, 1, 0, 1]), path)
    again = P.load(path)
    assert np.isfinite(again.decision_function(SMALL * 1e150)).all()


# ------------------------------------------------ non-finite scores in training
ONLINE = [
    (P.Perceptron, {}),
    (P.Perceptron, {"margin": 1.0}),
    *[(P.Perceptron, {"update": rule}) for rule in ("pa", "pa-i", "pa-ii", "mira")],
    *[(P.Perceptron, {"update": rule}) for rule in ("romma", "aggressive-romma")],
    (P.AveragedPerceptron, {}),
    (P.AveragedPerceptron, {"update": "pa-i"}),
    (P.LogisticRegressionSGD, {}),
    (P.VotedPerceptron, {}),
    (P.VotedPerceptron, {"kernel": "poly", "degree": 1, "gamma": 1.0, "coef0": 0.0}),
    (P.BudgetPerceptron, {"degree": 1, "gamma": 1.0, "coef0": 0.0}),
    (P.BudgetPerceptron, {"removal": "bpa", "degree": 1, "gamma": 1.0, "coef0": 0.0}),
]


def _ids(value):
    return getattr(value, "__name__", None) or ",".join(f"{k}={v}" for k, v in value.items())


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("cls, params", ONLINE, ids=_ids)
def test_scores_that_overflow_stop_training(cls, params, sparse):
    try:
        model = cls(random_state=0, **params)
    except TypeError:
        pytest.skip(f"{cls.__name__} takes no {params}")
    X = sp.csr_matrix(HUGE) if sparse else HUGE
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy RuntimeWarning leaks
        with pytest.raises(ValueError) as error:
            model.fit(X, HUGE_Y)
    text = _one_line(error)
    # The scores, or for the voted perceptron's dual the kernel values before them.
    assert "scores became non-finite" in text or "kernel values became" in text, text
    with pytest.raises(NotFittedError):
        model.predict(SMALL)


@pytest.mark.parametrize("cls, params", ONLINE, ids=_ids)
def test_multiclass_scores_that_overflow_stop_training(cls, params):
    try:
        model = cls(random_state=0, **params)
    except TypeError:
        pytest.skip(f"{cls.__name__} takes no {params}")
    X = np.vstack([HUGE, HUGE[:2]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError) as error:
            model.fit(X, [0, 1, 2, 0, 1, 2])
    assert "non-finite" in _one_line(error)


def test_partial_fit_stops_on_scores_that_overflow():
    model = P.Perceptron(random_state=0)
    with pytest.raises(ValueError) as error:
        model.partial_fit(HUGE, HUGE_Y, classes=[0, 1])
    assert "scores became non-finite" in _one_line(error)
    with pytest.raises(NotFittedError):
        model.predict(SMALL)


def test_prediction_refuses_scores_that_overflow_in_one_line():
    model = P.Perceptron(random_state=0).fit(SMALL, [0, 1, 0, 1])
    for method in (model.predict, model.decision_function):
        for X in (HUGE, sp.csr_matrix(HUGE)):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                with pytest.raises(ValueError) as error:
                    method(X)
            assert "non-finite scores" in _one_line(error)


def test_parameter_mixing_stops_on_scores_that_overflow():
    from perceptrons.parallel import mix_threads

    model = P.LogisticRegressionSGD(random_state=0)
    with pytest.raises(ValueError) as error:
        mix_threads(model, np.vstack([HUGE] * 4), np.tile(HUGE_Y, 4), n_shards=2)
    assert "scores became non-finite" in _one_line(error)
    with pytest.raises(NotFittedError):
        model.predict(SMALL)


def _train_cli(data, model, extra) -> subprocess.CompletedProcess:
    """``perceptrons train DATA -o MODEL EXTRA...`` in a child, RuntimeWarnings as errors."""
    env = {k: v for k, v in os.environ.items() if k != "PERCEPTRONS_DEBUG"}
    command = [sys.executable, "-W", "error::RuntimeWarning", "-m", "perceptrons", "train"]
    return subprocess.run(
        [*command, str(data), "-o", str(model), *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.mark.parametrize("extra", [[], ["--stream"]], ids=["in-memory", "stream"])
def test_cli_train_on_features_of_1e308_exits_1_and_writes_no_model(tmp_path, extra):
    data = tmp_path / "huge.svm"
    data.write_text("1 1:1e308 2:1e308\n-1 1:-1e308 2:-1e308\n1 1:1e308 2:-1e308\n")
    model = tmp_path / "model.npz"
    done = _train_cli(data, model, extra)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "non-finite" in lines[0], done.stderr
    assert "Warning" not in done.stderr
    assert not model.exists()


#: Extreme svmlight inputs, and whether training on them is refused.
EXTREME_FILES = [
    # A feature of 1.797e308: one epoch trains a weight of that size, finite, whose score
    # of its own example overflows; streamed, the model was written with exit 0.
    pytest.param("1 1:1.797e308\n-1 2:1\n", True, id="1.797e308"),
    pytest.param("1 1:1e300 2:1e300\n-1 1:-1e300\n1 2:1e300\n-1 1:1\n", True, id="1e300"),
    pytest.param("1 1:1e-320\n-1 2:1e-300\n1 1:1 2:1e-320\n-1 2:2\n", False, id="tiny"),
]


@pytest.mark.parametrize(("content", "refused"), EXTREME_FILES)
def test_cli_train_in_memory_and_streamed_agree_on_extreme_values(tmp_path, content, refused):
    """The same exit status, the same one line, a model file for neither or both."""
    data = tmp_path / "extreme.svm"
    data.write_text(content)
    outcomes = []
    for extra in ([], ["--stream"]):
        model = tmp_path / f"model{len(outcomes)}.npz"
        done = _train_cli(data, model, ["--epochs", "1", "--no-shuffle", "--quiet", *extra])
        outcomes.append((done.returncode, done.stderr.strip(), model.exists()))
    assert outcomes[0] == outcomes[1], outcomes
    status, stderr, written = outcomes[0]
    assert (status, written) == ((1, False) if refused else (0, True)), stderr
    if refused:
        assert len(stderr.splitlines()) == 1 and "non-finite" in stderr, stderr


@pytest.mark.parametrize(("content", "refused"), EXTREME_FILES)
@pytest.mark.parametrize("cls", [P.Perceptron, P.AveragedPerceptron, P.LogisticRegressionSGD])
@pytest.mark.parametrize("epochs", [1, 3])
def test_fit_and_fit_stream_agree_on_extreme_values(tmp_path, content, refused, cls, epochs):
    """The library's two paths on the same examples in the same order: the same model,
    or the same one-line refusal (the stream's epoch publishes its model, which must
    score the examples trained on: the same check as fit's)."""
    from perceptrons.io.formats import read_data
    from perceptrons.io.stream import fit_stream

    data = tmp_path / "extreme.svm"
    data.write_text(content)
    read = read_data(data)
    X, y = read.X, read.y
    outcomes = []
    for train in (
        lambda m: m.fit(X, y),
        lambda m: fit_stream(m, data, epochs=epochs),
    ):
        model = cls(max_epochs=epochs, shuffle=False)
        try:
            train(model)
        except ValueError as error:
            assert "\n" not in str(error)
            outcomes.append(str(error).split(" in epoch ")[0])
            continue
        outcomes.append(np.concatenate([model.coef_.ravel(), model.intercept_]).tolist())
    assert outcomes[0] == outcomes[1]
    if epochs == 1:
        assert isinstance(outcomes[0], str) == refused


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_voted_prediction_refuses_kernel_values_that_overflow_in_one_line(tmp_path, kernel):
    """The voted perceptron's support vectors of 1e308 load (no exact cheap criterion
    bounds its dual scores), but predicting with them is one line, not NaN votes."""
    path = tmp_path / "voted.npz"
    P.save(P.VotedPerceptron(kernel=kernel, random_state=0).fit(SMALL, [0, 1, 0, 1]), path)

    def huge_support(meta, arrays):
        arrays["estimator/support"] = np.full_like(arrays["estimator/support"], 1e308)

    _tamper(path, huge_support)
    model = P.load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError) as error:
            model.predict(SMALL)
    assert "non-finite scores" in _one_line(error)


def test_tagger_weights_that_overflow_are_refused_by_load(tmp_path):
    sentences = [["the", "dog"], ["a", "cat"]]
    path = tmp_path / "tagger.npz"
    P.save(P.SequenceTagger(max_epochs=1).fit(sentences, [["D", "N"], ["D", "N"]]), path)

    def huge_weights(meta, arrays):
        # The (averaged) model is weights - aux / count: about 1e308 wherever a
        # weight is, each finite, a token's sum of them not.
        for name in ("estimator/weights", "estimator/weights.values"):
            if name in arrays:
                arrays[name] = np.where(arrays[name] != 0, 1e308, 0.0)

    _tamper(path, huge_weights)
    _refused(path, "non-finite scores")


def test_the_tagger_stops_training_on_scores_that_overflow():
    """Its features are indicators, so only weights of about 1e308 (no file gives them:
    loading refuses them) make a sentence's score overflow; the kernel then stops."""
    sentences, tags = [["the", "dog"], ["a", "cat"]], [["D", "N"], ["D", "N"]]
    model = P.SequenceTagger(max_epochs=1, random_state=0).fit(sentences, tags)
    state = model._state
    state.weights[state.weights != 0] = 1e308
    weights, aux, count = state.weights.copy(), state.aux.copy(), state.count
    with pytest.raises(ValueError) as error:
        model.partial_fit(sentences, [["N", "D"], ["N", "D"]])
    assert "scores became non-finite" in _one_line(error)
    # The call is refused whole: the state is as it was before it (tests/test_rollback.py).
    assert model._state is state and state.count == count
    np.testing.assert_array_equal(state.weights, weights)
    np.testing.assert_array_equal(state.aux, aux)


def test_blocked_prediction_counts_and_numbers_the_rows_of_x(monkeypatch):
    """predict scores a block at a time under a low memory limit: the one-line error
    still counts every row with non-finite scores and names the first by its row in X,
    not in its block."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    model = P.Perceptron(random_state=0).fit(X, (X[:, 0] > 0).astype(int))
    X[[150, 290]] = 1e308
    monkeypatch.setenv("PERCEPTRONS_MEMORY_LIMIT", "8K")  # blocks of 128 rows
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError) as error:
            model.predict(X)
    assert "non-finite scores (inf/NaN) for 2 row(s) of X (the first: row 150)" in (
        _one_line(error)
    )
    monkeypatch.delenv("PERCEPTRONS_MEMORY_LIMIT")
    with pytest.raises(ValueError, match=r"for 2 row\(s\) of X \(the first: row 150\)"):
        model.predict(X)  # one block: the same message
