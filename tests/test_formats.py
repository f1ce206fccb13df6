"""Tests of :func:`~perceptrons.io.formats.read_data` and ``detect_format``.

Every format and error path runs on tiny files written to ``tmp_path``; the real-data
tests skip (with the reason) when the shared data directory or a file is absent.  The
command-line tool prints ``str(exc)`` of a :class:`DataFormatError` or ``OSError``, so
messages are checked to be one line naming ``file:line``.
"""

from __future__ import annotations

import gzip
import io
import pickle
import re
import struct
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from perceptrons.datasets import DATA_ENV_VAR, shared_data_dir
from perceptrons.io import formats
from perceptrons.io.formats import (
    FORMATS,
    MAX_SVMLIGHT_WIDTH,
    TEXT_FORMATS,
    WEIGHTED_TEXT_FORMATS,
    DataFormatError,
    LabeledData,
    _svmlight_reference,
    detect_format,
    read_data,
)

# --------------------------------------------------------------------------- helpers


def _write(tmp_path: Path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return str(path)


def _error(path: str, **kwargs) -> str:
    """The one-line message of the DataFormatError that reading ``path`` raises."""
    with pytest.raises(DataFormatError) as info:
        read_data(path, **kwargs)
    message = str(info.value)
    assert "\n" not in message
    return message


def _require(relpath: str) -> Path:
    root = shared_data_dir()
    if root is None:
        pytest.skip(
            f"shared data directory not found (set {DATA_ENV_VAR} or place it at "
            "<repo root>/../shared/data)"
        )
    if not (root / relpath).exists():
        pytest.skip(f"data file {root / relpath} is absent")
    return root / relpath


def _idx_bytes(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.tobytes()


# --------------------------------------------------------------------------- svmlight


@pytest.mark.parametrize(
    ("content", "zero_based", "expected"),
    [
        ("1 1:0.5 3:2\n-1 2:1\n", False, [[0.5, 0, 2], [0, 1, 0]]),
        ("1 0:0.5 2:2\n-1 1:1\n", True, [[0.5, 0, 2], [0, 1, 0]]),
    ],
    ids=["one-based", "zero-based"],
)
def test_svmlight_zero_and_one_based(tmp_path, content, zero_based, expected):
    data = read_data(_write(tmp_path, "d.svm", content))
    assert data.format == "svmlight" and data.zero_based is zero_based
    assert sp.issparse(data.X) and data.X.format == "csr" and data.X.dtype == np.float64
    assert data.X.indices.dtype == data.X.indptr.dtype == np.int32
    np.testing.assert_array_equal(data.X.toarray(), expected)
    assert data.y.dtype == np.int64 and data.y.tolist() == [1, -1]
    assert data.texts is None and data.skipped == [] and data.n_samples == 2


def test_svmlight_explicit_base_and_width(tmp_path):
    path = _write(tmp_path, "d.svm", "1 1:1 3:2\n2 2:1\n")
    # Read as 0-based, index 1 is the second column; n_features pads the width.
    data = read_data(path, zero_based=True, n_features=6)
    assert data.X.shape == (2, 6) and data.X[0, 1] == 1.0 and data.zero_based is True
    assert read_data(path, n_features=3).X.shape == (2, 3)
    message = _error(path, n_features=2)
    assert (
        message == f"{path}:1: feature index 3 is beyond the 2 features expected (1-based indices)"
    )
    path0 = _write(tmp_path, "z.svm", "1 0:1\n")
    assert (
        _error(path0, zero_based=False) == f"{path0}:1: feature index 0 in a file read as one-based"
    )


def test_svmlight_comments_blanks_and_float_labels(tmp_path):
    content = "# a comment\n\n0.5 1:1 # trailing comment\n   \n1.5 qid:3 2:4\n"
    data = read_data(_write(tmp_path, "d.svmlight", content))
    assert data.y.dtype == np.float64 and data.y.tolist() == [0.5, 1.5]
    np.testing.assert_array_equal(data.X.toarray(), [[1, 0], [0, 4]])


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("-1 3:x", 'feature value "x" is not a number'),
        ("pos 3:1", 'label "pos" is not a number'),
        ("3:1 4:1", 'no label before "3:1"'),
        ("1 3:1 2:1", "feature indices must increase (2 after 3)"),
        ("1 3:1 3:2", "feature indices must increase (3 after 3)"),
        ("1 -3:1", "feature index -3 is negative"),
        ("1 a:1", 'feature index "a" is not an integer'),
        ("1 3", 'expected index:value, found "3"'),
        ("1 3:nan", 'feature value "nan" is not a finite number'),
        ("inf 3:1", 'label "inf" is not a finite number'),
        ("1 99999999999:1", "feature index 99999999999 is too large"),
    ],
)
def test_svmlight_bad_line(tmp_path, line, reason):
    path = _write(tmp_path, "bad.svm", f"1 1:1\n\n{line}\n-1 2:1\n")
    assert _error(path) == f"{path}:3: {reason}"


def test_svmlight_skip_bad_lines(tmp_path):
    content = "1 1:1\nfoo 2:1\n-1 2:1 # ok\n1 4:1 2:1\n\n-1 3:1\n1 5:1\n"
    path = _write(tmp_path, "d.svm", content)
    data = read_data(path, skip_bad_lines=True, n_features=3)
    assert data.y.tolist() == [1, -1, -1]
    assert [line for line, _ in data.skipped] == [2, 4, 7]
    assert "beyond the 3 features" in data.skipped[2][1]
    np.testing.assert_array_equal(data.X.toarray(), [[1, 0, 0], [0, 1, 0], [0, 0, 1]])


