"""The readers never crash: random bytes and mutated lines of every format give a result
or a one-line :class:`DataFormatError` (or an ``OSError``), nothing else; gzip bombs are
refused in one line (a ``MemoryBudgetError``, the child's memory limit being 8 MiB) or
read in bounded memory (the child's address space is 2 GiB, what a bomb inflates to).

The fuzz loops run with Hypothesis in a child process (this file run as a script), so a
segmentation fault in a compiled reader or a hang fails the test instead of killing the
test run.  They are deterministic (``derandomize=True``) and bounded to a few seconds.
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import tempfile

import pytest

# A valid line (or header + line) of each format; the fuzzer mutates them.
VALID = {
    "svmlight": ["1 1:0.5 3:2", "-1 2:1 # comment", "+1 qid:3 7:1e-3", "-1 ", "0.5 4:1"],
    "fasttext": ["__label__pos a fine film", "__label__neg __label__x dull plot"],
    "tsv": ["pos\tgood film", "neg\tbad\tfilm"],
    "sentiment": ["books pos 12.txt a good read", "dvd neg 3.txt dull"],
    "csv": ["a,b,label", "1,2.5,x", '3,"4",y', "5,6,"],
    "vw": ["1 |a x y:2 | z", "-1 2.5 'tag |b:3 w:2", "1 1 zebra|M h:1.5", "|f a"],
    "counts": ["great:2 not_good:1 #label#:positive", "bad:3 a:b:2 #label#:negative"],
    "lines": ["just some text", "another line, with a comma"],
}
SPECIAL = [
    ":", "|", "#", "\r", "\x00", "\t", '"', ",", " ", "\n", "'", "__label__", "#label#:",
    "qid:", "nan", "inf", "-", "e", "1e999", "99999999999", "2147483647", "4294967296",
    "-0", "0:0", "\\", "1", ".", "^", "_", "1_0", "\u0661", "\uff11", "\u00b9", "\u00a0",
]  # fmt: skip
RARE = ["\xff", "\ufeff", "\u2028", "\udcff", "\x85", "\x0b"]  # odd code points
NAMES = ["data", "data.svm", "d.vw", "d.csv", "d.tsv", "d.ft", "d.train", "d.gz"]


def _run(kind: str) -> None:
    """The fuzz loop ``kind`` (``read`` or ``stream``): raises on a crash."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from perceptrons._memory import MemoryBudgetError
    from perceptrons.io.formats import FORMATS, DataFormatError, LabeledData, read_data
    from perceptrons.io.stream import STREAMABLE, iter_chunks, scan

    directory = tempfile.mkdtemp(prefix="fuzz-readers-")

    def mutate(line: str, draw) -> str:
        for _ in range(draw(st.integers(0, 3))):
            where = draw(st.integers(0, len(line)))
            what = draw(st.sampled_from(["insert", "delete", "replace", "repeat"]))
            piece = draw(
                st.sampled_from(SPECIAL) | st.sampled_from(SPECIAL) | st.sampled_from(RARE)
            )
            if what == "insert":
                line = line[:where] + piece + line[where:]
            elif what == "delete":
                line = line[:where] + line[where + 1 :]
            elif what == "replace":
                line = line[:where] + piece + line[where + 1 :]
            else:
                line = line[:where] + line[where:] * draw(st.integers(1, 3))
        return line

    @st.composite
    def near_valid(draw) -> bytes:
        fmt = draw(st.sampled_from(sorted(VALID)))
        lines = [
            mutate(line, draw) if draw(st.integers(0, 3)) == 0 else line
            for line in draw(st.lists(st.sampled_from(VALID[fmt]), min_size=1, max_size=8))
        ]
        if fmt == "csv":
            lines.insert(0, VALID["csv"][0])
        text = draw(st.sampled_from(["\n", "\r\n"])).join(lines) + draw(st.sampled_from(["", "\n"]))
        raw = text.encode("utf-8", "surrogatepass")
        return (b"\xef\xbb\xbf" + raw) if draw(st.booleans()) else raw

    @st.composite
    def idx(draw) -> bytes:
        ndim = draw(st.integers(0, 6))
        sizes = draw(st.lists(st.integers(0, 2**32 - 1), min_size=ndim, max_size=ndim))
        code = draw(st.sampled_from([0x08, 0x09, 0x0B, 0x0D, 0x42]))
        header = bytes([0, 0, code, ndim]) + b"".join(s.to_bytes(4, "big") for s in sizes)
        return header + draw(st.binary(max_size=64))

    # Bytes, and "soup": the characters that mean something to some format, mixed.
    soup = st.lists(st.sampled_from(SPECIAL + RARE) | st.text(max_size=4), max_size=40).map(
        lambda parts: "".join(parts).encode("utf-8", "surrogatepass")
    )

    @st.composite
    def bomb(draw, newlines: bool = True) -> bytes:
        """Gzip data of about 2 MB that inflates to 2 GiB, past the child's address space:
        one member of 1 MiB of a filler (zeros, a number, a valid line...) repeated,
        after a head."""
        fillers = [b"\0", b"1", b"a:1 ", b"|", b"1 1:1"]
        if newlines:
            fillers += [b"1 1:1\n", b"\n", b"w N\n", *(v.encode() + b"\n" for v in VALID["vw"])]
        filler = draw(st.sampled_from(fillers))
        head = draw(near_valid()) if draw(st.booleans()) else b""
        member = gzip.compress(filler * ((1 << 20) // len(filler)), compresslevel=9)
        return gzip.compress(head) + member * 2048

    # A decompression bomb is refused in one line (MemoryBudgetError) or read in bounded
    # memory; streamed, only bombs of one long line (a bomb of short lines streams fine,
    # only slowly at a chunk size of 1 to 4).
    contents = st.one_of(st.binary(max_size=2048), soup, near_valid(), near_valid(), idx(), bomb())
    stream_contents = st.one_of(
        st.binary(max_size=2048), soup, near_valid(), near_valid(), idx(), bomb(newlines=False)
    )
    names = st.just("data") | st.sampled_from(NAMES)
    common = settings(
        derandomize=True,
        deadline=None,
        database=None,
        max_examples=int(os.environ.get("FUZZ_EXAMPLES", "250")),
        suppress_health_check=list(HealthCheck),
    )

    def check(data: LabeledData) -> None:
        n = data.n_samples
        assert n > 0
        assert (data.X is None) != (data.texts is None)
        if data.X is not None:
            assert data.X.shape[0] == n
        for extra in (data.y, getattr(data, "sample_weight", None)):
            assert extra is None or len(extra) == n

    def expected(exc: BaseException) -> bool:
        if isinstance(exc, (DataFormatError, MemoryBudgetError)):
            assert "\n" not in str(exc), str(exc)
            return True
        return isinstance(exc, OSError)

    def write(content: bytes, name: str, gz: bool) -> str:
        packed = content[:2] == b"\x1f\x8b"  # a bomb: gzip data already
        path = os.path.join(directory, name + (".gz" if gz or packed else ""))
        with open(path, "wb") as fh:
            fh.write(gzip.compress(content) if gz and not packed else content)
        return path

    if kind == "read":

        @common
        @given(
            contents,
            st.just("auto") | st.sampled_from(FORMATS),
            names | st.just("x-images-idx3-ubyte"),
            st.booleans(),
            st.sampled_from([None, True, False]),
            st.booleans(),
            st.sampled_from(["file", "bytes", "text"]),
        )
        def fuzz(content, fmt, name, gz, labels, skip, via):
            if via == "file":
                path, stdin = write(content, name, gz), None
            else:
                path = "-"
                stdin = (
                    io.BytesIO(content)
                    if via == "bytes"
                    else io.StringIO(content.decode("utf-8", "surrogateescape"))
                )
            try:
                check(read_data(path, fmt, labels=labels, skip_bad_lines=skip, stdin=stdin))
            except Exception as exc:
                if not expected(exc):
                    raise

    else:

        @common
        @given(
            stream_contents,
            st.just("auto") | st.sampled_from(STREAMABLE),
            names,
            st.booleans(),
            st.integers(1, 4),
            st.booleans(),
        )
        def fuzz(content, fmt, name, gz, chunk_size, skip):
            path = write(content, name, gz)
            try:
                for chunk in iter_chunks(path, fmt, chunk_size=chunk_size, skip_bad_lines=skip):
                    check(chunk.data)
                scan(path, fmt, chunk_size=chunk_size, skip_bad_lines=skip)
            except Exception as exc:
                if not expected(exc):
                    raise

    fuzz()


def _limit_address_space() -> None:
    """The fuzz child's address space, 2 GiB: a bomb read whole would exceed it."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


@pytest.mark.parametrize("kind", ["read", "stream"])
def test_readers_never_crash(kind):
    try:
        done = subprocess.run(
            [sys.executable, __file__, kind],
            capture_output=True,
            text=True,
            timeout=180,
            env={**os.environ, "PYTHONFAULTHANDLER": "1", "PERCEPTRONS_MEMORY_LIMIT": "8M"},
            preexec_fn=_limit_address_space,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the {kind} fuzz loop hung (over {exc.timeout} s)")
    assert done.returncode == 0, f"fuzz {kind} failed:\n{done.stdout}\n{done.stderr[-6000:]}"


if __name__ == "__main__":
    _run(sys.argv[1])
