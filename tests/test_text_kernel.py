"""The compiled tokenizer of ``TextFeaturizer(vocabulary="hashing")``
(:mod:`perceptrons._kernels.tokens`) against scikit-learn's path, bit for bit, its
per-document fallback, and the hashed column names kept only on demand."""

import io
import json
import zipfile
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.utils import murmurhash3_32

from perceptrons import Perceptron, TextFeaturizer, load, save
from perceptrons._kernels import tokens
from perceptrons.cli import main
from perceptrons.features import top_features
from perceptrons.text import featurizer as core


class _Reference(TextFeaturizer):
    """The featurizer with scikit-learn's HashingVectorizer counting every document (the
    path before the compiled tokenizer and the core's own analyzer)."""

    _compiled = False

    def _make_vectorizer(self, terms=None):
        return self._sklearn_vectorizer(terms)


def _assert_identical(A, B):
    assert A.shape == B.shape
    for name in ("indptr", "indices", "data"):
        a, b = getattr(A, name), getattr(B, name)
        assert a.dtype == b.dtype, name
        assert_array_equal(a, b)  # bit-identical values, not approximately equal


ASCII_WHITESPACE = " \t\n\v\f\r\x1c\x1d\x1e\x1f"
ALPHABET = (
    "abcXYZ019_"  # word bytes, both cases
    ".,;:!?'-|#"  # punctuation
    + ASCII_WHITESPACE
    + "\x00\x7f"  # NUL and DEL: neither word nor whitespace
    + "éßİΣσςÅ中文\u0301"  # letters that lower, case-fold or join differently
    + "\u00a0\u2028\u3000\x85"  # Unicode whitespace outside ASCII
)
WORDS = ["the", "The", "CAT", "cat", "a_b", "12", "x", "naïve", "ab\x1ccd", "_"]

documents = st.lists(
    st.one_of(
        st.text(alphabet=ALPHABET, max_size=30),
        st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join),  # repeats
    ),
    min_size=1,  # scikit-learn's hasher fails on no documents (StopIteration)
    max_size=8,
)
params = st.fixed_dictionaries(
    {
        "tokenizer": st.sampled_from(["regex", "whitespace"]),
        "lowercase": st.booleans(),
        "ngram_range": st.sampled_from([(1, 1), (1, 2), (2, 2), (1, 3), (2, 4), (3, 3)]),
        "weighting": st.sampled_from(["tf", "binary", "tfidf"]),
        "sublinear_tf": st.booleans(),
        "n_features": st.sampled_from([1, 7, 64, 2**20]),
    }
)


@settings(deadline=None, max_examples=200)
@given(train=documents, test=documents, params=params)
def test_the_compiled_path_gives_scikit_learns_features(train, test, params):
    ours, theirs = TextFeaturizer(**params), _Reference(**params)
    _assert_identical(ours.fit_transform(train), theirs.fit_transform(train))
    _assert_identical(ours.transform(test), theirs.transform(test))


@settings(deadline=None, max_examples=100)
@given(texts=documents, params=params)
def test_the_counts_are_hashingvectorizers(texts, params):
    """Against scikit-learn's HashingVectorizer itself, not through the featurizer."""
    params = {**params, "weighting": "tf", "sublinear_tf": False}
    hasher = HashingVectorizer(
        n_features=params["n_features"],
        ngram_range=params["ngram_range"],
        lowercase=params["lowercase"],
        alternate_sign=False,
        norm=None,
        **(
            {"tokenizer": str.split, "token_pattern": None}
            if params["tokenizer"] != "regex"
            else {}
        ),
    )
    expected = hasher.transform(texts).tocsr()
    expected.sum_duplicates()
    X = TextFeaturizer(**params).fit_transform(texts)
    assert_array_equal(X.indptr, expected.indptr)
    assert_array_equal(X.indices, expected.indices)
    assert_array_equal(X.data, expected.data)


@pytest.mark.parametrize("tokenizer", ["regex", "whitespace"])
def test_huge_tokens_many_repeats_and_empty_documents(tokenizer):
    texts = [
        "A" * 100_000,
        "x" * 100_000 + " " + "Ab_9 " * 20_000,
        "",
        "   \x1c\x1f ",
        "one",
        "the " * 5000 + "end",
        "\x00\x00 ab\x00cd",
    ]
    for ngram_range in [(1, 1), (1, 3), (4, 4)]:
        for weighting in ["tf", "binary", "tfidf"]:
            params = {"tokenizer": tokenizer, "ngram_range": ngram_range, "weighting": weighting}
            _assert_identical(
                TextFeaturizer(**params).fit_transform(texts),
                _Reference(**params).fit_transform(texts),
            )


