"""The parse pipeline of vw and counts streams (``io._chunks._ordered`` and
``_PairsReader.take``): blocks parsed by two threads are handed over in file order and
give, bit for bit, what one thread gives -- the matrices, labels, weights, the names
reported as new (the same names, in the same order) and the streamed model --, a bad
line stops the pass with the same ``PATH:LINE`` message, and an interrupt from the
consumer stops the threads and leaves no file behind."""

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from perceptrons import AveragedPerceptron, TextFeaturizer, cli
from perceptrons.io import _chunks, stream
from perceptrons.io.formats import DataFormatError
from perceptrons.linear import _online_engine

_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# The sublinear tf: weighed by the parser threads.
_PAIRS = {"tokenizer": "pairs", "hashed_names": True, "weighting": "tf", "sublinear_tf": True}

# A row: its label and its features (name number, value); names come back often, so
# later blocks report few new ones, and some only late.
_ROWS = st.lists(
    st.tuples(
        st.booleans(),
        st.lists(st.tuples(st.integers(0, 60), st.sampled_from(["1", "2", "0.5"])), max_size=6),
    ),
    min_size=1,
    max_size=80,
)


# Features the kernel leaves to the reference reader (a byte outside ASCII, a number
# off its exact path): the second's name also in _ROWS', so its column's names merge.
_ODD = [("Café", "1"), ("F1", "0.30000000000000004441")]


def _text(fmt: str, rows, *, piped: int | None = None, bad: int | None = None, odd=()) -> str:
    """The rows as a vw or counts file; ``piped``: that row holds a counts name with
    ``|`` (which stops the compiled path); ``bad``: a bad line inserted before that
    row; ``odd``: rows given a feature the kernel leaves (:data:`_ODD`, in turn)."""
    lines = []
    for k, (positive, features) in enumerate(rows):
        names = [f"F{n}" if n % 7 else f"f{n}" for n, _ in features]
        values = [value for _, value in features]
        if k in odd:
            names.append(_ODD[k % 2][0])
            values.append(_ODD[k % 2][1])
        if k == piped:
            names.append("p|q")
        values += ["1"] * (len(names) - len(values))
        pairs = " ".join(f"{name}:{value}" for name, value in zip(names, values, strict=True))
        if fmt == "vw":
            lines.append(f"{1 if positive else -1} |{'ns ' if k % 3 else ' '}{pairs}")
        else:
            lines.append(f"{pairs} #label#:{'pos' if positive else 'neg'}")
    if bad is not None:
        lines.insert(bad, "1 |a x:nope" if fmt == "vw" else "a:1 b:2")
    return "\n".join(lines) + "\n"


def _batches(path, fmt: str, chunk_size: int, threads: int, monkeypatch, sublinear=True):
    """What a streamed pass takes from the pipeline, block by block (arrays copied: the
    ring reuses them), and the error that stopped it (None: none). Without
    ``sublinear`` tf the batches' matrices are views of the parsers' rings."""
    monkeypatch.setattr(_chunks, "_parser_threads", lambda: threads)
    featurizer = TextFeaturizer(**{**_PAIRS, "sublinear_tf": sublinear}, n_features=32)
    reader = _chunks._PairsReader(featurizer, fmt)
    assert len(reader.parsers()) == threads
    taken: list[tuple] = []
    error = None
    try:
        for batch in _chunks._pairs_read(str(path), reader, chunk_size, False):
            # A block of pieces: the names each compiled piece reports.
            pieces = batch.pieces or [batch]
            names = [None if p.new_names is None else list(p.new_names) for p in pieces]
            columns = [None if p.new_columns is None else p.new_columns.tolist() for p in pieces]
            if batch.pieces is None:
                names, columns = names[0], columns[0]
            X, y, w = _chunks._pairs_features(batch, featurizer, fit=True)
            taken.append(
                (
                    X.data.tobytes(),
                    X.indices.tobytes(),
                    X.indptr.tobytes(),
                    X.shape,
                    y.tolist(),
                    None if w is None else w.tobytes(),
                    names,
                    columns,
                )
            )
    except DataFormatError as caught:
        error = str(caught)
    fitted = hasattr(featurizer, "n_features_out_")  # not when the first block fails
    return taken, error, featurizer.feature_names() if fitted else None


