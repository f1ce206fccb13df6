"""Sentence readers (CoNLL columns, CoNLL-U, word/TAG) and write_conll."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from perceptrons.io.sequences import (
    TaggedCorpus,
    read_conll,
    read_conllu,
    read_sentences,
    read_tagged,
    sequence_format,
    write_conll,
)

CONLL2000 = Path(__file__).resolve().parents[2] / "shared" / "data" / "conll2000"


def _write(tmp_path: Path, text: str, name: str = "data.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------------------ conll
def test_conll_sentences_tags_and_lines(tmp_path):
    path = _write(
        tmp_path,
        "\n\n-DOCSTART- -X- O\n\nHe PRP B-NP\nreckons VBZ B-VP\n\n\n"
        "the DT B-NP\ncurrent JJ I-NP\n-DOCSTART- -X- O\nIt PRP B-NP\n\n",
    )
    corpus = read_conll(path)
    assert corpus.sentences == [
        [("He", "PRP"), ("reckons", "VBZ")],
        [("the", "DT"), ("current", "JJ")],
        [("It", "PRP")],
    ]
    assert corpus.tags == [["B-NP", "B-VP"], ["B-NP", "I-NP"], ["B-NP"]]
    assert corpus.lines == [5, 9, 12]
    assert corpus.path == str(path)
    assert corpus.format == "conll"
    assert corpus.n_tokens == 5
    assert len(corpus) == 3
    assert corpus.columns[0][0] == ("He", "PRP", "B-NP")


def test_conll_tag_column(tmp_path):
    path = _write(tmp_path, "B-NP He PRP\nB-VP reckons VBZ\n")
    assert read_conll(path, tag_column=0).sentences == [[("He", "PRP"), ("reckons", "VBZ")]]
    assert read_conll(path, tag_column=0).tags == [["B-NP", "B-VP"]]
    middle = read_conll(path, tag_column=-2)
    assert middle.sentences == [[("B-NP", "PRP"), ("B-VP", "VBZ")]]
    assert middle.tags == [["He", "reckons"]]
    untagged = read_conll(path, tag_column=None)
    assert untagged.tags is None
    assert untagged.sentences == [[("B-NP", "He", "PRP"), ("B-VP", "reckons", "VBZ")]]


def test_conll_without_final_newline_and_with_crlf(tmp_path):
    path = tmp_path / "crlf.txt"
    path.write_bytes(b"a X\r\nb Y\r\n\r\nc Z")
    corpus = read_conll(path)
    assert corpus.sentences == [[("a",), ("b",)], [("c",)]]
    assert corpus.tags == [["X", "Y"], ["Z"]]


def test_conll_gzip(tmp_path):
    path = tmp_path / "train.txt.gz"
    path.write_bytes(gzip.compress(b"He PRP B-NP\n\nIt PRP B-NP\n"))
    assert read_conll(path).tags == [["B-NP"], ["B-NP"]]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a X Y\nb Y\n", 2, "2 column(s), but the first token (line 1) has 3"),
        ("a X Y\n\nb Y\n", 3, "a missing tag?"),
        ("a X\nb Y Z\n", 2, "3 column(s), but the first token (line 1) has 2"),
        ("a\nb\n", 1, "one column"),
    ],
)
def test_conll_bad_lines(tmp_path, text, line, message):
    path = _write(tmp_path, text)
    with pytest.raises(ValueError, match=r"\d") as error:
        read_conll(path)
    text = str(error.value)
    assert text.startswith(f"{path}:{line}: ")
    assert message in text
    assert "\n" not in text


def test_conll_tag_column_out_of_range(tmp_path):
    path = _write(tmp_path, "a X\n")
    with pytest.raises(ValueError, match=r":1: no tag column 2: the line has 2 column"):
        read_conll(path, tag_column=2)
    with pytest.raises(ValueError, match="tag_column must be an int or None"):
        read_conll(path, tag_column="1")  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_no_sentences(tmp_path, text):
    path = _write(tmp_path, text)
    for read in (read_conll, read_conllu, read_tagged):
        with pytest.raises(ValueError, match=f"^{path}: no sentences"):
            read(path)


def test_only_document_markers_is_no_sentences(tmp_path):
    path = _write(tmp_path, "-DOCSTART- -X- O\n\n-DOCSTART- -X- O\n")
    with pytest.raises(ValueError, match=f"^{path}: no sentences"):
        read_conll(path)


def test_undecodable_utf8_names_the_line(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("a X\n\ncaf\u00e9 Y\n".encode("latin-1"))
    with pytest.raises(ValueError, match=rf"^{path}:3: not valid UTF-8 \(byte 0xe9 at column 4\)"):
        read_conll(path)


def test_corrupt_gzip(tmp_path):
    path = tmp_path / "bad.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(ValueError, match="corrupt gzip data"):
        read_tagged(path)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_conll(tmp_path / "absent.txt")
    with pytest.raises(IsADirectoryError, match="is a directory"):
        read_conll(tmp_path)


def test_a_leading_bom_is_dropped(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffa X\n".encode())
    assert read_conll(path).sentences == [[("a",)]]


# ----------------------------------------------------------------------------- conllu
_CONLLU = """# sent_id = 1
# text = Don't go home.
1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tDo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_
2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_
3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\t_
3.1\tgone\tgo\tVERB\tVBN\t_\t_\t_\t3:conj\t_
4\thome\thome\tADV\tRB\t_\t3\tadvmod\t_\tSpaceAfter=No
5\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

