"""``perceptrons tag train|evaluate|predict``, in-process, on small files in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perceptrons.cli import main
from perceptrons.io.sequences import read_conll

CHUNKS = """\
He PRP B-NP
reckons VBZ B-VP
the DT B-NP
deficit NN I-NP
will MD B-VP
narrow VB I-VP
. . O

The DT B-NP
dog NN I-NP
barks VBZ B-VP
. . O

A DT B-NP
cat NN I-NP
sleeps VBZ B-VP
in IN B-PP
the DT B-NP
house NN I-NP
. . O
"""

POS = """\
The/DT dog/NN barks/VBZ ./.
A/DT cat/NN sleeps/VBZ ./.
The/DT cat/NN barks/VBZ ./.
"""


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def chunker(tmp_path, capsys):
    data = _file(tmp_path, "train.txt", CHUNKS)
    model = tmp_path / "chunker.npz"
    code, out, err = _run(capsys, "tag", "train", data, "-o", model, "--epochs", "5")
    assert code == 0, err
    return data, model, out


def _one_line_error(err: str, code: int, expected: int = 1) -> str:
    assert code == expected
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("perceptrons: error: ")
    assert "Traceback" not in err
    return lines[0]


# --------------------------------------------------------------------------- train
def test_train_prints_epochs_and_writes_the_model(chunker):
    _, model, out = chunker
    assert model.is_file()
    assert "3 sentences, 18 tokens, 2 input column(s), 6 tags" in out
    assert "epoch 1: " in out and "epoch 5: " in out
    assert "sentences tagged wrongly" in out
    assert f"model written to {model}" in out


def test_train_with_dev_reports_accuracy_and_chunk_f1(tmp_path, capsys):
    data = _file(tmp_path, "train.txt", CHUNKS)
    code, out, err = _run(
        capsys, "tag", "train", data, "-o", tmp_path / "m.npz", "--dev", data, "--epochs", "2"
    )
    assert code == 0, err
    assert "dev accuracy" in out
    assert "dev chunk F1" in out


def test_train_early_stopping(tmp_path, capsys):
    data = _file(tmp_path, "train.txt", CHUNKS)
    argv = ["tag", "train", data, "-o", tmp_path / "m.npz", "--dev", data, "--epochs", "50"]
    code, out, err = _run(capsys, *argv, "--early-stopping", "--patience", "1")
    assert code == 0, err
    assert "early stopping after" in out
    assert "epoch 50:" not in out


def test_train_quiet_prints_nothing(tmp_path, capsys):
    data = _file(tmp_path, "train.txt", CHUNKS)
    code, out, err = _run(capsys, "tag", "train", data, "-o", tmp_path / "m.npz", "--quiet")
    assert code == 0, err
    assert out == ""
    assert (tmp_path / "m.npz").is_file()


def test_train_tagged_and_conllu_formats(tmp_path, capsys):
    tagged = _file(tmp_path, "pos.txt", POS)
    code, out, err = _run(
        capsys, "tag", "train", tagged, "-o", tmp_path / "pos.npz", "--format", "tagged"
    )
    assert code == 0, err
    assert "3 sentences, 12 tokens, 1 input column(s), 4 tags" in out
    rows = [
        "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_",
        "2\tdog\tdog\tNOUN\tNN\t_\t3\tnsubj\t_\t_",
        "3\tbarks\tbark\tVERB\tVBZ\t_\t0\troot\t_\t_",
    ]
    conllu = _file(tmp_path, "ud.conllu", "# text = The dog barks\n" + "\n".join(rows) + "\n")
    code, out, err = _run(capsys, "tag", "train", conllu, "-o", tmp_path / "ud.npz")
    assert code == 0, err
    assert "1 sentences, 3 tokens, 1 input column(s), 3 tags" in out
    code, out, err = _run(
        capsys, "tag", "train", conllu, "-o", tmp_path / "x.npz", "--conllu-tag", "xpos"
    )
    assert code == 0, err
    assert "3 tags" in out


def test_train_options_reach_the_tagger(tmp_path, capsys):
    from perceptrons.io.persist import load

    data = _file(tmp_path, "train.txt", CHUNKS)
    templates = _file(tmp_path, "templates.txt", "# words only\nbias\nw[0]\n\nc1[0]|w[0]\n")
    model = tmp_path / "m.npz"
    argv = ["tag", "train", data, "-o", model, "--templates", templates, "--n-features", "64"]
    argv += ["--update", "mira", "--C", "0.5", "--vanilla", "--seed", "3", "--no-shuffle"]
    code, _, err = _run(capsys, *argv, "--epochs", "2")
    assert code == 0, err
    tagger = load(model)
    assert list(tagger.templates) == ["bias", "w[0]", "c1[0]|w[0]"]
    assert tagger.n_features == 64
    assert tagger.update == "mira"
    assert tagger.C == 0.5
    assert tagger.average is False
    assert tagger.random_state == 3
    assert tagger.shuffle is False
    assert tagger.max_epochs == 2


def test_train_tag_column(tmp_path, capsys):
    first = "\n".join(
        " ".join([line.split()[2], *line.split()[:2]]) if line else ""
        for line in CHUNKS.splitlines()
    )
    data = _file(tmp_path, "first.txt", first + "\n")
    code, out, err = _run(capsys, "tag", "train", data, "-o", tmp_path / "m.npz", "--column", "0")
    assert code == 0, err
    assert "2 input column(s), 6 tags" in out


# --------------------------------------------------------------------- bad input
def test_empty_training_file(tmp_path, capsys):
    data = _file(tmp_path, "empty.txt", "\n\n")
    model = tmp_path / "m.npz"
    code, _, err = _run(capsys, "tag", "train", data, "-o", model)
    line = _one_line_error(err, code)
    assert f"{data}: no sentences" in line
    assert not model.exists()
    assert list(tmp_path.iterdir()) == [data]  # no temporary file left either


def test_a_missing_tag_column(tmp_path, capsys):
    data = _file(tmp_path, "bad.txt", "He PRP B-NP\nreckons VBZ\n")
    model = tmp_path / "m.npz"
    code, _, err = _run(capsys, "tag", "train", data, "-o", model)
    line = _one_line_error(err, code)
    assert f"{data}:2: 2 column(s)" in line
    assert "a missing tag?" in line
    assert not model.exists()


def test_unknown_templates(tmp_path, capsys):
    data = _file(tmp_path, "train.txt", CHUNKS)
    code, _, err = _run(
        capsys, "tag", "train", data, "-o", tmp_path / "m.npz", "--templates", "nope"
    )
    line = _one_line_error(err, code, 2)
    assert "--templates: 'nope' is neither a preset" in line


def test_a_bad_template_in_a_file(tmp_path, capsys):
    data = _file(tmp_path, "train.txt", CHUNKS)
    templates = _file(tmp_path, "t.txt", "w[0]\nnonsense[[\n")
    model = tmp_path / "m.npz"
    code, _, err = _run(capsys, "tag", "train", data, "-o", model, "--templates", templates)
    line = _one_line_error(err, code)
    assert "nonsense[[" in line
    assert not model.exists()


def test_the_model_may_not_overwrite_the_data(tmp_path, capsys):
    data = _file(tmp_path, "train.txt", CHUNKS)
    code, _, err = _run(capsys, "tag", "train", data, "-o", data)
    _one_line_error(err, code)
    assert data.read_text() == CHUNKS


def test_bad_option_values_are_usage_errors(tmp_path, capsys):
    data = _file(tmp_path, "train.txt", CHUNKS)
    code, _, err = _run(capsys, "tag", "train", data, "-o", tmp_path / "m", "--epochs", "0")
    assert code == 2
    assert "must be at least 1" in err


# ------------------------------------------------------------------------ evaluate
def test_evaluate_prints_accuracy_and_the_conlleval_table(chunker, capsys):
    data, model, _ = chunker
    code, out, err = _run(capsys, "tag", "evaluate", model, data)
    assert code == 0, err
    assert f"{data}: 3 sentences, 18 tokens, tagged in" in out
    assert "tokens/s" in out
    assert "token accuracy 100.00%" in out
    assert "processed 18 tokens with 10 phrases; found: 10 phrases; correct: 10." in out
    assert "accuracy: 100.00%; precision: 100.00%; recall: 100.00%; FB1: 100.00  10" in out
    assert "               NP: precision: 100.00%; recall: 100.00%; FB1: 100.00  5" in out
    assert "               PP: precision: 100.00%" in out


def test_evaluate_json(chunker, capsys):
    data, model, _ = chunker
    code, out, err = _run(capsys, "tag", "evaluate", model, data, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["tokens"] == 18
    assert result["accuracy"] == 1.0
    assert result["chunks"]["overall"]["f1"] == 1.0
    assert set(result["chunks"]["by_type"]) == {"NP", "VP", "PP"}
    assert result["unseen_tags"] == {}


def test_evaluate_pos_tags_has_no_chunk_table(tmp_path, capsys):
    tagged = _file(tmp_path, "pos.txt", POS)
    model = tmp_path / "pos.npz"
    code, _, err = _run(capsys, "tag", "train", tagged, "-o", model, "--format", "tagged")
    assert code == 0, err
    code, out, err = _run(capsys, "tag", "evaluate", model, tagged, "--format", "tagged")
    assert code == 0, err
    assert "token accuracy 100.00%" in out
    assert "phrases" not in out


def test_a_tag_unseen_in_training_counts_as_an_error(chunker, tmp_path, capsys):
    _, model, _ = chunker
    test = _file(tmp_path, "test.txt", "The DT B-NP\ndog NN I-NP\nbarks VBZ B-ADVP\n")
    code, out, err = _run(capsys, "tag", "evaluate", model, test)
    assert code == 0, err
    assert "1 token(s) have a tag the model never saw in training (B-ADVP)" in out
    assert "token accuracy 66.67%" in out
    assert "ADVP: precision:   0.00%; recall:   0.00%" in out


def test_evaluate_a_file_with_too_few_input_columns(chunker, tmp_path, capsys):
    _, model, _ = chunker
    test = _file(tmp_path, "test.txt", "The B-NP\ndog I-NP\n")
    code, _, err = _run(capsys, "tag", "evaluate", model, test)
    line = _one_line_error(err, code)
    assert f"{test}:1: 1 input column(s), but the model was trained on 2" in line


def test_a_classifier_model_is_refused(tmp_path, capsys):
    import numpy as np

    from perceptrons import AveragedPerceptron
    from perceptrons.io.persist import save

    model = tmp_path / "clf.npz"
    save(AveragedPerceptron(max_epochs=1).fit(np.eye(2), [0, 1]), model)
    data = _file(tmp_path, "train.txt", CHUNKS)
    for command in ("evaluate", "predict"):
        code, _, err = _run(capsys, "tag", command, model, data)
        line = _one_line_error(err, code)
        assert (
            f"{model} holds a model of type AveragedPerceptron, not a sequence tagger: "
            "use `perceptrons evaluate`" in line
        )


def test_a_missing_model_file(tmp_path, capsys):
    data = _file(tmp_path, "train.txt", CHUNKS)
    code, _, err = _run(capsys, "tag", "evaluate", tmp_path / "absent.npz", data)
    _one_line_error(err, code)


# ------------------------------------------------------------------------- predict
def test_predict_echoes_the_columns_and_adds_the_tag(chunker, capsys):
    data, model, _ = chunker
    code, out, err = _run(capsys, "tag", "predict", model, data)
    assert code == 0, err
    lines = out.split("\n")
    assert lines[0] == "He PRP B-NP B-NP"
    assert out.count("\n\n") == 3
    written = [line.split() for line in out.splitlines() if line]
    assert all(row[-1] == row[-2] for row in written)  # the model is perfect on its data
    assert len(written) == 18


def test_predict_without_gold_tags_and_to_a_file(chunker, tmp_path, capsys):
    _, model, _ = chunker
    words = "\n".join(" ".join(line.split()[:2]) for line in CHUNKS.splitlines())
    test = _file(tmp_path, "words.txt", words + "\n")
    out_path = tmp_path / "tagged.txt"
    code, out, err = _run(capsys, "tag", "predict", model, test, "-o", out_path)
    assert code == 0, err
    assert out == ""
    corpus = read_conll(out_path)  # the output reads back as CoNLL
    assert corpus.sentences[0][0] == ("He", "PRP")
    assert corpus.tags == read_conll(_file(tmp_path, "gold.txt", CHUNKS)).tags


def test_predict_with_the_tag_column_first(chunker, tmp_path, capsys):
    _, model, _ = chunker
    rows = [
        " ".join([line.split()[2], *line.split()[:2]]) if line else ""
        for line in CHUNKS.splitlines()
    ]
    test = _file(tmp_path, "first.txt", "\n".join(rows) + "\n")
    code, out, err = _run(capsys, "tag", "predict", model, test, "--column", "0")
    assert code == 0, err
    assert out.splitlines()[0] == "B-NP He PRP B-NP"


def test_predict_may_not_overwrite_its_input(chunker, capsys):
    data, model, _ = chunker
    code, _, err = _run(capsys, "tag", "predict", model, data, "-o", data)
    _one_line_error(err, code)
    assert data.read_text() == CHUNKS


def test_every_tag_subcommand_has_help_with_its_defaults(capsys):
    for command in ("train", "evaluate", "predict"):
        assert main(["tag", command, "--help"]) == 0
        text = " ".join(capsys.readouterr().out.split())
        assert "--format {auto,conll,conllu,tagged}" in text
        assert "(default: auto)" in text
        assert "--column N" in text
    assert main(["tag", "train", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--epochs N passes over the sentences (default: 10)" in text
    assert main(["tag"]) == 2  # a subcommand is required
    assert "required" in capsys.readouterr().err


def test_column_applies_to_conll_only(tmp_path, capsys):
    tagged = _file(tmp_path, "pos.txt", POS)
    code, _, err = _run(
        capsys,
        "tag",
        "train",
        tagged,
        "-o",
        tmp_path / "m.npz",
        "--format",
        "tagged",
        "--column",
        "1",
    )
    line = _one_line_error(err, code, 2)
    assert "--column applies to conll files" in line


def test_refuse_tagger_names_the_tag_command(chunker):
    from perceptrons.cli._common import UserError
    from perceptrons.cli.tag import refuse_tagger
    from perceptrons.io.persist import load

    _, model, _ = chunker
    with pytest.raises(
        UserError,
        match="is a SequenceTagger model, which tags sentences: use `perceptrons tag predict`",
    ):
        refuse_tagger(str(model), load(model), "predict")
    refuse_tagger("clf.npz", object(), "predict")  # anything else passes


def test_predict_reads_standard_input(chunker, capsys, monkeypatch):
    import io
    import sys

    _, model, _ = chunker
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"The DT\ndog NN\n")))
    code, out, err = _run(capsys, "tag", "predict", model, "-")
    assert code == 0, err
    assert out == "The DT B-NP\ndog NN I-NP\n\n"


def test_input_columns_for_part_of_speech_tagging(tmp_path, capsys):
    from perceptrons.io.persist import load

    data = _file(tmp_path, "train.txt", CHUNKS)
    model = tmp_path / "pos.npz"
    argv = ["tag", "train", data, "-o", model, "--column", "1", "--input-columns", "1"]
    code, out, err = _run(capsys, *argv, "--dev", data)
    assert code == 0, err
    assert "18 tokens, 1 input column(s), 8 tags" in out
    tagger = load(model)
    assert tagger.featurizer_.n_columns_ == 1
    assert tagger.featurizer_.templates_ == load(model).featurizer_.templates_
    code, out, err = _run(capsys, "tag", "evaluate", model, data, "--column", "1")
    assert code == 0, err
    assert "token accuracy" in out and "phrases" not in out
    code, out, err = _run(capsys, "tag", "predict", model, data)
    assert code == 0, err
    assert out.splitlines()[0].split()[:3] == ["He", "PRP", "B-NP"]  # every column echoed
    code, _, err = _run(capsys, *argv[:4], tmp_path / "x.npz", "--input-columns", "3")
    line = _one_line_error(err, code)
    assert f"{data}:1: 2 input column(s), but --input-columns asks for 3" in line


def test_dev_with_fewer_input_columns(tmp_path, capsys):
    data = _file(tmp_path, "train.txt", CHUNKS)
    dev = _file(tmp_path, "dev.txt", "The B-NP\n")
    code, _, err = _run(capsys, "tag", "train", data, "-o", tmp_path / "m.npz", "--dev", dev)
    line = _one_line_error(err, code)
    assert f"{dev}:1: 1 input column(s), but the training data has 2" in line
    assert not (tmp_path / "m.npz").exists()


def test_classifier_commands_refuse_a_tagger(chunker, capsys):
    data, model, _ = chunker
    for command in ("evaluate", "predict"):
        code, _, err = _run(capsys, command, model, data)
        line = _one_line_error(err, code)
        assert (
            f"{model} is a SequenceTagger model, which tags sentences: "
            f"use `perceptrons tag {command}`" in line
        )


def test_inspect_describes_a_tagger(chunker, capsys):
    _, model, _ = chunker
    code, out, err = _run(capsys, "inspect", model)
    assert code == 0, err
    assert out.startswith(f"{model}: SequenceTagger")
    assert "classes (6): B-NP, B-PP, B-VP, I-NP, I-VP, O" in out


def test_inspect_shows_a_taggers_templates_and_transitions(chunker, capsys):
    _, model, _ = chunker
    code, out, err = _run(capsys, "inspect", model, "--top", "3")
    assert code == 0, err
    assert "templates (" in out and "bias" in out
    assert "strongest transitions (previous tag -> tag):" in out
    assert "feature " not in out.split("training history:")[1]  # no nameless fingerprints
    code, out, err = _run(capsys, "inspect", model, "--json")
    result = json.loads(out)
    assert result["top_features"] is None
    strongest = result["transitions"]["positive"][0]
    assert strongest[0] in {"B-NP", "I-NP", "B-VP", "I-VP", "B-PP", "O", "<start>"}
    assert strongest[2] > 0
