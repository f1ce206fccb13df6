"""The core's tf-idf (perceptrons.text.TfidfWeighting) is scikit-learn's
TfidfTransformer to the bit, and the core's hashing of name:value documents is
scikit-learn's FeatureHasher's: the command line's text features need no scikit-learn."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction import FeatureHasher
from sklearn.feature_extraction.text import TfidfTransformer

from perceptrons.text import TfidfWeighting
from perceptrons.text._pairs import _PairsVectorizer


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 30),
    st.integers(1, 40),
    st.floats(0.0, 0.6),
    st.integers(0, 2**31 - 1),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_tfidf_is_scikit_learns_to_the_bit(rows, columns, density, seed, idf, sublinear, norm):
    rng = np.random.RandomState(seed)
    counts = sp.random(rows, columns, density=density, random_state=rng, format="csr")
    counts.data = np.floor(counts.data * 20) + 1  # counts of 1 to 20
    expected = TfidfTransformer(
        norm="l2" if norm else None, use_idf=idf, sublinear_tf=sublinear
    ).fit_transform(counts)
    weighting = TfidfWeighting(use_idf=idf, sublinear_tf=sublinear, normalize=norm)
    got = weighting.fit_transform(counts)
    expected = sp.csr_matrix(expected)
    np.testing.assert_array_equal(got.indptr, expected.indptr)
    np.testing.assert_array_equal(got.indices, expected.indices)
    assert np.array_equal(got.data, expected.data)  # bit for bit
    assert (counts.data >= 1).all()  # the counts were not changed in place


@pytest.mark.parametrize("normalize", [False, True])
def test_sublinear_tf_of_a_negative_value_is_the_mirror_image_not_nan(normalize):
    """A vw feature's value may be negative: its sublinear tf is -(1 + ln|tf|), where
    scikit-learn's log makes it NaN (and training then failed on "NaN or infinity")."""
    counts = sp.csr_matrix(np.array([[-3.0, 3.0, 0.0], [-0.5, 0.0, 2.0]]))
    got = TfidfWeighting(use_idf=False, sublinear_tf=True, normalize=normalize).fit_transform(
        counts
    )
    log = np.log
    expected = np.array([[-(1 + log(3)), 1 + log(3), 0.0], [-(1 + log(0.5)), 0.0, 1 + log(2)]])
    if normalize:
        expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(got.toarray(), expected, rtol=1e-15)


def test_no_documents_are_refused_in_scikit_learns_words():
    with pytest.raises(ValueError, match="0 sample"):
        TfidfWeighting(use_idf=True, sublinear_tf=True, normalize=True).fit(sp.csr_matrix((0, 4)))


NAMES = ["a", "Bé", "x" * 9, "日本", "q:1", "", "zz"]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(st.sampled_from(NAMES), st.sampled_from([0.0, 1.0, 2.5, -1.0, -0.0])),
            max_size=6,
        ),
        min_size=1,  # (FeatureHasher refuses an empty list of documents)
        max_size=12,
    ),
    st.sampled_from([1, 7, 8, 1000, 2**20]),
)
def test_hashing_pairs_is_feature_hashers(docs, n_features):
    vectorizer = _PairsVectorizer(lowercase=False, binary=False, n_features=n_features)
    hasher = FeatureHasher(
        n_features=n_features, input_type="pair", alternate_sign=False, dtype=np.float64
    )
    expected = vectorizer._finish(sp.csr_matrix(hasher.transform(docs)))
    got = vectorizer._hashed(docs)
    np.testing.assert_array_equal(got.indptr, expected.indptr)
    np.testing.assert_array_equal(got.indices, expected.indices)
    assert np.array_equal(got.data, expected.data)


def test_a_malformed_matrix_or_another_width_is_refused_before_the_kernel():
    weighting = TfidfWeighting(use_idf=True, sublinear_tf=False, normalize=True)
    weighting.fit(sp.csr_matrix(np.ones((2, 3))))
    with pytest.raises(ValueError, match="4 columns for an idf of 3"):
        weighting.transform(sp.csr_matrix(np.ones((1, 4))))
    bad = sp.csr_matrix(np.ones((2, 3)))
    bad.indptr = np.array([0, 2, 9], dtype=bad.indptr.dtype)  # past the stored values
    with pytest.raises(ValueError, match=r"malformed sparse CSR|index pointer"):
        TfidfWeighting(use_idf=False, sublinear_tf=False, normalize=True).transform(bad)
