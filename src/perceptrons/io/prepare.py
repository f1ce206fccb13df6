"""Data files fitted to models: read, featurize, check and align a data set for a model.

A model of this package is an estimator that reads numeric features, or a text pipeline
``make_pipeline(TextFeaturizer(...), estimator)`` that reads raw documents (what
:func:`perceptrons.save` writes).  The functions here connect a
:class:`~perceptrons.io.formats.LabeledData` read by
:func:`~perceptrons.io.formats.read_data` to such a model, and report a file that does
not fit it with a one-line :class:`~perceptrons.io.formats.DataFormatError` naming the
file, the way the ``perceptrons`` command does:

- :func:`split_model`: the featurizer (or ``None``) and the estimator of a model;
- :func:`read_for_model`: read a file for a trained model (numeric files get its width);
- :func:`model_inputs`: what the model's ``predict`` takes from a data set;
- :func:`model_labels`: a data set's labels as the model's classes, all of them known
  (:func:`known_labels` and :func:`unseen_labels_error` for labels a chunk at a time);
- :func:`read_featurized`: a ``vw`` or ``counts`` file read and featurized in one pass;
- :func:`score_in_chunks`: a file applied to a model a chunk at a time, through the
  compiled readers and a reader thread, as :func:`read_for_model` would read it whole;
- :func:`training_features`: feature matrices of a training set and a development set;
- :func:`pad_columns`: a sparse matrix widened to a given number of columns.

Over 600 lines: a file read for a model whole and a chunk at a time share the rules of
that reading (the model's width, its labels, the featurizer's weighting), kept in one
place so that both give the same rows and errors.

Examples
--------
>>> import io
>>> from perceptrons import Perceptron
>>> from perceptrons.io.formats import read_data
>>> train = read_data("-", stdin=io.StringIO("1 1:1 2:1\\n-1 3:1\\n"))
>>> X, _ = training_features(train)
>>> model = Perceptron(shuffle=False).fit(X, train.y)
>>> test = read_data("-", stdin=io.StringIO("1 2:2\\n"))  # 2 features: svmlight lists
>>> X_test = model_inputs(model, test)  # those it uses; widened to the model's 3
>>> X_test.shape, model.predict(X_test).tolist(), model_labels(model, test).tolist()
((1, 3), [1], [1])
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Generator, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from perceptrons.io.formats import (
    WEIGHTED_TEXT_FORMATS,
    DataFormatError,
    LabeledData,
    detect_format,
    read_data,
)

if TYPE_CHECKING:
    from perceptrons.text.featurizer import TextFeaturizer

__all__ = [
    "known_labels",
    "model_inputs",
    "model_labels",
    "pad_columns",
    "read_featurized",
    "read_for_model",
    "score_in_chunks",
    "split_model",
    "training_features",
    "unseen_labels_error",
]


def split_model(model: Any) -> tuple[TextFeaturizer | None, Any]:
    """The featurizer and the estimator of a model.

    Parameters
    ----------
    model : estimator or Pipeline
        A bare estimator, or a pipeline ``[featurizer, estimator]``.

    Returns
    -------
    featurizer : TextFeaturizer or None
        The pipeline's first step; ``None`` for a bare estimator.
    estimator : estimator
        The pipeline's last step, or ``model`` itself.
    """
    if hasattr(model, "steps"):
        return model.steps[0][1], model.steps[-1][1]
    return None, model


def read_for_model(
    path: str | os.PathLike[str], model: Any, *, labels: bool | None = None, **options: Any
) -> LabeledData:
    """Read a data file to evaluate or apply a trained model on.

    :func:`~perceptrons.io.formats.read_data`, with ``n_features`` set to the width of a
    model that reads numeric features: an svmlight file then gets exactly the model's
    width (a file lists only the features it uses) and a larger index is a bad line;
    a CSV or IDX file of another width is an error.

    Parameters
    ----------
    path : str or os.PathLike
        The file, or ``"-"`` for standard input.
    model : estimator or Pipeline
        A fitted model (see :func:`split_model`).
    labels : bool or None, default=None
        As for :func:`~perceptrons.io.formats.read_data`: ``True`` to evaluate (labels
        required), ``None`` to predict (labels read if the file has them).
    **options
        Other keyword arguments of :func:`~perceptrons.io.formats.read_data`
        (``format``, ``skip_bad_lines``, ``label_column``, ...), but ``n_features``.

    Returns
    -------
    LabeledData
        The file's rows, at the model's width.

    Raises
    ------
    DataFormatError
        Malformed content, or a numeric file wider than the model.
    OSError
        The file cannot be opened.
    """
    featurizer, estimator = split_model(model)
    n_features = None if featurizer is not None else estimator.n_features_in_
    return read_data(path, labels=labels, n_features=n_features, **options)


def read_featurized(
    path: str | os.PathLike[str],
    featurizer: TextFeaturizer,
    *,
    fit: bool,
    format: str = "auto",
    skip_bad_lines: bool = False,
) -> LabeledData | None:
    """A labelled ``vw`` or ``counts`` file read and featurized in one pass, by the
    compiled hashing reader (:mod:`perceptrons._kernels.hashing`).

    The same result, bit for bit, as :func:`~perceptrons.io.formats.read_data` (labels
    required) then ``featurizer.fit_transform`` (``fit``) or ``featurizer.transform``
    of the texts, with the same errors, without forming the texts.

    Parameters
    ----------
    path : str or os.PathLike
        The file (not standard input).
    featurizer : TextFeaturizer
        A hashing featurizer with ``tokenizer="pairs"`` (any weighting: tf-idf is fitted
        on the counts the reader makes); fitted in place when ``fit``, else fitted
        already.
    fit : bool
        Fit the featurizer on the file (training data) or only transform.
    format : str, default="auto"
        The file's format.
    skip_bad_lines : bool, default=False
        As for :func:`~perceptrons.io.formats.read_data`.

    Returns
    -------
    LabeledData or None
        ``X`` holds the features and ``texts`` is ``None``; ``None`` when this path
        does not apply (another format, standard input, another featurizer), for the
        caller to read the file with :func:`~perceptrons.io.formats.read_data`.
    """
    from perceptrons.io._chunks import read_pairs

    name = os.fspath(path)
    if name == "-" or not _compiled_pairs(featurizer, fit):
        return None
    fmt = detect_format(name) if format == "auto" else format
    if fmt not in WEIGHTED_TEXT_FORMATS:
        return None
    if featurizer._make_weighting() is None:  # counts or presence: the reader's output
        return read_pairs(name, fmt, featurizer, fit=fit, skip_bad_lines=skip_bad_lines)
    # tf-idf or sublinear counts: the reader counts (a featurizer of counts with the same
    # hashing and names), then the featurizer weighs, fitting its idf on the counts of
    # the training file as its fit_transform does on the counts of the texts.
    counter = featurizer._counting()
    if not fit:
        counter.fit([""])  # hashing learns nothing but names, which a transform needs not
    data = read_pairs(name, fmt, counter, fit=fit, skip_bad_lines=skip_bad_lines)
    if not fit:
        return replace(data, X=featurizer._weigh(data.X))
    X = featurizer._fit_weighting(data.X, featurizer._make_vectorizer())
    featurizer._hashed_names = counter._hashed_names
    return replace(data, X=X)


def _compiled_pairs(featurizer: Any, fit: bool) -> bool:
    """Whether :func:`read_featurized` can read for ``featurizer``."""
    return (
        getattr(featurizer, "tokenizer", None) == "pairs"
        and featurizer.vocabulary == "hashing"
        and (fit or hasattr(featurizer, "n_features_out_"))
    )


def model_inputs(model: Any, data: LabeledData) -> list[str] | np.ndarray | sp.csr_matrix:
    """What the model's ``predict`` takes from a data set: raw documents or features.

    Parameters
    ----------
    model : estimator or Pipeline
        A fitted model (see :func:`split_model`).
    data : LabeledData
        The data set, e.g. from :func:`read_for_model`.

    Returns
    -------
    list of str, ndarray or scipy.sparse.csr_matrix
        ``data.texts`` for a text pipeline; else ``data.X``, a sparse matrix narrower
        than the model widened by :func:`pad_columns`.

    Raises
    ------
    DataFormatError
        The model reads raw text and the file holds numeric features, or the other way
        round, or the features are not as many as the model's.
    """
    featurizer, estimator = split_model(model)
    if featurizer is not None:
        if data.texts is None:
            raise DataFormatError(
                data.source,
                f"the model reads raw text, but this file is {data.format} "
                "(numeric features); pass a text file or --format",
            )
        return data.texts
    if data.X is None:
        raise DataFormatError(
            data.source,
            "the model reads numeric features, but this file is raw text "
            f"({data.format}); pass a file in the training data's format",
        )
    X = data.X
    n_features = estimator.n_features_in_
    if sp.issparse(X) and X.shape[1] < n_features:
        X = pad_columns(X, n_features)
    if X.shape[1] != n_features:
        raise DataFormatError(
            data.source,
            f"{X.shape[1]} features, but the model was trained on {n_features}: "
            "it was trained on other features",
        )
    return X


def model_labels(model: Any, data: LabeledData) -> np.ndarray:
    """A data set's labels as the model's classes, checked to be all known to it.

    A file's labels are text or numbers, as the file gives them; a model's classes have
    the type of its training labels.  Labels are matched by their text (``"1"`` is the
    class ``1``).

    Parameters
    ----------
    model : estimator or Pipeline
        A fitted classifier (see :func:`split_model`).
    data : LabeledData
        A labelled data set.

    Returns
    -------
    ndarray of shape (n_samples,)
        The labels, in the dtype of the model's ``classes_``.

    Raises
    ------
    DataFormatError
        The data set has no labels, or labels never seen in training.
    """
    if data.y is None:
        raise DataFormatError(data.source, "the file has no labels")
    y, unseen = known_labels(model, data.y)
    if unseen:
        raise unseen_labels_error(model, data.source, unseen)
    assert y is not None  # every label known
    return y


def known_labels(model: Any, y: np.ndarray) -> tuple[np.ndarray | None, set[str]]:
    """Labels as the model's classes, matched by their text (:func:`model_labels`), and
    the texts of those never seen in training.

    Parameters
    ----------
    model : estimator or Pipeline
        A fitted classifier (see :func:`split_model`).
    y : ndarray of shape (n_samples,)
        Labels as a file gives them.

    Returns
    -------
    labels : ndarray of shape (n_samples,) or None
        In the dtype of the model's ``classes_``; ``None`` when some are unseen.
    unseen : set of str
        The texts of the labels the model does not know.
    """
    _, estimator = split_model(model)
    by_text = {str(label): label for label in estimator.classes_}
    # Each distinct label's text once (np.unique's items are y's own scalars).
    values, inverse = np.unique(np.asarray(y), return_inverse=True)
    texts = [str(value) for value in values]
    unseen = set(texts) - by_text.keys()
    if unseen:
        return None, unseen
    classes = np.array([by_text[text] for text in texts], dtype=estimator.classes_.dtype)
    return classes[inverse.reshape(-1)], unseen


def unseen_labels_error(model: Any, source: str, unseen: set[str]) -> DataFormatError:
    """The error :func:`model_labels` raises for labels never seen in training."""
    _, estimator = split_model(model)
    known = sorted({str(label) for label in estimator.classes_})
    shown = ", ".join(sorted(unseen)[:5]) + (" ..." if len(unseen) > 5 else "")
    return DataFormatError(
        source,
        f"label(s) never seen in training: {shown} "
        f"(the model knows {len(known)}: {', '.join(known[:10])})",
    )


def training_features(
    train: LabeledData,
    dev: LabeledData | None = None,
    *,
    featurizer: TextFeaturizer | None = None,
) -> tuple[Any, Any]:
    """The feature matrices of a training set and of an optional development set.

    Raw documents are featurized by ``featurizer``, fitted on the training documents
    only; numeric features are used as read, the development set's widened to the
    training set's width (an svmlight file lists only the features it uses).

    Parameters
    ----------
    train : LabeledData
        The training set; a ``vw`` or ``counts`` file read by :func:`read_featurized`
        holds its features already (``featurizer`` fitted by it).
    dev : LabeledData, optional
        Development data, in the training set's kind (text or numeric), read by
        :func:`read_featurized` with the fitted featurizer or not.
    featurizer : TextFeaturizer, optional
        Required for text, fitted in place; ignored for numeric features.  The
        ``name:value`` documents of :data:`~perceptrons.io.formats.WEIGHTED_TEXT_FORMATS`
        (``vw``, ``counts``) need ``tokenizer="pairs"``.

    Returns
    -------
    X : ndarray or scipy.sparse.csr_matrix
        The training features.
    X_dev : ndarray, scipy.sparse.csr_matrix or None
        The development features, as many columns as ``X``; ``None`` without ``dev``.

    Raises
    ------
    DataFormatError
        The development set is not of the training set's kind, or has more features.
    ValueError
        Text without a featurizer, or ``name:value`` documents with a featurizer whose
        tokenizer is not ``"pairs"``.
    """
    if train.texts is None and train.format in WEIGHTED_TEXT_FORMATS and train.X is not None:
        # Featurized as read (read_featurized), by the fitted featurizer.
        if dev is None or (dev.texts is None and dev.format in WEIGHTED_TEXT_FORMATS):
            return train.X, None if dev is None else dev.X
        if dev.texts is None or featurizer is None:
            raise DataFormatError(dev.source, f"its features do not match {train.source}'s")
        return train.X, featurizer.transform(dev.texts)
    if train.texts is not None:
        if featurizer is None:
            raise ValueError(f"{train.source} is text ({train.format}): pass a featurizer")
        if train.format in WEIGHTED_TEXT_FORMATS and featurizer.tokenizer != "pairs":
            raise ValueError(
                f"{train.source} is {train.format}, documents of name:value tokens: pass a "
                "TextFeaturizer with tokenizer='pairs'"
            )
        X = featurizer.fit_transform(train.texts)
        if dev is None:
            return X, None
        if dev.texts is None:
            raise DataFormatError(dev.source, f"its features do not match {train.source}'s")
        return X, featurizer.transform(dev.texts)
    X = train.X
    if X is None:
        raise ValueError(f"{train.source} holds neither documents nor features")
    if dev is None:
        return X, None
    X_dev = dev.X
    width = X.shape[1]
    if X_dev is None or not (
        X_dev.shape[1] == width or (sp.issparse(X_dev) and X_dev.shape[1] < width)
    ):
        raise DataFormatError(dev.source, f"its features do not match {train.source}'s")
    return X, pad_columns(X_dev, width) if X_dev.shape[1] < width else X_dev


def pad_columns(X: sp.spmatrix | sp.sparray, n_columns: int) -> sp.csr_matrix:
    """A sparse matrix widened to ``n_columns`` columns (the new ones all zeros).

    svmlight files list only the features they use, so a development or test file may
    read narrower than the training file.

    Parameters
    ----------
    X : scipy sparse matrix of shape (n_samples, n_features)
        Converted to CSR; the data are shared, not copied, when ``X`` is already CSR.
    n_columns : int
        At least ``n_features``.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_samples, n_columns)

    Raises
    ------
    ValueError
        ``X`` is not sparse, or wider than ``n_columns``.
    """
    if not sp.issparse(X):
        raise ValueError(f"pad_columns needs a sparse matrix, got {type(X).__name__}")
    if X.shape[1] > n_columns:
        raise ValueError(f"cannot pad {X.shape[1]} columns to {n_columns}")
    X = sp.csr_matrix(X)
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_columns))


#: Rows a chunk of :func:`score_in_chunks` holds: large enough that a chunk's fixed
#: costs (a kernel call, the thread's handoff) are small beside its rows.
SCORE_CHUNK_ROWS = 10_000


#: The text formats of one labelled document a line, read a chunk of lines at a time.
_LABELLED_LINES = ("fasttext", "tsv", "sentiment")


class _ReadWhole(Exception):
    """The chunks cannot tell what the whole file read at once gives (an error to word,
    a line skipped, unlabeled lines): :func:`score_in_chunks` leaves it to the caller."""


def score_in_chunks(
    path: str | os.PathLike[str],
    model: Any,
    consume: Callable[[Iterator[tuple[Any, np.ndarray]]], object],
    *,
    format: str = "auto",
    chunk_size: int = SCORE_CHUNK_ROWS,
) -> bool:
    """Apply ``consume`` to a file read a chunk at a time by the compiled readers.

    ``consume`` gets an iterator of ``(X, y)``: ``X`` what the model's estimator
    (:func:`split_model`) takes for the chunk's rows, ``y`` their labels as the file
    gives them, the chunks in file order, parsed by a reader thread one or two chunks
    ahead of ``consume`` (the parsers release the GIL), so memory holds a few chunks
    whatever the file's size. The rows, features and labels are those
    :func:`read_for_model` then :func:`model_inputs` give for the whole file, bit for
    bit: an svmlight file for a model of numeric features (at the model's width, an
    index past it a bad line), a ``vw`` or ``counts`` file for a text pipeline whose
    featurizer hashes ``name:value`` pairs (``tokenizer="pairs"``, any weighting), and
    ``fasttext``, ``tsv`` and ``sentiment`` lines for a text pipeline (each chunk's
    documents transformed by its featurizer in the reader thread).

    Where the chunks cannot tell the whole file's reading, this returns ``False`` and
    the caller reads the file whole (:func:`read_for_model`), which words the error or
    reads the file as it must: another format or model, standard input, a bad line
    (which the caller may skip: its ``skip_bad_lines``), a file without labels or
    without rows. ``consume`` may then have
    been called and must start afresh on its next call: it is also called again, from
    the start, for an svmlight file whose indices turn out 0-based (the whole file's
    base, scikit-learn's rule: 0-based when some index is 0, is known only once read).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    model : estimator or Pipeline
        A fitted model (see :func:`split_model`).
    consume : callable
        Called with the chunks; what it raises is raised here.
    format : str, default="auto"
        The file's format.
    chunk_size : int, default=SCORE_CHUNK_ROWS
        Lines per chunk.

    Returns
    -------
    bool
        Whether ``consume`` went over the whole file.
    """
    name = os.fspath(path)
    if name == "-":
        return False
    fmt = detect_format(name) if format == "auto" else format
    featurizer, estimator = split_model(model)
    if featurizer is None and fmt == "svmlight":
        zero_based: bool | str = "auto"
        while True:
            chunks = _svmlight_model_chunks(name, estimator.n_features_in_, chunk_size, zero_based)
            done = _consume_all(chunks, consume)
            if done != "zero-based":
                return done == "done"
            zero_based = True  # some index 0: the whole file is 0-based, read again so
    if featurizer is not None and fmt in WEIGHTED_TEXT_FORMATS:
        if not _compiled_pairs(featurizer, fit=False):
            return False
        batches = _pairs_model_chunks(name, fmt, featurizer, chunk_size)
        return _consume_all(batches, consume) == "done"
    if featurizer is not None and fmt in _LABELLED_LINES:
        batches = _text_model_chunks(name, fmt, featurizer, chunk_size)
        return _consume_all(batches, consume) == "done"
    return False


def _consume_all(chunks: Generator[tuple[Any, np.ndarray, bool]], consume) -> str:
    """``consume`` over ``chunks`` (``(X, y, 0-based)``): ``"done"``, ``"whole"`` (the
    caller reads the file whole) or ``"zero-based"`` (a chunk read by scikit-learn's
    rule had an index 0: again, 0-based)."""
    seen: dict[str, Any] = {"rows": 0, "zero": False, "kind": None}

    def batches() -> Iterator[tuple[Any, np.ndarray]]:
        try:
            for X, y, zero in chunks:
                if zero:
                    seen["zero"] = True
                    raise _ReadWhole
                # Numeric labels are integers when all of the file's are: a chunk of
                # integers beside one of fractions would be read as fractions whole.
                if seen["kind"] not in (None, y.dtype.kind):
                    raise _ReadWhole
                seen["kind"] = y.dtype.kind
                seen["rows"] += len(y)
                yield X, y
        except DataFormatError:  # worded by the whole file's reading, as it must be
            raise _ReadWhole from None

    # Closed on the way out, whatever ends consume: the reader thread stops with it.
    with contextlib.closing(chunks):
        try:
            consume(batches())
        except _ReadWhole:
            return "zero-based" if seen["zero"] else "whole"
    return "done" if seen["rows"] else "whole"  # no rows: read_data words why


def _svmlight_model_chunks(
    name: str, width: int, chunk_size: int, zero_based: bool | str
) -> Generator[tuple[Any, np.ndarray, bool]]:
    """An svmlight file's chunks at the model's ``width`` through the compiled reader
    in a reader thread (a ring of buffers: a chunk's arrays hold until ``consume``
    asks for the one after the next); the third item: whether a chunk read
    ``zero_based="auto"`` found an index 0."""
    from perceptrons.io._chunks import _QUEUE_DEPTH, _prefetched, _svmlight_chunks

    def source():
        return _svmlight_chunks(
            name,
            chunk_size,
            ring=_QUEUE_DEPTH + 2,
            labels=True,
            n_features=width,
            zero_based=zero_based,
            skip_bad_lines=False,
        )

    for chunk in _prefetched(source, _QUEUE_DEPTH):
        data = chunk.data
        assert data.X is not None and data.y is not None  # svmlight, labels required
        zero = zero_based == "auto" and bool(data.zero_based) and data.X.nnz > 0
        yield data.X, data.y, zero


def _pairs_model_chunks(
    name: str, fmt: str, featurizer: TextFeaturizer, chunk_size: int
) -> Generator[tuple[Any, np.ndarray, bool]]:
    """A ``vw`` or ``counts`` file's chunks through the compiled hashing reader in a
    reader thread, featurized as ``featurizer.transform`` of their texts would be (the
    weighting as :func:`read_featurized` applies it)."""
    from perceptrons.io._chunks import _pairs_features, _pairs_read, _PairsReader

    counter = featurizer
    if featurizer._make_weighting() is not None:  # the reader counts, the featurizer weighs
        counter = type(featurizer)(**{**featurizer.get_params(), "weighting": "tf"})
        counter.set_params(sublinear_tf=False)
        counter.fit([""])
    reader = _PairsReader(counter, fmt, names=False)
    for batch in _pairs_read(name, reader, chunk_size, skip_bad_lines=False):
        X, y, _ = _pairs_features(batch, counter, fit=False)
        assert y is not None  # labels required
        yield (X if counter is featurizer else featurizer._weigh(X)), y, False


def _text_model_chunks(
    name: str, fmt: str, featurizer: TextFeaturizer, chunk_size: int
) -> Generator[tuple[Any, np.ndarray, bool]]:
    """Chunks of labelled documents, one a line, through :func:`read_data` a block of
    lines at a time, transformed by the fitted ``featurizer`` (row by row: a chunk's
    rows are the whole file's), both in a reader thread."""
    from perceptrons.io._chunks import _QUEUE_DEPTH, _line_chunks, _prefetched

    def source() -> Iterator[tuple[Any, Any]]:
        options = {"labels": True, "n_features": None, "zero_based": "auto"}
        for chunk in _line_chunks(name, fmt, chunk_size, skip_bad_lines=False, **options):
            assert chunk.data.texts is not None  # a text format
            yield featurizer.transform(chunk.data.texts), chunk.data.y

    for X, y in _prefetched(source, _QUEUE_DEPTH):
        yield X, y, False
