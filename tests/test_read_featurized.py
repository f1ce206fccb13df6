"""A whole vw / counts file read and featurized in one pass by the compiled hashing reader
(perceptrons.io.prepare.read_featurized, io._chunks.read_pairs): equal, bit for bit, to
read_data then TextFeaturizer(tokenizer="pairs").fit_transform / transform, with the same
errors, and ``perceptrons train FILE.vw`` (in memory) writing the reference model."""

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perceptrons import TextFeaturizer
from perceptrons.io import _chunks
from perceptrons.io.formats import DataFormatError, read_data
from perceptrons.io.prepare import read_featurized

# Pieces of names and numbers: ASCII, case, non-ASCII, Python-only whitespace, colons,
# bars, numbers on and off the kernel's exact path.
_NAME = st.sampled_from(
    ["a", "A", "b", "Ab", "x_y", "é", "日本", "a:b", "\x1c", "Zeta", "q" * 300, "'t", "#"]
)
_NUMBER = st.sampled_from(
    ["1", "0", "-0", "2.5", ".5", "5.", "1e3", "-1e-17", "0.30000000000000004441", "1_0", "x"]
)
_SPACE = st.sampled_from([" ", "  ", "\t", " \x1f"])


@st.composite
def _vw_line(draw) -> str:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from(["", "  ", "garbage", "1 2 3 4 |a x", "|a x", "1:2 |a x"]))
    head = [draw(st.sampled_from(["1", "-1", "2", "0.5", "3"]))]
    if draw(st.booleans()):
        head.append(draw(st.sampled_from(["0", "1", "2.5", "-1", "1e0"])))
    if draw(st.booleans()):
        head.append(draw(st.sampled_from(["'tag", "tag"])))
    line = " ".join(head) + draw(st.sampled_from([" ", ""]))
    for _ in range(draw(st.integers(1, 3))):
        line += "|"
        if draw(st.booleans()):  # a namespace, maybe scaled
            line += draw(_NAME) + draw(st.sampled_from(["", ":2", ":0.5", ":nope"]))
        for _ in range(draw(st.integers(0, 6))):
            token = draw(_NAME)
            if draw(st.booleans()):
                token += ":" + draw(_NUMBER)
            line += draw(_SPACE) + token
    return line


@st.composite
def _counts_line(draw) -> str:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from(["", " ", "a:1 b:2", "#label#:", "x #label#:p y:1"]))
    tokens = [
        f"{draw(_NAME)}:{draw(_NUMBER)}" for _ in range(draw(st.integers(0, 6)))
    ]  # repeated names come from the small pool
    return " ".join([*tokens, "#label#:" + draw(st.sampled_from(["pos", "neg", "Né"]))])


def _outcome(read):
    """What a read gives: its arrays, or the error's text."""
    try:
        data, featurizer = read()
    except DataFormatError as error:
        return str(error)
    X = data.X
    w = data.sample_weight
    return (
        X.shape,
        X.indices.dtype.str,
        X.indptr.dtype.str,
        X.indptr.tobytes(),
        X.indices.tobytes(),
        X.data.tobytes(),
        data.y.dtype.str,
        data.y.tolist(),
        None if w is None else w.tobytes(),
        data.skipped,
        featurizer.feature_names(),
    )


def _reference(path, fmt, params, skip, fitted=None):
    data = read_data(path, fmt, labels=True, skip_bad_lines=skip)
    if fitted is None:
        featurizer = TextFeaturizer(**params)
        data.X = featurizer.fit_transform(data.texts)
    else:
        featurizer = fitted
        data.X = featurizer.transform(data.texts)
    return data, featurizer


def _compiled(path, fmt, params, skip, chunk_size, fitted=None):
    featurizer = TextFeaturizer(**params) if fitted is None else fitted
    data = _chunks.read_pairs(
        str(path),
        fmt,
        featurizer,
        fit=fitted is None,
        skip_bad_lines=skip,
        chunk_size=chunk_size,
    )
    assert data.texts is None and data.format == fmt
    return data, featurizer


