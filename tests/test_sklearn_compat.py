"""scikit-learn's own estimator checks, run on every estimator."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from perceptrons import AveragedPerceptron, Perceptron

# Checks that cannot apply, each with its reason. Nothing else may fail.
EXPECTED_FAILURES = {
    "check_array_api_input": (
        "the kernels are compiled for NumPy arrays; array-API namespaces are not supported"
    ),
}


@parametrize_with_checks(
    [Perceptron(), AveragedPerceptron()],
    expected_failed_checks=lambda estimator: EXPECTED_FAILURES,
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
