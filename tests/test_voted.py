"""VotedPerceptron against the seeds' voted and dual perceptrons, and its behaviour."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from perceptrons import AveragedPerceptron, Perceptron, VotedPerceptron, reference

TOL = {"rtol": 1e-9, "atol": 1e-9}
RULES = ["vote", "average", "last", "random"]


@st.composite
def problems(draw, n_classes=None):
    k = draw(st.integers(2, 4)) if n_classes is None else n_classes
    n = draw(st.integers(k, 24))
    d = draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    # Multiples of 0.5: exact arithmetic, so every implementation makes the same decisions.
    X = rng.integers(-6, 7, size=(n, d)) / 2.0
    y = np.concatenate([np.arange(k), rng.integers(0, k, size=n - k)])
    rng.shuffle(y)
    return X, y, k


settings_ = settings(max_examples=40, deadline=None)
epochs_ = st.integers(1, 3)
seeds_ = st.integers(0, 2**16)
batch_ = st.sampled_from([1, 3, 512])


def _voted(X, y, epochs, seed, batch_size, sparse, **params):
    data = sp.csr_matrix(X) if sparse else X
    model = VotedPerceptron(max_epochs=epochs, random_state=seed, batch_size=batch_size, **params)
    return model.fit(data, y), reference.epoch_orders(len(y), epochs, True, seed)


@settings_
@given(problems(n_classes=2), epochs_, seeds_, batch_, st.booleans())
def test_binary_vote_equals_the_naive_voted_perceptron(problem, epochs, seed, batch, sparse):
    """Seed 000's first scheme: a model after every example, one vote each."""
    X, y, _ = problem
    model, orders = _voted(X, y, epochs, seed, batch, sparse)
    W, b = reference.voted_perceptron_naive(X, np.where(y == 1, 1, -1), orders)
    votes = np.where(X @ W.T + b > 0, 1, -1).sum(axis=1)
    assert_array_equal(model.predict(X), np.where(votes > 0, 1, 0))


@settings_
@given(problems(), epochs_, seeds_, batch_, st.booleans())
def test_multiclass_vote_equals_the_improved_voted_perceptron(problem, epochs, seed, batch, sparse):
    X, y, k = problem
    if k == 2:
        return
    model, orders = _voted(X, y, epochs, seed, batch, sparse)
    V, c, votes = reference.multiclass_voted_perceptron(X, y, k, orders)
    assert_array_equal(model.predict(X), reference.vote_predict(V, c, votes, X, "vote"))
    W, b = reference.multiclass_voted_perceptron_naive(X, y, k, orders)
    naive_votes = np.zeros((len(y), k))
    for W_t, b_t in zip(W, b, strict=True):
        naive_votes[np.arange(len(y)), np.argmax(X @ W_t.T + b_t, axis=1)] += 1
    assert_array_equal(model.predict(X), np.argmax(naive_votes, axis=1))


@settings_
@given(problems(), epochs_, seeds_, batch_, st.booleans())
def test_linear_last_is_the_perceptron_and_average_the_averaged_perceptron(
    problem, epochs, seed, batch, sparse
):
    X, y, _ = problem
    model, _ = _voted(X, y, epochs, seed, batch, sparse, prediction="last")
    perceptron = Perceptron(max_epochs=epochs, random_state=seed).fit(X, y)
    assert_allclose(model.decision_function(X), perceptron.decision_function(X), **TOL)
    model.set_params(prediction="average")
    averaged = AveragedPerceptron(max_epochs=epochs, random_state=seed).fit(X, y)
    assert_allclose(model.decision_function(X), averaged.decision_function(X), **TOL)


@settings_
@given(problems(n_classes=2), epochs_, seeds_, batch_, st.integers(1, 3))
def test_poly_last_is_the_dual_perceptron_on_the_gram_matrix(problem, epochs, seed, batch, degree):
    X, y, _ = problem
    model, orders = _voted(
        X, y, epochs, seed, batch, False, kernel="poly", degree=degree, gamma=0.5, coef0=1.0
    )
    gram = (0.5 * X @ X.T + 1.0) ** degree
    # The dual oracle has a bias updated by y, like our constant feature of value 1.
    alpha, b, mistakes = reference.dual_kernel_perceptron(gram, np.where(y == 1, 1, -1), orders)
    model.set_params(prediction="last")
    assert_allclose(model.decision_function(X), gram @ alpha + b, **TOL)
    assert [r["mistakes"] for r in model.history_] == mistakes


