"""TextFeaturizer: scikit-learn's vectorizers, with a fitted state that saves without pickle."""

import io

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer, TfidfVectorizer

from perceptrons import TextFeaturizer

TRAIN = [
    "The cat sat on the mat .",
    "the dog sat down , the dog barked",
    "A cat and a dog ! cat cat",
    "nothing in common here",
    "Don't stop : the cat's toy",
]
NEW = ["the cat and the hat", "zebra quokka", "", "DOG dog Dog down"]

CONFIGS = [
    {},
    {"n_features": 2**8},
    {"weighting": "binary", "tokenizer": "whitespace"},
    {"weighting": "tfidf", "n_features": 64, "ngram_range": (1, 2)},
    {"weighting": "tfidf", "sublinear_tf": True},
    {"weighting": "tf", "sublinear_tf": True, "lowercase": False},
    {"vocabulary": "fit"},
    {"vocabulary": "fit", "tokenizer": "whitespace", "min_df": 2},
    {"vocabulary": "fit", "weighting": "binary", "ngram_range": (1, 3)},
    {"vocabulary": "fit", "weighting": "tfidf", "sublinear_tf": True, "min_df": 0.3},
    {"vocabulary": "fit", "weighting": "tf", "sublinear_tf": True, "ngram_range": (2, 2)},
]


def _assert_same_csr(A, B):
    assert A.shape == B.shape
    assert_array_equal(A.indptr, B.indptr)
    assert_array_equal(A.indices, B.indices)
    assert_array_equal(A.data, B.data)  # bit-identical values, not approximately equal


def _assert_canonical(X, n_rows, n_columns):
    assert isinstance(X, sp.csr_matrix)
    assert X.shape == (n_rows, n_columns)
    assert X.dtype == np.float64
    assert X.indices.dtype == np.int32
    assert X.has_canonical_format


@pytest.mark.parametrize("params", CONFIGS, ids=str)
def test_each_configuration_fits_and_transforms(params):
    featurizer = TextFeaturizer(**params)
    X = featurizer.fit_transform(TRAIN)
    _assert_canonical(X, len(TRAIN), featurizer.n_features_out_)
    assert X.nnz > 0
    _assert_same_csr(X, TextFeaturizer(**params).fit(TRAIN).transform(TRAIN))
    _assert_canonical(featurizer.transform(NEW), len(NEW), featurizer.n_features_out_)


@pytest.mark.parametrize("params", CONFIGS, ids=str)
def test_export_import_gives_identical_output(params):
    fitted = TextFeaturizer(**params).fit(TRAIN)
    arrays, values = fitted._codec().export_state()
    assert all(isinstance(a, np.ndarray) for a in arrays.values())
    assert values == {"n_features_out": fitted.n_features_out_}  # the strings are arrays
    rebuilt = TextFeaturizer(**params)
    rebuilt._codec().import_state({k: np.array(v) for k, v in arrays.items()}, values)
    assert rebuilt.n_features_out_ == fitted.n_features_out_
    assert rebuilt.feature_names() == fitted.feature_names()
    for texts in (TRAIN, NEW):
        _assert_same_csr(rebuilt.transform(texts), fitted.transform(texts))


def test_unseen_words_are_dropped_by_a_vocabulary():
    featurizer = TextFeaturizer(weighting="tf", vocabulary="fit").fit(TRAIN)
    X = featurizer.transform(["zebra quokka", "zebra cat"])
    assert X[0].nnz == 0
    assert X[1].nnz == 1
    assert featurizer.feature_names()[X[1].indices[0]] == "cat"


def test_unseen_words_still_hash():
    featurizer = TextFeaturizer(weighting="tf", n_features=2**10).fit(TRAIN)
    assert featurizer.transform(["zebra quokka"]).nnz == 2


def test_feature_names_follow_the_columns():
    featurizer = TextFeaturizer(weighting="tf", vocabulary="fit", tokenizer="whitespace").fit(TRAIN)
    names = featurizer.feature_names()
    assert names == sorted(names)
    assert len(names) == featurizer.n_features_out_
    for column, name in enumerate(names):
        assert featurizer.transform([name]).indices.tolist() == [column]


