"""The learned vocabulary of ``TextFeaturizer(vocabulary="fit")`` without scikit-learn
(:mod:`perceptrons.text._vocabulary`) against scikit-learn's ``CountVectorizer``, bit for
bit: the vocabulary, the counts, the errors, the documents scikit-learn still analyzes
(not ASCII) and the model files."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline

from perceptrons import Perceptron, TextFeaturizer, load, save
from perceptrons.text import featurizer as core

ASCII_WHITESPACE = " \t\n\v\f\r\x1c\x1d\x1e\x1f"
ASCII_ALPHABET = "abcXYZ019_" + ".,;:!?'-|#" + ASCII_WHITESPACE + "\x00\x7f"
WORDS = ["the", "The", "CAT", "cat", "a_b", "12", "x", "ab\x1ccd", "_", "dog", "DOG"]

ascii_documents = st.lists(
    st.one_of(
        st.text(alphabet=ASCII_ALPHABET, max_size=30),
        st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join),  # repeated terms
    ),
    max_size=10,
)
# Any Unicode but lone surrogates (refused by number): cases, combining marks, digits
# and connector punctuation of other scripts, Unicode whitespace.
unicode_documents = st.lists(
    st.one_of(
        st.text(alphabet=ASCII_ALPHABET, max_size=30),
        st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=30),
        st.lists(
            st.sampled_from(
                [*WORDS, "Caf\u00c9", "\u0130x", "\u03a3\u03c3", "a\u0301b", "\u0663\u203f"]
            ),
            max_size=12,
        ).map(" \u3000".join),
    ),
    max_size=10,
)
params = st.fixed_dictionaries(
    {
        "tokenizer": st.sampled_from(["regex", "whitespace"]),
        "lowercase": st.booleans(),
        "ngram_range": st.sampled_from([(1, 1), (1, 2), (2, 2), (1, 3), (2, 4)]),
        "min_df": st.one_of(st.integers(1, 4), st.sampled_from([0.05, 0.2, 1 / 3, 0.5, 0.7, 1.0])),
    }
)


def _count_vectorizer(params, **more):
    """scikit-learn's CountVectorizer for these TextFeaturizer parameters."""
    options = {
        "lowercase": params["lowercase"],
        "ngram_range": params["ngram_range"],
        "dtype": np.float64,
        **more,
    }
    if params["tokenizer"] == "whitespace":
        options.update(tokenizer=str.split, token_pattern=None)
    return CountVectorizer(**options)


def _assert_same_counts(ours, theirs):
    theirs = theirs.tocsr()
    theirs.sort_indices()
    assert ours.shape == theirs.shape
    assert_array_equal(ours.indptr, theirs.indptr)
    assert_array_equal(ours.indices, theirs.indices)
    assert_array_equal(ours.data, theirs.data)  # bit-identical values


def _fit_both(params, train):
    """Our featurizer of counts and CountVectorizer fitted on ``train``: their
    matrices, or both errors' messages."""
    ours = TextFeaturizer(vocabulary="fit", weighting="tf", **params)
    theirs = _count_vectorizer(params, min_df=params["min_df"])
    try:
        expected = theirs.fit_transform(train)
    except ValueError as error:
        with pytest.raises(ValueError) as raised:
            ours.fit(train)
        assert str(raised.value) == str(error)
        return None
    return ours, theirs, ours.fit_transform(train), expected


@settings(deadline=None, max_examples=300)
@given(train=unicode_documents, test=unicode_documents, params=params)
def test_the_vocabulary_is_count_vectorizers(train, test, params):
    """Bit for bit, for any Unicode str, with no scikit-learn vectorizer made."""
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(core.TextFeaturizer, "_sklearn_vectorizer", _refused)
        fitted = _fit_both(params, train)
        if fitted is None:  # the same error
            return
        ours, theirs, X, expected = fitted
        _assert_same_counts(X, expected)
        assert ours.feature_names() == theirs.get_feature_names_out().tolist()
        assert ours.n_features_out_ == len(theirs.vocabulary_)
        _assert_same_counts(ours.transform(test), theirs.transform(test))