@settings_
@given(problems(n_classes=2), epochs_, seeds_)
def test_every_intermediate_model_scores_like_the_dual_oracle(problem, epochs, seed):
    X, y, _ = problem
    model, orders = _voted(X, y, epochs, seed, 4, False, kernel="poly", degree=2, gamma=1.0)
    gram = (X @ X.T + 1.0) ** 2
    examples, signs, votes, _ = reference.dual_voted_perceptron(
        gram, np.where(y == 1, 1, -1), orders
    )
    scores = reference.dual_vote_scores(gram, examples, signs, votes)
    model.set_params(prediction="average")
    assert_allclose(model.decision_function(X), scores @ votes / votes.sum(), **TOL)
    model.set_params(prediction="vote")
    expected = np.where(scores > 0, 1.0, -1.0) @ votes / votes.sum()
    assert_allclose(model.decision_function(X), expected, **TOL)


@settings_
@given(problems(), epochs_, seeds_, st.sampled_from(["poly", "rbf"]))
def test_batch_size_and_cache_do_not_change_the_model(problem, epochs, seed, kernel):
    """Exact for the polynomial kernel on these multiples of 0.5 (exact arithmetic). The
    RBF kernel's values are rounded, and summing them in another order (one BLAS product
    per block vs the in-block loop) can break an exact tie, such as duplicate points
    with opposite labels, the other way: it gets tie-free continuous data."""
    X, y, _ = problem
    if kernel == "rbf":
        X = X + np.random.default_rng(seed).normal(scale=0.1, size=X.shape)
    reference_model, _ = _voted(X, y, epochs, seed, 512, False, kernel=kernel, cache_size=0)
    for batch, cache in [(1, 0), (5, 256), (512, 256), (3, 1e-4)]:
        model, _ = _voted(X, y, epochs, seed, batch, False, kernel=kernel, cache_size=cache)
        for rule in RULES:
            model.set_params(prediction=rule, random_state=seed)
            reference_model.set_params(prediction=rule, random_state=seed)
            assert_allclose(model.decision_function(X), reference_model.decision_function(X), **TOL)


@settings_
@given(problems(), seeds_)
def test_ovr_columns_are_independent_binary_perceptrons(problem, seed):
    X, y, k = problem
    model, _ = _voted(X, y, 2, seed, 3, False, multiclass="ovr", prediction="last")
    scores = model.decision_function(X)
    for column, label in enumerate(model.classes_ if k > 2 else [1]):
        binary = Perceptron(max_epochs=2, random_state=seed).fit(X, y == label)
        column_scores = scores[:, column] if k > 2 else scores
        assert_allclose(column_scores, binary.decision_function(X), **TOL)


@settings_
@given(problems(), epochs_, seeds_, st.sampled_from([0.5, 1.0, 2.5]))
def test_delta_trick_equals_explicit_augmentation(problem, epochs, seed, delta):
    """Seed 004: X becomes [X | Δ·I] for training; the extra features never predict."""
    X, y, _ = problem
    with_delta, _ = _voted(X, y, epochs, seed, 4, False, delta=delta)
    augmented = np.hstack([X, delta * np.eye(len(y))])
    explicit, _ = _voted(augmented, y, epochs, seed, 4, False)
    assert [r["mistakes"] for r in with_delta.history_] == [
        r["mistakes"] for r in explicit.history_
    ]
    padded = np.hstack([X, np.zeros((len(y), len(y)))])
    for rule in RULES:
        with_delta.set_params(prediction=rule)
        explicit.set_params(prediction=rule)
        assert_allclose(with_delta.decision_function(X), explicit.decision_function(padded), **TOL)


def test_delta_with_a_kernel_adds_delta_squared_to_the_gram_diagonal():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = rng.integers(0, 3, size=30)
    gram = (X @ X.T * 0.5 + 1.0) ** 2
    kwargs = {"max_epochs": 3, "random_state": 0, "batch_size": 7}
    implicit = VotedPerceptron(kernel="precomputed", delta=1.5, **kwargs).fit(gram, y)
    explicit = VotedPerceptron(kernel="precomputed", **kwargs).fit(gram + 2.25 * np.eye(30), y)
    poly = VotedPerceptron(kernel="poly", degree=2, gamma=0.5, delta=1.5, **kwargs).fit(X, y)
    assert_allclose(implicit.decision_function(gram), explicit.decision_function(gram), **TOL)
    assert_allclose(poly.decision_function(X), implicit.decision_function(gram), **TOL)


