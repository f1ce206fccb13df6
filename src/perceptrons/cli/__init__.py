"""The ``perceptrons`` command: train, evaluate, predict, inspect, plot, diagnose and demo.

Thin by design: parse the arguments, call the public API (:mod:`perceptrons.io.formats`,
:mod:`perceptrons.io.prepare`, :mod:`perceptrons.features`, the estimators,
:mod:`perceptrons.io.persist`, :mod:`perceptrons.plots`), print. The commands live in
:mod:`perceptrons.cli.train` (train), :mod:`perceptrons.cli.evaluate` (evaluate,
predict) and :mod:`perceptrons.cli.tools` (inspect, plot, diagnose, demo). A user's
mistake (a missing or malformed file, an unknown label, a model trained on other
features) ends with a one-line message and exit code 1; a usage error with exit code 2.
``PERCEPTRONS_DEBUG=1`` shows tracebacks. :func:`main` returns the exit code and never
exits the interpreter, so the command also runs in-process: ``main(["train", ...])``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from perceptrons.cli._common import ALGORITHMS, EXIT_DATA, UserError
from perceptrons.cli.evaluate import cmd_evaluate, cmd_predict
from perceptrons.cli.tools import cmd_demo, cmd_diagnose, cmd_inspect, cmd_plot
from perceptrons.cli.train import cmd_train

__all__ = ["build_parser", "main"]


# ------------------------------------------------------------------------- parser
def _add_data_options(parser: argparse.ArgumentParser) -> None:
    from perceptrons.io.formats import FORMATS

    group = parser.add_argument_group("input files")
    group.add_argument(
        "--format",
        choices=("auto", *FORMATS),
        default="auto",
        help="file format (default: detected from the name and content)",
    )
    group.add_argument(
        "--skip-bad-lines",
        action="store_true",
        help="skip and count malformed lines instead of stopping",
    )
    group.add_argument(
        "--label-column",
        default=None,
        help="CSV: the label column's name or index (default: label/class/target/y, else the last)",
    )


def _add_training_options(parser: argparse.ArgumentParser, *, algorithm: bool) -> None:
    group = parser.add_argument_group("training")
    if algorithm:
        group.add_argument("--algorithm", choices=ALGORITHMS, default="averaged")
    group.add_argument("--epochs", type=_positive_int, default=10)
    group.add_argument("--seed", type=int, default=0, help="seeds shuffling (default 0)")
    group.add_argument("--no-shuffle", action="store_true", help="keep the file's order")
    group.add_argument("--delta", type=float, default=0.0, help="the Δ trick (default 0)")
    if algorithm:
        group.add_argument(
            "--update",
            choices=("perceptron", "pa", "pa-i", "pa-ii"),
            default="perceptron",
            help="update rule: the perceptron's, or passive-aggressive (PA, PA-I, PA-II)",
        )
        group.add_argument(
            "--margin",
            type=float,
            default=0.0,
            help="perceptron with margin: also update when y·score <= MARGIN",
        )
        group.add_argument("--C", type=float, default=1.0, help="PA-I/PA-II aggressiveness")
        group.add_argument(
            "--kernel",
            choices=("linear", "poly", "rbf"),
            default="linear",
            help="voted perceptron only",
        )
        group.add_argument("--degree", type=_positive_int, default=3)
        group.add_argument("--gamma", default="scale", help="'scale', 'auto' or a number")
        group.add_argument("--coef0", type=float, default=1.0)
        group.add_argument(
            "--prediction", choices=("vote", "average", "last", "random"), default="vote"
        )
        group.add_argument("--multiclass", choices=("native", "ovr"), default="native")
    text = parser.add_argument_group("text features (text formats only)")
    text.add_argument("--features", choices=("hashing", "vocabulary"), default="hashing")
    text.add_argument(
        "--n-features",
        type=_positive_int,
        default=2**20,
        help="hashing: number of hashed features (default 2^20)",
    )
    text.add_argument("--ngrams", type=_positive_int, default=1, help="word n-grams up to N")
    text.add_argument("--weighting", choices=("tf", "binary", "tfidf"), default="tf")
    text.add_argument("--tokenizer", choices=("regex", "whitespace"), default="regex")
    text.add_argument(
        "--min-df",
        type=_positive_int,
        default=1,
        help="vocabulary: keep words in at least N documents",
    )


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="perceptrons",
        description="Vanilla, averaged and voted perceptrons from the command line.",
    )
    from perceptrons._version import __version__

    parser.add_argument("--version", action="version", version=f"perceptrons {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser("demo", help="compare the perceptrons on built-in data")
    demo.add_argument("--output-dir", default=".", help="where the PNG goes (default .)")
    demo.add_argument("--epochs", type=_positive_int, default=10)
    demo.set_defaults(run=cmd_demo)

    train = commands.add_parser("train", help="train a model on a data file")
    train.add_argument("data", metavar="DATA")
    train.add_argument("-o", "--output", required=True, metavar="MODEL")
    train.add_argument("--dev", metavar="FILE", help="development data, scored every epoch")
    train.add_argument(
        "--plot", metavar="PNG", help="write learning curves (and a confusion matrix)"
    )
    train.add_argument("--quiet", action="store_true")
    train.add_argument("--json", action="store_true", help="print metrics as JSON")
    cluster = train.add_argument_group("distributed (iterative parameter mixing on Dask)")
    cluster.add_argument(
        "--workers",
        type=_positive_int,
        metavar="N",
        help="shards on N local worker processes (127.0.0.1)",
    )
    cluster.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="a Dask scheduler, e.g. tcp://HOST:8786 (shards: its workers)",
    )
    streaming = train.add_argument_group("streaming (files larger than memory)")
    streaming.add_argument(
        "--stream",
        action="store_true",
        help="read the file in chunks; memory does not grow with its size",
    )
    streaming.add_argument(
        "--chunk-size", type=_positive_int, default=10_000, help="lines per chunk (default 10000)"
    )
    streaming.add_argument(
        "--shuffle-window",
        type=int,
        default=0,
        metavar="CHUNKS",
        help="shuffle examples within windows of this many chunks",
    )
    streaming.add_argument(
        "--classes", help="every label, comma-separated (else a first pass finds them)"
    )
    _add_training_options(train, algorithm=True)
    _add_data_options(train)
    train.set_defaults(run=cmd_train)

    evaluate = commands.add_parser("evaluate", help="score a model on labelled data")
    evaluate.add_argument("model", metavar="MODEL")
    evaluate.add_argument("data", metavar="DATA")
    evaluate.add_argument("--json", action="store_true")
    _add_data_options(evaluate)
    evaluate.set_defaults(run=cmd_evaluate)

    predict = commands.add_parser("predict", help="label new data, one label per line")
    predict.add_argument("model", metavar="MODEL")
    predict.add_argument("data", metavar="DATA", help="a file, or - for standard input")
    predict.add_argument("-o", "--output", metavar="OUT")
    predict.add_argument("--scores", action="store_true", help="add the scores after each label")
    _add_data_options(predict)
    predict.set_defaults(run=cmd_predict)

    inspect = commands.add_parser("inspect", help="describe a model file")
    inspect.add_argument("model", metavar="MODEL")
    inspect.add_argument("--top", type=_positive_int, default=10, help="features per class")
    inspect.add_argument("--json", action="store_true")
    inspect.set_defaults(run=cmd_inspect)

    diagnose = commands.add_parser(
        "diagnose", help="the perceptron's mistake bound (R/γ)² on a data set, and its mistakes"
    )
    diagnose.add_argument("data", metavar="DATA")
    diagnose.add_argument("--positive", metavar="LABEL", help="multiclass: this class vs rest")
    diagnose.add_argument(
        "--epochs",
        type=_positive_int,
        default=100,
        help="most epochs the perceptron may take to converge (default 100)",
    )
    diagnose.add_argument(
        "--C",
        type=float,
        default=1e4,
        help="C of the LinearSVC that finds the separator (default 1e4)",
    )
    diagnose.add_argument("--no-intercept", action="store_true", help="no bias feature")
    diagnose.add_argument("--json", action="store_true")
    text = diagnose.add_argument_group("text features (text formats only)")
    text.add_argument("--features", choices=("hashing", "vocabulary"), default="vocabulary")
    text.add_argument("--n-features", type=_positive_int, default=2**20)
    text.add_argument("--ngrams", type=_positive_int, default=1)
    text.add_argument("--weighting", choices=("tf", "binary", "tfidf"), default="tf")
    text.add_argument("--tokenizer", choices=("regex", "whitespace"), default="regex")
    text.add_argument("--min-df", type=_positive_int, default=1)
    _add_data_options(diagnose)
    diagnose.set_defaults(run=cmd_diagnose)

    plot = commands.add_parser("plot", help="learning curves of the three perceptrons")
    plot.add_argument("data", metavar="DATA")
    plot.add_argument("-o", "--output", default="learning-curves.png", metavar="PNG")
    plot.add_argument("--dev", metavar="FILE", help="development data (default: hold out 20%%)")
    plot.add_argument("--confusion", metavar="PNG", help="confusion matrix of the averaged model")
    plot.add_argument("--quiet", action="store_true")
    _add_training_options(plot, algorithm=False)
    _add_data_options(plot)
    plot.set_defaults(run=cmd_plot)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``perceptrons`` command.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name; ``sys.argv[1:]`` when not given.

    Returns
    -------
    int
        The exit code: 0 success (also ``--help`` and ``--version``), 1 a problem with
        the user's data or files, 2 a usage error, 130 interrupted. Errors are printed
        to stderr in one line (argparse's usage message for usage errors); ``main``
        never calls :func:`sys.exit`.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # argparse: --help, --version, or a usage error
        return _exit_code(done)
    try:
        return int(args.run(args))
    except UserError as error:
        return _fail(str(error), error.code)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:
        return 0
    except Exception as error:  # a user's mistake reported by the library: one line
        if os.environ.get("PERCEPTRONS_DEBUG"):
            raise
        from perceptrons.plots import PlottingUnavailable

        if isinstance(error, PlottingUnavailable):
            return _fail(str(error), EXIT_DATA)
        if isinstance(error, (ValueError, OSError, KeyError)):
            return _fail(_one_line(error), EXIT_DATA)
        raise


def _exit_code(done: SystemExit) -> int:
    """The exit status a SystemExit stands for (as the interpreter would exit)."""
    if done.code is None:
        return 0
    return done.code if isinstance(done.code, int) else EXIT_DATA


def _one_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    if isinstance(error, FileNotFoundError) and error.filename and str(error.filename) not in text:
        text = f"{error.filename}: no such file"
    return " ".join(text.split())


def _fail(message: str, code: int) -> int:
    print(f"perceptrons: error: {message}", file=sys.stderr)
    return code
