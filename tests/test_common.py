"""The contract every classifier of the package keeps, run over every configuration.

One list of configured estimators (as river's and scikit-learn's common tests do) goes
through scikit-learn's own checks, the bad-input checks, determinism, and save/load
followed by ``partial_fit``. What one estimator does differently from the others (its
oracle, its own parameters' meaning) is tested in that estimator's own file.

Every skip and expected failure says why.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from perceptrons import (
    AveragedPerceptron,
    BernoulliNaiveBayes,
    BudgetPerceptron,
    LogisticRegressionSGD,
    MultinomialNaiveBayes,
    Perceptron,
    VotedPerceptron,
    load,
    save,
)
from perceptrons.logistic_batch import LogisticRegressionBatch

CLASSIFIERS = [
    Perceptron,
    AveragedPerceptron,
    VotedPerceptron,
    BudgetPerceptron,
    LogisticRegressionSGD,
    MultinomialNaiveBayes,
    BernoulliNaiveBayes,
]

# ------------------------------------------------------------------ configurations
# Every configuration below covers something the others do not. The data are three
# classes of non-negative counts-like values, so that every estimator (MultinomialNaiveBayes
# included) accepts them; class_prior has one value per class.
CONFIGURATIONS = [
    pytest.param(Perceptron(), id="Perceptron"),
    pytest.param(Perceptron(update="pa-ii", C=0.5, delta=0.5), id="Perceptron-pa-ii-delta"),
    pytest.param(AveragedPerceptron(), id="AveragedPerceptron"),
    pytest.param(AveragedPerceptron(update="pa-i", C=0.5), id="AveragedPerceptron-pa-i"),
    pytest.param(AveragedPerceptron(update="pa", margin=1.0), id="AveragedPerceptron-pa-margin"),
    pytest.param(Perceptron(update="romma"), id="Perceptron-romma"),
    pytest.param(AveragedPerceptron(update="aggressive-romma"), id="AveragedPerceptron-a-romma"),
    pytest.param(VotedPerceptron(), id="VotedPerceptron-linear-vote"),
    pytest.param(
        VotedPerceptron(kernel="poly", degree=2, multiclass="ovr", prediction="average"),
        id="VotedPerceptron-poly-ovr-average",
    ),
    pytest.param(
        VotedPerceptron(kernel="rbf", prediction="random", batch_size=7),
        id="VotedPerceptron-rbf-random",
    ),
    pytest.param(VotedPerceptron(prediction="last", delta=1.0), id="VotedPerceptron-last-delta"),
    pytest.param(VotedPerceptron(kernel="precomputed"), id="VotedPerceptron-precomputed"),
    # A budget the data reach, so that each rule acts (random: its own draws).
    pytest.param(BudgetPerceptron(budget=5, removal="random"), id="BudgetPerceptron-random"),
    pytest.param(
        BudgetPerceptron(budget=5, removal="forgetron", kernel="rbf"),
        id="BudgetPerceptron-rbf-forgetron",
    ),
    pytest.param(
        BudgetPerceptron(budget=5, degree=2, batch_size=4),
        id="BudgetPerceptron-projectron",
    ),
    pytest.param(BudgetPerceptron(budget=5, removal="bpa", C=0.5), id="BudgetPerceptron-bpa"),
    pytest.param(BudgetPerceptron(budget=5, removal="bpa-nn"), id="BudgetPerceptron-bpa-nn"),
    pytest.param(LogisticRegressionSGD(), id="LogisticRegressionSGD"),
    pytest.param(
        LogisticRegressionSGD(average=True, l2=0.01), id="LogisticRegressionSGD-average-l2"
    ),
    pytest.param(MultinomialNaiveBayes(), id="MultinomialNaiveBayes"),
    pytest.param(
        MultinomialNaiveBayes(alpha=0.3, class_prior=[0.2, 0.3, 0.5]),
        id="MultinomialNaiveBayes-class_prior",
    ),
    pytest.param(BernoulliNaiveBayes(), id="BernoulliNaiveBayes"),
    pytest.param(
        BernoulliNaiveBayes(alpha=0.5, fit_prior=False, binarize=1.0),
        id="BernoulliNaiveBayes-binarize",
    ),
]

NO_PARTIAL_FIT = (
    "partial_fit is undefined with kernel='precomputed': a batch's Gram matrix does not "
    "index the support vectors of earlier batches, so it raises a clear ValueError"
)
LABELS = np.array(["ham", "spam", "eggs"])


def _precomputed(estimator):
    return getattr(estimator, "kernel", None) == "precomputed"


def _has_random_state(estimator):
    return "random_state" in estimator.get_params()


def _configured(estimator, **params):
    """A fresh copy of a configuration, seeded where it draws random numbers."""
    estimator = clone(estimator)
    if _has_random_state(estimator):
        estimator.set_params(random_state=0)
    return estimator.set_params(**params)


def _data(n=45, d=5, seed=0, sparse=False):
    """Three noisy, overlapping classes of non-negative values; every class present."""
    rng = np.random.default_rng(seed)
    codes = np.arange(n) % 3
    X = rng.poisson(1.0, size=(n, d)).astype(np.float64)
    X[np.arange(n), codes] += rng.poisson(2.0, size=n)
    return (sp.csr_matrix(X) if sparse else X), LABELS[codes]


def _inputs(estimator, X, X_train=None):
    """The estimator's view of ``X``: itself, or its Gram matrix with the training rows."""
    if not _precomputed(estimator):
        return X
    X_train = X if X_train is None else X_train
    return X @ X_train.T


