"""The compiled vw / counts reader with hashing (perceptrons._kernels.hashing and
io._chunks._PairsReader): equal, bit for bit, to read_data then
TextFeaturizer(tokenizer="pairs", hashed_names=True, vocabulary="hashing"), names of hashed columns
included, and the streamed models equal to the reference path's."""

import io
import itertools
import json

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from sklearn.utils import murmurhash3_32

from perceptrons import AveragedPerceptron, Perceptron, TextFeaturizer
from perceptrons._kernels import hashing
from perceptrons.io import _chunks, stream
from perceptrons.io.formats import DataFormatError, read_data

# ------------------------------------------------------------------ the hash


def _dense(coef):
    return coef.toarray() if sp.issparse(coef) else coef


def test_murmurhash_equals_sklearn_on_random_bytes():
    rng = np.random.default_rng(0)
    for length in range(21):
        for _ in range(300):
            data = rng.integers(0, 256, length, dtype=np.uint8)
            seed = int(rng.integers(0, 2**32))
            assert hashing.murmurhash3_bytes(data, seed) == murmurhash3_32(data.tobytes(), seed)


def test_murmurhash_equals_sklearn_on_utf8_text():
    text = "héllo wörld ünïcode 日本語 ʃʒ 🙂 abc"
    for start in range(len(text)):
        for stop in range(start, min(len(text), start + 12) + 1):
            word = text[start:stop]
            data = np.frombuffer(word.encode(), dtype=np.uint8)
            assert hashing.murmurhash3_bytes(data, 0) == murmurhash3_32(word, seed=0)


@njit
def _columns(hashes, n_features):
    out = np.empty_like(hashes)
    for i in range(hashes.shape[0]):
        out[i] = hashing.hashed_column(hashes[i], n_features)
    return out


@pytest.mark.parametrize("n_features", [1, 2, 3, 7, 2**20, 2**31 - 2])
def test_hashed_column_is_feature_hashers(n_features):
    """|h| % n, with |-2**31| = 2**31: FeatureHasher's special case agrees with Python's
    abs, which _names_of_hashed_columns uses."""
    rng = np.random.default_rng(1)
    hashes = [-(2**31), 2**31 - 1, -1, 0, 1, *rng.integers(-(2**31), 2**31, 200).tolist()]
    got = _columns(np.array(hashes, dtype=np.int64), n_features)
    assert got.tolist() == [abs(h) % n_features for h in hashes]
    # scikit-learn's own formula for -2**31
    assert got[0] == (2147483647 - (n_features - 1)) % n_features


# ------------------------------------------------------------------ the reader, block by block

_VW = (
    "1 |a X:2 y Y:0.5 |B:2 z:1.5 w | plain q:-1 q:3\n"
    "\n"
    "  \t\n"
    "-1 2.5 'tag1 |ns one two:0 three:-0 |ns one\r\n"
    "1 0 |Up A:0.1 a:0.2 A:0.3 a:1e-17 a:7\n"  # repeated names: sums in scipy's order
    "-1 1 0.5 tagtouching| x:1e3 y:.5 z:5. |N:-0.5 v:4\n"
    "1 |\x1cf x\x1fy:2\n"  # Python's str.split() whitespace
    "1 |empty\n"
    "-1 | only:1\n"
)
_COUNTS = (
    "Good:1 bad:2 GOOD:3 a:b:4 x_y:1 #label#:positive\n"
    "\n"
    "ok:1 ok:2 OK:3 Ok:0 #label#:negative\n"
    "#label#:positive\n"
    "Zeta:10 alpha:2.5 beta:0.25 #label#:negative\n"
)


def _reference(raw: bytes, fmt: str, featurizer: TextFeaturizer):
    data = read_data("-", fmt, stdin=io.BytesIO(raw), labels=True)
    featurizer.partial_fit(data.texts)
    return featurizer.transform(data.texts), data.y, data.sample_weight


def _compiled(raw: bytes, fmt: str, featurizer: TextFeaturizer, reader):
    batch = reader.read(raw, "x", 1, 0, {"labels": True, "skip_bad_lines": False})
    assert batch is not None and batch.data is None, "the compiled path read it"
    return _chunks._pairs_features(batch, featurizer, fit=True)


