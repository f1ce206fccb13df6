"""What an epoch's record counts: ``mistakes``, the examples whose prediction made
before the update was wrong, and ``updates``, the examples the rule updated on (a margin
rule also updates on correct predictions of too small a margin).

The mistakes are checked against a replay: the same training one example at a time
(``partial_fit``), the prediction read from the public model (``decision_function``)
before each example is trained on, and judged there.
"""

import contextlib
import io

import numpy as np
import pytest
from numpy.testing import assert_allclose

from perceptrons import AveragedPerceptron, Perceptron
from perceptrons.io.stream import fit_stream
from perceptrons.linear._update_rules import RULES
from perceptrons.parallel import mix_threads

TOL = {"rtol": 1e-9, "atol": 1e-9}

#: Rules whose updates are not only their mistakes, and their options.
MARGIN_RULES = [
    pytest.param({"update": "pa-i", "C": 0.5}, id="pa-i"),
    pytest.param({"update": "arow"}, id="arow"),
    pytest.param({"update": "arow", "covariance": "full"}, id="arow-full"),
    pytest.param({"update": "perceptron", "margin": 0.5}, id="perceptron-margin"),
    pytest.param({"update": "aggressive-romma"}, id="aggressive-romma"),
    pytest.param({"update": "ogd"}, id="ogd"),
]


