"""The ``perceptrons`` command's argument parser: its subcommands and their options.

:func:`build_parser` (exported by :mod:`perceptrons.cli`) builds it; the option groups
several commands share (input files, training, text features, parameter mixing) and
the argument types that check a value as it is parsed are here. An estimator option
records that it was given (``given_options``), so that one of another algorithm is a
usage error even at its default; :data:`~perceptrons.cli._common.ESTIMATOR_OPTIONS` says
which option applies to which algorithm. :func:`perceptrons.cli.main` runs the parsed
command.

Over 600 lines: every command's options, one function per group, in the order ``--help``
shows them; split, the help a user reads as one would be scattered.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from perceptrons.cli._common import (
    ALGORITHMS,
    ESTIMATOR_OPTIONS,
    RULE_CONSTANT_OPTIONS,
    rules_taking,
)
from perceptrons.cli.tag import add_tag_commands
from perceptrons.cli.train import add_saving_options
from perceptrons.linear._update_rules import RULES


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose usage errors are one line, as every error of the command
    is: the problem and where the options are listed, without the usage synopsis
    (several lines for ``train``) before it. Subcommands' parsers are of this class too
    (``add_subparsers`` makes them of their parent's)."""

    def error(self, message: str) -> NoReturn:
        text = " ".join(message.split())
        self.exit(2, f"{self.prog}: error: {text} (see {self.prog} --help)\n")


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help ends with its default (``None`` and flags left out)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        help_text = action.help or ""
        default = action.default
        if default is None or default is False or default is argparse.SUPPRESS:
            return help_text
        if "%(default)" in help_text:
            return help_text
        if not action.option_strings and action.nargs not in ("?", "*"):
            return help_text
        return f"{help_text} (default: %(default)s)"


def _add_data_options(parser: argparse.ArgumentParser) -> None:
    from perceptrons.io.formats._names import FORMATS

    group = parser.add_argument_group("input files")
    group.add_argument(
        "--format",
        choices=("auto", *FORMATS),
        default="auto",
        help="file format; auto: detected from the name and content",
    )
    group.add_argument(
        "--skip-bad-lines",
        action="store_true",
        help="skip and count malformed lines instead of stopping",
    )
    group.add_argument(
        "--label-column",
        metavar="COLUMN",
        default=None,
        help="CSV: the label column's name or index (default: label/class/target/y, else the last)",
    )


def _mark_given(namespace: argparse.Namespace, dest: str) -> None:
    namespace.given_options = frozenset({*getattr(namespace, "given_options", ()), dest})


class _Given(argparse.Action):
    """Store an estimator option's value, and record that it was given: an option of
    another algorithm is refused even when its value is the default."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        _mark_given(namespace, self.dest)


class _GivenAppend(argparse.Action):
    """``append`` that records the option was given (a repeatable estimator option)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), values])
        _mark_given(namespace, self.dest)


class _GivenFlag(argparse.Action):
    """``store_true`` that records the flag was given."""

    def __init__(
        self, option_strings: Sequence[str], dest: str, default: bool = False, **options: Any
    ) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, **options)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, True)
        _mark_given(namespace, self.dest)


def _applies(dest: str) -> str:
    algorithms = ESTIMATOR_OPTIONS[dest][1]
    return "" if algorithms == ALGORITHMS else f" [{', '.join(algorithms)}]"


def _rule_constant_help(dest: str, what: str) -> str:
    """An option of :data:`RULE_CONSTANT_OPTIONS`'s help: what it sets, and for which
    update rules (from the table)."""
    constant = RULE_CONSTANT_OPTIONS[dest][0]
    taking = rules_taking(dest)
    rules = f"--update {', '.join(taking)}" if taking else "no update rule yet"
    return f"{what}: the rule's constant {constant}, for {rules}"