@pytest.mark.parametrize("n_features", [8, 2**20])
def test_hashed_columns_are_named_by_the_training_terms_that_reach_them(n_features):
    featurizer = TextFeaturizer(
        weighting="tf", n_features=n_features, ngram_range=(1, 2), hashed_names=True
    )
    names = featurizer.fit(TRAIN).feature_names()
    assert len(names) == n_features
    for column, name in enumerate(names):
        for term in filter(None, name.split("|")):
            # The vectorizer itself puts each named term in that column.
            assert column in featurizer.transform([term]).indices.tolist()
    named = {term for name in names for term in name.split("|") if term}
    assert {"cat", "dog", "the cat"} <= named
    if n_features == 8:  # 8 columns for dozens of terms: collisions are joined
        assert any("|" in name for name in names)


def test_ngram_names_are_space_joined():
    featurizer = TextFeaturizer(weighting="tf", vocabulary="fit", ngram_range=(1, 2)).fit(
        ["red fox ran"]
    )
    assert featurizer.feature_names() == ["fox", "fox ran", "ran", "red", "red fox"]


def test_tokenizers():
    regex = TextFeaturizer(weighting="tf", vocabulary="fit").fit(["Don't stop , a cat!"])
    assert regex.feature_names() == ["cat", "don", "stop"]
    spaces = TextFeaturizer(weighting="tf", vocabulary="fit", tokenizer="whitespace").fit(
        ["Don't stop , a cat!"]
    )
    assert spaces.feature_names() == [",", "a", "cat!", "don't", "stop"]
    cased = TextFeaturizer(weighting="tf", vocabulary="fit", lowercase=False).fit(["Cat cat"])
    assert cased.feature_names() == ["Cat", "cat"]


def test_counts_equal_scikit_learn():
    ours = TextFeaturizer(
        weighting="tf", vocabulary="fit", ngram_range=(1, 2), min_df=2
    ).fit_transform(TRAIN)
    theirs = CountVectorizer(ngram_range=(1, 2), min_df=2).fit_transform(TRAIN)
    assert_array_equal(ours.toarray(), theirs.toarray())
    hashed = TextFeaturizer(weighting="tf", n_features=2**12).fit_transform(TRAIN)
    expected = HashingVectorizer(n_features=2**12, alternate_sign=False, norm=None)
    assert_array_equal(hashed.toarray(), expected.transform(TRAIN).toarray())


def test_weightings():
    counts = TextFeaturizer(weighting="tf", vocabulary="fit").fit(TRAIN).transform(NEW).toarray()
    binary = TextFeaturizer(vocabulary="fit", weighting="binary").fit(TRAIN).transform(NEW)
    assert_array_equal(binary.toarray(), counts > 0)
    sublinear = (
        TextFeaturizer(weighting="tf", vocabulary="fit", sublinear_tf=True)
        .fit(TRAIN)
        .transform(NEW)
    )
    expected = np.where(counts > 0, 1 + np.log(np.maximum(counts, 1)), 0)
    assert_allclose(sublinear.toarray(), expected)
    tfidf = TextFeaturizer(vocabulary="fit", weighting="tfidf", sublinear_tf=True).fit(TRAIN)
    reference = TfidfVectorizer(sublinear_tf=True).fit(TRAIN)
    assert_allclose(tfidf.transform(NEW).toarray(), reference.transform(NEW).toarray())
    norms = sp.linalg.norm(tfidf.transform(TRAIN), axis=1)
    assert_allclose(norms, 1.0)


def test_hashing_tfidf_stores_its_idf():
    featurizer = TextFeaturizer(weighting="tfidf", n_features=32).fit(TRAIN)
    arrays, values = featurizer._codec().export_state()
    assert arrays["idf"].shape == (32,)
    assert values == {"n_features_out": 32}
    stateless = TextFeaturizer(weighting="tf", n_features=32).fit(TRAIN)
    arrays, values = stateless._codec().export_state()
    assert "idf" not in arrays and values["n_features_out"] == 32  # no idf without tf-idf


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"vocabulary": "learn"}, "vocabulary"),
        ({"n_features": 0}, "n_features"),
        ({"n_features": 2.5}, "n_features"),
        ({"n_features": 2**31}, "n_features"),
        ({"ngram_range": (2, 1)}, "ngram_range"),
        ({"ngram_range": (0, 1)}, "ngram_range"),
        ({"ngram_range": 2}, "ngram_range"),
        ({"weighting": "idf"}, "weighting"),
        ({"sublinear_tf": "yes"}, "sublinear_tf"),
        ({"lowercase": None}, "lowercase"),
        ({"tokenizer": str.split}, "tokenizer"),
        ({"vocabulary": "fit", "min_df": 0}, "min_df"),
        ({"vocabulary": "fit", "min_df": 1.5}, "min_df"),
        ({"vocabulary": "fit", "min_df": True}, "min_df"),
        ({"min_df": 2}, "min_df"),  # hashing has no document frequencies
    ],
)
def test_bad_parameters_are_named(params, name):
    with pytest.raises(ValueError, match=f"'{name}'"):
        TextFeaturizer(**params).fit(TRAIN)


