"""Training from files larger than memory: chunks of a file fed to ``partial_fit``.

:func:`iter_chunks` reads a line-oriented file (svmlight, fastText, TSV, the sentiment
layout, Vowpal Wabbit, Blitzer et al.'s counts, plain lines; gzipped or not) a fixed
number of lines at a time, parsing each chunk with
:func:`perceptrons.io.formats.read_data`, so the formats, checks and error messages are
those of the in-memory readers, with line numbers counted over the whole file.
:func:`fit_stream` trains an estimator over several passes of such chunks, passing a
``vw`` file's importance weights as ``partial_fit``'s ``sample_weight``. Peak memory
holds one window of chunks and the model, whatever the file's size.

svmlight chunks are read by the compiled reader (:mod:`perceptrons._kernels.parse`)
straight from blocks of the file's bytes into CSR buffers reused from chunk to chunk,
with the checks and messages of :func:`~perceptrons.io.formats.read_data`. While
:func:`fit_stream` trains on one chunk, a reader thread parses the next ones (a queue
of two): the parser and the training kernels release the GIL, so the two overlap, and
the model is the same as without the thread, bit for bit.

:func:`fit_stream` makes no pass over the file before training an estimator of this
package afresh: what it was not given is learnt from the chunks as they train
(``_Unknowns``). The classes are the first chunk's labels; a later chunk with a label
they lack undoes the run, which starts again with every label found by a scan. An
svmlight file's indices are read as they are (0-based), the state widened as they
arrive (:meth:`~perceptrons._states.TrainingState.widened`: a feature not yet seen has
weight 0), and the index base decided after the first epoch by scikit-learn's rule
(1-based unless some index is 0: the state then drops its unused row 0, see
:meth:`~perceptrons._states.TrainingState.without_first_row`); later epochs read the
file, or the parsed cache, at that width and base. The model is, bit for bit, the one
trained with them declared. Another estimator (any scikit-learn incremental
classifier), a model being continued, a shuffling window or held-out examples get a
first pass over the file for what was not given. For svmlight without
``skip_bad_lines`` that pass is a compiled scan of the labels and indices alone
(:func:`perceptrons._kernels.parse.scan_svmlight`: no values read, no rows stored), and
the training pass checks the lines: a bad line is reported with the same ``PATH:LINE``
message, when the training pass reaches it (see ``_scan_before_training``).

``vw`` and ``counts`` files trained with a hashing ``TextFeaturizer(tokenizer="pairs")``
(no shuffling window) are read by the compiled
hashing reader (:mod:`perceptrons._kernels.hashing`), by two parser threads when the
process may use two cores (one else), whose chunks training takes in file order: it
parses, lowercases and hashes a chunk's bytes in one pass into the matrix the
featurizer would give, bit for bit, and reports only the names it has not seen before,
which the featurizer adds to the names of its hashed columns as ``partial_fit`` would
(with two threads, each with its own table, the names a thread reports are filtered
in file order against those reported before: the same names, in the same order).
The lines of a chunk it cannot read exactly (a bad line, a byte outside ASCII, a number
off its exact path) go through ``read_data`` and the featurizer, which word the errors,
the lines around them through the kernel, the chunk still one batch.

A tf-idf featurizer (``weighting="tfidf"``) costs a parse pass before training: the
readers count the terms (a ``"tf"`` featurizer of the same hashing,
``TextFeaturizer._counting``) into the parse cache while the document frequencies and
the classes are counted (``_count_documents``); every epoch then reads the counts back and
weighs them with the idf (``TextFeaturizer._weigh``): sublinear tf, idf and row norms are
each row's own once the idf is known, so the features are those of ``fit_transform`` on
the whole file, bit for bit.

Epochs after the first read the chunks the first one trained on back from a binary cache
file (``perceptrons.io._cache``, ``fit_stream``'s ``cache``) instead of parsing the
text again: the same arrays in the same order, so the same model, bit for bit. Later
svmlight chunks also skip ``partial_fit``'s checks of the data, which the compiled reader
made as it read them (``perceptrons._validation.checked_batch``).

For a fixed order (``shuffle=False`` and no shuffling window) the streamed model is
exactly the in-memory ``fit`` with ``shuffle=False`` and as many epochs: the perceptrons
run the same updates in the same order, and the averaged perceptron's average covers
every example either way.

Over 600 lines: the one streamed training loop (chunks, the shuffle window, the parse
cache, held-out data, progress) and the chunk iterator it shares with the library's
callers.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from perceptrons._engine import add_record, run_epochs
from perceptrons._input import check_random_state
from perceptrons.io._cache import ChunkCache, open_cache
from perceptrons.io._chunks import (
    _QUEUE_DEPTH,
    Chunk,
    _features,
    _line_chunks,
    _pairs_batches,
    _pairs_label_chunks,
    _PairsReader,
    _prefetched,
    _stack,
    _svmlight_chunks,
    _svmlight_plain_scan,
)
from perceptrons.io._signals import cleanup_on_signals
from perceptrons.io.formats import (
    MAX_SVMLIGHT_WIDTH,
    TEXT_FORMATS,
    WEIGHTED_TEXT_FORMATS,
    DataFormatError,
    detect_format,
)

if TYPE_CHECKING:
    from perceptrons.text.featurizer import TextFeaturizer

__all__ = ["STREAMABLE", "Chunk", "StreamReport", "StreamScan", "fit_stream", "iter_chunks", "scan"]

#: The formats :func:`iter_chunks` can read a chunk of lines at a time: svmlight and the
#: text formats (CSV needs its header, IDX is binary).
STREAMABLE = ("svmlight", *TEXT_FORMATS)

_COMPILED_TEXT = True  # vw / counts with a hashing featurizer: the compiled reader (tests: off)


@dataclass
class StreamScan:
    """What one pass over a file tells before training: labels, width, size."""

    format: str
    classes: np.ndarray
    n_features: int | None
    zero_based: bool | None
    n_examples: int
    n_bytes: int


@dataclass
class StreamReport:
    """Per-epoch counts of a :func:`fit_stream` run."""

    epochs: list[dict[str, Any]] = field(default_factory=list)
    #: Whether any example carried an importance weight (a ``vw`` file's).
    weighted: bool = False


def iter_chunks(
    path: str | os.PathLike,
    format: str = "auto",
    *,
    chunk_size: int = 10_000,
    labels: bool | None = True,
    n_features: int | None = None,
    zero_based: bool | str = "auto",
    skip_bad_lines: bool = False,
) -> Iterator[Chunk]:
    """Read ``path`` ``chunk_size`` lines at a time.

    Parameters
    ----------
    path : path-like
        A file in one of :data:`STREAMABLE` (gzipped or not).
    format : str, default="auto"
        The format, or ``"auto"`` to detect it from the file's name and first lines.
    chunk_size : int, default=10000
        Lines per chunk (blank lines count; the chunk holds their examples).
    labels, n_features, zero_based, skip_bad_lines
        As for :func:`perceptrons.io.formats.read_data`. For svmlight give ``n_features``
        (every chunk then has that width) and a fixed ``zero_based``; :func:`scan`
        finds both.

    Yields
    ------
    chunk : Chunk
        Chunks with at least one example, in file order.

    Raises
    ------
    DataFormatError
        A malformed line, named ``PATH:LINE`` with the line counted over the file, or
        corrupt gzip data.
    OSError
        The file cannot be opened or read (a one-line message).
    """
    name = os.fspath(path)
    fmt = detect_format(name) if format == "auto" else format
    if fmt not in STREAMABLE:
        raise DataFormatError(
            name, f"cannot stream {fmt} files (streamable: {', '.join(STREAMABLE)})"
        )
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    options: dict[str, Any] = {
        "labels": labels,
        "n_features": n_features,
        "zero_based": zero_based,
        "skip_bad_lines": skip_bad_lines,
    }
    if fmt == "svmlight" and labels is not None:
        yield from _svmlight_chunks(name, chunk_size, ring=0, **options)
        return
    yield from _line_chunks(name, fmt, chunk_size, **options)


def scan(
    path: str | os.PathLike,
    format: str = "auto",
    *,
    chunk_size: int = 10_000,
    skip_bad_lines: bool = False,
) -> StreamScan:
    """One pass over a labelled file: its classes and, for svmlight, width and base.

    Parameters
    ----------
    path : path-like
        The file.
    format : str, default="auto"
        Its format.
    chunk_size : int, default=10000
        Lines read at a time.
    skip_bad_lines : bool, default=False
        Skip malformed lines instead of stopping.

    Returns
    -------
    StreamScan
    """
    name = os.fspath(path)
    fmt = detect_format(name) if format == "auto" else format
    classes: set = set()
    max_index, has_zero, n_examples, n_bytes = -1, False, 0, 0
    if fmt == "svmlight":
        # Raw indices (read 0-based) show whether index 0 occurs; each chunk is done
        # with before the next, so one set of buffers serves them all.
        chunks = _svmlight_chunks(
            name,
            chunk_size,
            ring=1,
            labels=True,
            n_features=None,
            zero_based=True,
            skip_bad_lines=skip_bad_lines,
        )
    elif _COMPILED_TEXT and fmt in WEIGHTED_TEXT_FORMATS:
        chunks = _pairs_label_chunks(name, fmt, chunk_size, skip_bad_lines)
    else:
        chunks = iter_chunks(name, fmt, chunk_size=chunk_size, skip_bad_lines=skip_bad_lines)
    for chunk in chunks:
        if chunk.data.y is not None:
            classes.update(np.unique(chunk.data.y).tolist())
        n_examples += chunk.data.n_samples
        n_bytes = chunk.bytes_read
        X = chunk.data.X
        if X is not None and not isinstance(X, np.ndarray) and X.nnz:  # svmlight: CSR
            max_index = max(max_index, int(X.indices.max()))
            has_zero = has_zero or bool((X.indices == 0).any())
    if n_examples == 0:
        raise DataFormatError(name, "no data")
    n_features = zero_based = None
    if fmt == "svmlight":
        # scikit-learn's rule: 1-based unless some index is 0.
        zero_based = has_zero
        n_features = max(max_index + (1 if zero_based else 0), 1)
    return StreamScan(
        format=fmt,
        classes=np.array(sorted(classes)),
        n_features=n_features,
        zero_based=zero_based,
        n_examples=n_examples,
        n_bytes=n_bytes,
    )


def _scan_before_training(name: str, fmt: str, chunk_size: int, skip_bad_lines: bool) -> StreamScan:
    """:func:`scan` for :func:`fit_stream`: for svmlight without ``skip_bad_lines``,
    the compiled scan that reads only labels and indices (about a third of a parse),
    else, or where it gives up, :func:`scan`.

    Why it is exact: on a file without bad lines it finds what :func:`scan` finds (the
    same labels, largest index and index 0, read by the same rules). On a file with
    one it leaves that line unchecked and may count its indices, so the width may be
    larger than :func:`scan`'s; but every chunk is then checked as it is parsed for
    training, which stops at the first bad line with the message :func:`scan` gives
    (the same reader, the same chunks and line numbers), and no good line before it
    can exceed a width at least the largest index, nor hold an index 0 the scan
    missed. The error only comes later: when the pass reaches the line. Widths past
    ``MAX_SVMLIGHT_WIDTH`` go to :func:`scan`, which words their refusal.
    """
    if fmt == "svmlight" and not skip_bad_lines:
        plain = _svmlight_plain_scan(name)
        if plain is not None and plain.n_examples and plain.max_index <= MAX_SVMLIGHT_WIDTH:
            # scikit-learn's rule: 1-based unless some index is 0 (as scan).
            return StreamScan(
                format=fmt,
                classes=plain.classes,
                n_features=max(plain.max_index + (1 if plain.has_zero else 0), 1),
                zero_based=plain.has_zero,
                n_examples=plain.n_examples,
                n_bytes=plain.n_bytes,
            )
    return scan(name, fmt, chunk_size=chunk_size, skip_bad_lines=skip_bad_lines)


def fit_stream(
    estimator: Any,
    path: str | os.PathLike,
    *,
    format: str = "auto",
    epochs: int = 1,
    chunk_size: int = 10_000,
    featurizer: TextFeaturizer | None = None,
    classes: Sequence | np.ndarray | None = None,
    n_features: int | None = None,
    zero_based: bool | None = None,
    shuffle_window: int = 0,
    random_state: int | None = None,
    skip_bad_lines: bool = False,
    progress: Callable[[int, int], object] | None = None,
    on_epoch: Callable[[dict[str, Any]], object] | None = None,
    cache: bool | str | os.PathLike | None = None,
    publish_each_epoch: bool = True,
) -> StreamReport:
    """Train ``estimator`` on a file read chunk by chunk, ``epochs`` times.

    Parameters
    ----------
    estimator : estimator with ``partial_fit``
        Trained in place (``Perceptron``, ``AveragedPerceptron``, ``VotedPerceptron``,
        or any scikit-learn incremental classifier).
    path : path-like
        A file in one of :data:`STREAMABLE`; each epoch reads it again.
    format : str, default="auto"
        Its format.
    epochs : int, default=1
        Passes over the file.
    chunk_size : int, default=10000
        Lines per chunk, and examples per ``partial_fit`` call.
    featurizer : TextFeaturizer, optional
        For text formats: a hashing featurizer (``vocabulary="hashing"``); with
        ``tokenizer="pairs"`` for the ``name:value`` documents of ``vw`` and ``counts``
        files. Fitted in place (it learns the names of the hashed features as it goes).
        Weighting ``"tf"`` or ``"binary"`` needs no pass over the data before training;
        ``"tfidf"`` costs one: a parse pass counts the file's terms into the parse cache
        (``cache``) and the document frequencies, then every epoch weighs the cached
        counts with the idf, as the featurizer's ``fit_transform`` weighs the whole
        file (the same features, bit for bit), and the featurizer ends fitted with it.
    classes : sequence, optional
        Every label. If not given, an estimator of this package trained afresh takes
        the first chunk's labels, and should a later chunk bring another label (or the
        first chunk hold only one), the run is undone, every label found by a scan of
        the file, and training starts again: the model is the one trained with
        ``classes`` given. With a tf-idf featurizer its parse pass finds them.
        Otherwise found by a first pass over the file (:func:`scan`).
    n_features : int, optional
        svmlight: the number of features (with ``zero_based``). If neither is given,
        an estimator of this package trained afresh learns both as it reads: the
        width grows as indices arrive and the base is decided after the first epoch
        (scikit-learn's rule: 1-based unless some index is 0), the model the one
        trained with both given. Otherwise found by a first pass.
    zero_based : bool, optional
        svmlight: whether indices start at 0 (see ``n_features``).
    shuffle_window : int, default=0
        Shuffle the examples within windows of this many chunks (memory: one window).
        0 keeps the file order (the estimator's own ``shuffle`` still shuffles each
        chunk).
    random_state : int, optional
        Seeds the window shuffles.
    skip_bad_lines : bool, default=False
        Skip malformed lines instead of stopping.
    progress : callable, optional
        Called as ``progress(bytes, examples)`` with the bytes read and examples trained
        since the last call, after each chunk; the model is then current (``predict``,
        ``score``...), as after a ``partial_fit``. The parse pass of a tf-idf featurizer
        calls it too, with 0 examples (no model yet). During a first epoch that learns an
        svmlight file's width, that model is over the indices read so far, 0-based
        (its ``n_features_in_`` says how many). A run that starts again (see
        ``classes``) reports only the bytes and examples beyond those reported.
    on_epoch : callable, optional
        Called with each epoch's record once the epoch is done (the model is current):
        it may add entries to the record, such as a development score.
    cache : bool or path-like, optional
        Whether epochs after the first read the chunks parsed by the first (the
        matrices, labels and weights the estimator was given) back from a binary
        cache file instead of the text: ``True``, a directory to create the file in
        (default: the system temporary directory), or ``False`` (every epoch reads the
        text). ``None`` (the default) is ``True`` when ``epochs > 1`` or the featurizer
        is tf-idf (whose parse pass writes it; with ``False`` every epoch, and the parse
        pass, reads the text). The file is
        this run's own (a fresh private name), deleted when the run ends, after an
        error too, or ``SIGTERM`` or ``SIGHUP`` (in the main thread, where their
        handling is the default one: the process then ends by the signal); it takes
        about the size of the parsed data (12 bytes a stored value for svmlight).
        The model is the same, bit for bit, with or without it. Should the disk fill
        while the first epoch (or tf-idf's parse pass) writes it, the later epochs read
        the text again (a ``RuntimeWarning`` says so).
    publish_each_epoch : bool, default=True
        Whether the model (``coef_``, ``intercept_``...) is formed after every epoch,
        for ``on_epoch`` to use it, or only once, after the last (a hashed model's is
        ``n_features`` x ``n_classes``: forming it each epoch costs that much each
        time). The final model is the same either way; ``progress`` and held-out data
        (``early_stopping``) still see a current model.

    Notes
    -----
    The passes go through the epoch loop of ``fit`` (:func:`perceptrons._engine.run_epochs`).
    An estimator of this package trains each chunk with one compiled epoch of its engine,
    the model bit for bit that of one ``partial_fit`` per chunk, and its ``history_``
    gets one record per pass; its ``early_stopping`` stops the passes as in ``fit``, a
    ``validation_fraction`` of every chunk held out (the same examples each pass, kept in
    memory; not with a ``shuffle_window``). Any other estimator is trained with its
    ``partial_fit``.

    A stream that fails (a bad line, an overflow, an interrupt) leaves an estimator of
    this package as it was before the call: what it trains in place is copied once at
    the start (the whole training state of a model being continued; nothing for a
    first training). Another estimator is left as its ``partial_fit`` leaves it.

    A chunk with importance weights (a ``vw`` file, see
    the ``sample_weight`` of :class:`~perceptrons.io.formats.LabeledData`) is trained with
    ``estimator.partial_fit(X, y, classes=..., sample_weight=w)``; a chunk without
    (every other format, or no importance on any of its lines) without the keyword, so
    estimators whose ``partial_fit`` takes no weights still stream the other formats.

    Returns
    -------
    StreamReport
        Mistakes and examples per epoch.
    """
    name = os.fspath(path)
    fmt = detect_format(name) if format == "auto" else format
    text = fmt in TEXT_FORMATS
    if text and featurizer is None:
        raise ValueError(f"{name} is text ({fmt}): pass a hashing TextFeaturizer")
    if text and getattr(featurizer, "vocabulary", None) != "hashing":
        raise ValueError(
            "streaming text needs a featurizer with vocabulary='hashing': a vocabulary "
            "would need the whole file first"
        )
    if fmt in WEIGHTED_TEXT_FORMATS and getattr(featurizer, "tokenizer", None) != "pairs":
        raise ValueError(
            f"{name} is {fmt}, documents of name:value tokens: pass a TextFeaturizer with "
            "tokenizer='pairs'"
        )
    # A tf-idf featurizer: the readers count terms (``counter``), and the pass that
    # counts the document frequencies also finds the classes (see _count_documents).
    tfidf = featurizer if text and getattr(featurizer, "weighting", None) == "tfidf" else None
    counter = featurizer if tfidf is None else tfidf._counting()
    labels = None if classes is None else np.asarray(classes)
    options: dict[str, Any] = {"chunk_size": chunk_size, "skip_bad_lines": skip_bad_lines}
    unknowns = None
    if _learns_on_the_way(estimator, shuffle_window):
        # Nothing is read before training: what was not given is learnt from the chunks
        # (tf-idf's classes by its parse pass).
        unknowns = _Unknowns(
            name,
            options,
            labels=labels is None and tfidf is None,
            width=fmt == "svmlight" and n_features is None and zero_based is None,
        )
    learnt = unknowns is not None and unknowns.width
    if (labels is None and unknowns is None and tfidf is None) or (
        fmt == "svmlight" and (n_features is None or zero_based is None) and not learnt
    ):
        found = _scan_before_training(name, fmt, chunk_size, skip_bad_lines)
        labels = found.classes if labels is None else labels
        if fmt == "svmlight":
            n_features = found.n_features if n_features is None else n_features
            zero_based = found.zero_based if zero_based is None else zero_based
    if fmt == "svmlight":
        # Learnt: indices read as they are (0-based), the base decided after the pass.
        options.update(n_features=n_features, zero_based=True if learnt else zero_based)
    reported = [0, 0]  # the bytes and examples progress was told of

    def counted(n_bytes: int, n_examples: int) -> None:
        reported[0] += n_bytes
        reported[1] += n_examples
        assert progress is not None
        progress(n_bytes, n_examples)

    run = functools.partial(
        _fit_stream,
        estimator,
        name,
        fmt,
        options,
        counter,
        tfidf=tfidf,
        publish_each_epoch=publish_each_epoch,
        epochs=epochs,
        shuffle_window=shuffle_window,
        random_state=random_state,
        on_epoch=on_epoch,
        cache=cache,
    )
    try:
        return run(unknowns, labels=labels, progress=None if progress is None else counted)
    except _NewLabel:
        pass
    # A label the first chunk did not show: the run was undone; every label is found
    # by a scan and training starts again, with the classes (and width) declared.
    found = _scan_before_training(name, fmt, chunk_size, skip_bad_lines)
    if learnt:
        options.update(n_features=found.n_features, zero_based=found.zero_based)
    return run(None, labels=found.classes, progress=_caught_up(progress, reported))


def _fit_stream(
    estimator,
    name: str,
    fmt: str,
    options: dict[str, Any],
    counter,
    unknowns: _Unknowns | None,
    *,
    tfidf,
    publish_each_epoch: bool,
    epochs: int,
    labels: np.ndarray | None,
    shuffle_window: int,
    random_state,
    progress,
    on_epoch,
    cache,
) -> StreamReport:
    """:func:`fit_stream` once its arguments are checked: the cache, the rollback
    (``counter``: what the readers featurize with; ``tfidf``: the tf-idf featurizer
    whose parse pass comes first, or None)."""
    rng = check_random_state(random_state)
    pairs = None
    if _COMPILED_TEXT and fmt in WEIGHTED_TEXT_FORMATS and shuffle_window <= 0:
        assert counter is not None
        pairs = _PairsReader(counter, fmt)  # its names table serves every epoch

    # tf-idf trains from the cache after its counting pass, however many epochs.
    parsed = open_cache(cache, epochs if tfidf is None else max(epochs, 2))
    # SIGTERM and SIGHUP, like Ctrl-C, unwind the run so that the cache goes with it.
    with contextlib.nullcontext() if parsed is None else cleanup_on_signals():
        try:
            with _all_or_nothing(estimator):
                weigh = None
                if tfidf is not None:
                    assert counter is not None
                    tfidf._check_idf_memory()
                    found_labels, counted, n_documents = _count_documents(
                        name, fmt, options, counter, pairs, parsed, progress
                    )
                    labels = found_labels if labels is None else labels
                    tfidf._fit_frequencies(counted, n_documents, counter)
                    weigh = tfidf._weigh
                return _fit_epochs(
                    estimator,
                    name,
                    fmt,
                    options,
                    counter,
                    pairs,
                    parsed,
                    weigh,
                    unknowns,
                    epochs=epochs,
                    labels=labels,
                    shuffle_window=shuffle_window,
                    rng=rng,
                    random_state=random_state,
                    progress=progress,
                    on_epoch=on_epoch,
                    publish_each_epoch=publish_each_epoch,
                )
        finally:
            if parsed is not None:
                parsed.close()


def _fit_epochs(
    estimator,
    name: str,
    fmt: str,
    options: dict[str, Any],
    featurizer,
    pairs: _PairsReader | None,
    parsed: ChunkCache | None,
    weigh: Callable[[Any], Any] | None,
    unknowns: _Unknowns | None,
    *,
    epochs: int,
    labels: np.ndarray | None,
    shuffle_window: int,
    rng,
    random_state,
    progress,
    on_epoch,
    publish_each_epoch: bool = True,
) -> StreamReport:
    """:func:`fit_stream`'s passes, once its arguments are checked (``featurizer``: what
    the readers featurize with; ``weigh``: what turns its output into the features, the
    tf-idf of the counts, or None)."""

    def batches() -> Iterator[tuple[Any, np.ndarray, np.ndarray | None, int]]:
        # Per chunk of the file: from the parsed cache once it holds a pass, else
        # from the text (recorded in the cache when there is one).
        chunks: Iterator[tuple[Any, np.ndarray, np.ndarray | None, int]]
        if parsed is not None and parsed.complete:
            # Weighed in the reader thread too, beside the training.
            chunks = _prefetched(lambda: _weighed(parsed.chunks(), weigh), _QUEUE_DEPTH)
            if unknowns is not None:
                chunks = unknowns.rebased(chunks)
        else:
            chunks = _text_batches(name, fmt, options, featurizer, pairs, shuffle_window <= 0)
            if parsed is not None and parsed.usable:
                # Written by the training thread, which waits on the reader thread
                # anyway: faster than by the reader thread (measured on big.svm).
                chunks = parsed.recording(chunks)
            chunks = _weighed(chunks, weigh)  # (what the cache holds is not weighed)
        if shuffle_window > 0:
            return _windows(chunks, shuffle_window, options["chunk_size"], rng)
        return chunks

    # Imported here: the online learners import io only lazily, and fit_stream's
    # other callers (any scikit-learn incremental classifier) need neither.
    from perceptrons._base import Trainable
    from perceptrons.linear._online import OnlineLearner

    epochs_of: _ChunkEpochs
    if isinstance(estimator, OnlineLearner):
        ours = True
        engine = estimator._engine()
        held_out = engine.validation_fraction is not None
        if held_out and shuffle_window > 0:
            raise ValueError(
                "early_stopping with a validation_fraction holds out the same examples "
                "every epoch, which a shuffling window would mix: pass shuffle_window=0"
            )
        epochs_of = _EngineEpochs(
            estimator, engine, batches, name, labels, progress, held_out, random_state
        )
        epochs_of.checked = fmt == "svmlight"
        epochs_of.unknowns = unknowns
        stopping = engine.stopping()
        cause = engine.non_finite_cause
    else:  # any scikit-learn incremental classifier: its partial_fit, chunk by chunk
        epochs_of = _ChunkEpochs(estimator, batches, name, labels, progress)
        # An estimator of this package (the voted perceptron) records each partial_fit;
        # its history_ gets one record per pass instead, as with an engine.
        ours = isinstance(estimator, Trainable)
        epochs_of.per_pass = ours
        stopping, cause = None, None
    report = StreamReport()
    for record in run_epochs(
        epochs_of,
        max_epochs=epochs,
        history=report.epochs,
        name=type(estimator).__name__,
        describe=_describe,
        verbose=bool(getattr(estimator, "verbose", 0)) and ours,
        stopping=stopping,
        validation=epochs_of.held_out_set,
        publish_each_epoch=publish_each_epoch,
        cause=cause,
    ):
        if epochs_of.per_pass and isinstance(getattr(estimator, "history_", None), list):
            # A record per pass (naive Bayes keeps no history), as fit's history_,
            # without the time it took: what a model file stores must not depend on the
            # machine.
            add_record(estimator.history_, {k: v for k, v in record.items() if k != "seconds"})
        if on_epoch is not None:
            on_epoch(record)
    report.weighted = epochs_of.weighted
    return report


def _learns_on_the_way(estimator: Any, shuffle_window: int) -> bool:
    """Whether :func:`fit_stream` learns the classes, width and base it was not given
    from the chunks as it trains (:class:`_Unknowns`) rather than by a first pass: an
    estimator of this package's engine trained afresh, in file order, holding no
    examples out (a held-out set gathered from chunks of varying widths would need
    them all widened)."""
    from perceptrons.linear._online import OnlineLearner  # imported with the estimator

    return (
        isinstance(estimator, OnlineLearner)
        and estimator._is_first_call()
        and shuffle_window <= 0
        and estimator._engine().validation_fraction is None
    )


def _caught_up(
    progress: Callable[[int, int], object] | None, reported: list[int]
) -> Callable | None:
    """``progress`` told only of what goes beyond ``reported`` (bytes, examples): a run
    trained again from the start reports each byte and example once in all."""
    if progress is None:
        return None
    owed = list(reported)

    def report(n_bytes: int, n_examples: int) -> None:
        paid = min(owed[0], n_bytes), min(owed[1], n_examples)
        owed[0] -= paid[0]
        owed[1] -= paid[1]
        if n_bytes > paid[0] or n_examples > paid[1]:
            progress(n_bytes - paid[0], n_examples - paid[1])

    return report


class _NewLabel(Exception):
    """A chunk holds a label the classes learnt so far lack (see :class:`_Unknowns`)."""


class _Unknowns:
    """What :func:`fit_stream` learns while the first epoch trains, instead of a first
    pass over the file.

    ``labels``: the classes are the first chunk's labels; a later chunk with another
    label raises :class:`_NewLabel` (the run is then undone, and trained again with
    every label found by a scan), so the model is always that of the declared classes.
    A first chunk of fewer than two labels raises it too: a binary model needs both.

    ``width``: svmlight's width and index base. The chunks are read 0-based at their
    own width, the state widened as indices arrive (``train_batch``'s ``grow``, which
    makes room for twice the rows at a time), and narrowed to the width at the end. After
    the epoch the base is decided by scikit-learn's rule (1-based unless some index is
    0): 1-based, the state's row 0, which nothing updated, is dropped. Either way the
    state is, bit for bit, the one trained at the declared width and base; later epochs
    read the text with them declared, or the cached chunks rebased to them.
    """

    def __init__(self, name: str, options: dict[str, Any], *, labels: bool, width: bool) -> None:
        # options: the reading options of later epochs, which settle completes
        self.name, self.options, self.labels, self.width = name, options, labels, width
        self.max_index, self.has_zero = -1, False
        self.shift = 0  # subtracted from the cached chunks' indices once the base is known
        self.n_features: int | None = None

    def see(self, X: Any, y: np.ndarray, classes: np.ndarray | None) -> np.ndarray | None:
        """Note a chunk of the first epoch; the classes to train it with."""
        if self.width and X.nnz:
            self.max_index = max(self.max_index, X.shape[1] - 1)
            self.has_zero = self.has_zero or int(X.indices.min()) == 0
        if not self.labels:
            return classes
        if classes is None:
            classes = np.unique(y)
            if classes.shape[0] < 2:
                raise _NewLabel
        elif not np.isin(y, classes).all():
            raise _NewLabel
        return classes

    def check_memory(self, engine: Any, classes: np.ndarray) -> None:
        """Refuse, as a run with the width declared would, a dense state too large for
        the memory limit at the width a scan would find so far."""
        n_features = max(self.max_index + (1 if self.has_zero else 0), 1)
        engine.check_state_shape(n_features, 1 if classes.shape[0] == 2 else classes.shape[0])

    def settle(self, engine: Any) -> None:
        """After the first epoch: the state at the width and base a scan would have found."""
        self.labels = False  # every label has been seen
        estimator = engine.estimator
        state = estimator._lifecycle  # a state, or one in the rows the data reaches
        if state is None:  # no example (what scan says of such a file)
            raise DataFormatError(self.name, "no data")
        if not self.width:
            return
        self.width = False
        # scikit-learn's rule (as scan): 1-based unless some index is 0.
        n_features = max(self.max_index + (1 if self.has_zero else 0), 1)
        raw = n_features + (0 if self.has_zero else 1)  # the rows of the 0-based reading
        width = estimator.n_features_in_  # the state's, in the 0-based reading
        dense = estimator._state is state  # (else kept in the rows the data reaches)
        if width < raw:
            if dense:
                engine.check_state_memory(raw)
            state = state.widened(raw + 1)
        elif width > raw:  # the room train_batch made in advance (a dense state)
            state = state.narrowed(raw + 1)
        if not self.has_zero:
            state = state.without_first_row()
            self.shift = 1
        estimator._lifecycle = state
        estimator.n_features_in_ = self.n_features = n_features
        self.options.update(n_features=n_features, zero_based=self.has_zero)

    def rebased(self, chunks: Iterator[Any]) -> Iterator[Any]:
        """The cached chunks of the first epoch (read 0-based, each at its own width) at
        the width and base :meth:`settle` decided."""
        for X, y, w, bytes_read in chunks:
            if self.n_features is not None and sp.issparse(X):
                rebased = sp.csr_matrix((X.shape[0], self.n_features), dtype=X.dtype)
                rebased.data, rebased.indptr = X.data, X.indptr
                rebased.indices = X.indices - self.shift if self.shift else X.indices
                rebased.has_sorted_indices = True  # as the reader made them
                X = rebased
            yield X, y, w, bytes_read


@contextlib.contextmanager
def _all_or_nothing(estimator: Any) -> Iterator[None]:
    """A stream that fails leaves an estimator of this package as it was before it
    (:meth:`~perceptrons._base.Trainable._all_or_nothing`; what it trains in place kept
    whole, since the rows the chunks reach are not known in advance); another
    estimator as its own ``partial_fit`` leaves it."""
    from perceptrons._base import Trainable  # imported with the estimator

    if not isinstance(estimator, Trainable):
        yield
        return
    with estimator._all_or_nothing() as rollback:
        rollback.keep(estimator._saved_model())
        yield


def _describe(record: dict[str, Any]) -> str:
    return ", ".join(f"{key} {value}" for key, value in record.items() if key != "epoch")


class _ChunkEpochs:
    """Streaming's epochs (:class:`perceptrons._engine.Epochs`) for any incremental
    classifier: one ``partial_fit`` per chunk."""

    validation: tuple[Any, ...] | None = None
    # Whether the estimator's history_ gets one record per pass (fit_stream appends it)
    # rather than one per partial_fit (a chunk's record is then taken back out).
    per_pass = False
    weighted = False  # whether a chunk carried importance weights
    unknowns: _Unknowns | None = None  # what the first epoch learns (engines only)

    def __init__(self, estimator, batches, name: str, labels, progress) -> None:
        self.estimator, self.batches, self.name = estimator, batches, name
        self.labels, self.progress = labels, progress
        self.chunk_record: dict[str, Any] = {}

    def run_epoch(self, epoch: int) -> dict[str, Any]:
        started, examples, last_bytes, statistic = time.perf_counter(), 0, 0, 0.0
        mistakes = 0
        self._begin_epoch()
        for X, y, w, bytes_read in self.batches():
            if self.unknowns is not None:
                self.labels = self.unknowns.see(X, y, self.labels)
            self.labels = _as_label_type(self.labels, y, self.name)
            self.weighted |= w is not None
            value, trained, wrong = self._train(X, y, w)
            statistic += value
            examples += trained
            mistakes += wrong
            if self.progress is not None:
                self.progress(bytes_read - last_bytes, len(y))
            last_bytes = bytes_read
        record = self._record(statistic, examples, mistakes)
        if self.per_pass:  # what else the last chunk's record says (support_vectors...)
            record.update({k: v for k, v in self.chunk_record.items() if k not in record})
            record.pop("epoch", None)
        record["seconds"] = round(time.perf_counter() - started, 3)
        return record

    def _begin_epoch(self) -> None:
        """What a new pass over the file resets (nothing here)."""

    def _train(self, X, y, w) -> tuple[float, int, int]:
        """Train on a chunk: the statistic of its epoch record, examples trained on,
        mistakes."""
        weights = {} if w is None else {"sample_weight": w}
        self.estimator.partial_fit(X, y, classes=self.labels, **weights)
        history = getattr(self.estimator, "history_", None)
        if not history:
            return 0.0, len(y), 0
        if self.per_pass:
            self.chunk_record = history.pop()
        record = self.chunk_record if self.per_pass else history[-1]
        mistakes = int(record.get("mistakes", 0))
        return float(mistakes), len(y), mistakes

    def held_out_set(self) -> tuple[Any, ...] | None:
        """The held-out examples early stopping scores (None: none)."""
        return self.validation

    def _record(self, statistic: float, examples: int, mistakes: int) -> dict[str, Any]:
        return {"mistakes": mistakes, "examples": examples}

    def is_finite(self) -> bool:
        return True  # partial_fit checks its own model

    def publish(self, n_iter: int) -> None:
        pass  # partial_fit publishes after every chunk

    def score(self, validation: tuple[Any, ...]) -> float:
        return float(self.estimator.score(*validation))


class _EngineEpochs(_ChunkEpochs):
    """Streaming's epochs for an estimator of the package: each chunk one compiled
    epoch of its engine over the chunk's examples, shuffled by the estimator's own
    generator (the model is, bit for bit, that of one ``partial_fit`` per chunk),
    ``history_`` one record per pass over the file. With ``early_stopping`` and a
    ``validation_fraction`` that share of each chunk is held out -- the same examples
    every epoch, drawn from ``random_state`` and the chunk's position -- gathered in
    memory during the first epoch, and scored after every epoch."""

    def __init__(
        self, estimator, engine, batches, name, labels, progress, held_out: bool, random_state
    ) -> None:
        super().__init__(estimator, batches, name, labels, progress)
        self.engine = engine
        self.per_pass = True
        self.held_out = held_out
        self.key = check_random_state(random_state).randint(np.iinfo(np.int32).max)
        self.parts: list[tuple[Any, np.ndarray, np.ndarray | None]] | None = None
        self.chunk = 0
        self.epoch = 1
        # The chunks come from a reader that checked their rows (the compiled svmlight
        # reader, or the parsed cache of its chunks): later chunks skip the data checks
        # of partial_fit that would repeat its own.
        self.checked = False

    def _begin_epoch(self) -> None:
        self.chunk = 0
        if self.held_out and self.parts is None:
            self.parts = []  # gathered during the first epoch

    def _train(self, X, y, w) -> tuple[float, int, int]:
        if self.held_out:
            fraction = self.engine.validation_fraction
            draw = np.random.RandomState(
                np.random.SeedSequence([self.key, self.chunk]).generate_state(1)
            )
            keep = draw.random_sample(len(y)) >= fraction
            self.chunk += 1
            if self.parts is not None and self.validation is None:
                held = ~keep
                self.parts.append((X[held], y[held], None if w is None else w[held]))
            X, y, w = X[keep], y[keep], None if w is None else w[keep]
            if len(y) == 0:
                return 0.0, 0, 0
        unknowns = self.unknowns
        grow = unknowns is not None and unknowns.width
        try:
            trained = self.engine.train_batch(X, y, self.labels, w, checked=self.checked, grow=grow)
        except MemoryError:
            if unknowns is not None and grow:
                # In the words of the run with the width declared when it refuses too
                # (the 0-based reading holds a row more while the base is not known).
                unknowns.check_memory(self.engine, self.labels)
            raise
        if self.progress is not None:
            # The model is current when progress is called, as after a partial_fit.
            self.engine.publish(self.epoch - 1)
        return trained

    def run_epoch(self, epoch: int) -> dict[str, Any]:
        self.epoch = epoch
        record = super().run_epoch(epoch)
        if self.unknowns is not None:
            self.unknowns.settle(self.engine)
        if self.held_out and self.validation is None and self.parts is not None:
            self.validation = _held_out_set(self.parts)
        return record

    def _record(self, statistic: float, examples: int, mistakes: int) -> dict[str, Any]:
        record = self.engine.epoch_record(statistic, examples, mistakes)
        n_nonzero = self.engine.n_nonzero()
        if n_nonzero is not None:
            record["n_nonzero"] = n_nonzero
        return record

    def is_finite(self) -> bool:
        return self.engine.is_finite()

    def publish(self, n_iter: int) -> None:
        self.engine.publish(n_iter)


def _held_out_set(parts) -> tuple[Any, ...]:
    """The held-out examples of every chunk, stacked."""
    X = _stack([part[0] for part in parts])
    y = np.concatenate([part[1] for part in parts])
    if all(part[2] is None for part in parts):
        return X, y
    weights = [np.ones(len(part[1])) if part[2] is None else part[2] for part in parts]
    return X, y, np.concatenate(weights)


def _as_label_type(classes: np.ndarray, y: np.ndarray, name: str) -> np.ndarray:
    """Classes given as text (``--classes -1,1``) in the type of the file's labels."""
    if classes.dtype.kind not in "US" or y.dtype.kind not in "iuf":
        return classes
    try:
        return classes.astype(np.float64).astype(y.dtype)
    except ValueError:
        raise DataFormatError(
            name, f"the labels are numbers, but the classes given are {classes.tolist()!r}"
        ) from None


