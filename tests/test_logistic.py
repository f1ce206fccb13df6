"""LogisticRegressionSGD against seed 004's reference SGD, and its behaviour."""

import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import softmax

from perceptrons import datasets, reference
from perceptrons.linear import _online_engine, logistic
from perceptrons.logistic import LogisticRegressionSGD

TOL = {"rtol": 1e-9, "atol": 1e-9}


@st.composite
def problems(draw, n_classes=None):
    """A small random classification problem with every class present."""
    k = draw(st.integers(2, 4)) if n_classes is None else n_classes
    n = draw(st.integers(k, 20))
    d = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.6)
    y = np.concatenate([np.arange(k), rng.integers(0, k, size=n - k)])
    rng.shuffle(y)
    return X, y, k


def _oracle(data_, y, k, orders, learning_rate, l2, average):
    """The reference's model as (coef_, intercept_) shaped like the estimator's."""
    w, b, w_mean, b_mean, losses = reference.logistic_regression_sgd(
        data_, y, orders, learning_rate, l2, n_classes=None if k == 2 else k
    )
    w, b = (w_mean, b_mean) if average else (w, b)
    return np.atleast_2d(w), np.atleast_1d(b), losses


def _check_equals_oracle(X, y, k, epochs, shuffle, seed, sparse, learning_rate, l2, average):
    data_ = sp.csr_matrix(X) if sparse else X
    model = LogisticRegressionSGD(
        learning_rate=learning_rate,
        l2=l2,
        average=average,
        max_epochs=epochs,
        shuffle=shuffle,
        random_state=seed,
    ).fit(data_, y)
    orders = reference.epoch_orders(len(y), epochs, shuffle=shuffle, random_state=seed)
    W, b, losses = _oracle(data_, y, k, orders, learning_rate, l2, average)
    assert_allclose(model.coef_, W, **TOL)
    assert_allclose(model.intercept_, b, **TOL)
    assert_allclose([r["log_loss"] for r in model.history_], losses, **TOL)
    assert [r["examples"] for r in model.history_] == [len(y)] * epochs
    return model


settings_ = settings(max_examples=40, deadline=None)
epochs_ = st.integers(1, 4)
seeds_ = st.integers(0, 2**16)
# l2 = 0.5 with learning_rate 1.0 halves the weights every example: the lazy scale
# falls below both rescaling thresholds within 30 examples.
l2_ = st.sampled_from([0.0, 0.01, 0.5])
learning_rates_ = st.sampled_from([0.1, 0.5, 1.0])


@settings_
@given(problems(n_classes=2), epochs_, st.booleans(), seeds_, st.booleans(), learning_rates_, l2_)
def test_binary_equals_oracle(problem, epochs, shuffle, seed, sparse, learning_rate, l2):
    X, y, k = problem
    _check_equals_oracle(X, y, k, epochs, shuffle, seed, sparse, learning_rate, l2, False)


@settings_
@given(problems(n_classes=2), epochs_, st.booleans(), seeds_, st.booleans(), learning_rates_, l2_)
def test_binary_averaged_is_the_exact_mean(problem, epochs, shuffle, seed, sparse, lr, l2):
    X, y, k = problem
    _check_equals_oracle(X, y, k, epochs, shuffle, seed, sparse, lr, l2, True)


@settings_
@given(
    problems(),
    epochs_,
    st.booleans(),
    seeds_,
    st.booleans(),
    learning_rates_,
    l2_,
    st.booleans(),
)
def test_multinomial_equals_oracle(problem, epochs, shuffle, seed, sparse, lr, l2, average):
    X, y, k = problem
    if k == 2:
        return  # two labels are a binary problem: one weight vector, covered above
    _check_equals_oracle(X, y, k, epochs, shuffle, seed, sparse, lr, l2, average)


@settings(max_examples=20, deadline=None)
@given(problems(), st.booleans(), st.booleans(), st.sampled_from([0.0, 0.01, 0.5]))
def test_rescaling_at_every_example_changes_nothing(problem, sparse, average, l2):
    """A threshold of 1 folds the scale into the weights (and the running sum into
    aux) after every example: the rescaling path alone must give the same model."""
    X, y, k = problem
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(logistic, "_MIN_SCALE", 1.0)
        patch.setattr(logistic, "_MIN_SCALE_AVERAGED", 1.0)
        _check_equals_oracle(X, y, k, 3, True, 0, sparse, 0.5, l2, average)


