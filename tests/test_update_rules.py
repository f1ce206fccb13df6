"""The perceptron with margin, the passive-aggressive updates, MIRA and ROMMA, against
their oracles."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from perceptrons import AveragedPerceptron, Perceptron, reference
from perceptrons.io.persist import load, save
from perceptrons.parallel._mixing import mixing_refusal
from perceptrons.reference import margin as reference_margin
from rule_problems import problems

TOL = {"rtol": 1e-9, "atol": 1e-9}
RULES = [("perceptron", "margin"), ("pa", "pa"), ("pa-i", "pa-i"), ("pa-ii", "pa-ii")]


@settings(max_examples=60, deadline=None)
@given(
    problems(),
    st.integers(1, 3),
    st.integers(0, 2**16),
    st.sampled_from(RULES),
    st.sampled_from([0.0, 0.5, 2.0]),
    st.sampled_from([0.1, 1.0, 10.0]),
    st.booleans(),
)
def test_every_rule_equals_its_oracle(problem, epochs, seed, rule, margin, C, sparse):
    X, y, k = problem
    ours, oracle_rule = rule
    if ours != "perceptron":
        margin = 0.0
    data = sp.csr_matrix(X) if sparse else X
    params = {"max_epochs": epochs, "random_state": seed, "update": ours, "margin": margin, "C": C}
    last = Perceptron(**params).fit(data, y)
    mean = AveragedPerceptron(**params).fit(data, y)
    orders = reference.epoch_orders(len(y), epochs, True, seed)
    options = {"rule": oracle_rule, "margin": margin, "C": C}
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
    if ours == "perceptron":
        # PA leaves the loss of the example it updated on at exactly 0, so the next
        # visit sees 0 up to rounding, which the oracle's dot product and the kernel's
        # sum may round to either side: a step of ~1e-17 is counted by one, not the
        # other. The weights above agree either way; exact counts only for the perceptron.
        assert sum(r["updates"] for r in last.history_) == updates


@settings(max_examples=30, deadline=None)
@given(problems(), st.sampled_from(["pa", "pa-i", "pa-ii"]), st.sampled_from([0.5, 2.0]))
def test_passive_aggressive_with_delta_equals_explicit_augmentation(problem, rule, delta):
    """The Δ feature enters ||x||² like any feature, so [X | Δ I] trains identically."""
    X, y, _ = problem
    implicit = Perceptron(update=rule, delta=delta, random_state=0, max_epochs=2).fit(X, y)
    augmented = np.hstack([X, delta * np.eye(len(y))])
    explicit = Perceptron(update=rule, random_state=0, max_epochs=2).fit(augmented, y)
    assert_allclose(implicit.coef_, explicit.coef_[:, : X.shape[1]], **TOL)
    assert_allclose(implicit.intercept_, explicit.intercept_, **TOL)


def test_a_margin_keeps_updating_correct_but_close_examples():
    X = np.array([[2.0, 0.0], [-2.0, 0.0], [0.1, 1.0], [-0.1, -1.0]])
    y = np.array([1, 0, 1, 0])
    plain = Perceptron(max_epochs=20, shuffle=False).fit(X, y)
    wide = Perceptron(max_epochs=20, shuffle=False, margin=5.0).fit(X, y)
    signed = lambda model: (2 * y - 1) * model.decision_function(X)  # noqa: E731
    assert signed(plain).min() > 0
    assert signed(wide).min() > 5.0 and wide.history_[-1]["updates"] == 0


def test_passive_aggressive_fixes_the_example_it_updates_on():
    """PA's step is the smallest that reaches hinge loss 0 on the current example."""
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(1, 4)), np.array([1])
    model = Perceptron(update="pa", max_epochs=1)
    model.partial_fit(X, y, classes=[0, 1])
    assert_allclose(model.decision_function(X), [1.0])
    capped = Perceptron(update="pa-i", C=0.01, max_epochs=1).partial_fit(X, y, classes=[0, 1])
    assert 0 < capped.decision_function(X)[0] < 1.0