def _add_training_options(parser: argparse.ArgumentParser, *, algorithm: bool) -> None:
    group = parser.add_argument_group(
        "training", "an option in [brackets] applies to those algorithms only"
    )
    if algorithm:
        group.add_argument(
            "--algorithm",
            choices=ALGORITHMS,
            default=None,
            help="the classifier (default: averaged; perceptron, its last weights, for an "
            "--update rule whose average cannot be computed, e.g. with an L1 penalty)",
        )
    else:
        group.add_argument(
            "--algorithms",
            type=_algorithm_list,
            default="perceptron,averaged,voted",
            metavar="LIST",
            help="comma-separated, from: " + ", ".join(ALGORITHMS),
        )

    def add(*names: str, **options: Any) -> None:  # an estimator option: record it given
        action = str(options.get("action"))
        options["action"] = {"store_true": _GivenFlag, "append": _GivenAppend}.get(action, _Given)
        group.add_argument(*names, **options)

    add(
        "--epochs",
        metavar="N",
        type=_positive_int,
        default=10,
        help="passes over the data" + _applies("epochs"),
    )
    add("--seed", metavar="N", type=int, default=0, help="seeds shuffling" + _applies("seed"))
    add("--no-shuffle", action="store_true", help="keep the file's order" + _applies("no_shuffle"))
    add("--delta", metavar="DELTA", type=float, default=0.0, help="the Δ trick" + _applies("delta"))
    add(
        "--update",
        choices=("auto", *RULES),
        default="auto",
        help="update rule: "
        + "; ".join(f"{name}: {rule.summary} ({rule.cite})" for name, rule in RULES.items())
        + "; auto: pa-i for text, perceptron for numeric features"
        + _applies("update"),
    )
    add(
        "--update-param",
        metavar="NAME=VALUE",
        action="append",
        default=None,
        help="a constant of the update rule, named as its paper names it (repeat for "
        "several): "
        + "; ".join(
            f"{name}: " + ", ".join(f"{c}={v.default:g}" for c, v in rule.constants.items())
            for name, rule in RULES.items()
            if rule.constants
        )
        + _applies("update_param"),
    )
    add(
        "--l1",
        metavar="LAMBDA",
        type=_non_negative_float,
        default=None,
        help=_rule_constant_help("l1", "the L1 penalty (lambda) on the feature weights")
        + _applies("l1"),
    )
    add(
        "--feature-budget",
        metavar="B",
        type=_positive_int,
        default=None,
        help=_rule_constant_help(
            "feature_budget", "the most features with a nonzero weight the model keeps"
        )
        + " (not --budget, the kernel perceptron's support vectors)"
        + _applies("feature_budget"),
    )
    add(
        "--covariance",
        choices=("diagonal", "full"),
        default="diagonal",
        help="the second-order rules' covariance: diagonal (O(nnz) per update, for many "
        "features) or full (O(d²), for few)" + _applies("covariance"),
    )
    add(
        "--margin",
        metavar="MARGIN",
        type=float,
        default=0.0,
        help="perceptron with margin: also update when y·score <= MARGIN" + _applies("margin"),
    )
    add(
        "--C",
        type=float,
        default=1.0,
        help="PA-I/PA-II aggressiveness (the budget perceptron's BPA rules too)" + _applies("C"),
    )
    add(
        "--kernel",
        choices=("linear", "poly", "rbf"),
        default="linear",
        help="the kernel perceptrons' kernel" + _applies("kernel"),
    )
    add(
        "--budget",
        metavar="N",
        type=_positive_int,
        default=1000,
        help="the most support vectors the budget perceptron keeps" + _applies("budget"),
    )
    add(
        # The removal rules of perceptrons.budget.RULES, named here so that the parser
        # imports no kernel (tests check the two lists equal).
        "--removal",
        choices=("random", "forgetron", "projectron", "bpa", "bpa-nn"),
        default="projectron",
        help="which support vector a full budget gives up" + _applies("removal"),
    )
    add(
        "--eta",
        metavar="ETA",
        type=_non_negative_float,
        default=0.1,
        help="the projectron's threshold: how near the support set's span an example is "
        "projected onto it" + _applies("eta"),
    )
    add(
        "--degree",
        metavar="N",
        type=_positive_int,
        default=3,
        help="poly kernel degree" + _applies("degree"),
    )
    add(
        "--gamma",
        metavar="GAMMA",
        default="scale",
        help="'scale', 'auto' or a number" + _applies("gamma"),
    )
    add(
        "--coef0",
        metavar="COEF0",
        type=float,
        default=1.0,
        help="poly kernel constant" + _applies("coef0"),
    )
    add(
        "--prediction",
        choices=("vote", "average", "last", "random"),
        default="vote",
        help="how the voted perceptron predicts" + _applies("prediction"),
    )
    add(
        "--multiclass",
        choices=("native", "ovr"),
        default="native",
        help="multiclass voted perceptron, or one per class" + _applies("multiclass"),
    )
    add(
        "--learning-rate",
        metavar="RATE",
        type=_positive_float,
        default=0.1,
        help="SGD step size" + _applies("learning_rate"),
    )
    add(
        "--l2",
        metavar="L2",
        type=_non_negative_float,
        default=None,
        help="L2 penalty per example (default: 0 for logistic, 1e-4 for logistic-batch)"
        + _applies("l2"),
    )
    add(
        "--tol",
        metavar="TOL",
        type=_positive_float,
        default=None,
        help="stop when an iteration improves the objective by less than this, relatively "
        "(default 1e-8)" + _applies("tol"),
    )
    add(
        "--max-iter",
        metavar="N",
        type=_positive_int,
        default=None,
        help="most gradient iterations (default 1000)" + _applies("max_iter"),
    )
    add(
        "--average",
        action="store_true",
        help="predict with the averaged weights" + _applies("average"),
    )
    add(
        "--alpha",
        metavar="ALPHA",
        type=_non_negative_float,
        default=1.0,
        help="additive (Laplace/Lidstone) smoothing" + _applies("alpha"),
    )
    add(
        "--no-fit-prior",
        action="store_true",
        help="uniform class priors instead of the class frequencies" + _applies("no_fit_prior"),
    )
    add(
        "--binarize",
        metavar="THRESHOLD",
        type=float,
        default=0.0,
        help="features above this count as present" + _applies("binarize"),
    )
    add(
        "--class-weight",
        metavar="WEIGHTS",
        help="'balanced' (inverse class frequencies) or LABEL:WEIGHT,... (others: 1)",
    )
    parser.set_defaults(given_options=frozenset())
    _add_text_options(parser, features="hashing")


