"""The compiled svmlight reader (``perceptrons._kernels.parse``) against the reference.

The reference is scikit-learn's ``load_svmlight_file`` with the Python line checks
(``formats._svmlight_reference._read_svmlight_sklearn``), the reader the package used
before: on any bytes both give the same matrices, labels, base and skipped lines, or the
same error.
Numbers parsed in the kernel are exactly Python's ``float()`` of the token.
"""

from __future__ import annotations

import gzip
import itertools
import math
import struct
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import njit
from numpy.testing import assert_array_equal
from sklearn.linear_model import SGDClassifier

from perceptrons import AveragedPerceptron, Perceptron
from perceptrons._kernels import parse
from perceptrons.io.formats import (
    DataFormatError,
    SvmlightBuffers,
    _svmlight,
    _svmlight_reference,
    parse_svmlight_block,
    read_data,
)
from perceptrons.io.stream import fit_stream, iter_chunks, scan


@njit(cache=False)
def _fast(buf):
    return parse.fast_float(buf, 0, len(buf))


@njit(cache=False)
def _index(buf, max_digits):
    return parse.parse_index(buf, 0, len(buf), max_digits)


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _check_token(token: str) -> bool:
    """The kernel's value, when it takes the token, is float(token) to the bit."""
    simple, value = _fast(np.frombuffer(token.encode(), dtype=np.uint8))
    if simple:
        assert _bits(value) == _bits(float(token)), token
    return simple


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    x=st.floats(allow_nan=False, allow_infinity=False),
    style=st.sampled_from(["r", "g", "e", "f"]),
    digits=st.integers(0, 20),
)
def test_fast_float_is_python_float_on_formatted_floats(x, style, digits):
    text = repr(x) if style == "r" else f"{x:.{digits}{style}}"
    _check_token(text)


@settings(max_examples=600, deadline=None, derandomize=True)
@given(st.from_regex(r"[+-]?[0-9]{0,19}(\.[0-9]{0,19})?([eE][+-]?[0-9]{1,3})?", fullmatch=True))
def test_fast_float_is_python_float_on_decimal_strings(token):
    try:
        float(token)
    except ValueError:
        assert not _check_token(token)  # not a number: left to float(), which refuses it
        return
    _check_token(token)


@pytest.mark.parametrize(
    ("token", "simple"),
    [
        ("1", True),
        ("-0", True),
        ("0.5", True),
        ("+1e3", True),
        ("1.", True),
        (".5", True),
        ("9007199254740991", True),  # 2**53 - 1
        ("9007199254740993", False),  # 2**53 + 1: more digits than a double holds
        ("1e23", False),
        ("0.30000000000000004", False),
        ("1_0", False),
        ("inf", False),
        ("nan", False),
        (".", False),
        ("1e", False),
        ("", False),
        ("0x1", False),
    ],
)
def test_fast_float_takes_only_the_simple_tokens(token, simple):
    assert _check_token(token) is simple


def test_fast_float_keeps_the_sign_of_zero():
    assert math.copysign(1.0, _fast(np.frombuffer(b"-0.0", dtype=np.uint8))[1]) == -1.0


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("0", 0),
        ("-0", 0),
        ("+5", 5),
        ("1_0", -1),  # Python's int() takes it; the format does not
        ("\u0661", -1),  # ARABIC-INDIC DIGIT ONE
        ("\uff11", -1),  # FULLWIDTH DIGIT ONE
        ("007", 7),
        ("2147483647", 2147483647),
        ("2147483648", -1),
        ("99999999999999999999999", -1),
        ("-1", -1),
        ("1__0", -1),
        ("_1", -1),
        ("1_", -1),
        ("", -1),
        ("+", -1),
        ("1.0", -1),
        ("0" * 5000 + "1", -1),  # beyond Python's 4300-digit int() limit
    ],
)
def test_parse_index_is_an_ascii_decimal_integer(token, expected):
    assert _index(np.frombuffer(token.encode(), dtype=np.uint8), 4300) == expected


# ------------------------------------------------------------------ against the reference

