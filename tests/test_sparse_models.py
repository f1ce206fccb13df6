"""Models that stay small: a model trained sparse (an L1 penalty leaves most weights at
exactly 0) is saved as its nonzeros and, saved to predict only (``resumable=False``),
loaded as them -- ``coef_`` a CSR matrix, the dense ``n_features x n_classes`` arrays
never formed -- predicting bit for bit as the model it was."""

import os

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

from perceptrons import Perceptron
from perceptrons.io.persist import describe, load, save
from perceptrons.linear._update_rules import RULES

#: The rules with an every-round penalty (their sparse models), with it on.
PENALIZED = [name for name, rule in RULES.items() if rule.penalty is not None]


def _text_like(n_classes, n=80, d=4000, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=12 / d, random_state=seed, format="csr")
    y = rng.integers(0, n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)
    return X, y


def _sparse_model(rule, n_classes, l1=0.005):
    X, y = _text_like(n_classes)
    params = {RULES[rule].penalty: l1}
    model = Perceptron(update=rule, update_params=params, max_epochs=3, random_state=0)
    return model.fit(X, y), X, y


@pytest.mark.parametrize("rule", PENALIZED)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_sparse_model_saved_to_predict_loads_as_its_nonzeros(rule, n_classes, tmp_path):
    model, X, _ = _sparse_model(rule, n_classes)
    coef = model.coef_
    assert isinstance(coef, np.ndarray)  # a penalized rule trains the dense state
    nonzero = np.count_nonzero(coef)
    assert 0 < nonzero < coef.size / 4
    path = save(model, tmp_path / "m.npz", resumable=False)
    assert describe(path)["sparse_arrays"]["weights"] == nonzero + np.count_nonzero(
        model.intercept_
    )
    for loaded in (load(path), load(path, sparse=True), load(path, core=True)):
        assert isinstance(loaded.coef_, sp.csr_matrix) and loaded.coef_.nnz == nonzero
        assert loaded.coef_.toarray().tobytes() == coef.tobytes()
        assert loaded.intercept_.tobytes() == model.intercept_.tobytes()
        for data in (X, X.toarray()):
            assert_array_equal(loaded.decision_function(data), model.decision_function(data))
            assert_array_equal(loaded.predict(data), model.predict(data))
        assert not loaded.resumable
    # Saved again, it stays what it is.
    again = load(save(load(path), tmp_path / "again.npz"))
    assert isinstance(again.coef_, sp.csr_matrix)
    assert_array_equal(again.decision_function(X), model.decision_function(X))


def _nonzeros(coef):
    return coef.nnz if sp.issparse(coef) else int(np.count_nonzero(coef))


def test_the_sparse_models_file_and_memory_follow_its_nonzeros(tmp_path):
    """Against the same rule without the penalty, on the same data: the file shrinks
    with the nonzeros, and the loaded model holds no array of the dense model's size (a
    resumable file keeps the statistics, which follow the features seen)."""
    dense = _sparse_model("ada-fobos", 3, l1=0.0)[0]
    sparse = _sparse_model("ada-fobos", 3, l1=0.05)[0]
    assert _nonzeros(sparse.coef_) < _nonzeros(dense.coef_) / 4
    sizes = {}
    for name, model in (("dense", dense), ("sparse", sparse)):
        sizes[name] = os.path.getsize(save(model, tmp_path / f"{name}.npz", resumable=False))
    assert sizes["sparse"] < sizes["dense"]
    assert os.path.getsize(save(sparse, tmp_path / "resumable.npz")) > sizes["sparse"]
    loaded = load(tmp_path / "sparse.npz")
    full = sparse.coef_.size
    arrays = [v for v in vars(loaded).values() if isinstance(v, np.ndarray)]
    assert all(array.size < full / 4 for array in arrays)
    assert loaded.coef_.data.nbytes + loaded.coef_.indices.nbytes <= 12 * loaded.coef_.nnz


def test_a_dense_model_saved_to_predict_stays_dense(tmp_path):
    """Weights that are mostly nonzero are stored dense, and load dense."""
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(40, 6)), rng.integers(0, 3, size=40)
    model = Perceptron(update="ada-fobos", random_state=0).fit(X, y)
    path = save(model, tmp_path / "m.npz", resumable=False)
    assert describe(path)["sparse_arrays"] == {}
    loaded = load(path)
    assert isinstance(loaded.coef_, np.ndarray)
    assert_array_equal(loaded.coef_, model.coef_)