def _outputs(model, X):
    """Everything a fitted model tells about ``X``, by name."""
    out = {
        "predict": model.predict(X),
        "decision_function": model.decision_function(X),
    }
    if hasattr(model, "predict_proba"):
        out["predict_proba"] = model.predict_proba(X)
    for name in ("coef_", "intercept_"):
        try:
            out[name] = getattr(model, name)
        except AttributeError:  # kernel models have no primal weights
            pass
    return out


def _assert_same_outputs(model, other, X):
    ours, theirs = _outputs(model, X), _outputs(other, X)
    assert sorted(ours) == sorted(theirs)
    for name in ours:
        assert ours[name].dtype == theirs[name].dtype, name
        assert_array_equal(ours[name], theirs[name], err_msg=name)


# ------------------------------------------------------------ scikit-learn's checks
# Checks that cannot apply, each with its reason. Nothing else may fail.
ARRAY_API = {
    "check_array_api_input": (
        "the kernels are compiled for NumPy arrays; array-API namespaces are not supported"
    ),
}
PRECOMPUTED = {
    **ARRAY_API,
    "check_fit_score_takes_y": NO_PARTIAL_FIT,
    "check_n_features_in_after_fitting": NO_PARTIAL_FIT,
    "check_estimators_partial_fit_n_features": NO_PARTIAL_FIT,
}
ORDER_DEPENDENT = (
    "prediction='random' draws one model per row, in row order (seed 004's randomized "
    "rule, reproducible from random_state), so a row's prediction depends on its batch"
)
RANDOM_RULE = {
    **ARRAY_API,
    "check_methods_sample_order_invariance": ORDER_DEPENDENT,
    "check_methods_subset_invariance": ORDER_DEPENDENT,
}
POSITIVE_ONLY = {
    "check_decision_proba_consistency": (
        "the check fits on make_blobs data with negative values, ignoring the "
        "positive_only tag; MultinomialNaiveBayes refuses them (scikit-learn's MultinomialNB "
        "has no decision_function, so the check never runs on it)"
    ),
    "check_sparsify_coefficients": (
        "the check fits on data with negative values, ignoring the positive_only tag; "
        "MultinomialNaiveBayes refuses them (tests/test_sparsify.py tests its sparsify on counts)"
    ),
}


REPEATS = (
    "an online learner visits a repeated example k times, each step from the weights the "
    "previous one left, while sample_weight=k takes one step k times as large: integer "
    "weights are not repetitions (scikit-learn's SGDClassifier and Perceptron fail it too); "
    "tests/test_sample_weight.py tests the weighted training against the weighted oracles"
)
SAMPLE_WEIGHT_EQUIVALENCE = {
    "check_sample_weight_equivalence_on_dense_data": REPEATS,
    "check_sample_weight_equivalence_on_sparse_data": REPEATS,
}
CLASS_WEIGHT_BLOBS = (
    "the check wants 87% of predictions for the class weighted 1000 on blobs of std 20; a "
    "mistake-driven perceptron's class weights scale its steps, which on data no bias can "
    "separate leaves it cycling (about 60%, as scikit-learn's Perceptron on 3 classes); "
    "class_weight is tested exactly in tests/test_sample_weight.py"
)
LOGISTIC_CLASS_WEIGHT = (
    "the check sets n_iter_no_change, which the online engine declares as a class "
    "attribute (early stopping off) and LogisticRegressionSGD has no parameter of that "
    "name, so set_params refuses it"
)