def _same(a, b):
    Xa, ya, wa = a
    Xb, yb, wb = b
    assert Xa.shape == Xb.shape
    assert Xa.indices.dtype == Xb.indices.dtype and Xa.indptr.dtype == Xb.indptr.dtype
    assert np.array_equal(Xa.indptr, Xb.indptr) and np.array_equal(Xa.indices, Xb.indices)
    assert Xa.data.tobytes() == Xb.data.tobytes()  # bit for bit
    assert ya.dtype == yb.dtype and np.array_equal(ya, yb)
    assert (wa is None) == (wb is None)
    if wa is not None:
        assert wa.tobytes() == wb.tobytes()


# The vw values include negative ones: their sublinear tf takes no log of a negative.
@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("fmt, text", [("vw", _VW), ("counts", _COUNTS)])
@pytest.mark.parametrize("n_features", [1, 3, 16, 2**20])
@pytest.mark.parametrize("lowercase", [True, False])
@pytest.mark.parametrize("weighting", ["tf", "binary", "sublinear"])
def test_block_equals_reference(fmt, text, n_features, lowercase, weighting):
    options = {"weighting": "tf", "sublinear_tf": True} if weighting == "sublinear" else {}
    options = options or {"weighting": weighting}
    params = {"tokenizer": "pairs", "n_features": n_features, "lowercase": lowercase}
    params["hashed_names"] = True  # the names compared too
    ours, theirs = TextFeaturizer(**params, **options), TextFeaturizer(**params, **options)
    reader = _chunks._PairsReader(ours, fmt)
    raw = text.encode()
    for block in (
        raw,
        raw.replace(b"Y", b"Yz").replace(b"ok", b"Ok2").replace(b"Good", b"Gud"),
        raw,
    ):  # names seen again, and new ones
        _same(_compiled(block, fmt, ours, reader), _reference(block, fmt, theirs))
        assert ours.feature_names() == theirs.feature_names()


def test_many_names_grow_the_table_and_stay_equal():
    rng = np.random.default_rng(3)
    lines = [
        " ".join(
            f"w{int(k)}:{int(v)}"
            for k, v in zip(rng.integers(0, 400_000, 40), rng.integers(1, 4, 40), strict=True)
        )
        + f" #label#:{'ab'[i % 2]}\n"
        for i in range(8_000)
    ]
    ours = TextFeaturizer(weighting="tf", tokenizer="pairs", hashed_names=True, n_features=2**12)
    theirs = TextFeaturizer(weighting="tf", tokenizer="pairs", hashed_names=True, n_features=2**12)
    reader = _chunks._PairsReader(ours, "counts")
    for start in range(0, 8_000, 2_700):
        raw = "".join(lines[start : start + 2_700]).encode()
        _same(_compiled(raw, "counts", ours, reader), _reference(raw, "counts", theirs))
    assert len(reader.slots) > 1 << 18  # grown
    assert ours.feature_names() == theirs.feature_names()


# Values on the kernel's inline path (digits with at most one '.', up to 15 digits) and
# off it (16+ digits, signs, exponents, a second '.' or ':', nothing), names of bytes
# that end tokens or not, bars touching tokens, Python's ASCII whitespace.
_DECIMALS = st.from_regex(r"\A[0-9]{0,7}(\.[0-9]{0,8})?\Z").filter(lambda v: v not in ("", "."))
_VALUES = _DECIMALS | st.from_regex(
    r"\A[+-]?[0-9]{0,18}(\.[0-9]{0,18})?([eE][+-]?[0-9]{0,3})?(:[0-9]?|\.[0-9])?\Z"
)
_NAMES = st.text(alphabet="aZ09_.-'", min_size=1, max_size=6)
_SPACES = st.sampled_from([" ", "  ", "\t", "\x1c", " \x0b"])