def _problem(n_classes, n=40, d=4, seed=0):
    """A noisy linear problem: mistakes every epoch, and margin violations besides."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    scores = X @ rng.normal(size=(d, n_classes)) + rng.normal(scale=0.8, size=(n, n_classes))
    y = np.argmax(scores, axis=1)
    y[:n_classes] = np.arange(n_classes)
    return X, y


def _wrong(scores, label, classes):
    """Whether the prediction of ``scores`` (one example's decision_function) is wrong:
    binary ``y * score <= 0`` with ``y = +1`` for ``classes[1]`` (a zero score counts
    as a mistake, the perceptron's convention), multiclass the argmax (ties to the
    lowest class) not the label."""
    if len(classes) == 2:
        sign = 1.0 if label == classes[1] else -1.0
        return bool(sign * float(scores) <= 0.0)
    return classes[int(np.argmax(scores))] != label


def _replay(params, X, y, epochs):
    """Train one example at a time, in order, judging the prediction before each one:
    the mistakes of each epoch, the updates the records counted, and the model."""
    classes = sorted(set(y.tolist()))
    n_columns = 1 if len(classes) == 2 else len(classes)
    model = Perceptron(shuffle=False, **params)
    mistakes, updates = [], []
    for _ in range(epochs):
        wrong = changed = 0
        for i in range(len(y)):
            if hasattr(model, "coef_"):
                scores = model.decision_function(X[i : i + 1])[0]
            else:  # no model yet: the zero weights score 0
                scores = np.zeros(n_columns)[0] if n_columns == 1 else np.zeros(n_columns)
            wrong += _wrong(scores, y[i], classes)
            model.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
            record = model.history_[-1]
            assert record["examples"] == 1 and record["updates"] in (0, 1)
            changed += record["updates"]
        mistakes.append(wrong)
        updates.append(changed)
    return mistakes, updates, model


@pytest.mark.parametrize("params", MARGIN_RULES)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_mistakes_are_the_wrong_predictions_before_each_update(params, n_classes):
    X, y = _problem(n_classes)
    epochs = 3
    mistakes, updates, replayed = _replay(params, X, y, epochs)
    model = Perceptron(shuffle=False, max_epochs=epochs, **params).fit(X, y)
    assert_allclose(model.coef_, replayed.coef_, **TOL)  # the same training
    assert [r["mistakes"] for r in model.history_] == mistakes
    assert [r["updates"] for r in model.history_] == updates
    # The two counts differ: a record that gave its updates as mistakes would fail.
    assert all(u >= m for m, u in zip(mistakes, updates, strict=True))
    assert sum(updates) > sum(mistakes) > 0
    # The averaged model trains the same weights: the same counts.
    averaged = AveragedPerceptron(shuffle=False, max_epochs=epochs, **params).fit(X, y)
    assert averaged.history_ == model.history_


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_plain_perceptron_updates_on_its_mistakes_only(n_classes):
    X, y = _problem(n_classes, seed=1)
    mistakes, updates, _ = _replay({}, X, y, 3)
    assert mistakes == updates and sum(mistakes) > 0
    weights = np.random.default_rng(2).uniform(0.0, 2.0, size=len(y))
    weights[::7] = 0.0
    for params in ({}, {"delta": 0.5}, {"sample_weight": weights}):
        options = {k: v for k, v in params.items() if k != "sample_weight"}
        fit_params = {k: v for k, v in params.items() if k == "sample_weight"}
        model = Perceptron(max_epochs=4, random_state=0, **options).fit(X, y, **fit_params)
        assert all(r["mistakes"] == r["updates"] > 0 for r in model.history_), params


@pytest.mark.parametrize("n_classes", [2, 3])
def test_every_rule_records_mistakes_and_updates(n_classes):
    X, y = _problem(n_classes, seed=3)
    # (ROMMA also updates on a multiclass tie that the prediction breaks right.)
    mistake_driven = {"perceptron", "sop", "iellip"} | ({"romma"} if n_classes == 2 else set())
    for name in RULES:
        model = Perceptron(update=name, max_epochs=2, random_state=0).fit(X, y)
        for record in model.history_:
            assert set(record) == {"epoch", "mistakes", "updates", "examples", "n_nonzero"}, name
            assert 0 < record["n_nonzero"] <= model.coef_.size, name
            assert 0 < record["mistakes"] <= record["examples"], name
            assert 0 <= record["updates"] <= record["examples"], name
            if name in mistake_driven:
                assert record["mistakes"] == record["updates"], name


def test_early_stopping_without_held_out_data_waits_for_an_epoch_without_updates():
    """A margin rule goes on updating after an epoch without mistakes: the model has
    not converged until an epoch leaves it as it was."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    scores = X @ np.array([1.0, -2.0, 0.5])
    X, y = X[np.abs(scores) > 0.5], (scores[np.abs(scores) > 0.5] > 0).astype(int)
    model = Perceptron(margin=1.0, early_stopping=True, max_epochs=100, random_state=0)
    history = model.fit(X, y).history_
    assert history[-1]["updates"] == 0 and len(history) < 100
    assert all(r["updates"] > 0 for r in history[:-1])
    assert any(r["mistakes"] == 0 for r in history[:-1])  # where it would have stopped


def test_verbose_line_gives_both():
    X, y = _problem(2)
    model = Perceptron(update="pa-i", max_epochs=2, random_state=0, verbose=1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        model.fit(X, y)
    lines = out.getvalue().splitlines()
    for line, record in zip(lines, model.history_, strict=True):
        assert line == (
            f"Perceptron epoch {record['epoch']}: {record['mistakes']} mistakes, "
            f"{record['updates']} updates in {record['examples']} examples"
        )


def _svmlight(path, X, y):
    path.write_text(
        "".join(
            f"{label} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row)) + "\n"
            for row, label in zip(X, y, strict=True)
        )
    )
    return path


@pytest.mark.parametrize("chunk_size", [7, 1000])
def test_streaming_counts_as_the_in_memory_fit(tmp_path, chunk_size):
    X, y = _problem(3, n=60, seed=4)
    path = _svmlight(tmp_path / "train.svm", X, y)
    streamed = Perceptron(update="pa-i", shuffle=False)
    report = fit_stream(streamed, path, epochs=3, chunk_size=chunk_size, n_features=X.shape[1])
    whole = Perceptron(update="pa-i", shuffle=False, max_epochs=3).fit(X, y)
    for key in ("mistakes", "updates"):
        assert [e[key] for e in report.epochs] == [r[key] for r in whole.history_]
        assert [r[key] for r in streamed.history_] == [r[key] for r in whole.history_]
    assert sum(r["updates"] for r in whole.history_) > sum(r["mistakes"] for r in whole.history_)


def test_parameter_mixing_sums_both_counts_over_the_shards():
    X, y = _problem(3, n=90, seed=5)
    model = mix_threads(Perceptron(update="pa-i", max_epochs=3, random_state=0), X, y, n_shards=3)
    for record in model.history_:
        assert len(record["shard_mistakes"]) == len(record["shard_updates"]) == 3
        assert sum(record["shard_mistakes"]) == record["mistakes"]
        assert sum(record["shard_updates"]) == record["updates"]
        assert record["updates"] > record["mistakes"] > 0