# --------------------------------------------------------------------------- MIRA
@settings(max_examples=30, deadline=None)
@given(problems(), st.integers(1, 3), st.sampled_from([0.1, 1.0, 10.0]), st.booleans())
def test_mira_is_pa_i_exactly(problem, epochs, C, averaged):
    """1-best MIRA (Crammer & Singer 2003) is the multiclass PA-I update: the same model
    bit for bit, binary and multiclass."""
    X, y, _ = problem
    cls = AveragedPerceptron if averaged else Perceptron
    mira = cls(update="mira", C=C, max_epochs=epochs, random_state=1).fit(X, y)
    pa_i = cls(update="pa-i", C=C, max_epochs=epochs, random_state=1).fit(X, y)
    np.testing.assert_array_equal(mira.coef_, pa_i.coef_)
    np.testing.assert_array_equal(mira.intercept_, pa_i.intercept_)
    assert mira.history_ == pa_i.history_


# -------------------------------------------------------------------------- ROMMA
ROMMAS = [("romma", False), ("aggressive-romma", True)]


@st.composite
def separable_problems(draw):
    """Data a hyperplane (multiclass: a linear argmax) separates with a margin, with the
    bias as a constant feature: ROMMA's setting. Rows within the margin are dropped."""
    k = draw(st.sampled_from([2, 2, 3, 4]))
    n = draw(st.integers(2 * k, 30))
    d = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.7)
    augmented = np.hstack([X, np.ones((n, 1))])
    U = rng.normal(size=(k, d + 1))
    scores = augmented @ U.T
    if k == 2:
        gap = scores[:, 1] - scores[:, 0]
        y = (gap > 0).astype(int)
        keep = np.abs(gap) >= 0.2
    else:
        y = np.argmax(scores, axis=1)
        ordered = np.sort(scores, axis=1)
        keep = ordered[:, -1] - ordered[:, -2] >= 0.2
    X, y = X[keep], y[keep]
    assume(len(np.unique(y)) == k)
    return X, y, k


def _romma_oracle(X, y, k, orders, aggressive):
    if k == 2:
        w, b, w_mean, b_mean, updates = reference_margin.romma(
            X, np.where(y == 1, 1, -1), orders, aggressive=aggressive
        )
        return (w[None], [b], w_mean[None], [b_mean]), updates
    W, b, W_mean, b_mean, updates = reference_margin.multiclass_romma(
        X, y, k, orders, aggressive=aggressive
    )
    return (W, b, W_mean, b_mean), updates


@settings(max_examples=80, deadline=None)
@given(
    separable_problems(),
    st.integers(1, 4),
    st.integers(0, 2**16),
    st.sampled_from(ROMMAS),
    st.booleans(),
)
def test_romma_equals_its_oracle(problem, epochs, seed, rule, sparse):
    X, y, k = problem
    name, aggressive = rule
    data = sp.csr_matrix(X) if sparse else X
    params = {"max_epochs": epochs, "random_state": seed, "update": name}
    last = Perceptron(**params).fit(data, y)
    mean = AveragedPerceptron(**params).fit(data, y)
    orders = reference.epoch_orders(len(y), epochs, True, seed)
    expected, updates = _romma_oracle(X, y, k, orders, aggressive)
    assert_allclose(last.coef_, expected[0], **TOL)
    assert_allclose(last.intercept_, expected[1], **TOL)
    assert_allclose(mean.coef_, expected[2], **TOL)
    assert_allclose(mean.intercept_, expected[3], **TOL)
    if not aggressive:
        # ROMMA updates on mistakes, y·w·x <= 0, never at a score that is 0 up to
        # rounding after its first update; aggressive ROMMA leaves y·w·x = 1 after an
        # update, which the two may round to either side (as PA, above).
        assert sum(r["updates"] for r in last.history_) == updates


@settings(max_examples=25, deadline=None)
@given(separable_problems(), st.sampled_from(ROMMAS))
def test_romma_every_input_layout_trains_the_identical_model(problem, rule):
    X, y, _ = problem
    params = {"max_epochs": 3, "random_state": 0, "update": rule[0]}
    dense = AveragedPerceptron(**params).fit(X, y)
    for data in (sp.csr_matrix(X), sp.csc_matrix(X), np.asfortranarray(X)):
        other = AveragedPerceptron(**params).fit(data, y)
        np.testing.assert_array_equal(dense.coef_, other.coef_)
        np.testing.assert_array_equal(dense.intercept_, other.intercept_)


