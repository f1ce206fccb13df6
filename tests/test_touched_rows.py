"""Training in the rows the data reaches: bit for bit the dense state.

An online linear learner whose epochs write and read only their examples' rows and the
intercept's may keep its training state in those rows alone
(:meth:`perceptrons.linear._online_engine.LinearEngine.training_view`). The oracle is
the dense state itself: the private switch ``_touched_rows`` forces either path, and
every configuration that may train compact must give the same model, and -- expanded
by ``densify()`` -- the same state, bit for bit, over ``fit``, ``partial_fit`` sequences
whose batches reach new rows, and streams.
"""

from __future__ import annotations

import contextlib
import copy
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from perceptrons import AveragedPerceptron, LogisticRegressionSGD, Perceptron
from perceptrons._states import CompactState, PerceptronState
from perceptrons.io.persist import load, save
from test_input_bounds import _child

#: Every configuration whose epochs write only their examples' rows and whose
#: statistics by row start at zero (those a compact state trains).
COMPACT = {
    "perceptron": lambda: Perceptron(max_epochs=3, random_state=0),
    "perceptron-delta": lambda: Perceptron(max_epochs=2, delta=0.5, random_state=0),
    "pa": lambda: Perceptron(max_epochs=2, update="pa", random_state=0),
    "pa-i": lambda: Perceptron(max_epochs=2, update="pa-i", C=0.5, random_state=0),
    "pa-ii": lambda: Perceptron(max_epochs=2, update="pa-ii", random_state=0),
    "mira": lambda: Perceptron(max_epochs=2, update="mira", random_state=0),
    "margin": lambda: Perceptron(max_epochs=2, margin=1.0, random_state=0),
    "ada-fobos": lambda: Perceptron(max_epochs=2, update="ada-fobos", random_state=0),
    "nag": lambda: Perceptron(max_epochs=2, update="nag", random_state=0),
    "averaged": lambda: AveragedPerceptron(max_epochs=3, random_state=0),
    "averaged-pa-ii": lambda: AveragedPerceptron(max_epochs=2, update="pa-ii", random_state=0),
    "averaged-nag": lambda: AveragedPerceptron(max_epochs=2, update="nag", random_state=0),
    # FTRL's weights are a function of z and n, which change only on x's rows.
    "ftrl": lambda: Perceptron(max_epochs=2, update="ftrl", random_state=0),
    "averaged-ftrl": lambda: AveragedPerceptron(
        max_epochs=2, update="ftrl", update_params={"l1": 0.1, "l2": 0.5}, random_state=0
    ),
    "logistic": lambda: LogisticRegressionSGD(max_epochs=2, random_state=0),
    "logistic-averaged": lambda: LogisticRegressionSGD(
        max_epochs=2, average=True, l2=1e-4, random_state=0
    ),
}


