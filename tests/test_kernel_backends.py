"""The kernel perceptron's products through the array API: every block size and every
backend makes the same mistakes, keeps the same support vectors and gives the same
votes where the arithmetic is exact; the kernel blocks equal scikit-learn's kernels.

CI checks the namespaces with NumPy and ``array-api-strict`` (the standard's reference,
which refuses anything the standard does not define); PyTorch runs where it is
installed (its CUDA devices where there is one), never required.
"""

import array_api_strict as strict
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

from perceptrons import BudgetPerceptron, VotedPerceptron, load, save
from perceptrons.kernel import _gram
from perceptrons.kernel import voted as voted_core

RULES = ["vote", "average", "last", "random"]
TOL = {"rtol": 1e-12, "atol": 1e-12}


def _torch_devices() -> list[str]:
    try:
        import torch
    except ImportError:
        return []
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@st.composite
def exact_problems(draw):
    """Small integer features: every kernel value and every sum of them is an exact
    float, so the order of a matrix product's additions cannot change a decision."""
    k = draw(st.integers(2, 4))
    n = draw(st.integers(k, 40))
    d = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    X = rng.integers(-2, 3, size=(n, d)).astype(np.float64)
    y = np.concatenate([np.arange(k), rng.integers(0, k, size=n - k)])
    rng.shuffle(y)
    return X, y


def _same_model(a: VotedPerceptron, b: VotedPerceptron, X: np.ndarray) -> None:
    assert a.history_ == b.history_
    assert_array_equal(a._updates.view, b._updates.view)
    assert_array_equal(a._alpha.view, b._alpha.view)
    assert_array_equal(a.intercept_, b.intercept_)
    assert_array_equal(a.support_vectors_, b.support_vectors_)
    for rule in RULES:
        a.set_params(prediction=rule)
        b.set_params(prediction=rule)
        assert_array_equal(a.decision_function(X), b.decision_function(X))
        assert_array_equal(
            np.stack(list(a.staged_decision_function(X))),
            np.stack(list(b.staged_decision_function(X))),
        )


@settings(max_examples=30, deadline=None)
@given(
    exact_problems(),
    st.integers(1, 4),
    st.sampled_from(["native", "ovr"]),
    st.booleans(),
    st.sampled_from([0.0, 1.0]),
    st.integers(0, 2**16),
    st.booleans(),
)
def test_every_block_size_and_backend_makes_the_same_model(
    problem, degree, multiclass, fit_intercept, delta, seed, weighted
):
    X, y = problem
    # Small integer weights (0 included: as if absent) keep every vote and step exact.
    weights = np.random.default_rng(seed).integers(0, 4, size=len(y)) if weighted else None
    params = {
        "kernel": "poly",
        "degree": degree,
        "gamma": 1.0,
        "coef0": 1.0,
        "multiclass": multiclass,
        "fit_intercept": fit_intercept,
        "delta": delta,
        "max_epochs": 3,
        "random_state": seed,
    }
    reference = VotedPerceptron(batch_size=1, **params).fit(X, y, sample_weight=weights)
    for batch_size in (2, 7, "auto", 1000):
        model = VotedPerceptron(batch_size=batch_size, **params)
        _same_model(model.fit(X, y, sample_weight=weights), reference, X)
    # The array API's reference namespace: training and prediction on its arrays.
    on_strict = VotedPerceptron(batch_size=5, **params)
    on_strict.fit(strict.asarray(X), y, sample_weight=weights)
    _same_model(on_strict, reference, X)
    for rule in RULES:
        # Predicted on its arrays: the kernel values and (binary sequences) the prefix
        # sums of every stage formed there, only the scores coming back.
        on_strict.set_params(prediction=rule)
        assert_array_equal(
            on_strict.decision_function(strict.asarray(X)), on_strict.decision_function(X)
        )
        assert_array_equal(
            np.stack(list(on_strict.staged_decision_function(strict.asarray(X)))),
            np.stack(list(on_strict.staged_decision_function(X))),
        )
    for device in _torch_devices():
        on_torch = VotedPerceptron(batch_size=5, device=device, **params)
        _same_model(on_torch.fit(X, y, sample_weight=weights), reference, X)


