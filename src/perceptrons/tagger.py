"""Sequence labelling with the structured (averaged) perceptron.

:class:`SequenceTagger` is Collins' (2002) perceptron for tagging: the score of a tag
sequence is the sum of the weights of (observation feature, tag) pairs over its tokens
plus the weights of its tag transitions; decoding is exact first-order Viterbi; a
sentence tagged wrongly moves the weights towards the gold sequence's features and away
from the predicted one's. The model is the average of the weights after every sentence
of every epoch, kept exactly with the auxiliary-array trick of
:class:`~perceptrons.AveragedPerceptron` (Daumé 2006), or the last weights.

It is an online learner (:class:`perceptrons.linear._online.OnlineLearner`): the same epoch loop,
``fit_epochs``, ``history_``, early stopping (here on a development set), model files
(:func:`perceptrons.save`) and parameter mixing (:mod:`perceptrons.parallel`, which
McDonald, Hall & Mann (2010) designed for this very model). What is its own: sentences
instead of a feature matrix (:class:`~perceptrons.sequence_features.SequenceFeaturizer`
turns them into integer arrays once), its weight layout (one row per observation
feature, then one per previous tag and one for the sentence start, one column per tag)
and its compiled kernels (:mod:`perceptrons._kernels.sequence`), run by its engine
(``TaggerEngine``, handed out by ``_engine()``).

The estimator here is the learner core of :mod:`perceptrons.sequence.tagger` under
scikit-learn's face (:mod:`perceptrons._estimator`).
"""

from __future__ import annotations

from perceptrons._estimator import EstimatorFace
from perceptrons.sequence import tagger as core
from perceptrons.sequence_features import SequenceFeaturizer

__all__ = ["SequenceTagger"]


class SequenceTagger(EstimatorFace, core.SequenceTagger):
    """Structured averaged perceptron for sequence labelling (Collins 2002).

    Tags whole sentences: part-of-speech tagging, chunking, named entities. Each token
    is described by the features of :class:`~perceptrons.SequenceFeaturizer` (word, affixes, shape,
    neighbouring words, extra input columns
    such as POS tags, and their conjunctions); each tag sequence is scored by its
    (feature, tag) weights plus its tag-transition weights and decoded exactly by
    first-order Viterbi. Training visits the sentences in turn and, when the decoded
    sequence is wrong, adds the gold sequence's features and subtracts the predicted
    one's (``update="perceptron"``), or takes the 1-best MIRA step (Crammer & Singer
    2003; McDonald, Crammer & Pereira 2005) that makes the gold sequence win by its
    Hamming loss (``update="mira"``). The model predicts with the exact average of the
    weights after every sentence of every epoch (``average=True``), the averaged
    perceptron that Collins found essential, or with the last weights.

    Parameters
    ----------
    templates : {"auto", "pos", "chunk"} or list of str, default="auto"
        The feature templates (see
        :class:`~perceptrons.sequence_features.SequenceFeaturizer`): a preset, or
        templates such as ``["bias", "w[0]", "suffix3[0]", "w[-1]|w[0]", "c1[0]"]``.
        ``"auto"`` is ``"chunk"`` when the tokens have extra columns, else ``"pos"``.
    n_features : int, default=None
        None keeps a vocabulary of the features seen in training (at least
        ``min_count`` times); an int hashes every feature into that many columns.
    min_count : int, default=1
        The frequency cutoff of the vocabulary.
    average : bool, default=True
        Predict with the average of the weights after every sentence (else the last).
    update : {"perceptron", "mira"}, default="perceptron"
        The update on a wrongly tagged sentence.
    C : float, default=1.0
        The largest MIRA step (``update="mira"``).
    max_epochs : int, default=10
        Passes over the training sentences.
    shuffle : bool, default=True
        Visit the sentences in a new random order every epoch.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling.
    early_stopping : bool, default=False
        With a development set (``fit(..., dev=...)``): stop once its token accuracy
        has not improved for ``n_iter_no_change`` epochs. Without one: stop after an
        epoch that tags every training sentence right.
    n_iter_no_change : int, default=3
        Patience of ``early_stopping``.
    verbose : int, default=0
        Print a line per epoch.

    Attributes
    ----------
    classes_ : ndarray of str
        The tags, sorted.
    featurizer_ : SequenceFeaturizer
        The fitted featurizer.
    n_features_in_ : int
        Observation feature columns (the featurizer's ``n_features_out_``).
    coef_ : scipy.sparse.csc_matrix of shape (n_tags, n_features)
        Each tag's weight for each observation feature, only the nonzeros stored: the
        perceptron changes just the (feature, tag) pairs of its mistakes (3.6% of them
        for the CoNLL-2000 chunker, 1.9% for its POS tagger), so a dense array would be
        mostly zeros. Its transpose, a CSR matrix, is what decoding reads.
    transitions_ : ndarray of shape (n_tags + 1, n_tags)
        ``transitions_[p, j]``: the weight of tag ``j`` after tag ``p``; the last row
        is for the first token of a sentence.
    history_ : list of dict
        One record per epoch: ``mistakes`` (wrongly tagged sentences), ``examples``
        (sentences) and, with a development set, ``validation_score``. At most the
        10,000 most recent records are kept (``epoch`` still counts from the first).
    n_iter_ : int
        Epochs run by the last ``fit``.

    Examples
    --------
    >>> from perceptrons import SequenceTagger
    >>> X = [["the", "dog", "barks"], ["a", "cat", "sleeps"], ["the", "cat", "barks"]]
    >>> y = [["DT", "NN", "VBZ"], ["DT", "NN", "VBZ"], ["DT", "NN", "VBZ"]]
    >>> tagger = SequenceTagger(max_epochs=5, random_state=0).fit(X, y)
    >>> tagger.predict([["a", "dog", "sleeps"]])
    [['DT', 'NN', 'VBZ']]
    >>> tagger.score(X, y)
    1.0
    """

    # Its featurizer_ is an estimator too (get_params, clone, repr as scikit-learn's).
    _featurizer_class = SequenceFeaturizer
