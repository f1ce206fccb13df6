"""No input costs more memory than the limit says: gzip bombs, huge lines and huge chunk
sizes are refused in one line (or read in bounded memory), in memory and streamed.

Each case runs in a child process under an address-space limit (``RLIMIT_AS``, 1 GiB)
with ``PERCEPTRONS_MEMORY_LIMIT=16M``: the bombs inflate to 2 GiB, so a reader that
decompressed them whole would die of a MemoryError traceback instead of refusing them
in one line. Normal gzip files still read exactly as their uncompressed forms.
"""

from __future__ import annotations

import gzip
import io
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from perceptrons.io.formats import read_data, read_idx
from perceptrons.io.sequences import read_conll
from perceptrons.io.stream import iter_chunks

_ADDRESS_SPACE = 1 << 30  # the child's RLIMIT_AS
_LIMIT = "16M"  # the child's PERCEPTRONS_MEMORY_LIMIT
_BOMB_BYTES = 2 << 30  # what a bomb inflates to: past the address space
_MEMBER_BYTES = 16 << 20


def _address_space_of(n_bytes: int):
    """What a child runs first: its address space capped at ``n_bytes``."""

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (n_bytes, n_bytes))

    return limit


def _bomb(path: Path, head: bytes = b"", fill: bytes = b"\0") -> Path:
    """A gzip file of ``head`` then ``fill`` repeated to 2 GiB, of a few MB.

    One gzip member of 16 MiB is written by streaming ``fill`` through ``gzip.open`` in
    blocks; copies of it follow (a gzip file may hold several members, read one after
    the other), which is quicker than compressing 2 GiB and inflates the same.
    """
    block = fill * ((1 << 20) // len(fill))
    with gzip.open(path, "wb", compresslevel=9) as out:
        for _ in range(_MEMBER_BYTES // len(block)):
            out.write(block)
    member = path.read_bytes()
    with open(path, "wb") as out:
        out.write(gzip.compress(head))
        for _ in range(_BOMB_BYTES // _MEMBER_BYTES):
            out.write(member)
    assert path.stat().st_size < 8 << 20
    return path


def _child(
    args: list[str],
    cwd: Path | None = None,
    limit: str | None = _LIMIT,
    address_space: int = _ADDRESS_SPACE,
) -> subprocess.CompletedProcess:
    """``python ARGS`` with ``PERCEPTRONS_MEMORY_LIMIT=limit`` (unset: None, the limit
    is then what the address space leaves) and its address space capped."""
    env = {k: v for k, v in os.environ.items() if k != "PERCEPTRONS_MEMORY_LIMIT"}
    if limit is not None:
        env["PERCEPTRONS_MEMORY_LIMIT"] = limit
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
        preexec_fn=_address_space_of(address_space),
    )


def _cli(args: list[str], cwd: Path, **limits: Any) -> str:
    """The one error line of ``perceptrons ARGS`` that must fail with exit 1 (``limits``:
    those of :func:`_child`)."""
    done = _child(["-m", "perceptrons", *args], cwd, **limits)
    assert done.returncode == 1, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[-3000:]
    assert lines[0].startswith("perceptrons: error: ")
    return lines[0]


def _library(code: str, cwd: Path) -> str:
    """Run ``code`` (which must raise) in the child: the exception's type and message."""
    script = textwrap.dedent(
        """
        import sys
        try:
        {body}
        except Exception as exc:
            print(type(exc).__name__, isinstance(exc, ValueError), isinstance(exc, MemoryError))
            print(exc)
            sys.exit(0)
        sys.exit("nothing was raised")
        """
    ).format(body=textwrap.indent(textwrap.dedent(code).strip(), "    "))
    done = _child(["-c", script], cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


# ------------------------------------------------------------------ gzip bombs, whole


_SVMLIGHT_LINE = b"1 1:1\n"


@pytest.mark.parametrize(
    ("name", "head", "fill", "command"),
    [
        ("zeros.svm.gz", b"", b"\0", ["train"]),
        ("line.svm.gz", _SVMLIGHT_LINE + b"1 ", b"1", ["train"]),  # one huge line
        ("rows.svm.gz", b"", _SVMLIGHT_LINE, ["train"]),  # many small lines
        ("d.vw.gz", b"1 |f ", b"a", ["train", "--format", "vw"]),
        ("d.conll.gz", b"", b"w N\n", ["tag", "train"]),
    ],
)
def test_a_gzip_bomb_read_whole_is_refused_in_one_line(tmp_path, name, head, fill, command):
    path = _bomb(tmp_path / name, head, fill)
    message = _cli([*command, str(path), "-o", str(tmp_path / "m.npz")], tmp_path)
    assert f"{path}: reading it whole" in message and "so far" in message
    assert "more than 16.0 MiB, the limit PERCEPTRONS_MEMORY_LIMIT=16M sets" in message
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize(
    ("name", "head", "fill", "what", "remedy"),
    [
        ("line.svm.gz", _SVMLIGHT_LINE + b"1 ", b"1", ":2: this one line", "a line must fit"),
        ("zeros.svm.gz", b"", b"\0", ":1: this one line", "a line must fit"),
        ("rows.svm.gz", b"", _SVMLIGHT_LINE, ": the ", "lower --chunk-size"),
        ("line.vw.gz", b"1 |f a\n1 |f ", b"a", ":2: this one line", "a line must fit"),
        ("rows.vw.gz", b"", b"1 |f a\n", ": the chunk of lines from line 1 ", "lower --chunk-"),
    ],
)
def test_a_gzip_bomb_streamed_is_refused_in_one_line(tmp_path, name, head, fill, what, remedy):
    """Streamed with a chunk size past what memory holds: the chunk (its lines, or the
    rows parsed from them), or its one long line, is refused when it reaches the limit,
    and the remedy is named."""
    path = _bomb(tmp_path / name, head, fill)
    fmt = "svmlight" if ".svm" in name else "vw"
    args = ["train", str(path), "--format", fmt, "--stream", "--chunk-size", "1000000000000"]
    if fmt == "vw":  # tf-idf's parse pass reads the chunks, its idf within the limit
        args += ["--n-features", "1024"]
    message = _cli([*args, "-o", str(tmp_path / "m.npz")], tmp_path)
    assert f"{path}{what}" in message
    assert "more than 16.0 MiB" in message and remedy in message


_LIBRARY_CALLS = {
    "read_data": "from perceptrons.io.formats import read_data; read_data({svm!r})",
    "read_conll": "from perceptrons.io.sequences import read_conll; read_conll({conll!r})",
    "iter_chunks": "from perceptrons.io.stream import iter_chunks\n"
    "list(iter_chunks({svm!r}, chunk_size=10**12))",
    "fit_stream": "from perceptrons import Perceptron\n"
    "from perceptrons.io.stream import fit_stream\n"
    "fit_stream(Perceptron(), {svm!r}, chunk_size=10**12)",
}


@pytest.mark.parametrize("entry", sorted(_LIBRARY_CALLS))
def test_the_library_raises_a_memory_budget_error(tmp_path, entry):
    if entry == "read_conll":
        paths = {"conll": str(_bomb(tmp_path / "d.conll.gz", b"", b"w N\n"))}
    else:
        paths = {"svm": str(_bomb(tmp_path / "d.svm.gz", b"", _SVMLIGHT_LINE))}
    kind, message = _library(_LIBRARY_CALLS[entry].format(**paths), tmp_path).splitlines()
    assert kind == "MemoryBudgetError True True"
    assert message.startswith(next(iter(paths.values())))
    assert "more than 16.0 MiB" in message


def test_gzip_on_standard_input_is_bounded_too(tmp_path):
    bomb = _bomb(tmp_path / "d.svm.gz", b"", _SVMLIGHT_LINE)
    call = f"""
        import io
        from perceptrons.io.formats import read_data
        read_data("-", stdin=open({str(bomb)!r}, "rb"))
    """
    kind, message = _library(call, tmp_path).splitlines()
    assert kind == "MemoryBudgetError True True"
    assert message.startswith("<stdin>: reading it whole")


# ------------------------------------------------------------------ IDX


def _idx_header(*shape: int) -> bytes:
    return bytes([0, 0, 0x08, len(shape)]) + struct.pack(f">{len(shape)}I", *shape)


def test_an_idx_gzip_with_trailing_gigabytes_is_refused_unread(tmp_path):
    """The header says 1 x 28 x 28: 784 bytes are read, then one more says the file
    holds more, without decompressing the rest."""
    images = _bomb(tmp_path / "t-images-idx3-ubyte.gz", _idx_header(1, 28, 28) + b"\0" * 784)
    call = f"from perceptrons.io.formats import read_idx; read_idx({str(images)!r})"
    kind, message = _library(call, tmp_path).splitlines()
    assert kind == "ValueError True False"
    assert message.endswith("holds more than 784 payload bytes")


def test_the_cli_names_an_idx_gzip_with_trailing_gigabytes(tmp_path):
    images = _bomb(tmp_path / "t-images-idx3-ubyte.gz", _idx_header(1, 28, 28) + b"\0" * 784)
    line = _cli(["train", str(images), "-o", str(tmp_path / "m.npz")], tmp_path)
    assert line.endswith(
        "IDX size mismatch: header declares shape (1, 28, 28) of uint8 (784 "
        "payload bytes) but the file holds more than 784 payload bytes"
    )


def test_an_idx_header_past_the_limit_is_refused_before_reading(tmp_path):
    images = tmp_path / "t-images-idx3-ubyte.gz"
    images.write_bytes(gzip.compress(_idx_header(60000, 280, 280) + b"\0" * 1000))
    call = f"from perceptrons.io.formats import read_idx; read_idx({str(images)!r})"
    kind, message = _library(call, tmp_path).splitlines()
    assert kind == "MemoryBudgetError True True"
    assert message.startswith(f"{images}: the IDX payload of shape (60000, 280, 280)")


def test_an_idx_gzip_short_of_its_header_is_named(tmp_path):
    images = tmp_path / "t-images-idx3-ubyte.gz"
    images.write_bytes(gzip.compress(_idx_header(2, 28, 28) + b"\0" * 1000))
    with pytest.raises(ValueError, match=r"1568 payload bytes.* holds 1000 payload bytes"):
        read_idx(images)


# ------------------------------------------------------------------ --chunk-size


@pytest.mark.parametrize(
    ("name", "content"),
    [("d.svm", "1 1:1 2:3\n-1 2:1 3:1\n1 1:2\n-1 3:2\n"), ("d.vw", "1 |f a b\n-1 |f c\n")],
)
def test_a_huge_chunk_size_allocates_what_the_chunk_holds(tmp_path, name, content):
    (tmp_path / name).write_text(content)
    args = [name, "--stream", "--chunk-size", "1000000000000", "-o", f"{name}.npz"]
    if name.endswith(".vw"):  # hashed: 2**20 features by default, more than the 16M limit
        args += ["--n-features", "1024"]
    done = _child(["-m", "perceptrons", "train", *args], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / f"{name}.npz").exists()


def test_fit_stream_with_a_huge_chunk_size_equals_a_small_one(tmp_path):
    from perceptrons import Perceptron
    from perceptrons.io.stream import fit_stream

    path = tmp_path / "d.svm"
    rng = np.random.default_rng(0)
    path.write_text(
        "".join(f"{rng.choice([-1, 1])} {i % 7 + 1}:{rng.random():.3f} 9:1\n" for i in range(300))
    )
    huge, small = Perceptron(shuffle=False), Perceptron(shuffle=False)
    fit_stream(huge, path, chunk_size=10**12)
    fit_stream(small, path, chunk_size=300)
    np.testing.assert_array_equal(huge.coef_, small.coef_)
    (chunk,) = iter_chunks(path, chunk_size=10**12)
    assert chunk.data.X.shape[0] == 300


def test_a_width_learnt_late_is_refused_before_the_state_grows(tmp_path, monkeypatch):
    """fit_stream learns an svmlight file's width as it reads (no first pass): a late
    chunk's large index is refused by the memory limit before the state is widened, in
    one line, and the estimator is left as before the call."""
    from perceptrons import Perceptron
    from perceptrons._memory import MemoryBudgetError
    from perceptrons.io.stream import fit_stream

    (tmp_path / "late.svm").write_text("1 1:1\n-1 2:1\n1 3:1\n-1 60000000:1\n")
    monkeypatch.setenv("PERCEPTRONS_MEMORY_LIMIT", "200M")
    model = Perceptron()
    # The declared run's numbers: 60,000,000 features (1-based) and the intercept.
    with pytest.raises(MemoryBudgetError, match=r"\(60,000,001 weight rows .* more than 200"):
        fit_stream(model, tmp_path / "late.svm", chunk_size=2)
    assert not hasattr(model, "coef_")
    args = ["train", "late.svm", "--stream", "--chunk-size", "2", "-o", "m.npz"]
    line = _cli(args, tmp_path, limit="200M")
    assert "training state (60,000,001 weight rows" in line
    assert "PERCEPTRONS_MEMORY_LIMIT=200M" in line
    assert not (tmp_path / "m.npz").exists()


# ------------------------------------------------------------------ normal gzip files


_FILES = {
    "d.svm": "1 1:0.5 3:2\n-1 2:1 # c\n\n+1 7:1e-3\n",
    "d.vw": "1 |a x y:2 | z\n-1 2.5 'tag |b:3 w:2\n",
    "d.review": "great:2 not_good:1 #label#:positive\nbad:3 a:b:2 #label#:negative\n",
    "d.tsv": "pos\tgood film\nneg\tbad film\n",
    "d.csv": "a,b,label\n1,2.5,x\n3,4,y\n",
}


def _same(a, b) -> None:
    assert a.format == b.format and a.texts == b.texts
    if a.X is not None:
        left = a.X.toarray() if hasattr(a.X, "toarray") else a.X
        right = b.X.toarray() if hasattr(b.X, "toarray") else b.X
        np.testing.assert_array_equal(left, right)
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.sample_weight, b.sample_weight)


@pytest.mark.parametrize("name", sorted(_FILES))
def test_gzip_files_read_as_their_uncompressed_forms(tmp_path, name):
    content = _FILES[name].encode()
    plain, packed = tmp_path / name, tmp_path / (name + ".gz")
    plain.write_bytes(content)
    packed.write_bytes(gzip.compress(content))
    fmt = "counts" if name.endswith(".review") else "auto"
    expected = read_data(plain, fmt)
    _same(read_data(packed, fmt), expected)
    _same(read_data("-", fmt, stdin=io.BytesIO(gzip.compress(content))), expected)
    if name != "d.csv":
        streamed = [c.data for c in iter_chunks(packed, fmt if fmt != "auto" else expected.format)]
        plain_chunks = [c.data for c in iter_chunks(plain, expected.format)]
        for got, want in zip(streamed, plain_chunks, strict=True):
            _same(got, want)


def test_gzip_sequence_and_idx_files_read_as_their_uncompressed_forms(tmp_path):
    conll = "The DT\ncat NN\n\nA DT\ndog NN\n"
    (tmp_path / "d.conll").write_text(conll)
    (tmp_path / "d.conll.gz").write_bytes(gzip.compress(conll.encode()))
    plain, packed = read_conll(tmp_path / "d.conll"), read_conll(tmp_path / "d.conll.gz")
    assert (plain.sentences, plain.tags) == (packed.sentences, packed.tags)
    pixels = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    raw = _idx_header(2, 3, 4) + pixels.tobytes()
    (tmp_path / "i-images-idx3-ubyte").write_bytes(raw)
    (tmp_path / "g-images-idx3-ubyte.gz").write_bytes(gzip.compress(raw))
    np.testing.assert_array_equal(read_idx(tmp_path / "i-images-idx3-ubyte"), pixels)
    np.testing.assert_array_equal(read_idx(tmp_path / "g-images-idx3-ubyte.gz"), pixels)


def test_idx_pixels_as_floats_are_checked_before_the_conversion(tmp_path, monkeypatch):
    """The payload fits (47 MB, read once and copied once), its float64 pixels (376 MB)
    do not: refused before they are made, by read_data and by load_mnist."""
    from perceptrons._memory import MemoryBudgetError
    from perceptrons.datasets import load_mnist

    monkeypatch.setenv("PERCEPTRONS_MEMORY_LIMIT", "200M")
    mnist = tmp_path / "mnist"
    mnist.mkdir()
    n = 60_000
    for split in ("train", "t10k"):
        with gzip.open(mnist / f"{split}-images-idx3-ubyte.gz", "wb", compresslevel=1) as out:
            out.write(_idx_header(n, 28, 28))
            for _ in range(28):
                out.write(bytes(n * 28))
        labels = bytes([0, 0, 0x08, 1]) + struct.pack(">I", n) + bytes(n)
        (mnist / f"{split}-labels-idx1-ubyte.gz").write_bytes(gzip.compress(labels))
    images = mnist / "train-images-idx3-ubyte.gz"
    with pytest.raises(MemoryBudgetError, match=r"60,000 images of 784 pixels .* 358\.9 MiB"):
        read_data(images)
    with pytest.raises(MemoryBudgetError, match=r"60,000 images of 784 pixels as float64"):
        load_mnist(tmp_path)


@pytest.mark.parametrize("stream", [False, True])
def test_memory_running_out_below_the_limit_is_one_line(tmp_path, stream):
    """A limit above what the process may take (a ulimit, a container): the reader's
    MemoryError is still one line naming the file, not a traceback."""
    path = _bomb(tmp_path / "d.svm.gz", b"", b"1")  # one line of 2 GiB
    args = ["-m", "perceptrons", "train", str(path), "-o", str(tmp_path / "m.npz")]
    if stream:
        args += ["--stream"]
    done = _child(args, limit="1T")
    assert done.returncode == 1, done.stderr[-3000:]
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"perceptrons: error: {path}") and "out of memory" in line


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("packed", [False, True])
def test_a_pipe_is_read_as_a_file(tmp_path, packed):
    """A file that cannot seek (a named pipe, ``<(zcat ...)``): its first bytes, read to
    see the gzip magic, are given again."""
    import threading

    content = _FILES["d.svm"].encode()
    (tmp_path / "d.svm").write_bytes(content)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    payload = gzip.compress(content) if packed else content
    writer = threading.Thread(target=fifo.write_bytes, args=(payload,), daemon=True)
    writer.start()
    got = read_data(fifo, "svmlight")
    writer.join(timeout=10)
    _same(got, read_data(tmp_path / "d.svm"))


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("chunk_size", [1, 2, 3, 1000])
def test_line_blocks_hold_whole_lines_long_ones_too(tmp_path, packed, chunk_size):
    """Lines longer than the pieces they are read in (64 KiB), blank lines and a last
    line without its newline: each block is chunk_size whole lines, numbered right."""
    from perceptrons.io._chunks import _line_blocks

    lines = [b"1 |f a", b"", b"1 |f " + b"x" * 200_000, b"-1 |f b" * 20_000, b"", b"1 |f c"]
    content = b"\n".join(lines)  # no newline at the end
    path = tmp_path / ("d.vw.gz" if packed else "d.vw")
    path.write_bytes(gzip.compress(content) if packed else content)
    blocks = list(_line_blocks(str(path), chunk_size))
    assert b"".join(block for block, _, _ in blocks) == content
    expected_first = list(range(1, len(lines) + 1, chunk_size))
    assert [first for _, first, _ in blocks] == expected_first
    for (block, _, _), start in zip(blocks, expected_first, strict=True):
        assert block.split(b"\n")[:chunk_size] == lines[start - 1 : start - 1 + chunk_size]


# ------------------------------------------------------ models: memory follows nonzeros


def _sparsified_file(path: Path, width: int, update: str = "perceptron") -> Path:
    """A sparsified model file of a few kilobytes declaring ``width`` features: a
    binary model fitted on 40 features, its weight rows moved to the same rows of the
    wide model but the intercept's, moved to the last (statistics by row alike); its
    dense arrays would take ``width`` times 8 bytes each."""
    import json

    from perceptrons import AveragedPerceptron, save
    from perceptrons.io._persist_format import sealed_meta

    rng = np.random.default_rng(0)
    X = (rng.random((30, 40)) < 0.2).astype(float)
    model = AveragedPerceptron(update=update, max_epochs=2, random_state=0)
    save(model.fit(X, np.arange(30) % 2).sparsify(), path)
    with np.load(path) as archive:
        arrays = {name: archive[name] for name in archive.files}
    meta = json.loads(arrays.pop("__meta__").tobytes())
    rows = meta["n_features_in"] + 1
    for name in ("weights", "aux", "stats"):  # every array by row as its nonzeros
        dense = arrays.pop(f"estimator/{name}", np.zeros(0))
        if dense.size:
            arrays[f"estimator/{name}.index"] = np.flatnonzero(dense)
            arrays[f"estimator/{name}.values"] = dense.ravel()[np.flatnonzero(dense)]
            meta["sparse_arrays"][name] = int(np.count_nonzero(dense))
        elif name != "stats":
            arrays[f"estimator/{name}"] = dense
    for name in meta["sparse_arrays"]:
        index = arrays[f"estimator/{name}.index"]
        statistics, row = np.divmod(index, rows)  # (statistics: 0 but for stats)
        arrays[f"estimator/{name}.index"] = statistics * (width + 1) + np.where(
            row == rows - 1, width, row
        )
    meta = {key: value for key, value in meta.items() if key != "sha256"}
    meta["n_features_in"] = width
    sealed = sealed_meta(meta, arrays)
    np.savez(path, __meta__=np.frombuffer(sealed, dtype=np.uint8), **arrays)
    assert path.stat().st_size < 64 << 10
    return path


_WIDE = 2**28  # a 2 GiB dense array: past the children's 1 GiB of address space


@pytest.mark.parametrize("update", ["perceptron", "ada-rda"])
def test_a_sparsified_model_of_huge_width_loads_saves_and_predicts_compact(tmp_path, update):
    """The library loads it (as it was saved, and sparse=True), predicts with it and
    saves it again in the memory of its nonzeros (and, for AdaGrad, of the rows of its
    statistics), under 1 GiB of address space and a 16 MiB budget."""
    path = _sparsified_file(tmp_path / "wide.npz", _WIDE, update)
    script = f"""
        import numpy as np, scipy.sparse as sp
        from perceptrons import load, save
        for sparse in (False, True):
            model = load({str(path)!r}, sparse=sparse)
            X = sp.csr_matrix((np.ones(3), ([0, 0, 1], [1, {_WIDE - 1}, 5])), shape=(2, {_WIDE}))
            print(model.predict(X).tolist(), model.coef_.nnz > 0)
        save(model, {str(tmp_path / "again.npz")!r})
        print(load({str(tmp_path / "again.npz")!r}).coef_.shape)
    """
    done = _child(["-c", textwrap.dedent(script)], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    first, second, shape = done.stdout.splitlines()
    assert first == second and first.endswith("True")
    assert shape == f"(1, {_WIDE})"


@pytest.mark.parametrize("command", ["predict", "evaluate", "inspect"])
def test_the_cli_uses_a_sparsified_model_of_huge_width_in_little_memory(tmp_path, command):
    path = _sparsified_file(tmp_path / "wide.npz", _WIDE)
    (tmp_path / "d.svm").write_text(f"1 2:1 {_WIDE}:1\n0 6:1\n")
    args = [command, str(path)] + ([] if command == "inspect" else ["d.svm"])
    done = _child(["-m", "perceptrons", *args], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() and not done.stderr.strip()


def test_export_refuses_a_graph_past_the_memory_budget_before_forming_it(tmp_path):
    """ONNX graphs are dense: 2**24 features make a 128 MiB initializer, held five
    times while written; refused in one line (exit 1) before any of it exists."""
    pytest.importorskip("onnx")
    path = _sparsified_file(tmp_path / "wide.npz", 2**24)
    line = _cli(["export", str(path), "-o", "m.onnx"], tmp_path)
    assert "AveragedPerceptron's ONNX graph (16,777,216 dense float64 weights" in line
    assert "would take 640.0 MiB, more than 16.0 MiB" in line
    assert not (tmp_path / "m.onnx").exists()


def test_a_full_covariance_past_the_address_space_is_refused_up_front(tmp_path):
    """The 14,000 x 14,000 covariance (1.46 GiB) under a 2 GiB address space: what the
    limit leaves the process (less its libraries and compiler) is too little, said in
    one line before anything is allocated."""
    (tmp_path / "d.svm").write_text("1 1:1 14000:1\n-1 2:1\n")
    args = ["train", "d.svm", "-o", "m.npz", "--update", "arow", "--covariance", "full"]
    line = _cli(args, tmp_path, limit=None, address_space=2 << 30)
    assert "a full covariance of 14,001 x 14,001 per class" in line
    assert "what the address-space limit (ulimit -v) leaves" in line
    assert not (tmp_path / "m.npz").exists()


def test_saving_a_full_covariance_forms_no_mask_of_its_size(tmp_path):
    """Saved with 24 MiB of address space to spare beyond the model: the scan for
    nonzeros goes by blocks (a d x d mask of booleans took 16 MiB here, three at once)."""
    script = f"""
        import resource
        import numpy as np, scipy.sparse as sp
        from perceptrons import Perceptron, load, save
        d = 4000
        X = sp.csr_matrix((np.ones(4), ([0, 0, 1, 2], [0, d - 1, 1, 2])), shape=(3, d))
        model = Perceptron(update="arow", covariance="full", max_epochs=1).fit(X, [1, 0, 1])
        save(model, {str(tmp_path / "warm.npz")!r})
        with open("/proc/self/status") as status:
            in_use = next(int(l.split()[1]) * 1024 for l in status if l.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (in_use + (24 << 20),) * 2)
        save(model, {str(tmp_path / "m.npz")!r})
        print("saved")
    """
    done = _child(["-c", textwrap.dedent(script)], tmp_path, limit=None)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "saved"


def test_more_shards_than_rows_are_refused_before_any_is_made(tmp_path):
    (tmp_path / "d.svm").write_text("1 1:1\n-1 2:1\n")
    line = _cli(["train", "d.svm", "-o", "m.npz", "--shards", "1000000"], tmp_path)
    assert line.endswith(
        "--shards 1000000 is more than the 2 training examples: every shard needs at least one."
    )


def test_shards_past_the_memory_budget_are_refused_in_one_line(tmp_path):
    """Each shard's state and bookkeeping counted: 2,000 shards of a 50-feature model
    take more than 16 MiB."""
    rows = "".join(f"{1 if i % 2 else -1} {i % 50 + 1}:1\n" for i in range(2000))
    (tmp_path / "d.svm").write_text(rows)
    line = _cli(["train", "d.svm", "-o", "m.npz", "--shards", "2000"], tmp_path)
    assert "x 2,001 copies (one per shard, and the mixed one)" in line
    assert "fewer shards (n_shards, --shards)" in line


def test_densify_is_refused_by_its_estimate_and_the_model_stays_sparse(tmp_path):
    """A dense copy only when asked, after its estimate: densify() of a model of 2**28
    features refuses in one line, nothing formed, and the model still predicts (as
    predict and evaluate then do for many rows)."""
    path = _sparsified_file(tmp_path / "wide.npz", _WIDE)
    call = f"""
        import numpy as np, scipy.sparse as sp
        from perceptrons import load
        model = load({str(path)!r})
        try:
            model.densify()
        finally:
            X = sp.csr_matrix((np.ones(1), ([0], [7])), shape=(1, {_WIDE}))
            assert sp.issparse(model.coef_) and model.predict(X).shape == (1,)
    """
    kind, message = _library(call, tmp_path).splitlines()
    assert kind == "MemoryBudgetError True True"
    assert message.startswith("AveragedPerceptron's training state (268,435,457 weight rows")