@settings(max_examples=20, deadline=None)
@given(exact_problems(), st.integers(0, 2**16))
def test_the_cache_of_kernel_columns_changes_nothing(problem, seed):
    X, y = problem
    params = {"kernel": "poly", "degree": 3, "gamma": 1.0, "max_epochs": 4, "random_state": seed}
    reference = VotedPerceptron(cache_size=0, **params).fit(X, y)
    # A cache with room for a few columns only, and one with room for all of them.
    few = 3 * 8 * X.shape[0] / 2**20
    for cache_size in (few, 256):
        _same_model(VotedPerceptron(cache_size=cache_size, **params).fit(X, y), reference, X)
        on_strict = VotedPerceptron(cache_size=cache_size, **params).fit(strict.asarray(X), y)
        _same_model(on_strict, reference, X)


def test_rbf_models_are_the_same_for_every_block_size():
    rng = np.random.default_rng(0)
    X = rng.integers(-2, 3, size=(60, 4)).astype(np.float64)
    y = rng.integers(0, 3, size=60)
    params = {"kernel": "rbf", "gamma": 0.25, "max_epochs": 3, "random_state": 0}
    reference = VotedPerceptron(batch_size=1, **params).fit(X, y)
    for batch_size in (4, "auto"):
        _same_model(VotedPerceptron(batch_size=batch_size, **params).fit(X, y), reference, X)
    # Another library's exp rounds its own way: equal to rounding, not bit for bit.
    on_strict = VotedPerceptron(**params).fit(strict.asarray(X), y)
    assert on_strict.history_ == reference.history_
    for rule in RULES:
        on_strict.set_params(prediction=rule)
        reference.set_params(prediction=rule)
        assert_allclose(on_strict.decision_function(X), reference.decision_function(X), **TOL)


def test_partial_fit_on_a_backend_continues_the_host_model():
    rng = np.random.default_rng(1)
    X = rng.integers(-2, 3, size=(80, 5)).astype(np.float64)
    y = rng.integers(0, 3, size=80)
    params = {"kernel": "poly", "degree": 2, "gamma": 1.0, "random_state": 0}
    host = VotedPerceptron(**params)
    mixed = VotedPerceptron(**params)
    for part in np.array_split(np.arange(80), 4):
        host.partial_fit(X[part], y[part], classes=[0, 1, 2])
        batch = X[part] if part[0] % 2 else strict.asarray(X[part])
        mixed.partial_fit(batch, y[part], classes=[0, 1, 2])
    _same_model(mixed, host, X)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(
    ("kernel", "expected"),
    [
        ({"kernel": "linear"}, lambda A, B: linear_kernel(A, B)),
        *[
            (
                {"kernel": "poly", "degree": d, "gamma": 0.3, "coef0": 0.7},
                lambda A, B, d=d: polynomial_kernel(A, B, degree=d, gamma=0.3, coef0=0.7),
            )
            for d in range(1, 7)
        ],
        ({"kernel": "rbf", "gamma": 0.2}, lambda A, B: rbf_kernel(A, B, gamma=0.2)),
    ],
)
def test_kernel_blocks_equal_scikit_learns_kernels(kernel, expected, sparse):
    rng = np.random.default_rng(2)
    A, B = rng.normal(size=(7, 5)), rng.normal(size=(9, 5))
    params = {"degree": 3, "gamma": 1.0, "coef0": 1.0, **kernel}
    matrix = _gram.KernelMatrix(
        params["kernel"], params["degree"], params["gamma"], params["coef0"]
    )
    given_a, given_b = (sp.csr_matrix(A), sp.csr_matrix(B)) if sparse else (A, B)
    assert_allclose(matrix.block(given_a, given_b), expected(A, B), rtol=1e-12, atol=1e-12)
    backend = _gram.resolve_backend(None, strict.asarray(A))
    assert backend.xp.__name__.endswith("array_api_strict")
    on_strict = _gram.KernelMatrix(
        params["kernel"], params["degree"], params["gamma"], params["coef0"], backend
    ).block(strict.asarray(A), strict.asarray(B))
    assert_allclose(backend.to_numpy(on_strict), expected(A, B), rtol=1e-12, atol=1e-12)


