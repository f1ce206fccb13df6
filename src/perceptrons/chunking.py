"""Chunks from tag sequences, and chunk precision, recall and F1 by the conlleval rules.

The CoNLL-2000 shared task (Tjong Kim Sang & Buchholz 2000) scores a chunker with its
``conlleval`` script: a predicted chunk counts as correct when a gold chunk has the same
type and the same first and last token. This module reads chunks out of tags the way
that script does, so that its scores can be compared with published ones.

Tags
----
``O``
    Outside any chunk.
``B-TYPE``, ``I-TYPE``, ``E-TYPE``, ``S-TYPE``
    Begin, inside, end and single-token chunk of type ``TYPE`` (the type is what follows
    the first hyphen, and may itself hold hyphens: ``B-PP-CLR``). These cover IOB1,
    IOB2 (BIO), IOE1, IOE2 and IOBES alike, and a file that mixes them.
Anything else, e.g. ``NP``
    Counts as ``I-NP`` (what conlleval's ``-r`` option does with raw tags): adjacent
    tokens of one type form one chunk.

A chunk starts at a token that is ``B-`` or ``S-``; an ``I-`` or ``E-`` after ``O``
or after the end of a chunk (``E-``, ``S-``); and any non-``O`` tag whose type differs
from the previous token's (an ``I-VP`` after an ``I-NP`` starts a VP). A chunk ends
after an ``E-`` or ``S-`` token, before a ``B-``, ``S-`` or ``O`` token, and before a
change of type. Each sentence is read on its own: a chunk never spans two sentences
(conlleval reads a whole file, with a sentence boundary counting as ``O``: the same).

Where conlleval's original rules (which know no ``S-``) are silent, the rules above
decide: ``B-NP`` right after ``E-NP`` starts a new chunk. conlleval's bracket tags
(``[``, ``]``) are not supported: they count as types, like ``NP``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["chunk_scores", "chunks", "looks_like_chunks"]

_PREFIXES = ("B-", "I-", "E-", "S-")


def _split(tag: str) -> tuple[str, str]:
    """(prefix letter, type) of a tag: ``("O", "")`` outside chunks."""
    if tag == "O":
        return "O", ""
    if tag[:2] in _PREFIXES:
        return tag[0], tag[2:]
    return "I", tag


def _ends_before(prev: str, prev_type: str, tag: str, tag_type: str) -> bool:
    """Whether the chunk open at the previous token (if any) ends there."""
    if prev == "O":
        return False
    # E- and S- close their chunk; B-/S-/O close the one before them; so does a new type.
    return prev in "ES" or tag in "BSO" or prev_type != tag_type


def _starts_at(prev: str, prev_type: str, tag: str, tag_type: str) -> bool:
    """Whether a chunk starts at this token."""
    if tag == "O":
        return False
    return tag in "BS" or prev in "OES" or prev_type != tag_type


def chunks(tags: Sequence[str]) -> list[tuple[str, int, int]]:
    """The chunks of one sentence's tags, by the conlleval rules (see the module).

    Parameters
    ----------
    tags : sequence of str
        One tag per token.

    Returns
    -------
    list of (str, int, int)
        ``(type, start, end)`` of each chunk in order: its tokens are
        ``tags[start:end]``.

    Examples
    --------
    >>> chunks(["B-NP", "I-NP", "B-VP", "O", "I-PP", "I-NP"])
    [('NP', 0, 2), ('VP', 2, 3), ('PP', 4, 5), ('NP', 5, 6)]
    >>> chunks(["I-NP", "I-NP", "B-NP", "O"])  # IOB1: B- only between two chunks
    [('NP', 0, 2), ('NP', 2, 3)]
    >>> chunks(["S-PER", "B-ORG", "E-ORG", "E-ORG"])  # IOBES: E- closes its chunk
    [('PER', 0, 1), ('ORG', 1, 3), ('ORG', 3, 4)]
    """
    found: list[tuple[str, int, int]] = []
    prev, prev_type = "O", ""
    start = -1
    for position, tag in enumerate(tags):
        if not isinstance(tag, str):
            raise ValueError(f"tags must be strings, got {tag!r} at position {position}")
        letter, kind = _split(tag)
        if start >= 0 and _ends_before(prev, prev_type, letter, kind):
            found.append((prev_type, start, position))
            start = -1
        if _starts_at(prev, prev_type, letter, kind):
            start = position
        prev, prev_type = letter, kind
    if start >= 0:
        found.append((prev_type, start, len(tags)))
    return found


def looks_like_chunks(tags: Iterable[str]) -> bool:
    """Whether a tag set marks chunks: every tag is ``O`` or has a ``B-``, ``I-``,
    ``E-`` or ``S-`` prefix, and at least one has.

    Parameters
    ----------
    tags : iterable of str
        The tags (a tagger's ``classes_``, or every tag of a file).

    Returns
    -------
    bool

    Examples
    --------
    >>> looks_like_chunks(["B-NP", "I-NP", "O"]), looks_like_chunks(["NN", "DT", "O"])
    (True, False)
    """
    prefixed = False
    for tag in tags:
        if tag[:2] in _PREFIXES:
            prefixed = True
        elif tag != "O":
            return False
    return prefixed


def _prf(correct: int, gold: int, predicted: int) -> dict[str, Any]:
    precision = correct / predicted if predicted else 0.0
    recall = correct / gold if gold else 0.0
    total = precision + recall
    return {
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / total if total else 0.0,
        "gold": gold,
        "predicted": predicted,
        "correct": correct,
    }


def chunk_scores(
    gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]
) -> dict[str, Any]:
    """Chunk precision, recall and F1, overall and by type, and token accuracy, as
    conlleval computes them (Tjong Kim Sang & Buchholz 2000).

    Parameters
    ----------
    gold, predicted : sequence of sequence of str
        The tags of each sentence, gold and predicted, sentence by sentence, token by
        token.

    Returns
    -------
    dict
        ``"overall"`` and ``"by_type"`` (a dict from chunk type, sorted, to the same
        entries), each with ``precision`` (correct / predicted chunks, 0 when nothing is
        predicted), ``recall`` (correct / gold chunks, 0 without gold chunks), ``f1``
        (their harmonic mean, 0 when both are), all fractions in [0, 1], and the chunk
        counts ``gold``, ``predicted``, ``correct``; ``"accuracy"``, the fraction of
        tokens whose tag is right (0 without tokens), and ``"tokens"``.

    Raises
    ------
    ValueError
        When a sentence's two tag sequences differ in length, or the numbers of
        sentences differ.

    Examples
    --------
    >>> gold = [["B-NP", "I-NP", "B-VP", "O"], ["B-PP", "B-NP"]]
    >>> predicted = [["B-NP", "I-NP", "I-VP", "O"], ["B-PP", "I-PP"]]
    >>> scores = chunk_scores(gold, predicted)
    >>> scores["overall"]["correct"], scores["overall"]["predicted"], scores["overall"]["gold"]
    (2, 3, 4)
    >>> round(scores["overall"]["f1"], 4), scores["accuracy"]
    (0.5714, 0.6666666666666666)
    >>> scores["by_type"]["PP"]["precision"], scores["by_type"]["PP"]["recall"]
    (0.0, 0.0)
    """
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted")
    counts: dict[str, list[int]] = {}  # type -> [correct, gold, predicted]
    right = tokens = 0
    for number, (truth, guess) in enumerate(zip(gold, predicted, strict=True)):
        if len(truth) != len(guess):
            raise ValueError(
                f"sentence {number}: {len(truth)} gold tags but {len(guess)} predicted"
            )
        tokens += len(truth)
        right += sum(a == b for a, b in zip(truth, guess, strict=True))
        gold_chunks = chunks(truth)
        guessed = chunks(guess)
        for kind, _, _ in gold_chunks:
            counts.setdefault(kind, [0, 0, 0])[1] += 1
        for kind, _, _ in guessed:
            counts.setdefault(kind, [0, 0, 0])[2] += 1
        for kind, _, _ in set(gold_chunks) & set(guessed):
            counts[kind][0] += 1
    by_type = {kind: _prf(*counts[kind]) for kind in sorted(counts)}
    total = [sum(c[i] for c in counts.values()) for i in range(3)]
    return {
        "overall": _prf(*total),
        "by_type": by_type,
        "accuracy": right / tokens if tokens else 0.0,
        "tokens": tokens,
    }
