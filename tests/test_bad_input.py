"""Bad input gets a clear error that names the problem, never a crash in a kernel."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from perceptrons import AveragedPerceptron, Perceptron

ESTIMATORS = [Perceptron, AveragedPerceptron]
X_OK = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
Y_OK = np.array([0, 1, 1, 0])


@pytest.fixture(params=ESTIMATORS, ids=lambda cls: cls.__name__)
def cls(request):
    return request.param


@pytest.mark.parametrize(
    ("X", "y", "message"),
    [
        (np.empty((0, 2)), np.empty(0), "0 sample"),
        (X_OK, Y_OK[:3], "inconsistent numbers of samples"),
        (np.array([[0.0, np.nan], [1.0, 0.0]]), [0, 1], "NaN"),
        (np.array([[0.0, np.inf], [1.0, 0.0]]), [0, 1], "infinity"),
        (sp.csr_matrix(np.array([[0.0, np.nan], [1.0, 0.0]])), [0, 1], "NaN"),
        (X_OK, np.zeros(4), "only 1 class"),
        (np.zeros((2, 2, 2)), [0, 1], "dim 3"),
        (np.array([["a", "b"], ["c", "d"]], dtype=object), [0, 1], "string"),
        (X_OK, np.array([0.5, 1.5, 2.5, 3.5]), "continuous"),
    ],
    ids=[
        "empty",
        "length-mismatch",
        "nan",
        "inf",
        "sparse-nan",
        "one-class",
        "3d",
        "strings",
        "continuous-y",
    ],
)
def test_fit_rejects_bad_data_with_a_named_problem(cls, X, y, message):
    with pytest.raises(ValueError, match=message):
        cls().fit(X, y)


def test_unseen_label_in_later_partial_fit_without_classes(cls):
    model = cls().partial_fit(X_OK, Y_OK)
    with pytest.raises(ValueError, match=r"labels never declared .*\[7\].*classes="):
        model.partial_fit(X_OK[:1], [7])


def test_first_partial_fit_with_one_label_asks_for_classes(cls):
    with pytest.raises(ValueError, match=r"only 1 class.*classes="):
        cls().partial_fit(X_OK[:2], [1, 1])


def test_partial_fit_with_declared_classes_accepts_one_label_batches(cls):
    model = cls().partial_fit(X_OK[:2], ["a", "a"], classes=["a", "b", "c"])
    model.partial_fit(X_OK[2:], ["c", "b"])
    assert model.classes_.tolist() == ["a", "b", "c"]
    with pytest.raises(ValueError, match="differs from the classes"):
        model.partial_fit(X_OK[:1], ["a"], classes=["a", "b"])


def test_labels_of_another_type_than_the_classes_are_unseen(cls):
    model = cls().fit(X_OK, ["a", "b", "b", "a"])
    with pytest.raises(ValueError, match="never declared"):
        model.partial_fit(X_OK[:1], [3])


def test_predict_with_another_feature_count(cls):
    model = cls().fit(X_OK, Y_OK)
    with pytest.raises(ValueError, match=r"3 features.*expecting 2 features"):
        model.predict(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"3 features.*expecting 2 features"):
        model.partial_fit(np.ones((2, 3)), [0, 1])


def test_predict_rejects_nan_and_unfitted(cls):
    with pytest.raises(NotFittedError):
        cls().predict(X_OK)
    model = cls().fit(X_OK, Y_OK)
    with pytest.raises(ValueError, match="NaN"):
        model.decision_function(np.array([[np.nan, 0.0]]))


@pytest.mark.parametrize(
    ("parameter", "value"),
    [
        ("max_epochs", 0),
        ("max_epochs", 2.5),
        ("shuffle", "yes"),
        ("fit_intercept", 1),
        ("validation_fraction", 1.0),
        ("validation_fraction", 0.0),
        ("n_iter_no_change", 0),
        ("random_state", "seed"),
        ("verbose", -1),
        ("delta", -1),
        ("delta", float("nan")),
        ("delta", float("inf")),
        ("delta", "x"),
        ("delta", True),
    ],
)
def test_bad_hyperparameters_are_named(cls, parameter, value):
    with pytest.raises(ValueError, match=f"parameter '{parameter}' must be"):
        cls(**{parameter: value}).fit(X_OK, Y_OK)
    with pytest.raises(ValueError, match=f"parameter '{parameter}' must be"):
        cls(**{parameter: value}).partial_fit(X_OK, Y_OK)


def test_a_failed_fit_leaves_a_fitted_model_untouched(cls):
    model = cls(random_state=0).fit(X_OK, Y_OK)
    coef = model.coef_.copy()
    with pytest.raises(ValueError):
        model.fit(np.array([[np.nan, 0.0], [0.0, 1.0]]), [0, 1])
    np.testing.assert_array_equal(model.coef_, coef)