# Numbers outside ASCII decimal, which Python's float() / int() take: underscores,
# digits of other scripts (Arabic-Indic, full-width), superscripts, Unicode spaces.
NOT_DECIMAL = ["1_0", "1_000.5", "\u0661", "\u0661\u0660", "\uff11", "\u00b9"]
NOT_DECIMAL += ["1\u00a0", "\u20031", "1\x1c"]
LABELS = ["1", "-1", "+1", "0.5", "2", "1e3", "-0", "0.1000000000000000055511"]
BAD_LABELS = ["nan", "inf", "a", "1:2", "1e999", "", *NOT_DECIMAL]
INDICES = ["0", "1", "2", "3", "7", "12", "+3", "-0", "2147483647", "67108865"]
BAD_INDICES = ["-1", "a", "", "2147483648", "99999999999", "1.0", "1__0", *NOT_DECIMAL]
VALUES = ["1", "0.5", "-2.5e-3", "3.0000000000000004", "1.", ".5", "1e-320", "7e22", "1E+2"]
BAD_VALUES = ["1e400", "inf", "nan", "0x1", "", ".", "1:2", "\x00", *NOT_DECIMAL]
SPACES = [" ", "\t", "  ", " \r", "\x0b", "\x0c"]


@st.composite
def svmlight_text(draw) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["row", "row", "row", "blank", "comment", "bad"]))
        if kind == "blank":
            lines.append(draw(st.sampled_from(["", " ", "\t", "\r"])))
            continue
        if kind == "comment":
            lines.append("# " + draw(st.sampled_from(["note", "1 1:2", ""])))
            continue
        bad = kind == "bad"
        parts = []
        if draw(st.booleans()) or not bad:
            pool = LABELS + (BAD_LABELS if bad else [])
            if draw(st.integers(0, 5)) > 0:
                parts.append(draw(st.sampled_from(pool)))
        if draw(st.integers(0, 6)) == 0:
            parts.append(draw(st.sampled_from(["qid:3", "qid:x", "qid", "qidz:1"])))
        index = draw(st.integers(0, 3))
        for _ in range(draw(st.integers(0, 5))):
            index += draw(st.integers(0 if bad else 1, 4))
            index_s = str(index)
            value_s = draw(st.sampled_from(VALUES))
            if bad and draw(st.integers(0, 3)) == 0:
                index_s = draw(st.sampled_from(BAD_INDICES + INDICES))
            if bad and draw(st.integers(0, 3)) == 0:
                value_s = draw(st.sampled_from(BAD_VALUES))
            if draw(st.integers(0, 10)) == 0:
                parts.append(index_s)  # no colon
            else:
                parts.append(f"{index_s}:{value_s}")
        line = "".join(part + draw(st.sampled_from(SPACES)) for part in parts)
        if draw(st.integers(0, 4)) == 0:
            line += "# comment 1:2"
        lines.append(line)
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    end = draw(st.sampled_from(["", newline]))
    return (newline.join(lines) + end).encode()


def _outcome(reader, raw: bytes, **options):
    try:
        data = reader(raw, "f.svm", **options)
    except DataFormatError as error:
        return ("error", str(error))
    X = data.X
    return (
        X.shape,
        X.data.tobytes(),
        X.indices.dtype.str,
        X.indices.tolist(),
        X.indptr.dtype.str,
        X.indptr.tolist(),
        None if data.y is None else (data.y.dtype.str, data.y.tobytes()),
        data.zero_based,
        data.skipped,
    )


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    raw=svmlight_text(),
    skip=st.booleans(),
    labels=st.sampled_from([None, True, False]),
    zero_based=st.sampled_from(["auto", True, False]),
    n_features=st.sampled_from([None, 5, 20]),
)
def test_compiled_reader_equals_the_reference(raw, skip, labels, zero_based, n_features):
    options = {"skip": skip, "labels": labels, "n_features": n_features, "zero_based": zero_based}
    expected = _outcome(_svmlight_reference._read_svmlight_sklearn, raw, **options)
    assert _outcome(_svmlight._read_svmlight, raw, **options) == expected


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    values=st.lists(
        st.from_regex(r"[0-9]{0,18}(\.[0-9]{0,18})?", fullmatch=True)
        | st.sampled_from(["0.83", "0.", ".5", "123456789012345.", "1.23456789012345", "0.0"]),
        min_size=1,
        max_size=6,
    ),
    after=st.sampled_from(["", " ", "\t", "#c", "\r"]),
)
def test_inline_decimal_values_are_python_floats(values, after):
    # The kernel's inline path for digits with one '.', up to 15 digits, and the
    # general path past it: the same bits as float(), or the same error.
    raw = (
        "1 " + " ".join(f"{i + 1}:{value}" for i, value in enumerate(values)) + after + "\n"
    ).encode()
    options = {"skip": False, "labels": True, "n_features": None, "zero_based": "auto"}
    expected = _outcome(_svmlight_reference._read_svmlight_sklearn, raw, **options)
    assert _outcome(_svmlight._read_svmlight, raw, **options) == expected


