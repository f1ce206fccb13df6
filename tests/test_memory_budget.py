"""No input costs more than it says (issue 26): sizes are estimated before allocating.

Where an input or an option could make the library allocate gigabytes, the test runs in a
child process whose address space is capped (``RLIMIT_AS``), with the memory budget set
by ``PERCEPTRONS_MEMORY_LIMIT`` so that what is refused does not depend on the machine:
an allocation the estimate missed fails there with a MemoryError, not here.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

from perceptrons import AveragedPerceptron, MultinomialNaiveBayes, Perceptron, _validation
from perceptrons._memory import MEMORY_LIMIT_VARIABLE, MemoryBudgetError

# The child's address space: the interpreter, NumPy, SciPy and Numba take about 0.7 GiB;
# whatever the budget refuses is far beyond this.
ADDRESS_SPACE = 2 * 2**30


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _child(argv: list[str], *, budget: str = "256M", cwd=None, timeout: int = 120):
    env = {**os.environ, MEMORY_LIMIT_VARIABLE: budget, "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd,
        preexec_fn=_capped,
    )


def _cli(*args: object, budget: str = "256M", cwd=None):
    return _child(["-m", "perceptrons", *map(str, args)], budget=budget, cwd=cwd)


def _refused_in_one_line(result, *words: str) -> str:
    assert result.returncode == 1, (result.returncode, result.stderr[-3000:])
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-3000:]
    line = lines[0]
    assert line.startswith("perceptrons: error: "), line
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr
    for word in words:
        assert word in line, (word, line)
    return line


# ------------------------------------------------------------------ labels
@pytest.mark.parametrize("label", [1e300, 2.0**63, -1e300])
def test_a_label_beyond_the_64_bit_integers_is_named_not_an_index_error(label):
    X, y = np.eye(4), np.array([label, 0.0, label, 0.0])
    for call in (lambda: Perceptron().fit(X, y), lambda: Perceptron().partial_fit(X, y)):
        with pytest.raises(ValueError, match="whole numbers beyond the 64-bit integers") as info:
            call()
        assert repr(label) in str(info.value)


def test_whole_float_labels_within_the_64_bit_integers_are_classes():
    X, y = np.eye(4), np.array([-(2.0**63), 2.0**62, -(2.0**63), 2.0**62])
    assert Perceptron().fit(X, y).classes_.tolist() == [-(2.0**63), 2.0**62]


@pytest.mark.parametrize("stream", [False, True])
def test_the_cli_refuses_a_label_of_1e300_in_one_line(tmp_path, stream):
    data = tmp_path / "big.svm"
    data.write_text("1e300 1:1\n0 2:1\n1e300 1:1 3:1\n0 2:1 3:1\n")
    args = ["train", data, "-o", tmp_path / "m.npz"] + (["--stream"] if stream else [])
    _refused_in_one_line(_cli(*args), "1e+300", "64-bit")
    assert not (tmp_path / "m.npz").exists()


# ------------------------------------------------------------------ the training state
@pytest.mark.parametrize(
    ("weighting", "words"),
    [
        ("tf", ["2,147,483,647 weight rows", "48.0 GiB", "fewer classes"]),
        # tf-idf's dense idf, as wide as the hashing space, comes first.
        ("tfidf", ["the idf (2,147,483,646 features x 3 arrays)", "48.0 GiB"]),
    ],
)
def test_n_features_at_its_documented_maximum_is_refused_naming_the_option(
    tmp_path, weighting, words
):
    data = tmp_path / "s.tsv"
    data.write_text("1\tgood fine\n0\tbad awful\n1\tnice good\n0\tterrible bad\n")
    # ROMMA's epochs rescale every weight: its state is dense (the default rule's trains
    # in the rows its data reaches: test_a_hashed_width_trains_in_the_rows_it_reaches).
    argv = ["train", data, "--n-features", 2147483646, "--weighting", weighting]
    argv += ["--update", "romma"]
    _refused_in_one_line(
        _cli(*argv, "-o", tmp_path / "m.npz"),
        *words,
        "PERCEPTRONS_MEMORY_LIMIT=256M",
        "--n-features",
    )
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize("extra", [[], ["--stream"]])
def test_a_width_times_many_classes_is_refused_in_one_line(tmp_path, extra):
    """Lines ``i i+1:1 67108863:1``: 2**26 features x 1,000 classes (each twice, so that
    scikit-learn does not warn that so many classes look like a regression target)."""
    data = tmp_path / "wide.svm"
    data.write_text("".join(f"{i // 2} {i + 1}:1 67108863:1\n" for i in range(2000)))
    _refused_in_one_line(
        _cli("train", data, "-o", tmp_path / "m.npz", "--update", "romma", *extra),
        "67,108,864 weight rows x 1,000 columns",
        "TiB",
        "fewer classes",
    )


@pytest.mark.parametrize("extra", [[], ["--stream"]])
def test_a_hashed_width_trains_in_the_rows_it_reaches(tmp_path, extra):
    """The same 2**26 features x 1,000 classes under the averaged perceptron, whose
    epochs write only their examples' rows: its state is kept in the 2,001 rows the
    data reaches (32 MB, not 1 TiB) and the model is written."""
    data = tmp_path / "wide.svm"
    data.write_text("".join(f"{i // 2} {i + 1}:1 67108863:1\n" for i in range(2000)))
    result = _cli("train", data, "-o", tmp_path / "m.npz", *extra)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "m.npz").exists()


def test_parameter_mixing_counts_every_shard_copy(tmp_path):
    data = tmp_path / "s.tsv"
    data.write_text("1\tgood fine\n0\tbad awful\n" * 20)
    # One state (2**23 rows x 3 arrays, 192 MiB) fits the budget; nine do not.
    _refused_in_one_line(
        _cli("train", data, "--n-features", 2**23, "--shards", 8, "-o", tmp_path / "m.npz"),
        "x 9 copies",
        "--shards",
    )


def test_tag_train_refuses_a_huge_hashing_space(tmp_path):
    data = tmp_path / "pos.txt"
    data.write_text("The/DT dog/NN barks/VBZ ./.\nA/DT cat/NN sleeps/VBZ ./.\n")
    argv = ["tag", "train", data, "--format", "tagged", "--n-features", 2**40]
    _refused_in_one_line(_cli(*argv, "-o", tmp_path / "t.npz"), "96.0 TiB", "--n-features")


def test_tag_train_refuses_too_many_tags_before_announcing_their_cost(tmp_path):
    data = tmp_path / "many.txt"
    data.write_text(
        "".join(" ".join(f"w{k}/T{s * 10 + k}" for k in range(10)) + "\n" for s in range(500))
    )
    # 5,000 tags: their transitions alone (5,001 x 5,000 x 3 arrays) are 572 MiB; the
    # epochs' cost (5,000 tokens x 5,000**2 steps) is not announced for a refused run.
    argv = ["tag", "train", data, "--format", "tagged", "-o", tmp_path / "t.npz"]
    _refused_in_one_line(_cli(*argv), "5,000 columns", "fewer tags")


def test_tag_train_announces_a_long_epoch_in_one_line(tmp_path, capsys, monkeypatch):
    from perceptrons.cli import main, tag

    data = tmp_path / "pos.txt"
    data.write_text("The/DT dog/NN barks/VBZ ./.\nA/DT cat/NN sleeps/VBZ ./.\n")
    argv = ["tag", "train", str(data), "--format", "tagged", "-o", str(tmp_path / "t.npz")]
    argv += ["--epochs", "1"]
    assert main(argv) == 0
    assert "note" not in capsys.readouterr().err  # 8 tokens x 4 tags: nothing to say
    monkeypatch.setattr(tag, "ANNOUNCED_STEPS", 100)
    assert main(argv) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "perceptrons: note: 4 tags over 8 tokens make each epoch 1.3e+02 Viterbi steps "
        "(tokens x tags^2), about 0 s on one core; fewer tags (or --epochs) shorten the run"
    ]


_LIBRARY = """
import numpy as np, scipy.sparse as sp
from perceptrons import *
from perceptrons._memory import MemoryBudgetError
from perceptrons.parallel import mix_threads