def _add_text_options(parser: argparse.ArgumentParser, *, features: str) -> None:
    from perceptrons._limits import MAX_N_FEATURES

    text = parser.add_argument_group("text features (text formats only)")
    text.add_argument(
        "--features",
        choices=("hashing", "vocabulary"),
        default=features,
        help="hashed words, or a vocabulary fitted on the training data",
    )
    text.add_argument(
        "--n-features",
        metavar="N",
        type=_n_features,
        default=2**20,
        help=f"hashing: number of hashed features, at most {MAX_N_FEATURES:,}; the "
        "weights take 8 bytes per feature and class, times 3 when averaged (refused "
        "beyond the memory limit)",
    )
    text.add_argument(
        "--ngrams", metavar="N", type=_positive_int, default=1, help="word n-grams up to N"
    )
    text.add_argument(
        "--weighting",
        choices=("tf", "binary", "tfidf"),
        default=None,
        help="term counts, presence, or tf-idf (sublinear tf 1 + ln(tf), -(1 + ln(-tf)) for "
        "a vw file's negative values; rows of unit length); default: tfidf (with --stream "
        "the idf costs a parse pass before training, into the parse cache)",
    )
    text.add_argument(
        "--tokenizer",
        choices=("regex", "whitespace"),
        default="regex",
        help="words: a regular expression, or split on whitespace "
        "(name:value formats always read name:value pairs)",
    )
    text.add_argument(
        "--min-df",
        metavar="N",
        type=_positive_int,
        default=1,
        help="vocabulary: keep words in at least N documents",
    )
    text.add_argument(
        "--hashed-names",
        action="store_true",
        help="hashing: record which words each hashed feature stands for, kept in the "
        "model for inspect (slower training, larger files; without it, inspect "
        "--names-from DATA recovers the names it shows)",
    )


def _n_features(text: str) -> int:
    from perceptrons._limits import MAX_N_FEATURES

    value = _positive_int(text)
    if value > MAX_N_FEATURES:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_N_FEATURES}, got {value}")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def _non_negative_float(text: str) -> float:
    value = float(text)
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text}")
    return value