def _vw_lines(values, names=_NAMES):
    token = st.tuples(names, st.none() | values).map(
        lambda t: t[0] if t[1] is None else f"{t[0]}:{t[1]}"
    )
    segment = st.tuples(
        st.sampled_from(["", " ", "ns ", "NS:2 ", "n:0.5 ", "space ", "LongSpace_1:3 "]),
        st.lists(st.tuples(token, _SPACES), max_size=6),
    ).map(lambda t: t[0] + "".join(a + b for a, b in t[1]))
    line = st.tuples(
        st.sampled_from(["1 ", "-1 ", "1 2 ", "0.5 'tag "]),
        st.lists(segment, min_size=1, max_size=3),
    ).map(lambda t: t[0] + "|" + "|".join(t[1]))
    return st.lists(line, min_size=1, max_size=6).map(lambda lines: "\n".join(lines) + "\n")


def _kernel_and_reference(text: str):
    params = {"tokenizer": "pairs", "n_features": 2**10, "weighting": "tf", "hashed_names": True}
    ours, theirs = TextFeaturizer(**params), TextFeaturizer(**params)
    raw = text.encode()
    compiled = None
    if _chunks._PairsReader(ours, "vw")._compiled(raw, 0) is not None:  # no fallback
        compiled = _compiled(raw, "vw", ours, _chunks._PairsReader(ours, "vw"))
    try:
        reference = _reference(raw, "vw", theirs)
    except DataFormatError:
        reference = None
    return compiled, reference


@settings(max_examples=150, deadline=None)
@given(_vw_lines(_VALUES, _NAMES | st.sampled_from(["\x1f", "a\x1fb", ":", "a|b"])))
def test_adversarial_vw_values_equal_reference_or_fall_back(text):
    """Whatever the kernel reads (its inline values or fast_float's) equals the reference
    bit for bit; a line the reference rejects the kernel leaves to it."""
    compiled, reference = _kernel_and_reference(text)
    if reference is None:
        assert compiled is None
    elif compiled is not None:
        _same(compiled, reference)


@settings(max_examples=100, deadline=None)
@given(_vw_lines(_DECIMALS))
def test_inline_decimal_values_take_the_compiled_path(text):
    """Values of digits with at most one '.' (up to 15 digits) are the kernel's own:
    no fallback, and the reference's values to the bit."""
    compiled, reference = _kernel_and_reference(text)
    assert compiled is not None and reference is not None
    _same(compiled, reference)


@pytest.mark.parametrize(
    "fmt, line",
    [
        ("vw", "1 |a x:0.12345678901234567890\n"),  # off the exact fast path
        ("vw", "1 |a x:1_0\n"),
        ("vw", "1 |a café:1\n"),  # not ASCII
        ("vw", "1 |A:1e300 x:1e300\n"),  # the scaled value overflows
        ("vw", "1 |a x:nope\n"),  # bad lines
        ("vw", "|a x\n"),
        ("vw", "1 -2 |a x\n"),
        ("vw", "1 |:2 x\n"),
        ("vw", "1 x\n"),
        ("vw", "1 2 3 4 |a x\n"),
        ("counts", "a|b:1 #label#:p\n"),
        ("counts", "a:1 #label#:\n"),
        ("counts", "a:1 b\n"),
        ("counts", "#label#:p a:1\n"),
        ("counts", ":1 #label#:p\n"),
        ("counts", "a:-3 #label#:p\n"),  # a negative count: a bad line
        ("counts", "\ufeffa:1 #label#:p\n"),
    ],
)
def test_kernel_leaves_what_it_cannot_do_to_the_reference(fmt, line):
    reader = _chunks._PairsReader(
        TextFeaturizer(weighting="tf", tokenizer="pairs", hashed_names=True, n_features=16), fmt
    )
    good = "1 | g:1\n" if fmt == "vw" else "g:1 #label#:p\n"
    raw = (good + line).encode()
    assert reader._compiled(raw, 0) is None
    assert reader.meta[hashing.ENTRIES] == 0 or (reader.slots[:, hashing.COLUMN] < 0).all()


