"""BudgetPerceptron against the budgeted oracles (one per paper), and its behaviour."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import NotFittedError
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

from perceptrons import BudgetPerceptron, MemoryBudgetError, VotedPerceptron, load, reference, save

TOL = {"rtol": 1e-9, "atol": 1e-9}
REMOVALS = ["random", "forgetron", "projectron", "bpa", "bpa-nn"]
# Exact arithmetic: features are multiples of 0.5 and the kernel (gamma <x, x'> + 1)^2
# with gamma = 1, so every kernel value (a multiple of 1/16) and every sum of them is
# an exact float, whichever block computed it.
EXACT = {"kernel": "poly", "degree": 2, "gamma": 1.0, "coef0": 1.0}


@st.composite
def problems(draw, n_classes=None):
    k = draw(st.integers(2, 4)) if n_classes is None else n_classes
    n = draw(st.integers(k, 30))
    d = draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    X = rng.integers(-4, 5, size=(n, d)) / 2.0
    y = np.concatenate([np.arange(k), rng.integers(0, k, size=n - k)])
    rng.shuffle(y)
    return X, y, k


def _oracle(removal, K, y, k, orders, uniforms, budget, **constants):
    """The oracle of ``removal``: binary on ±1 labels, multiclass on class codes."""
    labels, n_classes = (np.where(y == 1, 1, -1), None) if k == 2 else (y, k)
    if removal == "random":
        return reference.randomized_budget_perceptron(
            K, labels, orders, budget, uniforms, n_classes=n_classes
        )
    if removal == "forgetron":
        return reference.forgetron(K, labels, orders, budget, n_classes=n_classes)
    if removal == "projectron":
        return reference.projectron(K, labels, orders, budget, constants["eta"], n_classes)
    return reference.budgeted_pa(
        K, labels, orders, budget, constants["C"], n_classes, nearest_neighbour=removal == "bpa-nn"
    )


def _orders_and_uniforms(n, epochs, seed, removal):
    """Each epoch's order, then (random removal) its uniforms, as the estimator draws them."""
    rng = np.random.RandomState(seed)
    orders, uniforms = [], []
    for _ in range(epochs):
        orders.append(rng.permutation(n))
        uniforms.append(rng.random_sample(n) if removal == "random" else np.zeros(n))
    return orders, uniforms


@settings(max_examples=60, deadline=None)
@given(
    problems(),
    st.sampled_from(REMOVALS),
    st.sampled_from([1, 2, 3, 5, 100]),
    st.integers(1, 3),
    st.integers(0, 2**16),
    st.sampled_from([1, 3, 512]),
    st.booleans(),
)
def test_the_estimator_is_its_oracle(problem, removal, budget, epochs, seed, batch, sparse):
    X, y, k = problem
    constants = {"eta": 0.5, "C": 0.7}
    model = BudgetPerceptron(
        budget=budget,
        removal=removal,
        max_epochs=epochs,
        batch_size=batch,
        random_state=seed,
        **constants,
        **EXACT,
    ).fit(sp.csr_matrix(X) if sparse else X, y)
    K = polynomial_kernel(X, X, degree=2, gamma=1.0, coef0=1.0)
    orders, uniforms = _orders_and_uniforms(len(y), epochs, seed, removal)
    slots, coef, mistakes = _oracle(removal, K, y, k, orders, uniforms, budget, **constants)
    assert model.support_vectors_.shape[0] == len(slots) <= budget
    assert_array_equal(model.support_vectors_, X[slots])
    assert_allclose(model.dual_coef_, coef, **TOL)
    assert sum(record["mistakes"] for record in model.history_) == mistakes
    scores = K[:, slots] @ coef
    assert_allclose(model.decision_function(X), scores[:, 0] if k == 2 else scores, **TOL)


@settings(max_examples=30, deadline=None)
@given(problems(), st.sampled_from(REMOVALS), st.integers(0, 2**16))
def test_the_rbf_kernel_equals_its_oracle(problem, removal, seed):
    """Inexact kernel values: the same model to 1e-9 (no decision lies that close)."""
    X, y, k = problem
    model = BudgetPerceptron(
        budget=4, removal=removal, kernel="rbf", gamma=0.3, batch_size=5, random_state=seed
    ).fit(X, y)
    K = rbf_kernel(X, X, gamma=0.3)
    orders, uniforms = _orders_and_uniforms(len(y), 1, seed, removal)
    slots, coef, _ = _oracle(removal, K, y, k, orders, uniforms, 4, eta=0.1, C=1.0)
    assert_array_equal(model.support_vectors_, X[slots])
    assert_allclose(model.dual_coef_, coef, **TOL)


