"""scikit-learn's own estimator checks, run on every estimator."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from perceptrons import AveragedPerceptron, Perceptron, VotedPerceptron

# Checks that cannot apply, each with its reason. Nothing else may fail.
ARRAY_API = {
    "check_array_api_input": (
        "the kernels are compiled for NumPy arrays; array-API namespaces are not supported"
    ),
}
NO_PARTIAL_FIT = (
    "partial_fit is undefined with kernel='precomputed': a batch's Gram matrix does not "
    "index the support vectors of earlier batches, so it raises a clear ValueError"
)
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


def _expected_failures(estimator):
    if getattr(estimator, "kernel", None) == "precomputed":
        return PRECOMPUTED
    if getattr(estimator, "prediction", None) == "random":
        return RANDOM_RULE
    return ARRAY_API


@parametrize_with_checks(
    [
        Perceptron(),
        AveragedPerceptron(),
        VotedPerceptron(),
        VotedPerceptron(kernel="poly", degree=2, multiclass="ovr", prediction="average"),
        VotedPerceptron(kernel="rbf", prediction="random", random_state=0),
        VotedPerceptron(kernel="precomputed"),
    ],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
