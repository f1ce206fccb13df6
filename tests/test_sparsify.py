"""``sparsify()`` / ``densify()``: sparse ``coef_``, predictions unchanged bit for bit.

The oracle is the dense model itself: a sparsified model must predict exactly (not
within a tolerance) as it did, on dense, CSR and CSC input, binary and multiclass; and
``densify()`` must give back the exact training state, so that training continues as
if the model had never been sparsified.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from perceptrons import (
    AveragedPerceptron,
    BernoulliNaiveBayes,
    LogisticRegressionSGD,
    MultinomialNaiveBayes,
    Perceptron,
    VotedPerceptron,
)
from perceptrons._linear import dense_coef, linear_scores
from perceptrons._states import CompactState, LogisticState, PerceptronState

FACTORIES = {
    "perceptron": lambda: Perceptron(max_epochs=3, random_state=0),
    "perceptron-delta": lambda: Perceptron(max_epochs=3, delta=0.5, random_state=0),
    "averaged": lambda: AveragedPerceptron(max_epochs=3, random_state=0),
    "averaged-pa": lambda: AveragedPerceptron(max_epochs=2, update="pa", random_state=0),
    "averaged-romma": lambda: AveragedPerceptron(max_epochs=2, update="romma", random_state=0),
    "perceptron-aggressive-romma": lambda: Perceptron(
        max_epochs=2, update="aggressive-romma", random_state=0
    ),
    "averaged-arow": lambda: AveragedPerceptron(max_epochs=2, update="arow", random_state=0),
    "perceptron-arow-full": lambda: Perceptron(
        max_epochs=2, update="arow", covariance="full", random_state=0
    ),
    # Statistics by row that start at zero, kept by row when compact; with l1 a weight
    # is zero where its sums are not.
    "perceptron-ada-rda": lambda: Perceptron(
        max_epochs=2, update="ada-rda", update_params={"l1": 0.05}, random_state=0
    ),
    "logistic": lambda: LogisticRegressionSGD(max_epochs=2, random_state=0),
    "logistic-averaged": lambda: LogisticRegressionSGD(
        max_epochs=2, average=True, l2=0.01, random_state=0
    ),
    "multinomial-nb": lambda: MultinomialNaiveBayes(),
    "bernoulli-nb": lambda: BernoulliNaiveBayes(),
}
ONLINE = [name for name in FACTORIES if not name.endswith("-nb")]


@st.composite
def problems(draw):
    """Hashed-text-like data: counts, many features, each row using few of them."""
    n_classes = draw(st.sampled_from([2, 3, 5]))
    n = draw(st.integers(n_classes * 4, 40))
    d = draw(st.integers(5, 80))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.3, size=(n, d)).astype(np.float64) * rng.choice([1.0, 0.5], size=(n, d))
    y = rng.integers(0, n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)
    return X, y


def _outputs(model, X):
    outputs = [model.decision_function(X), model.predict(X)]
    if hasattr(model, "predict_proba"):
        outputs += [model.predict_proba(X), model.predict_log_proba(X)]
    return outputs


@settings(max_examples=40)
@given(problems(), st.sampled_from(sorted(FACTORIES)), st.booleans())
def test_sparsify_predicts_bit_for_bit(problem, name, sparse_training):
    X, y = problem
    model = FACTORIES[name]().fit(sp.csr_matrix(X) if sparse_training else X, y)
    inputs = [X, sp.csr_matrix(X), sp.csc_matrix(X)]
    before = [_outputs(model, data) for data in inputs]
    coef = np.array(model.coef_)
    assert model.sparsify() is model
    assert isinstance(model.coef_, sp.csr_matrix)
    assert model.coef_.shape == coef.shape
    assert_array_equal(model.coef_.toarray(), coef)
    assert model.coef_.nnz == np.count_nonzero(coef)
    for data, expected in zip(inputs, before, strict=True):
        for got, want in zip(_outputs(model, data), expected, strict=True):
            assert_array_equal(got, want)  # exact: no tolerance
    assert model.densify() is model
    assert isinstance(model.coef_, np.ndarray)
    assert_array_equal(model.coef_, coef)
    for data, expected in zip(inputs, before, strict=True):
        for got, want in zip(_outputs(model, data), expected, strict=True):
            assert_array_equal(got, want)


@settings(max_examples=25)
@given(problems(), st.sampled_from(sorted(FACTORIES)))
def test_densify_continues_training_exactly(problem, name):
    X, y = problem
    half = len(y) // 2
    plain = FACTORIES[name]().fit(X[:half], y[:half])
    round_trip = copy.deepcopy(plain).sparsify().densify()
    plain.partial_fit(X[half:], y[half:])
    round_trip.partial_fit(X[half:], y[half:])
    assert_array_equal(round_trip.coef_, plain.coef_)
    assert_array_equal(round_trip.intercept_, plain.intercept_)
    assert_array_equal(round_trip.decision_function(X), plain.decision_function(X))


@pytest.mark.parametrize("name", ONLINE)
def test_a_sparsified_online_model_trains_on_without_densify(name):
    # Its compact state trains on (in its rows, or dense again for dense input), as
    # densify() then training would.
    X, y = _fixed_problem()
    model = FACTORIES[name]().fit(X, y).sparsify()
    densified = copy.deepcopy(model).densify()
    model.partial_fit(X, y)
    densified.partial_fit(X, y)
    coef = dense_coef(model.coef_) if sp.issparse(model.coef_) else model.coef_
    assert_array_equal(coef, densified.coef_)
    assert_array_equal(model.intercept_, densified.intercept_)


@pytest.mark.parametrize("name", sorted(set(FACTORIES) - set(ONLINE)))
def test_training_a_sparse_model_needs_densify(name):
    X, y = _fixed_problem()
    model = FACTORIES[name]().fit(X, y).sparsify()
    with pytest.raises(ValueError, match=r"coef_ is sparse .*call densify\(\)"):
        model.partial_fit(X, y)
    assert isinstance(model.coef_, sp.csr_matrix)  # a refused call changes nothing
    if "warm_start" in model.get_params():
        with pytest.raises(ValueError, match="densify"):
            model.set_params(warm_start=True).fit(X, y)
        model.set_params(warm_start=False)
    # A fit without warm start starts afresh: a dense model, as a new estimator's.
    fresh = FACTORIES[name]().fit(X, y)
    model.fit(X, y)
    assert isinstance(model.coef_, np.ndarray)
    assert_array_equal(model.coef_, fresh.coef_)
    model.partial_fit(X, y)  # and it trains on


def _fixed_problem(n_classes=3, n=40, d=60, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.2, size=(n, d)).astype(np.float64)
    y = rng.integers(0, n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)
    return X, y


@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("n_classes", [2, 4])
def test_threshold_prunes_small_weights(name, n_classes):
    X, y = _fixed_problem(n_classes)
    X = (X > 0).astype(np.float64)  # what BernoulliNaiveBayes scores: the same for all
    model = FACTORIES[name]().fit(X, y)
    coef = np.array(model.coef_)
    threshold = float(np.quantile(np.abs(coef[coef != 0]), 0.5))
    model.sparsify(threshold=threshold)
    kept = np.where(np.abs(coef) > threshold, coef, 0.0)
    assert_array_equal(model.coef_.toarray(), kept)
    assert np.all(np.abs(model.coef_.data) > threshold)
    scores = model.decision_function(X)
    expected = linear_scores(X, kept, model.intercept_)
    np.testing.assert_allclose(scores, expected.ravel() if n_classes == 2 else expected, 1e-12)
    # The pruned weights are the model now: densify keeps them, training needs a new fit.
    model.densify()
    assert_array_equal(model.coef_, kept)
    assert_array_equal(model.decision_function(X), scores)
    with pytest.raises(ValueError, match=r"pruned by sparsify\(threshold=.*call fit"):
        model.partial_fit(X, y)
    model.fit(X, y)
    model.partial_fit(X, y)


@pytest.mark.parametrize("name", ONLINE)
def test_threshold_below_every_weight_is_exact(name):
    X, y = _fixed_problem()
    model = FACTORIES[name]().fit(X, y)
    smallest = np.abs(model.coef_[model.coef_ != 0]).min()
    expected = copy.deepcopy(model).partial_fit(X, y)
    model.sparsify(threshold=smallest / 2).densify().partial_fit(X, y)
    assert_array_equal(model.coef_, expected.coef_)


@pytest.mark.parametrize("threshold", [-1.0, float("nan"), float("inf"), "0.1", None, True])
def test_bad_threshold(threshold):
    X, y = _fixed_problem()
    model = AveragedPerceptron(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="threshold must be a finite number"):
        model.sparsify(threshold=threshold)
    assert isinstance(model.coef_, np.ndarray)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_unfitted(name):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        FACTORIES[name]().sparsify()
    with pytest.raises(NotFittedError):
        FACTORIES[name]().densify()


def test_densify_of_a_dense_model_and_sparsify_twice_change_nothing():
    X, y = _fixed_problem()
    model = AveragedPerceptron(random_state=0).fit(X, y)
    coef = model.coef_
    assert model.densify().coef_ is coef
    once = model.sparsify().coef_.copy()
    model.sparsify()
    assert (model.coef_ != once).nnz == 0
    expected = AveragedPerceptron(random_state=0).fit(X, y).partial_fit(X, y)
    model.densify().partial_fit(X, y)
    assert_array_equal(model.coef_, expected.coef_)


def test_sparsified_model_memory_follows_its_nonzeros():
    # Hashed-text-like: 2**16 features of which each example uses a handful.
    rng = np.random.default_rng(0)
    n, d = 200, 2**16
    X = sp.random(n, d, density=20 / d, random_state=1, format="csr")
    y = rng.integers(0, 10, size=n)
    model = AveragedPerceptron(max_epochs=2, random_state=0).fit(X, y)
    dense_bytes = model._state.weights.nbytes + model._state.aux.nbytes + model.coef_.nbytes
    model.sparsify()
    compact = model._lifecycle
    assert isinstance(compact, CompactState)
    assert model._state is compact.state  # what trains on: the rows alone
    held = compact.nbytes + sum(
        a.nbytes for a in (model.coef_.data, model.coef_.indices, model.coef_.indptr)
    )
    assert held < dense_bytes / 20
    assert model.resumable  # the compact state is exact
    model.sparsify(threshold=1e-12)  # prunes nothing of an integer-valued model...
    assert model.resumable
    model.sparsify(threshold=1e6)  # ...this prunes every weight
    assert model.coef_.nnz == 0 and not model.resumable


@pytest.mark.parametrize("state_class", [PerceptronState, LogisticState])
@pytest.mark.parametrize("shape", [(7,), (7, 3)])
def test_compact_state_round_trip_is_exact(state_class, shape):
    rng = np.random.default_rng(0)
    weights = rng.normal(size=shape)
    weights[[1, 2, 4]] = 0.0
    weights[2] = -0.0  # a negative zero must come back as one
    aux = np.where(weights != 0, rng.normal(size=shape), 0.0)
    aux[3] = 0.0
    state = state_class(weights=weights, aux=aux, count=5)
    if isinstance(state, LogisticState):
        state.scales[:] = (0.5, 3.0)
    compact = CompactState.of(copy.deepcopy(state))
    assert compact.rows.tolist() == [0, 2, 3, 5, 6]  # row 6: the intercept, always kept
    back = compact.expand()
    for field in dataclasses.fields(state):
        got, want = getattr(back, field.name), getattr(state, field.name)
        if isinstance(want, np.ndarray):
            assert got.tobytes() == want.tobytes()
        else:
            assert got == want
    model = state.model()
    coef, intercept = compact.published()
    full = model if model.ndim == 2 else model[:, np.newaxis]
    assert_array_equal(coef.toarray(), full[:-1].T)
    assert_array_equal(intercept, full[-1])


def test_voted_perceptron_has_no_sparsify():
    # Its prediction is a vote over every intermediate model (or a kernel expansion),
    # not one linear function: its coef_ is a read-only view of the last model.
    assert not hasattr(VotedPerceptron(), "sparsify")


# ------------------------------------------------- the batch logistic regression
@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("threshold", [0.0, 0.05])
def test_batch_logistic_sparsify_and_model_files(n_classes, threshold, tmp_path):
    """LogisticRegressionBatch has the same sparsify/densify: exact at threshold 0, and
    a sparsified model saves its nonzeros and loads sparsified, predicting the same."""
    from perceptrons import LogisticRegressionBatch, load, save

    X, y = _fixed_problem(n_classes)
    model = LogisticRegressionBatch(l2=0.05).fit(X, y)
    dense_coef, inputs = np.array(model.coef_), [X, sp.csr_matrix(X)]
    dense_file = save(model, tmp_path / "dense.npz")
    before = [_outputs(model, data) for data in inputs]
    assert model.sparsify(threshold=threshold) is model
    assert isinstance(model.coef_, sp.csr_matrix)
    kept = np.where(np.abs(dense_coef) > threshold, dense_coef, 0.0)
    assert_array_equal(model.coef_.toarray(), kept)
    assert model.coef_.nnz == np.count_nonzero(kept) < dense_coef.size or threshold == 0
    if threshold == 0:
        for data, expected in zip(inputs, before, strict=True):
            for got, want in zip(_outputs(model, data), expected, strict=True):
                assert_array_equal(got, want)
    sparse_outputs = [_outputs(model, data) for data in inputs]
    loaded = load(save(model, tmp_path / "sparse.npz"))
    assert isinstance(loaded.coef_, sp.csr_matrix)
    assert_array_equal(loaded.coef_.toarray(), kept)
    assert_array_equal(loaded.intercept_, model.intercept_)
    for data, expected in zip(inputs, sparse_outputs, strict=True):
        for got, want in zip(_outputs(loaded, data), expected, strict=True):
            assert_array_equal(got, want)
    # densify gives the array back; saved again it is the same model, stored dense.
    assert isinstance(model.densify().coef_, np.ndarray)
    assert_array_equal(model.coef_, kept)
    assert_array_equal(load(save(model, tmp_path / "again.npz")).coef_, kept)
    assert_array_equal(load(dense_file).coef_, dense_coef)
    # A fit starts afresh from zero, whatever was sparsified or pruned.
    fresh = LogisticRegressionBatch(l2=0.05).fit(X, y)
    assert_array_equal(loaded.fit(X, y).coef_, fresh.coef_)


def test_sparse_scores_check_indices_before_the_kernel():
    """The compiled product of sparse rows and sparse weights reads only checked
    indices: a coef_ whose index arrays leave its shape is a ValueError, not a crash."""
    X, y = _fixed_problem()
    model = AveragedPerceptron(random_state=0).fit(X, y)
    expected = model.decision_function(sp.csr_matrix(X.astype(np.float32)))
    model.sparsify()
    assert_array_equal(model.decision_function(sp.csr_matrix(X.astype(np.float32))), expected)
    broken = model.coef_.copy()
    broken.indices[-1] = X.shape[1] + 5  # past the last feature
    with pytest.raises(ValueError, match="do not fit its shape"):
        linear_scores(sp.csr_matrix(X), broken, model.intercept_)


@pytest.mark.parametrize("n_classes", [2, 4])
def test_few_weights_among_many_features_score_bit_for_bit(n_classes):
    """The product on the features holding a weight (renumbered; every other feature of
    X to an empty row) adds the same terms in the same order as the dense model's."""
    rng = np.random.default_rng(0)
    width = 50_000
    X = sp.random(80, width, density=3e-4, random_state=2, format="csr")
    X.data = rng.standard_normal(X.data.shape[0])
    columns = rng.choice(X.indices, size=30, replace=False)
    coef = np.zeros((1 if n_classes == 2 else n_classes, width))
    coef[:, columns] = rng.standard_normal((coef.shape[0], 30))
    coef[0, columns[0]] = -0.0
    intercept = rng.standard_normal(coef.shape[0])
    expected = linear_scores(X, coef, intercept)
    assert_array_equal(linear_scores(X, sp.csr_matrix(coef), intercept), expected)
    assert_array_equal(
        linear_scores(X, sp.csr_matrix((coef.shape[0], width)), intercept), 0 * expected + intercept
    )


def test_loading_sparse_never_forms_the_dense_weights(tmp_path):
    """A hashed model loaded sparse takes what its nonzeros take: its weights and average
    are gathered on their rows, never expanded to the dense (n_features + 1) x classes
    arrays first (each would be 96 MiB here)."""
    import tracemalloc

    import scipy.sparse as sp

    from perceptrons import AveragedPerceptron, load, save

    rng = np.random.RandomState(0)
    width = 2**22
    X = sp.random(60, width, density=4e-6, random_state=rng, format="csr")
    y = rng.randint(0, 3, 60)
    path = save(AveragedPerceptron(max_epochs=2, random_state=0).fit(X, y), tmp_path / "m.npz")
    tracemalloc.start()
    try:
        model = load(path, sparse=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sp.issparse(model.coef_)
    dense = (width + 1) * 3 * 8
    assert peak < dense / 4, f"loading took {peak:,} bytes at its peak"
    np.testing.assert_array_equal(model.predict(X), load(path).predict(X))
