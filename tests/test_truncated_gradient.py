"""OGD's L1 forms, FOBOS with L1 (Duchi & Singer 2009) and truncated gradient (Langford,
Li & Zhang 2009): the kernels' lazy shrinking against the eager oracle, which shrinks
every weight every round (every k-th round), and what the penalty makes of the model."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from perceptrons import AveragedPerceptron, Perceptron, reference
from perceptrons.io.persist import load, save
from perceptrons.linear._update_rules import RULES, Constant
from rule_problems import problems

TOL = {"rtol": 1e-9, "atol": 1e-9}
L1_RULES = ["fobos-l1", "stg"]


def _dense(coef):
    return coef.toarray() if sp.issparse(coef) else coef


def _constants(rule, eta, power_t, l1, k):
    constants = {"eta": eta, "power_t": power_t, "l1": l1}
    return {**constants, "k": k} if rule == "stg" else constants


def _weights(rng, n, n_classes, weighted):
    if not weighted:
        return None
    weights = rng.choice([0.0, 0.5, 1.0, 3.0], size=n)
    weights[:n_classes] = 1.0  # every class keeps an example of positive weight
    return weights


@settings(max_examples=80, deadline=None)
@given(
    problems(scales=[0.1, 1.0, 30.0]),
    st.integers(1, 3),
    st.integers(0, 2**16),
    st.sampled_from(L1_RULES),
    st.sampled_from([0.1, 1.0, 2.0]),
    st.sampled_from([0.0, 0.5, 1.0]),
    st.sampled_from([0.001, 0.05, 0.3]),
    st.integers(1, 4),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_the_lazy_l1_equals_the_eager_oracle(
    problem, epochs, seed, rule, eta, power_t, l1, k, sparse, weighted, fit_intercept
):
    """The oracle shrinks (truncates) every feature weight every round (every k-th
    round); the kernels only the features of each example, and all of them at the end
    of the epoch."""
    X, y, n_classes = problem
    constants = _constants(rule, eta, power_t, l1, k)
    weights = _weights(np.random.default_rng(seed), len(y), n_classes, weighted)
    model = Perceptron(
        max_epochs=epochs,
        random_state=seed,
        update=rule,
        update_params=constants,
        fit_intercept=fit_intercept,
    ).fit(sp.csr_matrix(X) if sparse else X, y, sample_weight=weights)
    orders = reference.epoch_orders(len(y), epochs, True, seed)
    W, b, _, _, updates = reference.first_order_online(
        X,
        y,
        n_classes,
        orders,
        rule=rule,
        constants=constants,
        fit_intercept=fit_intercept,
        sample_weight=weights,
    )
    assert_allclose(_dense(model.coef_), W, **TOL)
    assert_allclose(model.intercept_, b, **TOL)
    assert sum(record["updates"] for record in model.history_) == updates


@settings(max_examples=40, deadline=None)
@given(
    problems(),
    st.integers(0, 2**16),
    st.sampled_from(L1_RULES),
    st.integers(1, 4),
    st.lists(st.integers(1, 6), min_size=1, max_size=4),
    st.booleans(),
    st.booleans(),
)
def test_partial_fit_in_pieces_is_one_epoch(problem, seed, rule, k, cuts, sparse, weighted):
    """Each call ends with every weight up to date; the truncated gradient's rounds
    since its last truncation (and their weight) carry over to the next call."""
    X, y, n_classes = problem
    constants = _constants(rule, 1.0, 0.5, 0.05, k)
    weights = _weights(np.random.default_rng(seed), len(y), n_classes, weighted)
    data = sp.csr_matrix(X) if sparse else X
    params = {"update": rule, "update_params": constants, "shuffle": False}
    whole = Perceptron(**params, max_epochs=1).fit(data, y, sample_weight=weights)
    pieces = Perceptron(**params)
    bounds = sorted({0, len(y), *(cut for cut in np.cumsum(cuts) if cut < len(y))})
    for start, stop in itertools.pairwise(bounds):
        pieces.partial_fit(
            data[start:stop],
            y[start:stop],
            classes=np.arange(n_classes),
            sample_weight=None if weights is None else weights[start:stop],
        )
    assert_allclose(_dense(pieces.coef_), _dense(whole.coef_), **TOL)
    assert_allclose(pieces.intercept_, whole.intercept_, **TOL)
    W, b, _, _, _ = reference.first_order_online(
        X, y, n_classes, [np.arange(len(y))], rule=rule, constants=constants, sample_weight=weights
    )
    assert_allclose(_dense(pieces.coef_), W, **TOL)
    assert_allclose(pieces.intercept_, b, **TOL)


def test_the_updates_by_hand():
    """Two examples, a constant step (eta 1, power_t 0), l1 = 0.1; the second example
    lacks feature 0, whose shrinking is applied at the end of the epoch."""
    X = np.array([[1.0, 0.5], [0.0, 1.0]])
    y = np.array([1, 0])
    params = {"shuffle": False, "max_epochs": 1}
    constant = {"eta": 1.0, "power_t": 0.0, "l1": 0.1}
    # FOBOS: w = [1, .5], b = 1, shrunk to [.9, .4]; the second scores 1.4: w = [.9,
    # -.6], b = 0, shrunk to [.8, -.5].
    fobos = Perceptron(update="fobos-l1", update_params=constant, **params).fit(X, y)
    assert_allclose(fobos.coef_, [[0.8, -0.5]], rtol=1e-12)
    assert_allclose(fobos.intercept_, [0.0], atol=1e-12)
    # Truncated gradient, k = 2: no truncation after the first; the second scores 1.5:
    # w = [1, -.5], b = 0, truncated by the gravity 2 * 1 * 0.1 = .2.
    stg = Perceptron(update="stg", update_params={**constant, "k": 2}, **params).fit(X, y)
    assert_allclose(stg.coef_, [[0.8, -0.3]], rtol=1e-12)
    # Weighted (2, 1): w = [2, 1], b = 2; the second scores 3: w = [2, 0], b = 1, then
    # the gravity counts the two rounds' weight, 0.1 * (2 + 1).
    weighted = Perceptron(update="stg", update_params={**constant, "k": 2}, **params)
    weighted.fit(X, y, sample_weight=[2.0, 1.0])
    assert_allclose(weighted.coef_, [[1.7, 0.0]], rtol=1e-12)
    assert_allclose(weighted.intercept_, [1.0], rtol=1e-12)
    assert weighted.coef_[0, 1] == 0.0 and not np.signbit(weighted.coef_[0, 1])


@pytest.mark.parametrize("n_classes", [2, 3])
def test_stg_with_k_1_is_fobos(n_classes):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 6)) * (rng.random((60, 6)) < 0.5)
    y = rng.integers(0, n_classes, size=60)
    weights = rng.choice([0.5, 1.0, 2.0], size=60)
    params = {"random_state": 0, "max_epochs": 3}
    stg = Perceptron(update="stg", update_params={"l1": 0.02, "k": 1}, **params)
    fobos = Perceptron(update="fobos-l1", update_params={"l1": 0.02}, **params)
    stg.fit(X, y, sample_weight=weights)
    fobos.fit(X, y, sample_weight=weights)
    assert_allclose(stg.coef_, fobos.coef_, **TOL)
    assert_allclose(stg.intercept_, fobos.intercept_, **TOL)


@pytest.mark.parametrize("rule", L1_RULES)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_without_l1_the_rules_are_ogd(rule, n_classes):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 5))
    y = rng.integers(0, n_classes, size=50)
    params = {"random_state": 0, "max_epochs": 2, "update_params": {"eta": 0.5}}
    for cls in (Perceptron, AveragedPerceptron):  # (l1 = 0 can be averaged)
        ogd = cls(update="ogd", **params).fit(X, y)
        zero = {**params, "update_params": {"eta": 0.5, "l1": 0.0}}
        plain = cls(update=rule, **zero).fit(X, y)
        assert_array_equal(plain.coef_, ogd.coef_)
        assert_array_equal(plain.intercept_, ogd.intercept_)


@pytest.mark.parametrize("rule", L1_RULES)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_penalty_makes_weights_exactly_zero_where_ogd_has_none(rule, n_classes):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 30)) * (rng.random((300, 30)) < 0.3)
    # Labels from the first two features (three: the largest of the first three).
    y = (X[:, 0] + X[:, 1] > 0).astype(int) if n_classes == 2 else np.argmax(X[:, :3], axis=1)
    ogd = Perceptron(update="ogd", random_state=0).fit(X, y)
    assert np.count_nonzero(ogd.coef_) == ogd.coef_.size
    params = {"l1": 0.1, "k": 3} if rule == "stg" else {"l1": 0.1}
    sparse = Perceptron(update=rule, update_params=params, random_state=0).fit(X, y)
    zeros = np.count_nonzero(sparse.coef_ == 0.0)
    assert zeros >= ogd.coef_.size // 4
    assert not np.signbit(sparse.coef_[sparse.coef_ == 0.0]).any()  # +0.0, no used rows
    if n_classes == 2:  # the two informative features keep their weights
        assert np.all(sparse.coef_[0, :2] > 0.1)


@pytest.mark.parametrize("rule", L1_RULES)
def test_the_default_penalty_refuses_averaging(rule):
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    assert RULES[rule].constants["l1"].default > 0.0
    with pytest.raises(ValueError, match=rf"update='{rule}' with l1 > 0 cannot be averaged"):
        AveragedPerceptron(update=rule).fit(X, y)


def test_stg_counts_its_rounds_over_calls_and_files(tmp_path):
    """After 10 rounds with k = 3 one round (of weight 2) waits for the next truncation:
    the state holds it, a saved model keeps it, and training goes on alike."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(10, 4))
    y = rng.integers(0, 2, size=10)
    weights = np.full(10, 2.0)
    model = Perceptron(update="stg", update_params={"k": 3, "l1": 0.01}, shuffle=False)
    model.partial_fit(X, y, classes=[0, 1], sample_weight=weights)
    assert model._state.scalars.tolist() == [10.0, 1.0, 2.0]
    loaded = load(save(model, tmp_path / "stg.npz"))
    assert_array_equal(loaded._state.scalars, model._state.scalars)
    model.partial_fit(X, y, sample_weight=weights)
    loaded.partial_fit(X, y, sample_weight=weights)
    assert_array_equal(loaded.coef_, model.coef_)
    assert model._state.scalars.tolist() == [20.0, 2.0, 4.0]