# ------------------------------------------------------------------ errors by file:line


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("1:2 3:4", 'no label before "1:2"'),
        ("x 1:2", 'label "x" is not a number'),
        ("nan 1:2", 'label "nan" is not a finite number'),
        ("1 qid 1:2", 'expected qid:N, found "qid"'),
        ("1 1:2 3", 'expected index:value, found "3"'),
        ("1 a:2", 'feature index "a" is not an integer'),
        ("1 -3:2", "feature index -3 is negative"),
        ("1 2147483648:2", "feature index 2147483648 is too large"),
        ("1 3:1 2:1", "feature indices must increase (2 after 3)"),
        ("1 3:1 3:1", "feature indices must increase (3 after 3)"),
        ("1 1:x", 'feature value "x" is not a number'),
        ("1 1:1e999", 'feature value "1e999" is not a finite number'),
        ("1 1:-inf", 'feature value "-inf" is not a finite number'),
        ("1 70000000:1", "feature index 70000000 would make a 70000001-column model"),
    ],
)
def test_each_bad_line_is_named_by_file_and_line(tmp_path, line, reason):
    path = tmp_path / "bad.svm"
    path.write_bytes(b"1 1:1\n\n# note\n" + line.encode() + b"\n-1 2:1\n")
    with pytest.raises(DataFormatError) as caught:
        read_data(path, "svmlight")
    assert str(caught.value).startswith(f"{path}:4: {reason}")
    kept = read_data(path, "svmlight", skip_bad_lines=True)
    assert kept.skipped[0][0] == 4 and kept.skipped[0][1].startswith(reason)
    assert kept.y.tolist() == [1, -1]


@pytest.mark.parametrize(
    "raw",
    [
        b"1 1:" + b"9" * 400,  # a number far past a double
        b"1 1:" + b"1" * 30 + b"e" + b"9" * 30,  # an exponent past any int
        b"1 " + b"9" * 5000 + b":1",  # an index past Python's int() digit limit
        b"1 1:2 3:",  # truncated line, no newline
        b"1 1:2 3",
        b"1 1",
        b"1 1:\x00",
        b"\x00 1:1",
        b"1 " + b":" * 100,
        b"1 qid:" + b"9" * 100 + b" 1:1",
        b"1 1:1\r\n\r\n-1 1:1e-400\r\n",  # underflow to 0 is a number
        b"\xef\xbb\xbf1 1:1\n",  # byte order mark
        b"1 1:1 2:1" * 2000 + b"\n",
    ],
)
def test_crafted_lines_give_a_result_or_a_line_error(raw):
    for skip in (False, True):
        reference = _outcome(
            _svmlight_reference._read_svmlight_sklearn,
            raw.removeprefix(b"\xef\xbb\xbf"),
            skip=skip,
            labels=None,
            n_features=None,
            zero_based="auto",
        )
        try:
            data = read_data(
                "-", "svmlight", stdin=__import__("io").BytesIO(raw), skip_bad_lines=skip
            )
        except DataFormatError as error:
            assert reference == ("error", str(error).replace("<stdin>", "f.svm"))
            continue
        assert reference[0] == data.X.shape


# ------------------------------------------------------------------ buffers


