"""The adagrad family (AdaGrad's FOBOS and RDA forms, NAG) against its oracle, and what
every rule of the engine must do (model files, averaging, weights, refusals)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from perceptrons import AveragedPerceptron, Perceptron, reference
from perceptrons.linear._update_rules import RULES
from rule_problems import problems

TOL = {"rtol": 1e-9, "atol": 1e-9}
# (Each rule by its own update: ada-fobos-l1 and ada-rda-l1 are ada-fobos and ada-rda,
# test_sol_names_are_their_rules_with_an_l1_default.)
ADAGRAD = [
    name for name, rule in RULES.items() if rule.family == "adagrad" and rule.same_as is None
]
# The rules with an L1 penalty (NAG has none); their l1 = 0 forms are tested with every
# rule in test_rule_contract.py.
WITH_L1 = [rule for rule in ADAGRAD if "l1" in RULES[rule].constants]


def _dense(coef):
    return coef.toarray() if sp.issparse(coef) else coef


def _oracle(X, y, k, epochs, seed, rule, constants, fit_intercept, weights):
    orders = reference.epoch_orders(len(y), epochs, True, seed)
    return reference.adaptive_gradient(
        X,
        y,
        k,
        orders,
        rule=rule,
        constants=constants,
        fit_intercept=fit_intercept,
        sample_weight=weights,
    )


@settings(max_examples=80, deadline=None)
@given(
    problems(scales=[0.1, 1.0, 30.0]),
    st.integers(1, 3),
    st.integers(0, 2**16),
    st.sampled_from(ADAGRAD),
    st.sampled_from([0.05, 0.5, 2.0]),
    st.sampled_from([0.01, 1.0, 10.0]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_adagrad_rules_equal_their_oracle(
    problem, epochs, seed, rule, eta, delta, sparse, weighted, fit_intercept
):
    X, y, k = problem
    constants = {"eta": eta} if rule == "nag" else {"eta": eta, "delta": delta}
    data = sp.csr_matrix(X) if sparse else X
    rng = np.random.default_rng(seed)
    weights = rng.choice([0.0, 0.5, 1.0, 3.0], size=len(y)) if weighted else None
    if weights is not None:
        weights[:k] = 1.0  # every class keeps an example of positive weight
    params = {
        "max_epochs": epochs,
        "random_state": seed,
        "update": rule,
        "update_params": constants,
        "fit_intercept": fit_intercept,
    }
    last = Perceptron(**params).fit(data, y, sample_weight=weights)
    mean = AveragedPerceptron(**params).fit(data, y, sample_weight=weights)
    W, b, W_mean, b_mean, _ = _oracle(
        X, y, k, epochs, seed, rule, constants, fit_intercept, weights
    )
    assert_allclose(_dense(last.coef_), W, **TOL)
    assert_allclose(last.intercept_, b, **TOL)
    assert_allclose(_dense(mean.coef_), W_mean, **TOL)
    assert_allclose(mean.intercept_, b_mean, **TOL)


@settings(max_examples=40, deadline=None)
@given(
    problems(scales=[0.1, 1.0, 30.0]),
    st.integers(1, 3),
    st.integers(0, 2**16),
    st.sampled_from(["ada-fobos", "ada-rda"]),
    st.sampled_from([0.001, 0.05, 0.3]),
    st.booleans(),
    st.booleans(),
)
def test_the_l1_penalty_applied_lazily_equals_every_round(
    problem, epochs, seed, rule, l1, sparse, weighted
):
    """The oracle shrinks every weight every round; the kernels only the features of
    each example, and all at the end of the epoch."""
    X, y, k = problem
    constants = {"eta": 0.5, "delta": 1.0, "l1": l1}
    rng = np.random.default_rng(seed)
    weights = rng.choice([0.0, 0.5, 1.0, 3.0], size=len(y)) if weighted else None
    if weights is not None:
        weights[:k] = 1.0
    params = {"max_epochs": epochs, "random_state": seed, "update": rule}
    model = Perceptron(**params, update_params=constants).fit(
        sp.csr_matrix(X) if sparse else X, y, sample_weight=weights
    )
    W, b, _, _, _ = _oracle(X, y, k, epochs, seed, rule, constants, True, weights)
    assert_allclose(_dense(model.coef_), W, **TOL)
    assert_allclose(model.intercept_, b, **TOL)


def test_the_l1_penalty_makes_weights_exactly_zero():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 30))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    for rule in ("ada-fobos", "ada-rda"):
        plain = Perceptron(update=rule, random_state=0).fit(X, y)
        assert np.count_nonzero(plain.coef_) == 30
    # RDA's threshold grows with t: only the two informative features stay.
    rda = Perceptron(update="ada-rda", random_state=0, update_params={"l1": 0.2}).fit(X, y)
    assert np.flatnonzero(rda.coef_[0]).tolist() == [0, 1]
    assert np.all(rda.coef_[0, :2] > 0)
    # FOBOS zeroes weights too, the noise features kicked by each gradient less often.
    fobos = Perceptron(update="ada-fobos", random_state=0, update_params={"l1": 0.2}).fit(X, y)
    assert np.count_nonzero(fobos.coef_) < 28
    assert np.all(fobos.coef_[0, :2] > 0.5)


@pytest.mark.parametrize("rule", ["ada-fobos", "ada-rda"])
def test_averaging_with_l1_is_refused(rule):
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"l1 > 0 cannot be averaged"):
        AveragedPerceptron(update=rule, update_params={"l1": 0.1}).fit(X, y)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_nag_is_independent_of_the_scale_of_each_feature(n_classes):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 6)) * (rng.random((300, 6)) < 0.6)
    y = rng.integers(0, n_classes, size=300)
    scaled = X.copy()
    scaled[:, 2] *= 1000.0
    scaled[:, 4] *= 0.001
    for data, other in ((X, scaled), (sp.csr_matrix(X), sp.csr_matrix(scaled))):
        params = {"update": "nag", "random_state": 0, "max_epochs": 5}
        model = AveragedPerceptron(**params).fit(data, y)
        rescaled = AveragedPerceptron(**params).fit(other, y)
        np.testing.assert_array_equal(model.predict(data), rescaled.predict(other))
        assert_allclose(
            model.decision_function(data), rescaled.decision_function(other), rtol=1e-9, atol=1e-9
        )
        assert_allclose(_dense(rescaled.coef_)[..., 2] * 1000.0, _dense(model.coef_)[..., 2])
    # AdaGrad is not: the large column takes larger steps in its own units.
    params = {"update": "ada-fobos", "random_state": 0, "max_epochs": 5}
    model = AveragedPerceptron(**params).fit(X, y)
    rescaled = AveragedPerceptron(**params).fit(scaled, y)
    assert not np.allclose(model.decision_function(X), rescaled.decision_function(scaled))


@pytest.mark.parametrize("rule", WITH_L1)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_dense_and_sparse_train_the_same_model_with_l1(rule, n_classes):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 8)) * (rng.random((60, 8)) < 0.4)
    y = rng.integers(0, n_classes, size=60)
    params = {"update": rule, "random_state": 1, "max_epochs": 3, "update_params": {"l1": 0.01}}
    dense = Perceptron(**params).fit(X, y)  # (an L1 penalty is not averaged)
    sparse = Perceptron(**params).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(_dense(dense.coef_), _dense(sparse.coef_))
    np.testing.assert_array_equal(dense.intercept_, sparse.intercept_)


@pytest.mark.parametrize("rule", WITH_L1)
def test_partial_fit_in_batches_equals_one_epoch_in_order_with_l1(rule):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 5))
    y = rng.integers(0, 3, size=40)
    params = {"update": rule, "shuffle": False, "max_epochs": 1, "update_params": {"l1": 0.02}}
    whole = Perceptron(**params).fit(X, y)
    parts = Perceptron(**params)
    for start in range(0, 40, 7):
        parts.partial_fit(X[start : start + 7], y[start : start + 7], classes=[0, 1, 2])
    assert_allclose(parts.coef_, whole.coef_, **TOL)


def test_the_mistake_log_names_the_updates():
    from perceptrons._kernels import adagrad

    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    y = np.array([0, 1, 2])
    weights, aux = np.zeros((3, 3)), np.zeros((0, 0))
    stats, scalars = np.zeros((1, 3, 3)), np.zeros(1)
    log = np.full((3, 2), -7, dtype=np.int64)
    rule = adagrad.adagrad_rule("ada-fobos", 1.0, {"eta": 1.0, "delta": 10.0, "l1": 0.0})
    order = np.arange(3)
    updates, mistakes, count = adagrad.multiclass_epoch(
        X, y, order, weights, aux, stats, scalars, log, 0.0, rule, np.zeros(0)
    )
    assert (updates, count) == (3, 3.0)
    # Example 0 (gold 0): all scores 0, the prediction (ties to the lowest) is right, the
    # best other class 1 ties it (margin 0 < 1: an update). Examples 1 and 2 are wrong.
    assert mistakes == 2
    assert log[0].tolist() == [0, 1]
    assert log[1].tolist()[0] == 1 and log[2].tolist()[0] == 2
    assert scalars[0] == 3.0


def test_a_non_finite_score_stops_training():
    # Random labels: every epoch updates, and steps of up to 1e308 on ten features
    # (1e10 each) overflow the scores, whatever the order.
    rng = np.random.default_rng(0)
    X = rng.choice([-1e10, 1e10], size=(20, 10))
    y = rng.integers(0, 2, size=20)
    for rule in ADAGRAD:
        # (RDA's change, new weight minus old, of two weights near 1e308: its step)
        overflow = r"(scores|steps) became non-finite.*update='.*' with eta=1e\+308"
        with pytest.raises(ValueError, match=overflow):
            Perceptron(update=rule, update_params={"eta": 1e308}, max_epochs=3).fit(X, y)


def test_ada_rda_refuses_parameter_mixing_and_the_others_mix():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(80, 5))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=r"parameter mixing.*sum of gradients"):
        Perceptron(update="ada-rda", n_shards=2).fit(X, y)
    for rule in ("ada-fobos", "nag"):
        model = Perceptron(update=rule, n_shards=2, random_state=0).fit(X, y)
        assert model.score(X, y) > 0.8


def test_bad_update_params_are_refused_by_name():
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"update_params\['delta'\].*ada-fobos.*\(0, inf\]"):
        Perceptron(update="ada-fobos", update_params={"delta": 0.0}).fit(X, y)
    with pytest.raises(ValueError, match=r"update_params\['l1'\].*ada-rda.*\[0, inf\]"):
        Perceptron(update="ada-rda", update_params={"l1": -1.0}).fit(X, y)
    with pytest.raises(ValueError, match=r"no constant 'l1'.*its constants: eta"):
        Perceptron(update="nag", update_params={"l1": 1.0}).fit(X, y)


@pytest.mark.parametrize("l1", [0.0, 0.01])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_rda_weights_follow_new_constants_on_every_feature(l1, n_classes):
    """RDA's weights are a function of its statistics and constants: a later call with
    another eta or delta recomputes every weight, not only the features it sees."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 6))
    y = rng.integers(0, n_classes, size=40)
    model = Perceptron(update="ada-rda", random_state=0, update_params={"l1": l1}).fit(X, y)
    model.set_params(update_params={"eta": 0.25, "delta": 2.0, "l1": l1})
    only_first = np.zeros((1, 6))
    only_first[0, 0] = 1.0
    model.partial_fit(only_first, y[:1])
    state = model._state
    G, u, t = state.stats[0], state.stats[1], state.scalars[0]
    expected = -0.25 * np.sign(u) * np.maximum(np.abs(u) - l1 * t, 0.0) / (2.0 + np.sqrt(G))
    expected[-1] = -0.25 * u[-1] / (2.0 + np.sqrt(G[-1]))  # the intercept: no penalty
    coef = model.coef_.ravel() if n_classes == 2 else model.coef_.T.ravel()
    assert_allclose(np.append(coef, model.intercept_), expected.ravel(), **TOL)