@pytest.mark.parametrize("removal", REMOVALS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_every_batch_size_gives_the_identical_model(removal, n_classes):
    X, y, _ = _fixed_problem(n_classes)
    models = [
        BudgetPerceptron(
            budget=6, removal=removal, max_epochs=3, batch_size=batch, random_state=1, **EXACT
        ).fit(X, y)
        for batch in (1, 2, 7, 512)
    ]
    assert models[0].history_[0]["mistakes"] > 6  # the budget was reached
    for other in models[1:]:
        assert_array_equal(other.support_vectors_, models[0].support_vectors_)
        assert_array_equal(other.dual_coef_, models[0].dual_coef_)
        assert other.history_ == models[0].history_


def _fixed_problem(n_classes, n=60, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.integers(-4, 5, size=(n, 4)) / 2.0
    y = np.arange(n) % n_classes
    return X, y, n_classes


@pytest.mark.parametrize("removal", REMOVALS)
def test_partial_fit_batches_are_one_epoch_of_fit(removal):
    X, y, _ = _fixed_problem(3)
    params = {"budget": 5, "removal": removal, "shuffle": False, "random_state": 4, **EXACT}
    fitted = BudgetPerceptron(**params).fit(X, y)
    streamed = BudgetPerceptron(**params)
    for start in range(0, len(y), 17):
        streamed.partial_fit(X[start : start + 17], y[start : start + 17], classes=[0, 1, 2])
    assert_array_equal(streamed.support_vectors_, fitted.support_vectors_)
    assert_array_equal(streamed.dual_coef_, fitted.dual_coef_)
    assert sum(r["mistakes"] for r in streamed.history_) == fitted.history_[0]["mistakes"]


@pytest.mark.parametrize("removal", REMOVALS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_saved_model_predicts_the_same_and_continues_exactly(tmp_path, removal, n_classes):
    X, y, _ = _fixed_problem(n_classes)
    model = BudgetPerceptron(budget=5, removal=removal, random_state=2, **EXACT).fit(X[:30], y[:30])
    loaded = load(save(model, tmp_path / "budget.npz"))
    assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    model.partial_fit(X[30:], y[30:])
    loaded.partial_fit(X[30:], y[30:])
    assert_array_equal(loaded.support_vectors_, model.support_vectors_)
    assert_array_equal(loaded.dual_coef_, model.dual_coef_)
    assert loaded.history_ == model.history_


def test_bpa_nn_keeps_each_slots_nearest_neighbour():
    """The nearest other slot of every slot, kept up to date as slots are replaced,
    is the one a search from scratch finds (ties to the lowest slot); a loaded model
    finds it again."""
    X, y, _ = _fixed_problem(3, n=120)
    model = BudgetPerceptron(budget=9, removal="bpa-nn", random_state=3, **EXACT).fit(X, y)
    support = model.support_vectors_
    K = polynomial_kernel(support, support, degree=2, gamma=1.0, coef0=1.0)
    distance = np.diag(K)[:, None] + np.diag(K)[None, :] - 2.0 * K
    np.fill_diagonal(distance, np.inf)
    assert_array_equal(model._state.nearest[:9], np.argmin(distance, axis=1))
    loaded = BudgetPerceptron(**model.get_params())
    loaded.classes_, loaded.n_features_in_ = model.classes_, model.n_features_in_
    loaded._codec().import_state(*model._codec().export_state())
    assert_array_equal(loaded._state.nearest, model._state.nearest)


def _state(removal="forgetron"):
    X, y, _ = _fixed_problem(2)
    model = BudgetPerceptron(budget=4, removal=removal, random_state=0, **EXACT).fit(X, y)
    return model, *model._codec().export_state()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a, v: a.update(birth=a["birth"] * 0 + v["clock"] + 1), "birth"),
        (lambda a, v: a.update(birth=a["birth"] * 0 + 1), "same birth"),
        (lambda a, v: a.update(coef=np.vstack([a["coef"], a["coef"]])), "coef"),
        (lambda a, v: a.update(support=a["support"][:, :2]), "support"),
        (lambda a, v: a.update(gram=a["gram"][:2, :2]), "gram"),
        (lambda a, v: a.pop("gram"), "gram"),
        (lambda a, v: v.update(clock=2), "support slots"),
        (lambda a, v: v.update(mistakes=-1), "mistakes"),
        (lambda a, v: v.update(gamma=0.0), "gamma"),
    ],
)
def test_a_model_file_is_checked_before_the_kernel_sees_it(change, message):
    model, arrays, values = _state()
    arrays, values = {n: np.array(a) for n, a in arrays.items()}, dict(values)
    change(arrays, values)
    before = model.dual_coef_
    with pytest.raises(ValueError, match=message):
        model._codec().import_state(arrays, values)
    assert_array_equal(model.dual_coef_, before)  # a refused file changes nothing