def test_buffers_are_reused_from_block_to_block():
    block = b"".join(b"%d 1:1 %d:0.5\n" % (i % 2, i % 7 + 2) for i in range(50))
    buf = np.frombuffer(block, dtype=np.uint8)
    buffers = SvmlightBuffers(rows=4, nnz=4)
    arrays = None
    for _ in range(3):
        buffers.state[:] = 0
        buffers.indptr[0] = 0
        status = parse_svmlight_block(
            buffers,
            buf,
            len(buf),
            final=True,
            max_lines=100,
            label_required=True,
            stop_at_bad=True,
        )
        assert status == parse.DONE
        assert buffers.state[parse.ROWS] == 50 and buffers.state[parse.NNZ] == 100
        if arrays is None:
            arrays = [id(a) for a in buffers.out()]  # grown once, on the first block
        else:
            assert [id(a) for a in buffers.out()] == arrays


def test_a_block_stops_after_max_lines_and_waits_for_a_whole_line():
    buf = np.frombuffer(b"1 1:1\n\n-1 2:1\n1 3:", dtype=np.uint8)
    buffers = SvmlightBuffers()
    parse_svmlight_block(
        buffers,
        buf,
        len(buf),
        final=False,
        max_lines=2,
        label_required=True,
        stop_at_bad=True,
    )
    assert buffers.state[parse.LINE] == 2 and buffers.state[parse.ROWS] == 1
    parse_svmlight_block(
        buffers,
        buf,
        len(buf),
        final=False,
        max_lines=10,
        label_required=True,
        stop_at_bad=True,
    )
    # The last line has no newline and more bytes may come: not read yet.
    assert buffers.state[parse.LINE] == 3 and buffers.state[parse.POS] == 14


# ------------------------------------------------------------------ streaming


def _reference_chunks(raw: bytes, chunk_size: int, **options):
    """Chunks of lines each read by the reference reader, lines counted over the file
    (what iter_chunks gave before the compiled reader)."""
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    found = []
    for first in range(0, len(lines), chunk_size):
        block = b"\n".join(lines[first : first + chunk_size]) + b"\n"
        if not any(line.split(b"#", 1)[0].strip() for line in block.split(b"\n")):
            # Blank or comment lines only: no chunk. (Before the compiled reader a chunk
            # of comments only was refused as "no data", a chunk of blank lines skipped.)
            continue
        try:
            data = _svmlight_reference._read_svmlight_sklearn(
                block, "f.svm", labels=True, **options
            )
        except DataFormatError as error:
            if options["skip"] and error.reason.startswith("no valid lines"):
                continue
            line = None if error.line is None else error.line + first
            return found, str(DataFormatError("f.svm", error.reason, line))
        skipped = [(line + first, reason) for line, reason in data.skipped]
        found.append((first + 1, data.X, data.y, skipped))
    return found, None


def _streamed_chunks(path, chunk_size: int, **options):
    found = []
    try:
        for chunk in iter_chunks(
            path,
            "svmlight",
            chunk_size=chunk_size,
            n_features=options["n_features"],
            zero_based=options["zero_based"],
            skip_bad_lines=options["skip"],
        ):
            data = chunk.data
            found.append((chunk.first_line, data.X, data.y, data.skipped))
    except DataFormatError as error:
        return found, str(error).replace(str(path), "f.svm")
    return found, None


def _same_chunks(got, expected):
    assert got[1] == expected[1]
    assert len(got[0]) == len(expected[0])
    for (line_a, X_a, y_a, s_a), (line_b, X_b, y_b, s_b) in zip(got[0], expected[0], strict=True):
        assert line_a == line_b and s_a == s_b
        assert X_a.shape == X_b.shape and X_a.dtype == X_b.dtype
        assert X_a.indices.dtype == X_b.indices.dtype and X_a.indptr.dtype == X_b.indptr.dtype
        assert X_a.data.tobytes() == X_b.data.tobytes()
        assert X_a.indices.tolist() == X_b.indices.tolist()
        assert X_a.indptr.tolist() == X_b.indptr.tolist()
        assert y_a.dtype == y_b.dtype and y_a.tobytes() == y_b.tobytes()


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    raw=svmlight_text(),
    chunk_size=st.sampled_from([1, 2, 3, 100]),
    skip=st.booleans(),
    zero_based=st.booleans(),
    bom=st.booleans(),
)
def test_streamed_chunks_equal_the_reference_chunks(
    tmp_path, raw, chunk_size, skip, zero_based, bom
):
    path = tmp_path / "f.svm"
    raw = (b"\xef\xbb\xbf" if bom else b"") + raw
    path.write_bytes(raw)
    options = {"skip": skip, "n_features": 30, "zero_based": zero_based}
    expected = _reference_chunks(raw, chunk_size, **options)
    _same_chunks(_streamed_chunks(path, chunk_size, **options), expected)


