"""The command line's sparse-model options and reports: ``--l1`` and ``--feature-budget``
(the update rule's constants, from the table), the nonzero weights per epoch in the
training output, ``inspect`` and ``history_``."""

import dataclasses
import json

import numpy as np
import pytest

from perceptrons.cli._common import rules_taking
from perceptrons.linear._update_rules import RULES, Constant
from test_cli import _linear_svmlight, assert_user_error, run


@pytest.fixture(scope="module")
def train_file(tmp_path_factory):
    return _linear_svmlight(tmp_path_factory.mktemp("sparse") / "train.svm", n=200, classes=3)


def test_l1_sets_the_rules_constant(train_file, tmp_path):
    model = tmp_path / "m.npz"
    options = ("--algorithm", "perceptron", "--update", "ada-fobos", "--l1", "0.05")
    status, _, err = run("train", train_file, "-o", model, *options)
    assert status == 0, err
    from perceptrons import load

    assert load(model).get_params()["update_params"] == {"l1": 0.05}
    # asked for, the average cannot follow the penalty: the estimator's one-line refusal
    options = ("--algorithm", "averaged", "--update", "ada-fobos", "--l1", "0.05")
    assert_user_error(run("train", train_file, "-o", model, *options), 1, "cannot be averaged")


@pytest.mark.parametrize(
    ("options", "trained"),
    [
        (("--update", "ada-fobos", "--l1", "0.05"), "Perceptron"),
        (("--update", "ada-fobos-l1"), "Perceptron"),  # its default l1 > 0
        (("--update", "ada-fobos-l1", "--l1", "0"), "AveragedPerceptron"),
        (("--update", "ada-rda", "--update-param", "l1=0.1"), "Perceptron"),
        (("--update", "ada-fobos"), "AveragedPerceptron"),
        (("--update", "fofs", "--feature-budget", "3"), "Perceptron"),  # B features
        (
            ("--update", "fofs", "--feature-budget", "3", "--algorithm", "averaged"),
            "AveragedPerceptron",
        ),
    ],
)
def test_without_algorithm_a_rule_that_cannot_be_averaged_trains_its_last_weights(
    train_file, tmp_path, options, trained
):
    model = tmp_path / "m.npz"
    status, _, err = run("train", train_file, "-o", model, "--epochs", "1", *options)
    assert status == 0, err
    from perceptrons import load

    assert type(load(model)).__name__ == trained


def test_l1_for_a_rule_without_it_names_the_rules_that_take_it(train_file, tmp_path):
    result = run("train", train_file, "-o", tmp_path / "m.npz", "--update", "pa-i", "--l1", "0.1")
    taking = ", ".join(rules_taking("l1"))
    assert {"ada-fobos", "fobos-l1", "ftrl"} <= set(rules_taking("l1"))
    assert_user_error(result, 2, f"--l1 applies to --update {taking}", "pa-i has no L1")
    # --update auto is pa-i on text, the perceptron on numbers: neither has an L1 penalty
    result = run("train", train_file, "-o", tmp_path / "m.npz", "--l1", "0.1")
    assert_user_error(result, 2, "--update perceptron has no L1 penalty")


def test_l1_and_the_same_update_param_conflict(train_file, tmp_path):
    options = ("--update", "ada-rda", "--l1", "0.1", "--update-param", "l1=0.2")
    result = run("train", train_file, "-o", tmp_path / "m.npz", *options)
    assert_user_error(result, 2, "--l1 and --update-param l1=", "give one")
    # another constant beside it is fine
    options = ("--algorithm", "perceptron", "--update", "ada-rda", "--l1", "0.1")
    options += ("--update-param", "eta=0.5", "--epochs", "1")
    status, _, err = run("train", train_file, "-o", tmp_path / "m.npz", *options)
    assert status == 0, err


def test_l1_and_feature_budget_are_checked_by_the_parser(train_file, tmp_path):
    for option, value in (("--l1", "-1"), ("--l1", "nan"), ("--feature-budget", "0")):
        status, _, err = run("train", train_file, "-o", tmp_path / "m.npz", option, value)
        assert status == 2 and option in err, err
    # an option of the update rules, refused for the other algorithms
    result = run("train", train_file, "-o", tmp_path / "m.npz", "--algorithm", "voted", "--l1", "1")
    assert_user_error(result, 2, "--l1 does not apply to voted")