FLAT_OPTIMUM = (
    "weights and repeated rows define the same objective (tests/test_logistic_batch.py: "
    "the same iterates to 1e-9 over a few steps, the same optimum to 1e-6), but on the "
    "check's nearly separable data with l2=1e-4 the objective is flat to rounding over "
    "a region where predict_proba still varies by ~1e-6, more than the check's rtol of "
    "1e-7: two runs whose sums round differently stop at different points of it, even "
    "run until no step improves the objective (measured: objectives 4e-13 apart, "
    "relative, probabilities 1.4e-6)"
)


UNWEIGHTED_ROMMA = (
    "ROMMA has no weighted form (a weight would change which hyperplane is the relaxed "
    "maximum-margin one): it refuses sample_weight and class_weight with a ValueError, "
    "tested in tests/test_update_rules.py"
)
WEIGHT_CHECKS = (
    "check_sample_weights_pandas_series",
    "check_sample_weights_not_an_array",
    "check_sample_weights_list",
    "check_all_zero_sample_weights_error",
    "check_sample_weights_shape",
    "check_sample_weights_not_overwritten",
    "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weight_equivalence_on_sparse_data",
    "check_classifiers_one_label_sample_weights",
    "check_class_weight_classifiers",
)


def _expected_failed_checks(estimator):
    if getattr(estimator, "update", None) in ("romma", "aggressive-romma"):
        return {**ARRAY_API, **dict.fromkeys(WEIGHT_CHECKS, UNWEIGHTED_ROMMA)}
    if isinstance(estimator, MultinomialNaiveBayes):
        return {
            **POSITIVE_ONLY,
            "check_class_weight_classifiers": POSITIVE_ONLY["check_decision_proba_consistency"],
        }
    if isinstance(estimator, BernoulliNaiveBayes):
        return {}
    if isinstance(estimator, LogisticRegressionBatch):
        return {
            "check_sample_weight_equivalence_on_dense_data": FLAT_OPTIMUM,
            "check_sample_weight_equivalence_on_sparse_data": FLAT_OPTIMUM,
        }
    if isinstance(estimator, Perceptron | AveragedPerceptron):
        return {
            **ARRAY_API,
            **SAMPLE_WEIGHT_EQUIVALENCE,
            "check_class_weight_classifiers": CLASS_WEIGHT_BLOBS,
        }
    if isinstance(estimator, LogisticRegressionSGD):
        return {
            **ARRAY_API,
            **SAMPLE_WEIGHT_EQUIVALENCE,
            "check_class_weight_classifiers": LOGISTIC_CLASS_WEIGHT,
        }
    if _precomputed(estimator):
        return PRECOMPUTED
    if isinstance(estimator, BudgetPerceptron):
        return ARRAY_API  # takes no sample_weight or class_weight: those checks skip
    if getattr(estimator, "prediction", None) == "random":
        return {**RANDOM_RULE, **SAMPLE_WEIGHT_EQUIVALENCE}
    return {
        **ARRAY_API,
        **SAMPLE_WEIGHT_EQUIVALENCE,
        "check_class_weight_classifiers": CLASS_WEIGHT_BLOBS,
    }


# The checks are the slow part of the suite: one configuration per code path they reach
# (the averaged bookkeeping with a passive-aggressive step, the voted primal path, a
# kernel with ovr and the randomized rule, the Gram-matrix input, the lazily scaled
# logistic weights, both naive Bayes event models).
@parametrize_with_checks(
    [
        Perceptron(),
        AveragedPerceptron(update="pa-i"),
        AveragedPerceptron(update="aggressive-romma"),
        VotedPerceptron(),
        VotedPerceptron(kernel="rbf", multiclass="ovr", prediction="random", random_state=0),
        VotedPerceptron(kernel="precomputed", prediction="average"),
        BudgetPerceptron(budget=10, removal="forgetron"),
        BudgetPerceptron(budget=10, removal="bpa-nn", kernel="rbf"),
        LogisticRegressionSGD(average=True, l2=0.01),
        MultinomialNaiveBayes(),
        BernoulliNaiveBayes(),
        LogisticRegressionBatch(),
    ],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# ------------------------------------------------------------------------ bad input
def _fit_raises(estimator, X, y, *fragments):
    with pytest.raises(ValueError) as info:
        estimator.fit(X, y)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))