def test_prediction_threads_split_rows_without_changing_a_score(monkeypatch):
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(200, 4)), rng.integers(0, 3, size=200)
    X_test = rng.normal(size=(700, 4))
    for multiclass in ("native", "ovr"):
        model = VotedPerceptron(
            kernel="poly", degree=2, multiclass=multiclass, max_epochs=3, random_state=0
        ).fit(X, y)
        whole = {}
        for rule in RULES:
            model.set_params(prediction=rule)
            whole[rule] = np.stack(list(model.staged_decision_function(X_test)))
        monkeypatch.setattr(voted_core, "_STEPS_PER_THREAD", 1)
        monkeypatch.setattr(voted_core.os, "cpu_count", lambda: 5)
        for rule in RULES:
            model.set_params(prediction=rule)
            split = np.stack(list(model.staged_decision_function(X_test)))
            assert_array_equal(split, whole[rule])
        monkeypatch.undo()


def test_a_model_trained_on_a_backend_saves_and_predicts_anywhere(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.integers(-2, 3, size=(50, 3)).astype(np.float64)
    y = rng.integers(0, 2, size=50)
    model = VotedPerceptron(kernel="poly", degree=2, gamma=1.0, random_state=0)
    model.fit(strict.asarray(X), y)
    path = tmp_path / "model.npz"
    save(model, path)
    loaded = load(path)
    assert loaded.device is None  # where it ran is not part of the model
    assert_array_equal(loaded.predict(X), model.predict(strict.asarray(X)))
    assert isinstance(model.predict(strict.asarray(X)), np.ndarray)


@pytest.mark.parametrize(
    ("params", "data", "message"),
    [
        ({"device": "cpu"}, sp.csr_matrix(np.eye(4)), "dense arrays"),
        ({"device": "cpu", "kernel": "precomputed"}, np.eye(4), "evaluated on the host"),
        ({"device": "cpu", "kernel": lambda A, B: A @ B.T}, np.eye(4), "evaluated on the host"),
        ({"device": 3}, np.eye(4), "parameter 'device'"),
    ],
)
def test_devices_it_cannot_use_are_refused_clearly(params, data, message):
    model = VotedPerceptron(**params)
    # Refused before the device's library is looked for: the same with or without it.
    with pytest.raises(ValueError, match=message):
        model.fit(data, [0, 1, 0, 1])


def test_a_device_without_its_library_or_hardware_is_refused_clearly():
    try:
        import torch
    except ImportError:
        with pytest.raises(ValueError, match="PyTorch, which is not installed"):
            VotedPerceptron(device="cuda").fit(np.eye(4), [0, 1, 0, 1])
        return
    with pytest.raises(ValueError, match="is not a PyTorch device"):
        VotedPerceptron(device="no-such-device").fit(np.eye(4), [0, 1, 0, 1])
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA device"):
            VotedPerceptron(device="cuda").fit(np.eye(4), [0, 1, 0, 1])


def test_input_arrays_come_back_to_the_host_as_numpy():
    X = np.arange(6.0).reshape(2, 3)
    assert _gram.to_host(X) is X
    assert_array_equal(_gram.to_host(strict.asarray(X)), X)
    matrix = sp.csr_matrix(X)
    assert _gram.to_host(matrix) is matrix
    assert _gram.resolve_backend(None, X) is _gram.NUMPY
    assert _gram.resolve_backend(None, matrix) is _gram.NUMPY


def test_the_cache_fills_in_chunks_without_changing_the_model(monkeypatch):
    from perceptrons.kernel import _training

    rng = np.random.default_rng(5)
    X = rng.integers(-2, 3, size=(70, 4)).astype(np.float64)
    y = rng.integers(0, 3, size=70)
    params = {"kernel": "poly", "degree": 3, "gamma": 1.0, "max_epochs": 3, "random_state": 0}
    reference = VotedPerceptron(cache_size=0, **params).fit(X, y)
    monkeypatch.setattr(_training, "_CACHE_CHUNK", 3)
    chunked = VotedPerceptron(**params).fit(X, y)
    _same_model(chunked, reference, X)
    assert reference.support_vectors_.shape[0] > 3  # several chunks were filled


@settings(max_examples=15, deadline=None)
@given(
    exact_problems(),
    st.sampled_from(["projectron", "random", "forgetron", "bpa", "bpa-nn"]),
    st.integers(1, 8),
    st.integers(0, 2**16),
)
def test_a_budget_perceptron_is_the_same_on_every_backend(problem, removal, budget, seed):
    X, y = problem
    params = {
        "kernel": "poly",
        "degree": 2,
        "gamma": 1.0,
        "coef0": 1.0,
        "budget": budget,
        "removal": removal,
        "max_epochs": 2,
        "random_state": seed,
    }
    reference = BudgetPerceptron(batch_size=4, **params).fit(X, y)
    others = [BudgetPerceptron(batch_size=3, **params).fit(strict.asarray(X), y)]
    others += [
        BudgetPerceptron(batch_size=3, device=device, **params).fit(X, y)
        for device in _torch_devices()
    ]
    for other in others:
        assert other.history_ == reference.history_
        assert_array_equal(other.support_vectors_, reference.support_vectors_)
        assert_array_equal(other.dual_coef_, reference.dual_coef_)
        assert_array_equal(other.decision_function(X), reference.decision_function(X))
    assert_array_equal(
        reference.decision_function(strict.asarray(X)), reference.decision_function(X)
    )


def test_labels_and_weights_may_be_a_backends_arrays_too():
    rng = np.random.default_rng(6)
    X = rng.integers(-2, 3, size=(40, 3)).astype(np.float64)
    y = rng.integers(0, 3, size=40)
    weights = rng.integers(1, 3, size=40).astype(np.float64)
    params = {"kernel": "poly", "degree": 2, "gamma": 1.0, "random_state": 0}
    host = VotedPerceptron(**params).fit(X, y, sample_weight=weights)
    arrays = [strict.asarray(a) for a in (X, y, weights)]
    on_strict = VotedPerceptron(**params).fit(arrays[0], arrays[1], sample_weight=arrays[2])
    _same_model(on_strict, host, X)
    budget = BudgetPerceptron(budget=5, **params)
    assert_array_equal(
        budget.fit(arrays[0], arrays[1]).dual_coef_,
        BudgetPerceptron(budget=5, **params).fit(X, y).dual_coef_,
    )


def test_every_stages_scores_are_refused_before_they_outgrow_memory(monkeypatch):
    from perceptrons._memory import MEMORY_LIMIT_VARIABLE, MemoryBudgetError

    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(60, 3)), rng.integers(0, 3, size=60)
    model = VotedPerceptron(kernel="poly", degree=2, max_epochs=5, random_state=0).fit(X, y)
    X_test = rng.normal(size=(20_000, 3))
    # 5 stages x 20,000 rows x 3 classes x 8 bytes = 2.4 MB: over a 1 MB budget.
    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, "1M")
    with pytest.raises(MemoryBudgetError, match="scores"):
        list(model.staged_decision_function(X_test))
    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, "1G")
    assert len(list(model.staged_decision_function(X_test))) == 5