@_SETTINGS
@given(
    fmt=st.sampled_from(["vw", "counts"]),
    rows=_ROWS,
    chunk_size=st.integers(1, 30),
    piped=st.none() | st.integers(0, 80),
    bad=st.none() | st.integers(0, 80),
)
def test_two_parser_threads_give_what_one_gives(
    tmp_path, monkeypatch, fmt, rows, chunk_size, piped, bad
):
    """Bit for bit, block by block: matrices, labels, weights, the new names each
    block reports (same names, same order), a counts name with ``|`` that stops the
    compiled path for the blocks after it (parsed already by the other thread), and a
    bad line anywhere (at a block's edge too): the same message, the same line."""
    piped = None if fmt == "vw" or piped is None else piped % len(rows)
    bad = None if bad is None else bad % (len(rows) + 1)
    path = tmp_path / f"d.{fmt}"
    path.write_text(_text(fmt, rows, piped=piped, bad=bad))
    one = _batches(path, fmt, chunk_size, 1, monkeypatch)
    two = _batches(path, fmt, chunk_size, 2, monkeypatch)
    assert one == two
    if bad is not None:
        assert one[1] is not None and one[1].startswith(f"{path}:{bad + 1}: ")
    else:
        assert one[1] is None


def _fit(path, threads: int, monkeypatch, **options):
    monkeypatch.setattr(_chunks, "_parser_threads", lambda: threads)
    featurizer = TextFeaturizer(**_PAIRS, n_features=64)
    model = AveragedPerceptron(shuffle=False)
    report = stream.fit_stream(model, path, featurizer=featurizer, **options)
    return model, featurizer, report


@pytest.mark.parametrize("cache", [False, True])
def test_streamed_model_is_the_same_with_two_parser_threads(tmp_path, monkeypatch, cache):
    rng = np.random.default_rng(4)
    rows = [
        (bool(rng.integers(2)), [(int(n), "1") for n in rng.integers(0, 200, 12)])
        for _ in range(700)
    ]
    path = tmp_path / "d.vw"
    path.write_text(_text("vw", rows))
    options = {"epochs": 3, "chunk_size": 23, "cache": tmp_path if cache else False}
    a, fa, ra = _fit(path, 1, monkeypatch, **options)
    b, fb, rb = _fit(path, 2, monkeypatch, **options)
    assert a.coef_.tobytes() == b.coef_.tobytes()
    assert a.intercept_.tobytes() == b.intercept_.tobytes()
    assert fa.feature_names() == fb.feature_names()
    assert [e["mistakes"] for e in ra.epochs] == [e["mistakes"] for e in rb.epochs]


def _parser_threads_alive() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("perceptrons-parser")]