def test_svmlight_valid_file_never_parsed_in_python(tmp_path, monkeypatch):
    def fail(parts):  # pragma: no cover - must not be called
        raise AssertionError("valid svmlight must go through the fast reader only")

    monkeypatch.setattr(_svmlight_reference, "_svmlight_line_error", fail)
    data = read_data(_write(tmp_path, "d.svm", "1 1:1\n-1 2:1\n"), skip_bad_lines=True)
    assert data.n_samples == 2


def test_svmlight_without_labels(tmp_path):
    path = _write(tmp_path, "d.svm", "1:1 3:2\n7 2:5\nqid:1 1:2\n")
    data = read_data(path, labels=False)
    assert data.y is None and data.format == "svmlight"
    np.testing.assert_array_equal(data.X.toarray(), [[1, 0, 2], [0, 5, 0], [2, 0, 0]])
    # With labels=None, a file in which no line has a label is unlabeled.
    unlabeled = _write(tmp_path, "u.svm", "# no labels\n1:1 3:2\n2:5\n")
    assert read_data(unlabeled).y is None
    assert _error(unlabeled, labels=True) == f'{unlabeled}:2: no label before "1:1"'


# --------------------------------------------------------------------------- text formats


def test_fasttext(tmp_path):
    content = "__label__pos a  fine film\n\n__label__neg __label__meh dull\t plot\n"
    data = read_data(_write(tmp_path, "d.ft", content))
    assert data.format == "fasttext" and data.X is None
    assert data.texts == ["a fine film", "dull plot"]  # first label kept; re-joined
    assert data.y.tolist() == ["pos", "neg"]


def test_fasttext_missing_labels(tmp_path):
    path = _write(tmp_path, "d.ft", "__label__a one\nno label here\n__label__b two\n")
    assert _error(path) == f"{path}:2: no __label__ label at the start of the line"
    data = read_data(path, skip_bad_lines=True)
    assert data.y.tolist() == ["a", "b"] and data.skipped == [
        (2, "no __label__ label at the start of the line")
    ]
    unlabeled = _write(tmp_path, "u.ft", "one doc\nanother doc\n")
    assert read_data(unlabeled).y is None
    assert _error(unlabeled, labels=True).startswith(f"{unlabeled}:1: no __label__")
    empty_label = _write(tmp_path, "e.ft", "__label__ text\n")
    assert _error(empty_label) == f'{empty_label}:1: empty label "__label__"'


def test_tsv(tmp_path):
    data = read_data(_write(tmp_path, "d.tsv", "pos\tgood\tfilm \r\n neg \tbad\n"))
    assert data.texts == ["good\tfilm", "bad"] and data.y.tolist() == ["pos", "neg"]
    path = _write(tmp_path, "bad.tsv", "pos\tgood\nneg bad\n\tno label\n")
    assert _error(path) == f"{path}:2: no tab between the label and the text"
    data = read_data(path, skip_bad_lines=True)
    assert data.skipped == [
        (2, "no tab between the label and the text"),
        (3, "empty label before the tab"),
    ]


def test_sentiment(tmp_path):
    content = "books pos 1.txt a  good read\ndvd neg 22.txt dull\nmusic pos 3.txt\n"
    data = read_data(_write(tmp_path, "s.txt", content), format="sentiment")
    assert data.texts == ["a good read", "dull", ""] and data.y.tolist() == ["pos", "neg", "pos"]
    path = _write(tmp_path, "bad.txt", "books pos 1.txt fine\nbooks neg\n")
    message = _error(path, format="sentiment")
    assert message == f"{path}:2: expected 'domain label id tokens...', found 2 field(s)"


def test_lines(tmp_path):
    path = _write(tmp_path, "d.txt", "first document \n\n  \nsecond one\n")
    data = read_data(path)
    assert data.format == "lines" and data.y is None
    assert data.texts == ["first document", "second one"]
    assert _error(path, format="lines", labels=True) == f"{path}: format 'lines' has no labels"


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("d.ft", "__label__a x y\n"),
        ("d.tsv", "a\tx y\n"),
        ("d.txt", "books pos 1.txt x y\nbooks neg 2.txt z\n"),
    ],
)
def test_labels_false_reads_text_as_lines(tmp_path, name, content):
    data = read_data(_write(tmp_path, name, content), labels=False)
    assert data.format == "lines" and data.y is None
    assert data.texts[0] == content.splitlines()[0].strip()


# --------------------------------------------------------------------------- csv


def test_csv_label_column_by_name_and_default(tmp_path):
    path = _write(tmp_path, "d.csv", "a,Class,b\n1,x,2.5\n\n-3,y,1e2\n")
    data = read_data(path)
    assert data.format == "csv" and isinstance(data.X, np.ndarray)
    assert data.X.dtype == np.float64 and data.X.flags.c_contiguous
    np.testing.assert_array_equal(data.X, [[1, 2.5], [-3, 100]])
    assert data.y.tolist() == ["x", "y"] and data.feature_names == ["a", "b"]
    last = read_data(_write(tmp_path, "e.csv", "a,b,kind\n1,2,x\n"))
    assert last.y.tolist() == ["x"] and last.feature_names == ["a", "b"]


def test_csv_quoted(tmp_path):
    content = 'a,"b, c",label\r\n1,2,"x, y"\r\n\r\n3,"4",z\r\n5,"x",w\r\n'
    path = _write(tmp_path, "d.csv", content)
    assert _error(path) == f'{path}:5: column "b, c" is not a number: "x"'
    data = read_data(path, skip_bad_lines=True)
    assert data.feature_names == ["a", "b, c"] and data.y.tolist() == ["x, y", "z"]
    huge = _write(tmp_path, "h.csv", f'a,label\n1,x\n2,"{"y" * 200_000}"\n')
    assert _error(huge).startswith(f"{huge}:3: unreadable CSV (field larger than field limit")


