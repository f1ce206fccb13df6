"""The one registry of the package's model classes.

Every list of the model classes is read from :data:`MODELS`: the package's public names
(:mod:`perceptrons`), the classes a model file may name (:mod:`perceptrons.io.persist`),
the command line's ``--algorithm`` (:mod:`perceptrons.cli`) and the ONNX converters
(:mod:`perceptrons.io.onnx`). A kind's entry names modules, never imports them: each
module is imported when its class is first used (:class:`~perceptrons._lazy.LazyClasses`),
so reading the table costs nothing.

A kind with a ``core`` module has a learner core of the same class name there, without
scikit-learn (:mod:`perceptrons.linear`): what the command line trains and loads, and
what a model file is read back into when no estimator is asked for
(``perceptrons.io.persist.load(..., core=True)``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ALGORITHMS", "MODELS", "ModelKind", "kind_of"]


@dataclass(frozen=True)
class ModelKind:
    """One model class of the package."""

    #: The class name: the public name in :mod:`perceptrons`, what a model file records.
    name: str
    #: The module of the scikit-learn estimator (or transformer).
    module: str
    #: What it is: ``"classifier"``, ``"tagger"``, ``"featurizer"``.
    role: str = "classifier"
    #: The module of its learner core without scikit-learn (same class name), if any.
    core: str | None = None
    #: The command line's ``--algorithm`` name, for a classifier it trains.
    algorithm: str | None = None
    #: Whether a model file can hold it (a featurizer: as a pipeline's first step).
    saves: bool = True
    #: The form of its ONNX graph (:mod:`perceptrons.io.onnx`): ``"linear"`` (``X @
    #: coef_.T + intercept_``), ``"binarized"`` (the same of ``X`` thresholded),
    #: ``"voted"`` (the voted perceptron's kernel expansion), ``"budget"`` (a kernel
    #: expansion over the support set); None: refused, with why.
    exports: str | None = None

    def module_of(self, core: bool) -> str:
        """The module of the class: its learner core's (``core``, where it has one) or
        the estimator's."""
        return (self.core or self.module) if core else self.module


MODELS: tuple[ModelKind, ...] = (
    ModelKind(
        "Perceptron",
        "perceptrons.perceptron",
        core="perceptrons.linear.perceptron",
        algorithm="perceptron",
        exports="linear",
    ),
    ModelKind(
        "AveragedPerceptron",
        "perceptrons.perceptron",
        core="perceptrons.linear.perceptron",
        algorithm="averaged",
        exports="linear",
    ),
    ModelKind(
        "VotedPerceptron",
        "perceptrons.voted",
        core="perceptrons.kernel.voted",
        algorithm="voted",
        exports="voted",
    ),
    ModelKind(
        "BudgetPerceptron",
        "perceptrons.budget",
        core="perceptrons.kernel.budget",
        algorithm="budget",
        exports="budget",
    ),
    ModelKind(
        "LogisticRegressionSGD",
        "perceptrons.logistic",
        core="perceptrons.linear.logistic",
        algorithm="logistic",
        exports="linear",
    ),
    ModelKind(
        "LogisticRegressionBatch",
        "perceptrons.logistic_batch",
        core="perceptrons.probabilistic.logistic_batch",
        algorithm="logistic-batch",
        exports="linear",
    ),
    ModelKind(
        "MultinomialNaiveBayes",
        "perceptrons.naive_bayes",
        core="perceptrons.probabilistic.naive_bayes",
        algorithm="multinomial-nb",
        exports="linear",
    ),
    ModelKind(
        "BernoulliNaiveBayes",
        "perceptrons.naive_bayes",
        core="perceptrons.probabilistic.naive_bayes",
        algorithm="bernoulli-nb",
        exports="binarized",
    ),
    ModelKind(
        "SequenceTagger", "perceptrons.tagger", role="tagger", core="perceptrons.sequence.tagger"
    ),
    ModelKind(
        "TextFeaturizer",
        "perceptrons.features",
        role="featurizer",
        core="perceptrons.text.featurizer",
    ),
    ModelKind(
        "SequenceFeaturizer",
        "perceptrons.sequence_features",
        role="featurizer",
        core="perceptrons.sequence.featurizer",
        saves=False,
    ),
)

#: ``--algorithm`` names and the class name of each, in the table's order.
ALGORITHMS: dict[str, str] = {kind.algorithm: kind.name for kind in MODELS if kind.algorithm}


def kind_of(name: str) -> ModelKind:
    """The entry of the class ``name`` (a KeyError for another name)."""
    for kind in MODELS:
        if kind.name == name:
            return kind
    raise KeyError(name)