@settings(max_examples=60, deadline=None)
@given(
    fmt=st.sampled_from(["vw", "counts"]),
    data=st.data(),
    skip=st.booleans(),
    chunk_size=st.sampled_from([1, 3, 10_000]),
    lowercase=st.booleans(),
    weighting=st.sampled_from(["tf", "binary"]),
    n_features=st.sampled_from([1, 7, 2**20]),
)
def test_read_pairs_equals_read_data_then_featurizer(
    fmt, data, skip, chunk_size, lowercase, weighting, n_features
):
    line = _vw_line() if fmt == "vw" else _counts_line()
    lines = data.draw(st.lists(line, min_size=0, max_size=12))
    params = {
        "tokenizer": "pairs",
        "lowercase": lowercase,
        "weighting": weighting,
        "n_features": n_features,
    }
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"d.{fmt}"
        path.write_text("\n".join(lines) + data.draw(st.sampled_from(["", "\n"])))
        name = str(path)
        expected = _outcome(lambda: _reference(name, fmt, params, skip))
        got = _outcome(lambda: _compiled(name, fmt, params, skip, chunk_size))
        assert got == expected
        if isinstance(expected, str):
            return
        # transform with the fitted featurizer (a development file): no names learned
        fitted = _reference(name, fmt, params, skip)[1]
        names = fitted.feature_names()
        expected = _outcome(lambda: _reference(name, fmt, params, skip, fitted))
        got = _outcome(lambda: _compiled(name, fmt, params, skip, chunk_size, fitted))
        assert got == expected and fitted.feature_names() == names


@settings(max_examples=40, deadline=None)
@given(
    fmt=st.sampled_from(["vw", "counts"]),
    data=st.data(),
    skip=st.booleans(),
    weighting=st.sampled_from(
        [{}, {"weighting": "tf", "sublinear_tf": True}, {"weighting": "binary"}]
    ),
    n_features=st.sampled_from([7, 2**20]),
)
def test_read_featurized_weighs_as_the_featurizer_does(fmt, data, skip, weighting, n_features):
    """tf-idf (the default) and sublinear counts: the reader counts, the featurizer
    weighs, fitting its idf on the training file's counts; equal to read_data then
    fit_transform / transform, bit for bit."""
    line = _vw_line() if fmt == "vw" else _counts_line()
    lines = data.draw(st.lists(line, min_size=0, max_size=12))
    params = {"tokenizer": "pairs", "n_features": n_features, "hashed_names": True, **weighting}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"d.{fmt}"
        path.write_text("\n".join(lines) + "\n")

        def public(fitted=None):
            featurizer = TextFeaturizer(**params) if fitted is None else fitted
            data = read_featurized(
                path, featurizer, fit=fitted is None, format=fmt, skip_bad_lines=skip
            )
            assert data is not None and data.texts is None
            return data, featurizer

        expected = _outcome(lambda: _reference(str(path), fmt, params, skip))
        assert _outcome(public) == expected
        if isinstance(expected, str):
            return
        fitted = _reference(str(path), fmt, params, skip)[1]
        expected = _outcome(lambda: _reference(str(path), fmt, params, skip, fitted))
        assert _outcome(lambda: public(fitted)) == expected