@pytest.mark.parametrize("label_column", ["a", "A", 0, "0", -3])
def test_csv_label_column_option(tmp_path, label_column):
    data = read_data(_write(tmp_path, "d.csv", "a,b,c\n1,2,3\n"), label_column=label_column)
    assert data.y.tolist() == ["1"] and data.feature_names == ["b", "c"]


def test_csv_without_labels(tmp_path):
    path = _write(tmp_path, "d.csv", "a,b,c\n1,2,3\n")
    assert read_data(path, labels=False).y is None
    # As many columns as the model has features: no label column.
    data = read_data(path, n_features=3)
    assert data.y is None and data.X.shape == (1, 3)
    assert (
        _error(path, n_features=3, labels=True)
        == f"{path}:1: 2 feature columns, but 3 are expected"
    )
    assert _error(path, labels=False, label_column="a").endswith("file without labels")


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ("3,abc,y", 'column "b" is not a number: "abc"'),
        ("3,,y", 'column "b" is empty'),
        ("3,inf,y", 'column "b" is not a finite number: "inf"'),
        ("3,4", "expected 3 columns, found 2"),
        ("3,4,", 'the label column "label" is empty'),
    ],
)
def test_csv_bad_row(tmp_path, row, reason):
    path = _write(tmp_path, "d.csv", f"a,b,label\n1,2,x\n{row}\n5,6,z\n")
    assert _error(path) == f"{path}:3: {reason}"
    data = read_data(path, skip_bad_lines=True)
    assert data.skipped == [(3, reason)] and data.y.tolist() == ["x", "z"]


def test_csv_header_and_option_errors(tmp_path):
    path = _write(tmp_path, "d.csv", "1,2,3\n4,5,6\n")
    assert _error(path) == (
        f"{path}:1: the first row must be a header of column names, found only numbers"
    )
    path = _write(tmp_path, "e.csv", "a,b,c\n1,2,3\n")
    assert _error(path, label_column="z") == f'{path}:1: no column named "z" (columns: a, b, c)'
    assert "out of range" in _error(path, label_column=3)
    one = _write(tmp_path, "one.csv", "label\nx\n")
    assert _error(one) == f"{one}:1: no feature columns besides the label"


# --------------------------------------------------------------------------- idx


def _write_idx(tmp_path, n=3, labels=True, gz_labels=False, n_labels=None):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(n, 4, 5), dtype=np.uint8)
    images[0, 0, :2] = [0, 255]
    path = tmp_path / "train-images-idx3-ubyte.gz"
    path.write_bytes(gzip.compress(_idx_bytes(images)))
    y = rng.integers(0, 10, size=n if n_labels is None else n_labels, dtype=np.uint8)
    if labels:
        raw = _idx_bytes(y)
        name = "train-labels-idx1-ubyte" + (".gz" if gz_labels else "")
        (tmp_path / name).write_bytes(gzip.compress(raw) if gz_labels else raw)
    return str(path), images, y


@pytest.mark.parametrize("gz_labels", [False, True])
def test_idx(tmp_path, gz_labels):
    path, images, y = _write_idx(tmp_path, gz_labels=gz_labels)
    data = read_data(path)
    assert data.format == "idx" and data.X.shape == (3, 20) and data.X.dtype == np.float64
    np.testing.assert_allclose(data.X, images.reshape(3, -1) / 255.0)
    assert data.X[0, 0] == 0.0 and data.X[0, 1] == 1.0
    assert data.y.dtype == np.int64 and data.y.tolist() == y.tolist()
    assert read_data(path, labels=False).y is None
    assert "features are expected" in _error(path, n_features=10)


def test_idx_errors(tmp_path):
    path, _, _ = _write_idx(tmp_path, labels=False)
    assert read_data(path).y is None
    message = _error(path, labels=True)
    assert message.startswith(f"{path}: labels are required but ") and "labels-idx1" in message
    assert _error("-", format="idx", stdin=io.BytesIO(b"")) == (
        "<stdin>: idx data cannot be read from standard input"
    )
    _write_idx(tmp_path, n_labels=4)
    assert "holds 3 images but" in _error(path)
    corrupt = _write(tmp_path, "x-images-idx3-ubyte", b"\x00\x00\x08\x03\x00")
    assert _error(corrupt).startswith(f"{corrupt}: truncated IDX header")


# --------------------------------------------------------------------------- errors


def test_missing_file_and_directory(tmp_path):
    missing = str(tmp_path / "nope.svm")
    for fmt in ("auto", "svmlight", "fasttext", "idx"):
        with pytest.raises(FileNotFoundError) as info:
            read_data(missing, format=fmt)
        assert str(info.value) == f"{missing}: no such file"
    with pytest.raises(FileNotFoundError, match="no such file"):
        detect_format(str(tmp_path / "nope"))
    with pytest.raises(IsADirectoryError, match="is a directory"):
        read_data(str(tmp_path))


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "idx"] + ["auto"])
@pytest.mark.parametrize("content", ["", "\n  \n\n"])
def test_empty_file(tmp_path, fmt, content):
    path = _write(tmp_path, "empty", content)
    assert _error(path, format=fmt) == f"{path}: no data"
    assert _error(path, format=fmt, labels=True) in (
        f"{path}: no data",
        f"{path}: format 'lines' has no labels",
    )


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "idx"])
def test_text_formats_give_texts_the_others_features(tmp_path, fmt):
    content = {
        "svmlight": "1 1:1\n",
        "csv": "a,label\n1,x\n",
        "fasttext": "__label__x some text\n",
        "tsv": "x\tsome text\n",
        "sentiment": "books pos 1.txt some text\n",
        "vw": "1 |a some text\n",
        "counts": "some:1 text:2 #label#:x\n",
        "lines": "some text\n",
    }[fmt]
    data = read_data(_write(tmp_path, "d", content), format=fmt)
    assert (data.texts is not None) is (fmt in TEXT_FORMATS)
    assert (data.X is None) is (fmt in TEXT_FORMATS)
    assert set(WEIGHTED_TEXT_FORMATS) < set(TEXT_FORMATS) < set(FORMATS)


