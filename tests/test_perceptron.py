"""The compiled estimators against the seeds' reference algorithms, and their behaviour."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from perceptrons import AveragedPerceptron, Perceptron, reference
from perceptrons._kernels import perceptron as perceptron_kernels

TOL = {"rtol": 1e-9, "atol": 1e-9}


@st.composite
def problems(draw, n_classes=None):
    """A small random classification problem with every class present."""
    k = draw(st.integers(2, 4)) if n_classes is None else n_classes
    n = draw(st.integers(k, 20))
    d = draw(st.integers(1, 6))
    integer_valued = draw(st.booleans())
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    if integer_valued:
        # Exact arithmetic: every implementation must make bit-identical decisions.
        X = rng.integers(-3, 4, size=(n, d)).astype(np.float64)
    else:
        X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.6)
    y = np.concatenate([np.arange(k), rng.integers(0, k, size=n - k)])
    rng.shuffle(y)
    return X, y, k


def _fit_both(estimator_cls, X, y, epochs, shuffle, seed, sparse):
    data = sp.csr_matrix(X) if sparse else X
    model = estimator_cls(max_epochs=epochs, shuffle=shuffle, random_state=seed).fit(data, y)
    orders = reference.epoch_orders(len(y), epochs, shuffle=shuffle, random_state=seed)
    return model, data, orders


settings_ = settings(max_examples=60, deadline=None)
epochs_ = st.integers(1, 4)
seeds_ = st.integers(0, 2**16)


@settings_
@given(problems(n_classes=2), epochs_, st.booleans(), seeds_, st.booleans())
def test_binary_perceptron_equals_vanilla_oracle(problem, epochs, shuffle, seed, sparse):
    X, y, _ = problem
    model, data, orders = _fit_both(Perceptron, X, y, epochs, shuffle, seed, sparse)
    w, b, mistakes = reference.perceptron(data, np.where(y == 1, 1, -1), orders)
    assert_allclose(model.coef_.ravel(), w, **TOL)
    assert_allclose(model.intercept_, [b], **TOL)
    assert [record["mistakes"] for record in model.history_] == mistakes


@settings_
@given(problems(n_classes=2), epochs_, st.booleans(), seeds_, st.booleans())
def test_binary_averaged_equals_every_averaging_oracle(problem, epochs, shuffle, seed, sparse):
    X, y, _ = problem
    model, data, orders = _fit_both(AveragedPerceptron, X, y, epochs, shuffle, seed, sparse)
    signs = np.where(y == 1, 1, -1)
    n_total = epochs * len(y)
    w_mean, b_mean = reference.averaged_perceptron_naive(data, signs, orders)
    w_sum, b_sum = reference.averaged_perceptron_delta_list(data, signs, orders)
    w_fast, b_fast = reference.averaged_perceptron_fast(data, signs, orders)
    w_wb, b_wb = reference.averaged_perceptron_wb(data, signs, orders)
    w_step, b_step = reference.averaged_perceptron_decreasing_step(data, signs, orders)
    candidates = {
        "naive": (w_mean, b_mean),
        "delta list": (w_sum / n_total, b_sum / n_total),
        "fastest": (w_fast / n_total, b_fast / n_total),
        # Seed 002 divides the sum by c = N + 1 (it also counts the initial zero vector).
        "w,b,u,beta,c": (w_wb * (n_total + 1) / n_total, b_wb * (n_total + 1) / n_total),
        "decreasing step": (w_step, b_step),
    }
    for name, (w, b) in candidates.items():
        assert_allclose(model.coef_.ravel(), w, **TOL, err_msg=name)
        assert_allclose(model.intercept_, [b], **TOL, err_msg=name)


@settings_
@given(problems(), epochs_, st.booleans(), seeds_, st.booleans())
def test_multiclass_perceptron_equals_oracle(problem, epochs, shuffle, seed, sparse):
    X, y, k = problem
    if k == 2:
        return  # two labels are a binary problem: one weight vector, covered above
    model, data, orders = _fit_both(Perceptron, X, y, epochs, shuffle, seed, sparse)
    W, b, mistakes = reference.multiclass_perceptron(data, y, k, orders)
    assert_allclose(model.coef_, W, **TOL)
    assert_allclose(model.intercept_, b, **TOL)
    assert [record["mistakes"] for record in model.history_] == mistakes


@settings_
@given(problems(), epochs_, st.booleans(), seeds_, st.booleans())
def test_multiclass_averaged_equals_oracles(problem, epochs, shuffle, seed, sparse):
    X, y, k = problem
    if k == 2:
        return
    model, data, orders = _fit_both(AveragedPerceptron, X, y, epochs, shuffle, seed, sparse)
    n_total = epochs * len(y)
    W_mean, b_mean = reference.multiclass_averaged_perceptron_naive(data, y, k, orders)
    W_seed, b_seed = reference.multiclass_averaged_perceptron(data, y, k, orders)
    assert_allclose(model.coef_, W_mean, **TOL)
    assert_allclose(model.intercept_, b_mean, **TOL)
    # Seed 001's counter starts at 1, so it divides the sum by N + 1.
    assert_allclose(model.coef_, W_seed * (n_total + 1) / n_total, **TOL)
    assert_allclose(model.intercept_, b_seed * (n_total + 1) / n_total, **TOL)


@settings_
@given(problems(), epochs_, seeds_, st.sampled_from([Perceptron, AveragedPerceptron]))
def test_every_input_layout_gives_the_identical_model(problem, epochs, seed, cls):
    X, y, _ = problem
    reference_model = cls(max_epochs=epochs, random_state=seed).fit(X, y)
    layouts = {
        "csr": sp.csr_matrix(X),
        "csc": sp.csc_matrix(X),
        "coo": sp.coo_matrix(X),
        "csr_array": sp.csr_array(X),
        "fortran": np.asfortranarray(X),
    }
    for name, data in layouts.items():
        model = cls(max_epochs=epochs, random_state=seed).fit(data, y)
        assert_array_equal(model.coef_, reference_model.coef_, err_msg=name)
        assert_array_equal(model.intercept_, reference_model.intercept_, err_msg=name)


@settings_
@given(problems(), epochs_, seeds_, st.sampled_from([Perceptron, AveragedPerceptron]))
def test_intercept_is_the_weight_of_a_constant_feature(problem, epochs, seed, cls):
    X, y, _ = problem
    with_bias = cls(max_epochs=epochs, random_state=seed).fit(X, y)
    augmented = np.hstack([X, np.ones((X.shape[0], 1))])
    no_bias = cls(max_epochs=epochs, random_state=seed, fit_intercept=False).fit(augmented, y)
    assert_array_equal(no_bias.intercept_, np.zeros_like(no_bias.intercept_))
    assert_allclose(no_bias.coef_[:, :-1], with_bias.coef_, **TOL)
    assert_allclose(no_bias.coef_[:, -1], with_bias.intercept_, **TOL)


@settings_
@given(problems(), st.integers(1, 4), st.sampled_from([Perceptron, AveragedPerceptron]))
def test_partial_fit_continues_exactly(problem, n_batches, cls):
    """Batches fed to partial_fit equal one unshuffled epoch over their concatenation,
    and the average read after each call is the exact mean so far."""
    X, y, k = problem
    classes = np.arange(k)
    model = cls(shuffle=False)
    bounds = np.linspace(0, len(y), n_batches + 1).astype(int)
    for start, stop in itertools.pairwise(bounds):
        if stop > start:
            model.partial_fit(X[start:stop], y[start:stop], classes=classes)
    full = cls(max_epochs=1, shuffle=False).fit(X, y)
    assert_allclose(model.coef_, full.coef_, **TOL)
    assert_allclose(model.intercept_, full.intercept_, **TOL)


def test_average_is_exact_across_fit_and_partial_fit():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    y = rng.integers(0, 3, size=30)
    model = AveragedPerceptron(max_epochs=2, shuffle=False).fit(X, y)
    model.partial_fit(X[:10], y[:10])
    orders = [np.arange(30), np.arange(30), np.arange(10)]
    W, b = reference.multiclass_averaged_perceptron_naive(X, y, 3, orders)
    assert_allclose(model.coef_, W, **TOL)
    assert_allclose(model.intercept_, b, **TOL)
    assert [r["examples"] for r in model.history_] == [30, 30, 10]


def test_warm_start_continues_training():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 5))
    y = rng.integers(0, 2, size=40)
    model = AveragedPerceptron(max_epochs=2, shuffle=False, warm_start=True)
    model.fit(X, y).fit(X, y)
    once = AveragedPerceptron(max_epochs=4, shuffle=False).fit(X, y)
    assert_allclose(model.coef_, once.coef_, **TOL)
    assert len(model.history_) == 4
    cold = AveragedPerceptron(max_epochs=2, shuffle=False).fit(X, y).fit(X, y)
    assert len(cold.history_) == 2


@pytest.mark.parametrize(
    "labels",
    [
        np.array(["spam", "ham", "eggs"]),
        np.array([10, -3, 7]),
        np.array([True, False]),
        np.array(["neg", "pos"], dtype=object),
    ],
)
def test_any_label_type_is_accepted_and_predicted_back(labels):
    rng = np.random.default_rng(3)
    codes = rng.integers(0, len(labels), size=50)
    codes[: len(labels)] = np.arange(len(labels))
    X = rng.normal(size=(50, 3)) + codes[:, None] * 3.0
    y = labels[codes]
    model = AveragedPerceptron(max_epochs=20, random_state=0).fit(X, y)
    assert_array_equal(model.classes_, np.sort(labels))
    # Labels only name the classes: training on their sorted ranks gives the same model.
    ranks = np.searchsorted(np.sort(labels), y)
    on_ranks = AveragedPerceptron(max_epochs=20, random_state=0).fit(X, ranks)
    assert_array_equal(model.coef_, on_ranks.coef_)
    assert_array_equal(model.predict(X), model.classes_[on_ranks.predict(X)])


def test_binary_prediction_follows_the_sign_of_the_score():
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [2.0, 1.0], [-2.0, -1.0]])
    y = np.array(["b", "a", "b", "a"])
    model = Perceptron(max_epochs=5, shuffle=False).fit(X, y)
    scores = model.decision_function(X)
    assert scores.shape == (4,)
    assert_array_equal(model.predict(X), np.where(scores > 0, "b", "a"))
    assert model.coef_.shape == (1, 2) and model.intercept_.shape == (1,)


def test_multiclass_ties_go_to_the_lowest_class():
    # Before any update every score is zero: the first class is predicted.
    model = Perceptron(max_epochs=1, shuffle=False)
    X = np.array([[1.0], [2.0], [3.0]])
    model.partial_fit(X[:1], [0], classes=[0, 1, 2])
    assert model.history_[0]["mistakes"] == 0
    assert_array_equal(model.predict(X), [0, 0, 0])


def test_early_stopping_after_an_epoch_without_mistakes():
    X = np.array([[2.0, 1.0], [1.0, 2.0], [-1.0, -2.0], [-2.0, -1.0]])
    y = np.array([1, 1, 0, 0])
    model = Perceptron(max_epochs=50, early_stopping=True, random_state=0).fit(X, y)
    assert model.n_iter_ < 50
    assert model.history_[-1]["mistakes"] == 0
    assert all(r["mistakes"] > 0 for r in model.history_[:-1])


def test_early_stopping_on_held_out_data_records_validation_scores():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 5))
    y = (X @ rng.normal(size=5) + rng.normal(scale=2.0, size=300) > 0).astype(int)
    model = AveragedPerceptron(
        max_epochs=200,
        early_stopping=True,
        validation_fraction=0.2,
        n_iter_no_change=3,
        random_state=0,
    ).fit(X, y)
    scores = [r["validation_score"] for r in model.history_]
    assert model.n_iter_ < 200
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert max(scores[-3:]) <= max(scores[:-3])
    assert all(r["examples"] == 240 for r in model.history_)


def test_verbose_prints_one_line_per_epoch(capsys):
    X = np.array([[1.0], [-1.0]])
    Perceptron(max_epochs=3, verbose=1).fit(X, [1, 0])
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3 and "epoch 3" in lines[-1] and "mistakes" in lines[-1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["C", "F", "csr"])
def test_training_data_reaches_the_kernel_without_a_copy(monkeypatch, dtype, layout):
    rng = np.random.default_rng(5)
    X = np.asarray(rng.normal(size=(20, 3)), dtype=dtype, order="F" if layout == "F" else "C")
    if layout == "csr":
        X = sp.csr_matrix(X)
    seen = []
    original = perceptron_kernels.multiclass_epoch

    def spy(rows, **kwargs):
        seen.append(rows[0] if isinstance(rows, tuple) else rows)
        return original(rows=rows, **kwargs)

    monkeypatch.setattr(perceptron_kernels, "multiclass_epoch", spy)
    Perceptron(max_epochs=2).fit(X, np.arange(20) % 3)
    source = X.data if layout == "csr" else X
    assert len(seen) == 2 and all(np.shares_memory(s, source) for s in seen)


def test_float32_input_trains_like_float64_on_representable_values():
    rng = np.random.default_rng(6)
    X = rng.integers(-4, 5, size=(40, 5)).astype(np.float64)
    y = rng.integers(0, 3, size=40)
    a = AveragedPerceptron(random_state=0).fit(X, y)
    b = AveragedPerceptron(random_state=0).fit(X.astype(np.float32), y)
    assert_array_equal(a.coef_, b.coef_)
    assert a.coef_.dtype == np.float64


def test_averaged_beats_vanilla_on_noisy_data():
    """Seed 000's point: the last weight vector is unstable, the average is not."""
    rng = np.random.default_rng(7)
    w_true = rng.normal(size=20)
    X, X_test = rng.normal(size=(2000, 20)), rng.normal(size=(2000, 20))
    y = (X @ w_true + rng.normal(scale=3.0, size=2000) > 0).astype(int)
    y_test = (X_test @ w_true > 0).astype(int)
    vanilla = Perceptron(random_state=0).fit(X, y).score(X_test, y_test)
    averaged = AveragedPerceptron(random_state=0).fit(X, y).score(X_test, y_test)
    assert averaged > vanilla


@pytest.mark.parametrize("cls", [Perceptron, AveragedPerceptron])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("update", ["perceptron", "romma", "aggressive-romma"])
def test_fit_epochs_is_fit_paused_after_every_epoch(cls, sparse, update):
    """Also ROMMA's: its kernels resume exactly between progress chunks (the scale, the
    sum of the scales and ||w||² travel in the state)."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(70_000, 3)) * (rng.random((70_000, 3)) < 0.7)
    y = rng.integers(0, 3, size=70_000)
    data = sp.csr_matrix(X) if sparse else X
    whole = cls(max_epochs=3, random_state=0, update=update).fit(data, y)
    paused = cls(max_epochs=3, random_state=0, update=update)
    done, coefs = [], []
    for record in paused.fit_epochs(data, y, progress=done.append):
        coefs.append(paused.coef_.copy())
        assert record == paused.history_[-1]
    # Progress comes in several chunks per epoch and adds up to every example seen.
    assert len(done) > 3 and sum(done) == 3 * 70_000
    assert_array_equal(paused.coef_, whole.coef_)
    assert paused.history_ == whole.history_
    first = cls(max_epochs=1, random_state=0, update=update).fit(data, y)
    assert_array_equal(coefs[0], first.coef_)