@st.composite
def problems(draw):
    """Hashed-text-like data: counts over many features, each row using few of them;
    the later rows reach features the first ones do not."""
    n_classes = draw(st.sampled_from([2, 3, 5]))
    n = draw(st.integers(n_classes * 4, 40))
    d = draw(st.integers(5, 80))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    X = rng.poisson(0.3, size=(n, d)) * rng.choice([1.0, 0.5, -2.0], size=(n, d))
    # Each third of the examples reaches one more third of the features.
    for part, rows in enumerate(np.array_split(np.arange(n), 3)):
        X[rows, (part + 1) * d // 3 :] = 0.0
    y = rng.integers(0, n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)
    weights = rng.choice([0.0, 0.5, 1.0, 3.0], size=n) if draw(st.booleans()) else None
    return sp.csr_matrix(X), y, weights


def _pair(name, touched=True):
    compact, dense = COMPACT[name](), COMPACT[name]()
    compact._touched_rows, dense._touched_rows = touched, False
    return compact, dense


def _assert_same(compact, dense, X):
    """The same model published, scores and, expanded, the same state bit for bit."""
    assert isinstance(compact._lifecycle, CompactState)
    assert sp.issparse(compact.coef_) and isinstance(dense.coef_, np.ndarray)
    assert_array_equal(compact.coef_.toarray(), dense.coef_)
    assert_array_equal(compact.intercept_, dense.intercept_)
    assert_array_equal(compact.decision_function(X), dense.decision_function(X))
    expanded = copy.deepcopy(compact).densify()._lifecycle
    for key, array in dense._lifecycle.arrays().items():
        assert expanded.arrays()[key].tobytes() == array.tobytes(), key
    assert expanded.values() == dense._lifecycle.values()


@settings(max_examples=60, deadline=None)
@given(problems(), st.sampled_from(sorted(COMPACT)))
def test_fit_in_touched_rows_is_the_dense_fit(problem, name):
    X, y, weights = problem
    compact, dense = _pair(name)
    compact.fit(X, y, sample_weight=weights)
    dense.fit(X, y, sample_weight=weights)
    _assert_same(compact, dense, X)


@settings(max_examples=40, deadline=None)
@given(problems(), st.sampled_from(sorted(COMPACT)), st.booleans())
def test_partial_fit_batches_reaching_new_rows(problem, name, table):
    X, y, weights = problem
    compact, dense = _pair(name)
    classes = np.unique(y)
    # The rows renumbered by the table of positions, or by binary search (a width too
    # wide for the table).
    searched = mock.patch.object(CompactState, "_positions", lambda self: None)
    with contextlib.nullcontext() if table else searched:
        for rows in np.array_split(np.arange(X.shape[0]), 3):
            w = None if weights is None else weights[rows]
            compact.partial_fit(X[rows], y[rows], classes=classes, sample_weight=w)
            dense.partial_fit(X[rows], y[rows], classes=classes, sample_weight=w)
            _assert_same(compact, dense, X)
    if "warm_start" in compact.get_params():  # a warm-started fit goes on from it too
        compact.set_params(warm_start=True).fit(X, y)
        dense.set_params(warm_start=True).fit(X, y)
        _assert_same(compact, dense, X)


@pytest.mark.parametrize("name", ["averaged", "logistic-averaged", "nag"])
def test_dense_input_continues_on_the_dense_state(name):
    X, y, _ = _problem()
    compact, dense = _pair(name)
    compact.fit(X, y)
    dense.fit(X, y)
    compact.partial_fit(X.toarray(), y)  # dense input: the state becomes dense
    dense.partial_fit(X.toarray(), y)
    assert isinstance(compact._lifecycle, type(dense._lifecycle))
    assert_array_equal(compact.coef_, dense.coef_)
    for key, array in dense._lifecycle.arrays().items():
        assert compact._lifecycle.arrays()[key].tobytes() == array.tobytes()


def _problem(n=60, d=90, n_classes=3, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.2, size=(n, d)) * rng.choice([1.0, -0.5], size=(n, d))
    y = rng.integers(0, n_classes, size=n)
    return sp.csr_matrix(X), y, None


def test_a_model_file_keeps_the_compact_state(tmp_path):
    X, y, _ = _problem()
    compact, dense = _pair("averaged")
    compact.fit(X, y)
    dense.fit(X, y)
    path = save(compact, tmp_path / "compact.npz")
    loaded = load(path)
    assert isinstance(loaded._lifecycle, CompactState)
    assert_array_equal(loaded.coef_.toarray(), dense.coef_)
    loaded._touched_rows = True  # (left to the size rule, this small state goes dense)
    loaded.partial_fit(X, y)  # no densify(): it trains on
    dense.partial_fit(X, y)
    _assert_same(loaded, dense, X)


def test_stream_batches_train_the_compact_state(tmp_path):
    from perceptrons.io.stream import fit_stream

    X, y, _ = _problem()
    path = tmp_path / "data.svm"
    from sklearn.datasets import dump_svmlight_file

    dump_svmlight_file(X, y, str(path), zero_based=True)
    compact, dense = _pair("averaged")
    for model in (compact, dense):
        fit_stream(
            model,
            path,
            epochs=2,
            chunk_size=16,
            n_features=X.shape[1],
            zero_based=True,
            random_state=0,
        )
    _assert_same(compact, dense, X)


def test_the_size_rule_decides_alone():
    X, y, _ = _problem()
    # Small: the dense state, as before.
    assert isinstance(AveragedPerceptron(max_epochs=1).fit(X, y).coef_, np.ndarray)
    wide = sp.csr_matrix((X.data, X.indices * 5000, X.indptr), shape=(X.shape[0], 2**20))
    model = AveragedPerceptron(max_epochs=1).fit(wide, y)
    assert isinstance(model._lifecycle, CompactState) and sp.issparse(model.coef_)
    assert model._lifecycle.rows.shape[0] <= X.shape[1] + 1
    # Rules whose epochs reach other rows, and dense input, stay dense.
    assert isinstance(Perceptron(max_epochs=1, update="romma").fit(wide, y).coef_, np.ndarray)
    assert isinstance(Perceptron(max_epochs=1, update="arow").fit(wide, y).coef_, np.ndarray)


def test_a_hashed_width_trains_in_little_memory():
    # 2**22 features x 20 classes, averaged: 1.3 GB dense, which a 64 MB budget refuses.
    code = (
        "import numpy as np, scipy.sparse as sp\n"
        "from perceptrons import AveragedPerceptron\n"
        "rng = np.random.default_rng(0)\n"
        "indices = rng.integers(0, 2**22, size=400 * 8)\n"
        "X = sp.csr_matrix((np.ones(400 * 8), indices, np.arange(0, 401 * 8, 8)),"
        " shape=(400, 2**22))\n"
        "y = np.arange(400) % 20\n"
        "model = AveragedPerceptron(max_epochs=2, random_state=0).fit(X, y)\n"
        "model.partial_fit(X[:10], y[:10])\n"
        "print(type(model.coef_).__name__, model.coef_.shape)\n"
    )
    done = _child(["-c", code], limit="64M")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["csr_matrix", "(20,", "4194304)"]


@pytest.mark.parametrize("columns", [1, 3])
def test_widened_and_without_first_row(columns):
    rng = np.random.default_rng(0)
    shape = (9,) if columns == 1 else (9, columns)
    weights = np.where(rng.random(shape) < 0.4, rng.normal(size=shape), 0.0)
    weights[0] = 0.0  # row 0: all zeros, as a 1-based svmlight file leaves it
    state = PerceptronState(weights, 2 * weights, count=3)
    compact = CompactState.of(state)
    wider = compact.widened(12).expand()
    assert_array_equal(wider.weights[:8], weights[:8])
    assert not wider.weights[8:11].any()
    assert_array_equal(wider.weights[11], weights[8])
    held = compact.rows.shape[0]
    padded = compact._with_rows(np.append(np.int64(0), compact.rows), np.arange(1, held + 1))
    for held in (compact, padded):
        fewer = held.without_first_row().expand()
        assert_array_equal(fewer.weights, weights[1:])
        assert_array_equal(fewer.aux, 2 * weights[1:])
        assert fewer.count == 3


def test_a_refused_call_leaves_the_compact_state_as_it_was():
    X, y, _ = _problem()
    model = COMPACT["averaged"]()
    model._touched_rows = True
    first = X[:, :30]  # the later batch reaches rows the state does not hold yet
    model.fit(sp.csr_matrix((first.data, first.indices, first.indptr), shape=X.shape), y)
    before = copy.deepcopy(model._lifecycle)
    coef = model.coef_.copy()
    huge = X.copy()
    huge.data[:] = 1e308
    with pytest.raises(ValueError, match="non-finite"):
        model.partial_fit(huge, y)
    assert isinstance(model._lifecycle, CompactState)
    assert_array_equal(model._lifecycle.rows, before.rows)
    for key, array in before.state.arrays().items():
        assert model._lifecycle.state.arrays()[key].tobytes() == array.tobytes()
    assert model._lifecycle.state.values() == before.state.values()
    assert (model.coef_ != coef).nnz == 0


def test_hashed_batches_stay_in_their_rows():
    X, y, _ = _problem()
    wide = sp.csr_matrix((X.data, X.indices * 5000, X.indptr), shape=(X.shape[0], 2**20))
    model = AveragedPerceptron(random_state=0)
    dense = AveragedPerceptron(random_state=0)
    dense._touched_rows = False
    for rows in np.array_split(np.arange(X.shape[0]), 4):
        model.partial_fit(wide[rows], y[rows], classes=np.unique(y))
        dense.partial_fit(wide[rows], y[rows], classes=np.unique(y))
        assert isinstance(model._lifecycle, CompactState)
    assert_array_equal(model.coef_.toarray(), dense.coef_)


def test_held_out_examples_score_the_compact_model():
    # Early stopping scores the published (CSR) model on the caller's columns.
    X, y, _ = _problem(n=80)
    models = [
        Perceptron(early_stopping=True, validation_fraction=0.25, max_epochs=4, random_state=0)
        for _ in range(2)
    ]
    models[0]._touched_rows, models[1]._touched_rows = True, False
    for model in models:
        model.fit(X, y)
    assert [r["validation_score"] for r in models[0].history_] == [
        r["validation_score"] for r in models[1].history_
    ]
    _assert_same(models[0], models[1], X)
