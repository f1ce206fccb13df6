"""A :class:`~perceptrons.TextFeaturizer`'s fitted state as a model file stores it
(:class:`perceptrons._engine.StateCodec`, what its ``_engine()`` returns)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from perceptrons import _checked


class _TextCodec:
    """A :class:`~perceptrons.TextFeaturizer`'s fitted state
    (:class:`perceptrons._engine.StateCodec`)."""

    # A TextFeaturizer, typed loosely: importing perceptrons.features here would make a
    # circle of imports (it imports this module for TextFeaturizer._engine()).
    def __init__(self, featurizer: Any) -> None:
        self.featurizer = featurizer

    def check_params(self) -> None:
        self.featurizer._validate_params()

    def export_state(self, resumable: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
        """The fitted state as arrays and JSON values (see :mod:`perceptrons.io.persist`).

        Values: ``n_features_out`` and, for ``vocabulary="fit"``, ``vocabulary``, the
        list of terms ordered by column. Arrays: ``idf`` (float64, one per column) for
        ``"tfidf"``. ``resumable`` is ignored: the state is all the featurizer holds.
        """
        featurizer = self.featurizer
        check_is_fitted(featurizer, "n_features_out_")
        arrays: dict[str, np.ndarray] = {}
        if featurizer.weighting == "tfidf":
            assert featurizer._weighting is not None  # fitted with weighting="tfidf"
            arrays["idf"] = np.asarray(featurizer._weighting.idf_, dtype=np.float64)
        values: dict[str, Any] = {"n_features_out": int(featurizer.n_features_out_)}
        if featurizer.vocabulary == "fit":
            values["vocabulary"] = featurizer.feature_names()
        else:
            assert featurizer._hashed_names is not None  # fitted with vocabulary="hashing"
            values["hashed_names"] = [[c, n] for c, n in sorted(featurizer._hashed_names.items())]
        return arrays, values

    def import_state(self, arrays: dict[str, Any], values: dict[str, Any]) -> None:
        """Rebuild the fitted state written by :meth:`export_state`."""
        featurizer = self.featurizer
        featurizer._validate_params()
        n_out = int(values["n_features_out"])
        terms = None
        if featurizer.vocabulary == "fit":
            terms = [str(term) for term in values["vocabulary"]]
            if len(terms) != n_out or len(set(terms)) != n_out:
                raise ValueError(
                    f"the vocabulary holds {len(terms)} terms ({len(set(terms))} distinct) "
                    f"for {n_out} features"
                )
        elif n_out != featurizer.n_features:
            raise ValueError(f"{n_out} hashed features but n_features={featurizer.n_features}")
        vectorizer = featurizer._make_vectorizer(terms)
        weighting = featurizer._make_weighting()
        if weighting is not None:
            # What TfidfTransformer.fit sets: the input width and, for tf-idf, the idf.
            weighting.n_features_in_ = n_out
            if featurizer.weighting == "tfidf":
                idf = np.asarray(arrays["idf"], dtype=np.float64)
                if idf.shape != (n_out,):
                    raise ValueError(f"idf of shape {idf.shape} for {n_out} features")
                weighting.idf_ = idf
        featurizer._vectorizer, featurizer._weighting = vectorizer, weighting
        featurizer.n_features_out_ = n_out
        if featurizer._hashing:
            featurizer._hashed_names = {int(c): str(n) for c, n in values.get("hashed_names", [])}
            if any(not 0 <= c < n_out for c in featurizer._hashed_names):
                raise ValueError("a hashed feature name points outside the hashed features")

    def state_layout(self, values: dict[str, Any]) -> dict[str, _checked.Spec]:
        """The arrays :meth:`import_state` accepts: for ``weighting="tfidf"``, ``idf``,
        finite float64, one per output feature (``n_features_out``); else none."""
        if self.featurizer.weighting != "tfidf":
            return {}
        n_out = _checked.integer_value(values.get("n_features_out"), "n_features_out", 1)
        return {"idf": _checked.floats(n_out)}