def test_bad_constants_are_refused_by_name():
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    for k in (1.5, 0, -1):
        with pytest.raises(
            ValueError, match=r"\['k'\] for update='stg' must be an integer in \[1,"
        ):
            Perceptron(update="stg", update_params={"k": k}).fit(X, y)
    with pytest.raises(ValueError, match=r"\['l1'\] for update='fobos-l1' must be a finite number"):
        Perceptron(update="fobos-l1", update_params={"l1": -0.1}).fit(X, y)
    with pytest.raises(ValueError, match=r"no constant 'k'.*its constants: eta, power_t, l1"):
        Perceptron(update="fobos-l1", update_params={"k": 2}).fit(X, y)
    # A whole number given as a float (as the command line passes it) is an integer.
    Perceptron(update="stg", update_params={"k": 2.0}).fit(X, y)
    Perceptron(update="stg", update_params={"k": np.int64(2)}).fit(X, y)


def test_an_integer_constant_accepts_whole_numbers_only():
    count = Constant(1.0, 1.0, integer=True)
    assert count.accepts(3) and count.accepts(3.0) and count.accepts(np.int32(3))
    assert not count.accepts(2.5) and not count.accepts(0) and not count.accepts(True)
    assert count.interval == "an integer in [1, inf]"
    assert Constant(0.5, 0.0, 1.0).interval == "a finite number in [0, 1]"


