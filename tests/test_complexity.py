"""The seven strategies of the cost table (:mod:`perceptrons.complexity`) give one model.

Every strategy makes the updates of :class:`~perceptrons.Perceptron` and stores them its
own way: the averaged ones must return the exact mean of
:class:`~perceptrons.AveragedPerceptron` and of the oracles, the voted ones the models,
votes and predictions of :class:`~perceptrons.VotedPerceptron` and of the oracles, to
1e-9, dense and CSR alike, binary and multiclass.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from perceptrons import AveragedPerceptron, Perceptron, VotedPerceptron
from perceptrons import reference as ref
from perceptrons.complexity import COST_TABLE, STRATEGIES, train_strategy
from perceptrons.reference import averaged as ref_averaged

SETTINGS = settings(max_examples=25, deadline=None)
TOL = {"atol": 1e-9, "rtol": 1e-9}
AVERAGED = [s for s in STRATEGIES if s.startswith("averaged")]
VOTED = ["voted_naive", "voted_improved"]

# Small dyadic values: sums of them are exact in float64, so the oracles (which score
# with ``w @ x + b``) take the same branches as the kernels (which add in another order).
VALUES = st.sampled_from([-3.0, -2.0, -1.5, -1.0, -0.5, 0.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0])


@st.composite
def problems(draw, multiclass=False):
    """``(X, y, n_classes, epochs, random_state, shuffle)``; X dense or CSR."""
    n_classes = draw(st.integers(3, 4)) if multiclass else 2
    n = draw(st.integers(n_classes, 20))
    d = draw(st.integers(1, 6))
    X = np.array(draw(st.lists(VALUES, min_size=n * d, max_size=n * d))).reshape(n, d)
    y = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)))
    y[:n_classes] = np.arange(n_classes)  # every class present
    if draw(st.booleans()):
        X = sp.csr_matrix(X)
    epochs = draw(st.integers(1, 4))
    return X, y, n_classes, epochs, draw(st.integers(0, 2**31 - 1)), draw(st.booleans())


def orders_of(n, epochs, random_state, shuffle):
    return ref.epoch_orders(n, epochs, shuffle=shuffle, random_state=random_state)


def fit_all(X, y, epochs, random_state, shuffle, fit_intercept=True):
    return {
        s: train_strategy(
            s,
            X,
            y,
            max_epochs=epochs,
            random_state=random_state,
            shuffle=shuffle,
            fit_intercept=fit_intercept,
        )
        for s in STRATEGIES
    }


def estimator_kwargs(epochs, random_state, shuffle):
    return {"max_epochs": epochs, "random_state": random_state, "shuffle": shuffle}


def assert_model(result, coef, intercept, name):
    np.testing.assert_allclose(result.coef_, coef, **TOL, err_msg=name)
    np.testing.assert_allclose(result.intercept_, intercept, **TOL, err_msg=name)


# ---------------------------------------------------------------------- binary


@SETTINGS
@given(problems())
def test_binary_strategies_match_estimators_and_oracles(problem):
    X, y, _, epochs, seed, shuffle = problem
    fits = fit_all(X, y, epochs, seed, shuffle)
    kwargs = estimator_kwargs(epochs, seed, shuffle)
    averaged = AveragedPerceptron(**kwargs).fit(X, y)
    vanilla = Perceptron(**kwargs).fit(X, y)
    orders = orders_of(X.shape[0], epochs, seed, shuffle)
    n_total = X.shape[0] * epochs
    signs = np.where(y == 1, 1, -1)
    w_naive, b_naive = ref.averaged_perceptron_naive(X, signs, orders)
    w_improved, b_improved = ref_averaged.averaged_perceptron_improved(X, signs, orders)
    w_delta, b_delta = ref.averaged_perceptron_delta_list(X, signs, orders)
    w_fast, b_fast = ref.averaged_perceptron_fast(X, signs, orders)
    oracles = {
        "averaged_naive": (w_naive, b_naive),
        "averaged_improved": (w_improved / n_total, b_improved / n_total),
        "averaged_delta": (w_delta / n_total, b_delta / n_total),
        "averaged_fastest": (w_fast / n_total, b_fast / n_total),
    }
    for name in [*AVERAGED, *VOTED]:  # the voted models' vote-weighted mean too
        assert_model(fits[name], averaged.coef_, averaged.intercept_, name)
        w, b = oracles.get(name, (w_naive, b_naive))
        assert_model(fits[name], w[np.newaxis], [b], name)
    # The fastest strategy is AveragedPerceptron's own arithmetic: bit for bit.
    np.testing.assert_array_equal(fits["averaged_fastest"].coef_, averaged.coef_)
    w, b, mistakes = ref.perceptron(X, signs, orders)
    np.testing.assert_array_equal(fits["vanilla"].coef_, vanilla.coef_)
    np.testing.assert_array_equal(fits["vanilla"].intercept_, vanilla.intercept_)
    assert_model(fits["vanilla"], w[np.newaxis], [b], "vanilla")
    for name, fit in fits.items():
        assert fit.n_updates == sum(mistakes), name
        assert fit.n_examples == n_total
    np.testing.assert_array_equal(fits["vanilla"].predict(X), vanilla.predict(X))
    np.testing.assert_array_equal(fits["averaged_fastest"].predict(X), averaged.predict(X))


@SETTINGS
@given(problems())
def test_binary_voted_strategies_match_voted_perceptron_and_oracles(problem):
    X, y, _, epochs, seed, shuffle = problem
    naive = train_strategy(
        "voted_naive", X, y, max_epochs=epochs, random_state=seed, shuffle=shuffle
    )
    improved = train_strategy(
        "voted_improved", X, y, max_epochs=epochs, random_state=seed, shuffle=shuffle
    )
    orders = orders_of(X.shape[0], epochs, seed, shuffle)
    signs = np.where(y == 1, 1, -1)
    W, b = ref.voted_perceptron_naive(X, signs, orders)
    V, c, votes = ref.voted_perceptron(X, signs, orders)
    models = naive.storage["models"]
    assert models.shape == (X.shape[0] * epochs, X.shape[1] + 1)  # T|D| models
    np.testing.assert_array_equal(models[:, :-1], W)
    np.testing.assert_array_equal(models[:, -1], b)
    stored = improved.storage["models"]
    assert stored.shape == (improved.n_updates + 1, X.shape[1] + 1)  # U + 1 models
    np.testing.assert_array_equal(stored[:, :-1], V)
    np.testing.assert_array_equal(stored[:, -1], c)
    np.testing.assert_array_equal(improved.votes, votes)
    voted = VotedPerceptron(**estimator_kwargs(epochs, seed, shuffle)).fit(X, y)
    expected = ref.vote_predict(V, c, votes, X, "vote")
    for fit in (naive, improved):
        np.testing.assert_allclose(fit.decision_function(X), voted.decision_function(X), **TOL)
        np.testing.assert_array_equal(fit.predict(X), voted.predict(X))
        np.testing.assert_array_equal(fit.predict(X), np.where(expected == 1, 1, 0))


# ------------------------------------------------------------------ multiclass


@SETTINGS
@given(problems(multiclass=True))
def test_multiclass_strategies_match_estimators_and_oracles(problem):
    X, y, n_classes, epochs, seed, shuffle = problem
    fits = fit_all(X, y, epochs, seed, shuffle)
    kwargs = estimator_kwargs(epochs, seed, shuffle)
    averaged = AveragedPerceptron(**kwargs).fit(X, y)
    vanilla = Perceptron(**kwargs).fit(X, y)
    orders = orders_of(X.shape[0], epochs, seed, shuffle)
    n_total = X.shape[0] * epochs
    W_naive, b_naive = ref.multiclass_averaged_perceptron_naive(X, y, n_classes, orders)
    W_count, b_count = ref.multiclass_averaged_perceptron(X, y, n_classes, orders)
    W_delta, b_delta = ref_averaged.multiclass_averaged_perceptron_delta_list(
        X, y, n_classes, orders
    )
    V, c, votes = ref.multiclass_voted_perceptron(X, y, n_classes, orders)
    oracles = {
        "averaged_naive": (W_naive, b_naive),
        "averaged_improved": (
            np.tensordot(votes, V, axes=1) / n_total,
            votes @ c / n_total,
        ),
        "averaged_delta": (W_delta / n_total, b_delta / n_total),
        "averaged_fastest": (W_count * (n_total + 1) / n_total, b_count * (n_total + 1) / n_total),
    }
    for name in [*AVERAGED, *VOTED]:
        assert_model(fits[name], averaged.coef_, averaged.intercept_, name)
        assert_model(fits[name], *oracles.get(name, (W_naive, b_naive)), name)
    np.testing.assert_array_equal(fits["averaged_fastest"].coef_, averaged.coef_)
    W, b, mistakes = ref.multiclass_perceptron(X, y, n_classes, orders)
    np.testing.assert_array_equal(fits["vanilla"].coef_, vanilla.coef_)
    assert_model(fits["vanilla"], W, b, "vanilla")
    assert all(fit.n_updates == sum(mistakes) for fit in fits.values())


@SETTINGS
@given(problems(multiclass=True))
def test_multiclass_voted_strategies_match_voted_perceptron_and_oracles(problem):
    X, y, n_classes, epochs, seed, shuffle = problem
    kwargs = estimator_kwargs(epochs, seed, shuffle)
    naive = train_strategy("voted_naive", X, y, **kwargs)
    improved = train_strategy("voted_improved", X, y, **kwargs)
    orders = orders_of(X.shape[0], epochs, seed, shuffle)
    W, b = ref.multiclass_voted_perceptron_naive(X, y, n_classes, orders)
    V, c, votes = ref.multiclass_voted_perceptron(X, y, n_classes, orders)
    models = naive.storage["models"]
    assert models.shape == (X.shape[0] * epochs, X.shape[1] + 1, n_classes)
    np.testing.assert_array_equal(models[:, :-1].transpose(0, 2, 1), W)
    np.testing.assert_array_equal(models[:, -1], b)
    stored = improved.storage["models"]
    assert stored.shape[0] == improved.n_updates + 1
    np.testing.assert_array_equal(stored[:, :-1].transpose(0, 2, 1), V)
    np.testing.assert_array_equal(stored[:, -1], c)
    np.testing.assert_array_equal(improved.votes, votes)
    voted = VotedPerceptron(**kwargs).fit(X, y)
    expected = ref.vote_predict(V, c, votes, X, "vote")
    for fit in (naive, improved):
        np.testing.assert_allclose(fit.decision_function(X), voted.decision_function(X), **TOL)
        np.testing.assert_array_equal(fit.predict(X), voted.predict(X))
        np.testing.assert_array_equal(fit.predict(X), expected)


# ------------------------------------------- storage that grows, dense and CSR


@pytest.mark.parametrize("n_classes", [2, 5])
def test_grown_storage_dense_and_sparse_give_one_model(n_classes):
    """Hundreds of updates on noisy data with rows of varied nnz: the improved and Δw
    buffers are grown many times, and dense and CSR input train the same models."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(150, 40)) * (rng.uniform(size=(150, 40)) < 0.2)
    y = rng.randint(n_classes, size=150)  # labels are noise: many updates
    kwargs = {"max_epochs": 3, "random_state": 1}
    reference = AveragedPerceptron(**kwargs).fit(X, y)
    for data in (X, sp.csr_matrix(X)):
        fits = {s: train_strategy(s, data, y, **kwargs) for s in STRATEGIES}
        assert fits["vanilla"].n_updates > 100
        for name in [*AVERAGED, *VOTED]:
            assert_model(fits[name], reference.coef_, reference.intercept_, name)
        log = fits["averaged_delta"].storage["log"]
        index = fits["averaged_delta"].storage["index"]
        assert log.shape[0] == fits["vanilla"].n_updates
        # one entry per nonzero of each updated example, plus its bias entry
        positions = np.concatenate(ref.epoch_orders(150, 3, shuffle=True, random_state=1))
        nnz = (X[positions[log[:, 0]]] != 0).sum(axis=1) + 1
        assert index.shape[0] == nnz.sum()
        predictions = fits["voted_improved"].predict(data)
        np.testing.assert_array_equal(predictions, fits["voted_naive"].predict(data))
        voted = VotedPerceptron(**kwargs).fit(data, y)
        np.testing.assert_array_equal(predictions, voted.predict(data))


