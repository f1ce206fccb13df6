"""Text to sparse features, as a scikit-learn transformer that saves without pickle.

:class:`TextFeaturizer` wraps scikit-learn's vectorizers (tokenization, n-grams and
hashing are theirs; a hashing featurizer's ``"regex"`` and ``"whitespace"`` tokenizers
run compiled for ASCII documents, :mod:`perceptrons._kernels.tokens`, with the same
output bit for bit, and leave the other documents to scikit-learn) and adds what
:mod:`perceptrons.io.persist` needs, through its private ``_codec()`` (a
:class:`~perceptrons._engine.StateCodec`): its fitted state as plain arrays and JSON
values (the vocabulary as a list of terms, the idf weights as an array), from which an
equivalent transformer is rebuilt that gives bit-identical output.  Its
``tokenizer="pairs"`` reads documents of ``name:value`` tokens (the ``vw`` and
``counts`` formats of :mod:`perceptrons.io.formats`), adding each value instead of
counting 1.  :func:`top_features` names the heaviest weights of a linear model by its
features.

The estimator here is the learner core of :mod:`perceptrons.text.featurizer` under
scikit-learn's face (:mod:`perceptrons._estimator`).
"""

from __future__ import annotations

from typing import Any

from sklearn.base import TransformerMixin

from perceptrons._estimator import EstimatorFace
from perceptrons.inspection import top_features
from perceptrons.text import featurizer as core

__all__ = ["MAX_NGRAM", "MAX_N_FEATURES", "TextFeaturizer", "top_features"]

#: The most columns ``TextFeaturizer(vocabulary="hashing")`` takes (``n_features``): what
#: scikit-learn's :class:`~sklearn.feature_extraction.text.HashingVectorizer` accepts,
#: ``2**31 - 2`` (its column indices are 32-bit).
MAX_N_FEATURES = core.MAX_N_FEATURES

#: The longest n-grams ``TextFeaturizer`` makes (``ngram_range[1]``): every n-gram length
#: multiplies the terms of each document, and longer word sequences are hardly ever
#: useful features.
MAX_NGRAM = core.MAX_NGRAM


