"""``perceptrons tag train|evaluate|predict``: sequence labelling from the command line.

Thin, like the other commands: read sentences (:mod:`perceptrons.io.sequences`), fit or
apply a :class:`~perceptrons.tagger.SequenceTagger`, score with
:mod:`perceptrons.chunking`, save and load with :mod:`perceptrons.io.persist`, print.

Input columns
-------------
A tagger remembers how many input columns its tokens had in training (the word, then
e.g. the POS tag of CoNLL-2000): ``tag evaluate`` and ``tag predict`` give it the first
that many input columns of each token and ignore any further ones. ``tag evaluate``
first sets the tag column apart (``--column``, the last by default); ``tag predict``
reads every column as input unless ``--column`` names the tag column, and echoes all of
them before the predicted tag, so that a test file with its gold tags comes back with
the gold and the predicted tag as its last two columns (the layout conlleval reads).
``tag train --input-columns N`` trains on the first N input columns only (1: the words
alone, to learn CoNLL-2000's POS column, ``--column 1``, from the words).

Errors in the data (an empty file, a token without its tag column, a file with fewer
input columns than the model's) end with one ``PATH:LINE: what is wrong`` line and exit
code 1, before any model file is written; misused options with exit code 2.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from pathlib import Path
from typing import Any

from perceptrons.cli._common import (
    EXIT_USAGE,
    UserError,
    check_outputs,
    progress_bar,
    say,
)

_PRESETS = ("auto", "pos", "chunk")


# ---------------------------------------------------------------------------- parser
def _count(minimum: int) -> Any:
    def parse(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def _positive(text: str) -> float:
    value = float(text)
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def _add_input_options(parser: argparse.ArgumentParser, *, column_help: str) -> None:
    from perceptrons.io.formats._names import SEQUENCE_FORMATS

    group = parser.add_argument_group("input files")
    group.add_argument(
        "--format",
        choices=("auto", *SEQUENCE_FORMATS),
        default="auto",
        help="conll: a token per line, whitespace-separated columns, a blank line between "
        "sentences; conllu: CoNLL-U; tagged: one sentence per line of word/TAG items; "
        "auto: conllu for .conllu files, else conll",
    )
    group.add_argument("--column", metavar="N", type=int, default=None, help=column_help)
    group.add_argument(
        "--conllu-tag",
        choices=("upos", "xpos"),
        default="upos",
        help="conllu: the tag column",
    )
    group.add_argument(
        "--separator", metavar="SEP", default="/", help="tagged: what separates word and tag"
    )


def add_tag_commands(parser: argparse.ArgumentParser, formatter_class: Any) -> None:
    """The ``train``, ``evaluate`` and ``predict`` subcommands of ``perceptrons tag``."""
    commands = parser.add_subparsers(dest="tag_command", required=True, metavar="COMMAND")

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        return commands.add_parser(
            name, help=help_text, description=help_text, formatter_class=formatter_class
        )

    train = command("train", "train a tagger (structured averaged perceptron) on tagged sentences")
    train.add_argument("data", metavar="TRAIN", help="the training sentences")
    train.add_argument("-o", "--output", required=True, metavar="MODEL", help="the model file")
    train.add_argument(
        "--dev", metavar="FILE", help="development sentences, scored after every epoch"
    )
    train.add_argument("--quiet", action="store_true", help="print nothing but errors")
    _add_input_options(
        train,
        column_help="conll: the tag column, from 0, negative from the end (default: the last)",
    )
    train.add_argument(
        "--input-columns",
        metavar="N",
        type=_count(1),
        default=None,
        help="use only the first N input columns (1: the words alone, e.g. to learn "
        "CoNLL-2000's POS column with --column 1); evaluate and predict then do the same",
    )
    model = train.add_argument_group("the tagger")
    model.add_argument(
        "--templates",
        metavar="NAME|FILE",
        default="auto",
        help="feature templates: pos (words only), chunk (words and a POS column), auto "
        "(chunk when the tokens have extra columns, else pos), or a file of templates, "
        "one per line, e.g. w[0] or lower[-1]|lower[0]",
    )
    model.add_argument(
        "--n-features",
        metavar="N",
        type=_count(1),
        default=None,
        help="hash the features into N columns (default: a vocabulary of those seen)",
    )
    model.add_argument(
        "--min-count",
        metavar="N",
        type=_count(1),
        default=1,
        help="vocabulary: keep features seen at least N times",
    )
    model.add_argument(
        "--epochs", metavar="N", type=_count(1), default=10, help="passes over the sentences"
    )
    model.add_argument(
        "--update",
        choices=("perceptron", "mira"),
        default="perceptron",
        help="the perceptron's update, or 1-best MIRA's",
    )
    model.add_argument("--C", type=_positive, default=1.0, help="MIRA's largest step")
    model.add_argument(
        "--vanilla",
        action="store_true",
        help="predict with the last weights instead of their average",
    )
    model.add_argument("--seed", metavar="N", type=int, default=0, help="seeds shuffling")
    model.add_argument("--no-shuffle", action="store_true", help="keep the file's order")
    model.add_argument(
        "--early-stopping",
        action="store_true",
        help="stop once the dev accuracy has not improved for --patience epochs "
        "(without --dev: after an epoch without mistakes)",
    )
    model.add_argument(
        "--patience",
        metavar="N",
        type=_count(1),
        default=3,
        help="epochs without improvement before --early-stopping stops",
    )
    model.add_argument(
        "--no-resumable",
        action="store_true",
        help="leave out what only further training needs: a smaller file",
    )
    train.set_defaults(run=cmd_tag_train)

    evaluate = command(
        "evaluate", "token accuracy and, for chunk tags, conlleval's precision/recall/F1"
    )
    evaluate.add_argument("model", metavar="MODEL", help="a model file from tag train")
    evaluate.add_argument("data", metavar="TEST", help="tagged sentences, or - for stdin")
    evaluate.add_argument("--json", action="store_true", help="print the scores as JSON")
    _add_input_options(
        evaluate, column_help="conll: the gold tag column, from 0 (default: the last)"
    )
    evaluate.set_defaults(run=cmd_tag_evaluate)

    predict = command("predict", "tag sentences: their columns plus the predicted tag")
    predict.add_argument("model", metavar="MODEL", help="a model file from tag train")
    predict.add_argument("data", metavar="TEST", help="sentences, or - for stdin")
    predict.add_argument("-o", "--output", metavar="OUT", help="write to OUT instead of stdout")
    _add_input_options(
        predict,
        column_help="conll: a tag column to keep out of the input (it is still echoed); "
        "default: the first input columns the model was trained on",
    )
    predict.set_defaults(run=cmd_tag_predict)


# ---------------------------------------------------------------------------- reading
def _read(args: argparse.Namespace, path: str, *, tags: bool) -> Any:
    """Sentences of ``path`` as the input options say (``tags=False``: conll files are
    read without a tag column unless --column names one)."""
    from perceptrons.io.sequences import read_sentences, sequence_format

    fmt = sequence_format(path) if args.format == "auto" else args.format
    if args.column is not None and fmt != "conll":
        raise UserError(
            f"--column applies to conll files; {path} is read as {fmt} "
            "(CoNLL-U: --conllu-tag; word/TAG: --separator)",
            EXIT_USAGE,
        )
    column = -1 if args.column is None else args.column
    if not tags and args.column is None:
        column = None
    return read_sentences(
        path,
        fmt,
        tag_column=column,
        tag=args.conllu_tag,
        separator=args.separator,
    )


def _templates(spec: str) -> str | list[str]:
    """A preset name, or the templates of a file (one per line, # comments)."""
    if spec in _PRESETS:
        return spec
    path = Path(spec)
    if not path.is_file():
        raise UserError(
            f"--templates: {spec!r} is neither a preset ({', '.join(_PRESETS)}) nor a file",
            EXIT_USAGE,
        )
    lines = path.read_text(encoding="utf-8").splitlines()
    templates = [t.strip() for t in lines if t.strip() and not t.lstrip().startswith("#")]
    if not templates:
        raise UserError(f"--templates: {spec} holds no template")
    return templates


def _load_tagger(path: str) -> Any:
    """The tagger saved in ``path``; another kind of model is a one-line error."""
    from perceptrons.io.persist import load
    from perceptrons.sequence.tagger import SequenceTagger

    model = load(path, core=True)  # the core: no scikit-learn imported
    if isinstance(model, SequenceTagger):
        return model
    estimator = model.steps[-1][1] if hasattr(model, "steps") else model
    raise UserError(
        f"{path} holds a model of type {type(estimator).__name__}, not a sequence tagger: "
        "use `perceptrons evaluate` or `perceptrons predict`"
    )


def is_tagger(model: Any) -> bool:
    """Whether ``model`` (read by :func:`perceptrons.io.persist.load`) is a
    :class:`~perceptrons.tagger.SequenceTagger`, without importing the tagger (and its
    compiled kernels) into a classifier's command: a tagger's module was imported when
    its file was loaded, so while it is not, no model is one (the estimator is the core's
    class under scikit-learn's face: one check holds both)."""
    tagger = sys.modules.get("perceptrons.sequence.tagger")
    return tagger is not None and isinstance(model, tagger.SequenceTagger)


def refuse_tagger(path: str, model: Any, command: str) -> None:
    """A one-line error when ``model``, loaded from ``path`` for ``perceptrons
    COMMAND`` (a classifier's command), is a sequence tagger.

    Parameters
    ----------
    path : str
        The model file, as given.
    model : object
        What :func:`perceptrons.io.persist.load` read from it.
    command : str
        The classifier command it was given to, e.g. ``"evaluate"``.

    Raises
    ------
    UserError
        When ``model`` is a :class:`~perceptrons.tagger.SequenceTagger`.
    """
    if is_tagger(model):
        raise UserError(
            f"{path} is a SequenceTagger model, which tags sentences: "
            f"use `perceptrons tag {command}`"
        )


def _inputs(corpus: Any, tagger: Any) -> list[list[tuple[str, ...]]]:
    """The corpus's tokens cut to the input columns the tagger was trained on."""
    return _cut(corpus, int(tagger.featurizer_.n_columns_), "the model was trained on")


def _cut(corpus: Any, width: int, wanted_by: str) -> list[list[tuple[str, ...]]]:
    """The corpus's tokens cut to their first ``width`` input columns."""
    have = min(len(token) for sentence in corpus.sentences for token in sentence)
    if have < width:
        line = next(
            corpus.lines[s]
            for s, sentence in enumerate(corpus.sentences)
            if any(len(token) < width for token in sentence)
        )
        raise UserError(f"{corpus.path}:{line}: {have} input column(s), but {wanted_by} {width}")
    if all(len(token) == width for sentence in corpus.sentences for token in sentence):
        return corpus.sentences
    return [[token[:width] for token in sentence] for sentence in corpus.sentences]


# ---------------------------------------------------------------------------- train
def cmd_tag_train(args: argparse.Namespace) -> int:
    """Fit a SequenceTagger epoch by epoch, one line each, and save it."""
    from perceptrons.chunking import chunk_scores, looks_like_chunks
    from perceptrons.io.persist import save
    from perceptrons.sequence.tagger import SequenceTagger

    check_outputs(args, [args.output])
    templates = _templates(args.templates)
    started = time.perf_counter()
    train = _read(args, args.data, tags=True)
    dev = _read(args, args.dev, tags=True) if args.dev else None
    width = len(train.sentences[0][0])
    if args.input_columns is not None:
        train.sentences = _cut(train, args.input_columns, "--input-columns asks for")
        width = args.input_columns
    if dev is not None:
        dev.sentences = _cut(dev, width, "the training data has")
    tag_set = sorted({tag for sentence in train.tags for tag in sentence})
    say(
        args,
        f"{train.path}: {len(train):,} sentences, {train.n_tokens:,} tokens, "
        f"{width} input column(s), {len(tag_set)} tags",
    )
    tagger = SequenceTagger(
        templates=templates,
        n_features=args.n_features,
        min_count=args.min_count,
        average=not args.vanilla,
        update=args.update,
        C=args.C,
        max_epochs=args.epochs,
        shuffle=not args.no_shuffle,
        random_state=args.seed,
        early_stopping=args.early_stopping,
        n_iter_no_change=args.patience,
    )
    # The weights' memory for these tags (at least: a vocabulary adds its features),
    # refused before the cost of the epochs is announced: one line either way.
    engine = tagger._engine()
    engine.check_state_shape(*engine.size_for_tags(args.n_features or 0, len(tag_set)))
    _announce_cost(train.n_tokens + (dev.n_tokens if dev is not None else 0), len(tag_set))
    chunked = looks_like_chunks(tag_set)
    dev_pair = (dev.sentences, dev.tags) if dev is not None else None
    with progress_bar(args, args.epochs * len(train), "training") as bar:
        for record in tagger.fit_epochs(
            train.sentences, train.tags, progress=bar.update, dev=dev_pair
        ):
            line = (
                f"epoch {record['epoch']}: {record['mistakes']:,} of {record['examples']:,} "
                "sentences tagged wrongly"
            )
            if dev is not None:
                line += f", dev accuracy {record['validation_score']:.4f}"
                if chunked and not args.quiet:
                    predicted = tagger.predict(dev.sentences)
                    f1 = chunk_scores(dev.tags, predicted)["overall"]["f1"]
                    line += f", dev chunk F1 {100 * f1:.2f}"
            if not args.quiet:
                bar.clear()
                say(args, line)
    seconds = time.perf_counter() - started
    path = save(tagger, args.output, resumable=not args.no_resumable)
    stopped = (
        f" (early stopping after {tagger.n_iter_} epochs)" if tagger.n_iter_ < args.epochs else ""
    )
    say(
        args,
        f"{tagger.n_features_in_:,} features from {_describe_templates(tagger)}, "
        f"{len(tagger.classes_)} tags; trained in {seconds:.1f} s "
        f"(reading{' and dev scoring' if dev is not None else ''} included){stopped}",
    )
    say(args, f"model written to {path}")
    return 0


#: Viterbi steps per epoch above which ``tag train`` says what an epoch will cost: about
#: ten seconds at the compiled kernel's 10**9 steps a second.
ANNOUNCED_STEPS = 10**10


def _announce_cost(n_tokens: int, n_tags: int) -> None:
    """Say on stderr, in one line, what each epoch will cost when that is long: the
    Viterbi's time grows as the square of the number of tags, and a user with thousands
    of tags would otherwise wait minutes without a word (the run goes on: large tag
    sets are legitimate)."""
    from perceptrons.sequence.tagger import viterbi_steps

    steps = viterbi_steps(n_tokens, n_tags)
    if steps > ANNOUNCED_STEPS:
        print(
            f"perceptrons: note: {n_tags:,} tags over {n_tokens:,} tokens make each epoch "
            f"{steps:.2g} Viterbi steps (tokens x tags^2), about {steps / 1e9:,.0f} s on one "
            "core; fewer tags (or --epochs) shorten the run",
            file=sys.stderr,
            flush=True,
        )


def _describe_templates(tagger: Any) -> str:
    count = len(tagger.featurizer_.templates_)
    if isinstance(tagger.templates, str):
        return f"{count} templates ({tagger.templates})"
    return f"{count} templates (from --templates)"


# ------------------------------------------------------------------------- evaluate
def cmd_tag_evaluate(args: argparse.Namespace) -> int:
    """Token accuracy, tagging speed, and conlleval's table when the tags are chunks."""
    from perceptrons.chunking import chunk_scores, looks_like_chunks

    tagger = _load_tagger(args.model)
    corpus = _read(args, args.data, tags=True)
    inputs = _inputs(corpus, tagger)
    # The first call loads the compiled kernels from Numba's cache: a fixed cost that
    # is not the tagging speed.
    tagger.predict(inputs[:1])
    started = time.perf_counter()
    predicted = tagger.predict(inputs)
    seconds = time.perf_counter() - started
    scores = chunk_scores(corpus.tags, predicted)
    known = set(tagger.classes_.tolist())
    unseen: dict[str, int] = {}
    for sentence in corpus.tags:
        for tag in sentence:
            if tag not in known:
                unseen[tag] = unseen.get(tag, 0) + 1
    chunked = looks_like_chunks(known)
    result: dict[str, Any] = {
        "model": args.model,
        "data": corpus.path,
        "sentences": len(corpus),
        "tokens": corpus.n_tokens,
        "accuracy": scores["accuracy"],
        "seconds": seconds,
        "tokens_per_second": corpus.n_tokens / seconds if seconds > 0 else None,
        "unseen_tags": unseen,
    }
    if chunked:
        result["chunks"] = {"overall": scores["overall"], "by_type": scores["by_type"]}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    rate = f"{result['tokens_per_second']:,.0f}" if result["tokens_per_second"] else "-"
    lines = [
        f"{corpus.path}: {len(corpus):,} sentences, {corpus.n_tokens:,} tokens, tagged in "
        f"{seconds:.3f} s ({rate} tokens/s, feature extraction included)",
        f"token accuracy {100 * scores['accuracy']:.2f}%",
    ]
    if unseen:
        count = sum(unseen.values())
        names = ", ".join(sorted(unseen)[:10])
        lines.append(
            f"{count:,} token(s) have a tag the model never saw in training ({names}): "
            "counted as errors"
        )
    if chunked:
        lines.append(_conlleval_table(scores))
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _conlleval_table(scores: dict[str, Any]) -> str:
    """The scores laid out as conlleval prints them (percentages, two decimals)."""
    overall = scores["overall"]
    lines = [
        f"processed {scores['tokens']} tokens with {overall['gold']} phrases; "
        f"found: {overall['predicted']} phrases; correct: {overall['correct']}.",
        f"accuracy: {100 * scores['accuracy']:6.2f}%; "
        + _prf_text(overall)
        + f"  {overall['predicted']}",
    ]
    for kind, entry in scores["by_type"].items():
        lines.append(f"{kind:>17}: " + _prf_text(entry) + f"  {entry['predicted']}")
    return "\n".join(lines)


def _prf_text(entry: dict[str, Any]) -> str:
    return (
        f"precision: {100 * entry['precision']:6.2f}%; recall: {100 * entry['recall']:6.2f}%; "
        f"FB1: {100 * entry['f1']:6.2f}"
    )


# -------------------------------------------------------------------------- predict
def cmd_tag_predict(args: argparse.Namespace) -> int:
    """Each token's columns plus its predicted tag, CoNLL layout, to a file or stdout."""
    from perceptrons.io.files import write_text_atomically
    from perceptrons.io.sequences import write_conll

    check_outputs(args, [args.output])
    tagger = _load_tagger(args.model)
    corpus = _read(args, args.data, tags=False)
    predicted = tagger.predict(_inputs(corpus, tagger))
    out = io.StringIO()
    write_conll(out, corpus, predicted)
    if args.output:
        write_text_atomically(args.output, out.getvalue())
    else:
        sys.stdout.write(out.getvalue())
    return 0