def test_every_line_bad(tmp_path):
    path = _write(tmp_path, "d.tsv", "no tab\nnone here\n")
    assert _error(path, skip_bad_lines=True) == f"{path}: no valid lines (2 skipped)"


def test_unknown_format(tmp_path):
    path = _write(tmp_path, "d.txt", "x\n")
    assert _error(path, format="parquet") == (
        f"{path}: unknown format 'parquet' (expected auto or one of {', '.join(FORMATS)})"
    )


def test_cannot_tell_format(tmp_path):
    path = _write(tmp_path, "d.txt", "just some\nplain text\n")
    message = _error(path, labels=True)
    assert message.startswith(f"{path}: cannot tell the format") and "--format" in message
    assert read_data(path).format == "lines"


def test_undecodable_bytes(tmp_path):
    path = _write(tmp_path, "d.tsv", b"pos\tfine\nneg\tw\xe9ird\n")
    assert _error(path) == (
        f"{path}:2: not valid utf-8 (byte 0xe9 at column 6); "
        "convert the file to UTF-8 or give its encoding"
    )
    assert read_data(path, encoding="latin-1").texts == ["fine", "w\xe9ird"]
    bom = _write(tmp_path, "bom.tsv", "\ufeffpos\tfine\n".encode())
    assert read_data(bom).y.tolist() == ["pos"]


def test_gzip_input(tmp_path):
    path = _write(tmp_path, "d.tsv.gz", gzip.compress(b"pos\tfine\n"))
    data = read_data(path)
    assert data.format == "tsv" and data.texts == ["fine"]
    corrupt = _write(tmp_path, "c.tsv.gz", gzip.compress(b"pos\tfine\n")[:-6])
    assert _error(corrupt).startswith(f"{corrupt}: corrupt gzip data")


def test_error_is_one_line_and_picklable():
    error = DataFormatError("f.txt", "two\nlines", 3)
    assert str(error) == "f.txt:3: two lines" and isinstance(error, ValueError)
    assert (error.source, error.line, error.reason) == ("f.txt", 3, "two lines")
    again = pickle.loads(pickle.dumps(error))
    assert str(again) == str(error) and again.line == 3
    assert str(DataFormatError("f.txt", "no data")) == "f.txt: no data"


# --------------------------------------------------------------------------- stdin


def test_stdin_text_and_binary():
    data = read_data("-", stdin=io.StringIO("__label__a x\n__label__b y\n"))
    assert data.source == "<stdin>" and data.format == "fasttext" and data.y.tolist() == ["a", "b"]

    class Binary:  # like sys.stdin: text wrapper with a binary .buffer
        buffer = io.BytesIO(b"1 1:1\n-1 2:1\n")

    data = read_data("-", stdin=Binary())
    assert data.format == "svmlight" and data.X.shape == (2, 2)
    data = read_data("-", "svmlight", stdin=io.StringIO("1 1:1\n"))
    assert data.X.shape == (1, 1)
    data = read_data("-", "lines", stdin=io.BytesIO(gzip.compress(b"a b\n")))
    assert data.texts == ["a b"]
    message = _error("-", format="tsv", stdin=io.StringIO("ok\tyes\nbad\n"))
    assert message == "<stdin>:2: no tab between the label and the text"


# --------------------------------------------------------------------------- detection


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("__label__a one\n__label__b two\n", "fasttext"),
        ("1 1:1 3:0.5\n-1 2:1\n", "svmlight"),
        ("# comment\n+1 qid:2 1:1\n-1 2:1e-3\n", "svmlight"),
        ("1:1 3:0.5\n2:1\n", "svmlight"),
        ("books pos 12.txt a b\ndvd neg 3.txt c d\n", "sentiment"),
        ("pos\tgood film\nneg\tbad film\n", "tsv"),
        ("a,b,label\n1,2,x\n3.5,-4,y\n", "csv"),
        ("just words, and more words\nsecond line\n", "lines"),
        ("1,2,3\n4,5,6\n", "lines"),
    ],
)
def test_detect_from_content(tmp_path, content, expected):
    assert detect_format("-", content.splitlines()) == expected
    path = _write(tmp_path, "data", content)
    assert detect_format(path) == expected
    assert read_data(path).format == expected


def test_detect_tolerates_one_bad_line_in_five(tmp_path):
    lines = ["1 1:1", "-1 2:1", "oops", "1 3:1", "-1 1:1"]
    assert detect_format("-", lines) == "svmlight"
    path = _write(tmp_path, "data", "\n".join(lines) + "\n")
    assert _error(path) == f'{path}:3: label "oops" is not a number'


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a.svm", "svmlight"),
        ("a.SVMLIGHT", "svmlight"),
        ("a.libsvm.gz", "svmlight"),
        ("a.csv", "csv"),
        ("a.tsv", "tsv"),
        ("a.ft", "fasttext"),
        ("a.fasttext", "fasttext"),
        ("train-images-idx3-ubyte", "idx"),
        ("t10k-images-idx3-ubyte.gz", "idx"),
    ],
)
def test_detect_from_extension(name, expected):
    # The name wins; content is not read (the file does not even exist).
    assert detect_format(name) == expected
    assert detect_format(name, ["__label__x y"]) == expected