@settings(max_examples=25, deadline=None)
@given(separable_problems(), st.sampled_from(ROMMAS), st.booleans())
def test_romma_intercept_is_the_weight_of_a_constant_feature(problem, rule, averaged):
    """fit_intercept=False on [X | 1] trains the model of fit_intercept=True on X: the
    bias is scaled with the weights and counts in ||w||² and ||x||²."""
    X, y, _ = problem
    cls = AveragedPerceptron if averaged else Perceptron
    params = {"max_epochs": 3, "random_state": 0, "update": rule[0]}
    with_bias = cls(**params).fit(X, y)
    no_bias = cls(**params, fit_intercept=False).fit(np.hstack([X, np.ones((len(y), 1))]), y)
    np.testing.assert_array_equal(no_bias.intercept_, np.zeros_like(no_bias.intercept_))
    assert_allclose(no_bias.coef_[:, :-1], with_bias.coef_, **TOL)
    assert_allclose(no_bias.coef_[:, -1], with_bias.intercept_, **TOL)


@pytest.mark.parametrize("name", ["romma", "aggressive-romma"])
@pytest.mark.parametrize("k", [2, 3])
def test_romma_partial_fit_and_a_saved_model_continue_exactly(name, k, tmp_path):
    """The whole state (scale, P, ||w||²) is in the arrays: one fit of 3 epochs equals 3
    partial_fit calls on the same orders, and a model saved midway continues exactly."""
    X, y, _ = _separable(k, n=60, seed=k)
    fit = AveragedPerceptron(update=name, max_epochs=3, shuffle=False).fit(X, y)
    steps = AveragedPerceptron(update=name, shuffle=False)
    for _ in range(3):
        steps.partial_fit(X, y, classes=np.arange(k))
    np.testing.assert_array_equal(fit.coef_, steps.coef_)
    np.testing.assert_array_equal(fit.intercept_, steps.intercept_)
    assert set(steps._engine().export_state()[1]) >= {"scale", "scale_sum", "sq_norm", "count"}
    again = load(save(steps, tmp_path / "romma.npz"))
    steps.partial_fit(X, y)
    again.partial_fit(X, y)
    np.testing.assert_array_equal(again.coef_, steps.coef_)
    np.testing.assert_array_equal(again.intercept_, steps.intercept_)


def _separable(k, n, seed, d=5, gap=0.3):
    rng = np.random.default_rng(seed)
    U = rng.normal(size=(k, d + 1))
    X = rng.normal(size=(4 * n, d))
    scores = np.hstack([X, np.ones((4 * n, 1))]) @ U.T
    ordered = np.sort(scores, axis=1)
    keep = np.flatnonzero(ordered[:, -1] - ordered[:, -2] >= gap)[:n]
    y = np.argmax(scores[keep], axis=1)
    # u separates (x, 1) with the joint margin of the Kesler construction.
    return X[keep], y, U


@pytest.mark.parametrize("aggressive", [False, True])
def test_romma_converges_on_separable_data_within_the_perceptron_bound(aggressive):
    """Li & Long (2002): ROMMA makes at most (R / γ)² mistakes on data a unit vector
    separates with margin γ (R the largest ||x||, bias feature included), the
    perceptron's bound; then an epoch without a mistake and zero training error."""
    X, y, U = _separable(2, n=200, seed=7)
    u = U[1] - U[0]
    augmented = np.hstack([X, np.ones((len(y), 1))])
    gamma = np.min(np.where(y == 1, 1, -1) * (augmented @ u)) / np.linalg.norm(u)
    radius = np.max(np.linalg.norm(augmented, axis=1))
    name = "aggressive-romma" if aggressive else "romma"
    model = Perceptron(update=name, max_epochs=200, early_stopping=True, random_state=0)
    model.fit(X, y)
    assert model.score(X, y) == 1.0
    if not aggressive:  # the bound counts mistakes; the aggressive rule also updates when right
        assert model.history_[-1]["mistakes"] == 0
        assert sum(r["mistakes"] for r in model.history_) <= (radius / gamma) ** 2
    else:
        signed = np.where(y == 1, 1, -1) * model.decision_function(X)
        assert signed.min() > 0