@pytest.mark.parametrize(
    ("name", "rule"), [("ada-fobos-l1", "ada-fobos"), ("ada-rda-l1", "ada-rda")]
)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_sol_names_are_their_rules_with_an_l1_default(name, rule, n_classes, tmp_path):
    """SOL's ada-fobos-l1 and ada-rda-l1: the same kernels and state as ada-fobos and
    ada-rda, bit for bit at the same l1, with an L1 strength on by default that zeroes
    weights the plain rule keeps."""
    from perceptrons.io.persist import load, save

    rng = np.random.default_rng(7)
    X = rng.normal(size=(120, 20)) * (rng.random((120, 20)) < 0.5)
    y = rng.integers(0, n_classes, size=120)
    l1 = RULES[name].constants["l1"].default
    assert l1 > 0 and RULES[rule].constants["l1"].default == 0
    weights = rng.choice([0.0, 0.5, 1.0, 3.0], size=120)
    for params in ({}, {"l1": 0.01, "eta": 0.5}):
        options = {"random_state": 1, "max_epochs": 3}
        sol = Perceptron(update=name, update_params=params, **options)
        ours = Perceptron(update=rule, update_params={"l1": l1, **params}, **options)
        sol.fit(sp.csr_matrix(X), y, sample_weight=weights)
        ours.fit(sp.csr_matrix(X), y, sample_weight=weights)
        np.testing.assert_array_equal(_dense(sol.coef_), _dense(ours.coef_))
        np.testing.assert_array_equal(sol.intercept_, ours.intercept_)
        # A saved model goes on training as the plain rule's does.
        loaded = load(save(sol, tmp_path / f"{name}.npz"))
        loaded.partial_fit(X[:40], y[:40])
        ours.partial_fit(X[:40], y[:40])
        np.testing.assert_array_equal(_dense(loaded.coef_), _dense(ours.coef_))


@pytest.mark.parametrize(
    ("name", "rule", "at_most"), [("ada-fobos-l1", "ada-fobos", 95), ("ada-rda-l1", "ada-rda", 55)]
)
def test_the_l1_default_makes_a9a_sparser_at_the_same_accuracy(name, rule, at_most):
    """The default L1 strength of SOL's names (measured: one epoch, ada-fobos 119 -> 90
    nonzero weights of 123, test accuracy 0.8465 -> 0.8441; ada-rda 116 -> 46, 0.8444 ->
    0.8460)."""
    from perceptrons.datasets import load_a9a, shared_data_dir

    if shared_data_dir() is None or not (shared_data_dir() / "a9a" / "a9a.t").is_file():
        pytest.skip("needs ../shared/data/a9a (or $PERCEPTRONS_DATA)")
    X, y, X_test, y_test = load_a9a()
    plain = Perceptron(update=rule, random_state=0, max_epochs=1).fit(X, y)
    sparse = Perceptron(update=name, random_state=0, max_epochs=1).fit(X, y)
    assert np.count_nonzero(plain.coef_) > 110
    assert np.count_nonzero(sparse.coef_) <= at_most
    assert sparse.score(X_test, y_test) > plain.score(X_test, y_test) - 0.01