def test_kernel_checks_its_buffers():
    raw = np.frombuffer(b"1 | a b c\n1 | d\n", dtype=np.uint8)
    slots = np.full((16, hashing.SLOT_WIDTH), hashing.EMPTY, dtype=np.int64)
    small = (
        np.empty(2),
        np.empty(2, dtype=np.int32),
        np.zeros(3, dtype=np.int64),
        np.empty(2),
        np.empty((2, 2), dtype=np.int64),
        np.empty(2),
        np.empty(8, dtype=np.int64),
        np.empty(32, dtype=np.uint8),
    )
    state = np.zeros(hashing.STATE_SIZE, dtype=np.int64)
    table = (slots, np.empty(64, dtype=np.uint8), np.zeros(hashing.META_SIZE, dtype=np.int64))
    status = hashing.parse_pairs(raw, True, True, 8, True, small, table, state)
    assert status == hashing.NO_ROOM  # 3 values do not fit in 2: stopped, nothing past
    bad = (slots[:, :3].copy(), table[1], table[2])  # too narrow: refused, nothing written
    with pytest.raises(ValueError, match="too narrow"):
        hashing.parse_pairs(raw, True, True, 8, True, small, bad, state)
    odd = (np.full((6, hashing.SLOT_WIDTH), -2, dtype=np.int64), table[1], table[2])
    with pytest.raises(ValueError, match="power of two"):
        hashing.parse_pairs(raw, True, True, 8, True, small, odd, state)
    with pytest.raises(ValueError, match="outside the table"):
        hashing.remove_names(slots, np.array([16]), 1)
    with pytest.raises(ValueError, match="twice the names"):
        full = np.zeros((4, hashing.SLOT_WIDTH), dtype=np.int64)  # 4 names
        hashing.rehash(full, np.full((4, hashing.SLOT_WIDTH), -2, dtype=np.int64))
    tiny_table = (
        np.full((2, hashing.SLOT_WIDTH), -2, dtype=np.int64),
        np.empty(64, np.uint8),
        np.zeros(2, np.int64),
    )
    assert (
        hashing.parse_pairs(raw, True, True, 8, True, small, tiny_table, state) == hashing.NO_ROOM
    )


# ------------------------------------------------------------------ streamed models


def _vw_file(path, rng, n=600):
    words = ["Alpha", "beta", "Gamma", "x", "Y", "A", "a"]
    lines = []
    for i in range(n):
        head = str(rng.choice(["1", "-1"]))
        if rng.random() < 0.5:
            head += " " + str(rng.choice(["2", "0.5", "1.25", "0"]))
        if rng.random() < 0.2:
            head += f" 'tag{i}"
        segments = []
        for _ in range(rng.integers(1, 4)):
            space = str(rng.choice(["", "ns", "Ns:2", "B:0.5"]))
            tokens = [
                str(rng.choice(words))
                + str(rng.integers(0, 30))
                + str(rng.choice(["", ":1", ":2.5", ":-1", ":0", ":3e2", ":0.1"]))
                for _ in range(rng.integers(0, 6))
            ]
            segments.append(("|" + space if space else "| ") + " " + " ".join(tokens))
        lines.append(head + " " + " ".join(segments))
        if rng.random() < 0.05:
            lines.append("  ")
    path.write_text("\n".join(lines) + "\n")
    return path


def _counts_file(path, rng, n=600):
    names = ["Good", "bad", "a:b", "ok_Ok"]
    lines = []
    for _ in range(n):
        tokens = [
            f"{rng.choice(names)}{rng.integers(0, 40)}:{rng.integers(1, 4)}"
            for _ in range(rng.integers(0, 8))
        ]
        lines.append(" ".join([*tokens, f"#label#:{rng.choice(['positive', 'negative'])}"]))
    path.write_text("\n".join(lines) + "\n")
    return path


def _fit(path, compiled, monkeypatch, estimator, **options):
    monkeypatch.setattr(stream, "_COMPILED_TEXT", compiled)
    read = _chunks._PairsReader._compiled
    blocks = []

    def counted(self, raw, bytes_read, n_lines=None, **kwargs):
        batch = read(self, raw, bytes_read, n_lines, **kwargs)
        blocks.append(batch is not None)
        return batch

    monkeypatch.setattr(_chunks._PairsReader, "_compiled", counted)
    chunk_size = options.pop("chunk_size")
    featurizer = TextFeaturizer(
        tokenizer="pairs", hashed_names=True, **{"weighting": "tf", **options}
    )
    report = stream.fit_stream(
        estimator, path, featurizer=featurizer, epochs=2, chunk_size=chunk_size
    )
    assert any(blocks) == compiled  # the compiled reader read blocks (or was off)
    return estimator, featurizer, report