def _matrix_with(value, shape):
    X = np.ones(shape)
    X[0, -1] = value
    return X


BAD_TRAINING_DATA = {
    # name: (X from a (n, d) shape, y from the labels, the fragments the error names)
    "empty": (lambda s: np.empty((0, s[1])), lambda y: y[:0], ["0 sample"]),
    "length-mismatch": (
        lambda s: np.ones(s),
        lambda y: y[:-1],
        ["inconsistent numbers of samples"],
    ),
    "nan": (lambda s: _matrix_with(np.nan, s), lambda y: y, ["NaN"]),
    "inf": (lambda s: _matrix_with(np.inf, s), lambda y: y, ["infinity"]),
    "sparse-nan": (lambda s: sp.csr_matrix(_matrix_with(np.nan, s)), lambda y: y, ["NaN"]),
    "one-class": (lambda s: np.ones(s), lambda y: np.full(len(y), y[0]), ["only 1 class"]),
    "3d": (lambda s: np.ones((s[0], s[1], 2)), lambda y: y, ["dim 3"]),
    "strings": (lambda s: np.full(s, "a", dtype=object), lambda y: y, ["string"]),
    "continuous-y": (lambda s: np.ones(s), lambda y: np.linspace(0.1, 0.9, len(y)), ["continuous"]),
}


@pytest.mark.parametrize("case", list(BAD_TRAINING_DATA))
@pytest.mark.parametrize("estimator", CONFIGURATIONS)
def test_bad_training_data_is_refused_by_name(estimator, case):
    X, y = _data(n=12)
    shape = _inputs(estimator, X).shape
    make_X, make_y, fragments = BAD_TRAINING_DATA[case]
    _fit_raises(_configured(estimator), make_X(shape), make_y(y), *fragments)
    if _precomputed(estimator) or case == "one-class":
        return  # no partial_fit; one label per batch is fine once classes= declared them
    with pytest.raises(ValueError) as info:
        _configured(estimator).partial_fit(make_X(shape), make_y(y), classes=LABELS)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))


@pytest.mark.parametrize("estimator", CONFIGURATIONS)
def test_bad_input_around_a_fitted_model(estimator):
    X, y = _data(n=12)
    name = type(estimator).__name__
    with pytest.raises(NotFittedError):
        _configured(estimator).predict(_inputs(estimator, X))
    model = _configured(estimator).fit(_inputs(estimator, X), y)
    width = _inputs(estimator, X).shape[1]
    wrong = np.ones((2, width + 1))
    expected = rf"{width + 1} features, but {name} is expecting {width} features"
    with pytest.raises(ValueError, match=expected):
        model.predict(wrong)
    with pytest.raises(ValueError, match=expected):
        model.decision_function(wrong)
    with pytest.raises(ValueError, match="NaN"):
        model.decision_function(_matrix_with(np.nan, (2, width)))
    with pytest.raises(ValueError, match="infinity"):
        model.predict(_matrix_with(np.inf, (2, width)))
    if _precomputed(estimator):
        with pytest.raises(ValueError, match="partial_fit is not available"):
            model.partial_fit(_inputs(estimator, X), y)
        return
    with pytest.raises(ValueError, match=expected):
        model.partial_fit(wrong, y[:2])
    with pytest.raises(ValueError, match=r"labels never declared .*\['pony'\].*classes="):
        model.partial_fit(X[:1], ["pony"])
    with pytest.raises(ValueError, match="never declared"):  # another type than the classes
        model.partial_fit(X[:1], [3])
    with pytest.raises(ValueError, match="differs from the classes of the first call"):
        model.partial_fit(X[:2], y[:2], classes=["ham", "spam"])