@_SETTINGS
@given(stop_at=st.integers(1, 40), chunk_size=st.integers(1, 40), threads=st.sampled_from([1, 2]))
def test_an_interrupt_from_the_consumer_stops_the_parsers(
    tmp_path_factory, monkeypatch, stop_at, chunk_size, threads
):
    """KeyboardInterrupt raised by the learner at any block: the parser threads are
    joined before it leaves fit_stream, the parse cache is gone."""
    where = tmp_path_factory.mktemp("interrupt")
    rng = np.random.default_rng(stop_at)
    rows = [
        (bool(rng.integers(2)), [(int(n), "1") for n in rng.integers(0, 50, 5)]) for _ in range(300)
    ]
    path = where / "d.vw"
    path.write_text(_text("vw", rows))
    cache = where / "cache"
    cache.mkdir()
    stop_at = 1 + stop_at % -(-300 // chunk_size)  # a block of the first pass (parsed)
    calls = []

    def progress(n_bytes, n_examples):
        calls.append(n_examples)
        if len(calls) == stop_at:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _fit(
            path,
            threads,
            monkeypatch,
            epochs=3,
            chunk_size=chunk_size,
            cache=cache,
            progress=progress,
        )
    assert _parser_threads_alive() == []
    assert list(cache.iterdir()) == []


def test_cli_interrupted_stream_leaves_no_file(tmp_path, monkeypatch, capsys):
    """Ctrl-C in the learner (the third block): exit 130, one line, no model file,
    no cache file, no parser thread left."""
    rng = np.random.default_rng(9)
    rows = [
        (bool(rng.integers(2)), [(int(n), "1") for n in rng.integers(0, 50, 5)]) for _ in range(200)
    ]
    path = tmp_path / "d.vw"
    path.write_text(_text("vw", rows))
    (tmp_path / "cache").mkdir()
    train_batch = _online_engine.LinearEngine.train_batch
    calls = []

    def interrupted(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return train_batch(self, *args, **kwargs)

    monkeypatch.setattr(_online_engine.LinearEngine, "train_batch", interrupted)
    monkeypatch.setattr(_chunks, "_parser_threads", lambda: 2)
    code = cli.main(
        [
            "train",
            "--stream",
            "--epochs",
            "2",
            "--chunk-size",
            "20",
            "--classes=-1,1",
            "--cache-dir",
            str(tmp_path / "cache"),
            "-o",
            str(tmp_path / "m.npz"),
            str(path),
        ]
    )
    assert code == 130
    assert capsys.readouterr().err.strip().splitlines() == ["perceptrons: error: interrupted"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "d.vw"]
    assert list((tmp_path / "cache").iterdir()) == []
    assert _parser_threads_alive() == []


def test_ordered_results_wait_for_the_slow_task_and_bound_the_window():
    """Results leave in task order whichever thread finishes first, and no thread
    starts a task more than ``window`` ahead of the one the consumer holds."""
    started = []
    lock = threading.Lock()
    second_done = threading.Event()

    def work(worker, task):
        with lock:
            started.append(task)
        if task == 0:
            second_done.wait(5)  # the first task finishes after the second
        if task == 1:
            second_done.set()
        return task * 10

    results = _chunks._ordered(iter(range(12)), work, workers=2, window=3)
    got = []
    for item in results:
        with lock:
            assert max(started) < item // 10 + 3  # the window
        got.append(item)
    assert got == [k * 10 for k in range(12)]


def test_ordered_raises_a_task_error_in_its_turn():
    def work(worker, task):
        if task == 4:
            raise ValueError("task 4")
        return task

    got = []
    with pytest.raises(ValueError, match="task 4"):
        for item in _chunks._ordered(iter(range(10)), work, workers=2, window=3):
            got.append(item)
    assert got == [0, 1, 2, 3]
    assert _parser_threads_alive() == []


def test_a_block_that_stops_the_compiled_path_stops_it_for_blocks_parsed_ahead(
    tmp_path, monkeypatch
):
    """A counts name with ``|`` (block 3) stops the compiled path for the blocks after
    it; the other thread parsed block 4 compiled meanwhile (made certain here): it is
    read again by the reference reader, as one thread would have read it."""
    rng = np.random.default_rng(2)
    rows = [
        (bool(rng.integers(2)), [(int(n), "1") for n in rng.integers(0, 60, 4)]) for _ in range(60)
    ]
    path = tmp_path / "d.counts"
    path.write_text(_text("counts", rows, piped=20))
    one = _batches(path, "counts", 10, 1, monkeypatch)
    read = _chunks._PairsReader.read
    ahead = threading.Event()
    ahead_compiled = []

    def held(self, raw, name, first_line, *args, **kwargs):
        if first_line == 21:  # the block with "p|q" waits for the next one to be parsed
            ahead.wait(10)
        batch = read(self, raw, name, first_line, *args, **kwargs)
        if first_line == 31:
            ahead_compiled.append(batch.data is None)
            ahead.set()
        return batch

    monkeypatch.setattr(_chunks._PairsReader, "read", held)
    two = _batches(path, "counts", 10, 2, monkeypatch)
    assert ahead_compiled == [True]
    assert one == two
    # Block 3 in pieces: its first line alone, the rest after the stop (no names).
    reported = [names for *_, names, _ in one[0]]
    assert [names is None for names in reported] == [False, False, False, True, True, True]
    assert reported[2] == [None, None]


def test_ring_arrays_sized_by_the_densest_block_grow_for_a_denser_one():
    """In a ring the matrix's arrays hold the values of the densest block so far (not
    the most a block could hold); a denser block (two bytes a value) grows them to its
    bound and is parsed again: the same batches as arrays sized for the bound."""
    blocks = [
        b"1 | a_long_feature_name b_long_feature_name:2\n" * 30,
        b"-1 | a b c d e f g h i j k l m n o p\n" * 30,  # two bytes a value
        b"1 | a_long_feature_name q r s\n" * 30,
        b"-1 | a b c d e f g h i j k l m n o p q r s t u v w x y z\n" * 40,
    ]
    featurizers = [TextFeaturizer(**_PAIRS, n_features=64) for _ in range(2)]
    ring, bound = (_chunks._PairsReader(f, "vw") for f in featurizers)
    ring.ring = _chunks._PAIRS_WINDOW
    for k, raw in enumerate(blocks):
        got = [
            _chunks._pairs_features(reader.read(raw, "x", 1, 0, {}), featurizer, fit=True)
            for reader, featurizer in ((ring, featurizers[0]), (bound, featurizers[1]))
        ]
        (Xa, ya, _), (Xb, yb, _) = got
        assert Xa.data.tobytes() == Xb.data.tobytes() and ya.tolist() == yb.tolist()
        assert np.array_equal(Xa.indices, Xb.indices) and np.array_equal(Xa.indptr, Xb.indptr)
        if k == 0:  # sized by a guess, well below the bound
            assert ring._sets[0][0][1] < len(raw) // 2
    assert ring._sets[1][0][1] >= len(blocks[1]) // 2 + 2  # grown to the bound
    assert featurizers[0].feature_names() == featurizers[1].feature_names()


@_SETTINGS
@given(
    fmt=st.sampled_from(["vw", "counts"]),
    rows=_ROWS,
    chunk_size=st.integers(1, 30),
    odd=st.lists(st.integers(0, 80), max_size=8),
    run=st.booleans(),
    bad=st.none() | st.integers(0, 80),
    sublinear=st.booleans(),
)
def test_lines_the_kernel_leaves_give_what_the_reference_reader_gives(
    tmp_path, monkeypatch, fmt, rows, chunk_size, odd, run, bad, sublinear
):
    """Lines the kernel leaves anywhere (first, last, at a block's edge, several in a
    row), read alone by the reference reader, the kernel reading the lines around
    them: with one thread or two, the batches (matrices, labels, weights), the names
    and the error of a bad line are those of the reference reader for every block
    (_MAX_FALLBACKS = 0) and of the reference reader for a whole block the kernel
    leaves (= 1, the reader before lines were read alone)."""
    lines = {k % len(rows) for k in odd}
    if run and lines:  # a run of lines after the first
        first = min(lines)
        lines.update(range(first, min(first + 4, len(rows))))
    bad = None if bad is None else bad % (len(rows) + 1)
    path = tmp_path / f"d.{fmt}"
    path.write_text(_text(fmt, rows, bad=bad, odd=lines))
    outcomes = {}
    for most in (0, 1, _chunks._MAX_FALLBACKS):
        monkeypatch.setattr(_chunks, "_MAX_FALLBACKS", most)
        for threads in (1, 2):
            taken, error, names = _batches(path, fmt, chunk_size, threads, monkeypatch, sublinear)
            outcomes[most, threads] = ([batch[:6] for batch in taken], error, names)
            if threads == 1:
                one = taken
        assert taken == one  # the names each block (or piece) reports too
    assert all(outcome == outcomes[0, 1] for outcome in outcomes.values())
    error = outcomes[0, 1][1]
    assert (error is None) == (bad is None)
    if bad is not None:
        assert error.startswith(f"{path}:{bad + 1}: ")


@pytest.mark.parametrize("fmt", ["vw", "counts"])
def test_streamed_model_reads_alone_the_lines_the_kernel_leaves(tmp_path, monkeypatch, fmt):
    """Odd lines first, last, at blocks' edges and in a run: the reference reader reads
    those lines only (in the epoch that parses, and in the labels' pass of a scan), and the model,
    names and scan are those of the reference reader (whole blocks) bit for bit."""
    rng = np.random.default_rng(7)
    rows = [
        (bool(rng.integers(2)), [(int(n), "1") for n in rng.integers(0, 200, 12)])
        for _ in range(300)
    ]
    odd = {0, 49, 50, 120, 121, 122, 123, 299}  # blocks of 50 lines
    path = tmp_path / f"d.{fmt}"
    path.write_text(_text(fmt, rows, odd=odd))
    referenced: list[int] = []
    reference = _chunks._PairsReader._reference

    def counted(self, raw, *args):
        referenced.append(raw.count(b"\n"))
        return reference(self, raw, *args)

    monkeypatch.setattr(_chunks._PairsReader, "_reference", counted)
    options = {"epochs": 2, "chunk_size": 50}
    fitted, scans = [], []
    for most in (_chunks._MAX_FALLBACKS, 1, 0):
        monkeypatch.setattr(_chunks, "_MAX_FALLBACKS", most)
        referenced.clear()
        fitted.append(_fit(path, 2, monkeypatch, **options))
        if most > 1:
            # Each line alone, once: the classes are learnt on the way (no labels' pass)
            # and the second epoch reads the parse cache.
            assert referenced == [1] * len(odd)
        referenced.clear()
        found = stream.scan(path, chunk_size=50)
        scans.append((found.classes.tolist(), found.n_examples, found.n_bytes))
        if most > 1:
            assert referenced == [1] * len(odd)
    assert scans[0] == scans[1] == scans[2]
    (a, fa, ra), *others = fitted
    for b, fb, rb in others:
        assert a.coef_.tobytes() == b.coef_.tobytes()
        assert a.intercept_.tobytes() == b.intercept_.tobytes()
        assert fa.feature_names() == fb.feature_names()
        assert [e["mistakes"] for e in ra.epochs] == [e["mistakes"] for e in rb.epochs]


def test_a_block_in_pieces_takes_one_set_of_its_parsers_ring():
    """A block the kernel reads around a line it leaves takes one set of the ring (the
    window of blocks in flight counts a set a block), its other compiled pieces their
    own arrays: the batches stay those of a reader without a ring."""
    raw = b"1 | a b c\n-1 | d e\n1 | caf\xc3\xa9 x\n1 | g h i j\n-1 | k\n1 | l m\n"
    options = {"labels": True, "n_features": None, "zero_based": "auto", "skip_bad_lines": False}
    featurizers = [TextFeaturizer(**_PAIRS, n_features=64) for _ in range(2)]
    ring, plain = (_chunks._PairsReader(f, "vw") for f in featurizers)
    ring.ring = _chunks._PAIRS_WINDOW
    batches = [reader.read(raw, "x", 1, len(raw), options) for reader in (ring, plain)]
    assert ring._turn == 1 and len(ring._sets) == 1
    pieces = batches[0].pieces
    assert pieces is not None and [p.data is None for p in pieces] == [True, False, True]
    ring_arrays = [array for _, arrays in ring._sets for array in arrays]
    head = pieces[0].X
    assert not any(np.shares_memory(head.indices, array) for array in ring_arrays)
    got = [
        _chunks._pairs_features(b, f, fit=True) for b, f in zip(batches, featurizers, strict=True)
    ]
    (Xa, ya, _), (Xb, yb, _) = got
    assert Xa.data.tobytes() == Xb.data.tobytes() and ya.tolist() == yb.tolist()
    assert np.array_equal(Xa.indices, Xb.indices) and np.array_equal(Xa.indptr, Xb.indptr)
    assert ya.tolist() == [1, -1, 1, 1, -1, 1]
    assert featurizers[0].feature_names() == featurizers[1].feature_names()