def test_bad_input():
    with pytest.raises(ValueError, match="single string"):
        TextFeaturizer(weighting="tf").fit("one document")
    featurizer = TextFeaturizer(weighting="tf").fit(TRAIN)
    with pytest.raises(ValueError, match="single string"):
        featurizer.transform("one document")
    with pytest.raises(ValueError, match="not fitted"):
        TextFeaturizer(weighting="tf").transform(TRAIN)


@pytest.mark.parametrize(
    ("params", "verb"),
    [
        ({"weighting": "tf", "hashed_names": True}, "fit"),
        ({"weighting": "tf", "hashed_names": True}, "partial_fit"),
        ({"weighting": "tf", "hashed_names": True}, "transform"),
        ({"weighting": "tf", "hashed_names": True}, "name_columns"),
        ({"vocabulary": "fit"}, "fit"),
        ({"vocabulary": "fit"}, "transform"),
    ],
)
@pytest.mark.parametrize(
    ("document", "error", "said"),
    [
        (3, ValueError, "document 1 is int, not str"),
        (None, ValueError, "document 1 is NoneType, not str"),
        ("b\ud800c", ValueError, "document 1 is not Unicode text: it holds U\\+D800"),
    ],
)
def test_a_document_that_is_not_text_is_named(params, verb, document, error, said):
    """Not a str (a number), or a str UTF-8 cannot encode (a lone surrogate): one line
    naming the document, from every verb, never an AttributeError of the analyzer's or
    a UnicodeEncodeError of the hash's; a generator of documents is checked as read."""
    featurizer = TextFeaturizer(**params)
    if verb in ("transform", "name_columns"):
        featurizer.fit(TRAIN)
    with pytest.raises(error, match=f"^TextFeaturizer: {said}"):
        getattr(featurizer, verb)(doc for doc in ["a plain document", document])


def test_import_rejects_inconsistent_state():
    arrays, values = (
        TextFeaturizer(weighting="tf", vocabulary="fit").fit(TRAIN)._codec().export_state()
    )
    with pytest.raises(ValueError, match="vocabulary"):
        TextFeaturizer(weighting="tf", vocabulary="fit")._codec().import_state(
            arrays, {**values, "n_features_out": 3}
        )
    with pytest.raises(ValueError, match="n_features"):
        TextFeaturizer(weighting="tf", n_features=16)._codec().import_state(
            {}, {"n_features_out": 8}
        )
    with pytest.raises(ValueError, match="idf"):
        TextFeaturizer(weighting="tfidf", n_features=8)._codec().import_state(
            {"idf": np.ones(4)}, {"n_features_out": 8}
        )


def test_scikit_learn_conventions():
    featurizer = TextFeaturizer(weighting="tf", vocabulary="fit", ngram_range=(1, 2))
    assert clone(featurizer).get_params() == featurizer.get_params()
    assert "ngram_range=(1, 2)" in repr(featurizer)


# ----------------------------------------------------------------- name:value pairs

PAIRS = [
    "great:2 not_good:1 was_very:1",
    "bad:3 a:b:2 great:0.5 great:1",
    "fun",
    "",
    "Great:4 bad:1",
]


def _parsed(doc: str, lowercase: bool = False) -> dict[str, float]:
    """The reference reading of a pairs document: values of repeated names add up."""
    out: dict[str, float] = {}
    for token in (doc.lower() if lowercase else doc).split():
        name, colon, value = token.rpartition(":")
        name, number = (name, float(value)) if colon else (token, 1.0)
        out[name] = out.get(name, 0.0) + number
    return out


