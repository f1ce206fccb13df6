"""Chunks and conlleval scores: hand-worked cases, and agreement with a transcription of
conlleval's streaming count on random tag sequences."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from perceptrons.chunking import chunk_scores, chunks, looks_like_chunks


# ---------------------------------------------------------------------------- chunks
@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        ([], []),
        (["O", "O"], []),
        # IOB2: B- starts, I- continues
        (["B-NP", "I-NP", "I-NP"], [("NP", 0, 3)]),
        # an I- after O starts a chunk (IOB1, and conlleval for a stray I-)
        (["O", "I-NP", "I-NP", "O"], [("NP", 1, 3)]),
        # an I- run whose type changes starts a new chunk
        (["I-NP", "I-VP", "I-VP"], [("NP", 0, 1), ("VP", 1, 3)]),
        (["B-NP", "I-VP"], [("NP", 0, 1), ("VP", 1, 2)]),
        # IOB1: B- between two adjacent chunks of one type
        (["I-NP", "B-NP", "I-NP"], [("NP", 0, 1), ("NP", 1, 3)]),
        (["B-NP", "B-NP"], [("NP", 0, 1), ("NP", 1, 2)]),
        # IOE: E- ends a chunk, the next I- starts another
        (["I-NP", "E-NP", "I-NP", "E-NP"], [("NP", 0, 2), ("NP", 2, 4)]),
        (["E-NP", "E-NP"], [("NP", 0, 1), ("NP", 1, 2)]),
        (["I-NP", "I-NP", "O"], [("NP", 0, 2)]),
        # IOBES
        (
            ["S-PER", "S-PER", "O", "B-LOC", "I-LOC", "E-LOC"],
            [("PER", 0, 1), ("PER", 1, 2), ("LOC", 3, 6)],
        ),
        (["B-ORG", "S-ORG"], [("ORG", 0, 1), ("ORG", 1, 2)]),
        (["S-ORG", "I-ORG"], [("ORG", 0, 1), ("ORG", 1, 2)]),
        (["E-NP", "B-NP", "E-NP"], [("NP", 0, 1), ("NP", 1, 3)]),
        # an E- with another type than the open chunk's starts (and ends) its own
        (["B-NP", "E-VP"], [("NP", 0, 1), ("VP", 1, 2)]),
        # a tag without a prefix counts as I-TYPE
        (["NP", "NP", "VP", "O", "NP"], [("NP", 0, 2), ("VP", 2, 3), ("NP", 4, 5)]),
        # the type is what follows the first hyphen
        (["B-PP-CLR", "I-PP-CLR"], [("PP-CLR", 0, 2)]),
        # a chunk open at the end of the sentence ends there
        (["O", "B-NP"], [("NP", 1, 2)]),
    ],
)
def test_chunks_by_hand(tags, expected):
    assert chunks(tags) == expected


def test_chunks_refuses_non_strings():
    with pytest.raises(ValueError, match="position 1"):
        chunks(["B-NP", 3])


def test_looks_like_chunks():
    assert looks_like_chunks(["B-NP", "I-NP", "O"])
    assert looks_like_chunks(["S-PER", "E-PER"])
    assert not looks_like_chunks(["O"])
    assert not looks_like_chunks(["NN", "VB"])
    assert not looks_like_chunks(["B-NP", "NN"])  # a POS tag among them: not a chunk set
    assert not looks_like_chunks([])


# ----------------------------------------------------------------------- chunk_scores
def test_scores_by_hand():
    gold = [["B-NP", "I-NP", "O", "B-VP"], ["B-NP"]]
    predicted = [["B-NP", "B-NP", "O", "B-VP"], ["O"]]
    scores = chunk_scores(gold, predicted)
    # gold chunks: NP(0,2), VP(3,4), NP(0,1); predicted: NP(0,1), NP(1,2), VP(3,4)
    assert scores["overall"] == {
        "precision": 1 / 3,
        "recall": 1 / 3,
        "f1": 1 / 3,
        "gold": 3,
        "predicted": 3,
        "correct": 1,
    }
    assert scores["by_type"]["NP"]["correct"] == 0
    assert scores["by_type"]["NP"]["predicted"] == 2
    assert scores["by_type"]["NP"]["f1"] == 0.0
    assert scores["by_type"]["VP"]["f1"] == 1.0
    assert list(scores["by_type"]) == ["NP", "VP"]
    assert scores["accuracy"] == 3 / 5
    assert scores["tokens"] == 5


def test_precision_is_zero_when_nothing_is_predicted():
    scores = chunk_scores([["B-NP", "O"]], [["O", "O"]])
    assert scores["overall"]["predicted"] == 0
    assert scores["overall"]["precision"] == 0.0
    assert scores["overall"]["recall"] == 0.0
    assert scores["overall"]["f1"] == 0.0
    assert scores["accuracy"] == 0.5


def test_a_predicted_type_without_gold_chunks_has_zero_recall():
    scores = chunk_scores([["O"]], [["B-ADJP"]])
    assert scores["by_type"]["ADJP"] == {
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "gold": 0,
        "predicted": 1,
        "correct": 0,
    }


def test_a_chunk_never_spans_two_sentences():
    # Concatenated without a boundary these would be one NP(0, 2) in each: correct.
    gold = [["B-NP"], ["I-NP"]]
    predicted = [["B-NP"], ["I-NP"]]
    scores = chunk_scores(gold, predicted)
    assert scores["overall"]["gold"] == 2
    assert scores["overall"]["correct"] == 2
    # The second sentence's I-NP starts its own chunk: a B-NP predicts the same chunk.
    assert chunk_scores([["I-NP"]], [["B-NP"]])["overall"]["f1"] == 1.0


def test_empty_input():
    scores = chunk_scores([], [])
    assert scores["overall"]["f1"] == 0.0
    assert scores["accuracy"] == 0.0
    assert scores["by_type"] == {}


def test_mismatched_lengths_are_refused():
    with pytest.raises(ValueError, match="2 gold sentences but 1 predicted"):
        chunk_scores([["O"], ["O"]], [["O"]])
    with pytest.raises(ValueError, match="sentence 1: 1 gold tags but 2 predicted"):
        chunk_scores([["O"], ["O"]], [["O"], ["O", "O"]])


# ------------------------------------------- an independent transcription of conlleval
def _conlleval_split(tag):
    if tag == "O":
        return "O", ""
    head, sep, rest = tag.partition("-")
    if sep and head in ("B", "I", "E", "S"):
        return head, rest
    return "I", tag


def _end_of_chunk(prev_tag, tag, prev_type, type_):
    # conlleval's endOfChunk as a list of cases, with the S- cases of its IOBES ports.
    cases = {
        ("B", "B"), ("B", "O"), ("B", "S"),
        ("I", "B"), ("I", "O"), ("I", "S"),
        ("E", "B"), ("E", "E"), ("E", "I"), ("E", "O"), ("E", "S"),
        ("S", "B"), ("S", "E"), ("S", "I"), ("S", "O"), ("S", "S"),
    }  # fmt: skip
    return (prev_tag, tag) in cases or (prev_tag != "O" and prev_type != type_)


def _start_of_chunk(prev_tag, tag, prev_type, type_):
    cases = {
        ("B", "B"), ("I", "B"), ("O", "B"), ("E", "B"), ("S", "B"),
        ("B", "S"), ("I", "S"), ("O", "S"), ("E", "S"), ("S", "S"),
        ("O", "I"), ("E", "I"), ("S", "I"),
        ("O", "E"), ("E", "E"), ("S", "E"),
    }  # fmt: skip
    return (prev_tag, tag) in cases or (tag != "O" and prev_type != type_)


def _conlleval(gold, predicted):
    """conlleval's single pass over the concatenated file, a boundary read as O."""
    correct_chunk = {}
    found_correct = {}
    found_guessed = {}
    tokens = correct_tags = 0
    in_correct = False
    last_correct, last_correct_type = "O", ""
    last_guessed, last_guessed_type = "O", ""
    stream = []
    for truth, guess in zip(gold, predicted, strict=True):
        stream += [*zip(truth, guess, strict=True), None]
    for item in stream:
        if item is None:
            (c_tag, c_type), (g_tag, g_type) = ("O", ""), ("O", "")
        else:
            (c_tag, c_type), (g_tag, g_type) = map(_conlleval_split, item)
        end_c = _end_of_chunk(last_correct, c_tag, last_correct_type, c_type)
        end_g = _end_of_chunk(last_guessed, g_tag, last_guessed_type, g_type)
        start_c = _start_of_chunk(last_correct, c_tag, last_correct_type, c_type)
        start_g = _start_of_chunk(last_guessed, g_tag, last_guessed_type, g_type)
        if in_correct:
            if end_c and end_g and last_guessed_type == last_correct_type:
                in_correct = False
                correct_chunk[last_correct_type] = correct_chunk.get(last_correct_type, 0) + 1
            elif end_c != end_g or g_type != c_type:
                in_correct = False
        if start_c and start_g and g_type == c_type:
            in_correct = True
        if start_c:
            found_correct[c_type] = found_correct.get(c_type, 0) + 1
        if start_g:
            found_guessed[g_type] = found_guessed.get(g_type, 0) + 1
        if item is not None:
            tokens += 1
            correct_tags += item[0] == item[1]
        last_correct, last_correct_type = c_tag, c_type
        last_guessed, last_guessed_type = g_tag, g_type
    return correct_chunk, found_correct, found_guessed, correct_tags, tokens


