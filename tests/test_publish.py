"""When and how the published model is formed from the training state.

``fit_epochs(publish_each_epoch=False)`` forms it once, after the last epoch (or when
the caller leaves the loop), and must end with the very model of publishing after every
epoch and of ``fit``. A fit on CSR data forms it only on the rows its data and state can
touch (:meth:`~perceptrons._states.TrainingState.model_on`): bit for bit the model of
the whole state, for every family of states, including negative zeros and the scales of
ROMMA and logistic regression. ``load(path, sparse=True)`` gives a sparsified model that
predicts, and once densified trains on, exactly as the dense one loaded from the file.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from perceptrons import (
    AveragedPerceptron,
    LogisticRegressionSGD,
    Perceptron,
    load,
    save,
)
from perceptrons._engine import run_epochs
from perceptrons._states import LogisticState, RommaState, TrainingState

FACTORIES = {
    "perceptron": lambda: Perceptron(max_epochs=3, random_state=0),
    "perceptron-delta": lambda: Perceptron(max_epochs=3, delta=0.5, random_state=0),
    "averaged": lambda: AveragedPerceptron(max_epochs=3, random_state=0),
    "averaged-pa": lambda: AveragedPerceptron(max_epochs=3, update="pa", random_state=0),
    "averaged-romma": lambda: AveragedPerceptron(max_epochs=3, update="romma", random_state=0),
    "perceptron-romma": lambda: Perceptron(max_epochs=3, update="romma", random_state=0),
    "logistic": lambda: LogisticRegressionSGD(max_epochs=3, l2=0.01, random_state=0),
    "logistic-averaged": lambda: LogisticRegressionSGD(
        max_epochs=3, average=True, l2=0.01, random_state=0
    ),
    # A decay this strong rescales every feature row many times an epoch.
    "logistic-rescaling": lambda: LogisticRegressionSGD(
        max_epochs=3, average=True, l2=1.0, learning_rate=0.5, random_state=0
    ),
}


def _problem(n_classes, sparse, seed=0, n=40, d=300):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=6 / d, random_state=seed, format="csr")
    X.data[:] = np.ceil(X.data * 3) * rng.choice([1.0, -0.5], size=X.data.shape)
    y = rng.integers(0, n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)
    return (X if sparse else X.toarray()), y


def _densified(model):
    """``model`` with a dense ``coef_`` (a compact state publishes a CSR one)."""
    return model.densify() if sp.issparse(model.coef_) else model


def _same_model(a, b):
    assert_array_equal(a.coef_, b.coef_)
    assert_array_equal(a.intercept_, b.intercept_)
    assert np.signbit(a.coef_).tolist() == np.signbit(b.coef_).tolist()
    assert a.n_iter_ == b.n_iter_
    assert a.history_ == b.history_


@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("sparse", [True, False])
def test_publishing_once_or_each_epoch_ends_with_the_same_model(name, n_classes, sparse):
    X, y = _problem(n_classes, sparse)
    each = FACTORIES[name]()
    each_epoch = [each.coef_.copy() for _ in each.fit_epochs(X, y)]
    once = FACTORIES[name]()
    seen = []
    for _ in once.fit_epochs(X, y, publish_each_epoch=False):
        seen.append(hasattr(once, "coef_"))
    assert seen == [False, False, True]  # formed after the last epoch only
    _same_model(once, each)
    _same_model(FACTORIES[name]().fit(X, y), each)
    # The model after each epoch is the one of a fit of that many epochs.
    for epochs, coef in enumerate(each_epoch[:-1], start=1):
        short = FACTORIES[name]().set_params(max_epochs=epochs).fit(X, y)
        assert_array_equal(coef, short.coef_)


@pytest.mark.parametrize("name", ["averaged", "logistic-averaged", "averaged-romma"])
def test_leaving_the_loop_early_publishes_the_model_trained_so_far(name):
    X, y = _problem(3, True)
    model = FACTORIES[name]()
    for record in model.fit_epochs(X, y, publish_each_epoch=False):
        if record["epoch"] == 2:
            break
    _same_model(model, FACTORIES[name]().set_params(max_epochs=2).fit(X, y))


def test_a_warm_started_fit_on_other_columns_publishes_the_earlier_rows_too():
    X, y = _problem(3, True, seed=1)
    left = sp.csr_matrix(X.toarray() * (np.arange(X.shape[1]) < 150))
    right = sp.csr_matrix(X.toarray() * (np.arange(X.shape[1]) >= 150))
    model = AveragedPerceptron(max_epochs=2, warm_start=True, random_state=0)
    model.fit(left, y)
    model.fit(right, y)
    state = model._state
    assert_array_equal(model.coef_, state.model()[:-1].T)
    assert (model.coef_[:, :150] != 0).any() and (model.coef_[:, 150:] != 0).any()
    model.partial_fit(left, y)
    assert_array_equal(model.coef_, model._state.model()[:-1].T)


@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_model_of_every_epoch_is_the_whole_state_s_model(name, n_classes):
    X, y = _problem(n_classes, True, seed=3)
    model = FACTORIES[name]()
    for _ in model.fit_epochs(X, y):
        full = model._state.model()
        full = full[:, np.newaxis] if full.ndim == 1 else full
        assert model.coef_.tobytes() == np.ascontiguousarray(full[:-1].T).tobytes()
        assert model.intercept_.tobytes() == full[-1].tobytes()


# ------------------------------------------------- model_on against model(), to the bit
_VALUES = st.sampled_from([0.0, -0.0, 1.0, -2.5, 1e-300, -3e300, 0.1, 7.0])


@st.composite
def _states(draw):
    """A state of any family with rows of zeros, negative zeros and extreme values."""
    family = draw(st.sampled_from([TrainingState, RommaState, LogisticState]))
    n_rows = draw(st.integers(1, 12))
    shape = (n_rows,) if draw(st.booleans()) else (n_rows, draw(st.integers(2, 4)))
    zero_rows = draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows))

    def array():
        values = np.array(
            draw(st.lists(_VALUES, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
        ).reshape(shape)
        values[np.array(zero_rows)] = 0.0
        return values

    averaged = draw(st.booleans())
    weights = array()
    aux = array() if averaged else np.zeros((0,) * len(shape))
    count = draw(st.sampled_from([0, 1, 3, 2.5, 1e6]))
    if averaged and count == 0:
        aux[:] = 0.0
    state = family(weights=weights, aux=aux, count=count)
    scale = draw(st.sampled_from([1.0, 0.5, 1e-3]))
    scale_sum = draw(st.sampled_from([0.0, 2.0, 1e3, -1.0]))  # -1: a file's, not training's
    if family is RommaState:
        state.scales[:] = (scale, scale_sum, 4.0)
    elif family is LogisticState:
        state.scales[:] = (scale, scale_sum)
    return state


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_states(), st.booleans())
def test_the_model_on_the_rows_in_use_is_the_whole_model_to_the_bit(state, extra_rows):
    n_rows = state.weights.shape[0]
    rows = np.union1d(state.rows_in_use(), [n_rows - 1])
    if extra_rows:  # a superset of the rows in use is as good
        rows = np.union1d(rows, np.arange(0, n_rows, 2))
    with np.errstate(all="ignore"):
        expected = state.model()
        got = state.model_on(rows.astype(np.int64))
        assert state.model_rows(rows).tobytes() == expected[rows].tobytes()
    assert got.tobytes() == expected.tobytes()


# ------------------------------------------------------------ load(sparse=True)
@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("resumable", [True, False])
def test_a_model_loaded_sparse_predicts_and_continues_as_the_dense_one(
    name, n_classes, resumable, tmp_path
):
    X, y = _problem(n_classes, True, seed=5)
    model = FACTORIES[name]().fit(X, y)
    path = save(model, tmp_path / "model.npz", resumable=resumable)
    dense, compact = load(path), load(path, sparse=True)
    assert sp.issparse(compact.coef_)
    # A file saved to predict only loads as it was stored: sparse where its weights are
    # mostly zeros (stored as their nonzeros), else dense.
    assert isinstance(dense.coef_, np.ndarray) or not resumable
    _same_model(_densified(dense), model)
    for data in (X, X.toarray()):
        for method in ("decision_function", "predict", "predict_proba"):
            if hasattr(model, method):
                expected = getattr(model, method)(data)
                assert_array_equal(getattr(compact, method)(data), expected)
                assert_array_equal(getattr(dense, method)(data), expected)
    if not resumable:
        with pytest.raises(ValueError, match=r"densify|resumable=False"):
            compact.partial_fit(X, y)
        return
    # The compact state trains on as it is, or densified: the dense model's updates.
    densified = load(path, sparse=True).densify()
    for continued in (compact, densified, dense, model):
        continued.partial_fit(X, y)
    for continued in (compact, densified, dense):
        _same_model(_densified(continued), model)


def test_the_loop_publishes_on_leaving_only_when_it_had_not():
    class Epochs:
        def __init__(self):
            self.published = []

        def run_epoch(self, epoch):
            return {"mistakes": 1}

        def is_finite(self):
            return True

        def forget(self):
            raise AssertionError

        def publish(self, n_iter):
            self.published.append(n_iter)

        def score(self, validation):
            return 0.0

    for each, expected in ((False, [2]), (True, [1, 2])):
        epochs = Epochs()
        loop = run_epochs(epochs, max_epochs=5, history=[], name="F", publish_each_epoch=each)
        next(loop), next(loop)
        loop.close()
        assert epochs.published == expected


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.sets(st.integers(0, 59), max_size=60), st.sampled_from([(60,), (20, 3), (6, 10)]))
def test_the_rows_of_coordinates_are_those_of_the_dense_array(positions, shape):
    from perceptrons._checked import SparseArray

    index = np.array(sorted(positions), dtype=np.int64)
    array = SparseArray(shape, index, np.ones(index.shape[0]))
    array.check("weights")
    dense = array.to_dense().reshape(shape[0], -1)
    assert_array_equal(array.nonzero_rows(), np.flatnonzero(dense.any(axis=1)))


# ------------------------------------------------------------------- command line
def _cli(*args, stdin=""):
    import contextlib
    import io
    import sys

    from perceptrons.cli import main

    out = io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out):
            status = main([str(arg) for arg in args])
    finally:
        sys.stdin = old_stdin
    assert status == 0
    return out.getvalue()


def test_the_cli_trains_the_same_model_with_or_without_dev_and_predicts_it_exactly(
    tmp_path, monkeypatch
):
    import perceptrons.cli.evaluate

    rng = np.random.default_rng(0)
    words = [f"w{i}é" for i in range(50)]
    lines = [
        f"{label} | " + " ".join(rng.choice(words, 6)) for label in rng.integers(1, 4, size=60)
    ]
    data = tmp_path / "train.vw"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    once, each = tmp_path / "once.npz", tmp_path / "each.npz"
    _cli("train", data, "-o", once, "--quiet")
    _cli("train", data, "-o", each, "--quiet", "--dev", data)  # published every epoch
    dense = load(once)
    # A hashed model trains in the rows its data reaches: CSR coef_s, compared whole.
    assert_array_equal(dense[-1].coef_.toarray(), load(each)[-1].coef_.toarray())
    queries = "| w1é w2é w3é\n| \n| w7é w7é zzz\n"
    compact_out = _cli("predict", once, "-", "--format", "vw", "--scores", stdin=queries)
    monkeypatch.setattr(perceptrons.cli.evaluate, "DENSE_FROM_ROWS", 1)
    dense_out = _cli("predict", once, "-", "--format", "vw", "--scores", stdin=queries)
    assert compact_out == dense_out and len(compact_out.splitlines()) == 3


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.sets(st.integers(0, 40)), min_size=1, max_size=4))
def test_sorted_union_is_numpy_s_union(sets):
    from perceptrons._states import sorted_union

    arrays = [np.array(sorted(values), dtype=np.int64) for values in sets]
    expected = np.unique(np.concatenate(arrays)) if arrays else np.zeros(0)
    got = sorted_union(*arrays)
    assert got.dtype == np.int64
    assert_array_equal(got, expected)
