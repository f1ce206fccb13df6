"""SequenceFeaturizer against a plain Python implementation of its template language.

The reference below builds every token's feature strings one by one and maps them
through the documented fingerprint (BLAKE2b of each string, folded by the SplitMix64
finalizer), with no code shared with the module: the compiled path must give exactly
its columns, in both vocabulary and hashing modes.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

from perceptrons._sequences import TokenFeatures
from perceptrons.sequence import featurizer as sequence_features
from perceptrons.sequence_features import PRESETS, SequenceFeaturizer

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "conll2000"
MASK = (1 << 64) - 1
WORD_ATTRIBUTES = [
    "w",
    "lower",
    *(f"prefix{n}" for n in range(1, 5)),
    *(f"suffix{n}" for n in range(1, 5)),
    "shape",
    "digit",
    "hyphen",
    "upper",
    "title",
]


# ---------------------------------------------------------------------- reference
def _digest(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _shape(word: str) -> str:
    classes = [
        "X" if c.isupper() else "x" if c.islower() else "d" if c.isdigit() else c for c in word
    ]
    return "".join(c for i, c in enumerate(classes) if i == 0 or classes[i - 1] != c)


def _attribute(word: str, attr: str) -> str:
    if attr == "w":
        return word
    if attr == "lower":
        return word.lower()
    if attr.startswith("prefix"):
        return word[: int(attr[-1])]
    if attr.startswith("suffix"):
        n = int(attr[-1])
        return word if len(word) <= n else word[len(word) - n :]
    if attr == "shape":
        return _shape(word)
    flag = {
        "digit": any(c.isdigit() for c in word),
        "hyphen": "-" in word,
        "upper": word.isupper(),
        "title": len(word) > 0 and word[0].isupper(),
    }[attr]
    return "1" if flag else "0"


def _items(template: str) -> list[tuple[str, int]]:
    if template == "bias":
        return []
    items = []
    for piece in template.split("|"):
        attr, offset = piece[:-1].split("[")
        items.append((attr, int(offset)))
    return items


def _value(sentence: list, position: int, attr: str) -> int:
    """The fingerprint of ``attr`` at ``position`` (BOS/EOS outside the sentence)."""
    if position < 0:
        return _digest(b"<BOS>")
    if position >= len(sentence):
        return _digest(b"<EOS>")
    token = sentence[position]
    columns = (token,) if isinstance(token, str) else tuple(token)
    if attr[0] == "c" and attr[1:].isdigit():
        text = columns[int(attr[1:])]
    else:
        text = _attribute(columns[0], attr)
    return _digest(b"v:" + text.encode("utf-8", "surrogatepass"))


def _fold(template: str, values: list[int]) -> int:
    """A feature's fingerprint: the template's identity, each value folded in."""
    h = _digest(b"t:" + template.encode())
    for value in values:
        h = _mix((h * 0x9E3779B97F4A7C15 + value) & MASK)
    return h


def reference_fingerprints(X: list, templates: list[str]) -> list[list[int]]:
    """The fingerprint of every template at every token, token by token."""
    return [
        [
            _fold(template, [_value(sentence, t + o, attr) for attr, o in _items(template)])
            for template in templates
        ]
        for sentence in X
        for t in range(len(sentence))
    ]


def reference_transform(
    X_fit: list, X: list, templates: list[str], n_features: int | None = None, min_count: int = 1
) -> tuple[list[int], list[int], int]:
    """(indptr, indices, n_features_out) of the reference featurizer."""
    rows = reference_fingerprints(X, templates)
    if n_features is not None:
        columns = [[fp % n_features for fp in row] for row in rows]
        n_out = n_features
    else:
        counts = Counter(fp for row in reference_fingerprints(X_fit, templates) for fp in row)
        keys = sorted(fp for fp, count in counts.items() if count >= min_count)
        number = {fp: i for i, fp in enumerate(keys)}
        columns = [[number[fp] for fp in row if fp in number] for row in rows]
        n_out = len(keys)
    indptr = [0]
    for row in columns:
        indptr.append(indptr[-1] + len(row))
    return indptr, [c for row in columns for c in row], n_out


def assert_reference(features: TokenFeatures, X: list, expected: tuple) -> None:
    indptr, indices, n_out = expected
    features.check()
    lengths = [len(s) for s in X]
    assert features.offsets.tolist() == np.concatenate([[0], np.cumsum(lengths)]).tolist()
    assert features.indptr.tolist() == indptr
    assert features.indices.tolist() == indices
    assert features.n_features == n_out


# --------------------------------------------------------------------- strategies
ALPHABET = "aBcDxyZ09-'.ÉéßΣ٣_ "
words = st.text(alphabet=ALPHABET, max_size=7)
pos_tags = st.sampled_from(["NN", "VB", "DT", ".", "nn"])


@st.composite
def templates_lists(draw, n_extra: int) -> list[str]:
    attributes = WORD_ATTRIBUTES + [f"c{k}" for k in range(1, n_extra + 1)]
    item = st.tuples(st.sampled_from(attributes), st.integers(-4, 4))
    conjunctions = st.lists(item, min_size=1, max_size=3, unique=True).map(
        lambda items: "|".join(f"{a}[{o}]" for a, o in items)
    )
    chosen = draw(st.lists(conjunctions, min_size=1, max_size=6, unique=True))
    return (["bias"] if draw(st.booleans()) else []) + chosen


@st.composite
def corpora(draw, n_extra: int, max_sentences: int = 6) -> list:
    token = words if n_extra == 0 else st.tuples(words, *[pos_tags] * n_extra)
    return draw(
        st.lists(st.lists(token, min_size=1, max_size=7), min_size=1, max_size=max_sentences)
    )


# ---------------------------------------------------------------- against the oracle
@given(data=st.data(), n_extra=st.integers(0, 2))
def test_vocabulary_matches_the_reference(data, n_extra):
    X = data.draw(corpora(n_extra))
    X_new = data.draw(corpora(n_extra))
    templates = data.draw(templates_lists(n_extra))
    min_count = data.draw(st.integers(1, 3))
    featurizer = SequenceFeaturizer(templates=templates, min_count=min_count)
    expected_fit = reference_transform(X, X, templates, min_count=min_count)
    if expected_fit[2] == 0:
        with pytest.raises(ValueError, match="min_count"):
            featurizer.fit(X)
        return
    assert_reference(featurizer.fit_transform(X), X, expected_fit)
    assert featurizer.templates_ == tuple(templates)
    assert_reference(
        featurizer.transform(X_new),
        X_new,
        reference_transform(X, X_new, templates, min_count=min_count),
    )


@given(data=st.data(), n_extra=st.integers(0, 2), n_features=st.sampled_from([1, 7, 2**20, 2**62]))
def test_hashing_matches_the_reference(data, n_extra, n_features):
    X = data.draw(corpora(n_extra))
    X_new = data.draw(corpora(n_extra))
    templates = data.draw(templates_lists(n_extra))
    featurizer = SequenceFeaturizer(templates=templates, n_features=n_features)
    assert_reference(
        featurizer.fit_transform(X), X, reference_transform(X, X, templates, n_features)
    )
    assert_reference(
        featurizer.transform(X_new), X_new, reference_transform(X, X_new, templates, n_features)
    )


@pytest.mark.parametrize("preset", ["pos", "chunk"])
@given(data=st.data())
def test_presets_match_the_reference(preset, data):
    X = data.draw(corpora(n_extra=1 if preset == "chunk" else 0, max_sentences=4))
    featurizer = SequenceFeaturizer(templates=preset)
    templates = list(PRESETS[preset])
    assert_reference(featurizer.fit_transform(X), X, reference_transform(X, X, templates))


def test_attribute_values():
    # The documented examples of the module, through the featurizer.
    cases = {
        "shape": {"McDonald's": "XxXx'x", "1,234.5": "d,d.d", "U.S.": "X.X.", "": ""},
        "suffix4": {"ab": "ab", "walking": "king"},
        "prefix2": {"a": "a", "walking": "wa"},
        "upper": {"U.S.": "1", "IBM": "1", "Ibm": "0", "1984": "0"},
        "title": {"Ibm": "1", "ibm": "0", "": "0"},
        "digit": {"٣": "1", "x": "0"},
        "hyphen": {"a-b": "1", "ab": "0"},
    }
    for attr, expected in cases.items():
        X = [[word] for word in expected]
        f = SequenceFeaturizer(templates=[f"{attr}[0]"], n_features=2**62).fit(X)
        value = lambda text: _digest(b"v:" + text.encode())  # noqa: E731
        wanted = [_fold(f"{attr}[0]", [value(v)]) % 2**62 for v in expected.values()]
        assert f.transform(X).indices.tolist() == wanted, attr


def test_out_of_sentence_positions():
    X = [["Alpha", "beta"], ["Gamma"]]
    f = SequenceFeaturizer(templates=["w[-1]", "w[-3]", "w[2]"]).fit(X)
    features = f.transform(X)
    per_token = [piece.tolist() for piece in np.split(features.indices, features.indptr[1:-1])]
    # The first tokens of both sentences share their BOS features, and every token has
    # EOS two positions on.
    assert per_token[0] == per_token[2]
    assert per_token[0][2] == per_token[1][2] == per_token[2][2]
    # BOS at distance 1 and 3 are different features (the template differs).
    assert per_token[0][0] != per_token[0][1]
    assert f.n_features_out_ == 4  # w[-1]: BOS, Alpha; w[-3]: BOS; w[2]: EOS


# ------------------------------------------------------------- modes and numbering
@given(data=st.data(), n_extra=st.integers(0, 1))
def test_vocabulary_and_hashing_agree(data, n_extra):
    X = data.draw(corpora(n_extra))
    templates = data.draw(templates_lists(n_extra))
    n = 2**62
    vocabulary = SequenceFeaturizer(templates=templates).fit(X)
    hashing = SequenceFeaturizer(templates=templates, n_features=n).fit(X)
    keys = vocabulary._codec().export_state()[0]["keys"]
    by_vocabulary, by_hashing = vocabulary.transform(X), hashing.transform(X)
    # Every training feature is known: the same features in the same order, numbered
    # by rank among the sorted fingerprints on one side, by fingerprint % n on the other.
    assert np.array_equal(by_vocabulary.indptr, by_hashing.indptr)
    assert np.array_equal(
        keys[by_vocabulary.indices] % np.uint64(n), by_hashing.indices.astype(np.uint64)
    )
    assert np.all(np.diff(keys.astype(object)) > 0)


def test_min_count_keeps_frequent_features():
    X = [["the", "cat"], ["the", "dog"], ["a", "cat"]]
    f1 = SequenceFeaturizer(templates=["w[0]"]).fit(X)
    f2 = SequenceFeaturizer(templates=["w[0]"], min_count=2).fit(X)
    assert (f1.n_features_out_, f2.n_features_out_) == (4, 2)  # "the" and "cat" twice
    features = f2.transform([["the", "dog", "cat"]])
    assert features.indptr.tolist() == [0, 1, 1, 2]  # "dog" once in training: dropped
    with pytest.raises(ValueError, match="min_count=3"):
        SequenceFeaturizer(templates=["w[0]"], min_count=3).fit(X)


def test_auto_templates_follow_the_columns():
    assert SequenceFeaturizer().fit([["a", "b"]]).templates_ == PRESETS["pos"]
    assert SequenceFeaturizer().fit([[("a", "DT"), ("b", "NN")]]).templates_ == PRESETS["chunk"]
    assert SequenceFeaturizer().fit([[("a", "DT"), ("b", "NN")]]).n_columns_ == 2
    # A word-only token among tuples makes the narrowest token one column wide.
    mixed = SequenceFeaturizer().fit([[("a", "DT"), "b"]])
    assert mixed.templates_ == PRESETS["pos"] and mixed.n_columns_ == 1


def test_token_forms_are_equivalent():
    as_tuples = [[("The", "DT", "x"), ("cat", "NN", "y")]]
    as_lists = [[["The", "DT", "z"], ["cat", "NN", "w"]]]
    as_tuple_sentences = [(("The", "DT"), ("cat", "NN"))]
    f = SequenceFeaturizer(templates="chunk").fit(as_tuples)
    expected = f.transform(as_tuples)
    for X in (as_lists, as_tuple_sentences):
        assert np.array_equal(f.transform(X).indices, expected.indices)
    words = SequenceFeaturizer(templates="pos").fit([["The", "cat"]])
    assert np.array_equal(
        words.transform([[("The", "DT"), "cat"]]).indices, words.transform([["The", "cat"]]).indices
    )


def test_sentences_may_come_from_an_iterator():
    X = [[("He", "PRP"), ("ran", "VBD")], [("It", "PRP")]]
    a = SequenceFeaturizer().fit_transform(iter(X))
    b = SequenceFeaturizer().fit(X).transform(s for s in X)
    assert np.array_equal(a.indices, b.indices) and a.offsets.tolist() == [0, 2, 3]


def test_fit_transform_equals_fit_then_transform():
    X = [[("He", "PRP"), ("ran", "VBD")], [("It", "PRP"), ("ran", "VBD"), ("off", "RP")]]
    a = SequenceFeaturizer().fit_transform(X)
    b = SequenceFeaturizer().fit(X).transform(X)
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)


def test_transform_is_unchanged_by_its_cache(monkeypatch):
    f = SequenceFeaturizer(templates="pos").fit([["a", "b"]])
    X = [["new", "Words", "a"], ["b"]]
    first = f.transform(X)
    again = f.transform(X)  # the new words are cached now
    assert np.array_equal(first.indices, again.indices)
    assert np.array_equal(first.indptr, again.indptr)
    # Past the cache's limit, new strings are computed for the call and not kept.
    monkeypatch.setattr(sequence_features, "_CACHE_LIMIT", 4)
    cached = len(f._cache[0])
    third = f.transform([["others", "a"], ["new"]])
    assert len(f._cache[0]) == cached
    assert np.array_equal(third.indices, f.transform([["others", "a"], ["new"]]).indices)


# -------------------------------------------------------------------- determinism
def _small_corpus() -> list:
    return [
        [("Rockwell", "NNP"), ("said", "VBD"), ("the", "DT"), ("agreement", "NN")],
        [("It", "PRP"), ("rose", "VBD"), ("3.5", "CD"), ("%", "NN"), (".", ".")],
    ]


def test_two_fits_give_the_same_columns():
    X = _small_corpus()
    for n_features in (None, 1000):
        a = SequenceFeaturizer(n_features=n_features).fit_transform(X)
        b = SequenceFeaturizer(n_features=n_features).fit_transform(X)
        assert np.array_equal(a.indices, b.indices)


def test_a_fresh_interpreter_gives_the_same_columns():
    X = _small_corpus()
    code = (
        "import json, sys\n"
        "from perceptrons.sequence_features import SequenceFeaturizer\n"
        "X = [[tuple(t) for t in s] for s in json.loads(sys.stdin.read())]\n"
        "out = {}\n"
        "for n in (None, 1000):\n"
        "    f = SequenceFeaturizer(n_features=n).fit(X)\n"
        "    keys = f._codec().export_state()[0].get('keys', [])\n"
        "    out[str(n)] = [f.transform(X).indices.tolist(), keys]\n"
        "    out[str(n)][1] = [int(k) for k in out[str(n)][1]]\n"
        "print(json.dumps(out))\n"
    )
    # A different hash seed: Python's own str hashes change, the columns must not.
    env = {**__import__("os").environ, "PYTHONHASHSEED": "12345"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(X),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    theirs = json.loads(result.stdout)
    for n in (None, 1000):
        f = SequenceFeaturizer(n_features=n).fit(X)
        keys = [int(k) for k in f._codec().export_state()[0].get("keys", [])]
        assert theirs[str(n)] == [f.transform(X).indices.tolist(), keys]


# -------------------------------------------------------------------- persistence
@pytest.mark.parametrize("n_features", [None, 97])
def test_export_import_roundtrip(n_features):
    X = _small_corpus()
    X_new = [[("Rockwell", "NNP"), ("fell", "VBD")], [("Unseen", "JJ")]]
    f = SequenceFeaturizer(templates="chunk", n_features=n_features, min_count=1).fit(X)
    arrays, values = f._codec().export_state()
    json.dumps(values)  # plain JSON
    g = SequenceFeaturizer(templates="chunk", n_features=n_features)
    g._codec().import_state(
        {k: v.copy() for k, v in arrays.items()}, json.loads(json.dumps(values))
    )
    assert g.templates_ == f.templates_ and g.n_features_out_ == f.n_features_out_
    assert g.n_columns_ == f.n_columns_
    for data in (X, X_new):
        a, b = f.transform(data), g.transform(data)
        assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)


def test_import_refuses_corrupt_state():
    f = SequenceFeaturizer(templates="pos").fit([["a", "b", "c"], ["d"]])
    arrays, values = f._codec().export_state()
    keys = arrays["keys"]

    def refused(arrays, values, match):
        with pytest.raises(ValueError, match=match):
            SequenceFeaturizer(templates="pos")._codec().import_state(arrays, values)

    refused({"keys": keys[::-1].copy()}, values, "strictly increasing")
    refused({"keys": np.concatenate([keys[:1], keys[:-1]])}, values, "strictly increasing")
    refused({"keys": keys.astype(np.int64)}, values, "dtype")
    refused({"keys": keys[:-1].copy()}, values, "shape")
    refused({}, values, "missing")
    refused({"keys": keys, "extra": keys}, values, "unexpected")
    refused({"keys": keys}, {**values, "n_features_out": -1}, "n_features_out")
    refused({"keys": keys}, {**values, "templates": ["w[9]"]}, "offset")
    refused({"keys": keys}, {**values, "templates": []}, "templates")
    refused({"keys": keys}, {**values, "templates": ["w[0] | w[1]"]}, "canonical")
    refused({"keys": keys}, {**values, "templates": ["c1[0]"], "n_columns": 1}, "columns")
    refused({"keys": keys}, {**values, "n_columns": "2"}, "n_columns")
    refused({"keys": keys}, [values], "must be a dict")
    hashed = SequenceFeaturizer(n_features=10).fit([["a"]])
    with pytest.raises(ValueError, match="n_features=11"):
        SequenceFeaturizer(n_features=11)._codec().import_state(*hashed._codec().export_state())


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("w", "not attr\\[offset\\]"),
        ("w[0", "not attr\\[offset\\]"),
        ("w[0]|", "not attr\\[offset\\]"),
        ("size[0]", "unknown attribute 'size'"),
        ("prefix5[0]", "unknown attribute 'prefix5'"),
        ("c0[0]", "unknown attribute 'c0'"),
        ("w[5]", "offset 5"),
        ("lower[-5]", "offset -5"),
        ("bias|w[0]", "bias"),
        ("bias[0]", "bias"),
        ("w[0]|w[0]", "twice"),
        ("", "not attr"),
    ],
)
def test_bad_templates(template, problem):
    with pytest.raises(ValueError, match=problem) as info:
        SequenceFeaturizer(templates=["bias", template]).fit([["a"]])
    assert repr(template) in str(info.value)


def test_bad_template_lists():
    for templates, problem in [
        ("w[0]", "not a preset"),
        ("crf", "not a preset"),
        ([], "non-empty"),
        (["w[0]", " w[0] "], "listed twice"),
        ([3], "must be a str"),
    ]:
        with pytest.raises(ValueError, match=problem):
            SequenceFeaturizer(templates=templates).fit([["a"]])


def test_bad_parameters():
    with pytest.raises(ValueError, match="min_count"):
        SequenceFeaturizer(n_features=100, min_count=2).fit([["a"]])
    for params in ({"n_features": 0}, {"n_features": True}, {"min_count": 0}, {"min_count": 1.5}):
        with pytest.raises(ValueError, match=next(iter(params))):
            SequenceFeaturizer(**params).fit([["a"]])


@pytest.mark.parametrize(
    ("X", "problem"),
    [
        ([], "no sentences"),
        ("a b", "list of sentences"),
        (None, "list of sentences"),
        ([["a"], []], "sentence 1 is empty"),
        ([["a"], "ab"], "sentence 1 is a str"),
        ([["a", 3]], "sentence 0, token 1: a token must be a str or a tuple of str, got int"),
        ([["a"], [("b", "NN"), ()]], "sentence 1, token 1: an empty tuple"),
        ([[("a", 1)]], "sentence 0, token 0: column 1 of \\('a', 1\\) is a int"),
        ([[(b"a", "NN")]], "sentence 0, token 0: column 0"),
    ],
)
def test_bad_input(X, problem):
    with pytest.raises(ValueError, match=problem):
        SequenceFeaturizer(templates="pos").fit(X)


def test_tokens_without_the_needed_columns():
    with pytest.raises(ValueError, match="sentence 0, token 1: 'b' has 1 column"):
        SequenceFeaturizer(templates=["c1[0]"]).fit([[("a", "DT"), "b"]])
    with pytest.raises(ValueError, match="sentence 0, token 0: 'a' is a word alone"):
        SequenceFeaturizer(templates=["c1[0]"]).fit([["a", "b"]])
    with pytest.raises(ValueError, match="sentence 1, token 0: 'c' has 1 column"):
        SequenceFeaturizer(templates=["c1[0]"]).fit(iter([[("a", "DT")], ["c"]]))
    f = SequenceFeaturizer(templates="chunk").fit(_small_corpus())
    with pytest.raises(
        ValueError, match=r"sentence 1, token 0: .* 1 column\(s\), the templates need 2"
    ):
        f.transform([[("a", "DT")], [("b",), ("c", "NN")]])
    with pytest.raises(ValueError, match="templates need 2"):
        f.transform([["a", "b"]])


def test_transform_before_fit():
    with pytest.raises(NotFittedError):
        SequenceFeaturizer().transform([["a"]])
    with pytest.raises(NotFittedError):
        SequenceFeaturizer()._codec().export_state()


# ------------------------------------------------------------------- real data
def _read_conll(path: Path, limit: int) -> list:
    sentences, sentence = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if not parts:
            if sentence:
                sentences.append(sentence)
                sentence = []
                if len(sentences) == limit:
                    break
            continue
        sentence.append(tuple(parts[:-1]))
    return sentences


@pytest.mark.skipif(not DATA.is_dir(), reason=f"CoNLL-2000 data not found at {DATA}")
@pytest.mark.parametrize("preset", ["chunk", "pos"])
def test_conll2000_matches_the_reference(preset):
    X = _read_conll(DATA / "train.txt", 150)
    X_test = _read_conll(DATA / "test.txt", 50)
    if preset == "pos":
        X = [[token[0] for token in sentence] for sentence in X]
        X_test = [[token[0] for token in sentence] for sentence in X_test]
    f = SequenceFeaturizer(templates="auto", min_count=2)
    templates = list(PRESETS[preset])
    assert_reference(f.fit_transform(X), X, reference_transform(X, X, templates, min_count=2))
    assert f.templates_ == PRESETS[preset]
    assert_reference(
        f.transform(X_test), X_test, reference_transform(X, X_test, templates, min_count=2)
    )
