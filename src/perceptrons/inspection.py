"""What a fitted linear model's weights say: its heaviest features, by name.

NumPy and SciPy's sparse matrices alone (``perceptrons inspect`` imports no
scikit-learn); :func:`top_features` is also :func:`perceptrons.features.top_features`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["top_features"]


def top_features(
    model: Any, k: int = 10, names_from: Iterable[str] | None = None
) -> list[dict[str, Any]] | None:
    """The ``k`` largest and smallest weights of each class, by feature name.

    Parameters
    ----------
    model : estimator or Pipeline
        A fitted linear model of this package (it has ``coef_``), or a text pipeline
        ``make_pipeline(TextFeaturizer(...), estimator)``.
    k : int, default=10
        Features per class and sign.
    names_from : iterable of str, optional
        Texts to name the hashed columns shown by, for a hashing featurizer that kept
        no names (``hashed_names=False``): :meth:`~perceptrons.TextFeaturizer.name_columns` of the
        columns shown, one pass over the texts.  Ignored when the names are known.

    Returns
    -------
    list of dict or None
        One entry per class (a binary model: one, for ``classes_[1]``, the class a
        positive score predicts): ``{"class": str, "positive": [(name, weight), ...],
        "negative": [(name, weight), ...]}``, the ``k`` largest positive weights in
        decreasing order and the ``k`` most negative in increasing order.  Names come
        from the pipeline's :meth:`perceptrons.TextFeaturizer.feature_names`, else the
        estimator's ``feature_names_in_``, else ``"feature j"``; a hashed column whose
        name was not kept (``hashed_names=False``) nor found in ``names_from`` is
        ``"#j"``.  ``None`` for a model without weights per feature (a voted perceptron
        with a non-linear kernel).

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from perceptrons import Perceptron, TextFeaturizer
    >>> texts = ["good fine film", "bad dull film", "good plot", "bad acting"]
    >>> counts = TextFeaturizer(vocabulary="fit", weighting="tf")
    >>> model = make_pipeline(counts, Perceptron(shuffle=False))
    >>> top = top_features(model.fit(texts, ["pos", "neg", "pos", "neg"]), k=1)
    >>> top[0]["class"], top[0]["positive"][0][0], top[0]["negative"][0][0]
    ('pos', 'good', 'bad')
    """
    top = _top_columns(model, k)
    if top is None:
        return None
    featurizer, estimator = _split(model)
    if featurizer is not None:
        names = featurizer.feature_names()
    else:
        names = getattr(estimator, "feature_names_in_", None)
    hashed = featurizer is not None and featurizer._hashing
    recovered: dict[int, str] = {}
    if hashed and names is None and names_from is not None:
        shown = {j for entry in top for sign in ("positive", "negative") for j, _ in entry[sign]}
        recovered = featurizer.name_columns(names_from, shown)

    def name(j: int) -> str:
        if names is not None:
            return str(names[j])
        return recovered.get(j, f"#{j}") if hashed else f"feature {j}"

    return [
        {
            "class": entry["class"],
            "positive": [(name(j), w) for j, w in entry["positive"]],
            "negative": [(name(j), w) for j, w in entry["negative"]],
        }
        for entry in top
    ]


def _top_columns(model: Any, k: int = 10) -> list[dict[str, Any]] | None:
    """:func:`top_features` by column number: ``(column, weight)`` pairs (what a caller
    naming the columns itself needs, e.g. with :meth:`TextFeaturizer.name_columns`)."""
    estimator = _split(model)[1]
    try:
        coef = estimator.coef_
    except AttributeError:
        return None
    # A sparsified model's rows are ranked by their nonzeros alone (zero weights are in
    # neither list), never expanded to n_features columns.
    coef = sp.csr_matrix(coef) if sp.issparse(coef) else np.asarray(coef)
    labels = [estimator.classes_[1]] if coef.shape[0] == 1 else list(estimator.classes_)
    top = []
    for row, label in enumerate(labels):
        if isinstance(coef, np.ndarray):
            columns, weights = np.arange(coef.shape[1]), coef[row]
        else:
            start, end = coef.indptr[row], coef.indptr[row + 1]
            columns, weights = coef.indices[start:end], coef.data[start:end]
        order = np.argsort(weights, kind="stable")
        positive = [(int(columns[j]), float(weights[j])) for j in order[::-1][:k] if weights[j] > 0]
        negative = [(int(columns[j]), float(weights[j])) for j in order[:k] if weights[j] < 0]
        top.append({"class": str(label), "positive": positive, "negative": negative})
    return top


def _split(model: Any) -> tuple[Any, Any]:
    """A pipeline's featurizer (first step) and estimator (last), or ``(None, model)``."""
    if hasattr(model, "steps"):
        return model.steps[0][1], model.steps[-1][1]
    return None, model
