"""What every update rule that keeps statistics of its own must do, whatever its family:
the engine's contract, checked for each rule of the table and each of its forms.

The oracle tests of each family (test_adaptive, test_second_order, test_first_order,
test_adagrad) check the arithmetic; these check that the rule is plugged into the one
engine like any other: dense and CSR input train the same model, a saved model goes on
training exactly, ``partial_fit`` in batches is one epoch, a weight of 0 is the example's
absence and a weight of 1 no weight at all (or weights are refused, for a rule without a
weighted form), and the published statistics are those the kernels left.
"""

import sys

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from perceptrons import AveragedPerceptron, LogisticRegressionSGD, Perceptron
from perceptrons.io.persist import load, save
from perceptrons.linear._update_rules import RULES
from rule_problems import averaged as _averaged

TOL = {"rtol": 1e-9, "atol": 1e-9}
ADAPTIVE = [rule for rule in RULES.values() if rule.family not in ("perceptron", "romma")]
#: (rule, covariance): every form of every rule.
FORMS = [
    pytest.param(rule.name, covariance, id=f"{rule.name}-{covariance}")
    for rule in ADAPTIVE
    for covariance in (("diagonal", "full") if rule.covariance else ("diagonal",))
]


def _dense(coef):
    return coef.toarray() if sp.issparse(coef) else coef


