"""What users see of an estimator: scikit-learn's verbs, its parameters, its fitted
attributes and the documented extras -- the training engine stays behind the one
private accessors ``_codec()`` and ``_engine()`` (see :mod:`perceptrons._engine`)."""

import inspect

import pytest
from sklearn.base import BaseEstimator

import perceptrons
from perceptrons.parallel import ParameterMixing

# scikit-learn's estimator verbs and metadata-routing methods.
SKLEARN = {
    "fit",
    "partial_fit",
    "predict",
    "decision_function",
    "predict_proba",
    "predict_log_proba",
    "predict_joint_log_proba",
    "score",
    "transform",
    "fit_transform",
    "inverse_transform",
    "get_feature_names_out",
    "get_params",
    "set_params",
    "get_metadata_routing",
    "set_fit_request",
    "set_partial_fit_request",
    "set_score_request",
    "set_transform_request",
    "set_output",
}
# Each documented on the estimator's page (user guide: averaging, sparse models, the
# voted perceptron): training paused after every epoch, sparse coef_, the voted
# perceptron's votes after each example, whether a model can continue training.
EXTRAS = {
    "fit_epochs",
    "sparsify",
    "densify",
    "staged_predict",
    "staged_decision_function",
    "resumable",
    "fit_iterations",  # LogisticRegressionBatch: fit paused after every iteration
    "feature_names",  # TextFeaturizer: the term of each column
    "name_columns",  # TextFeaturizer: hashed columns' names recovered from texts
}

CLASSES = sorted(
    {
        obj
        for name in perceptrons.__all__
        if inspect.isclass(obj := getattr(perceptrons, name)) and issubclass(obj, BaseEstimator)
    }
    | {ParameterMixing},
    key=lambda cls: cls.__name__,
)


def test_the_walk_finds_the_estimators():
    names = {cls.__name__ for cls in CLASSES}
    assert {"AveragedPerceptron", "SequenceTagger", "VotedPerceptron", "TextFeaturizer"} <= names


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_only_sklearn_verbs_and_documented_extras_are_public(cls):
    parameters = set(inspect.signature(cls).parameters)
    public = {name for name in dir(cls) if not name.startswith("_")}
    unexpected = sorted(public - SKLEARN - EXTRAS - parameters)
    assert not [name for name in unexpected if not name.endswith("_")], unexpected


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_estimator_hands_out_its_codec_and_only_online_learners_an_engine(cls):
    from perceptrons.linear._online import OnlineLearner

    if cls is ParameterMixing:
        return
    assert callable(getattr(cls, "_codec", None))
    assert hasattr(cls, "_engine") == issubclass(cls, OnlineLearner)