wide = sp.csr_matrix((np.ones(4), [0, 1, 2, 2**26 - 1], [0, 1, 2, 3, 4]), shape=(4, 2**26))
many = np.arange(4) % 4


def dense(model):
    # Their dense state: in the rows it reaches, this data would fit (test_touched_rows).
    model._touched_rows = False
    return model


refusals = {
    "Perceptron": lambda: dense(Perceptron()).fit(wide, many),
    "AveragedPerceptron": lambda: dense(AveragedPerceptron()).partial_fit(wide, many, classes=many),
    "LogisticRegressionSGD": lambda: dense(LogisticRegressionSGD()).fit(wide, many),
    "LogisticRegressionBatch": lambda: LogisticRegressionBatch().fit(wide, many),
    "MultinomialNaiveBayes": lambda: MultinomialNaiveBayes().fit(wide, many),
    "BernoulliNaiveBayes": lambda: BernoulliNaiveBayes().fit(wide, many),
    "VotedPerceptron": lambda: VotedPerceptron(kernel="linear").fit(wide, many),
    "mix_threads": lambda: mix_threads(AveragedPerceptron(), wide[:, : 2**23], many % 2, 4),
    "SequenceTagger": lambda: SequenceTagger(n_features=2**40).fit([["a", "b"]], [["X", "Y"]]),
    "TextFeaturizer": lambda: TextFeaturizer(n_features=2**31 - 2, weighting="tfidf").fit(["a b"]),
}
for name, call in refusals.items():
    try:
        call()
    except MemoryBudgetError as error:
        assert "would take" in str(error) and "\\n" not in str(error), (name, str(error))
        print(name)
    else:
        raise AssertionError(f"{name}: not refused")
