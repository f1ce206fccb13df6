"""The perceptron with margin and the passive-aggressive updates, against their oracles."""

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from perceptrons import AveragedPerceptron, Perceptron, reference

TOL = {"rtol": 1e-9, "atol": 1e-9}
RULES = [("perceptron", "margin"), ("pa", "pa"), ("pa-i", "pa-i"), ("pa-ii", "pa-ii")]


@st.composite
def problems(draw):
    k = draw(st.integers(2, 4))
    n = draw(st.integers(k, 20))
    d = draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.7)
    y = np.concatenate([np.arange(k), rng.integers(0, k, size=n - k)])
    rng.shuffle(y)
    return X, y, k


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
        assert sum(r["mistakes"] for r in last.history_) == updates


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
    assert signed(wide).min() > 5.0 and wide.history_[-1]["mistakes"] == 0


def test_passive_aggressive_fixes_the_example_it_updates_on():
    """PA's step is the smallest that reaches hinge loss 0 on the current example."""
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(1, 4)), np.array([1])
    model = Perceptron(update="pa", max_epochs=1)
    model.partial_fit(X, y, classes=[0, 1])
    assert_allclose(model.decision_function(X), [1.0])
    capped = Perceptron(update="pa-i", C=0.01, max_epochs=1).partial_fit(X, y, classes=[0, 1])
    assert 0 < capped.decision_function(X)[0] < 1.0
