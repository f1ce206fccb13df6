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
- :func:`model_labels`: a data set's labels as the model's classes, all of them known;
- :func:`read_featurized`: a ``vw`` or ``counts`` file read and featurized in one pass;
- :func:`training_features`: feature matrices of a training set and a development set;
- :func:`pad_columns`: a sparse matrix widened to a given number of columns.

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

import os
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
    "model_inputs",
    "model_labels",
    "pad_columns",
    "read_featurized",
    "read_for_model",
    "split_model",
    "training_features",
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
    _, estimator = split_model(model)
    if data.y is None:
        raise DataFormatError(data.source, "the file has no labels")
    by_text = {str(label): label for label in estimator.classes_}
    unseen = sorted({str(label) for label in data.y} - by_text.keys())
    if unseen:
        shown = ", ".join(unseen[:5]) + (" ..." if len(unseen) > 5 else "")
        raise DataFormatError(
            data.source,
            f"label(s) never seen in training: {shown} "
            f"(the model knows {len(by_text)}: {', '.join(sorted(by_text)[:10])})",
        )
    return np.array([by_text[str(label)] for label in data.y], dtype=estimator.classes_.dtype)


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
