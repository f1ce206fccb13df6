"""Training from a file chunk by chunk equals training on it in memory."""

import gzip
import resource

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import dump_svmlight_file, make_classification

from perceptrons import AveragedPerceptron, Perceptron, TextFeaturizer, VotedPerceptron
from perceptrons._engine import Stopping
from perceptrons.io.formats import DataFormatError, read_data
from perceptrons.io.stream import fit_stream, iter_chunks, scan


def _svmlight_file(path, n=300, d=40, n_classes=3, seed=0, gz=False):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        label = i % n_classes if n_classes > 2 else (1 if i % 2 else -1)
        features = sorted(rng.choice(np.arange(1, d + 1), size=rng.integers(1, 8), replace=False))
        cells = " ".join(f"{j}:{rng.integers(1, 5) + 0.5 * (j % 3 == label % 3)}" for j in features)
        rows.append(f"{label} {cells}")
        if i % 50 == 7:
            rows.append("")  # blank lines are allowed anywhere
    content = "\n".join(rows) + "\n"
    if gz:
        path.write_bytes(gzip.compress(content.encode()))
    else:
        path.write_text(content)
    return path


@pytest.mark.parametrize("cls", [Perceptron, AveragedPerceptron])
@pytest.mark.parametrize("chunk_size", [1, 17, 10_000])
@pytest.mark.parametrize("gz", [False, True])
def test_streamed_svmlight_equals_the_in_memory_fit(tmp_path, cls, chunk_size, gz):
    path = _svmlight_file(tmp_path / ("train.svm.gz" if gz else "train.svm"), gz=gz)
    streamed = cls(shuffle=False)
    report = fit_stream(streamed, path, epochs=3, chunk_size=chunk_size)
    whole = read_data(path)
    in_memory = cls(max_epochs=3, shuffle=False).fit(whole.X, whole.y)
    assert_array_equal(streamed.coef_, in_memory.coef_)
    assert_array_equal(streamed.intercept_, in_memory.intercept_)
    assert [e["mistakes"] for e in report.epochs] == [r["mistakes"] for r in in_memory.history_]
    assert all(e["examples"] == 300 for e in report.epochs)


def test_streamed_text_equals_the_in_memory_pipeline(tmp_path):
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(60)]
    lines = []
    for i in range(250):
        label = ("sport", "art", "food")[i % 3]
        doc = " ".join(rng.choice(words[i % 3 :: 3], size=5)) + " " + " ".join(rng.choice(words, 3))
        lines.append(f"__label__{label} {doc}")
    path = tmp_path / "train.ft"
    path.write_text("\n".join(lines) + "\n")
    featurizer = TextFeaturizer(weighting="tf", n_features=2**12, hashed_names=True)
    streamed = AveragedPerceptron(shuffle=False)
    fit_stream(streamed, path, epochs=2, chunk_size=40, featurizer=featurizer)
    whole = read_data(path)
    reference = TextFeaturizer(weighting="tf", n_features=2**12, hashed_names=True)
    in_memory = AveragedPerceptron(max_epochs=2, shuffle=False)
    in_memory.fit(reference.fit_transform(whole.texts), whole.y)
    assert_allclose(streamed.coef_, in_memory.coef_, rtol=1e-12, atol=1e-12)
    # The featurizer learned the names of every hashed column over all chunks.
    assert featurizer.feature_names() == reference.feature_names()


def test_voted_perceptron_streams_too(tmp_path):
    path = _svmlight_file(tmp_path / "train.svm", n=120)
    streamed = VotedPerceptron(shuffle=False, kernel="poly", degree=2, gamma=0.5)
    fit_stream(streamed, path, epochs=1, chunk_size=25)
    whole = read_data(path)
    in_memory = VotedPerceptron(max_epochs=1, shuffle=False, kernel="poly", degree=2, gamma=0.5)
    in_memory.fit(whole.X, whole.y)
    assert_allclose(streamed.decision_function(whole.X), in_memory.decision_function(whole.X))