def _text_batches(name, fmt, options, featurizer, pairs: _PairsReader | None, prefetch: bool):
    """(X, y, sample weights or None, bytes read) per chunk of the file, in file order:
    through ``pairs``, the compiled hashing reader, when there is one."""
    if pairs is not None:
        return _pairs_batches(name, options, featurizer, pairs)
    return _chunk_batches(name, fmt, options, featurizer, prefetch)


def _weighed(batches, weigh: Callable[[Any], Any] | None):
    """``batches`` with their features weighed by ``weigh`` (None: as they are)."""
    if weigh is None:
        yield from batches
        return
    for X, y, w, bytes_read in batches:
        yield weigh(X), y, w, bytes_read


def _count_documents(
    name: str,
    fmt: str,
    options: dict[str, Any],
    counter: TextFeaturizer,
    pairs: _PairsReader | None,
    parsed: ChunkCache | None,
    progress: Callable[[int, int], object] | None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """The parse pass before training with a tf-idf featurizer: the file's term counts
    (``counter``'s features, which it fits as it reads) written to the parse cache
    ``parsed``, and what the idf needs counted on the way. Returns the classes (sorted,
    as :func:`scan` finds them), how many documents hold each column, and the number
    of documents.

    Why the features are those of the whole file: every step after the counts --
    sublinear tf, the idf, the row norms -- is a row's own once the idf is known, and
    the idf is the document frequencies of all the rows, summed here chunk by chunk in
    integers (exact in any order).
    """
    counted = np.zeros(counter.n_features, dtype=np.int64)
    classes: set = set()
    n_documents = last_bytes = 0
    chunks = _text_batches(name, fmt, options, counter, pairs, True)
    if parsed is not None:
        chunks = parsed.recording(chunks)
    for X, y, _, bytes_read in chunks:
        # The count of the columns up to the largest one here (canonical rows: a
        # column at most once a row), not a bincount as wide as the hashing space.
        columns = np.bincount(X.indices)
        counted[: len(columns)] += columns
        classes.update(np.unique(y).tolist())
        n_documents += X.shape[0]
        if progress is not None:
            progress(bytes_read - last_bytes, 0)
        last_bytes = bytes_read
    if n_documents == 0:
        raise DataFormatError(name, "no data")
    return np.array(sorted(classes)), counted, n_documents


def _chunk_batches(name, fmt, options, featurizer, prefetch: bool):
    """(X, y, sample weights or None, bytes read) per chunk of the file, in file order."""
    if prefetch and fmt == "svmlight":
        size, rest = options["chunk_size"], {k: v for k, v in options.items() if k != "chunk_size"}

        def svmlight() -> Iterator[Chunk]:
            # A ring of buffers, one for each chunk that can be alive at once: the one
            # trained on, the queued ones, the one being parsed.
            return _svmlight_chunks(name, size, ring=_QUEUE_DEPTH + 2, labels=True, **rest)

        chunks: Iterator[Chunk] = _prefetched(svmlight, _QUEUE_DEPTH)
    elif prefetch:  # a reader thread parses ahead

        def source() -> Iterator[Chunk]:
            return iter_chunks(name, fmt, **options)

        chunks = _prefetched(source, _QUEUE_DEPTH)
    else:  # a shuffling window holds many chunks at once: each has its own arrays
        chunks = iter_chunks(name, fmt, **options)
    for chunk in chunks:
        data = chunk.data
        yield _features(data, featurizer), data.y, data.sample_weight, chunk.bytes_read


def _windows(batches, window: int, size: int, rng):
    """``batches`` shuffled within windows of ``window`` of them, cut into slices of
    ``size`` examples."""
    batches = iter(batches)
    while True:
        group = list(itertools.islice(batches, window))
        if not group:
            return
        X = _stack([batch[0] for batch in group])
        y = np.concatenate([batch[1] for batch in group])
        w = None
        if any(batch[2] is not None for batch in group):
            w = np.concatenate(
                [np.ones(len(batch[1])) if batch[2] is None else batch[2] for batch in group]
            )
        order = rng.permutation(len(y))
        for start in range(0, len(y), size):
            rows = order[start : start + size]
            yield X[rows], y[rows], None if w is None else w[rows], group[-1][3]