def _data(n, d, n_classes, seed, density=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    y = rng.integers(0, n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)
    return X, y


def _same(a, b):
    assert_array_equal(_dense(a.coef_), _dense(b.coef_))
    assert_array_equal(a.intercept_, b.intercept_)


@pytest.mark.parametrize(("rule", "covariance"), FORMS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_dense_and_sparse_train_the_same_model(rule, covariance, n_classes):
    X, y = _data(60, 8, n_classes, 0, density=0.4)
    params = {"update": rule, "covariance": covariance, "random_state": 1, "max_epochs": 3}
    for cls in dict.fromkeys((Perceptron, _averaged(rule))):
        _same(cls(**params).fit(X, y), cls(**params).fit(sp.csr_matrix(X), y))


@pytest.mark.parametrize(("rule", "covariance"), FORMS)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("averaged", [False, True], ids=["Perceptron", "AveragedPerceptron"])
def test_a_saved_model_continues_exactly(rule, covariance, n_classes, averaged, tmp_path):
    """The statistics and counters are part of the state: a loaded model trains on as the
    original, and they are what training left (not restarted)."""
    cls = _averaged(rule) if averaged else Perceptron
    if averaged and cls is Perceptron:
        pytest.skip(f"{rule} cannot be averaged (its Perceptron case is the other one)")
    X, y = _data(50, 6, n_classes, 1)
    model = cls(update=rule, covariance=covariance, random_state=0, max_epochs=3).fit(X, y)
    state = model._state
    initial = (type(state).initial_stats(state.weights.shape), np.array(type(state).SCALARS))
    if state.stats.size or state.scalars.size:  # (pet and fofs keep none)
        assert not (
            np.array_equal(state.stats, initial[0]) and np.array_equal(state.scalars, initial[1])
        )  # training moved them: a file that restarted them would show
    save(model, tmp_path / "m.model")
    loaded = load(tmp_path / "m.model")
    assert_array_equal(loaded._state.stats, model._state.stats)
    assert_array_equal(loaded._state.scalars, model._state.scalars)
    model.partial_fit(X, y)
    loaded.partial_fit(X, y)
    _same(model, loaded)


@pytest.mark.parametrize(("rule", "covariance"), FORMS)
def test_partial_fit_in_batches_equals_one_epoch_in_order(rule, covariance):
    X, y = _data(40, 5, 3, 2)
    params = {"update": rule, "covariance": covariance, "shuffle": False, "max_epochs": 1}
    cls = _averaged(rule)
    whole = cls(**params).fit(X, y)
    parts = cls(**params)
    for start in range(0, 40, 7):
        parts.partial_fit(X[start : start + 7], y[start : start + 7], classes=[0, 1, 2])
    assert_allclose(parts.coef_, whole.coef_, **TOL)
    assert_allclose(parts.intercept_, whole.intercept_, **TOL)


@pytest.mark.parametrize(("rule", "covariance"), FORMS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_weight_zero_is_absence_and_weight_one_is_none(rule, covariance, n_classes):
    X, y = _data(30, 4, n_classes, 3)
    params = {"update": rule, "covariance": covariance, "random_state": 0, "shuffle": False}
    cls = _averaged(rule)
    keep = np.ones(30, dtype=bool)
    keep[::4] = False
    if not RULES[rule].weighted:
        with pytest.raises(ValueError, match="no weighted form"):
            cls(**params).fit(X, y, sample_weight=keep.astype(float))
        with pytest.raises(ValueError, match="class_weight"):
            cls(**params, class_weight={0: 2.0}).fit(X, y)
        return
    zeroed = cls(**params).fit(X, y, sample_weight=keep.astype(float))
    dropped = cls(**params).fit(X[keep], y[keep])
    assert_allclose(zeroed.coef_, dropped.coef_, **TOL)
    assert_allclose(zeroed.intercept_, dropped.intercept_, **TOL)
    plain = cls(**params).fit(X, y)
    _same(cls(**params).fit(X, y, sample_weight=np.ones(30)), plain)
    # Weights that differ between examples change the model (uniform ones need not: NAG
    # normalizes them away).
    uneven = np.where(np.arange(30) % 2 == 0, 1.0, 3.0)
    weighted = cls(**params).fit(X, y, sample_weight=uneven)
    assert not np.allclose(weighted.coef_, plain.coef_)


@pytest.mark.parametrize(("rule", "covariance"), FORMS)
def test_a_sparsified_file_loads_compact_and_dense(rule, covariance, tmp_path):
    """``sparsify`` then ``save`` (what the command line writes for sparse input), with
    and without the training state, loaded both ways (``load(sparse=True)`` is what
    ``predict`` and ``evaluate`` use): ``load`` takes whatever ``save`` writes."""
    X, y = _data(80, 30, 3, 4, density=0.2)
    model = _averaged(rule)(update=rule, covariance=covariance, random_state=0)
    model.fit(sp.csr_matrix(X), y).sparsify()
    path = save(model, tmp_path / "m.npz")
    lean = save(model, tmp_path / "lean.npz", resumable=False)  # without the statistics
    for loaded in (load(path, sparse=True), load(path), load(lean), load(lean, sparse=True)):
        assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    assert not load(lean).resumable


def test_statistics_stored_sparse_load_back():
    """A statistic that is mostly zero is stored as coordinates: here IELLIP's ``c``,
    which its decay takes to exactly 0 (found by the benchmark: the compact loader gave
    the statistics to the state as coordinates)."""
    import tempfile

    from perceptrons.io.persist import describe

    X, y = _data(40, 5, 2, 5)
    model = Perceptron(update="iellip", update_params={"b": 1e-200}, random_state=0)
    model.fit(sp.csr_matrix(X), y).sparsify()
    with tempfile.TemporaryDirectory() as directory:
        path = save(model, f"{directory}/m.npz")
        assert "scalars" in describe(path)["sparse_arrays"]
        loaded = load(path, sparse=True)
        assert_array_equal(loaded._lifecycle.state.scalars, [0.0])
        assert_array_equal(loaded.predict(X), model.predict(X))


# ----------------------------------------------------------- the rule plugged in by name
EVERY_FORM = [
    pytest.param(rule.name, covariance, id=f"{rule.name}-{covariance}")
    for rule in RULES.values()
    for covariance in (("diagonal", "full") if rule.covariance else ("diagonal",))
]


@pytest.mark.parametrize(("rule", "covariance"), EVERY_FORM)
def test_every_form_of_every_rule_resolves_to_compiled_epochs(rule, covariance):
    from perceptrons._states import TrainingState
    from perceptrons.linear._families import resolve_rule

    resolved = resolve_rule("test", rule, None, covariance)
    assert resolved.covariance == covariance
    assert issubclass(resolved.state_class, TrainingState)
    for multiclass in (False, True):
        assert callable(resolved.epoch(multiclass))
    # Resolved once: the same configuration gives the same object.
    assert resolve_rule("test", rule, None, covariance) is resolved


@pytest.mark.parametrize("rule", [rule.name for rule in RULES.values()])
def test_kernels_read_constants_by_name_not_by_the_tables_order(rule):
    """Reordering a rule's constants (as a table edit would) changes no ``rule`` array:
    each kernel module names the constants it reads; and every name it reads is one of
    the rule's constants."""
    from perceptrons.linear._families import Settings, resolve_rule

    settings = Settings(bias_feature=1.0, C=0.5, margin=0.25, delta=0.0)
    constants = RULES[rule].constants
    # Distinct values in the interval of each constant, so a swap would show.
    values = {}
    for k, (name, constant) in enumerate(constants.items()):
        low = constant.low if np.isfinite(constant.low) else 0.0
        high = constant.high if np.isfinite(constant.high) else low + 10.0
        values[name] = low + (high - low) * (k + 1) / (len(constants) + 2)
        if constant.integer:
            values[name] = float(round(values[name]))
    forward = resolve_rule("test", rule, values, "diagonal")
    backward = resolve_rule("test", rule, dict(reversed(values.items())), "diagonal")
    assert_array_equal(forward.rule_array(settings), backward.rule_array(settings))
    read = getattr(forward.family.kernels(), "CONSTANTS", {}).get(rule, ())
    assert set(read) <= set(constants), f"{rule} kernels read {read}, the table has {constants}"


def test_a_resolved_rule_is_not_reused_for_a_value_that_only_equals_it():
    """``True == 1`` and they hash alike: the cache must not let a bool through where a
    number was accepted before."""
    from perceptrons.linear._families import resolve_rule

    resolve_rule("test", "arow", {"r": 1}, "diagonal")
    with pytest.raises(ValueError, match="update_params\\['r'\\]"):
        resolve_rule("test", "arow", {"r": True}, "diagonal")
    with pytest.raises(ValueError, match="update_params\\['r'\\]"):
        AveragedPerceptron(update="arow", update_params={"r": True}).fit([[0.0], [1.0]], [0, 1])


# ------------------------------------------ the arithmetic at the ends of the float range
# Every update rule's arithmetic with a constant near the normal limits, features of
# 1e-170 (whose squares underflow to 0) or 1e300, sample weights of 1e300: whatever the
# rule, its form and the input's layout, training gives a finite model that scores its
# own examples finitely or refuses in one line naming the rule (and the constants given),
# never a ZeroDivisionError from the compiled kernels (NumPy's error model, and each
# update's step checked: perceptrons._kernels._rows).
TINY = sys.float_info.min  # the smallest normal float: accepted


def _extremes(rule):
    """Each constant alone at each end of its interval (normal floats only)."""
    cases = []
    for name, constant in RULES[rule].constants.items():
        low = TINY if constant.low == 0.0 and not constant.integer else constant.low
        if not constant.accepts(low):  # an open end other than 0: just inside it
            low = constant.low + 1 if constant.integer else np.nextafter(constant.low, np.inf)
        high = 1e308 if constant.high == np.inf else np.nextafter(constant.high, -np.inf)
        # (an end that is the default is the case without constants, {})
        cases += [{name: float(v)} for v in (low, high) if v != constant.default]
    return cases


def _scaled_data(scale, n_classes, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(12, 3)) * scale
    y = np.arange(12) % n_classes
    return X, y


def _outcome(model, X, y, params, weights=None):
    """Fit; a fitted model scores X finitely, a refusal is one line naming the rule
    (and, when constants were given, them)."""
    rule = model.update
    try:
        model.fit(X, y, sample_weight=weights)
    except ValueError as error:
        text = str(error)
        assert "\n" not in text and "non-finite" in text, text
        if params:
            assert f"update={rule!r}" in text and all(f"{k}=" in text for k in params), text
        elif "steps became" in text:
            assert f"update={rule!r}" in text, text
        return "refused"
    assert np.isfinite(model.coef_).all() and np.isfinite(model.intercept_).all()
    assert np.isfinite(model.decision_function(X)).all()
    return "fitted"


@pytest.mark.parametrize(("rule", "covariance"), EVERY_FORM)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_extreme_constants_and_scales_fit_finitely_or_refuse_naming_the_rule(
    rule, covariance, n_classes
):
    weighted = RULES[rule].weighted
    cases = [(params, scale) for params in [{}, *_extremes(rule)] for scale in (1e-170, 1e300)]
    for k, (params, scale) in enumerate(cases):
        X, y = _scaled_data(scale, n_classes, seed=k)
        data = sp.csr_matrix(X) if k % 2 else X  # both layouts, alternately
        weights = np.where(np.arange(12) % 3 == 0, 1e300, 1.0) if weighted and k % 3 == 0 else None
        cls = _averaged(rule, params) if k % 2 else Perceptron
        model = cls(
            update=rule,
            update_params=params,
            covariance=covariance,
            max_epochs=2,
            random_state=0,
            fit_intercept=bool(k % 4),
        )
        _outcome(model, data, y, params, weights)


# ------------------------------------------------------------- the attacked cases
@pytest.mark.parametrize(
    ("rule", "params", "scale", "weight"),
    [
        ("narow", {"b": 1e308}, 1.0, 1.0),
        ("nag", {}, 1e-170, 1.0),
        ("scw-ii", {}, 1.0, 1e300),
        ("scw-i", {"a": 1e100}, 1.0, 1.0),
        ("scw-ii", {"a": 1e24}, 1.0, 1.0),
    ],
)
def test_the_attacked_rules_refuse_in_one_line_naming_the_rule(rule, params, scale, weight):
    """Each of these raised ZeroDivisionError from the compiled epoch (the attack's data:
    200 examples of 5 normal features, alternating labels)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5)) * scale
    y = np.arange(200) % 2
    model = AveragedPerceptron(update=rule, update_params=params, random_state=0)
    assert _outcome(model, X, y, params, np.full(200, weight)) == "refused"


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"update": "arow", "update_params": {"r": 1e-320}}, "update_params['r']"),
        ({"update": "ada-fobos", "update_params": {"l1": 5e-324}}, "update_params['l1']"),
        ({"update": "pa-ii", "C": 1e-320}, "parameter 'C'"),
        ({"update": "ogd", "update_params": {"eta": float("inf")}}, "update_params['eta']"),
        ({"update": "narow", "update_params": {"b": float("nan")}}, "update_params['b']"),
        ({"update": "arow", "update_params": {"r": 0.0}}, "update_params['r']"),
    ],
)
def test_constants_outside_the_normal_floats_are_refused_at_fit(kwargs, named):
    """A subnormal constant was accepted, then blamed on the features."""
    with pytest.raises(ValueError) as error:
        AveragedPerceptron(**kwargs).fit([[0.0], [1.0]], [0, 1])
    text = str(error.value)
    assert named in text and "\n" not in text and "scale the features" not in text
    if "e-32" in text:
        assert "subnormal" in text


def test_zero_stays_a_constant_where_the_interval_holds_it():
    AveragedPerceptron(update="ada-fobos", update_params={"l1": 0.0}).fit([[0.0], [1.0]], [0, 1])
    Perceptron(update="ogd", update_params={"power_t": 0.0}).fit([[0.0], [1.0]], [0, 1])


@pytest.mark.parametrize("weight", [1e300, 1.0])
def test_logistic_regression_refuses_a_step_that_overflows(weight):
    """learning_rate times a sample weight beyond the floats: the step's own arithmetic."""
    X, y = _scaled_data(1.0, 3)
    model = LogisticRegressionSGD(learning_rate=1e10, random_state=0, max_epochs=2)
    if weight == 1.0:
        assert np.isfinite(model.fit(X, y).coef_).all()
        return
    with pytest.raises(ValueError, match=r"^LogisticRegressionSGD: steps became non-finite"):
        model.fit(X, y, sample_weight=np.full(12, weight))


# ------------------------------------------------------ the nonzero weights per epoch
def _sparse_constants(rule):
    """The rule's constants with its every-round penalty on (none for a rule without)."""
    penalty = RULES[rule].penalty
    return {} if penalty is None else {penalty: 0.05}


@pytest.mark.parametrize(("rule", "covariance"), EVERY_FORM)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_history_counts_the_models_nonzero_weights_after_every_epoch(
    rule, covariance, n_classes, tmp_path
):
    """``n_nonzero``: the entries of ``coef_`` that are nonzero after the epoch (the
    intercept not counted), in memory (dense and CSR input, the dense state and the
    touched rows' compact one, averaged or not) and streamed."""
    from sklearn.datasets import dump_svmlight_file

    from perceptrons.io.stream import fit_stream

    X, y = _data(40, 12, n_classes, 3, density=0.3)
    params = {"update": rule, "covariance": covariance, "random_state": 0, "max_epochs": 3}
    models = [Perceptron(**params, update_params=_sparse_constants(rule))]
    penalty = RULES[rule].penalty
    unpenalized = None if penalty is None else {penalty: 0.0}
    if _averaged(rule, unpenalized) is AveragedPerceptron:  # (never with a penalty on)
        models.append(AveragedPerceptron(**params, update_params=unpenalized))
    for model in models:
        for data, touched in ((X, False), (sp.csr_matrix(X), False), (sp.csr_matrix(X), True)):
            model._touched_rows = touched
            counts = [r["n_nonzero"] for r in model.fit_epochs(data, y)]
            assert counts[-1] == np.count_nonzero(_dense(model.coef_))
            assert [r["n_nonzero"] for r in model.history_] == counts
        model.partial_fit(X, y)  # continued: counted on the state's rows in use
        assert model.history_[-1]["n_nonzero"] == np.count_nonzero(_dense(model.coef_))
        dump_svmlight_file(X, y, str(tmp_path / "train.svm"), zero_based=False)
        streamed = fit_stream(model, tmp_path / "train.svm", epochs=2, chunk_size=15)
        assert streamed.epochs[-1]["n_nonzero"] == np.count_nonzero(_dense(model.coef_))
