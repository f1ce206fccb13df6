"""What the commands share: the user error, output, reading files, building models."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from perceptrons._registry import ALGORITHMS as REGISTERED_ALGORITHMS
from perceptrons._registry import kind_of
from perceptrons.linear._update_rules import RULES, UpdateRule

EXIT_DATA, EXIT_USAGE = 1, 2

#: ``--algorithm`` names and the class name of each, from the package's registry.
ESTIMATORS = REGISTERED_ALGORITHMS
ALGORITHMS = tuple(ESTIMATORS)

_EPOCHS = ("perceptron", "averaged", "voted", "budget", "logistic")
_KERNELS = ("voted", "budget")
_RULES = ("perceptron", "averaged")
_NB = ("multinomial-nb", "bernoulli-nb")
#: The one table of estimator options: ``dest: (constructor parameter, algorithms it
#: applies to)``. An option given for an algorithm it does not apply to is a usage error
#: naming it; tests check the table against the constructors.
ESTIMATOR_OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "epochs": ("max_epochs", _EPOCHS),
    "seed": ("random_state", _EPOCHS),
    "no_shuffle": ("shuffle", _EPOCHS),
    "delta": ("delta", ("perceptron", "averaged", "voted")),
    "update": ("update", _RULES),
    "update_param": ("update_params", _RULES),
    "l1": ("update_params", _RULES),
    "feature_budget": ("update_params", _RULES),
    "covariance": ("covariance", _RULES),
    "margin": ("margin", _RULES),
    "C": ("C", (*_RULES, "budget")),
    "kernel": ("kernel", _KERNELS),
    "degree": ("degree", _KERNELS),
    "gamma": ("gamma", _KERNELS),
    "coef0": ("coef0", _KERNELS),
    "budget": ("budget", ("budget",)),
    "removal": ("removal", ("budget",)),
    "eta": ("eta", ("budget",)),
    "prediction": ("prediction", ("voted",)),
    "multiclass": ("multiclass", ("voted",)),
    "learning_rate": ("learning_rate", ("logistic",)),
    "l2": ("l2", ("logistic", "logistic-batch")),
    "tol": ("tol", ("logistic-batch",)),
    "max_iter": ("max_iter", ("logistic-batch",)),
    "average": ("average", ("logistic",)),
    "alpha": ("alpha", _NB),
    "no_fit_prior": ("fit_prior", _NB),
    "binarize": ("binarize", ("bernoulli-nb",)),
    # Every algorithm that weighs classes (the budget perceptron does not).
    "class_weight": ("class_weight", tuple(a for a in ALGORITHMS if a != "budget")),
}


def _is_feature_budget(rule: UpdateRule) -> bool:
    # A budget of features is an integer constant B; ALMA's B (a margin scale) is not.
    return "B" in rule.constants and bool(getattr(rule.constants["B"], "integer", False))


#: The options that set one constant of the update rule: ``dest: (the constant, what
#: it is called, whether a rule takes it)``. Which rules take one is read from the table
#: (:data:`perceptrons.linear._update_rules.RULES`), so a new rule gets the option with
#: its entry.
RULE_CONSTANT_OPTIONS: dict[str, tuple[str, str, Callable[[UpdateRule], bool]]] = {
    "l1": ("l1", "L1 penalty", lambda rule: "l1" in rule.constants),
    "feature_budget": ("B", "feature budget", _is_feature_budget),
}


def rules_taking(dest: str) -> list[str]:
    """The update rules whose constant the option ``dest`` of
    :data:`RULE_CONSTANT_OPTIONS` sets, in the table's order."""
    takes = RULE_CONSTANT_OPTIONS[dest][2]
    return [name for name, rule in RULES.items() if takes(rule)]