def test_scan_finds_classes_width_and_index_base(tmp_path):
    path = _svmlight_file(tmp_path / "train.svm", d=40)
    found = scan(path, chunk_size=33)
    assert found.format == "svmlight" and found.n_examples == 300
    assert found.classes.tolist() == [0, 1, 2]
    assert found.zero_based is False and 38 <= found.n_features <= 40
    zero = tmp_path / "zero.svm"
    zero.write_text("1 0:1 3:2\n-1 1:1\n")
    assert scan(zero).zero_based is True and scan(zero).n_features == 4


def test_shuffle_window_is_seeded_and_keeps_every_example(tmp_path):
    path = _svmlight_file(tmp_path / "train.svm")
    models = []
    for seed in (0, 0, 1):
        model = AveragedPerceptron(shuffle=False)
        report = fit_stream(model, path, chunk_size=20, shuffle_window=4, random_state=seed)
        assert report.epochs[0]["examples"] == 300
        models.append(model.coef_)
    assert_array_equal(models[0], models[1])
    assert not np.array_equal(models[0], models[2])


def test_errors_name_the_line_in_the_whole_file(tmp_path):
    path = tmp_path / "bad.svm"
    rows = [f"{1 if i % 2 else -1} 1:{i}" for i in range(50)]
    rows[36] = "1 1:x"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(DataFormatError, match=r"bad\.svm:37:"):
        list(iter_chunks(path, chunk_size=10, n_features=1, zero_based=False))
    chunks = list(
        iter_chunks(path, chunk_size=10, n_features=1, zero_based=False, skip_bad_lines=True)
    )
    assert sum(c.data.n_samples for c in chunks) == 49
    assert next(s for c in chunks for s in c.data.skipped)[0] == 37