def test_detect_idx_by_content_and_stdin_needs_sample(tmp_path):
    path = _write(tmp_path, "images.bin", _idx_bytes(np.zeros((2, 3, 3), dtype=np.uint8)))
    assert detect_format(path) == "idx"
    assert read_data(path).X.shape == (2, 9)
    with pytest.raises(ValueError, match="sample_lines"):
        detect_format("-")


def test_labeled_data_fields():
    data = LabeledData(X=None, texts=["a"], y=None, format="lines", source="x")
    assert data.skipped == [] and data.zero_based is None and data.n_samples == 1
    assert data.sample_weight is None


# --------------------------------------------------------------------------- real data


def test_real_sentiment():
    path = _require("sentiment/all_sentiment_shuffled.first5000.txt")
    assert detect_format(str(path)) == "sentiment"
    data = read_data(str(path), labels=True)
    assert data.format == "sentiment" and len(data.texts) == len(data.y) == 5000
    assert set(data.y.tolist()) == {"pos", "neg"}
    assert int(np.sum(data.y == "pos")) == 2527
    assert data.texts[0].startswith("i bought this album")


def test_real_a9a():
    path = _require("a9a/a9a")
    assert detect_format(str(path)) == "svmlight"
    data = read_data(str(path), labels=True, n_features=123)
    assert data.format == "svmlight" and data.X.shape == (32561, 123)
    assert data.X.indices.dtype == np.int32 and data.zero_based is False
    assert set(np.unique(data.y).tolist()) == {-1, 1} and data.skipped == []


def test_real_mnist_train_images():
    path = _require("mnist/train-images-idx3-ubyte.gz")
    _require("mnist/train-labels-idx1-ubyte.gz")
    data = read_data(str(path), labels=True)
    assert data.format == "idx" and data.X.shape == (60000, 784)
    assert data.X.min() == 0.0 and data.X.max() == 1.0
    assert data.y.shape == (60000,) and data.y[:5].tolist() == [5, 0, 4, 1, 9]


# --------------------------------------------------------------------------- label-only svmlight


def w8a_like(n: int = 300, seed: int = 0) -> tuple[str, np.ndarray, list[list[int]]]:
    """A file shaped like LIBSVM's w8a: ~3 % positives, ~70 % rows without a feature
    (``-1 `` alone), 1-based indices up to 300.  Returns (content, labels, indices)."""
    rng = np.random.default_rng(seed)
    labels = np.where(rng.random(n) < 0.03, 1, -1)
    labels[1] = 1  # at least one positive
    rows, lines = [], []
    for i in range(n):
        if rng.random() < 0.7 and i != 3:  # row 3 always has features
            rows.append([])
            lines.append(f"{labels[i]} ")
        else:
            idx = sorted(rng.choice(np.arange(1, 301), size=rng.integers(1, 12), replace=False))
            idx[-1] = 300 if i == 3 else idx[-1]
            rows.append([int(j) for j in idx])
            lines.append(f"{labels[i]} " + " ".join(f"{j}:1" for j in idx) + " ")
    return "\n".join(lines) + "\n", labels, rows


@pytest.mark.parametrize("name", ["w8a", "w8a.train", "w8a.t", "w8a.test", "w8a.txt"])
def test_label_only_svmlight_rows_are_detected_and_read(tmp_path, name):
    content, labels, rows = w8a_like()
    assert sum(not r for r in rows) > 150  # most rows are label-only
    path = _write(tmp_path, name, content)
    assert detect_format(path) == "svmlight"
    data = read_data(path, labels=True)
    assert data.format == "svmlight" and data.zero_based is False
    assert data.X.shape == (300, 300) and data.y.tolist() == labels.tolist()
    for i, row in enumerate(rows):
        assert (data.X[i].indices + 1).tolist() == row
    # The same rows through the explicit format and the gzipped file.
    again = read_data(_write(tmp_path, name + ".gz", gzip.compress(content.encode())))
    assert (again.X != data.X).nnz == 0


def test_label_only_svmlight_bad_line_is_named(tmp_path):
    content, _, _ = w8a_like()
    lines = content.splitlines()
    lines[149] = "-1 7:x"
    path = _write(tmp_path, "w8a.train", "\n".join(lines) + "\n")
    assert _error(path) == f'{path}:150: feature value "x" is not a number'
    lines[149] = "oops"
    path = _write(tmp_path, "w8a.t", "\n".join(lines) + "\n")
    assert _error(path, labels=True) == f'{path}:150: label "oops" is not a number'
    assert read_data(path, skip_bad_lines=True).skipped == [(150, 'label "oops" is not a number')]


def test_bare_numbers_are_lines_unless_the_format_is_given(tmp_path):
    path = _write(tmp_path, "labels.txt", "1\n-1\n-1\n")
    assert detect_format(path) == "lines"  # ambiguous: documented as unlabeled text
    assert _error(path, labels=True).startswith(f"{path}: cannot tell the format")
    data = read_data(path, format="svmlight")
    # No feature anywhere: one (empty) column, as a streamed file gets.
    assert data.X.shape == (3, 1) and data.X.nnz == 0 and data.y.tolist() == [1, -1, -1]


def test_text_and_csv_are_not_taken_for_label_only_svmlight():
    assert detect_format("-", ["1", "2", "just text 3:4"]) == "lines"
    assert detect_format("-", ["a,label", "1,2", "3,4"]) == "csv"
    assert detect_format("-", ["1\tgood film", "-1\tbad 2:1"]) == "tsv"


# --------------------------------------------------------------------------- BOM