def _refused(self, terms):
    raise AssertionError("scikit-learn's vectorizer made for a str document")


def test_ascii_documents_import_nothing_of_scikit_learn(monkeypatch):
    monkeypatch.setattr(core.TextFeaturizer, "_sklearn_vectorizer", _refused)
    featurizer = TextFeaturizer(vocabulary="fit", ngram_range=(1, 2), min_df=2)
    featurizer.fit(["the cat sat", "the cat ran", "a dog ran"])
    assert featurizer.feature_names() == ["cat", "ran", "the", "the cat"]
    assert featurizer.transform(["The CAT ran away"]).toarray().shape == (1, 4)


# Unicode letters, case and whitespace (the core's analyzer), and bytes (scikit-learn's).
OTHERS = [
    "Caf\u00e9 CAF\u00c9 na\u00efve",
    "\u0130stanbul \u03a3\u03c3\u03c2",
    "a\u00a0b\u3000cd",
    b"bytes ok",
]


@pytest.mark.parametrize("tokenizer", ["regex", "whitespace"])
@pytest.mark.parametrize("ngram_range", [(1, 1), (1, 2)])
def test_documents_that_are_not_ascii_or_not_str_are_count_vectorizers(
    monkeypatch, tokenizer, ngram_range
):
    params = {"tokenizer": tokenizer, "lowercase": True, "ngram_range": ngram_range, "min_df": 1}
    train = ["the cat sat", *OTHERS, "The dog"]
    test = ["caf\u00e9 the", "cat", b"ok bytes", ""]
    made = []
    sklearn_vectorizer = core.TextFeaturizer._sklearn_vectorizer

    def counted(self, terms):
        made.append(terms)
        return sklearn_vectorizer(self, terms)

    monkeypatch.setattr(core.TextFeaturizer, "_sklearn_vectorizer", counted)
    ours, theirs, X, expected = _fit_both(params, train)
    _assert_same_counts(X, expected)
    assert ours.feature_names() == theirs.get_feature_names_out().tolist()
    assert "caf\u00e9" in ours.feature_names()
    _assert_same_counts(ours.transform(test), theirs.transform(test))
    assert made == [None]  # its analyzer, made once, at the first bytes document


def test_errors_are_count_vectorizers():
    cases = [([], 1), (["a , !"], 1), (["ab cd", "cd"], 3), (["ab", "cd"], 2), (["ab"], 0.5)]
    for train, min_df in cases[:-1]:
        params = {"tokenizer": "regex", "lowercase": True, "ngram_range": (1, 1)}
        assert _fit_both({**params, "min_df": min_df}, train) is None  # the same error


@pytest.mark.parametrize("weighting", ["tf", "binary", "tfidf"])
def test_a_saved_vocabulary_loads_and_transforms_the_same(tmp_path, weighting):
    train = ["the cat sat", "the dog sat", "Caf\u00e9 cat", "dogs and cats"]
    test = ["the cat and the dog", "caf\u00e9 sat", "unknown words only", ""]
    params = {"vocabulary": "fit", "weighting": weighting, "ngram_range": (1, 2)}
    model = make_pipeline(TextFeaturizer(**params), Perceptron(random_state=0))
    model.fit(train, ["a", "b", "a", "b"])
    save(model, tmp_path / "m.npz")
    fitted, loaded = model.steps[0][1], load(tmp_path / "m.npz").steps[0][1]
    assert loaded.feature_names() == fitted.feature_names()
    assert loaded.n_features_out_ == fitted.n_features_out_
    _assert_same_counts(loaded.transform(test), fitted.transform(test))
    # What a file's vocabulary gave before: CountVectorizer(vocabulary=terms), weighed.
    counts = CountVectorizer(
        vocabulary=fitted.feature_names(), ngram_range=(1, 2), dtype=np.float64,
        binary=weighting == "binary",
    ).transform(test)  # fmt: skip
    _assert_same_counts(loaded.transform(test), loaded._weigh(counts))