def test_romma_multiclass_reaches_zero_training_error_on_separable_data():
    X, y, _ = _separable(4, n=200, seed=3)
    model = Perceptron(update="romma", max_epochs=200, early_stopping=True, random_state=0)
    assert model.fit(X, y).score(X, y) == 1.0
    assert model.history_[-1]["mistakes"] == 0


def test_romma_first_update_and_the_parallel_rule():
    """From w = 0 the first update is w = y x / ||x||², which leaves y w·x = 1; an
    example parallel to w with the other label (two constraints that cannot both hold)
    restarts from it: w = y x / ||x||², as the oracle documents."""
    X = np.array([[3.0, 4.0], [3.0, 4.0]])
    model = Perceptron(update="romma", shuffle=False, max_epochs=1)
    model.partial_fit(X[:1], [1], classes=[0, 1])
    assert_allclose(model.coef_[0], [3 / 26, 4 / 26], **TOL)
    assert_allclose(model.intercept_, [1 / 26], **TOL)
    assert_allclose(model.decision_function(X[:1]), [1.0], **TOL)
    model.partial_fit(X[1:], [0])
    assert_allclose(model.coef_[0], [-3 / 26, -4 / 26], **TOL)
    w, b, *_ = reference_margin.romma(X, np.array([1, -1]), [np.arange(2)])
    assert_allclose(model.coef_[0], w, **TOL)
    assert_allclose(model.intercept_, [b], **TOL)


def test_romma_rescales_its_weights_exactly():
    """Inseparable data drives ROMMA's scale out of [1e-4, 1e4] again and again (here 19
    rescales in 10 epochs, counted by a plain simulation of the scale); the last and the
    averaged models stay the oracle's, which scales w explicitly at every update."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    y = rng.integers(0, 2, size=100)
    orders = reference.epoch_orders(100, 10, True, 0)
    for aggressive in (False, True):
        name = "aggressive-romma" if aggressive else "romma"
        params = {"update": name, "max_epochs": 10, "random_state": 0}
        last = Perceptron(**params).fit(X, y)
        mean = AveragedPerceptron(**params).fit(X, y)
        w, b, w_mean, b_mean, _ = reference_margin.romma(
            X, np.where(y == 1, 1, -1), orders, aggressive=aggressive
        )
        assert 1e-4 <= last._state.scales[0] <= 1e4
        assert_allclose(last.coef_[0], w, **TOL)
        assert_allclose(last.intercept_, [b], **TOL)
        assert_allclose(mean.coef_[0], w_mean, **TOL)
        assert_allclose(mean.intercept_, [b_mean], **TOL)


@pytest.mark.parametrize(
    ("params", "fit_options", "message"),
    [
        ({"delta": 1.0}, {}, "delta"),
        ({"class_weight": "balanced"}, {}, "class_weight"),
        ({"n_shards": 2}, {}, "n_shards"),
        ({}, {"sample_weight": np.ones(6)}, "sample_weight"),
    ],
)
def test_romma_refuses_what_it_has_no_form_for(params, fit_options, message):
    X, y = np.arange(12.0).reshape(6, 2), np.array([0, 1, 0, 1, 0, 1])
    model = AveragedPerceptron(update="romma", **params)
    with pytest.raises(ValueError, match=message):
        model.fit(X, y, **fit_options)
    assert not hasattr(model, "coef_")
    with pytest.raises(ValueError, match=message):
        model.partial_fit(X, y, classes=[0, 1], **fit_options)
    assert not hasattr(model, "coef_")


def test_romma_cannot_continue_another_rules_state():
    X, y = np.arange(12.0).reshape(6, 2), np.array([0, 1, 0, 1, 0, 1])
    model = Perceptron(update="pa").fit(X, y)
    model.set_params(update="romma")
    with pytest.raises(ValueError, match="cannot continue"):
        model.partial_fit(X, y)
    model.set_params(update="pa", warm_start=True).fit(X, y)  # still usable
    assert mixing_refusal(model) is None
    assert mixing_refusal(Perceptron(update="aggressive-romma")) is not None