@pytest.mark.parametrize(
    ("name", "content", "fmt"),
    [
        ("d.svm", "1 1:1\n-1 2:1\n", "svmlight"),
        ("d", "1 1:1\n-1 2:1\n", "svmlight"),
        ("d", "__label__a x\n", "fasttext"),
        ("d.csv", "a,label\n1,x\n", "csv"),
        ("d", "1 |f a\n", "vw"),
        ("d", "a:1 #label#:x\n", "counts"),
    ],
)
def test_utf8_bom_is_dropped_for_every_format(tmp_path, name, content, fmt):
    path = _write(tmp_path, name, b"\xef\xbb\xbf" + content.encode())
    assert detect_format(path) == fmt
    data = read_data(path)
    plain = read_data(_write(tmp_path, "plain" + name, content))
    assert data.format == fmt and data.y.tolist() == plain.y.tolist()
    gz = _write(tmp_path, name + ".gz", gzip.compress(b"\xef\xbb\xbf" + content.encode()))
    assert read_data(gz, format=fmt).y.tolist() == plain.y.tolist()
    stdin = read_data("-", fmt, stdin=io.StringIO("\ufeff" + content))
    assert stdin.y.tolist() == plain.y.tolist()


# --------------------------------------------------------------------------- never crash


@pytest.mark.parametrize(
    "content",
    [b"\r", b"a\rb\n", b"x,y\r1,2\n", b"\x00\x01,\x02\n\r\n", bytes(range(256)) * 8],
    ids=["bare-cr", "cr-inside", "csv-cr", "nul", "all-bytes"],
)
@pytest.mark.parametrize("labels", [None, True])
def test_odd_bytes_give_a_format_error_not_a_crash(tmp_path, content, labels):
    path = _write(tmp_path, "data", content)
    assert detect_format(path) in FORMATS
    try:
        data = read_data(path, labels=labels)
    except DataFormatError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(path)
    else:
        assert data.n_samples > 0
    assert detect_format("-", content.decode("latin-1").split("\n")) in FORMATS


# --------------------------------------------------------------------------- sizes


def test_svmlight_index_far_beyond_the_data_is_refused(tmp_path):
    path = _write(tmp_path, "d.svm", "1 1:1\n1 2147483647:1\n-1 3:1\n")
    assert _error(path) == (
        f"{path}:2: feature index 2147483647 would make a 2147483648-column model "
        "(16 GiB of weights); at most 2**26 columns are accepted; hash the features or "
        "pass n_features"
    )
    assert "a 2147483647-column model" in _error(path, zero_based=False)
    data = read_data(path, skip_bad_lines=True)
    assert data.X.shape == (2, 3) and data.skipped[0][0] == 2
    # Given explicitly, the width is the caller's decision (a sparse matrix costs nothing).
    assert read_data(path, n_features=2**31).X.shape == (3, 2**31)
    edge = _write(tmp_path, "e.svm", f"1 {MAX_SVMLIGHT_WIDTH}:1\n")
    assert read_data(edge).X.shape == (1, MAX_SVMLIGHT_WIDTH)
    over = _write(tmp_path, "o.svm", f"1 {MAX_SVMLIGHT_WIDTH + 1}:1\n")
    assert "at most 2**26 columns" in _error(over)


def test_idx_header_whose_size_overflows_int64_is_refused(tmp_path):
    # 65536**4 bytes: the product wraps to 0 in int64 and matched the empty payload.
    header = bytes([0, 0, 0x08, 4]) + struct.pack(">4I", *([65536] * 4))
    path = _write(tmp_path, "big-images-idx3-ubyte", header)
    message = _error(path)
    assert message.startswith(f"{path}: IDX size mismatch") and "18446744073709551616" in message
    with pytest.raises(ValueError, match="size mismatch"):
        formats.read_idx(path)
    many = _write(tmp_path, "many-images-idx3-ubyte", bytes([0, 0, 0x08, 200]) + b"\0" * 800)
    assert "200 dimensions" in _error(many)


# --------------------------------------------------------------------------- vw


def test_vw(tmp_path):
    content = (
        "1 |a x y:2 | z\n"
        "\n"
        "-1 2.5 'tag1 |a x:0.5 |b:3 w:2\n"
        "1 1 zebra|MetricFeatures:3.28 height:1.5 length:2.0 |Says black\n"
        "-1 |\n"
    )
    data = read_data(_write(tmp_path, "d.vw", content))
    assert data.format == "vw" and data.X is None
    assert data.texts == [
        "a^x:1 a^y:2 z:1",
        "a^x:0.5 b^w:6",
        "MetricFeatures^height:4.92 MetricFeatures^length:6.56 Says^black:1",
        "",
    ]
    assert data.y.dtype == np.int64 and data.y.tolist() == [1, -1, 1, -1]
    assert data.sample_weight.tolist() == [1.0, 2.5, 1.0, 1.0]
    no_weights = read_data(_write(tmp_path, "n.vw", "1 |a x\n2 |a y\n3 |b z\n"))
    assert no_weights.sample_weight is None and no_weights.y.tolist() == [1, 2, 3]
    floats = read_data(_write(tmp_path, "f.vw", "0.5 |a x\n1 |a y\n"))
    assert floats.y.dtype == np.float64


def test_vw_detected_by_content(tmp_path):
    for lines in (["1 |f a b", "-1 |f c"], ["|f a", "|f b"], ["1 1.0 zebra|f a", "-1 'z |f b"]):
        assert detect_format("-", lines) == "vw"
        path = _write(tmp_path, "data.train", "\n".join(lines) + "\n")
        assert detect_format(path) == "vw" and read_data(path).format == "vw"
    assert detect_format("-", ["some | text", "more | text"]) == "lines"
    assert detect_format("-", ["a|b", "c|d"]) == "lines"