def test_rows_that_outgrow_the_first_output_grow_it():
    """Documents of many distinct one-byte tokens: more values than the first guess at
    the output's size (a quarter of the bytes), so the kernel stops and resumes."""
    texts = [" ".join("abcdefghijklmnopqrstuvwxyz0123456789")] * 300
    params = {"tokenizer": "whitespace", "ngram_range": (1, 2)}
    X = TextFeaturizer(**params).fit_transform(texts)
    assert X.nnz > len("\n".join(texts)) // 4
    _assert_identical(X, _Reference(**params).fit_transform(texts))


def _kernel_call(buf, starts, ends, room, state):
    joined, token_count, terms = tokens.scratch_sizes(int((ends - starts).max()), 1, 1)
    indptr = np.zeros(starts.shape[0] + 1, dtype=np.int64)
    indices = np.zeros(room, dtype=np.int32)
    data = np.zeros(room, dtype=np.float64)
    scratch = (
        np.empty(joined, dtype=np.uint8),
        np.empty(token_count, dtype=np.int64),
        np.empty(token_count, dtype=np.int64),
        np.empty(terms, dtype=np.int64),
    )
    code = tokens.hash_documents(
        buf, starts, ends, True, True, 1, 1, 2**20, False, *scratch, indptr, indices, data, state
    )
    return code, indptr, indices, data


def test_the_kernel_stops_without_room_and_at_a_byte_beyond_ascii():
    buf = np.frombuffer(b"aa bb cc\ndd ee", dtype=np.uint8)
    starts, ends = np.array([0, 9], dtype=np.int64), np.array([8, 14], dtype=np.int64)
    state = np.zeros(tokens.STATE_SIZE, dtype=np.int64)
    code, indptr, _, _ = _kernel_call(buf, starts, ends, 4, state)
    # The first row (3 values) fits, the second (2) does not: stopped before it.
    assert code == tokens.NO_ROOM and list(state) == [1, 3] and indptr[1] == 3
    state[:] = 0
    code, indptr, indices, data = _kernel_call(buf, starts, ends, 5, state)
    assert code == tokens.OK and list(state) == [2, 5] and list(indptr) == [0, 3, 5]
    assert list(data) == [1.0] * 5
    hashed = [abs(murmurhash3_32(w, seed=0)) % 2**20 for w in ("aa", "bb", "cc", "dd", "ee")]
    assert list(indices) == sorted(hashed[:3]) + sorted(hashed[3:])
    non_ascii = np.frombuffer("aa\nbé".encode(), dtype=np.uint8)
    state[:] = 0
    ends = np.array([2, non_ascii.shape[0]], dtype=np.int64)
    code, *_ = _kernel_call(non_ascii, np.array([0, 3], dtype=np.int64), ends, 8, state)
    assert code == tokens.NOT_ASCII and list(state) == [1, 1]


def _refuse_scikit_learn(monkeypatch):
    """Make scikit-learn's vectorizer for the featurizer's analyzer an error."""

    def refused(self, terms):
        raise AssertionError("scikit-learn's vectorizer made for a str document")

    monkeypatch.setattr(core.TextFeaturizer, "_sklearn_vectorizer", refused)


def test_only_documents_beyond_ascii_leave_the_compiled_tokenizer(monkeypatch):
    """The others are counted by the core's analyzer and hash, not scikit-learn's."""
    seen = []
    transform = core._HashingVectorizer.transform

    def spy(self, X):
        X = list(X)
        seen.append(X)
        return transform(self, X)

    monkeypatch.setattr(core._HashingVectorizer, "transform", spy)
    ascii_texts = ["The cat sat", "", "a_b 12 x\x1cy\x00z", "\x7f"]
    mixed = ["plain", "café crème", "more plain", "İstanbul\u3000x"]
    for tokenizer in ("regex", "whitespace"):
        expected = _Reference(weighting="tf", tokenizer=tokenizer).fit(mixed).transform(mixed)
        with monkeypatch.context() as patched:
            _refuse_scikit_learn(patched)
            featurizer = TextFeaturizer(weighting="tf", tokenizer=tokenizer)
            featurizer.fit_transform(ascii_texts)
            featurizer.transform(ascii_texts)
            featurizer.transform(np.array(ascii_texts))
            assert seen == []  # every document compiled
            X = featurizer.transform(mixed)
        assert seen == [["café crème", "İstanbul\u3000x"]]  # only these, once
        _assert_identical(X, expected)
        seen.clear()