def test_stored_bytes_follow_the_cost_table():
    rng = np.random.RandomState(0)
    X, y = rng.normal(size=(60, 7)), rng.randint(3, size=60)
    fits = fit_all(X, y, 2, 0, True)
    weights = 8 * 8 * 3  # (d + 1) x K float64
    U = fits["vanilla"].n_updates
    assert fits["vanilla"].stored_bytes == weights
    assert fits["averaged_fastest"].stored_bytes == 2 * weights
    assert fits["averaged_naive"].stored_bytes == 2 * weights
    assert fits["voted_naive"].stored_bytes == weights + 120 * weights  # T|D| models
    improved = weights + (U + 1) * (weights + 8)  # U + 1 models and their votes
    assert fits["voted_improved"].stored_bytes == improved
    assert fits["averaged_improved"].stored_bytes == improved
    # dense rows with every feature nonzero: d + 1 entries and a log row per update
    assert fits["averaged_delta"].stored_bytes == weights + U * (8 * 8 * 2 + 4 * 8)
    assert set(COST_TABLE) == set(STRATEGIES)


def test_without_intercept():
    rng = np.random.RandomState(2)
    X, y = rng.normal(size=(40, 5)), rng.randint(2, size=40)
    reference = AveragedPerceptron(max_epochs=3, random_state=0, fit_intercept=False).fit(X, y)
    for name in AVERAGED:
        fit = train_strategy(name, X, y, max_epochs=3, random_state=0, fit_intercept=False)
        assert_model(fit, reference.coef_, reference.intercept_, name)
        np.testing.assert_array_equal(fit.intercept_, [0.0])