def _big_file(path, n=6000, seed=0, bad_line=None):
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        columns = np.sort(rng.choice(60, size=rng.integers(0, 9), replace=False)) + 1
        values = rng.choice(["1", "0.5", "2.25", "0.30000000000000004", "1e-3"], size=len(columns))
        cells = " ".join(f"{c}:{v}" for c, v in zip(columns, values, strict=True))
        lines.append(f"{rng.choice([-1, 1, 2])} {cells}" + (" # note" if i % 97 == 0 else ""))
        if i % 501 == 0:
            lines.append("")
    if bad_line is not None:
        lines[bad_line - 1] = "1 3:1 2:1"
    path.write_text("\r\n".join(lines) + "\r\n")
    return path


@pytest.mark.parametrize("cls", [Perceptron, AveragedPerceptron])
@pytest.mark.parametrize("chunk_size", [1, 7, 500, 100_000])
def test_streamed_fit_equals_partial_fit_on_the_reference_chunks(tmp_path, cls, chunk_size):
    """The reader thread, the ring of buffers and the compiled reader change nothing:
    the model is partial_fit on the reference reader's chunks, bit for bit."""
    path = _big_file(tmp_path / "big.svm", n={1: 300, 7: 1500}.get(chunk_size, 6000))
    streamed = cls(shuffle=False)
    fit_stream(streamed, path, chunk_size=chunk_size, epochs=2)
    found = scan(path)
    chunks, error = _reference_chunks(
        path.read_bytes(),
        chunk_size,
        skip=False,
        n_features=found.n_features,
        zero_based=found.zero_based,
    )
    assert error is None
    reference = cls(shuffle=False)
    for _ in range(2):
        for _, X, y, _ in chunks:
            reference.partial_fit(X, y, classes=found.classes)
    assert_array_equal(streamed.coef_, reference.coef_)
    assert_array_equal(streamed.intercept_, reference.intercept_)


def test_a_bad_line_read_by_the_reader_thread_is_raised_with_its_line(tmp_path):
    path = _big_file(tmp_path / "bad.svm", bad_line=4321)
    before = threading.active_count()
    with pytest.raises(DataFormatError, match=r"bad\.svm:4321: feature indices must increase"):
        fit_stream(
            Perceptron(), path, chunk_size=100, classes=[-1, 1, 2], n_features=60, zero_based=False
        )
    assert threading.active_count() == before  # the reader thread is gone


class _FailingKernel(Perceptron):
    """Our estimator, trained through its engine, whose compiled epoch fails."""

    def _epoch_kernel(self, state, multiclass, slack):
        raise RuntimeError("no more")


class _FailingPartialFit(SGDClassifier):
    """Another library's estimator, trained by its partial_fit, which fails."""

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        raise RuntimeError("no more")


@pytest.mark.parametrize("make", [_FailingKernel, _FailingPartialFit])
def test_the_reader_thread_stops_when_training_fails(tmp_path, make):
    path = _big_file(tmp_path / "big.svm")
    before = threading.active_count()
    with pytest.raises(RuntimeError, match="no more"):
        fit_stream(make(), path, chunk_size=50, classes=[-1, 1, 2])
    assert threading.active_count() == before


def test_chunks_share_a_ring_of_buffers_or_own_their_arrays(tmp_path):
    from perceptrons.io import _chunks

    path = _big_file(tmp_path / "big.svm", n=2000)
    options = {"labels": True, "n_features": 60, "zero_based": False, "skip_bad_lines": False}
    ring = list(_chunks._svmlight_chunks(str(path), 100, ring=3, **options))
    assert len(ring) == 21  # 2,000 rows and 4 blank lines
    assert np.shares_memory(ring[0].data.X.indices, ring[3].data.X.indices)
    assert not np.shares_memory(ring[0].data.X.indices, ring[1].data.X.indices)
    own = list(iter_chunks(path, chunk_size=100, n_features=60, zero_based=False))
    assert not any(
        np.shares_memory(a.data.X.data, b.data.X.data) for a, b in itertools.pairwise(own)
    )
    last = own[-1].data.X
    assert last.data.tobytes() == ring[-1].data.X.data.tobytes()