def test_text_needs_a_stateless_featurizer(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("a\tx y\nb\ty z\n")
    with pytest.raises(ValueError, match="hashing TextFeaturizer"):
        fit_stream(Perceptron(), path)
    with pytest.raises(ValueError, match="vocabulary='hashing'"):
        fit_stream(Perceptron(), path, featurizer=TextFeaturizer(weighting="tf", vocabulary="fit"))
    csv = tmp_path / "t.csv"
    csv.write_text("a,label\n1,x\n2,y\n")
    with pytest.raises(DataFormatError, match="cannot stream csv"):
        fit_stream(Perceptron(), csv)


def test_progress_reports_bytes_and_examples(tmp_path):
    path = _svmlight_file(tmp_path / "train.svm")
    seen = []
    fit_stream(Perceptron(), path, chunk_size=50, progress=lambda b, n: seen.append((b, n)))
    assert sum(n for _, n in seen) == 300
    assert sum(b for b, _ in seen) == path.stat().st_size


def test_peak_memory_does_not_grow_with_the_file(tmp_path):
    """A file of ~60 MB streams through chunks of 2,000 lines: the process grows by far
    less than the file (the in-memory reader would hold it all at once)."""
    path = tmp_path / "big.svm"
    rng = np.random.default_rng(2)
    with path.open("w") as out:
        for _ in range(40):
            block = rng.integers(1, 100_000, size=(5000, 30))
            block.sort(axis=1)
            lines = [
                f"{1 if r[0] % 2 else -1} " + " ".join(f"{j}:1" for j in np.unique(r))
                for r in block
            ]
            out.write("\n".join(lines) + "\n")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    model = AveragedPerceptron()
    fit_stream(model, path, chunk_size=2000, classes=[-1, 1], n_features=100_000, zero_based=False)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before
    size_mb = path.stat().st_size / 2**20
    assert size_mb > 40
    assert grown < size_mb / 2, f"peak RSS grew {grown:.0f} MB for a {size_mb:.0f} MB file"
    assert model.history_ and sum(r["examples"] for r in model.history_) == 200_000


def test_classes_given_as_text_take_the_type_of_numeric_labels(tmp_path):
    path = _svmlight_file(tmp_path / "train.svm", n_classes=2)
    model = AveragedPerceptron(shuffle=False)
    fit_stream(model, path, classes=["-1", "1"], n_features=40, zero_based=False)
    assert model.classes_.tolist() == [-1, 1]
    with pytest.raises(DataFormatError, match="labels are numbers"):
        fit_stream(
            AveragedPerceptron(), path, classes=["neg", "pos"], n_features=40, zero_based=False
        )


# ------------------------------------------------------------------ formats in the wild


def _w8a_like(path, n=300, seed=0):
    """LIBSVM's w8a in small: ~3 % positives, ~70 % rows with a label alone."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        label = 1 if (rng.random() < 0.03 or i == 1) else -1
        if rng.random() < 0.7 and i != 3:
            lines.append(f"{label} ")
        else:
            idx = sorted(rng.choice(np.arange(1, 301), size=rng.integers(1, 12), replace=False))
            lines.append(f"{label} " + " ".join(f"{j}:1" for j in idx))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("chunk_size", [7, 10_000])
def test_label_only_rows_stream_as_they_read_in_memory(tmp_path, chunk_size):
    path = _w8a_like(tmp_path / "w8a.train")
    whole = read_data(path, labels=True)
    found = scan(path, chunk_size=chunk_size)
    assert found.format == "svmlight" and found.n_examples == 300
    assert found.n_features == whole.X.shape[1] and found.zero_based is whole.zero_based
    chunks = list(iter_chunks(path, chunk_size=chunk_size, n_features=found.n_features))
    streamed = sp.vstack([c.data.X for c in chunks], format="csr")
    assert (streamed != whole.X).nnz == 0
    assert_array_equal(np.concatenate([c.data.y for c in chunks]), whole.y)
    model = Perceptron(shuffle=False)
    fit_stream(model, path, epochs=2, chunk_size=chunk_size)
    reference = Perceptron(max_epochs=2, shuffle=False).fit(whole.X, whole.y)
    assert_array_equal(model.coef_, reference.coef_)


def test_a_byte_order_mark_streams(tmp_path):
    path = tmp_path / "bom.svm"
    path.write_bytes(b"\xef\xbb\xbf1 1:1\n-1 2:1\n1 1:2\n")
    chunks = list(iter_chunks(path, chunk_size=2, n_features=2, zero_based=False))
    assert [c.data.y.tolist() for c in chunks] == [[1, -1], [1]]
    assert scan(path).classes.tolist() == [-1, 1]


def test_an_index_far_beyond_the_data_is_refused_by_the_first_pass(tmp_path):
    path = tmp_path / "huge.svm"
    path.write_text("1 1:1\n-1 2:1\n1 3:1\n1 2147483647:1\n")
    with pytest.raises(DataFormatError, match=r"huge\.svm:4: feature index 2147483647 would"):
        scan(path, chunk_size=2)
    with pytest.raises(DataFormatError, match=r"huge\.svm:4: .*hash the features or pass"):
        fit_stream(Perceptron(), path, chunk_size=2)
    # Given explicitly, the width is the caller's: the chunks are that wide.
    chunks = list(iter_chunks(path, chunk_size=2, n_features=2**31, zero_based=False))
    assert chunks[-1].data.X.shape == (2, 2**31)


def test_corrupt_gzip_is_a_format_error(tmp_path):
    path = tmp_path / "bad.svm.gz"
    path.write_bytes(gzip.compress(b"1 1:1\n" * 5000)[:-40])
    with pytest.raises(DataFormatError, match=r"bad\.svm\.gz: corrupt gzip data"):
        list(iter_chunks(path, "svmlight", chunk_size=100))
    with pytest.raises(FileNotFoundError, match=r"nope\.svm: no such file"):
        list(iter_chunks(tmp_path / "nope.svm", "svmlight"))


def _vw_file(path, n=120, weights=True, seed=3):
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        label = 1 if i % 2 else -1
        words = " ".join(f"w{j}:{rng.integers(1, 4)}" for j in rng.integers(0, 30, size=4))
        extra = f"n{rng.integers(0, 5)}" + (" pos" if label == 1 and i % 3 else "")
        importance = f" {rng.choice([0.5, 1, 2, 3])}" if weights and i % 4 else ""
        lines.append(f"{label}{importance} 'id{i}|words {words} |other {extra}")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("chunk_size", [16, 10_000])
def test_vw_importance_weights_stream_as_in_memory_sample_weights(tmp_path, chunk_size):
    path = _vw_file(tmp_path / "train.vw")
    whole = read_data(path)
    assert whole.sample_weight is not None and set(whole.sample_weight) == {0.5, 1, 2, 3}
    featurizer = TextFeaturizer(weighting="tf", tokenizer="pairs", n_features=2**10)
    model = AveragedPerceptron(shuffle=False)
    fit_stream(model, path, epochs=2, chunk_size=chunk_size, featurizer=featurizer)
    X = TextFeaturizer(weighting="tf", tokenizer="pairs", n_features=2**10).fit_transform(
        whole.texts
    )
    reference = AveragedPerceptron(max_epochs=2, shuffle=False)
    reference.fit(X, whole.y, sample_weight=whole.sample_weight)
    assert_allclose(model.coef_, reference.coef_, rtol=1e-12, atol=1e-12)
    unweighted = AveragedPerceptron(max_epochs=2, shuffle=False).fit(X, whole.y)
    assert not np.allclose(unweighted.coef_, reference.coef_)  # the weights mattered


def test_weights_follow_their_rows_through_a_shuffle_window(tmp_path):
    path = _vw_file(tmp_path / "train.vw")
    seen = []

    class Recorder:
        def partial_fit(self, X, y, classes=None, sample_weight=None):
            seen.append((X.toarray(), y, sample_weight))

    featurizer = TextFeaturizer(
        weighting="tf", tokenizer="pairs", n_features=2**10, vocabulary="hashing"
    )
    fit_stream(Recorder(), path, chunk_size=16, shuffle_window=3, featurizer=featurizer)
    whole = read_data(path)
    X = (
        TextFeaturizer(weighting="tf", tokenizer="pairs", n_features=2**10)
        .fit_transform(whole.texts)
        .toarray()
    )
    expected = {
        (row.tobytes(), int(label)): w
        for row, label, w in zip(X, whole.y, whole.sample_weight, strict=True)
    }
    got = {
        (row.tobytes(), int(label)): w
        for X_b, y_b, w_b in seen
        for row, label, w in zip(X_b, y_b, w_b, strict=True)
    }
    assert sum(len(y) for _, y, _ in seen) == 120 and got == expected


def test_counts_stream_with_a_pairs_featurizer(tmp_path):
    path = tmp_path / "books.review"
    path.write_text(
        "great:2 fun:1 #label#:positive\nbad:3 not_good:1 #label#:negative\n"
        "great:1 was_very:2 #label#:positive\ndull:2 bad:1 #label#:negative\n"
    )
    model = Perceptron(shuffle=False)
    featurizer = TextFeaturizer(weighting="tf", tokenizer="pairs", n_features=64)
    fit_stream(model, path, epochs=3, chunk_size=3, featurizer=featurizer)
    whole = read_data(path)
    X = TextFeaturizer(weighting="tf", tokenizer="pairs", n_features=64).fit_transform(whole.texts)
    reference = Perceptron(max_epochs=3, shuffle=False).fit(X, whole.y)
    assert_array_equal(model.coef_, reference.coef_)
    assert model.classes_.tolist() == ["negative", "positive"]
    with pytest.raises(ValueError, match="tokenizer='pairs'"):
        fit_stream(Perceptron(), path, featurizer=TextFeaturizer(weighting="tf", n_features=64))


def test_streaming_stops_early_on_held_out_examples(tmp_path):
    """The stream holds out validation_fraction of every chunk -- the same examples each
    pass -- and stops by the serial fit's rule; the held-out ones are never trained on."""
    X, y = make_classification(1500, 10, n_informative=5, n_classes=3, random_state=0)
    path = tmp_path / "train.svm"
    dump_svmlight_file(X, y, str(path))
    model = AveragedPerceptron(
        early_stopping=True, validation_fraction=0.2, n_iter_no_change=2, random_state=0
    )
    report = fit_stream(model, path, epochs=60, chunk_size=200, random_state=0)
    history = report.epochs
    assert len(history) < 60
    assert model.history_ == [{k: v for k, v in r.items() if k != "seconds"} for r in history]
    rule = Stopping(True, n_iter_no_change=2)  # the serial fit's rule (see test_engine)
    assert [rule.stop(record) for record in history] == [False] * (len(history) - 1) + [True]
    trained = {record["examples"] for record in history}
    assert len(trained) == 1 and 1100 < trained.pop() < 1300  # about 80% of 1500
    again = AveragedPerceptron(
        early_stopping=True, validation_fraction=0.2, n_iter_no_change=2, random_state=0
    )
    fit_stream(again, path, epochs=60, chunk_size=200, random_state=0)
    assert np.array_equal(again.coef_, model.coef_)  # deterministic
    with pytest.raises(ValueError, match="shuffle_window=0"):
        fit_stream(model, path, epochs=2, chunk_size=200, shuffle_window=2)


@pytest.mark.parametrize("cls", [Perceptron, VotedPerceptron])
def test_streamed_history_has_one_record_per_pass(tmp_path, cls):
    """Not one per chunk labelled "epoch": the voted perceptron streams through its
    partial_fit, each call of which records an epoch of its own."""
    path = _svmlight_file(tmp_path / "train.svm", n=300)
    model = cls(random_state=0)
    report = fit_stream(model, path, epochs=3, chunk_size=50, random_state=0)
    assert [record["epoch"] for record in model.history_] == [1, 2, 3]
    assert [record["examples"] for record in model.history_] == [300, 300, 300]
    assert [r["mistakes"] for r in model.history_] == [r["mistakes"] for r in report.epochs]
    if cls is VotedPerceptron:  # what the last chunk's record said, kept
        assert model.history_[-1]["support_vectors"] == model.support_vectors_.shape[0]


# The first pass of fit_stream over svmlight: the compiled plain scan
# (perceptrons._kernels.parse.scan_svmlight), checked against the exact scan.

_LABELS = ["1", "-1", "0", "2", "+3", "1.5", "-0", "-0.0", "1e3", "7.", "inf", "nan", "x", "1:1"]
_INDICES = ["0", "1", "2", "3", "07", "12", "999999999", "1000000000", "+4", "-1", "qid", "a"]
_VALUES = ["1", "0.5", "-2", "1e3", "", "x", "1e999", "nan", "3.25", "1:2"]
_SPACES = [" ", "  ", "\t", " \r", "\x0b"]


@st.composite
def _svmlight_lines(draw, plain_only: bool):
    """svmlight text, plain lines only or with every kind of bad or unusual one."""
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["row", "row", "row", "blank", "comment"]))
        if kind == "blank":
            lines.append(draw(st.sampled_from(["", " ", "\t"])))
            continue
        if kind == "comment":
            lines.append("# a comment 1:2")
            continue
        labels = _LABELS[:6] if plain_only else _LABELS
        cells = [draw(st.sampled_from(labels))]
        n_cells = draw(st.integers(0, 4))
        if plain_only:
            indices = sorted(draw(st.sets(st.integers(0, 40), max_size=n_cells)))
            cells += [f"{j}:{draw(st.sampled_from(_VALUES[:4]))}" for j in indices]
        else:
            for _ in range(n_cells):
                index, value = draw(st.sampled_from(_INDICES)), draw(st.sampled_from(_VALUES))
                cells.append(f"{index}:{value}" if index != "qid" else "qid:3")
        sep = draw(st.sampled_from(_SPACES)) if not plain_only else " "
        tail = draw(st.sampled_from(["", " # note", "#x"])) if not plain_only else ""
        lines.append(sep.join(cells) + tail)
    text = "\n".join(lines) + draw(st.sampled_from(["\n", ""]))
    bom = draw(st.booleans()) and not plain_only
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode()