# Any Unicode but lone surrogates (refused by number): letters whose lower case is
# longer or differs, combining marks, digits of other scripts, connector punctuation.
UNICODE = st.text(
    alphabet=st.one_of(
        st.characters(exclude_categories=["Cs"]),
        st.sampled_from("aZ_9 \u0130\u03a3\u1e9e\u0301\u0663\u203f\u00a0\u2028\u3000\x85"),
    ),
    max_size=40,
)


@settings(deadline=None, max_examples=150)
@given(
    texts=st.lists(UNICODE, min_size=1, max_size=6),
    params=params.map(lambda p: {**p, "weighting": p["weighting"].replace("tfidf", "tf")}),
)
def test_unicode_documents_are_hashingvectorizers_without_scikit_learn(texts, params):
    """Any Unicode ``str``, counted by the core's analyzer and the compiled MurmurHash3,
    gives scikit-learn's HashingVectorizer's counts (or presence) bit for bit, with no
    scikit-learn vectorizer made; so do the names of the hashed columns."""
    params = {**params, "sublinear_tf": False}
    expected = _Reference(**params).fit_transform(texts)
    with pytest.MonkeyPatch.context() as patched:
        _refuse_scikit_learn(patched)
        featurizer = TextFeaturizer(**params, hashed_names=True)
        X = featurizer.fit_transform(texts)
        names = featurizer.name_columns(texts)
    _assert_identical(X, expected)
    analyze = _Reference(**params)._sklearn_vectorizer(None).build_analyzer()
    terms = {term for text in texts for term in analyze(text)}
    theirs: dict[int, list[str]] = {}
    for term in sorted(terms):
        theirs.setdefault(abs(murmurhash3_32(term, seed=0)) % params["n_features"], []).append(term)
    assert names == {column: "|".join(group) for column, group in theirs.items()}


def test_no_documents_make_no_rows():
    """(scikit-learn's hasher raises StopIteration on an empty list.)"""
    featurizer = TextFeaturizer(weighting="tf", n_features=16)
    assert featurizer.fit_transform([]).shape == (0, 16)
    assert featurizer.transform([]).shape == (0, 16)
    with pytest.raises(ValueError, match="0 sample"):  # no idf from no documents
        TextFeaturizer(weighting="tfidf").fit([])


def test_documents_that_are_not_str_are_refused_by_number():
    featurizer = TextFeaturizer(weighting="tf").fit(["a text"])
    with pytest.raises(ValueError, match=r"^TextFeaturizer: document 1 is float, not str$"):
        featurizer.transform(["fine", np.nan])
    # bytes are decoded by scikit-learn, as before: its analyzer made at the first
    made = []
    sklearn_vectorizer = core.TextFeaturizer._sklearn_vectorizer

    def counted(self, terms):
        made.append(terms)
        return sklearn_vectorizer(self, terms)

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(core.TextFeaturizer, "_sklearn_vectorizer", counted)
        featurizer = TextFeaturizer(weighting="tf").fit(["a text"])
        bytes_counts = featurizer.transform([b"ab cd", "caf\u00e9", "caf\u00e9".encode()])
        assert made == [None]
    _assert_identical(bytes_counts, featurizer.transform(["ab cd", "caf\u00e9", "caf\u00e9"]))
    # NumPy's strings go the compiled path too (their lower and split are str's)
    texts = np.array(["Ab cd", "x yy", "é zz"])
    _assert_identical(
        featurizer.transform(texts), _Reference(weighting="tf").fit(["a"]).transform(texts)
    )


# ------------------------------------------------------------- hashed names
TRAIN = ["the cat sat", "The dog sat down", "a cat and a dog"]


def test_hashed_names_are_kept_only_on_demand():
    plain = TextFeaturizer(weighting="tf", n_features=64).fit(TRAIN)
    assert plain.hashed_names is False and plain.feature_names() is None
    plain.partial_fit(["new words"])
    assert plain.feature_names() is None
    named = TextFeaturizer(weighting="tf", n_features=64, hashed_names=True).fit(TRAIN)
    names = named.feature_names()
    assert names is not None and len(names) == 64
    # The names recovered on demand are those fitting keeps, for any column chosen.
    recovered = plain.name_columns(TRAIN)
    assert {c: n for c, n in enumerate(names) if n} == recovered
    some = sorted(recovered)[:2]
    assert plain.name_columns(TRAIN, some) == {c: recovered[c] for c in some}
    _assert_identical(plain.transform(TRAIN), named.transform(TRAIN))
    with pytest.raises(ValueError, match="hashed_names"):
        TextFeaturizer(weighting="tf", hashed_names="yes").fit(TRAIN)
    with pytest.raises(ValueError, match="vocabulary='hashing'"):
        TextFeaturizer(weighting="tf", vocabulary="fit").fit(TRAIN).name_columns(TRAIN)