def test_pairs_give_the_values_of_a_counts_file_exactly(tmp_path):
    from sklearn.feature_extraction import DictVectorizer

    from perceptrons.io.formats import read_data

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)] + ["not_good", "was_very", "a:b"]
    lines = []
    for i in range(60):
        names = rng.choice(words, size=rng.integers(1, 12), replace=False)
        counts = " ".join(f"{n}:{rng.integers(1, 6)}" for n in names)
        lines.append(f"{counts} #label#:{('positive', 'negative')[i % 2]}")
    path = tmp_path / "books.review"
    path.write_text("\n".join(lines) + "\n")
    data = read_data(path)
    assert data.format == "counts"
    featurizer = TextFeaturizer(
        weighting="tf", vocabulary="fit", tokenizer="pairs", lowercase=False
    )
    X = featurizer.fit_transform(data.texts)
    dicts = [_parsed(line.rsplit(" ", 1)[0]) for line in lines]
    reference = DictVectorizer(sort=True)
    expected = reference.fit_transform(dicts)
    assert featurizer.feature_names() == reference.get_feature_names_out().tolist()
    _assert_canonical(X, 60, len(reference.vocabulary_))
    _assert_same_csr(X, sp.csr_matrix(expected))
    # The same file, vw: namespaces are prefixes; importance weights are not features.
    vw = TextFeaturizer(weighting="tf", vocabulary="fit", tokenizer="pairs", lowercase=False)
    vw_data = read_data("-", "vw", stdin=io.StringIO("1 2 |ns a:2 b | c:0.5 c:0.25\n"))
    vw_X = vw.fit_transform(vw_data.texts)
    assert vw.feature_names() == ["c", "ns^a", "ns^b"]
    assert_array_equal(vw_X.toarray(), [[0.75, 2, 1]])


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"vocabulary": "fit"},
        {"vocabulary": "fit", "min_df": 2},
        {"vocabulary": "fit", "min_df": 0.5, "weighting": "binary"},
        {"weighting": "tfidf", "n_features": 16},
        {"vocabulary": "fit", "weighting": "tfidf", "sublinear_tf": True},
        {"n_features": 8, "weighting": "binary", "lowercase": False},
    ],
    ids=str,
)
def test_pairs_configurations_and_their_saved_state(params):
    featurizer = TextFeaturizer(tokenizer="pairs", **params)
    X = featurizer.fit_transform(PAIRS)
    _assert_canonical(X, len(PAIRS), featurizer.n_features_out_)
    arrays, values = featurizer._codec().export_state()
    rebuilt = TextFeaturizer(tokenizer="pairs", **params)
    rebuilt._codec().import_state(arrays, values)
    assert rebuilt.feature_names() == featurizer.feature_names()
    for texts in (PAIRS, ["great:7 unseen:2", "bad"]):
        _assert_same_csr(rebuilt.transform(texts), featurizer.transform(texts))


def test_pairs_with_vocabulary_min_df_binary_and_tf():
    lowered = [_parsed(doc, lowercase=True) for doc in PAIRS]
    fitted = TextFeaturizer(weighting="tf", vocabulary="fit", tokenizer="pairs").fit(PAIRS)
    assert fitted.feature_names() == ["a:b", "bad", "fun", "great", "not_good", "was_very"]
    X = fitted.transform(PAIRS).toarray()
    names = fitted.feature_names()
    assert_array_equal(X, [[d.get(n, 0.0) for n in names] for d in lowered])
    assert X[1, names.index("great")] == 1.5 and X[4, names.index("great")] == 4
    pruned = TextFeaturizer(weighting="tf", vocabulary="fit", tokenizer="pairs", min_df=2).fit(
        PAIRS
    )
    assert pruned.feature_names() == ["bad", "great"]
    binary = TextFeaturizer(vocabulary="fit", tokenizer="pairs", weighting="binary").fit(PAIRS)
    assert_array_equal(binary.transform(PAIRS).toarray(), X > 0)