def _algorithm_list(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in ALGORITHMS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown algorithm {', '.join(unknown) or text!r} (choose from "
            f"{', '.join(ALGORITHMS)})"
        )
    return names


def _add_mixing_options(train: argparse.ArgumentParser) -> None:
    from perceptrons.parallel._names import (
        CONNECT_TIMEOUT,
        DEFAULT_LOCAL_EPOCHS,
        DEFAULT_MIXING,
        MIXINGS,
    )

    cluster = train.add_argument_group(
        "parameter mixing (shards trained in parallel, their weights mixed every epoch)"
    )
    cluster.add_argument(
        "--shards",
        type=_shards,
        metavar="N",
        help="split the data into N shards, trained in parallel (in threads or on Dask "
        "workers) and mixed every epoch: N changes the model; -1: one per CPU (with "
        "--scheduler: one per worker, the default there). With several DATA files or "
        "--stream, each file is one shard. At most one shard per training example, and "
        "in threads as many as memory holds (each keeps its own copy of the model): "
        "more is refused in one line before training",
    )
    cluster.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="join the Dask cluster of this scheduler, e.g. tcp://HOST:8786 "
        "(shards: --shards, else one per worker)",
    )
    cluster.add_argument(
        "--connect-timeout",
        type=_positive_float,
        metavar="SECONDS",
        help="seconds the --scheduler has to accept the connection and answer as a Dask "
        f"scheduler (default: {CONNECT_TIMEOUT:g})",
    )
    cluster.add_argument(
        "--backend",
        choices=("auto", "threads", "dask"),
        default="auto",
        help="auto: threads of this process for one file in memory, Dask with --scheduler, "
        "--stream or several files; dask without --scheduler: a local cluster of "
        "single-threaded processes, one per shard up to one per CPU",
    )
    cluster.add_argument(
        "--mixing",
        choices=MIXINGS,
        help="how the shards' weights are mixed: their mean, their mean weighted by "
        "mistakes, or the start plus the sum of their changes "
        f"(default: the library's, now {DEFAULT_MIXING})",
    )
    cluster.add_argument(
        "--local-epochs",
        metavar="K",
        type=_positive_int,
        help="passes each shard makes between two mixes "
        f"(default: the library's, now {DEFAULT_LOCAL_EPOCHS})",
    )
    cluster.add_argument(
        "--compare-serial",
        action="store_true",
        help="also train serially on the same data; print the accuracy cost and speed-up",
    )


def _shards(text: str) -> int:
    value = int(text)
    if value < 1 and value != -1:
        raise argparse.ArgumentTypeError(f"must be at least 1, or -1 for one per CPU, got {value}")
    return value