def test_vw_labels_and_skipping(tmp_path):
    path = _write(tmp_path, "d.vw", "|f a\n|f b\n")
    unlabeled = read_data(path)
    assert unlabeled.y is None and unlabeled.texts == ["f^a:1", "f^b:1"]
    assert _error(path, labels=True) == f"{path}:1: no label before the |"
    mixed = _write(tmp_path, "m.vw", "|f a\n1 |f b\n")
    assert _error(mixed) == f"{mixed}:1: no label before the |"
    data = read_data(mixed, labels=False)
    assert data.y is None and data.texts == ["f^a:1", "f^b:1"] and data.format == "vw"
    data = read_data(mixed, skip_bad_lines=True)
    assert data.skipped == [(1, "no label before the |")] and data.texts == ["f^b:1"]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("1 a b", "no | before the features (expected 'label [importance] [tag]|features')"),
        ("1 -2 |f a", 'importance "-2" is negative'),
        ("x y |f a", "expected 'label [importance] [tag]' before the first |, found \"x y\""),
        ("1:0.5 2:1 |f a", 'label "1:0.5" is not a number (cost-sensitive labels are not read)'),
        ("1 |f a:b", 'value of feature "a" "b" is not a number'),
        ("1 |f a:1:2", 'value of feature "a" "1:2" is not a number'),
        ("1 |f a:nan", 'value of feature "a" "nan" is not a finite number'),
        ("1 |f :2", 'empty feature name in ":2"'),
        ("1 |f:x a", 'namespace "f" scale "x" is not a number'),
        ("1 |:2 a", 'empty namespace name in "|:2"'),
        ("inf |f a", 'label "inf" is not a finite number'),
    ],
)
def test_vw_bad_line(tmp_path, line, reason):
    path = _write(tmp_path, "bad.vw", f"1 |f a\n\n{line}\n-1 |f b\n")
    assert _error(path) == f"{path}:3: {reason}"
    data = read_data(path, skip_bad_lines=True)
    assert data.skipped == [(3, reason)] and data.n_samples == 2


# --------------------------------------------------------------------------- counts


def test_counts(tmp_path):
    content = (
        "great:2 not_good:1 was_very:1 #label#:positive\n"
        "\n"
        "bad:3 a:b:2 #label#:negative\n"
        "#label#:neutral\n"
    )
    path = _write(tmp_path, "positive.review", content)
    assert detect_format(path) == "counts"
    data = read_data(path)
    assert data.format == "counts" and data.X is None and data.sample_weight is None
    assert data.texts == ["great:2 not_good:1 was_very:1", "bad:3 a:b:2", ""]
    assert data.y.tolist() == ["positive", "negative", "neutral"]
    unlabeled = read_data(_write(tmp_path, "u.review", "a:1 b:2\n"), format="counts")
    assert unlabeled.y is None and unlabeled.texts == ["a:1 b:2"]
    assert read_data(path, labels=False).texts == data.texts


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("good:2 fine", 'expected feature:count, found "fine"'),
        ("good:x #label#:positive", 'count of "good" "x" is not a number'),
        ("good:1 #label#:", 'empty label "#label#:"'),
        ("#label#:positive good:1", '"#label#:..." must be the last token of the line'),
        ("good:2", "no #label#: label at the end of the line"),
        (":2 #label#:positive", 'expected feature:count, found ":2"'),
        ("good:-3 #label#:positive", 'count of "good" is negative: "-3"'),
    ],
)
def test_counts_bad_line(tmp_path, line, reason):
    path = _write(tmp_path, "bad.review", f"a:1 #label#:positive\n{line}\nb:1 #label#:negative\n")
    assert _error(path, format="counts") == f"{path}:2: {reason}"


def test_weighted_documents_train_through_the_pairs_tokenizer(tmp_path):
    from perceptrons import Perceptron, TextFeaturizer
    from perceptrons.io.prepare import training_features

    data = read_data(_write(tmp_path, "d.vw", "1 2 |a x:2 y\n-1 |a z\n"))
    with pytest.raises(ValueError, match="tokenizer='pairs'"):
        training_features(data, featurizer=TextFeaturizer(weighting="tf"))
    featurizer = TextFeaturizer(
        weighting="tf", vocabulary="fit", tokenizer="pairs", lowercase=False
    )
    X, _ = training_features(data, featurizer=featurizer)
    assert featurizer.feature_names() == ["a^x", "a^y", "a^z"]
    np.testing.assert_array_equal(X.toarray(), [[2, 1, 0], [0, 0, 1]])
    model = Perceptron().fit(X, data.y, sample_weight=data.sample_weight)
    assert model.predict(X).tolist() == [1, -1]


def test_a_first_line_longer_than_the_detection_sample_is_read_whole(tmp_path):
    # A long review of Blitzer et al.'s corpus: 100 KB before its "#label#:" at the end.
    long = " ".join(f"word_{i}:1" for i in range(10_000)) + " #label#:positive"
    assert len(long) > 2**16
    content = f"{long}\ngood:1 #label#:positive\nbad:2 #label#:negative\n"
    path = _write(tmp_path, "books.review", content)
    assert detect_format(path) == "counts"
    assert detect_format(_write(tmp_path, "b.gz", gzip.compress(content.encode()))) == "counts"
    data = read_data(path)
    assert data.format == "counts" and data.n_samples == 3
    assert read_data("-", stdin=io.StringIO(content)).format == "counts"


# --------------------------------------------------------------------------- numbers

# Tokens Python's float() takes but ASCII decimal (C's strtod) does not: underscores,
# digits of other scripts (Arabic-Indic, full-width), surrounding Unicode spaces. (vw
# and counts lines are split at Unicode spaces, as str.split() does: there "1\xa0" is
# the token "1" then a space; svmlight is split at ASCII spaces only.)
_UNICODE_SPACED = ["1\u00a0", "\u20031"]
_NOT_DECIMAL = ["1_000", "1_0.5", "\u0661", "\uff11", *_UNICODE_SPACED]