def _outcome(run):
    try:
        return "ok", run()
    except (DataFormatError, ValueError) as error:  # a bad line; one class only
        return type(error).__name__, str(error)


@given(content=_svmlight_lines(plain_only=True), read_bytes=st.sampled_from([5, 64, 1 << 20]))
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_plain_scan_finds_what_the_exact_scan_finds(tmp_path_factory, content, read_bytes):
    from perceptrons.io import _chunks
    from perceptrons.io.stream import _scan_before_training

    path = tmp_path_factory.mktemp("scan") / "plain.svm"
    path.write_bytes(content)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_chunks, "_READ_BYTES", read_bytes)  # blocks end anywhere in a line
        plain = _chunks._svmlight_plain_scan(str(path))
        exact = _outcome(lambda: scan(path, chunk_size=3))
        fast = _outcome(lambda: _scan_before_training(str(path), "svmlight", 3, False))
    if exact[0] != "ok":  # no row at all
        assert fast == exact
        return
    assert plain is not None and fast[0] == "ok"
    for name in ("format", "n_features", "zero_based", "n_examples"):
        assert getattr(fast[1], name) == getattr(exact[1], name), name
    assert fast[1].classes.dtype == exact[1].classes.dtype
    assert fast[1].classes.tobytes() == exact[1].classes.tobytes()