@pytest.mark.parametrize("fmt", ["vw", "counts"])
@pytest.mark.parametrize("chunk_size", [1, 7, 100, 10_000])
@pytest.mark.parametrize("lowercase", [True, False])
def test_streamed_model_equals_reference_path(tmp_path, monkeypatch, fmt, chunk_size, lowercase):
    rng = np.random.default_rng(chunk_size)
    make = _vw_file if fmt == "vw" else _counts_file
    path = make(tmp_path / f"d.{fmt}", rng)
    for weighting, n_features in (("tf", 2**20), ("binary", 32)):
        options = {
            "chunk_size": chunk_size,
            "lowercase": lowercase,
            "weighting": weighting,
            "n_features": n_features,
        }
        a, fa, ra = _fit(
            path, False, monkeypatch, AveragedPerceptron(shuffle=False), **dict(options)
        )
        b, fb, rb = _fit(
            path, True, monkeypatch, AveragedPerceptron(shuffle=False), **dict(options)
        )
        # A hashed model trains in the rows its data reaches: a CSR coef_ (both alike).
        assert _dense(a.coef_).tobytes() == _dense(b.coef_).tobytes()
        assert a.intercept_.tobytes() == b.intercept_.tobytes()
        assert fa.feature_names() == fb.feature_names()
        assert [e["mistakes"] for e in ra.epochs] == [e["mistakes"] for e in rb.epochs]


def test_stream_mixes_compiled_and_reference_blocks(tmp_path, monkeypatch):
    """Blocks the kernel leaves (numbers off its path, non-ASCII, a "|" in a counts
    name, after which every block is the reference's) give the same model."""
    rng = np.random.default_rng(5)
    lines = _counts_file(tmp_path / "a.counts", rng, 300).read_text().splitlines()
    lines[40] = "Café:1 x:0.30000000000000004441 #label#:positive"
    lines[150] = "p|q:2 P|Q:1 #label#:negative"
    path = tmp_path / "b.counts"
    path.write_text("\n".join(lines) + "\n")
    for chunk_size in (10, 64):
        options = {"chunk_size": chunk_size, "n_features": 64}
        a, fa, _ = _fit(path, False, monkeypatch, Perceptron(shuffle=False), **dict(options))
        b, fb, _ = _fit(path, True, monkeypatch, Perceptron(shuffle=False), **dict(options))
        # A hashed model trains in the rows its data reaches: a CSR coef_ (both alike).
        assert _dense(a.coef_).tobytes() == _dense(b.coef_).tobytes()
        assert fa.feature_names() == fb.feature_names()


def test_prefitted_featurizer_with_unnormalized_names_keeps_reference_names(tmp_path, monkeypatch):
    rng = np.random.default_rng(6)
    path = _counts_file(tmp_path / "a.counts", rng, 200)
    results = []
    for compiled in (False, True):
        monkeypatch.setattr(stream, "_COMPILED_TEXT", compiled)
        featurizer = TextFeaturizer(
            weighting="tf", tokenizer="pairs", hashed_names=True, n_features=8
        ).fit(["zz|aa:1 aa:2"])
        assert not featurizer._hashed_names_normalized()
        model = Perceptron(shuffle=False)
        stream.fit_stream(model, path, featurizer=featurizer, chunk_size=50)
        results.append((model.coef_.tobytes(), featurizer.feature_names()))
    assert results[0] == results[1]