@pytest.mark.parametrize("token", _NOT_DECIMAL)
def test_python_float_takes_the_tokens_the_formats_refuse(token):
    from perceptrons._decimal import decimal_number

    float(token)  # what the readers used to accept
    with pytest.raises(ValueError, match="not an ASCII decimal number"):
        decimal_number(token)
    with pytest.raises(ValueError, match="not an ASCII decimal number"):
        decimal_number(token.encode())


@pytest.mark.parametrize("token", ["1", "-2.5", "+.5", "1.", "1e3", "2E-2", "-0", "1e999", "inf"])
def test_ascii_decimal_numbers_are_python_floats(token):
    from perceptrons._decimal import decimal_number

    assert decimal_number(token) == float(token)
    assert decimal_number(token.encode()) == decimal_number(token)


def _numbers_file(tmp_path, fmt: str, where: str, token: str) -> str:
    """A three-line file of ``fmt`` whose line 2 has ``token`` as its label or a value."""
    lines = {
        ("svmlight", "label"): f"{token} 1:1",
        ("svmlight", "value"): f"1 1:{token}",
        ("svmlight", "index"): f"1 {token}:1",
        ("vw", "label"): f"{token} |f a",
        ("vw", "value"): f"1 |f a:{token}",
        ("vw", "importance"): f"1 {token} |f a",
        ("vw", "scale"): f"1 |f:{token} a",
        ("counts", "value"): f"a:{token} #label#:p",
    }
    first, last = {
        "svmlight": ("1 1:1", "-1 2:1"),
        "vw": ("1 |f a", "-1 |f b"),
        "counts": ("a:1 #label#:p", "b:1 #label#:n"),
    }[fmt]
    content = f"{first}\n{lines[fmt, where]}\n{last}\n"
    return _write(tmp_path, f"n.{fmt}", content.encode())


_NUMBER_SLOTS = [
    ("svmlight", "label"),
    ("svmlight", "value"),
    ("svmlight", "index"),
    ("vw", "label"),
    ("vw", "value"),
    ("vw", "importance"),
    ("vw", "scale"),
    ("counts", "value"),
]


@pytest.mark.parametrize("token", _NOT_DECIMAL)
@pytest.mark.parametrize(("fmt", "where"), _NUMBER_SLOTS)
def test_numbers_are_ascii_decimal_in_memory_and_streamed(tmp_path, fmt, where, token):
    """A number outside ASCII decimal is a bad line, named file:line, read whole or
    streamed (through the compiled readers and their Python fallbacks alike)."""
    from perceptrons.io.stream import iter_chunks

    if fmt != "svmlight" and token in _UNICODE_SPACED:
        token = token.replace("\u00a0", "").replace("\u2003", "") + "_"

    path = _numbers_file(tmp_path, fmt, where, token)
    message = _error(path, format=fmt)
    assert message.startswith(f"{path}:2: ")
    assert read_data(path, format=fmt, skip_bad_lines=True).n_samples == 2
    for chunk_size in (1, 10):
        with pytest.raises(DataFormatError) as streamed:
            list(iter_chunks(path, fmt, chunk_size=chunk_size))
        assert str(streamed.value) == message


@pytest.mark.parametrize(("fmt", "where"), _NUMBER_SLOTS)
def test_ascii_decimal_numbers_still_read(tmp_path, fmt, where):
    token = "3" if where == "index" else "2.5e0"
    data = read_data(_numbers_file(tmp_path, fmt, where, token), format=fmt)
    assert data.n_samples == 3


@pytest.mark.parametrize("fmt", ["vw", "counts"])
def test_the_hashing_stream_refuses_what_read_data_refuses(tmp_path, fmt):
    """The compiled hashing reader (``--stream`` of vw / counts with hashing) leaves a
    token it cannot read to the reference reader, which names the line."""
    from perceptrons import Perceptron, TextFeaturizer
    from perceptrons.io.stream import fit_stream

    for token in sorted(set(_NOT_DECIMAL) - set(_UNICODE_SPACED)):
        path = _numbers_file(tmp_path, fmt, "value", token)
        featurizer = TextFeaturizer(weighting="tf", tokenizer="pairs", n_features=64)
        with pytest.raises(DataFormatError, match=rf"^{re.escape(path)}:2: "):
            fit_stream(Perceptron(), path, format=fmt, featurizer=featurizer, chunk_size=2)


@pytest.mark.parametrize("token", ["1_000", "1_0.5", "\u0661", "\uff11", "1\u00a0"])
def test_csv_cells_are_ascii_decimal_too(tmp_path, token):
    """CSV cells follow the same rule: NumPy would read them as float() does."""
    path = _write(tmp_path, "d.csv", f"a,b,label\n1,2,x\n{token},3,y\n 4 ,5,x\n")
    assert _error(path).startswith(f'{path}:3: column "a" is not a number')
    data = read_data(path, skip_bad_lines=True)
    np.testing.assert_array_equal(data.X, [[1.0, 2.0], [4.0, 5.0]])


@settings(deadline=None, max_examples=200)
@given(text=st.text(alphabet="ab \n\r\t", max_size=60), piece=st.integers(1, 8))
def test_text_files_are_split_into_the_lines_of_str_split_a_piece_at_a_time(text, piece):
    """The pieces (a few characters here, a mebibyte in use) cut only at newlines."""
    from perceptrons.io.formats import _text

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(_text, "_PIECE", piece)
        assert list(_text._lines(text)) == text.split("\n")
