"""The ``perceptrons`` command: train, evaluate, predict, inspect, plot, diagnose, demo and tag.

Thin by design: parse the arguments, call the public API (:mod:`perceptrons.io.formats`,
:mod:`perceptrons.io.prepare`, :mod:`perceptrons.features`, the estimators,
:mod:`perceptrons.io.persist`, :mod:`perceptrons.plots`), print. The commands live in
:mod:`perceptrons.cli.train` (train), :mod:`perceptrons.cli.evaluate` (evaluate,
predict) and :mod:`perceptrons.cli.tools` (inspect, plot, diagnose, demo); ``tag train``, ``tag
evaluate`` and ``tag predict`` (sequence labelling) in :mod:`perceptrons.cli.tag`. A user's
mistake (a missing or malformed file, an unknown label, a model trained on other
features, an output that is one of the inputs or cannot be written) ends with a
one-line message and exit code 1; a usage error (an option of another algorithm) with
exit code 2. Every command that writes checks its outputs before reading any data
(:func:`perceptrons.io.files.check_output_paths`), and writes through
:func:`perceptrons.io.files.write_atomically`.
``PERCEPTRONS_DEBUG=1`` shows tracebacks. :func:`main` returns the exit code and never
exits the interpreter, so the command also runs in-process: ``main(["train", ...])``.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence

from perceptrons.cli._common import EXIT_DATA, UserError
from perceptrons.cli._parser import build_parser

__all__ = ["build_parser", "main"]


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
        to stderr in one line (usage errors too, without argparse's usage synopsis); ``main``
        never calls :func:`sys.exit`.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # argparse: --help, --version, or a usage error
        return _exit_code(done)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
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
        if isinstance(error, MemoryError):
            # Memory ran out below the limit the estimates use (another process took
            # it, or an allocation no estimate foresaw): still one line, no traceback.
            return _fail(
                f"out of memory ({_one_line(error)}); set PERCEPTRONS_MEMORY_LIMIT to what "
                "this process may take, or lower the option that sizes the model",
                EXIT_DATA,
            )
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


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: object = None,
    line: str | None = None,
) -> None:
    """A warning as one line on stderr, as errors are (not Python's two lines with the
    library's source line): ``perceptrons: warning: ...``."""
    print(f"perceptrons: warning: {' '.join(str(message).split())}", file=sys.stderr)


def _fail(message: str, code: int) -> int:
    print(f"perceptrons: error: {message}", file=sys.stderr)
    return code