def _big_vw(path: Path, n: int = 400) -> Path:
    rng = np.random.default_rng(3)
    lines = []
    for i in range(n):
        label = rng.choice(["1", "-1"])
        weight = f" {rng.integers(1, 4)}" if i % 7 == 0 else ""
        tokens = " ".join(
            f"W{rng.integers(0, 50)}:{rng.integers(1, 9) / 4}" for _ in range(rng.integers(0, 9))
        )
        lines.append(f"{label}{weight} |ns {tokens} |Other w{rng.integers(0, 5)}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_read_featurized_many_blocks_equal_the_reference(tmp_path):
    path = _big_vw(tmp_path / "a.vw")
    params = {"tokenizer": "pairs", "lowercase": False, "n_features": 2**18, "weighting": "tf"}
    expected = _outcome(lambda: _reference(str(path), "vw", params, False))
    got = _outcome(lambda: _compiled(path, "vw", params, False, 37))
    assert got == expected and got[8] is not None  # importance weights read

    def public():
        featurizer = TextFeaturizer(**params)
        return read_featurized(path, featurizer, fit=True), featurizer

    assert _outcome(public) == expected


def test_read_featurized_leaves_what_it_cannot_read(tmp_path):
    path = _big_vw(tmp_path / "a.vw", 5)
    pairs = TextFeaturizer(weighting="tf", tokenizer="pairs")
    assert read_featurized("-", pairs, fit=True) is None  # standard input
    assert (
        read_featurized(path, TextFeaturizer(weighting="tf", tokenizer="pairs"), fit=False) is None
    )  # unfit
    assert read_featurized(path, TextFeaturizer(weighting="tf"), fit=True) is None  # not pairs
    svm = tmp_path / "a.svm"
    svm.write_text("1 1:2\n")
    assert read_featurized(svm, pairs, fit=True) is None


@pytest.mark.parametrize(
    "fmt, bad, message",
    [
        ("vw", "1 |a x:nope", 'value of feature "x" "nope" is not a number'),
        ("vw", "|a x", "no label before the |"),
        ("counts", "a:1 b:2", "no #label#: label at the end of the line"),
    ],
)
def test_bad_line_is_named_by_file_and_line(tmp_path, fmt, bad, message):
    good = "1 |a x:1 y" if fmt == "vw" else "x:1 y:2 #label#:pos"
    path = tmp_path / f"a.{fmt}"
    path.write_text("\n".join([good] * 30 + [bad] + [good] * 30) + "\n")
    with pytest.raises(DataFormatError) as caught:
        _chunks.read_pairs(
            str(path),
            fmt,
            TextFeaturizer(weighting="tf", tokenizer="pairs"),
            fit=True,
            chunk_size=8,
        )
    assert str(caught.value) == f"{path}:31: {message}"


def test_names_off_gives_the_same_matrix(tmp_path):
    """A featurizer that keeps no names of hashed columns (``hashed_names=False``): the
    kernel keeps no table, the matrix is the same."""
    path = _big_vw(tmp_path / "a.vw")
    params = {"tokenizer": "pairs", "lowercase": False, "n_features": 2**10, "weighting": "tf"}
    expected = _reference(str(path), "vw", params, False)[0].X
    featurizer = TextFeaturizer(**params)
    featurizer.hashed_names = False
    reader = _chunks._PairsReader(featurizer, "vw")
    assert not reader.names
    X = _chunks.read_pairs(str(path), "vw", featurizer, fit=True, chunk_size=50).X
    assert X.data.tobytes() == expected.data.tobytes()
    assert np.array_equal(X.indices, expected.indices) and np.array_equal(X.indptr, expected.indptr)
    assert int(reader.meta[0]) == 0  # the reader of a featurizer without names: no table


@pytest.mark.parametrize("fmt", ["vw", "counts"])
def test_cli_train_in_memory_writes_the_reference_model(tmp_path, monkeypatch, fmt):
    """``perceptrons train FILE.vw -o M --dev DEV`` (in memory): the model file and the
    JSON summary equal to those of the reference path (read_data + fit_transform)."""
    from perceptrons.cli import main
    from perceptrons.cli import train as train_command

    if fmt == "vw":
        path = _big_vw(tmp_path / "d.vw")
    else:
        rng = np.random.default_rng(4)
        rows = [
            " ".join(f"T{rng.integers(0, 30)}:{rng.integers(1, 4)}" for _ in range(5))
            + f" #label#:{rng.choice(['pos', 'neg'])}"
            for _ in range(300)
        ]
        path = tmp_path / "d.counts"
        path.write_text("\n".join(rows) + "\n")
    reads = []
    original = _chunks.read_pairs

    def counted(*args, **kwargs):
        reads.append(kwargs["fit"])
        return original(*args, **kwargs)

    monkeypatch.setattr(_chunks, "read_pairs", counted)
    saved = []
    for compiled in (False, True):
        if not compiled:
            monkeypatch.setattr(train_command, "_pairs_featurizer", lambda args, path: None)
        else:
            monkeypatch.undo()
            monkeypatch.setattr(_chunks, "read_pairs", counted)
        model = tmp_path / f"m{int(compiled)}.npz"
        argv = ["train", str(path), "-o", str(model), "--dev", str(path), "--epochs", "3"]
        argv += ["--hashed-names"]
        assert main([*argv, "--quiet", "--json"]) == 0
        with np.load(model, allow_pickle=False) as arrays:
            contents = {k: arrays[k].tobytes() for k in arrays.files if k != "__meta__"}
            meta = json.loads(arrays["__meta__"].tobytes())
        for stamp in ("created", "sha256"):
            meta.pop(stamp)
        saved.append((contents, meta))
    assert reads == [True, False]  # the training file, then the development file
    assert saved[0] == saved[1] and "featurizer/hashed_names_text" in saved[0][0]


@pytest.mark.parametrize("n_features", [2**12, 2**20])
def test_rows_with_a_repeat_among_sorted_rows(tmp_path, n_features):
    """Few rows with a repeated column (a collision, or a name given twice) among many
    without: scipy sums those rows alone, the others are sorted by the kernel; the
    matrix is the reference's, bit for bit."""
    rng = np.random.default_rng(11)
    lines = []
    for i in range(2000):
        names = rng.choice(100_000, size=6, replace=False)
        tokens = [f"f{name}:{rng.integers(1, 1000) / 7}" for name in names]
        if i % 300 == 5:
            tokens.append(tokens[0].split(":")[0] + ":0.1")  # a name repeated
        lines.append(f"{rng.choice(['1', '-1'])} | " + " ".join(tokens))
    path = tmp_path / "a.vw"
    path.write_text("\n".join(lines) + "\n")
    params = {"tokenizer": "pairs", "lowercase": False, "n_features": n_features, "weighting": "tf"}
    expected = _outcome(lambda: _reference(str(path), "vw", params, False))
    for chunk_size in (700, 10_000):
        got = _outcome(lambda size=chunk_size: _compiled(path, "vw", params, False, size))
        assert got == expected


@settings(max_examples=80, deadline=None)
@given(
    lines=st.lists(st.sampled_from(["", " ", "x", "1 | a:1", "y" * 100]), max_size=30),
    end=st.sampled_from(["", "\n"]),
    read_bytes=st.sampled_from([1, 3, 7, 64, 1 << 20]),
    chunk_size=st.sampled_from([1, 2, 3, 7, 100]),
)
def test_byte_line_blocks_are_line_blocks(lines, end, read_bytes, chunk_size):
    """The compiled readers' blocks, read by bytes, are those read line by line: the
    same bytes and first line numbers, whatever the read size."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "a.vw"
        path.write_bytes(("\n".join(lines) + end).encode())
        expected = [(block, line) for block, line, _ in _chunks._line_blocks(str(path), chunk_size)]
        saved = _chunks._READ_BYTES
        _chunks._READ_BYTES = read_bytes
        try:
            blocks = list(_chunks._byte_line_blocks(str(path), chunk_size))
        finally:
            _chunks._READ_BYTES = saved
        assert [(b, line) for b, line, _, _ in blocks] == expected
        # The lines counted as the bytes arrive: those of the block.
        assert [n for *_, n in blocks] == [len(b.splitlines()) for b, *_ in blocks]


@pytest.mark.parametrize("every", [1, 3, 40])
def test_lines_the_kernel_leaves_are_read_alone(tmp_path, monkeypatch, every):
    """Non-ASCII lines (the kernel leaves them) among ASCII ones: read line by line by
    the reference reader up to _MAX_FALLBACKS a block, then the rest of the block at
    once; the result is the reference's either way."""
    rng = np.random.default_rng(12)
    lines = []
    for i in range(200):
        word = "café" if i % every == 0 else "cafe"
        lines.append(f"{rng.choice(['1', '-1'])} | {word}:{i % 5} w{rng.integers(0, 9)} x")
    path = tmp_path / "a.vw"
    path.write_text("\n".join(lines) + "\n")
    params = {"tokenizer": "pairs", "lowercase": False, "n_features": 2**10, "weighting": "tf"}
    expected = _outcome(lambda: _reference(str(path), "vw", params, False))
    compiled = []
    original = _chunks._PairsReader._compiled

    def counted(self, raw, bytes_read, n_lines=None, **kwargs):
        batch = original(self, raw, bytes_read, n_lines, **kwargs)
        compiled.append(batch is not None)
        return batch

    monkeypatch.setattr(_chunks._PairsReader, "_compiled", counted)
    assert _outcome(lambda: _compiled(path, "vw", params, False, 10_000)) == expected
    assert any(compiled) == (every > 1)  # the kernel read the lines between