@pytest.mark.parametrize("multiclass", ["native", "ovr"])
def test_precomputed_and_callable_kernels_equal_the_named_kernel(multiclass):
    rng = np.random.default_rng(1)
    X, X_test = rng.normal(size=(40, 4)), rng.normal(size=(15, 4))
    y = rng.integers(0, 3, size=40)
    params = {"max_epochs": 2, "random_state": 3, "multiclass": multiclass, "batch_size": 8}
    named = VotedPerceptron(kernel="rbf", gamma=0.7, **params).fit(X, y)

    def rbf(A, B):
        sq = (A**2).sum(1)[:, None] + (B**2).sum(1)[None, :] - 2 * A @ B.T
        return np.exp(-0.7 * sq)

    called = VotedPerceptron(kernel=rbf, **params).fit(X, y)
    pre = VotedPerceptron(kernel="precomputed", **params).fit(rbf(X, X), y)
    for rule in RULES:
        for model in (named, called, pre):
            model.set_params(prediction=rule)
        expected = named.decision_function(X_test)
        assert_allclose(called.decision_function(X_test), expected, atol=1e-9)
        assert_allclose(pre.decision_function(rbf(X_test, X)), expected, atol=1e-9)
    assert_array_equal(X[pre.support_], named.support_vectors_)


@pytest.mark.parametrize("multiclass", ["native", "ovr"])
def test_partial_fit_extends_the_update_sequence_exactly(multiclass):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 4))
    y = rng.integers(0, 3, size=50)
    params = {
        "kernel": "poly",
        "degree": 2,
        "gamma": 0.5,
        "shuffle": False,
        "multiclass": multiclass,
    }
    streamed = VotedPerceptron(**params)
    for start in range(0, 50, 12):
        streamed.partial_fit(X[start : start + 12], y[start : start + 12], classes=[0, 1, 2])
    whole = VotedPerceptron(max_epochs=1, **params).fit(X, y)
    assert streamed.n_updates_ == whole.n_updates_
    for rule in RULES:
        streamed.set_params(prediction=rule, random_state=0)
        whole.set_params(prediction=rule, random_state=0)
        assert_allclose(streamed.decision_function(X), whole.decision_function(X), **TOL)


def test_random_rule_is_reproducible_and_draws_models_by_their_votes():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] + 0.8 * rng.normal(size=200) > 0).astype(int)
    model = VotedPerceptron(max_epochs=1, random_state=0, prediction="random").fit(X, y)
    point = np.repeat([[0.3, -0.2]], 4000, axis=0)
    first, second = model.decision_function(point), model.decision_function(point)
    assert_array_equal(first, second)
    # The share of positive draws is the vote share of the models predicting positive.
    model.set_params(prediction="vote")
    vote_margin = model.decision_function(point[:1])[0]
    assert abs(np.mean(first > 0) - (1 + vote_margin) / 2) < 0.03
    other = model.set_params(prediction="random", random_state=1).decision_function(point)
    assert not np.array_equal(first, other)


def test_voting_and_averaging_beat_the_last_model_on_noisy_data():
    """Freund & Schapire's point, on data where the last perceptron is unstable."""
    rng = np.random.default_rng(4)
    w = rng.normal(size=10)
    X, X_test = rng.normal(size=(1500, 10)), rng.normal(size=(3000, 10))
    y = (X @ w + rng.normal(scale=2.0, size=1500) > 0).astype(int)
    y_test = (X_test @ w > 0).astype(int)
    model = VotedPerceptron(max_epochs=3, random_state=0).fit(X, y)
    accuracy = {}
    for rule in RULES:
        accuracy[rule] = model.set_params(prediction=rule).score(X_test, y_test)
    assert accuracy["vote"] > accuracy["last"]
    assert accuracy["average"] > accuracy["last"]


def test_model_memory_is_the_support_vectors_not_the_weight_vectors():
    rng = np.random.default_rng(5)
    X = sp.random(300, 5000, density=0.002, format="csr", random_state=5)
    y = rng.integers(0, 2, size=300)
    model = VotedPerceptron(max_epochs=2, random_state=0).fit(X, y)
    support = model.support_vectors_
    assert sp.issparse(support) and support.shape[0] <= 300
    assert model.n_updates_ > support.shape[0]  # repeated mistakes reuse their row
    assert support.nnz <= X.nnz


