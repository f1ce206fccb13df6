"""sample_weight and class_weight: scikit-learn's conventions, tested against the oracles.

Example ``i`` weighs ``s_i = sample_weight[i] * class_weight[y_i]``: its step is ``s_i``
times as large and it counts ``s_i`` times in an average (or, for naive Bayes, in the
counts). Weights all 1 are the unweighted model bit for bit; weight 0 is the model
trained without the example; ``class_weight`` is the matching ``sample_weight``.
(Integer weights are *not* repeated examples for the online learners: ``k`` repeats are
``k`` separate steps, each from the weights the previous one left.)
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.utils.class_weight import compute_class_weight

from perceptrons import (
    AveragedPerceptron,
    BernoulliNaiveBayes,
    LogisticRegressionSGD,
    MultinomialNaiveBayes,
    Perceptron,
    VotedPerceptron,
    reference,
)
from perceptrons.parallel import mix_threads

TOL = {"rtol": 1e-9, "atol": 1e-9}
RULES = [("perceptron", "margin"), ("pa", "pa"), ("pa-i", "pa-i"), ("pa-ii", "pa-ii")]

ESTIMATORS = [
    pytest.param(Perceptron(), id="Perceptron"),
    pytest.param(Perceptron(update="pa-ii", C=0.5, delta=0.5), id="Perceptron-pa-ii-delta"),
    pytest.param(AveragedPerceptron(), id="AveragedPerceptron"),
    pytest.param(AveragedPerceptron(update="pa", margin=0.0), id="AveragedPerceptron-pa"),
    pytest.param(AveragedPerceptron(update="pa-i", C=0.3), id="AveragedPerceptron-pa-i"),
    pytest.param(AveragedPerceptron(margin=1.0, delta=1.0), id="AveragedPerceptron-margin"),
    pytest.param(LogisticRegressionSGD(), id="LogisticRegressionSGD"),
    pytest.param(
        LogisticRegressionSGD(average=True, l2=0.05), id="LogisticRegressionSGD-average-l2"
    ),
    pytest.param(VotedPerceptron(), id="VotedPerceptron"),
    pytest.param(
        VotedPerceptron(kernel="rbf", gamma=0.5, multiclass="ovr", batch_size=7, delta=0.5),
        id="VotedPerceptron-rbf-ovr-delta",
    ),
    pytest.param(
        VotedPerceptron(kernel="poly", gamma=0.5, prediction="average", batch_size=5),
        id="VotedPerceptron-poly-average",
    ),
    pytest.param(MultinomialNaiveBayes(), id="MultinomialNaiveBayes"),
    pytest.param(BernoulliNaiveBayes(binarize=1.0), id="BernoulliNaiveBayes"),
]
ONLINE = [p for p in ESTIMATORS if "NaiveBayes" not in p.id]


def _data(n=40, d=5, k=3, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    X = rng.poisson(1.0, size=(n, d)).astype(np.float64)
    X[np.arange(n), y % d] += rng.poisson(2.0, size=n)
    return (sp.csr_matrix(X) if sparse else X), y


def _configured(estimator, **params):
    estimator = clone(estimator)
    if "random_state" in estimator.get_params():
        estimator.set_params(random_state=0)
    return estimator.set_params(**params)


def _model(estimator):
    out = {}
    for name in ("coef_", "intercept_", "feature_count_", "class_count_"):
        try:
            out[name] = getattr(estimator, name)
        except AttributeError:  # absent, or a kernel model's coef_
            pass
    X = _data(n=12, seed=1)[0]
    out["decision_function"] = estimator.decision_function(X)
    if isinstance(estimator, VotedPerceptron):  # every prediction rule
        rule = estimator.prediction
        for other in ("vote", "average", "last"):
            out[other] = estimator.set_params(prediction=other).decision_function(X)
        estimator.set_params(prediction=rule)
    return out


def _assert_same_model(a, b):
    ours, theirs = _model(a), _model(b)
    for name in ours:
        assert_array_equal(ours[name], theirs[name], err_msg=name)
    assert getattr(a, "history_", None) == getattr(b, "history_", None)


# ------------------------------------------------------------ exact identities
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_weights_of_one_are_the_unweighted_model_bit_for_bit(estimator, sparse, k):
    X, y = _data(k=k, sparse=sparse)
    plain = _configured(estimator).fit(X, y)
    for weights in (np.ones(len(y)), [1] * len(y), 1.0):
        _assert_same_model(plain, _configured(estimator).fit(X, y, sample_weight=weights))
    ones = {label: 1.0 for label in np.unique(y)}
    _assert_same_model(plain, _configured(estimator, class_weight=ones).fit(X, y))
    # partial_fit too, batch by batch
    first = _configured(estimator).partial_fit(X[:20], y[:20], classes=np.arange(k))
    second = _configured(estimator).partial_fit(
        X[:20], y[:20], classes=np.arange(k), sample_weight=np.ones(20)
    )
    first.partial_fit(X[20:], y[20:])
    second.partial_fit(X[20:], y[20:], sample_weight=np.ones(20))
    _assert_same_model(first, second)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_a_weight_of_zero_removes_the_example(estimator, sparse):
    X, y = _data(sparse=sparse)
    weights = np.ones(len(y))
    removed = [3, 4, 17, 30]
    weights[removed] = 0.0
    kept = np.setdiff1d(np.arange(len(y)), removed)
    params = {"shuffle": False} if "shuffle" in estimator.get_params() else {}
    weighted = _configured(estimator, **params).fit(X, y, sample_weight=weights)
    without = _configured(estimator, **params).fit(X[kept], y[kept])
    for name, value in _model(without).items():
        assert_array_equal(_model(weighted)[name], value, err_msg=name)
    if hasattr(without, "history_"):
        # The same updates; the epochs still report every example they were given.
        for ours, theirs in zip(weighted.history_, without.history_, strict=True):
            assert ours.get("mistakes") == theirs.get("mistakes")


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_class_weight_is_the_matching_sample_weight(estimator, sparse):
    X, y = _data(sparse=sparse)
    class_weight = {0: 0.5, 1: 2.0, 2: 1.25}
    sample_weight = np.array([class_weight[label] for label in y]) * np.linspace(0.5, 2, len(y))
    by_class = _configured(estimator, class_weight=class_weight).fit(
        X, y, sample_weight=np.linspace(0.5, 2, len(y))
    )
    by_sample = _configured(estimator).fit(X, y, sample_weight=sample_weight)
    # s_i is computed as sample_weight * class_weight either way: bit for bit.
    _assert_same_model(by_class, by_sample)


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_balanced_is_compute_class_weight(estimator):
    X, y = _data(n=40)
    y = np.where(np.arange(40) < 30, 0, np.where(np.arange(40) < 36, 1, 2))
    weights = compute_class_weight("balanced", classes=np.unique(y), y=y)
    balanced = _configured(estimator, class_weight="balanced").fit(X, y)
    explicit = _configured(estimator, class_weight=dict(enumerate(weights))).fit(X, y)
    _assert_same_model(balanced, explicit)
    with pytest.raises(ValueError, match="'balanced' is not supported by partial_fit"):
        _configured(estimator, class_weight="balanced").partial_fit(X, y)


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_partial_fit_with_weights_is_one_epoch_of_fit(estimator):
    X, y = _data()
    weights = np.linspace(0.0, 3.0, len(y))
    params = {"max_epochs": 1} if "max_epochs" in estimator.get_params() else {}
    fitted = _configured(estimator, **params).fit(X, y, sample_weight=weights)
    partial = _configured(estimator).partial_fit(X, y, sample_weight=weights)
    for name, value in _model(fitted).items():
        assert_array_equal(_model(partial)[name], value, err_msg=name)


@pytest.mark.parametrize("estimator", ONLINE)
def test_fit_epochs_takes_the_weights_of_fit(estimator):
    X, y = _data()
    weights = np.linspace(0.0, 3.0, len(y))
    fitted = _configured(estimator, max_epochs=3).fit(X, y, sample_weight=weights)
    stepped = _configured(estimator, max_epochs=3)
    records = list(stepped.fit_epochs(X, y, sample_weight=weights))
    assert len(records) == 3
    _assert_same_model(fitted, stepped)


def test_naive_bayes_counts_are_weighted_as_scikit_learn_counts_them():
    from sklearn.naive_bayes import BernoulliNB, MultinomialNB

    X, y = _data()
    weights = np.linspace(0.1, 3.0, len(y))
    for ours, theirs in (
        (MultinomialNaiveBayes(), MultinomialNB()),
        (BernoulliNaiveBayes(binarize=1.0), BernoulliNB(binarize=1.0)),
    ):
        ours.fit(X, y, sample_weight=weights)
        theirs.fit(X, y, sample_weight=weights)
        assert_allclose(ours.feature_count_, theirs.feature_count_, **TOL)
        assert_allclose(ours.class_count_, theirs.class_count_, **TOL)
        assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), **TOL)


# ------------------------------------------------------------------ the oracles
@st.composite
def weighted_problems(draw):
    k = draw(st.integers(2, 4))
    n = draw(st.integers(k, 20))
    d = draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.7)
    y = np.concatenate([np.arange(k), rng.integers(0, k, size=n - k)])
    rng.shuffle(y)
    weights = rng.uniform(0.0, 3.0, size=n) * (rng.random(n) < 0.8)
    weights[0] = max(weights[0], 0.5)  # never all zero
    return X, y, k, weights


@settings(max_examples=60, deadline=None)
@given(
    weighted_problems(),
    st.integers(1, 3),
    st.integers(0, 2**16),
    st.sampled_from(RULES),
    st.sampled_from([0.0, 0.5]),
    st.sampled_from([0.1, 1.0, 10.0]),
    st.booleans(),
)
def test_weighted_rules_equal_their_weighted_oracle(problem, epochs, seed, rule, margin, C, sparse):
    X, y, k, weights = problem
    ours, oracle_rule = rule
    if ours != "perceptron":
        margin = 0.0
    data = sp.csr_matrix(X) if sparse else X
    params = {"max_epochs": epochs, "random_state": seed, "update": ours, "margin": margin, "C": C}
    last = Perceptron(**params).fit(data, y, sample_weight=weights)
    mean = AveragedPerceptron(**params).fit(data, y, sample_weight=weights)
    orders = reference.epoch_orders(len(y), epochs, True, seed)
    options = {"rule": oracle_rule, "margin": margin, "C": C, "sample_weight": weights}
    if k == 2:
        w, b, w_mean, b_mean, updates = reference.linear_update_rule(
            X, np.where(y == 1, 1, -1), orders, **options
        )
        expected = (w[None], [b], w_mean[None], [b_mean])
    else:
        W, b, W_mean, b_mean, updates = reference.multiclass_linear_update_rule(
            X, y, k, orders, **options
        )
        expected = (W, b, W_mean, b_mean)
    assert_allclose(last.coef_, expected[0], **TOL)
    assert_allclose(last.intercept_, expected[1], **TOL)
    assert_allclose(mean.coef_, expected[2], **TOL)
    assert_allclose(mean.intercept_, expected[3], **TOL)
    assert mean._state.count == pytest.approx(epochs * weights.sum(), rel=1e-12)
    if ours == "perceptron":
        assert sum(r["updates"] for r in last.history_) == updates


@settings(max_examples=30, deadline=None)
@given(weighted_problems(), st.sampled_from(["perceptron", "pa", "pa-ii"]), st.booleans())
def test_weighted_delta_equals_weighted_explicit_augmentation(problem, rule, averaged):
    """The Δ feature steps by the same weighted step, so [X | Δ I] trains identically."""
    X, y, _, weights = problem
    cls = AveragedPerceptron if averaged else Perceptron
    params = {"update": rule, "random_state": 0, "max_epochs": 2}
    implicit = cls(delta=0.5, **params).fit(X, y, sample_weight=weights)
    augmented = np.hstack([X, 0.5 * np.eye(len(y))])
    explicit = cls(**params).fit(augmented, y, sample_weight=weights)
    assert_allclose(implicit.coef_, explicit.coef_[:, : X.shape[1]], **TOL)
    assert_allclose(implicit.intercept_, explicit.intercept_, **TOL)


@settings(max_examples=40, deadline=None)
@given(
    weighted_problems(),
    st.integers(1, 3),
    st.integers(0, 2**16),
    st.sampled_from([0.0, 0.05]),
    st.booleans(),
    st.booleans(),
)
def test_weighted_logistic_regression_equals_its_weighted_oracle(
    problem, epochs, seed, l2, average, sparse
):
    X, y, k, weights = problem
    data = sp.csr_matrix(X) if sparse else X
    model = LogisticRegressionSGD(
        learning_rate=0.3, l2=l2, average=average, max_epochs=epochs, random_state=seed
    ).fit(data, y, sample_weight=weights)
    orders = reference.epoch_orders(len(y), epochs, True, seed)
    w, b, w_mean, b_mean, losses = reference.logistic_regression_sgd(
        X, y, orders, 0.3, l2, n_classes=None if k == 2 else k, sample_weight=weights
    )
    w, b = (w_mean, b_mean) if average else (w, b)
    assert_allclose(model.coef_, np.atleast_2d(w), **TOL)
    assert_allclose(model.intercept_, np.atleast_1d(b), **TOL)
    assert_allclose([r["log_loss"] for r in model.history_], losses, **TOL)


# ---------------------------------------------------------------- parameter mixing
@pytest.mark.parametrize("cls", [Perceptron, AveragedPerceptron])
def test_one_mixing_shard_is_the_weighted_serial_fit(cls):
    X, y = _data()
    weights = np.linspace(0.0, 3.0, len(y))
    serial = cls(max_epochs=3, random_state=0).fit(X, y, sample_weight=weights)
    mixed = mix_threads(cls(max_epochs=3, random_state=0), X, y, n_shards=1, sample_weight=weights)
    # The same updates; the average's bookkeeping is summed in another order.
    assert_allclose(mixed.coef_, serial.coef_, rtol=1e-12, atol=1e-12)
    assert_allclose(mixed.intercept_, serial.intercept_, rtol=1e-12, atol=1e-12)
    assert [r["mistakes"] for r in mixed.history_] == [r["mistakes"] for r in serial.history_]


def test_mixing_shards_carry_their_own_weights():
    X, y = _data(n=60)
    weights = np.ones(len(y))
    weights[::3] = 0.0
    kept = weights > 0
    # A weight of 0 removes the example from its shard: the same as the shards without.
    for delta in (0.0, 0.5):
        dealt = Perceptron(max_epochs=3, shuffle=False, delta=delta)
        weighted = mix_threads(clone(dealt), X, y, n_shards=2, sample_weight=weights)
        assert sum(r["examples"] for r in weighted.history_[:1]) == 60
        ones = mix_threads(clone(dealt), X, y, n_shards=2, sample_weight=np.ones(len(y)))
        plain = mix_threads(clone(dealt), X, y, n_shards=2)
        _assert_same_model(ones, plain)
        assert not np.array_equal(weighted.coef_, plain.coef_)
    assert kept.sum() == 40
    balanced = Perceptron(n_shards=2, class_weight="balanced", random_state=0).fit(X, y)
    explicit = Perceptron(n_shards=2, random_state=0).fit(
        X, y, sample_weight=compute_class_weight("balanced", classes=np.unique(y), y=y)[y]
    )
    _assert_same_model(balanced, explicit)


# -------------------------------------------------------------------- validation
BAD_WEIGHTS = {
    "negative": (lambda n: np.r_[-1.0, np.ones(n - 1)], "sample_weight must be non-negative"),
    "short": (lambda n: np.ones(n - 1), r"sample_weight has shape \(\d+,\), expected"),
    "2d": (lambda n: np.ones((n, 1)), "sample_weight has shape"),
    "nan": (lambda n: np.r_[np.nan, np.ones(n - 1)], "sample_weight must be finite"),
    "inf": (lambda n: np.r_[np.inf, np.ones(n - 1)], "sample_weight must be finite"),
    "all-zero": (lambda n: np.zeros(n), "at least one non-zero"),
    "strings": (lambda n: ["a"] * n, "sample_weight must be numbers"),
}


@pytest.mark.parametrize("case", list(BAD_WEIGHTS))
@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_bad_weights_are_refused_and_leave_the_model_untouched(estimator, case):
    X, y = _data()
    make, message = BAD_WEIGHTS[case]
    model = _configured(estimator).fit(X, y)
    before = {name: np.copy(value) for name, value in _model(model).items()}
    with pytest.raises(ValueError, match=message):
        model.fit(X[:30], y[:30], sample_weight=make(30))
    if case != "all-zero":
        with pytest.raises(ValueError, match=message):
            model.partial_fit(X[:30], y[:30], sample_weight=make(30))
    with pytest.raises(ValueError, match=message):
        _configured(estimator).fit(X, y, sample_weight=make(len(y)))
    for name, value in _model(model).items():
        assert_array_equal(value, before[name], err_msg=name)


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_a_batch_of_zero_weights_changes_nothing(estimator):
    """One partial_fit batch may weigh 0 in all (a streamed chunk of zero-importance
    examples); a whole training set may not, as in scikit-learn."""
    X, y = _data()
    model = _configured(estimator).fit(X, y)
    before = {name: np.copy(value) for name, value in _model(model).items()}
    model.partial_fit(X[:30], y[:30], sample_weight=np.zeros(30))
    for name, value in _model(model).items():
        assert_array_equal(value, before[name], err_msg=name)


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_bad_class_weights_are_refused(estimator):
    X, y = _data()
    for class_weight, message in (
        ({7: 2.0}, r"class_weight names labels that are not classes: \[7\]"),
        ({0: -1.0}, "class_weight values must be finite numbers >= 0"),
        ({0: float("nan")}, "class_weight values must be finite numbers >= 0"),
        ("balance", "parameter 'class_weight' must be"),
        ([1.0, 2.0, 3.0], "parameter 'class_weight' must be"),
    ):
        with pytest.raises(ValueError, match=message):
            _configured(estimator, class_weight=class_weight).fit(X, y)


def test_a_weighted_count_saves_and_continues_exactly(tmp_path):
    from perceptrons import load, save

    X, y = _data()
    weights = np.linspace(0.1, 2.0, len(y))
    model = AveragedPerceptron(random_state=0).fit(X, y, sample_weight=weights)
    assert isinstance(model._state.count, float)
    loaded = load(save(model, tmp_path / "model.npz"))
    assert loaded._state.count == model._state.count
    assert_array_equal(loaded.coef_, model.coef_)
    model.partial_fit(X, y, sample_weight=weights)
    loaded.partial_fit(X, y, sample_weight=weights)
    assert_array_equal(loaded.coef_, model.coef_)
    plain = AveragedPerceptron(random_state=0).fit(X, y)
    assert isinstance(plain._engine().export_state()[1]["count"], int)


# ------------------------------------------------------------ the voted perceptron
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("multiclass", ["native", "ovr"])
def test_weighted_voted_perceptron_is_the_weighted_perceptrons(k, multiclass):
    """Linear kernel: "last" is Perceptron, "average" AveragedPerceptron, weighted alike;
    the dual path (a callable linear kernel) trains the same models."""
    X, y = _data(k=k)
    weights = np.linspace(0.0, 2.5, len(y))
    params = {"random_state": 0, "max_epochs": 3}
    last = Perceptron(**params).fit(X, y, sample_weight=weights)
    mean = AveragedPerceptron(**params).fit(X, y, sample_weight=weights)
    for kernel in ("linear", lambda A, B: A @ B.T):
        voted = VotedPerceptron(kernel=kernel, batch_size=6, **params)
        voted.fit(X, y, sample_weight=weights)
        if multiclass == "native" or k == 2:
            assert_allclose(
                voted.set_params(prediction="last").decision_function(X),
                last.decision_function(X),
                **TOL,
            )
            assert_allclose(
                voted.set_params(prediction="average").decision_function(X),
                mean.decision_function(X),
                **TOL,
            )
    # One-vs-rest: each column is the binary weighted perceptron of its class.
    if k > 2 and multiclass == "ovr":
        voted = VotedPerceptron(multiclass="ovr", prediction="average", **params)
        voted.fit(X, y, sample_weight=weights)
        for c in range(k):
            binary = AveragedPerceptron(**params).fit(X, y == c, sample_weight=weights)
            assert_allclose(voted.decision_function(X)[:, c], binary.decision_function(X), **TOL)


def test_weighted_votes_are_the_weight_each_model_survived():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    y = np.array([1, 0, 1, 0])
    weights = np.array([2.0, 0.5, 3.0, 1.0])
    voted = VotedPerceptron(shuffle=False, max_epochs=1).fit(X, y, sample_weight=weights)
    ((support, signs, votes, _, _),) = voted._sequences([voted._n_seen])
    assert_array_equal(support, [0, 1, 2])
    # updates on examples 0, 1 and 3 (as in the reference's doctest), steps ±s_i;
    # model k survives the weight of the examples from its update to the next one.
    assert_array_equal(signs, [2.0, -0.5, -1.0])
    assert_array_equal(votes, [0.0, 2.0, 3.5, 1.0])


def test_a_weighted_voted_model_saves_and_continues_exactly(tmp_path):
    from perceptrons import load, save

    X, y = _data()
    weights = np.linspace(0.1, 2.0, len(y))
    for params in ({}, {"kernel": "rbf", "gamma": 0.5}, {"multiclass": "ovr"}):
        model = VotedPerceptron(random_state=0, max_epochs=2, **params)
        model.fit(X, y, sample_weight=weights)
        loaded = load(save(model, tmp_path / "voted.npz"))
        for name, value in _model(model).items():
            assert_array_equal(_model(loaded)[name], value, err_msg=name)
        model.partial_fit(X, y, sample_weight=weights)
        loaded.partial_fit(X, y, sample_weight=weights)
        for name, value in _model(model).items():
            assert_array_equal(_model(loaded)[name], value, err_msg=name)
    # An unweighted model's file is unchanged: no weight bookkeeping in it.
    arrays, values = VotedPerceptron(random_state=0).fit(X, y)._codec().export_state()
    assert "update_weights" not in arrays and "weight_seen" not in values