@pytest.mark.parametrize("estimator", CONFIGURATIONS)
def test_partial_fit_labels(estimator):
    if _precomputed(estimator):
        pytest.skip(NO_PARTIAL_FIT)
    X, _ = _data(n=12)
    with pytest.raises(ValueError, match=r"only 1 class.*classes="):
        _configured(estimator).partial_fit(X[:2], ["ham", "ham"])
    model = _configured(estimator).partial_fit(X[:2], ["ham", "ham"], classes=LABELS)
    model.partial_fit(X[2:4], ["spam", "eggs"])
    assert model.classes_.tolist() == sorted(LABELS.tolist())
    assert set(model.predict(X)) <= set(LABELS)


@pytest.mark.parametrize(
    "estimator",
    CONFIGURATIONS,
)
def test_a_refused_call_leaves_a_fitted_model_untouched(estimator):
    X, y = _data(n=12)
    inputs = _inputs(estimator, X)
    model = _configured(estimator).fit(inputs, y)
    before = _outputs(model, inputs)
    with pytest.raises(ValueError, match="NaN"):
        model.fit(_matrix_with(np.nan, inputs.shape), y)
    if not _precomputed(estimator):
        with pytest.raises(ValueError, match="NaN"):
            model.partial_fit(_matrix_with(np.nan, X.shape), y)
    good = model.get_params()
    bad = {"alpha": 0.0} if "alpha" in good else {"max_epochs": 0}
    with pytest.raises(ValueError, match=f"parameter '{next(iter(bad))}' must be"):
        model.set_params(**bad).fit(inputs, y)
    after = _outputs(model.set_params(**good), inputs)
    for name in before:
        assert_array_equal(after[name], before[name], err_msg=name)


# -------------------------------------------------------------- bad hyperparameters
ONLINE = [
    ("max_epochs", 0),
    ("max_epochs", 2.5),
    ("shuffle", "yes"),
    ("fit_intercept", 1),
    ("random_state", "seed"),
    ("verbose", -1),
]
DELTA = [
    ("delta", -1),
    ("delta", float("nan")),
    ("delta", float("inf")),
    ("delta", "x"),
    ("delta", True),
]
PERCEPTRON = [
    *ONLINE,
    *DELTA,
    ("validation_fraction", 1.0),
    ("validation_fraction", 0.0),
    ("n_iter_no_change", 0),
    ("warm_start", "no"),
    ("early_stopping", 1),
    ("update", "adagrad"),
    ("margin", -1.0),
    ("C", 0.0),
]
NAIVE_BAYES = [
    ("alpha", -1.0),
    ("alpha", 0.0),
    ("alpha", float("nan")),
    ("alpha", "1"),
    ("fit_prior", 1),
    ("class_prior", [0.5, -0.5]),
    ("class_prior", "uniform"),
]
BAD_PARAMETERS = {
    Perceptron: PERCEPTRON,
    AveragedPerceptron: PERCEPTRON,
    VotedPerceptron: [
        *ONLINE,
        *DELTA,
        ("kernel", "sigmoid"),
        ("degree", 0),
        ("gamma", 0.0),
        ("gamma", -1.0),
        ("gamma", "wide"),
        ("coef0", float("nan")),
        ("prediction", "majority"),
        ("multiclass", "ovo"),
        ("batch_size", 0),
        ("batch_size", "big"),
        ("cache_size", -1.0),
        ("device", 3),
    ],
    BudgetPerceptron: [
        *[case for case in ONLINE if case[0] != "fit_intercept"],
        ("budget", 0),
        ("budget", 1.5),
        ("removal", "oldest"),
        ("eta", -0.1),
        ("C", 0.0),
        ("kernel", "precomputed"),
        ("degree", 0),
        ("gamma", 0.0),
        ("coef0", float("nan")),
        ("batch_size", 0),
        ("device", 3),
    ],
    LogisticRegressionSGD: [
        *ONLINE,
        ("learning_rate", 0.0),
        ("learning_rate", -1.0),
        ("l2", -0.1),
        ("average", 1),
    ],
    MultinomialNaiveBayes: NAIVE_BAYES,
    BernoulliNaiveBayes: [
        *NAIVE_BAYES,
        ("binarize", -1.0),
        ("binarize", float("inf")),
        ("binarize", "0"),
    ],
}