def test_model_files_hold_names_only_when_kept(tmp_path):
    y = ["a", "b", "a"]
    for kept in (False, True):
        featurizer = TextFeaturizer(weighting="tf", n_features=64, hashed_names=kept)
        pipeline = make_pipeline(featurizer, Perceptron()).fit(TRAIN, y)
        path = save(pipeline, tmp_path / f"{kept}.npz")
        with zipfile.ZipFile(path) as archive:
            stored = set(archive.namelist())
        assert ("featurizer/hashed_names_text.npy" in stored) is kept
        loaded = load(path)
        assert loaded[0].feature_names() == featurizer.feature_names()
        assert_array_equal(loaded.decision_function(TRAIN), pipeline.decision_function(TRAIN))
        top = top_features(loaded, k=2)
        shown = [n for entry in top for n, _ in entry["positive"] + entry["negative"]]
        assert shown and all(n.startswith("#") for n in shown) is not kept


def _cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main([str(arg) for arg in args])
    return status, out.getvalue(), err.getvalue()


def test_inspect_names_hashed_features_from_data(tmp_path):
    data = tmp_path / "train.ft"
    data.write_text(
        "".join(
            f"__label__pos great fun film {i}\n__label__neg dull boring film {i}\n"
            for i in range(20)
        )
    )
    model = tmp_path / "m.npz"
    assert _cli("train", data, "-o", model, "--quiet")[0] == 0
    status, out, err = _cli("inspect", model, "--top", "2")
    assert status == 0, err
    assert "#" in out and "--names-from DATA" in out and "great" not in out
    status, out, err = _cli("inspect", model, "--top", "2", "--names-from", data, "--json")
    assert status == 0, err
    info = json.loads(out)
    positive = {n for entry in info["top_features"] for n, _ in entry["positive"]}
    assert positive & {"great", "fun", "dull", "boring"}
    named = tmp_path / "named.npz"
    assert _cli("train", data, "-o", named, "--quiet", "--hashed-names")[0] == 0
    status, out, _ = _cli("inspect", named, "--top", "2")
    assert status == 0 and "--names-from" not in out
    assert {"great", "fun", "dull", "boring"} & set(out.replace(",", " ").split())
    vocabulary = tmp_path / "v.npz"
    assert _cli("train", data, "-o", vocabulary, "--features", "vocabulary", "--quiet")[0] == 0
    status, _, err = _cli("inspect", vocabulary, "--names-from", data)
    assert status == 2 and "--names-from" in err


def test_the_kernel_checks_its_arrays_before_writing():
    buf = np.frombuffer(b"aa bb cc dd", dtype=np.uint8)
    starts, ends = np.array([0], dtype=np.int64), np.array([11], dtype=np.int64)
    out = (np.zeros(2, dtype=np.int64), np.zeros(8, dtype=np.int32), np.zeros(8))  # indptr...
    state = np.zeros(tokens.STATE_SIZE, dtype=np.int64)

    def call(scratch_sizes, starts=starts, ends=ends):
        joined, token_count, terms = scratch_sizes
        scratch = (
            np.empty(joined, dtype=np.uint8),
            np.empty(token_count, dtype=np.int64),
            np.empty(token_count, dtype=np.int64),
            np.empty(terms, dtype=np.int64),
        )
        state[:] = 0
        return tokens.hash_documents(
            buf, starts, ends, True, True, 1, 2, 64, False, *scratch, *out, state
        )

    assert call(tokens.scratch_sizes(11, 1, 2)) == tokens.OK  # 4 words, 3 bigrams
    assert list(state) == [1, 7]
    for short in [(10, 6, 12), (12, 3, 12), (12, 6, 6)]:  # each array too short in turn
        assert call(short) == tokens.SCRATCH_TOO_SMALL
    with pytest.raises(ValueError, match="outside the buffer"):
        call(tokens.scratch_sizes(12, 1, 2), ends=np.array([12], dtype=np.int64))
