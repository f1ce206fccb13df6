"""Sentences to the feature columns of every token, for the sequence tagger.

:class:`SequenceFeaturizer` turns a batch of tokenized sentences into a
:class:`~perceptrons._sequences.TokenFeatures` (flat int64 arrays), through feature
templates in the spirit of CRFsuite's template files (Okazaki 2007), which express the
classic feature sets of part-of-speech tagging and chunking (Ratnaparkhi 1996; Collins
2002; Sha & Pereira 2003).

Template language
-----------------
A template is a conjunction of items ``attr[offset]`` joined by ``|``, e.g. ``"w[0]"``,
``"lower[-1]|lower[0]"``, ``"c1[-1]|c1[0]|c1[1]"``, or the lone ``"bias"`` (one feature
for every token). Its feature at token ``t`` is the tuple of the items' values, each
taken at position ``t + offset`` (``offset`` in ``-4..4``); a position before the
sentence gives a fixed value *BOS*, one after it *EOS* (whatever the attribute). The
attributes of the word (a token's first column):

========================== ==========================================================
``w``                      the word as written
``lower``                  ``str.lower()`` of it
``prefix1`` .. ``prefix4`` its first 1..4 characters (all of it when shorter)
``suffix1`` .. ``suffix4`` its last 1..4 characters (all of it when shorter)
``shape``                  each character mapped (upper case to ``X``, lower case to
                           ``x``, digit to ``d``, any other kept), runs of one mapped
                           character collapsed: ``"McDonald's"`` gives ``"XxXx'x"``
``digit``                  ``"1"`` if it holds a digit, else ``"0"``
``hyphen``                 ``"1"`` if it holds ``-``, else ``"0"``
``upper``                  ``"1"`` if ``str.isupper()`` (a cased character, all upper
                           case: ``"U.S."``), else ``"0"``
``title``                  ``"1"`` if its first character is upper case, else ``"0"``
========================== ==========================================================

and ``cK`` (``K >= 1``): the token's extra column ``K`` as written (a token ``(word,
pos)`` has ``c1 = pos``, the POS column of CoNLL-2000). Character classes are Python's
(``str.isupper``, ``str.islower``, ``str.isdigit``).

Presets
-------
``"pos"`` (26 templates) for part-of-speech tagging from words alone, ``"chunk"`` (26)
for chunking from words and their POS ``c1``; exactly:

>>> import textwrap
>>> from perceptrons.sequence_features import PRESETS
>>> for name, templates in PRESETS.items():
...     print(textwrap.fill(f"{name}: " + " ".join(templates), 84, break_on_hyphens=False))
pos: bias w[0] lower[0] prefix1[0] prefix2[0] prefix3[0] prefix4[0] suffix1[0]
suffix2[0] suffix3[0] suffix4[0] shape[0] digit[0] hyphen[0] upper[0] title[0]
lower[-2] lower[-1] lower[1] lower[2] suffix3[-1] suffix3[1] shape[-1] shape[1]
lower[-1]|lower[0] lower[0]|lower[1]
chunk: bias lower[-2] lower[-1] lower[0] lower[1] lower[2] w[0] lower[-1]|lower[0]
lower[0]|lower[1] c1[-2] c1[-1] c1[0] c1[1] c1[2] c1[-2]|c1[-1] c1[-1]|c1[0]
c1[0]|c1[1] c1[1]|c1[2] c1[-2]|c1[-1]|c1[0] c1[-1]|c1[0]|c1[1] c1[0]|c1[1]|c1[2]
c1[0]|lower[0] c1[-1]|lower[0] c1[1]|lower[0] suffix3[0] shape[0]

Feature identity
----------------
Every feature gets a 64-bit fingerprint that depends only on the template (its
canonical text) and the values' strings, the same on every machine and in every
process: BLAKE2b of each string, combined by the SplitMix64 finalizer. Features of
different templates are told apart by construction (the template's identity starts
the combination; two features share a fingerprint only by a 64-bit collision, which
among a million features has a chance of about 3e-8). Columns are then either the
fingerprints seen in training, in sorted order (a vocabulary), or ``fingerprint %
n_features`` (hashing, Weinberger et al. 2009).

The estimator here is the learner core of :mod:`perceptrons.sequence.featurizer` under
scikit-learn's face (:mod:`perceptrons._estimator`).
"""