def _streamed(path, chunk_size, skip_bad_lines=False):
    model = AveragedPerceptron(shuffle=False)
    fit_stream(model, path, chunk_size=chunk_size, skip_bad_lines=skip_bad_lines)
    return model.classes_.tolist(), model.n_features_in_, model.coef_.tobytes()


@given(
    content=_svmlight_lines(plain_only=False),
    chunk_size=st.sampled_from([1, 2, 5, 10_000]),
    skip_bad_lines=st.booleans(),
)
@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_plain_first_pass_trains_and_fails_as_the_exact_one(
    tmp_path_factory, content, chunk_size, skip_bad_lines
):
    # Bad lines, -0, qid, signed or long indices, BOM, CR, comments: the same model, or
    # the same first error (PATH:LINE and reason), as with the exact scan first.
    from perceptrons.io import _chunks

    path = tmp_path_factory.mktemp("scan") / "any.svm"
    path.write_bytes(content)
    fast = _outcome(lambda: _streamed(path, chunk_size, skip_bad_lines))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_chunks, "_svmlight_plain_scan", lambda name: None)
        patch.setattr("perceptrons.io.stream._svmlight_plain_scan", lambda name: None)
        exact = _outcome(lambda: _streamed(path, chunk_size, skip_bad_lines))
    assert fast == exact