#: What ``--update auto`` (the default) trains with, for text features (True) and
#: numeric ones: passive-aggressive PA-I on text, where its step, scaled by the loss and
#: the document's norm, gained 2.7 points over the perceptron's on a held-out fifth of
#: 20 Newsgroups' training posts (benchmarks/RESULTS.md, bench_vw); the perceptron's on
#: numeric features, where PA-I gained nothing (a9a) or lost (MNIST).
AUTO_UPDATE = {True: "pa-i", False: "perceptron"}


def text_weighting(args: argparse.Namespace) -> str:
    """``--weighting``, or its default: sublinear tf-idf, streamed (``--stream``, the idf
    counted in a parse pass before training) or not, so that both train the same model."""
    if args.weighting is not None:
        return args.weighting
    return "tfidf"


def flag(dest: str) -> str:
    """The command-line spelling of an option's ``dest``."""
    return "--" + dest.replace("_", "-")


def estimator_class(algorithm: str) -> type:
    """The class ``--algorithm`` trains: its learner core where it has one (no
    scikit-learn imported: :mod:`perceptrons.linear`), else the estimator."""
    import importlib

    kind = kind_of(REGISTERED_ALGORITHMS[algorithm])
    return getattr(importlib.import_module(kind.module_of(core=True)), kind.name)


def given_options(args: argparse.Namespace) -> list[str]:
    """The estimator options given on the command line (whatever their values)."""
    given: frozenset[str] = getattr(args, "given_options", frozenset())
    return [dest for dest in ESTIMATOR_OPTIONS if dest in given]


def check_options(
    args: argparse.Namespace, algorithms: Sequence[str], exempt: Sequence[str] = ()
) -> None:
    """A usage error for an option given that applies to none of ``algorithms``."""
    for dest in given_options(args):
        applies = ESTIMATOR_OPTIONS[dest][1]
        if dest not in exempt and not set(applies) & set(algorithms):
            raise UserError(
                f"{flag(dest)} does not apply to {', '.join(algorithms)} "
                f"(it applies to {', '.join(applies)})",
                EXIT_USAGE,
            )


class UserError(Exception):
    """A problem with the user's files or arguments: reported in one line."""

    def __init__(self, message: str, code: int = EXIT_DATA) -> None:
        super().__init__(message)
        self.code = code


def say(args: argparse.Namespace, text: str = "") -> None:
    """Human-readable output: stdout, or stderr when stdout carries JSON."""
    if not getattr(args, "quiet", False):
        print(text, file=sys.stderr if getattr(args, "json", False) else sys.stdout, flush=True)


def read(
    args: argparse.Namespace,
    path: str,
    *,
    labels: bool | None,
    model: Any = None,
    featurizer: Any = None,
    fit: bool = True,
):
    """Read a data file with the input options; for ``model``, fitted to that model.

    With a ``featurizer`` (and ``labels``), a ``vw`` or ``counts`` file is read and
    featurized in one pass where :func:`~perceptrons.io.prepare.read_featurized` can
    (``X`` then holds the features, fitting the featurizer when ``fit``)."""
    from perceptrons.io.formats import read_data
    from perceptrons.io.prepare import read_featurized, read_for_model

    options = {
        "format": args.format,
        "skip_bad_lines": args.skip_bad_lines,
        "label_column": args.label_column,
    }
    dataset = None
    if featurizer is not None and labels:
        dataset = read_featurized(
            path,
            featurizer,
            fit=fit,
            format=args.format,
            skip_bad_lines=args.skip_bad_lines,
        )
    if dataset is not None:
        pass
    elif model is None:
        dataset = read_data(path, labels=labels, **options)
    else:
        dataset = read_for_model(path, model, labels=labels, **options)
    if dataset.skipped:
        line, reason = dataset.skipped[0]
        say(
            args,
            f"{dataset.source}: skipped {len(dataset.skipped)} bad line(s), "
            f"the first at line {line}: {reason}",
        )
    return dataset