def test_feature_budget_refused_for_a_rule_without_one(train_file, tmp_path):
    # ALMA's constant B is a margin scale, not a budget of features
    for update in ("pa-i", "alma"):
        options = ("--update", update, "--feature-budget", "5")
        result = run("train", train_file, "-o", tmp_path / "m.npz", *options)
        assert_user_error(result, 2, "--feature-budget applies to", f"{update} has no feature")
    assert "alma" not in rules_taking("feature_budget")


def _budget_constant():
    """A feature budget's constant: an integer B (the table's Constant with
    ``integer=True`` where it has the field)."""
    if "integer" in {f.name for f in dataclasses.fields(Constant)}:
        return Constant(10.0, 1.0, integer=True, doc="the feature budget")  # type: ignore[call-arg]

    @dataclasses.dataclass(frozen=True)
    class IntegerConstant(Constant):
        integer: bool = True

    return IntegerConstant(10.0, 1.0, doc="the feature budget")


def test_feature_budget_sets_B_for_a_rule_that_has_one(monkeypatch):
    """With a rule whose table entry has the integer constant B (patched in: the table
    decides, not a list of names)."""
    from perceptrons.cli import build_parser
    from perceptrons.cli._common import make_estimator

    rule = RULES["ogd"]
    patched = dataclasses.replace(rule, constants={**rule.constants, "B": _budget_constant()})
    monkeypatch.setitem(RULES, "ogd", patched)
    assert "ogd" in rules_taking("feature_budget")
    args = build_parser().parse_args(
        ["train", "d.svm", "-o", "m.npz", "--update", "ogd", "--feature-budget", "7"]
    )
    assert make_estimator(args).get_params()["update_params"] == {"B": 7}
    assert "ogd" in build_parser()._subparsers._group_actions[0].choices["train"].format_help()


@pytest.mark.skipif(
    not rules_taking("feature_budget"),
    reason="no rule of the table has a feature budget yet (the budget rules add one)",
)
def test_feature_budget_trains_a_model_within_its_budget(train_file, tmp_path):
    update = rules_taking("feature_budget")[0]
    model = tmp_path / "m.npz"
    options = ("--algorithm", "perceptron", "--update", update, "--feature-budget", "3")
    options += ("--epochs", "2", "--json")
    status, out, err = run("train", train_file, "-o", model, *options)
    assert status == 0, err
    from perceptrons import load

    learned = load(model)
    assert learned.get_params()["update_params"]["B"] == 3
    assert np.count_nonzero(np.any(learned.coef_ != 0, axis=0)) <= 3
    assert all(entry["n_nonzero"] <= 3 * 3 for entry in json.loads(out)["epochs"])


@pytest.mark.parametrize("mode", [(), ("--stream",), ("--shards", "2")])
def test_epoch_lines_json_and_inspect_give_the_nonzero_weights(train_file, tmp_path, mode):
    model = tmp_path / "m.npz"
    options = ("--algorithm", "perceptron", "--update", "ada-fobos", "--l1", "0.05", *mode)
    status, out, err = run("train", train_file, "-o", model, *options, "--epochs", "3", "--json")
    assert status == 0, err
    epochs = json.loads(out)["epochs"]
    lines = [line for line in err.splitlines() if line.startswith("epoch ")]
    assert len(epochs) == len(lines) == 3
    for entry, line in zip(epochs, lines, strict=True):
        assert line.endswith(f", {entry['n_nonzero']:,} nonzero weights")
    from perceptrons import load

    coef = load(model).coef_
    nonzero = int(np.count_nonzero(coef.toarray() if hasattr(coef, "toarray") else coef))
    assert epochs[-1]["n_nonzero"] == nonzero
    assert nonzero < coef.size or "--shards" in mode  # the mean of sparse shards: denser
    status, out, err = run("inspect", model, "--json")
    assert status == 0, err
    report = json.loads(out)
    assert report["nonzero_weights"] == nonzero
    assert report["nonzero_fraction"] == pytest.approx(nonzero / coef.size)
    assert report["nonzero_weights_per_epoch"] == [e["n_nonzero"] for e in epochs]
    status, out, err = run("inspect", model)
    assert status == 0, err
    assert f"{nonzero:,} of {coef.size:,} nonzero ({nonzero / coef.size:.2%})" in out
    assert f"n_nonzero {nonzero}" in out