@pytest.mark.parametrize("rule", L1_RULES)
def test_parameter_mixing_gives_a_sparse_model(rule):
    """Each shard ends its epoch with its weights up to date: the mixed weights (their
    mean) are a model, zero where every shard's weight is."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(200, 20)) * (rng.random((200, 20)) < 0.3)
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    model = Perceptron(update=rule, update_params={"l1": 0.1}, n_shards=2, random_state=0)
    model.fit(X, y)
    assert model.score(X, y) > 0.8
    assert np.count_nonzero(model.coef_ == 0.0) >= 2


@pytest.mark.parametrize("rule", L1_RULES)
@pytest.mark.parametrize("sparse", [False, True])
def test_non_finite_scores_stop_training_with_a_clear_error(rule, sparse):
    huge = np.array([[1e308, 1e308], [-1e308, -1e308], [1e308, -1e308], [-1e308, 1e308]])
    X = sp.csr_matrix(huge) if sparse else huge
    with pytest.raises(ValueError, match="non-finite"):
        Perceptron(update=rule, random_state=0).fit(X, [0, 1, 0, 1])


def test_a_penalty_that_overflows_is_refused_naming_the_rule():
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    with pytest.raises(
        ValueError, match=r"steps became non-finite.*update='fobos-l1' with .*l1=1e\+308"
    ):
        Perceptron(update="fobos-l1", update_params={"l1": 1e308, "eta": 1e10}).fit(X, y)
