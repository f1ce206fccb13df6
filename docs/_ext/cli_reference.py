"""The CLI reference, generated when the site is built: nothing in it is hand-copied.

Two directives:

``.. cli-help:: tag train``
    The ``--help`` text of a command, formatted by the parser itself
    (:func:`perceptrons.cli.build_parser`).

``.. cli-run:: evaluate digits.npz digits-test.svm``
    Runs ``perceptrons evaluate ...`` in-process (:func:`perceptrons.cli.main`) in a
    working directory shared by the page's commands, and shows the command and what it
    printed. A command that fails fails the build. Options: ``:lines: N`` keeps the first
    N lines of the output; ``:image: FILE`` shows a figure the command wrote; ``:needs:
    conll2000`` names a data set of ``../shared/data``: without it, the command is shown
    with a note instead of its output.

The working directory starts with built-in data written by :func:`_prepare`: the digits
as svmlight files and, when ``../shared/data/conll2000`` is present, a slice of CoNLL-2000.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

# argparse wraps help text to $COLUMNS: fixed, so the pages do not depend on the terminal.
HELP_COLUMNS = "88"
CHUNK_SENTENCES = {"train": 2000, "test": 500}

_workdir: Path | None = None


def _sentences(path: Path, n: int) -> str:
    """The first n blank-line-separated sentences of a CoNLL file."""
    text = path.read_text(encoding="utf-8")
    return "\n\n".join(text.strip().split("\n\n")[:n]) + "\n"


def _prepare(directory: Path) -> None:
    from sklearn.datasets import dump_svmlight_file, load_digits

    from perceptrons.datasets import shared_data_dir

    X, y = load_digits(return_X_y=True)
    dump_svmlight_file(X[:1400], y[:1400], str(directory / "digits-train.svm"), zero_based=False)
    dump_svmlight_file(X[1400:], y[1400:], str(directory / "digits-test.svm"), zero_based=False)
    data = shared_data_dir()
    conll = data / "conll2000" if data is not None else None
    if conll is not None and (conll / "train.txt").is_file():
        for part, n in CHUNK_SENTENCES.items():
            text = _sentences(conll / f"{part}.txt", n)
            (directory / f"chunk-{part}.txt").write_text(text, encoding="utf-8")


def _available(name: str) -> bool:
    from perceptrons.datasets import shared_data_dir

    data = shared_data_dir()
    return data is not None and (data / name).is_dir()


def workdir() -> Path:
    global _workdir
    if _workdir is None:
        _workdir = Path(tempfile.mkdtemp(prefix="perceptrons-cli-docs-"))
        _prepare(_workdir)
    return _workdir


def _literal(text: str, language: str = "text") -> nodes.literal_block:
    block = nodes.literal_block(text, text)
    block["language"] = language
    return block


class CliHelp(SphinxDirective):
    """The parser's own help text for a command (``perceptrons tag train --help``)."""

    required_arguments = 0
    optional_arguments = 2

    def run(self) -> list[nodes.Node]:
        import argparse

        from perceptrons.cli import build_parser

        os.environ["COLUMNS"] = HELP_COLUMNS
        parser = build_parser()
        for name in self.arguments:
            subparsers = [
                action
                for action in parser._actions
                if isinstance(action, argparse._SubParsersAction)
            ]
            if not subparsers or name not in subparsers[0].choices:
                raise self.error(f"cli-help: no command {' '.join(self.arguments)!r}")
            parser = subparsers[0].choices[name]
        return [_literal(parser.format_help().rstrip())]


class CliRun(SphinxDirective):
    """Run a command and show it with its output."""

    required_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, object]] = {
        "lines": directives.positive_int,
        "image": directives.unchanged,
        "needs": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        from perceptrons.cli import main

        argv = shlex.split(self.arguments[0])
        shown = "$ perceptrons " + " ".join(shlex.quote(a) for a in argv)
        needs = self.options.get("needs")
        if needs and not _available(needs):
            note = nodes.note()
            note += nodes.paragraph(
                text=f"The output of this command is shown when the site is built with "
                f"the {needs} data set in ../shared/data (as CI builds it)."
            )
            return [_literal(shown, "console"), note]
        os.environ["COLUMNS"] = HELP_COLUMNS
        here = Path.cwd()
        out = io.StringIO()
        try:
            os.chdir(workdir())
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                code = main(argv)
        finally:
            os.chdir(here)
        text = out.getvalue().rstrip()
        if code != 0:
            raise self.error(f"cli-run: `{shown}` exited with {code}:\n{text}")
        lines = text.splitlines()
        keep = self.options.get("lines")
        if keep is not None and len(lines) > keep:
            lines = [*lines[:keep], "..."]
        result: list[nodes.Node] = [_literal("\n".join([shown, *lines]), "console")]
        image = self.options.get("image")
        if image:
            result.extend(self._figure(image))
        return result

    def _figure(self, name: str) -> list[nodes.Node]:
        source = workdir() / name
        if not source.is_file():
            raise self.error(f"cli-run: the command wrote no {name}")
        # Sphinx copies images from the source tree: the figure goes to _generated/.
        target = Path(self.env.srcdir) / "_generated" / "cli" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        return self.parse_text_to_nodes(f".. image:: /_generated/cli/{name}\n   :alt: {name}\n")


def _cleanup(app: Sphinx, exception: BaseException | None) -> None:
    global _workdir
    if _workdir is not None:
        shutil.rmtree(_workdir, ignore_errors=True)
        _workdir = None


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("cli-help", CliHelp)
    app.add_directive("cli-run", CliRun)
    app.connect("build-finished", _cleanup)
    return {"version": "1", "parallel_read_safe": False}