"""


def test_every_estimator_estimates_its_state_before_allocating_it():
    """Each refuses with a MemoryBudgetError, never a MemoryError from the capped child."""
    result = _child(["-c", textwrap.dedent(_LIBRARY)])
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == [
        "Perceptron",
        "AveragedPerceptron",
        "LogisticRegressionSGD",
        "LogisticRegressionBatch",
        "MultinomialNaiveBayes",
        "BernoulliNaiveBayes",
        "VotedPerceptron",
        "mix_threads",
        "SequenceTagger",
        "TextFeaturizer",
    ]


def test_a_normal_run_is_not_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, "64M")
    rng = np.random.default_rng(0)
    X, y = rng.random((200, 50)), rng.integers(0, 5, 200)
    for model in (AveragedPerceptron(), MultinomialNaiveBayes()):
        assert model.fit(X, y).predict(X).shape == (200,)
    data = tmp_path / "s.tsv"
    data.write_text("1\tgood fine\n0\tbad awful\n1\tnice good\n0\tterrible bad\n")
    result = _cli("train", data, "-o", tmp_path / "m.npz", budget="1G")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "m.npz").exists()


def test_the_refusal_says_what_lowers_the_cost(monkeypatch):
    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, "1M")
    X = sp.csr_matrix((np.ones(2), [0, 99_999], [0, 1, 2]), shape=(2, 100_000))
    with pytest.raises(MemoryBudgetError) as refused:
        AveragedPerceptron().fit(X, [0, 1])
    assert str(refused.value) == (
        "AveragedPerceptron's training state (100,001 weight rows x 1 columns x 3 arrays) "
        "would take 2.3 MiB, more than 1.0 MiB, the limit PERCEPTRONS_MEMORY_LIMIT=1M sets; "
        "to lower it, use fewer features (n_features / --n-features when hashing; smaller "
        "feature indices otherwise) or fewer classes"
    )


# ------------------------------------------------------------------ scores in blocks
def test_predict_scores_in_blocks_the_same_labels(monkeypatch):
    rng = np.random.default_rng(1)
    X, y = rng.random((300, 6)), rng.integers(0, 7, 300)
    model = AveragedPerceptron(random_state=0).fit(X, y)
    whole = _validation.labels_from_scores(model.classes_, model.decision_function(X))
    monkeypatch.setattr(_validation, "SCORE_BATCH_BYTES", 7 * 8 * 16)  # 16 rows a block
    calls = []
    scoring = model.decision_function
    monkeypatch.setattr(model, "decision_function", lambda Z: calls.append(1) or scoring(Z))
    for form in (X, sp.csr_matrix(X), sp.coo_matrix(X), X.tolist()):
        calls.clear()
        assert np.array_equal(model.predict(form), whole)
        assert len(calls) == 19  # ceil(300 / 16)
    assert model.score(X, y) == np.mean(whole == y)


def test_decision_function_checks_its_scores_before_allocating(monkeypatch):
    model = Perceptron().fit(np.eye(3), [0, 1, 2])
    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, "1K")
    with pytest.raises(MemoryBudgetError, match=r"the scores \(100 rows x 3 columns\)"):
        model.decision_function(np.ones((100, 3)))
    assert model.predict(np.ones((100, 3))).shape == (100,)  # in blocks: no refusal


_TRAIN_ACCURACY = """
import numpy as np
from perceptrons import Perceptron
n_classes = 3_000
X = np.eye(n_classes)[:, :8] + np.arange(n_classes)[:, None] % 3
model = Perceptron(max_epochs=1).fit(X, np.arange(n_classes))
# 100,000 rows x 3,000 classes of scores at once would be 2.2 GiB: over the cap.
rows = np.tile(X, (34, 1))[:100_000]
print(model.predict(rows).shape[0])
"""


def test_many_classes_are_predicted_within_the_address_space():
    result = _child(["-c", textwrap.dedent(_TRAIN_ACCURACY)], budget="1G")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["100000"]


def test_the_random_voting_rule_is_never_scored_in_blocks(monkeypatch):
    """Its draws restart with each call: blocks would change the predictions."""
    from perceptrons import VotedPerceptron

    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(60, 3)), rng.integers(0, 2, 60)
    model = VotedPerceptron(prediction="random", random_state=0, max_epochs=3).fit(X, y)
    whole = model.predict(X)
    monkeypatch.setattr(_validation, "SCORE_BATCH_BYTES", 8 * 4)  # 4 rows a block
    assert np.array_equal(model.predict(X), whole)


def test_a_sparsified_naive_bayes_file_is_counted_at_the_size_it_loads_to(tmp_path, monkeypatch):
    """Naive Bayes expands its counts on loading, sparsified or not: the loader's check
    counts their dense size (64 classes x 2**16 columns, 32 MiB), not the one row that
    holds the file's single nonzero."""
    from perceptrons import load, save

    n_classes, width = 64, 2**16
    X = sp.csr_matrix((np.ones(1), ([0], [3])), shape=(n_classes, width))
    with pytest.warns(UserWarning):  # scikit-learn: as many classes as samples
        model = MultinomialNaiveBayes().fit(X, np.arange(n_classes))
    path = tmp_path / "nb.npz"
    save(model.sparsify(threshold=1e9), path)
    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, "16M")
    with pytest.raises(ValueError, match=r"expanding estimator/feature_count.* 32\.0 MiB"):
        load(path)
    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, "256M")
    assert load(path).coef_.shape == (n_classes, width)