@pytest.mark.parametrize(
    "fmt, bad, message",
    [
        ("vw", "1 |a x:nope", 'value of feature "x" "nope" is not a number'),
        ("vw", "|a x", "no label before the |"),
        ("counts", "a:1 b:2", "no #label#: label at the end of the line"),
        # Numbers are ASCII decimal: not Python's float() (underscores, other digits).
        ("vw", "1 |a x:1_000", 'value of feature "x" "1_000" is not a number'),
        ("vw", "1 |a x:\u0661", 'value of feature "x" "\u0661" is not a number'),
        ("vw", "1 |a x:\uff15", 'value of feature "x" "\uff15" is not a number'),
        ("vw", "1_0 |a x", "expected 'label [importance] [tag]' before the first |"),
        ("vw", "\u0661 |a x", "expected 'label [importance] [tag]' before the first |"),
        ("vw", "1 2_0 |a x", "expected 'label [importance] [tag]' before the first |"),
        ("vw", "1 |a:1_0 x", 'namespace "a" scale "1_0" is not a number'),
        ("counts", "a:1_0 #label#:positive", 'count of "a" "1_0" is not a number'),
        ("counts", "a:\u0661 #label#:positive", 'count of "a" "\u0661" is not a number'),
        ("counts", "a:-3 #label#:positive", 'count of "a" is negative: "-3"'),
    ],
)
def test_bad_line_error_names_file_and_line(tmp_path, monkeypatch, fmt, bad, message):
    rng = np.random.default_rng(7)
    make = _vw_file if fmt == "vw" else _counts_file
    lines = make(tmp_path / f"a.{fmt}", rng, 50).read_text().splitlines()
    lines.insert(33, bad)
    path = tmp_path / f"b.{fmt}"
    path.write_text("\n".join(lines) + "\n")
    errors = []
    for compiled in (False, True):
        monkeypatch.setattr(stream, "_COMPILED_TEXT", compiled)
        with pytest.raises(DataFormatError) as caught:
            stream.fit_stream(
                Perceptron(),
                path,
                featurizer=TextFeaturizer(weighting="tf", tokenizer="pairs", hashed_names=True),
                classes=["positive", "negative"] if fmt == "counts" else [-1, 1],
                chunk_size=10,
            )
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    assert errors[1].startswith(f"{path}:34: ") and message in errors[1]


def test_scan_reads_labels_through_the_compiled_reader(tmp_path, monkeypatch):
    path = _vw_file(tmp_path / "a.vw", np.random.default_rng(8), 300)
    found = []
    for compiled in (False, True):
        monkeypatch.setattr(stream, "_COMPILED_TEXT", compiled)
        found.append(stream.scan(path, chunk_size=37))
    assert found[0].classes.tolist() == found[1].classes.tolist()
    assert (found[0].n_examples, found[0].n_bytes) == (found[1].n_examples, found[1].n_bytes)


@pytest.mark.parametrize("fmt", ["vw", "counts"])
def test_cli_stream_writes_the_reference_model(tmp_path, monkeypatch, fmt, capsys):
    """``perceptrons train FILE --stream --features hashing``: every saved array (the
    weights, the hashed names) equal to the reference path's."""
    from perceptrons.cli import main

    make = _vw_file if fmt == "vw" else _counts_file
    path = make(tmp_path / f"d.{fmt}", np.random.default_rng(9), 400)
    saved = []
    for compiled in (False, True):
        monkeypatch.setattr(stream, "_COMPILED_TEXT", compiled)
        model = tmp_path / f"m{int(compiled)}.npz"
        argv = ["train", str(path), "-o", str(model), "--stream", "--chunk-size", "64"]
        argv += ["--hashed-names"]
        assert main([*argv, "--epochs", "2", "--features", "hashing", "--quiet"]) == 0
        with np.load(model, allow_pickle=False) as arrays:
            contents = {k: arrays[k].tobytes() for k in arrays.files if k != "__meta__"}
            meta = json.loads(arrays["__meta__"].tobytes())
        for stamp in ("created", "sha256"):  # the time of writing, and a digest with it
            meta.pop(stamp)
        saved.append((contents, meta))
    assert saved[0] == saved[1] and len(saved[0][0]) > 1
    assert "featurizer/hashed_names_text" in saved[0][0]  # the names, identical too