def test_labels_of_any_type_and_prediction_checks_the_width():
    rng = np.random.RandomState(3)
    X = rng.normal(size=(30, 4))
    y = np.where(X[:, 0] > 0, "yes", "no")
    for name in STRATEGIES:
        fit = train_strategy(name, X, y, max_epochs=5, random_state=0)
        assert set(fit.predict(X)) <= {"yes", "no"}
        assert (fit.predict(X) == y).mean() > 0.8
        with pytest.raises(ValueError, match="features"):
            fit.predict(X[:, :3])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategy": "averaged_lazy"}, "strategy must be one of"),
        ({"max_epochs": 0}, "max_epochs must be an int >= 1"),
        ({"shuffle": "yes"}, "shuffle must be a bool"),
        ({"fit_intercept": None}, "fit_intercept must be a bool"),
        ({"random_state": "0"}, "random_state must be"),
        ({"y": np.zeros(6)}, "at least two classes"),
        ({"y": np.linspace(0, 1, 6)}, "continuous"),
        ({"X": np.full((6, 2), np.nan)}, "NaN"),
        ({"y": np.zeros(5)}, "inconsistent numbers of samples"),
    ],
)
def test_bad_input_is_refused_with_its_reason(kwargs, message):
    call = {"strategy": "vanilla", "X": np.eye(6, 2), "y": np.arange(6) % 2, **kwargs}
    strategy, X, y = call.pop("strategy"), call.pop("X"), call.pop("y")
    with pytest.raises(ValueError, match=message):
        train_strategy(strategy, X, y, **call)


def test_naive_voted_refuses_more_than_its_memory_limit():
    X = sp.csr_matrix((10, 2**20))
    with pytest.raises(ValueError, match="voted_naive would store"):
        train_strategy("voted_naive", X, np.arange(10) % 2, max_epochs=200)