def test_precomputed_kernel_of_the_wrong_shape():
    with pytest.raises(ValueError, match="square Gram matrix"):
        VotedPerceptron(kernel="precomputed").fit(np.ones((4, 3)), [0, 1, 0, 1])
    model = VotedPerceptron(kernel="precomputed").fit(np.eye(4), [0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"3 features.*expecting 4"):
        model.predict(np.ones((2, 3)))
    with pytest.raises(ValueError, match="partial_fit is not available"):
        model.partial_fit(np.eye(4), [0, 1, 0, 1])


def test_callable_kernel_of_the_wrong_shape():
    model = VotedPerceptron(kernel=lambda A, B: np.ones((2, 2)))
    with pytest.raises(ValueError, match="kernel callable returned shape"):
        model.fit(np.eye(4), [0, 1, 0, 1])


@pytest.mark.parametrize("multiclass", ["native", "ovr"])
@pytest.mark.parametrize("rule", RULES)
def test_staged_scores_equal_shorter_fits(multiclass, rule):
    rng = np.random.default_rng(6)
    X, X_test = rng.normal(size=(40, 3)), rng.normal(size=(25, 3))
    y = rng.integers(0, 3, size=40)
    params = {"kernel": "poly", "degree": 2, "gamma": 0.5, "multiclass": multiclass}
    params.update(prediction=rule, random_state=7, batch_size=6)
    long_fit = VotedPerceptron(max_epochs=4, **params).fit(X, y)
    staged = list(long_fit.staged_decision_function(X_test))
    assert len(staged) == 4
    for epochs, scores in enumerate(staged, start=1):
        short_fit = VotedPerceptron(max_epochs=epochs, **params).fit(X, y)
        assert_allclose(scores, short_fit.decision_function(X_test), **TOL)
    assert_array_equal(list(long_fit.staged_predict(X_test))[-1], long_fit.predict(X_test))


@settings_
@given(problems(), epochs_, seeds_, st.sampled_from(["native", "ovr"]), st.booleans())
def test_primal_linear_path_equals_the_dual_path(problem, epochs, seed, multiclass, sparse):
    """kernel="linear" trains with the primal kernels; a linear callable goes the dual way."""
    X, y, _ = problem
    params = {"multiclass": multiclass, "delta": 0.5 if sparse else 0.0}
    primal, _ = _voted(X, y, epochs, seed, 4, sparse, **params)

    def dot(A, B):
        return np.asarray((A @ B.T).todense()) if sp.issparse(A) else A @ B.T

    dual, _ = _voted(X, y, epochs, seed, 4, sparse, kernel=dot, **params)
    assert primal.history_ == dual.history_
    assert_allclose(primal.intercept_, dual.intercept_, **TOL)
    for rule in RULES:
        primal.set_params(prediction=rule)
        dual.set_params(prediction=rule)
        assert_allclose(primal.decision_function(X), dual.decision_function(X), **TOL)


@pytest.mark.parametrize("kernel", ["linear", "poly"])
def test_fit_epochs_is_fit_paused_after_every_epoch(kernel):
    rng = np.random.default_rng(9)
    X, y = rng.normal(size=(60, 3)), rng.integers(0, 3, size=60)
    params = {"kernel": kernel, "max_epochs": 3, "random_state": 0, "batch_size": 16}
    whole = VotedPerceptron(**params).fit(X, y)
    paused = VotedPerceptron(**params)
    done, staged = [], []
    for _ in paused.fit_epochs(X, y, progress=done.append):
        staged.append(paused.decision_function(X))
    assert sum(done) == 180
    assert_allclose(staged[-1], whole.decision_function(X), **TOL)
    assert_allclose(staged, list(whole.staged_decision_function(X)), **TOL)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_linear_coef_is_the_final_perceptron(n_classes):
    rng = np.random.default_rng(10)
    X, y = rng.normal(size=(50, 4)), rng.integers(0, n_classes, size=50)
    voted = VotedPerceptron(max_epochs=2, random_state=0).fit(X, y)
    perceptron = Perceptron(max_epochs=2, random_state=0).fit(X, y)
    assert_allclose(voted.coef_, perceptron.coef_, **TOL)
    assert_allclose(voted.intercept_, perceptron.intercept_, **TOL)
    with pytest.raises(AttributeError, match="only available with kernel='linear'"):
        _ = VotedPerceptron(kernel="poly", max_epochs=1).fit(X, y).coef_