class TextFeaturizer(TransformerMixin, EstimatorFace, core.TextFeaturizer):
    """Raw texts to a CSR matrix of term features: hashed or from a learned vocabulary.

    What scikit-learn's :class:`~sklearn.feature_extraction.text.HashingVectorizer`,
    :class:`~sklearn.feature_extraction.text.CountVectorizer` and
    :class:`~sklearn.feature_extraction.text.TfidfTransformer` give, to the bit (ASCII
    documents counted by the library's own tokenizer, the others by scikit-learn's),
    with a fitted state that :func:`perceptrons.save` writes without pickle. The output
    is always a canonical CSR matrix (sorted indices, no duplicates) of float64 with int32
    indices, the layout the perceptrons train on without a copy.

    Parameters
    ----------
    vocabulary : {"hashing", "fit"}, default="hashing"
        ``"hashing"``: each term goes to column ``hash(term) % n_features`` (no
        vocabulary is stored; colliding terms share a column, and hashed features have
        no names). ``"fit"``: the vocabulary of the training texts (terms in at least
        ``min_df`` documents), one column per term in sorted order.
    n_features : int, default=2**20
        Number of columns with ``vocabulary="hashing"``, at most
        :data:`~perceptrons.features.MAX_N_FEATURES`;
        ignored with ``"fit"``. A model's weights take 8 bytes per column and class
        (three such arrays while an averaged model trains), and ``"tfidf"`` an idf of
        24 bytes per column: each is refused beyond the memory limit
        (a ``MemoryError``) before it is allocated.
    ngram_range : tuple (min_n, max_n), default=(1, 1)
        Word n-grams of every length from ``min_n`` to ``max_n``, ``max_n`` at most
        :data:`~perceptrons.features.MAX_NGRAM`.  Only ``(1, 1)`` with ``tokenizer="pairs"``.
    weighting : {"tf", "binary", "tfidf"}, default="tfidf"
        ``"tf"``: term counts. ``"binary"``: 1 for every term present. ``"tfidf"``: counts
        times the smoothed idf learned on the training texts, ``1 + ln((1 + n) / (1 +
        df))``, each row then scaled to unit L2 norm (scikit-learn's
        ``TfidfVectorizer``). The default, with its sublinear tf: the best weighting
        for every update rule on a held-out part of 20 Newsgroups' training texts, and
        for all but the perceptron's on the sentiment set's
        (``benchmarks/choose_text_defaults.py``). It costs a pass over
        the training texts for the idf (``fit``), and rules out ``partial_fit`` and
        streaming, which take ``"tf"`` or ``"binary"``.
    sublinear_tf : bool or None, default=None
        Replace a count ``tf`` by ``1 + ln(tf)`` (with ``"tf"`` and ``"tfidf"``; no
        effect with ``"binary"``), a negative value (a ``vw`` feature's) by its mirror
        image ``-(1 + ln(-tf))``. ``None``: with ``"tfidf"`` only, as the command
        line's ``--weighting tfidf`` (``"tf"`` stays the counts).
    lowercase : bool, default=True
        Lower-case the texts before tokenizing.
    tokenizer : {"regex", "whitespace", "pairs"}, default="regex"
        ``"regex"``: scikit-learn's default, runs of two or more word characters
        (``(?u)\\b\\w\\w+\\b``). ``"whitespace"``: split on whitespace, for corpora that
        are already tokenized (every token counts, punctuation included).
        ``"pairs"``: whitespace tokens ``name:value`` (split at the last colon, the
        value a finite number; a bare ``name`` is worth 1), the documents of the
        :data:`~perceptrons.io.formats.WEIGHTED_TEXT_FORMATS` (``vw``, ``counts``): the
        feature is ``name`` and its value is added instead of 1, so ``"tf"`` gives
        the file's values exactly (``"binary"`` and ``"tfidf"`` apply as for words;
        ``sublinear_tf`` takes ``1 + ln(value)``, meant for counts, which a ``counts``
        file refuses negative).  A token that is
        not ``name:value`` is a ``ValueError``.
    min_df : int or float, default=1
        With ``vocabulary="fit"``: keep terms found in at least this many training
        documents (an int) or this share of them (a float in (0, 1]). Hashing has no
        document frequencies, so it accepts only the default.
    hashed_names : bool, default=False
        With ``vocabulary="hashing"``: record, while fitting, which training terms each
        hashed column stands for, so that :meth:`feature_names` (and
        :func:`~perceptrons.features.top_features`, ``perceptrons inspect``) can name
        the columns, and a saved model holds the names.  It costs a second pass over
        the training terms in Python (more than the hashing itself), memory for every
        distinct term, and a name table in the model file as large as the vocabulary.
        Without it the
        columns have no names, and :meth:`name_columns` recovers those of chosen
        columns from texts on demand.  Ignored with ``vocabulary="fit"`` (the
        vocabulary is the names).

    Attributes
    ----------
    n_features_out_ : int
        Number of output columns.

    Examples
    --------
    >>> from perceptrons import TextFeaturizer
    >>> texts = ["the cat sat", "the dog sat down", "a cat"]
    >>> counts = TextFeaturizer(vocabulary="fit", tokenizer="whitespace", weighting="tf")
    >>> counts.fit(texts).feature_names()
    ['a', 'cat', 'dog', 'down', 'sat', 'the']
    >>> counts.transform(["the cat and the hat"]).toarray()
    array([[0., 1., 0., 0., 0., 2.]])
    >>> default = TextFeaturizer(vocabulary="fit", tokenizer="whitespace").fit(texts)
    >>> default.transform(["the cat and the hat"]).toarray().round(3)  # log tf x idf, unit rows
    array([[0.   , 0.509, 0.   , 0.   , 0.   , 0.861]])
    """

    # The core's own, not their namesakes of scikit-learn's bases: one tokenization
    # (not TransformerMixin's fit(X).transform(X)), and the featurizer's parameter rules
    # (not BaseEstimator's _parameter_constraints).
    fit_transform = core.TextFeaturizer.fit_transform
    _validate_params = core.TextFeaturizer._validate_params

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.requires_fit = True
        return tags