def make_estimator(
    args: argparse.Namespace,
    algorithm: str | None = None,
    labels: Any = None,
    *,
    numeric_labels: bool = False,
    text: bool = False,
) -> Any:
    """The estimator the training options describe (``--algorithm``, else ``algorithm``).

    Options that do not apply to it are left out (:func:`check_options` refuses them
    where that is a mistake); ``labels``, the training labels, give ``--class-weight``
    its keys their type (without them, ``numeric_labels`` makes the keys numbers).
    ``text`` says the features are a text featurizer's, for ``--update auto``
    (:data:`AUTO_UPDATE`).
    """
    algorithm = algorithm or training_algorithm(args)
    cls = estimator_class(algorithm)
    accepted = cls().get_params()
    params: dict[str, Any] = {}
    for dest, (param, algorithms) in ESTIMATOR_OPTIONS.items():
        if algorithm not in algorithms or not hasattr(args, dest):
            continue
        value = getattr(args, dest)
        if dest in ("no_shuffle", "no_fit_prior"):
            value = not value
        elif dest == "gamma":
            value = value if value in ("scale", "auto") else _number("--gamma", value)
        elif value is None:  # not given, and no default across algorithms: the estimator's
            continue
        elif dest == "class_weight":
            value = _class_weight(value, labels, numeric_labels)
        elif dest == "update" and value == "auto":
            value = AUTO_UPDATE[text]
        elif dest == "update_param":
            value = _update_params(value)
        elif dest in RULE_CONSTANT_OPTIONS:
            continue  # merged into update_params below, once the rule is known
        if param not in accepted:
            raise UserError(f"{flag(dest)}: {cls.__name__} has no {param!r} parameter", EXIT_USAGE)
        params[param] = value
    if algorithm in ESTIMATOR_OPTIONS["update"][1]:
        _set_rule_constants(args, params)
    return cls(**params)


def _set_rule_constants(args: argparse.Namespace, params: dict[str, Any]) -> None:
    """``--l1`` and ``--feature-budget`` as the rule's constants in ``update_params``: a
    usage error when the rule has no such constant, or ``--update-param`` sets it too."""
    name = params.get("update", "perceptron")
    for dest, (constant, called, _) in RULE_CONSTANT_OPTIONS.items():
        value = getattr(args, dest, None)
        if value is None:
            continue
        taking = rules_taking(dest)
        if name not in taking:
            raise UserError(
                f"{flag(dest)} applies to --update {', '.join(taking) or '(no rule yet)'}; "
                f"--update {name} has no {called}",
                EXIT_USAGE,
            )
        given = params.setdefault("update_params", {})
        if constant in given:
            raise UserError(
                f"{flag(dest)} and --update-param {constant}=... both set {name}'s {constant}: "
                "give one",
                EXIT_USAGE,
            )
        given[constant] = value


def training_algorithm(args: argparse.Namespace) -> str:
    """``--algorithm``, else the averaged perceptron -- or its last weights
    (``perceptron``) for an update rule whose average cannot be computed under the
    constants given (an L1 penalty on, as ada-fobos-l1's default, or dual averaging), and
    for a feature-budget rule, whose average of truncated models would use more than its
    budget of features."""
    if getattr(args, "algorithm", None) is not None:
        return str(args.algorithm)
    rule = RULES.get(getattr(args, "update", None) or "perceptron")
    if rule is None:  # "auto" (averageable rules) or an unknown name, refused later
        return "averaged"
    if _is_feature_budget(rule):
        return "perceptron"
    constants = {**rule.defaults, **_update_params(getattr(args, "update_param", None) or [])}
    if getattr(args, "l1", None) is not None:
        constants["l1"] = args.l1
    return "averaged" if rule.averageable(constants) else "perceptron"


def _update_params(items: list[str]) -> dict[str, float]:
    """``--update-param NAME=VALUE`` (repeated) as the estimator's ``update_params``;
    the estimator checks the names and values against its rule."""
    params = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UserError(f"--update-param: {item!r} is not NAME=VALUE", EXIT_USAGE)
        params[name.strip()] = _number("--update-param", value)
    return params