def test_a_gzipped_stream_reads_the_same_chunks(tmp_path):
    plain = _big_file(tmp_path / "big.svm", n=3000)
    packed = tmp_path / "big.svm.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    options = {"n_features": 60, "zero_based": False, "skip": False}
    _same_chunks(_streamed_chunks(packed, 250, **options), _streamed_chunks(plain, 250, **options))


def test_should_the_readers_disagree_the_reference_reads_the_block(monkeypatch):
    """A line the compiled reader refuses but the reference rule accepts (none is known:
    the hypothesis tests look for one) sends the block to the reference reader."""
    raw = b"1 1:1\n-1 2:0.5\n1 3:2\n"
    expected = _outcome(
        _svmlight_reference._read_svmlight_sklearn,
        raw,
        skip=False,
        labels=None,
        n_features=None,
        zero_based="auto",
    )

    def disagree(line, label_required):
        raise _svmlight_reference._ReadersDisagree

    monkeypatch.setattr(_svmlight, "_bad_line_reason", disagree)
    real = parse.parse_svmlight

    def refuse_line_two(**kwargs):  # the kernel, but line 2 is "bad"
        status = real(**kwargs)
        buffers_bad, state = kwargs["out"][6], kwargs["state"]
        buffers_bad[0] = 2
        state[parse.BAD] = 1
        return status

    monkeypatch.setattr(parse, "parse_svmlight", refuse_line_two)
    got = _outcome(
        _svmlight._read_svmlight, raw, skip=False, labels=None, n_features=None, zero_based="auto"
    )
    assert got == expected


def test_should_the_readers_disagree_a_streamed_chunk_is_read_by_the_reference(
    tmp_path, monkeypatch
):
    path = tmp_path / "f.svm"
    path.write_bytes(b"1 1:1\n-1 2:0.5\n1 3:2\n\n-1 1:1 3:1\n1 2:1\n-1 3:4\n")
    options = {"skip": False, "n_features": 3, "zero_based": False}
    expected = _streamed_chunks(path, 2, **options)

    def disagree(line, label_required):
        raise _svmlight_reference._ReadersDisagree

    real = parse.parse_svmlight

    def refuse_line_one(**kwargs):  # the kernel, but each block's line 1 is "bad"
        status = real(**kwargs)
        kwargs["out"][6][0] = 1
        kwargs["state"][parse.BAD] = 1
        return status

    monkeypatch.setattr(_svmlight, "_bad_line_reason", disagree)
    monkeypatch.setattr(parse, "parse_svmlight", refuse_line_one)
    _same_chunks(_streamed_chunks(path, 2, **options), expected)


@pytest.mark.parametrize(
    "raw", [b"", b"1", b"1\n", b"\xef\xbb", b"\xef\xbb\xbf", b"\xef\xbb\xbf1\n"]
)
def test_short_files_stream_whatever_the_buffer_held_before(tmp_path, monkeypatch, raw):
    """The reader's byte buffer is not cleared: bytes past those read (here a byte order
    mark, over and over) must not be taken for the file's."""
    real_empty = np.empty

    def stale_empty(shape, dtype=float, **kwargs):
        array = real_empty(shape, dtype, **kwargs)
        flat = array.reshape(-1).view(np.uint8)
        flat[:] = np.resize(np.frombuffer(b"\xef\xbb\xbf", dtype=np.uint8), flat.shape)
        return array

    path = tmp_path / "short.svm"
    path.write_bytes(raw)
    expected = _reference_chunks(raw, 10, skip=False, n_features=3, zero_based=False)
    monkeypatch.setattr(np, "empty", stale_empty)
    got = _streamed_chunks(path, 10, skip=False, n_features=3, zero_based=False)
    monkeypatch.undo()
    _same_chunks(got, expected)