@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_many_rescales_keep_the_exact_mean(average, n_classes):
    """600 examples at decay 0.5 cross the threshold dozens of times (0.5 ** 600 would
    underflow without rescaling); the mean stays exact to 1e-9."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5)) * (rng.random((200, 5)) < 0.5)
    y = rng.integers(0, n_classes, size=200)
    model = _check_equals_oracle(X, y, n_classes, 3, True, 1, True, 1.0, 0.5, average)
    threshold = logistic._MIN_SCALE_AVERAGED if average else logistic._MIN_SCALE
    assert threshold <= model._state.scale <= 1.0


def test_no_prior_is_the_averaged_perceptron_bookkeeping():
    """With l2 = 0 the scale stays 1 and its running sum is the example count."""
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(30, 4)), rng.integers(0, 3, size=30)
    model = LogisticRegressionSGD(l2=0.0, average=True, max_epochs=2).fit(X, y)
    assert model._state.scale == 1.0
    assert model._state.scale_sum == model._state.count == 60


def test_probabilities_are_the_softmax_of_the_scores():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 4))
    for k in (2, 4):
        y = rng.integers(0, k, size=50)
        model = LogisticRegressionSGD(learning_rate=0.5, random_state=0).fit(X, y)
        scores = model.decision_function(X)
        logits = np.column_stack([np.zeros_like(scores), scores]) if k == 2 else scores
        proba = model.predict_proba(X)
        assert proba.shape == (50, k)
        assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        assert_allclose(proba, softmax(logits, axis=1), rtol=1e-12, atol=1e-15)
        assert_allclose(model.predict_log_proba(X), np.log(proba), rtol=1e-12, atol=1e-12)
        assert_array_equal(model.predict(X), model.classes_[np.argmax(proba, axis=1)])


@pytest.mark.parametrize("k", [2, 3])
def test_huge_scores_neither_overflow_nor_give_nan(k):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3)) * 1e4  # scores of 1e8 and more: exp would overflow
    y = rng.integers(0, k, size=40)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or divide warning anywhere
        model = LogisticRegressionSGD(learning_rate=1.0, random_state=0).fit(X, y)
        proba = model.predict_proba(X)
        log_proba = model.predict_log_proba(X)
    assert np.all(np.isfinite(model.coef_)) and np.all(np.isfinite(proba))
    assert all(np.isfinite(r["log_loss"]) for r in model.history_)
    assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(log_proba <= 0) and not np.any(np.isnan(log_proba))
    assert np.isneginf(log_proba).sum() == 0  # log σ(-z) is -z, not log(0)


@settings(max_examples=30, deadline=None)
@given(problems(), st.integers(1, 4), st.booleans(), st.sampled_from([0.0, 0.3]))
def test_partial_fit_batches_equal_one_unshuffled_epoch(problem, n_batches, average, l2):
    X, y, k = problem
    params = {"learning_rate": 0.5, "l2": l2, "average": average, "shuffle": False}
    model = LogisticRegressionSGD(**params)
    bounds = np.linspace(0, len(y), n_batches + 1).astype(int)
    for start, stop in itertools.pairwise(bounds):
        if stop > start:
            model.partial_fit(X[start:stop], y[start:stop], classes=np.arange(k))
    full = LogisticRegressionSGD(max_epochs=1, **params).fit(X, y)
    assert_allclose(model.coef_, full.coef_, **TOL)
    assert_allclose(model.intercept_, full.intercept_, **TOL)


def test_average_is_exact_across_fit_and_partial_fit():
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(30, 4)), rng.integers(0, 3, size=30)
    model = LogisticRegressionSGD(l2=0.2, average=True, max_epochs=2, shuffle=False)
    model.fit(X, y).partial_fit(X[:10], y[:10])
    orders = [np.arange(30), np.arange(30), np.arange(10)]
    W, b, _ = _oracle(X, y, 3, orders, 0.1, 0.2, True)
    assert_allclose(model.coef_, W, **TOL)
    assert_allclose(model.intercept_, b, **TOL)
    assert [r["examples"] for r in model.history_] == [30, 30, 10]


def test_changing_average_between_partial_fit_calls_is_an_error():
    X, y = np.array([[0.0], [1.0]]), np.array([0, 1])
    model = LogisticRegressionSGD().partial_fit(X, y)
    with pytest.raises(ValueError, match="average=True differs"):
        model.set_params(average=True).partial_fit(X, y)


@pytest.mark.parametrize("sparse", [False, True])
def test_fit_epochs_is_fit_paused_after_every_epoch(monkeypatch, sparse):
    monkeypatch.setattr(_online_engine, "PROGRESS_CHUNK", 7)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(50, 3)) * (rng.random((50, 3)) < 0.7)
    y = rng.integers(0, 3, size=50)
    data_ = sp.csr_matrix(X) if sparse else X
    params = {"max_epochs": 3, "l2": 0.1, "average": True, "random_state": 0}
    whole = LogisticRegressionSGD(**params).fit(data_, y)
    paused = LogisticRegressionSGD(**params)
    done, coefs = [], []
    for record in paused.fit_epochs(data_, y, progress=done.append):
        coefs.append(paused.coef_.copy())
        assert record == paused.history_[-1]
    assert len(done) == 3 * 8 and sum(done) == 3 * 50  # chunks of 7 examples
    assert_allclose(paused.coef_, whole.coef_, **TOL)
    assert [r["examples"] for r in paused.history_] == [50] * 3
    first = LogisticRegressionSGD(**{**params, "max_epochs": 1}).fit(data_, y)
    assert_allclose(coefs[0], first.coef_, **TOL)


@pytest.mark.parametrize("average", [False, True])
def test_intercept_is_a_constant_feature_without_prior(average):
    rng = np.random.default_rng(6)
    X, y = rng.normal(size=(40, 3)), rng.integers(0, 2, size=40)
    augmented = np.hstack([X, np.ones((40, 1))])

    def fit(data_, l2, fit_intercept):
        return LogisticRegressionSGD(
            l2=l2, average=average, fit_intercept=fit_intercept, random_state=0
        ).fit(data_, y)

    with_bias, no_bias = fit(X, 0.0, True), fit(augmented, 0.0, False)
    assert_array_equal(no_bias.intercept_, [0.0])
    assert_allclose(no_bias.coef_[:, -1], with_bias.intercept_, **TOL)
    assert_allclose(no_bias.coef_[:, :-1], with_bias.coef_, **TOL)
    # With a prior the constant feature's weight decays; the intercept does not.
    assert not np.allclose(fit(augmented, 0.5, False).coef_[:, -1], fit(X, 0.5, True).intercept_)


def test_export_import_state_continues_exactly():
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(40, 4)), rng.integers(0, 3, size=40)
    model = LogisticRegressionSGD(l2=0.3, average=True, random_state=0).fit(X, y)
    arrays, values = model._engine().export_state()
    copy = LogisticRegressionSGD(**model.get_params())
    copy.classes_, copy.n_features_in_, copy.history_ = model.classes_, 4, list(model.history_)
    copy.random_state_ = np.random.RandomState()
    copy.random_state_.set_state(model.random_state_.get_state())
    copy._engine().import_state({k: v.copy() for k, v in arrays.items()}, dict(values))
    assert_array_equal(copy.predict_proba(X), model.predict_proba(X))
    model.partial_fit(X[:9], y[:9])
    copy.partial_fit(X[:9], y[:9])
    assert_array_equal(copy.coef_, model.coef_)
    assert_array_equal(copy.intercept_, model.intercept_)
    with pytest.raises(ValueError, match="do not fit"):
        copy._engine().import_state({**arrays, "weights": np.zeros(3)}, values)


def test_same_seed_same_model_and_any_label_type():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(60, 4))
    labels = np.array(["eggs", "ham", "spam"])
    y = labels[rng.integers(0, 3, size=60)]
    a = LogisticRegressionSGD(random_state=7).fit(X, y)
    b = LogisticRegressionSGD(random_state=7).fit(X, np.searchsorted(labels, y))
    c = LogisticRegressionSGD(random_state=8).fit(X, y)
    assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)
    assert set(a.predict(X)) <= set(labels)


def test_verbose_prints_one_line_per_epoch(capsys):
    LogisticRegressionSGD(max_epochs=3, verbose=1).fit(np.array([[1.0], [-1.0]]), [1, 0])
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3 and "epoch 3" in lines[-1] and "log-loss" in lines[-1]


# ------------------------------------------------------------------- shared data sets

SHARED = datasets.shared_data_dir()
needs_data = pytest.mark.skipif(SHARED is None, reason="no shared data directory")


def _against_sklearn(X_train, y_train, X_test, y_test, model, sklearn_model):
    ours = model.fit(X_train, y_train).score(X_test, y_test)
    theirs = sklearn_model.fit(X_train, y_train).score(X_test, y_test)
    assert ours >= theirs - 0.005, f"ours {ours:.4f} vs scikit-learn {theirs:.4f}"


@needs_data
def test_sentiment_accuracy_matches_sklearn():
    """Bag of words, file order 80/20. l2 = 1 / (C n) with C = 1 and n = 4000 training
    documents is scikit-learn's penalty per example; averaged, 20 epochs at 0.01.
    Measured: ours 0.805, scikit-learn 0.800."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    docs_train, y_train, docs_test, y_test = datasets.load_sentiment()
    vectorizer = CountVectorizer(analyzer=str.split).fit(docs_train)
    X_train, X_test = vectorizer.transform(docs_train), vectorizer.transform(docs_test)
    model = LogisticRegressionSGD(
        learning_rate=0.01, l2=1 / 4000, average=True, max_epochs=20, random_state=0
    )
    # newton-cg: the default lbfgs's objective, converged in seconds on raw counts.
    sklearn_model = LogisticRegression(solver="newton-cg", max_iter=1000)
    _against_sklearn(X_train, y_train, X_test, y_test, model, sklearn_model)


@needs_data
def test_a9a_accuracy_matches_sklearn():
    """l2 = 1 / (C n) with C = 1, n = 32561; averaged, 3 epochs at 0.01.
    Measured: ours 0.8520, scikit-learn 0.8495."""
    from sklearn.linear_model import LogisticRegression

    X_train, y_train, X_test, y_test = datasets.load_a9a()
    model = LogisticRegressionSGD(
        learning_rate=0.01, l2=1 / 32561, average=True, max_epochs=3, random_state=0
    )
    sklearn_model = LogisticRegression(max_iter=1000)
    _against_sklearn(X_train, y_train, X_test, y_test, model, sklearn_model)