def test_plain_scan_gives_up_on_lines_it_does_not_read(tmp_path):
    from perceptrons.io import _chunks

    for text in ["1 qid:2 1:1\n", "1 +1:1\n", "1 1234567890:1\n", "inf 1:1\n", "-0 1:1\n"]:
        path = tmp_path / "odd.svm"
        path.write_text("1 1:1\n" + text)
        assert _chunks._svmlight_plain_scan(str(path)) is None, text
    path.write_text("1 1:1\n-1 0:2 5:1\n2.5\n")
    found = _chunks._svmlight_plain_scan(str(path))
    assert found is not None
    assert (found.max_index, found.has_zero, found.n_examples) == (5, True, 3)
    assert found.classes.tolist() == [-1.0, 1.0, 2.5]


def test_a_line_longer_than_the_plain_scan_reads_goes_to_the_exact_scan(tmp_path, monkeypatch):
    from perceptrons.io import _chunks
    from perceptrons.io.stream import _scan_before_training

    monkeypatch.setattr(_chunks, "_READ_BYTES", 64)
    monkeypatch.setattr(_chunks, "_SCAN_MAX_BUFFER", 256)
    path = tmp_path / "long.svm"
    long_line = "1 " + " ".join(f"{j}:1" for j in range(1, 200))
    path.write_text(f"-1 1:1\n{long_line}\n")
    assert _chunks._svmlight_plain_scan(str(path)) is None
    found = _scan_before_training(str(path), "svmlight", 10, False)
    assert (found.n_features, found.n_examples) == (199, 2)
    assert found.classes.tolist() == [-1, 1]


