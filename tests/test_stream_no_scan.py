"""fit_stream learns what it was not given (svmlight's width and index base, the
classes) from the chunks as it trains, with no first pass: the model is, bit for bit,
the one trained with them declared."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from perceptrons import AveragedPerceptron, LogisticRegressionSGD, Perceptron, TextFeaturizer
from perceptrons.io import stream
from perceptrons.io.formats import DataFormatError
from perceptrons.io.stream import fit_stream, scan
from perceptrons.linear._update_rules import RULES


def _write(path, rows):
    """rows: (label, [(index, value), ...]) per line."""
    lines = [f"{label} " + " ".join(f"{j}:{v}" for j, v in cells) for label, cells in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def _growing_rows(n, base, n_classes, seed, zero_at=None):
    """Lines whose indices reach further as the file goes on (the width grows over
    many chunks), from ``base``; index 0 only on line ``zero_at`` when given."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        reach = base + 2 + i // 3
        k = int(rng.integers(1, 5))
        cells = sorted(set(rng.integers(base, reach, size=k).tolist()))
        if i == zero_at:
            cells = sorted({0, *cells})
        rows.append((i % n_classes, [(j, int(rng.integers(1, 4))) for j in cells]))
    return rows


def _refuse_scans(patch):
    """Fail on any pass over the file before training (the label scan included)."""

    def refused(*args, **kwargs):
        raise AssertionError("a first pass over the file")

    patch.setattr(stream, "_scan_before_training", refused)
    patch.setattr(stream, "scan", refused)


@pytest.fixture
def no_scan(monkeypatch):
    _refuse_scans(monkeypatch)


def _assert_same_model(learnt, declared):
    assert learnt.n_features_in_ == declared.n_features_in_
    assert_array_equal(learnt.classes_, declared.classes_)
    assert_array_equal(learnt.coef_, declared.coef_)
    assert_array_equal(learnt.intercept_, declared.intercept_)
    arrays, expected = learnt._state.arrays(), declared._state.arrays()
    assert arrays.keys() == expected.keys()
    for name, array in expected.items():
        assert arrays[name].shape == array.shape, name
        assert_array_equal(arrays[name], array, err_msg=name)
    assert learnt._state.values() == declared._state.values()  # count, scales...


def _declared(make, path, **options):
    found = scan(path)
    model = make()
    fit_stream(
        model,
        path,
        classes=found.classes,
        n_features=found.n_features,
        zero_based=found.zero_based,
        **options,
    )
    return model


@given(
    base=st.sampled_from([0, 1]),
    n_classes=st.sampled_from([2, 3]),
    chunk_size=st.integers(2, 70),
    epochs=st.integers(1, 3),
    cache=st.booleans(),
    averaged=st.booleans(),
    seed=st.integers(0, 2**16),
)
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_a_grown_width_and_found_base_equal_the_declared_ones(
    tmp_path_factory, base, n_classes, chunk_size, epochs, cache, averaged, seed
):
    path = _write(
        tmp_path_factory.mktemp("grow") / "train.svm",
        _growing_rows(60, base, n_classes, seed),
    )
    cls = AveragedPerceptron if averaged else Perceptron
    options = {"epochs": epochs, "chunk_size": chunk_size, "cache": cache}
    declared = _declared(lambda: cls(shuffle=True, random_state=seed), path, **options)
    found = scan(path)
    learnt = cls(shuffle=True, random_state=seed)
    with pytest.MonkeyPatch.context() as patch:
        _refuse_scans(patch)
        fit_stream(learnt, path, **options)
    _assert_same_model(learnt, declared)
    assert learnt.n_features_in_ == found.n_features


def _rule_models():
    for name, rule in RULES.items():
        # (averaging refuses a penalty on by default: the last weights)
        averaged = Perceptron if rule.penalized(rule.defaults) else AveragedPerceptron
        yield lambda name=name, averaged=averaged: averaged(update=name, shuffle=False)
        if rule.covariance:
            yield lambda name=name: Perceptron(update=name, covariance="full", shuffle=False)
    yield lambda: LogisticRegressionSGD(shuffle=False)
    yield lambda: Perceptron(delta=0.5, shuffle=False)


@pytest.mark.parametrize("base", [0, 1])
def test_every_rule_widens_to_the_declared_state(tmp_path, no_scan, base):
    # Each family's state (statistics, scales, a full covariance) gets its new rows
    # as a fresh state has them.
    rows = _growing_rows(45, base, 3, seed=base)
    path = _write(tmp_path / "train.svm", rows)
    for make in _rule_models():
        declared = make()
        # scan is patched out: the width and base by hand
        n_features = max(j for _, cells in rows for j, _ in cells) + (1 - base)
        fit_stream(
            declared,
            path,
            epochs=2,
            chunk_size=7,
            classes=[0, 1, 2],
            n_features=n_features,
            zero_based=base == 0,
        )
        learnt = make()
        fit_stream(learnt, path, epochs=2, chunk_size=7)
        _assert_same_model(learnt, declared)