def _bad_parameter_cases():
    cases = [
        pytest.param(
            cls,
            {name: value},
            f"{cls.__name__}: parameter '{name}' must be",
            id=f"{cls.__name__}-{name}={value!r}",
        )
        for cls, table in BAD_PARAMETERS.items()
        for name, value in table
    ]
    # Rules between parameters name both of them.
    for params in ({"learning_rate": 0.5, "l2": 2.0}, {"learning_rate": 2.0, "l2": 0.6}):
        cases.append(
            pytest.param(
                LogisticRegressionSGD,
                params,
                "learning_rate * l2 must be < 1",
                id="LogisticRegressionSGD-" + ",".join(f"{k}={v}" for k, v in params.items()),
            )
        )
    for cls in (MultinomialNaiveBayes, BernoulliNaiveBayes):
        cases.append(
            pytest.param(
                cls,
                {"class_prior": [0.5, 0.5]},
                "class_prior has 2 values but there are 3 classes",
                id=f"{cls.__name__}-class_prior-of-the-wrong-length",
            )
        )
    return cases


@pytest.mark.parametrize(("cls", "params", "message"), _bad_parameter_cases())
def test_bad_hyperparameters_are_named_at_every_call(cls, params, message):
    X, y = _data(n=12)
    with pytest.raises(ValueError) as info:
        cls(**params).fit(X, y)
    assert message in str(info.value)
    with pytest.raises(ValueError) as info:
        cls(**params).partial_fit(X, y)
    assert message in str(info.value)
    # Set after a good fit: refused by the next partial_fit and fit.
    model = cls().fit(X, y).set_params(**params)
    with pytest.raises(ValueError) as info:
        model.partial_fit(X, y)
    assert message in str(info.value)
    with pytest.raises(ValueError) as info:
        model.fit(X, y)
    assert message in str(info.value)


# ---------------------------------------------------------------------- determinism
@pytest.mark.parametrize("estimator", CONFIGURATIONS)
def test_same_data_and_seed_give_the_same_model(estimator):
    X, y = _data()
    inputs = _inputs(estimator, X)
    first = _configured(estimator).fit(inputs, y)
    second = _configured(estimator).fit(inputs, y)
    _assert_same_outputs(first, second, inputs)
    assert getattr(first, "history_", None) == getattr(second, "history_", None)
    if not _precomputed(estimator):
        for model in (first, second):
            model.partial_fit(X[:20], y[:20]).partial_fit(X[20:], y[20:])
        _assert_same_outputs(first, second, inputs)


@pytest.mark.parametrize("estimator", CONFIGURATIONS)
def test_another_seed_gives_another_training_order(estimator):
    if not _has_random_state(estimator):
        pytest.skip(f"{type(estimator).__name__} draws no random numbers (no random_state)")
    X, y = _data()
    inputs = _inputs(estimator, X)
    seven = _configured(estimator, random_state=7).fit(inputs, y)
    eight = _configured(estimator, random_state=8).fit(inputs, y)
    assert not np.array_equal(seven.decision_function(inputs), eight.decision_function(inputs))