@pytest.mark.parametrize("fmt", ["vw", "counts"])
def test_skipped_bad_lines_leave_no_names(tmp_path, monkeypatch, fmt):
    """A chunk with a bad line is read by the reference reader, which skips the line:
    the names the kernel had met in it (before giving up) are rolled back, so a name
    seen only on a skipped line is no feature name, and is recorded when it comes
    back on a good line."""
    rng = np.random.default_rng(10)
    make = _vw_file if fmt == "vw" else _counts_file
    lines = make(tmp_path / f"a.{fmt}", rng, 200).read_text().splitlines()
    if fmt == "vw":
        lines[20] = "1 |a onlyhere:1 bad:nope"
        lines[150] = "-1 |a onlyhere:2"
    else:
        lines[20] = "onlyhere:1 bad:nope #label#:positive"
        lines[150] = "onlyhere:2 #label#:negative"
    path = tmp_path / f"b.{fmt}"
    path.write_text("\n".join(lines) + "\n")
    results = []
    for compiled in (False, True):
        monkeypatch.setattr(stream, "_COMPILED_TEXT", compiled)
        featurizer = TextFeaturizer(
            weighting="tf", tokenizer="pairs", hashed_names=True, n_features=2**16
        )
        model = Perceptron(shuffle=False)
        stream.fit_stream(model, path, featurizer=featurizer, chunk_size=30, skip_bad_lines=True)
        names = featurizer.feature_names()
        results.append((model.coef_.tobytes(), names))
    assert results[0] == results[1]
    assert sum("onlyhere" in name for name in results[1][1]) == 1


def test_buffers_fit_every_block_after_smaller_and_larger_ones():
    """The arrays grow for each block's rows, values and longest name: a block of one
    long line after a block of the same value bound still fits."""
    featurizer = TextFeaturizer(weighting="tf", tokenizer="pairs", hashed_names=True, n_features=16)
    reader = _chunks._PairsReader(featurizer, "counts")
    blocks = [b"a:1 #label#:p\n" * 40, b"a:1 b:2 c:3 #label#:q\n", b"x" * 600 + b":1 #label#:p"]
    blocks.append(b"y" * 601 + b":1 #label#:p")  # one byte longer, the same value bound
    theirs = TextFeaturizer(weighting="tf", tokenizer="pairs", hashed_names=True, n_features=16)
    for raw in blocks:
        _same(_compiled(raw, "counts", featurizer, reader), _reference(raw, "counts", theirs))
    assert featurizer.feature_names() == theirs.feature_names()


# ------------------------------------------------------------------ a row's sort


@njit
def _sort_one(indices, data):
    columns = np.empty(hashing._SORT_MAX, dtype=np.int32)
    values = np.empty(hashing._SORT_MAX, dtype=np.float64)
    ranks = np.empty(hashing._SORT_MAX, dtype=np.int32)
    # The row between two others, which the sort must not touch.
    return hashing._sort_row(indices, data, 1, indices.shape[0] - 1, columns, values, ranks)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.integers(0, 2**31 - 2) | st.integers(0, 40) | st.sampled_from([0, 2**31 - 2]),
        max_size=hashing._SORT_MAX + 6,
    )
)
def test_sort_row_sorts_rows_without_a_repeat_and_leaves_the_others(columns):
    """A row of distinct columns (at most _SORT_MAX, or ascending already) leaves sorted
    with its values; a row with a repeat (or longer and out of order) is left as it is."""
    indices = np.array([7, *columns, 3], dtype=np.int32)
    data = np.arange(len(indices), dtype=np.float64) + 0.5
    before_indices, before_data = indices.copy(), data.copy()
    sorted_ = _sort_one(indices, data)
    ascending = all(a < b for a, b in itertools.pairwise(columns))
    distinct = len(set(columns)) == len(columns)
    assert sorted_ == (ascending or (distinct and len(columns) <= hashing._SORT_MAX))
    assert indices[0] == 7 and indices[-1] == 3 and data[0] == 0.5 and data[-1] == len(data) - 0.5
    if sorted_:
        order = sorted(range(len(columns)), key=lambda k: columns[k])
        assert indices[1:-1].tolist() == sorted(columns)
        assert data[1:-1].tolist() == [before_data[1 + k] for k in order]
    else:
        assert np.array_equal(indices, before_indices) and np.array_equal(data, before_data)