@pytest.mark.parametrize("zero_at", [0, 44, 89])
@pytest.mark.parametrize("chunk_size", [1, 10, 1000])
def test_an_index_0_anywhere_makes_the_file_0_based(tmp_path, zero_at, chunk_size):
    # Read as 1-based until the 0 shows (in the last chunk, say): the base is decided
    # after the pass, as scikit-learn decides it for the whole file.
    path = _write(tmp_path / "train.svm", _growing_rows(90, 1, 2, seed=7, zero_at=zero_at))
    assert scan(path).zero_based is True
    declared = _declared(lambda: Perceptron(shuffle=False), path, chunk_size=chunk_size)
    learnt = Perceptron(shuffle=False)
    fit_stream(learnt, path, chunk_size=chunk_size)
    _assert_same_model(learnt, declared)


def test_lines_without_features_give_the_scans_width(tmp_path, no_scan):
    path = tmp_path / "bare.svm"
    path.write_text("1\n-1\n1\n")
    model = Perceptron(shuffle=False)
    fit_stream(model, path, epochs=2, chunk_size=2)
    assert model.n_features_in_ == 1  # what scan finds: max(-1 + 0, 1)


@pytest.mark.parametrize("late", [1, 29, 58, 59])
@pytest.mark.parametrize("chunk_size", [1, 4, 30])
def test_a_label_first_seen_late_gives_the_declared_classes(
    tmp_path, monkeypatch, late, chunk_size
):
    rows = _growing_rows(60, 1, 2, seed=late)
    rows[late] = (7, rows[late][1])  # a third class, first seen on this line
    path = _write(tmp_path / "train.svm", rows)
    declared = _declared(
        lambda: AveragedPerceptron(shuffle=False), path, epochs=2, chunk_size=chunk_size
    )
    scans = []
    real = stream._scan_before_training
    monkeypatch.setattr(stream, "_scan_before_training", lambda *a: scans.append(a) or real(*a))
    seen = []
    learnt = AveragedPerceptron(shuffle=False)
    fit_stream(
        learnt, path, epochs=2, chunk_size=chunk_size, progress=lambda b, n: seen.append((b, n))
    )
    _assert_same_model(learnt, declared)
    assert learnt.classes_.tolist() == [0, 1, 7]
    # A scan only when the first chunk lacks a label.
    assert len(scans) == (0 if {0, 1, 7} <= {label for label, _ in rows[:chunk_size]} else 1)
    # Trained again from the start, progress still counts each byte and example once.
    assert sum(n for _, n in seen) == 2 * 60
    assert sum(b for b, _ in seen) == 2 * path.stat().st_size


def test_a_chunk_of_one_label_binary_needs_the_scan(tmp_path, monkeypatch):
    path = _write(tmp_path / "train.svm", [(1, [(1, 1)])] * 5 + [(-1, [(2, 1)])] * 5)
    declared = _declared(lambda: Perceptron(shuffle=False), path, chunk_size=5)
    learnt = Perceptron(shuffle=False)
    fit_stream(learnt, path, chunk_size=5)
    _assert_same_model(learnt, declared)


@pytest.mark.parametrize("late", [None, 50])
def test_labels_found_on_the_way_in_vw_text(tmp_path, monkeypatch, late):
    rng = np.random.default_rng(0)
    lines = []
    for i in range(80):
        words = " ".join(f"w{j}:{rng.integers(1, 4)}" for j in rng.integers(0, 30, size=4))
        lines.append(f"{3 if i == late else i % 2 + 1} 2 |f {words}")
    path = tmp_path / "train.vw"
    path.write_text("\n".join(lines) + "\n")
    scans = []
    real = stream._scan_before_training
    monkeypatch.setattr(stream, "_scan_before_training", lambda *a: scans.append(a) or real(*a))

    def featurizer():
        return TextFeaturizer(weighting="tf", tokenizer="pairs", n_features=2**8)

    learning = featurizer()
    learnt = AveragedPerceptron(shuffle=False)
    fit_stream(learnt, path, epochs=2, chunk_size=16, featurizer=learning)
    assert len(scans) == (late is not None)  # a label scan only for the late label
    given = featurizer()
    declared = AveragedPerceptron(shuffle=False)
    classes = [1, 2] if late is None else [1, 2, 3]
    fit_stream(declared, path, epochs=2, chunk_size=16, featurizer=given, classes=classes)
    _assert_same_model(learnt, declared)
    # The featurizer of a run that started again learnt the same names.
    assert learning.feature_names() == given.feature_names()