@pytest.mark.parametrize("cls", [Perceptron, AveragedPerceptron])
def test_publishing_only_at_the_end_gives_the_same_model(tmp_path, cls, monkeypatch):
    """``publish_each_epoch=False``: the model is formed once, after the last epoch, and
    is the one formed after every epoch, bit for bit."""
    from perceptrons.io import stream

    path = _svmlight_file(tmp_path / "d.svm", n=200)
    published = []
    original = stream._EngineEpochs.publish

    def counted(self, n_iter):
        published.append(n_iter)
        return original(self, n_iter)

    monkeypatch.setattr(stream._EngineEpochs, "publish", counted)
    models = {}
    for each in (True, False):
        published.clear()
        model = cls(random_state=0)
        fit_stream(model, path, epochs=3, chunk_size=50, publish_each_epoch=each)
        models[each] = model
        assert published == ([1, 2, 3] if each else [3])
    assert_array_equal(models[True].coef_, models[False].coef_)
    assert_array_equal(models[True].intercept_, models[False].intercept_)
    assert models[True].history_ == models[False].history_


def _rule_forms():
    """Every rule of the table, its every-round penalty on where it has one (the sparse
    rules), averaged where the average can follow it."""
    from perceptrons.linear._update_rules import RULES

    for name, rule in RULES.items():
        params = {} if rule.penalty is None else {rule.penalty: 0.02}
        yield pytest.param(Perceptron, name, params, id=f"{name}")
        without = {} if rule.penalty is None else {rule.penalty: 0.0}
        if rule.averageable({**rule.defaults, **without}):
            yield pytest.param(AveragedPerceptron, name, without, id=f"averaged-{name}")


@pytest.mark.parametrize(("cls", "update", "params"), list(_rule_forms()))
def test_every_rule_streams_as_partial_fit_over_the_same_chunks(tmp_path, cls, update, params):
    """``fit_stream`` is one ``partial_fit`` per chunk, pass after pass, shuffled by the
    estimator's own generator: bit for bit, and its history has the nonzero weights."""
    whole = read_data(_svmlight_file(tmp_path / "raw.svm", n=70, d=30))
    path = tmp_path / "train.svm"
    dump_svmlight_file(whole.X, whole.y, str(path), zero_based=False)  # no blank lines
    whole = read_data(path)
    options = {"update": update, "update_params": params, "random_state": 3}
    streamed = cls(**options)
    report = fit_stream(streamed, path, epochs=2, chunk_size=25)
    in_memory = cls(**options)
    for _ in range(2):
        for start in range(0, 70, 25):
            rows = slice(start, start + 25)
            in_memory.partial_fit(whole.X[rows], whole.y[rows], classes=[0, 1, 2])
    assert_array_equal(streamed.coef_, in_memory.coef_)
    assert_array_equal(streamed.intercept_, in_memory.intercept_)
    assert report.epochs[-1]["n_nonzero"] == np.count_nonzero(in_memory.coef_) > 0