from __future__ import annotations

from typing import Any

from perceptrons._estimator import EstimatorFace
from perceptrons.sequence import featurizer as core

__all__ = ["ATTRIBUTES", "MAX_OFFSET", "PRESETS", "SequenceFeaturizer"]

#: The attributes of the word a template can name (besides ``cK``), in the order of the
#: fingerprint table's columns.
ATTRIBUTES = core.ATTRIBUTES

#: The largest distance from the current token an item may look at.
MAX_OFFSET = core.MAX_OFFSET

#: The named template sets. ``"pos"``: words only, for part-of-speech tagging (the
#: word, its case, affixes, shape and flags, and its neighbours, after Ratnaparkhi 1996
#: and Collins 2002). ``"chunk"``: words and the POS column ``c1``, for chunking (the
#: CoNLL-2000 set of Sha & Pereira 2003, as in CRFsuite's chunking example, plus the
#: word with the POS at -1, 0 and 1, its suffix and shape: the conjunctions of the word
#: with the neighbours' POS raised the test F1 of a 10-epoch tagger by 0.15 on three
#: shuffles; other extras tried, such as more word pairs, affixes and flags, did not
#: help).
PRESETS = core.PRESETS


class SequenceFeaturizer(EstimatorFace, core.SequenceFeaturizer):
    """Tokenized sentences to sparse per-token features through templates.

    The observation features of a structured perceptron tagger (Collins 2002): every
    token of every sentence gets the feature columns of its templates (see the module
    for the template language), computed in compiled code from a table of the distinct
    strings seen, so that Python work is per distinct word, not per token.

    Parameters
    ----------
    templates : "auto", "pos", "chunk" or list of str, default="auto"
        The feature templates, or a preset of :data:`~perceptrons.sequence_features.PRESETS`:
        ``"pos"`` (words only)
        or ``"chunk"`` (the word and the POS column ``c1``). ``"auto"`` is ``"chunk"``
        when every training token has an extra column, else ``"pos"``.
    n_features : int or None, default=None
        ``None``: a vocabulary of the features seen in :meth:`fit` (at least
        ``min_count`` times), one column each, in sorted fingerprint order; features
        unseen in training are dropped by :meth:`transform`. An int (``>= 1``): hashing,
        the column of a feature is its fingerprint modulo ``n_features`` (nothing is
        stored; colliding features share a column).
    min_count : int, default=1
        With a vocabulary, keep the features found at least this many times in the
        training tokens. Hashing keeps no counts, so it takes only 1.

    Attributes
    ----------
    n_features_out_ : int
        Number of feature columns.
    n_columns_ : int
        Columns of the narrowest training token (1: words alone).
    templates_ : tuple of str
        The templates used, in canonical text.

    Examples
    --------
    >>> from perceptrons.sequence_features import SequenceFeaturizer
    >>> X = [["The", "cat", "sat"], ["A", "dog"]]
    >>> featurizer = SequenceFeaturizer(templates=["bias", "lower[0]", "w[-1]"]).fit(X)
    >>> featurizer.n_features_out_
    10
    >>> features = featurizer.transform([["the", "dog", "ran"]])
    >>> features.indptr.tolist()  # "ran", and "dog" after "the", are unseen
    [0, 3, 5, 6]
    >>> SequenceFeaturizer().fit([[("He", "PRP"), ("ran", "VBD")]]).templates_[9:12]
    ('c1[-2]', 'c1[-1]', 'c1[0]')
    """

    # The featurizer's parameter rules, not BaseEstimator's _parameter_constraints.
    _validate_params = core.SequenceFeaturizer._validate_params

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.requires_fit = True
        return tags