@pytest.mark.parametrize("chunk_size", [5, 6, 7, 100])
@pytest.mark.parametrize("bad", [5, 6, 7, 19])
def test_a_bad_line_gives_the_declared_runs_message(tmp_path, chunk_size, bad):
    # Lines around chunk edges; the model is left untrained, as before the call.
    rows = [f"{i % 2} {i % 9 + 1}:1 {i % 9 + 3}:2" for i in range(20)]
    rows[bad] = f"1 {bad}:1 x:2"
    path = tmp_path / "bad.svm"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(DataFormatError) as declared:
        fit_stream(
            Perceptron(), path, chunk_size=chunk_size, classes=[0, 1], n_features=12,
            zero_based=False,
        )  # fmt: skip
    model = Perceptron()
    with pytest.raises(DataFormatError) as learnt:
        fit_stream(model, path, chunk_size=chunk_size)
    assert str(learnt.value) == str(declared.value)
    assert str(learnt.value).startswith(f"{path}:{bad + 1}:")
    assert not hasattr(model, "coef_")
    skipped = Perceptron(shuffle=False)
    fit_stream(skipped, path, chunk_size=chunk_size, skip_bad_lines=True)
    reference = Perceptron(shuffle=False)
    fit_stream(
        reference, path, chunk_size=chunk_size, skip_bad_lines=True, classes=[0, 1],
        n_features=11, zero_based=False,
    )  # fmt: skip
    _assert_same_model(skipped, reference)


def test_an_empty_file_has_no_data(tmp_path, no_scan):
    path = tmp_path / "empty.svm"
    path.write_text("\n\n")
    with pytest.raises(DataFormatError, match=r"empty\.svm: no data"):
        fit_stream(Perceptron(), path)


def test_a_model_being_continued_is_read_at_the_scanned_width(tmp_path, monkeypatch):
    # Not trained afresh: its width is checked as partial_fit checks it, against the
    # width a scan finds (as before), never widened.
    path = _write(tmp_path / "train.svm", _growing_rows(30, 1, 2, seed=1))
    width = scan(path).n_features
    scans = []
    real = stream._scan_before_training
    monkeypatch.setattr(stream, "_scan_before_training", lambda *a: scans.append(a) or real(*a))
    model = Perceptron(shuffle=False).partial_fit(np.zeros((2, width)), [0, 1])
    fit_stream(model, path, chunk_size=4)
    assert model.n_features_in_ == width and len(scans) == 1
    narrower = Perceptron(shuffle=False).partial_fit(np.zeros((2, width - 1)), [0, 1])
    coef = narrower.coef_.copy()
    with pytest.raises(ValueError, match="features"):
        fit_stream(narrower, path, chunk_size=4)
    assert_array_equal(narrower.coef_, coef)


def test_room_made_in_advance_gives_way_to_the_memory_limit(tmp_path, monkeypatch):
    # The state grows to twice its rows when a chunk is wider, unless that would pass
    # the limit: then to the chunk's width alone (here 600,001 rows fit, 1,200,002 not).
    path = _write(tmp_path / "wide.svm", [(1, [(600_000, 1)]), (0, [(1, 1)])] * 2)
    path.write_text(path.read_text() + "1 700000:1\n0 2:1\n")
    monkeypatch.setenv("PERCEPTRONS_MEMORY_LIMIT", "16M")  # 16 bytes a row: 1,048,576 rows
    declared = _declared(lambda: Perceptron(shuffle=False), path, chunk_size=2)
    learnt = Perceptron(shuffle=False)
    fit_stream(learnt, path, chunk_size=2)
    _assert_same_model(learnt, declared)
    assert learnt.n_features_in_ == 700_000


@pytest.mark.parametrize("base", [0, 1])
@pytest.mark.parametrize("cache", [False, True])
def test_a_state_in_the_rows_the_data_reaches_grows_too(tmp_path, base, cache):
    # The compact state (the rows the data reaches) widened and rebased, not expanded.
    path = _write(tmp_path / "train.svm", _growing_rows(60, base, 3, seed=5))
    declared = _declared(lambda: AveragedPerceptron(shuffle=False), path, epochs=2, cache=cache)
    learnt = AveragedPerceptron(shuffle=False)
    learnt._touched_rows = True  # the private switch: always the compact state
    fit_stream(learnt, path, epochs=2, chunk_size=7, cache=cache)
    assert type(learnt._lifecycle).__name__ == "CompactState"
    coef = learnt.coef_.toarray() if hasattr(learnt.coef_, "toarray") else learnt.coef_
    assert learnt.n_features_in_ == declared.n_features_in_
    assert_array_equal(coef, declared.coef_)
    assert_array_equal(learnt.intercept_, declared.intercept_)