_TAG = st.sampled_from(
    ["O", "B-NP", "I-NP", "E-NP", "S-NP", "B-VP", "I-VP", "E-VP", "S-VP", "NP", "PP"]
)


@st.composite
def _pairs(draw):
    lengths = draw(st.lists(st.integers(0, 7), max_size=6))
    gold = [draw(st.lists(_TAG, min_size=n, max_size=n)) for n in lengths]
    predicted = [draw(st.lists(_TAG, min_size=n, max_size=n)) for n in lengths]
    return gold, predicted


@given(_pairs())
def test_agrees_with_conlleval_on_random_tags(pair):
    gold, predicted = pair
    scores = chunk_scores(gold, predicted)
    correct, found_gold, found_guessed, right, tokens = _conlleval(gold, predicted)
    assert scores["tokens"] == tokens
    assert scores["accuracy"] == (right / tokens if tokens else 0.0)
    assert scores["overall"]["correct"] == sum(correct.values())
    assert scores["overall"]["gold"] == sum(found_gold.values())
    assert scores["overall"]["predicted"] == sum(found_guessed.values())
    assert set(scores["by_type"]) == set(found_gold) | set(found_guessed)
    for kind, entry in scores["by_type"].items():
        assert entry["correct"] == correct.get(kind, 0)
        assert entry["gold"] == found_gold.get(kind, 0)
        assert entry["predicted"] == found_guessed.get(kind, 0)
        for key in ("precision", "recall", "f1"):
            assert 0.0 <= entry[key] <= 1.0
    # chunks() partitions nothing twice: chunks are disjoint and in order
    for tags in gold + predicted:
        spans = chunks(tags)
        assert all(a[2] <= b[1] for a, b in itertools.pairwise(spans))
        assert all(tags[start] != "O" for _, start, _ in spans)


@given(_pairs())
def test_a_perfect_prediction_scores_one(pair):
    gold, _ = pair
    scores = chunk_scores(gold, gold)
    if scores["overall"]["gold"]:
        assert scores["overall"]["f1"] == 1.0
    if scores["tokens"]:
        assert scores["accuracy"] == 1.0