def _number(option: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UserError(f"{option}: not a number: {text!r}", EXIT_USAGE) from None


def _class_weight(text: str, labels: Any, numeric: bool = False) -> Any:
    """``balanced``, or ``LABEL:WEIGHT,...`` with the labels in the data's type: that of
    ``labels``, else numbers when ``numeric``, else text."""
    import numpy as np

    if text == "balanced":
        return text
    known = {} if labels is None else {str(label): label for label in np.unique(labels).tolist()}
    weights = {}
    for item in text.split(","):
        label, sep, weight = item.rpartition(":")
        if not sep or not label:
            raise UserError(
                f"--class-weight: {item!r} is not LABEL:WEIGHT (or use 'balanced')", EXIT_USAGE
            )
        if known and label not in known:
            raise UserError(
                f"--class-weight: no label {label!r} in the training data "
                f"(its labels: {', '.join(sorted(known)[:10])})",
                EXIT_USAGE,
            )
        key: Any = known.get(label, label)
        if not known and numeric:
            number = _number("--class-weight", label)
            key = int(number) if number.is_integer() else number
        weights[key] = _number("--class-weight", weight)
    return weights


#: The options (their ``dest``) by which a command names a file it reads: positional
#: DATA and MODEL, ``--dev``, ``tag train --templates``. Every one is an input of the
#: output check, whatever the command: no run overwrites a file it reads.
INPUT_FILE_OPTIONS = ("model", "data", "dev", "templates", "names_from")


def input_files(args: argparse.Namespace) -> list[str]:
    """The files the command of ``args`` reads (see :data:`INPUT_FILE_OPTIONS`); names
    that are no file (``-``, a template preset) are skipped by the output check."""
    found: list[str] = []
    for dest in INPUT_FILE_OPTIONS:
        value = getattr(args, dest, None)
        if isinstance(value, list | tuple):
            found.extend(os.fspath(path) for path in value)
        elif value is not None:
            found.append(os.fspath(value))
    return found


def check_outputs(
    args: argparse.Namespace,
    files: Sequence[str | os.PathLike[str] | None],
    *,
    plots: Sequence[str | os.PathLike[str] | None] = (),
) -> None:
    """Every command that writes checks its outputs here, before reading or training:
    none is a file the command reads (:func:`input_files`) or another output, a
    directory or the like; each directory exists (plots: is created if missing) and is
    writable. See :mod:`perceptrons.io.files`."""
    from perceptrons.io.files import check_output_paths

    inputs = input_files(args)
    check_output_paths(files, inputs)
    check_output_paths([*files, *plots], inputs, make_parents=True)


def counts_text(record: dict[str, Any]) -> str:
    """An epoch's counts as its line gives them: ``"N mistakes, U updates"`` (the wrong
    predictions before the update, and the updates, margin violations included), or
    ``"N mistakes"`` for a record without updates (the voted perceptron, the tagger)."""
    text = f"{record['mistakes']} mistakes"
    if "updates" in record:
        text += f", {record['updates']} updates"
    return text


def nonzero_text(record: dict[str, Any]) -> str:
    """What an epoch's line adds for the model's nonzero feature weights after it
    (``n_nonzero``, recorded by the online linear learners), else nothing."""
    return f", {record['n_nonzero']:,} nonzero weights" if "n_nonzero" in record else ""


def curve_of(records: Sequence[dict[str, Any]]) -> dict[str, list[float]]:
    """A learning curve for :func:`perceptrons.plots.learning_curves` from the records
    of :func:`train_with_curve`: mistakes (or log-loss) and dev error per epoch."""
    curve: dict[str, list[float]] = {}
    for key in ("mistakes", "log_loss"):
        if all(key in r for r in records):
            curve[key] = [r[key] for r in records]
    if all("dev_accuracy" in r for r in records):
        curve["dev_error"] = [1 - r["dev_accuracy"] for r in records]
    return curve


def confusion_path(png: str | os.PathLike[str]) -> Path:
    """Where the confusion matrix goes beside the learning curves ``png``."""
    return Path(png).with_name(Path(png).stem + "-confusion.png")


def make_featurizer(args: argparse.Namespace, fmt: str | None = None):
    """The text featurizer the text-feature options describe, for data in format ``fmt``:
    documents of ``name:value`` tokens (the weighted text formats) are read as pairs,
    their names kept as written (Vowpal Wabbit's feature names are case-sensitive)."""
    from perceptrons.io.formats import WEIGHTED_TEXT_FORMATS
    from perceptrons.text.featurizer import TextFeaturizer  # the core: no scikit-learn

    tokenizer = args.tokenizer
    if fmt in WEIGHTED_TEXT_FORMATS:
        if args.ngrams > 1:
            raise UserError(
                f"--ngrams applies to words; {fmt} files hold name:value features", EXIT_USAGE
            )
        tokenizer = "pairs"
    return TextFeaturizer(
        vocabulary="fit" if args.features == "vocabulary" else "hashing",
        n_features=args.n_features,
        ngram_range=(1, args.ngrams),
        weighting=text_weighting(args),
        tokenizer=tokenizer,
        lowercase=tokenizer != "pairs",
        min_df=args.min_df,
        hashed_names=getattr(args, "hashed_names", False),
    )


def progress_bar(args: argparse.Namespace, total: int, desc: str):
    """A progress bar on stderr, shown only on a terminal (logs and pipes stay clean)."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=desc,
        unit="ex",
        unit_scale=True,
        file=sys.stderr,
        leave=False,
        disable=True if args.quiet else None,
    )


def train_with_curve(
    args, estimator, X, y, X_dev=None, y_dev=None, desc="training", sample_weight=None
):
    """Fit epoch by epoch, one line each; return the records (mistakes or log-loss, dev
    accuracy). A model without epochs (naive Bayes) is fitted in one counting pass."""
    import numpy as np

    records = []
    weights = {} if sample_weight is None else {"sample_weight": sample_weight}
    prefix = "" if desc == "training" else f"{desc} "
    if not hasattr(estimator, "fit_epochs"):
        estimator.fit(X, y, **weights)
        errors = int(np.sum(estimator.predict(X) != np.asarray(y)))
        entry = {"epoch": 1, "mistakes": errors}
        line = f"{prefix}counted {X.shape[0]} examples: {errors} training errors"
        if X_dev is not None:
            entry["dev_accuracy"] = float(estimator.score(X_dev, y_dev))
            line += f", dev accuracy {entry['dev_accuracy']:.4f}"
        say(args, line)
        return [entry]
    total = estimator.max_epochs * X.shape[0]
    # The model is read between epochs only to score the dev data: without it, it is
    # formed once, after the last epoch (a hashed model's is n_features x n_classes).
    options = {"publish_each_epoch": X_dev is not None, **weights}
    with progress_bar(args, total, desc) as bar:
        for record in estimator.fit_epochs(X, y, progress=bar.update, **options):
            entry = {"epoch": record["epoch"]}
            line = f"{prefix}epoch {record['epoch']}: "
            if "mistakes" in record:
                entry["mistakes"] = record["mistakes"]
                if "updates" in record:
                    entry["updates"] = record["updates"]
                line += f"{counts_text(record)} in {record['examples']} examples"
                line += nonzero_text(record)
            else:
                entry["log_loss"] = record["log_loss"]
                line += f"mean log-loss {record['log_loss']:.4f} over {record['examples']} examples"
            if "n_nonzero" in record:
                entry["n_nonzero"] = record["n_nonzero"]
            if X_dev is not None:
                entry["dev_accuracy"] = float(estimator.score(X_dev, y_dev))
                line += f", dev accuracy {entry['dev_accuracy']:.4f}"
            records.append(entry)
            if args.quiet:
                continue
            bar.clear()
            say(args, line)
    return records