# sent_id = 2
1\tYes\tyes\tINTJ\tUH\t_\t0\troot\t_\t_
"""


def test_conllu(tmp_path):
    path = _write(tmp_path, _CONLLU, "ud.conllu")
    corpus = read_conllu(path)
    assert corpus.sentences == [[("Do",), ("n't",), ("go",), ("home",), (".",)], [("Yes",)]]
    assert corpus.tags == [["AUX", "PART", "VERB", "ADV", "PUNCT"], ["INTJ"]]
    assert corpus.lines == [4, 12]
    assert corpus.format == "conllu"
    assert read_conllu(path, tag="xpos").tags == [["VBP", "RB", "VB", "RB", "."], ["UH"]]
    assert read_sentences(path).format == "conllu"  # auto, from the extension


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("1\tDo\tdo\tAUX\tVBP\t_\t3\taux\t_\n", "9 tab-separated column(s)"),
        ("1 Do do AUX VBP _ 3 aux _ _\n", "1 tab-separated column(s)"),
        ("x\tDo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_\n", "bad ID 'x'"),
        ("0\tDo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_\n", "bad ID '0'"),
        ("2\tDo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_\n", "word ID 2 where 1 was expected"),
    ],
)
def test_conllu_bad_lines(tmp_path, bad, message):
    path = _write(tmp_path, "# c\n" + bad, "bad.conllu")
    with pytest.raises(ValueError) as error:
        read_conllu(path)
    assert str(error.value).startswith(f"{path}:2: ")
    assert message in str(error.value)


def test_conllu_bad_tag_option(tmp_path):
    with pytest.raises(ValueError, match="tag must be 'upos' or 'xpos'"):
        read_conllu(_write(tmp_path, _CONLLU), tag="lemma")


# ----------------------------------------------------------------------------- tagged
def test_tagged(tmp_path):
    path = _write(tmp_path, "The/DT 1/2/CD cup/NN ./.\n\n  \nHe/PRP  runs/VBZ\n")
    corpus = read_tagged(path)
    assert corpus.sentences == [[("The",), ("1/2",), ("cup",), (".",)], [("He",), ("runs",)]]
    assert corpus.tags == [["DT", "CD", "NN", "."], ["PRP", "VBZ"]]
    assert corpus.lines == [1, 4]
    assert read_tagged(_write(tmp_path, "a_X b_Y\n", "u.txt"), separator="_").tags == [["X", "Y"]]


@pytest.mark.parametrize(
    ("item", "message"),
    [("cup", "'cup': no '/' separator"), ("/NN", "an empty word"), ("cup/", "no tag after")],
)
def test_tagged_bad_items(tmp_path, item, message):
    path = _write(tmp_path, f"The/DT x/NN\nA/DT {item} b/NN\n")
    with pytest.raises(ValueError) as error:
        read_tagged(path)
    assert str(error.value).startswith(f"{path}:2: ")
    assert message in str(error.value)


def test_tagged_bad_separator(tmp_path):
    with pytest.raises(ValueError, match="separator must be a non-blank string"):
        read_tagged(_write(tmp_path, "a/B\n"), separator=" ")


# --------------------------------------------------------------------- read_sentences
def test_read_sentences_dispatch(tmp_path):
    path = _write(tmp_path, "a/X b/Y\n")
    assert read_sentences(path, "tagged").tags == [["X", "Y"]]
    assert read_sentences(path, "conll").sentences == [[("a/X",)]]  # two columns
    assert read_sentences(path, "conll").tags == [["b/Y"]]
    assert read_sentences(path, "conll", tag_column=None).sentences == [[("a/X", "b/Y")]]
    with pytest.raises(ValueError, match="format must be"):
        read_sentences(path, "csv")
    assert sequence_format("x.conllu.gz") == "conllu"
    assert sequence_format("x.txt.gz") == "conll"


# ------------------------------------------------------------------------ write_conll
def test_write_conll_echoes_the_columns_and_adds_the_prediction(tmp_path):
    path = _write(tmp_path, "He PRP B-NP\nreckons VBZ B-VP\n\nIt PRP B-NP\n")
    out = io.StringIO()
    write_conll(out, read_conll(path), [["B-NP", "I-NP"], ["O"]])
    assert out.getvalue() == "He PRP B-NP B-NP\nreckons VBZ B-VP I-NP\n\nIt PRP B-NP O\n\n"


def test_write_conll_conllu_uses_tabs(tmp_path):
    corpus = read_conllu(_write(tmp_path, _CONLLU, "ud.conllu"))
    out = io.StringIO()
    write_conll(out, corpus, [["X"] * 5, ["Y"]])
    first = out.getvalue().split("\n")[0].split("\t")
    assert first == ["1", "Do", "do", "AUX", "VBP", "_", "3", "aux", "_", "_", "X"]


def test_write_conll_refuses_a_wrong_number_of_tags(tmp_path):
    corpus = read_conll(_write(tmp_path, "a X\nb Y\n"))
    with pytest.raises(ValueError, match="1 predicted tags for a sentence of 2 tokens"):
        write_conll(io.StringIO(), corpus, [["X"]])
    with pytest.raises(ValueError, match="2 predicted sentences"):
        write_conll(io.StringIO(), corpus, [["X", "Y"], ["Z"]])


def test_write_conll_without_columns_uses_the_sentences():
    corpus = TaggedCorpus([[("a", "b")]], None, [1], "mem")
    out = io.StringIO()
    write_conll(out, corpus, [["T"]])
    assert out.getvalue() == "a b T\n\n"


# ------------------------------------------------------------------- a round trip
_WORD = st.text(st.characters(codec="utf-8", exclude_categories=("Z", "C")), min_size=1).filter(
    lambda w: w != "-DOCSTART-" and not w.startswith("#")
)


@given(
    st.lists(
        st.lists(st.tuples(_WORD, _WORD, _WORD.filter(lambda w: "/" not in w)), min_size=1),
        min_size=1,
        max_size=5,
    )
)
def test_round_trip_of_every_format(tmp_path_factory, sentences):
    directory = tmp_path_factory.mktemp("round")
    words = [[(w, p) for w, p, _ in s] for s in sentences]
    tags = [[t for _, _, t in s] for s in sentences]
    conll = directory / "a.txt"
    conll.write_text("\n\n".join("\n".join(" ".join(row) for row in s) for s in sentences) + "\n")
    corpus = read_conll(conll)
    assert corpus.sentences == words
    assert corpus.tags == tags
    out = io.StringIO()
    write_conll(out, corpus, tags)
    again = directory / "b.txt"
    again.write_text(out.getvalue())
    assert read_conll(again, tag_column=-2).tags == tags
    assert read_conll(again).tags == tags
    tagged = directory / "c.txt"
    tagged.write_text("\n".join(" ".join(f"{w}/{t}" for w, _, t in s) for s in sentences))
    assert read_tagged(tagged).sentences == [[(w,) for w, _ in s] for s in words]
    assert read_tagged(tagged).tags == tags


# ----------------------------------------------------------------------- real data
@pytest.mark.skipif(
    not (CONLL2000 / "train.txt").exists(), reason="../shared/data/conll2000 is not here"
)
def test_conll2000_train_file():
    corpus = read_conll(CONLL2000 / "train.txt")
    # The README's counts: sections 15-18 of the WSJ, 211,727 tokens.
    assert corpus.n_tokens == 211_727
    assert len(corpus) == 8_936
    assert all(len(token) == 2 for sentence in corpus.sentences for token in sentence)
    assert {tag[:2] for s in corpus.tags or [] for tag in s} <= {"B-", "I-", "O"}


def test_standard_input(monkeypatch):
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a X\n\nb Y\n")))
    corpus = read_conll("-")
    assert corpus.path == "<stdin>"
    assert corpus.tags == [["X"], ["Y"]]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a X\nb\n")))
    with pytest.raises(ValueError, match=r"^<stdin>:2: 1 column"):
        read_conll("-")