# ------------------------------------------------------------ save, load, continue
@pytest.mark.parametrize("start", ["fit", "partial_fit"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("estimator", CONFIGURATIONS)
def test_saved_and_loaded_model_continues_exactly(tmp_path, estimator, sparse, start):
    if _precomputed(estimator):
        pytest.skip(NO_PARTIAL_FIT)
    X, y = _data(n=45, sparse=sparse)
    model = _configured(estimator)
    if start == "fit":
        model.fit(X[:25], y[:25])
    else:
        model.partial_fit(X[:25], y[:25], classes=LABELS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing of the model is dropped with a warning
        loaded = load(save(model, tmp_path / "model.npz"))
    assert type(loaded) is type(model)
    assert loaded.get_params() == model.get_params()
    assert loaded.n_features_in_ == model.n_features_in_
    assert_array_equal(loaded.classes_, model.classes_)
    _assert_same_outputs(model, loaded, X)
    for start_row in (25, 35):
        batch = slice(start_row, start_row + 10)
        model.partial_fit(X[batch], y[batch])
        loaded.partial_fit(X[batch], y[batch])
        _assert_same_outputs(model, loaded, X)
    if hasattr(model, "history_"):
        assert loaded.history_ == model.history_


def test_precomputed_round_trip_without_partial_fit(tmp_path):
    """The one configuration without partial_fit still saves and loads exactly."""
    X, y = _data()
    X_test = _data(n=10, seed=1)[0]
    for rule in ("vote", "average", "last", "random"):
        model = VotedPerceptron(kernel="precomputed", prediction=rule, random_state=0)
        model.fit(X @ X.T, y)
        loaded = load(save(model, tmp_path / f"{rule}.npz"))
        _assert_same_outputs(model, loaded, X_test @ X.T)


def _adaptive_configurations():
    """One estimator per rule that keeps statistics of its own (alternately last and
    averaged weights, the last where the rule cannot be averaged), and the
    full-covariance form of each rule that has one, averaged."""
    from perceptrons.linear._update_rules import RULES
    from rule_problems import averaged

    adaptive = [r for r in RULES.values() if r.family not in ("perceptron", "romma")]
    estimators = [
        (averaged(rule.name) if n % 2 else Perceptron)(update=rule.name)
        for n, rule in enumerate(adaptive)
    ]
    estimators += [
        AveragedPerceptron(update=rule.name, covariance="full")
        for rule in adaptive
        if rule.covariance
    ]
    return estimators


def _adaptive_expected_failures(estimator):
    from perceptrons.linear._update_rules import RULES

    if not RULES[estimator.update].weighted:
        failures = {**ARRAY_API, **dict.fromkeys(WEIGHT_CHECKS, UNWEIGHTED_ADAPTIVE)}
        if estimator.update == "eccw" and estimator.covariance == "diagonal":
            failures.update(dict.fromkeys(ECCW_DIAGONAL_CHECKS, ECCW_DIAGONAL))
        return failures
    # The full-correlation second-order perceptron (averaged) passes it: measured.
    full_sop = estimator.update == "sop" and estimator.covariance == "full"
    if RULES[estimator.update].family == "second-order" and not full_sop:
        return {
            **ARRAY_API,
            **SAMPLE_WEIGHT_EQUIVALENCE,
            "check_class_weight_classifiers": SECOND_ORDER_CLASS_WEIGHT,
        }
    if RULES[estimator.update].family == "first-order":
        return {
            **ARRAY_API,
            **SAMPLE_WEIGHT_EQUIVALENCE,
            "check_class_weight_classifiers": FIRST_ORDER_CLASS_WEIGHT,
        }
    if RULES[estimator.update].family == "dual-averaging":
        return {
            **ARRAY_API,
            **SAMPLE_WEIGHT_EQUIVALENCE,
            "check_class_weight_classifiers": DUAL_AVERAGING_CLASS_WEIGHT,
        }
    if estimator.update == "pet":
        return {
            **ARRAY_API,
            **SAMPLE_WEIGHT_EQUIVALENCE,
            "check_class_weight_classifiers": PET_CLASS_WEIGHT,
        }
    # (adafobos-ofs is ada-fobos truncated to a budget: its averaged weights alike.)
    averaged_fobos = estimator.update in ("ada-fobos", "adafobos-ofs")
    if averaged_fobos and isinstance(estimator, AveragedPerceptron):
        return {
            **ARRAY_API,
            **SAMPLE_WEIGHT_EQUIVALENCE,
            "check_class_weight_classifiers": ADAGRAD_CLASS_WEIGHT,
        }
    # Unlike the mistake-driven perceptron, the confidence-weighted rules pass the
    # class-weight check: their steps shrink with the variance, so they do not cycle.
    # Two whose weighted steps stop early do not (CONFIDENCE_CLASS_WEIGHT).
    failures = {**ARRAY_API, **SAMPLE_WEIGHT_EQUIVALENCE}
    if estimator.update in CONFIDENCE_CLASS_WEIGHT and estimator.covariance == "diagonal":
        failures["check_class_weight_classifiers"] = CONFIDENCE_CLASS_WEIGHT[estimator.update]
    return failures


CONFIDENCE_CLASS_WEIGHT = {
    "narow": (
        "the check wants 87% of predictions for the class weighted 1000 on blobs of std 20; "
        "diagonal NAROW steps only while an example's variance exceeds 1 / b, whatever its "
        "weight, so once the variances have shrunk the heavy class stops moving the boundary; "
        "class_weight = sample_weight (r / s) is tested against the oracle in "
        "tests/test_adaptive.py"
    ),
    "nherd": (
        "the check wants 87% of predictions for the class weighted 1000 on blobs of std 20; "
        "NHERD's weight multiplies C, and its diagonal variance shrinks by (1 + C x² Σ)² per "
        "update, so the heavy class freezes its own weights after a few updates; class_weight "
        "= sample_weight (C s) is tested against the oracle in tests/test_adaptive.py"
    ),
}


SECOND_ORDER_CLASS_WEIGHT = (
    "the second-order perceptron and IELLIP are mistake-driven, as the perceptron: on the "
    "check's blobs, which no bias separates, they go on cycling (class weights scale "
    "IELLIP's steps and count SOP's mistakes that many times), below the 87% the check "
    "wants for the class weighted 1000; sample_weight (which class_weight multiplies "
    "into) is tested against the oracles in tests/test_second_order.py"
)
FIRST_ORDER_CLASS_WEIGHT = (
    "the check wants 87% of predictions for the class weighted 1000 on blobs of std 20; "
    "ALMA and OGD step on every example inside the margin, the class weight scaling the "
    "step as the perceptron's does: OGD keeps cycling as the perceptron (50-60% of 0s), "
    "and ALMA's projection on the unit ball makes each class-0 step leave the weights "
    "along that one noisy example (35-65%); class_weight = sample_weight is tested "
    "against the oracle in tests/test_first_order.py"
)
PET_CLASS_WEIGHT = (
    "the check wants 87% of predictions for the class weighted 1000 on blobs of std 20; "
    "PET is the perceptron truncated to a budget, mistake-driven: on the check's blobs, "
    "which no bias separates, it goes on cycling as the perceptron does; class_weight = "
    "sample_weight is tested against the oracle in tests/test_feature_selection.py"
)
ADAGRAD_CLASS_WEIGHT = (
    "the check wants 87% of predictions for the class weighted 1000 on blobs of std 20; "
    "AdaGrad divides each step by the root of its feature's summed squared (weighted) "
    "gradients, so a weight of 1000 barely enlarges the steps, and ada-fobos's averaged "
    "weights, which keep the early iterates, reach 86% (its last weights 92%); "
    "the example weights class_weight sets are tested against the oracle in "
    "tests/test_adagrad.py"
)


DUAL_AVERAGING_CLASS_WEIGHT = (
    "the check wants 87% of predictions for the class weighted 1000 on blobs of std 20 "
    "after its 10 epochs; dual averaging weighs every gradient since the first round "
    "alike, so the early rounds' far-off weights fade only as 1/t: binary, 64% after 10 "
    "epochs (each rule at its defaults), 100% after 1000; three classes pass (100%); "
    "the example weights class_weight sets are tested against the oracle in "
    "tests/test_dual_averaging.py"
)


ECCW_DIAGONAL_CHECKS = (
    "check_fit_score_takes_y",
    "check_estimators_dtypes",
    "check_classifiers_train",
    "check_classifiers_train(readonly_memmap=True)",
    "check_classifiers_train(readonly_memmap=True,X_dtype=float32)",
    "check_supervised_y_2d",
    "check_fit_idempotent",
    "check_fit_check_is_fitted",
    "check_n_features_in",
)
ECCW_DIAGONAL = (
    "exact CW's step has no cap (alpha grows as |margin| / variance): on the checks' dense "
    "data, over 10 epochs, the diagonal form adds the paper's precision increment to "
    "every feature of each example, the variances collapse until a step overflows, and "
    "the fit is refused (non-finite steps); the full form passes these checks; the "
    "diagonal equals its oracle in tests/test_adaptive.py"
)
UNWEIGHTED_ADAPTIVE = (
    "this rule has no weighted form: it refuses sample_weight and class_weight with a "
    "ValueError (the rule table's 'weighted'), tested in tests/test_adaptive.py"
)


@parametrize_with_checks(
    _adaptive_configurations(), expected_failed_checks=_adaptive_expected_failures
)
def test_adaptive_rules_pass_the_estimator_checks(estimator, check):
    check(estimator)