@pytest.mark.parametrize("removal", ["forgetron", "random"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_budget_never_reached_is_the_kernel_perceptron(removal, n_classes):
    """With room for every mistake, no rule ever acts: the unbudgeted kernel perceptron
    (VotedPerceptron's final model, no intercept), the same mistakes epoch by epoch."""
    X, y, _ = _fixed_problem(n_classes, n=80)
    # Random removal draws its uniforms after each epoch's order, so the orders of
    # later epochs are not the voted perceptron's.
    epochs = 1 if removal == "random" else 3
    common = {"max_epochs": epochs, "random_state": 5, **EXACT}
    budgeted = BudgetPerceptron(budget=1000, removal=removal, **common).fit(X, y)
    unbudgeted = VotedPerceptron(prediction="last", fit_intercept=False, **common).fit(X, y)
    assert [r["mistakes"] for r in budgeted.history_] == [
        r["mistakes"] for r in unbudgeted.history_
    ]
    assert budgeted.support_vectors_.shape[0] == unbudgeted.n_updates_
    assert_allclose(budgeted.decision_function(X), unbudgeted.decision_function(X), **TOL)


@pytest.mark.parametrize("removal", REMOVALS)
def test_memory_is_allocated_once_and_the_support_set_stays_within_budget(removal):
    X, y, _ = _fixed_problem(3, n=200)
    model = BudgetPerceptron(budget=7, removal=removal, random_state=0, **EXACT)
    model.partial_fit(X[:20], y[:20], classes=[0, 1, 2])
    arrays = [model._state.support, model._state.coef, model._state.gram, model._state.inverse]
    for start in range(20, 200, 20):
        model.partial_fit(X[start : start + 20], y[start : start + 20])
        assert model.support_vectors_.shape[0] <= 7
        now = [model._state.support, model._state.coef, model._state.gram, model._state.inverse]
        assert all(a is b for a, b in zip(arrays, now, strict=True))
    assert model.support_vectors_.shape[0] == 7


def test_a_budget_too_large_for_memory_is_refused_before_allocation():
    X = sp.random(5, 10**7, density=1e-6, format="csr", random_state=0)
    with pytest.raises(MemoryBudgetError, match="support slots"):
        BudgetPerceptron(budget=10**6).fit(X, [0, 1, 0, 1, 0])


@pytest.mark.parametrize(
    "change",
    [
        {"removal": "forgetron"},
        {"budget": 9},
        {"kernel": "rbf"},
        {"degree": 3},
        {"gamma": 0.5},
        {"coef0": 0.0},
    ],
)
def test_partial_fit_refuses_slots_built_for_other_parameters(change):
    """The rule's matrices are sized, and the kernel values they hold computed, for the
    parameters of the first call: another removal would read a matrix it has not."""
    X, y, _ = _fixed_problem(2)
    model = BudgetPerceptron(budget=4, removal="projectron", **EXACT).fit(X, y)
    before = model.dual_coef_
    with pytest.raises(ValueError, match=f"{next(iter(change))}=.* changed .* call fit"):
        model.set_params(**change).partial_fit(X, y)
    assert_array_equal(model.dual_coef_, before)
    model.fit(X, y)  # a new fit builds new slots
    model.set_params(eta=1.0, C=2.0, batch_size=3).partial_fit(X, y)  # these may change


def test_a_model_file_with_a_budget_too_large_for_memory_is_refused():
    model, arrays, values = _state()
    model.budget = 10**12  # as a file's parameters may say
    with pytest.raises(MemoryBudgetError, match="support slots"):
        model._codec().import_state(arrays, values)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"budget": 0}, "budget"),
        ({"budget": 2.5}, "budget"),
        ({"removal": "oldest"}, "removal"),
        ({"eta": -0.1}, "eta"),
        ({"C": 0.0}, "C"),
        ({"kernel": "precomputed"}, "kernel"),
        ({"device": 3}, "device"),
        ({"batch_size": 0}, "batch_size"),
    ],
)
def test_bad_parameters_are_named(params, message):
    X, y, _ = _fixed_problem(2)
    with pytest.raises(ValueError, match=f"parameter '{message}' must be"):
        BudgetPerceptron(**params).fit(X, y)


def test_the_projectron_projects_within_eta():
    """eta beyond every distance: every update is projected, onto the empty span at
    first, so no support vector is ever added and every example is a mistake; a
    smaller eta adds support vectors, and a larger one fewer."""
    X, y, _ = _fixed_problem(2)
    model = BudgetPerceptron(removal="projectron", eta=1e9, shuffle=False, **EXACT).fit(X, y)
    assert model.support_vectors_.shape[0] == 0
    assert model.history_[0]["mistakes"] == len(y)
    sizes = [
        BudgetPerceptron(removal="projectron", eta=eta, max_epochs=3, random_state=0, **EXACT)
        .fit(X, y)
        .support_vectors_.shape[0]
        for eta in (0.0, 3.0)
    ]
    assert sizes[0] > sizes[1] > 0


@pytest.mark.parametrize("removal", REMOVALS)
def test_kernel_values_that_overflow_leave_the_model_unfitted(removal):
    X, y, _ = _fixed_problem(2)
    model = BudgetPerceptron(removal=removal, degree=4, gamma=1.0)
    with pytest.raises(ValueError, match="non-finite"):
        model.fit(X * 1e80, y)
    with pytest.raises(NotFittedError):
        model.predict(X)


def test_an_unfitted_model_refuses_to_predict():
    X, _, _ = _fixed_problem(2)
    with pytest.raises(NotFittedError):
        BudgetPerceptron().decision_function(X)