def _command(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """The command ``name`` of :mod:`perceptrons.cli`'s ``module``, imported when it runs:
    building the parser (``--help``, ``--version``, a usage error) imports no command's
    dependencies, and a command imports only its own."""

    def run(args: argparse.Namespace) -> int:
        command = getattr(importlib.import_module(f"perceptrons.cli.{module}"), name)
        return int(command(args))

    run.__qualname__ = run.__name__ = name
    return run


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="perceptrons",
        description="Perceptrons, logistic regression and naive Bayes from the command line.",
        formatter_class=_HelpFormatter,
    )
    from perceptrons._version import __version__

    parser.add_argument("--version", action="version", version=f"perceptrons {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        return commands.add_parser(
            name, help=help_text, description=help_text, formatter_class=_HelpFormatter
        )

    demo = command("demo", "compare the perceptrons on built-in data")
    demo.add_argument("--output-dir", default=".", help="where the PNG goes")
    demo.add_argument(
        "--epochs", metavar="N", type=_positive_int, default=10, help="passes over the data"
    )
    demo.set_defaults(run=_command("tools", "cmd_demo"))

    train = command("train", "train a model on a data file")
    train.add_argument(
        "data",
        metavar="DATA",
        nargs="+",
        help="the training data; several files (numeric formats) with --shards or "
        "--scheduler: one shard per file, read by the Dask workers themselves",
    )
    train.add_argument("-o", "--output", required=True, metavar="MODEL", help="the model file")
    train.add_argument("--dev", metavar="FILE", help="development data, scored every epoch")
    train.add_argument(
        "--plot", metavar="PNG", help="write learning curves (and a confusion matrix)"
    )
    train.add_argument("--quiet", action="store_true", help="print nothing but errors")
    train.add_argument("--json", action="store_true", help="print metrics as JSON")
    _add_mixing_options(train)
    streaming = train.add_argument_group("streaming (files larger than memory)")
    streaming.add_argument(
        "--stream",
        action="store_true",
        help="read the file in chunks; memory does not grow with its size (with --shards "
        "or --scheduler: each Dask worker streams a DATA file of its own, svmlight)",
    )
    streaming.add_argument(
        "--chunk-size", metavar="LINES", type=_positive_int, default=10_000, help="lines per chunk"
    )
    streaming.add_argument(
        "--shuffle-window",
        type=int,
        default=0,
        metavar="CHUNKS",
        help="shuffle examples within windows of this many chunks",
    )
    streaming.add_argument(
        "--no-cache",
        action="store_true",
        help="read the text every epoch (by default epochs after the first read the "
        "chunks parsed by the first from a temporary binary cache file, deleted at the end)",
    )
    streaming.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where the parsed cache file goes (default: the system temporary directory)",
    )
    streaming.add_argument(
        "--classes",
        metavar="LABELS",
        help=(
            "every label, comma-separated (else learnt from the first chunk; a label "
            "it lacks costs a scan)"
        ),
    )
    _add_training_options(train, algorithm=True)
    _add_data_options(train)
    add_saving_options(train)
    train.set_defaults(run=_command("train", "cmd_train"))

    evaluate = command("evaluate", "score a model on labelled data")
    evaluate.add_argument("model", metavar="MODEL", help="a model file from train")
    evaluate.add_argument("data", metavar="DATA", help="labelled data, or - for standard input")
    evaluate.add_argument("--json", action="store_true", help="print the report as JSON")
    evaluate.add_argument(
        "-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout"
    )
    _add_data_options(evaluate)
    evaluate.set_defaults(run=_command("evaluate", "cmd_evaluate"))

    predict = command("predict", "label new data, one label per line")
    predict.add_argument("model", metavar="MODEL", help="a model file from train")
    predict.add_argument("data", metavar="DATA", help="a file, or - for standard input")
    predict.add_argument("-o", "--output", metavar="OUT", help="write to OUT instead of stdout")
    scores = predict.add_mutually_exclusive_group()
    scores.add_argument("--scores", action="store_true", help="add the scores after each label")
    scores.add_argument(
        "--proba",
        action="store_true",
        help="add each class's probability after each label (probabilistic models)",
    )
    _add_data_options(predict)
    predict.set_defaults(run=_command("evaluate", "cmd_predict"))

    inspect = command("inspect", "describe a model file")
    inspect.add_argument("model", metavar="MODEL", help="a model file from train")
    inspect.add_argument(
        "--top", metavar="K", type=_positive_int, default=10, help="features per class"
    )
    inspect.add_argument("--json", action="store_true", help="print the description as JSON")
    inspect.add_argument(
        "--names-from",
        metavar="DATA",
        help="name the hashed features shown from the words of DATA (a text data file "
        "like the training data), for a model trained without --hashed-names",
    )
    inspect.set_defaults(run=_command("tools", "cmd_inspect"))

    export = command(
        "export", "write a model as an ONNX graph, to serve it with onnxruntime (onnx extra)"
    )
    export.add_argument("model", metavar="MODEL", help="a model file from train")
    export.add_argument(
        "-o", "--output", metavar="OUT", required=True, help="the ONNX file to write"
    )
    export.add_argument(
        "--dtype",
        choices=("float64", "float32"),
        default="float64",
        help="the graph's input type; float32 rounds the weights to float32 too",
    )
    export.add_argument(
        "--classifier-only",
        action="store_true",
        help="a text model: export its classifier alone, which takes the featurizer's "
        "feature vectors (the text featurization has no ONNX form)",
    )
    export.add_argument(
        "--opset", metavar="N", type=_positive_int, default=None, help="the ONNX opset to write"
    )
    export.add_argument(
        "--no-check",
        action="store_true",
        help="write the graph unchecked; by default it must pass onnx's checker, load in "
        "onnxruntime and give the model's labels on probe rows drawn from the model, "
        "else nothing is written",
    )
    export.set_defaults(run=_command("tools", "cmd_export"))

    diagnose = command(
        "diagnose", "the perceptron's mistake bound (R/γ)² on a data set, and its mistakes"
    )
    diagnose.add_argument("data", metavar="DATA", help="labelled data")
    diagnose.add_argument("--positive", metavar="LABEL", help="multiclass: this class vs rest")
    diagnose.add_argument(
        "--epochs",
        metavar="N",
        type=_positive_int,
        default=100,
        help="most epochs the perceptron may take to converge",
    )
    diagnose.add_argument(
        "--C", type=float, default=1e4, help="C of the linear SVM that finds the separator"
    )
    diagnose.add_argument("--no-intercept", action="store_true", help="no bias feature")
    diagnose.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_text_options(diagnose, features="vocabulary")
    _add_data_options(diagnose)
    diagnose.set_defaults(run=_command("tools", "cmd_diagnose"))

    plot = command("plot", "learning curves of several algorithms, and a confusion matrix")
    plot.add_argument("data", metavar="DATA", help="the training data")
    plot.add_argument(
        "-o", "--output", default="learning-curves.png", metavar="PNG", help="the curves"
    )
    plot.add_argument("--dev", metavar="FILE", help="development data (default: hold out 20%%)")
    plot.add_argument(
        "--confusion",
        metavar="PNG",
        help="the confusion matrix of the averaged perceptron, else of the first algorithm "
        "(default: OUTPUT-confusion.png)",
    )
    plot.add_argument("--quiet", action="store_true", help="print nothing but errors")
    _add_training_options(plot, algorithm=False)
    _add_data_options(plot)
    plot.set_defaults(run=_command("tools", "cmd_plot"))

    tag = command("tag", "sequence labelling: train, evaluate and apply a tagger or chunker")
    add_tag_commands(tag, _HelpFormatter)
    return parser