def test_pairs_hash_like_the_words_and_name_their_columns():
    hashed = TextFeaturizer(
        weighting="tf", tokenizer="pairs", n_features=2**12, hashed_names=True
    ).fit(PAIRS)
    words = TextFeaturizer(weighting="tf", tokenizer="whitespace", n_features=2**12)
    # A bare name is worth 1: the same columns as the whitespace tokens.
    _assert_same_csr(hashed.transform(["fun great"]), words.fit_transform(["fun great"]))
    X = hashed.transform(["great:2.5 bad:1"])
    names = hashed.feature_names()
    assert sorted(names[j] for j in X.indices) == ["bad", "great"]
    assert X[0, names.index("great")] == 2.5


def test_pairs_refuse_ngrams_and_bad_tokens():
    with pytest.raises(ValueError, match=r"'ngram_range' must be \(1, 1\) with tokenizer='pairs'"):
        TextFeaturizer(weighting="tf", tokenizer="pairs", ngram_range=(1, 2)).fit(PAIRS)
    for token in ("great:x", "great:", ":2", "a:inf", "a:nan"):
        with pytest.raises(ValueError, match="is not name:value"):
            TextFeaturizer(weighting="tf", tokenizer="pairs").fit([f"fine:1 {token}"])
    with pytest.raises(ValueError, match="empty vocabulary"):
        TextFeaturizer(weighting="tf", tokenizer="pairs", vocabulary="fit").fit(["", " "])


# ----------------------------------------------------------------- bounds


def test_n_features_is_bounded_at_what_the_hashing_vectorizer_takes():
    from perceptrons.features import MAX_N_FEATURES

    assert MAX_N_FEATURES == 2**31 - 2
    with pytest.raises(ValueError, match=r"^TextFeaturizer: parameter 'n_features' must be"):
        TextFeaturizer(weighting="tf", n_features=2**31 - 1).fit(TRAIN)
    X = TextFeaturizer(weighting="tf", n_features=MAX_N_FEATURES).fit_transform(TRAIN[:1])
    assert X.shape == (1, MAX_N_FEATURES)


def test_ngram_range_is_bounded_at_fit_set_params_and_load():
    from perceptrons.features import MAX_NGRAM

    assert MAX_NGRAM == 10
    TextFeaturizer(weighting="tf", ngram_range=(1, MAX_NGRAM)).fit(TRAIN)
    message = "^TextFeaturizer: parameter 'ngram_range' must be .* <= 10"
    with pytest.raises(ValueError, match=message):
        TextFeaturizer(weighting="tf", ngram_range=(1, 100_000)).fit(TRAIN)
    with pytest.raises(ValueError, match=message):
        TextFeaturizer(weighting="tf").set_params(ngram_range=[1, 100_000]).fit_transform(TRAIN)
    # Loading a saved model rebuilds the featurizer and imports its state: refused too.
    arrays, values = (
        TextFeaturizer(weighting="tf", n_features=16).fit(TRAIN)._codec().export_state()
    )
    with pytest.raises(ValueError, match=message):
        TextFeaturizer(
            weighting="tf", n_features=16, ngram_range=[1, 100_000]
        )._codec().import_state(arrays, values)


def test_a_saved_model_with_too_long_ngrams_does_not_load(tmp_path):
    from sklearn.pipeline import make_pipeline

    from perceptrons import Perceptron, load, save

    featurizer = TextFeaturizer(weighting="tf", n_features=16)
    model = make_pipeline(featurizer, Perceptron()).fit(TRAIN[:2], [0, 1])
    featurizer.set_params(ngram_range=(1, 100_000))  # set_params stores (scikit-learn rule)
    save(model, tmp_path / "m.npz")
    with pytest.raises(ValueError, match="'ngram_range' must be"):
        load(tmp_path / "m.npz")


@pytest.mark.parametrize("n_classes", [2, 3])
def test_top_features_of_a_sparsified_model_equal_the_dense_ones(n_classes):
    """A sparse coef_ is ranked by its nonzeros, with the same names and weights."""
    from perceptrons import AveragedPerceptron
    from perceptrons.features import top_features

    rng = np.random.default_rng(0)
    X = sp.random(60, 40, density=0.1, random_state=1, format="csr")
    y = rng.integers(0, n_classes, size=60)
    model = AveragedPerceptron(random_state=0).fit(X, y)
    dense = top_features(model, k=5)
    assert dense and any(entry["positive"] for entry in dense)
    assert top_features(model.sparsify(), k=5) == dense
