"""The compiled svmlight reader (``perceptrons._kernels.parse``) against the reference.

The reference is scikit-learn's ``load_svmlight_file`` with the Python line checks
(``formats._read_svmlight_sklearn``), the reader the package used before: on any bytes
both give the same matrices, labels, base and skipped lines, or the same error.
Numbers parsed in the kernel are exactly Python's ``float()`` of the token.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import njit

from perceptrons._kernels import parse
from perceptrons.io import formats
from perceptrons.io.formats import (
    DataFormatError,
    SvmlightBuffers,
    parse_svmlight_block,
    read_data,
)


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
        ("1_0", 10),
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
def test_parse_index_is_python_int(token, expected):
    assert _index(np.frombuffer(token.encode(), dtype=np.uint8), 4300) == expected


# ------------------------------------------------------------------ against the reference

LABELS = ["1", "-1", "+1", "0.5", "2", "1e3", "-0", "1_0", "0.1000000000000000055511"]
BAD_LABELS = ["nan", "inf", "a", "1:2", "1e999", ""]
INDICES = ["0", "1", "2", "3", "7", "12", "+3", "-0", "1_0", "2147483647", "67108865"]
BAD_INDICES = ["-1", "a", "", "2147483648", "99999999999", "1.0", "1__0"]
VALUES = ["1", "0.5", "-2.5e-3", "3.0000000000000004", "1_0", "1.", ".5", "1e-320", "7e22"]
BAD_VALUES = ["1e400", "inf", "nan", "0x1", "", ".", "1:2", "\x00"]
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
    expected = _outcome(formats._read_svmlight_sklearn, raw, **options)
    assert _outcome(formats._read_svmlight, raw, **options) == expected


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
            formats._read_svmlight_sklearn,
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
