"""A :class:`~perceptrons.TextFeaturizer`'s fitted state as a model file stores it
(:class:`perceptrons._engine.StateCodec`, what its ``_codec()`` returns)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from perceptrons import _checked, _input


class _TextCodec:
    """A :class:`~perceptrons.TextFeaturizer`'s fitted state
    (:class:`perceptrons._engine.StateCodec`)."""

    # A TextFeaturizer, typed loosely: importing perceptrons.features here would make a
    # circle of imports (it imports this module for TextFeaturizer._codec()).
    def __init__(self, featurizer: Any) -> None:
        self.featurizer = featurizer

    def check_params(self) -> None:
        self.featurizer._validate_params()

    def export_state(self, resumable: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
        """The fitted state as arrays and JSON values (see :mod:`perceptrons.io.persist`).

        Values: ``n_features_out``. Arrays: ``idf`` (float64, one per column) for
        ``"tfidf"``; for ``vocabulary="fit"`` the terms in column order as a string
        table (``vocabulary_text``, ``vocabulary_ends``: :func:`perceptrons._checked.
        pack_strings`); for hashing, the columns that have names (``hashed_columns``,
        int64, increasing) and their names (``hashed_names_text``, ``hashed_names_ends``)
        when the featurizer keeps names (``hashed_names=True``, or loaded from a file
        that had them).
        Arrays, not JSON: a vocabulary of trigrams or a stream's names run to millions of
        terms. ``resumable`` is ignored: the state is all the featurizer holds.
        """
        featurizer = self.featurizer
        _input.check_is_fitted(featurizer, "n_features_out_")
        arrays: dict[str, np.ndarray] = {}
        if featurizer.weighting == "tfidf":
            assert featurizer._weighting is not None  # fitted with weighting="tfidf"
            arrays["idf"] = np.asarray(featurizer._weighting.idf_, dtype=np.float64)
        values: dict[str, Any] = {"n_features_out": int(featurizer.n_features_out_)}
        if featurizer.vocabulary == "fit":
            terms = featurizer.feature_names()
            table = _checked.pack_strings(terms, "the featurizer's vocabulary")
            arrays["vocabulary_text"], arrays["vocabulary_ends"] = table
        elif featurizer._hashed_names is not None:  # hashing, the names kept
            columns = sorted(featurizer._hashed_names)
            arrays["hashed_columns"] = np.asarray(columns, dtype=np.int64).reshape(-1)
            names = [featurizer._hashed_names[column] for column in columns]
            table = _checked.pack_strings(names, "the featurizer's hashed names")
            arrays["hashed_names_text"], arrays["hashed_names_ends"] = table
        return arrays, values

    def import_state(self, arrays: dict[str, Any], values: dict[str, Any]) -> None:
        """Rebuild the fitted state written by :meth:`export_state`, every array checked
        against :meth:`state_layout` first (also the ``vocabulary`` and ``hashed_names``
        JSON values of files written before the string tables)."""
        featurizer = self.featurizer
        featurizer._validate_params()
        layout = self.state_layout(values)  # n_features_out checked first
        n_out = int(values["n_features_out"])
        arrays = _checked.check_arrays(arrays, layout, f"{n_out} features")
        terms = None
        if featurizer.vocabulary == "fit":
            if "vocabulary_ends" in arrays:
                terms = _checked.unpack_strings(
                    arrays["vocabulary_text"], arrays["vocabulary_ends"], "vocabulary"
                )
            else:
                terms = [str(term) for term in values["vocabulary"]]
            if len(terms) != n_out or len(set(terms)) != n_out:
                raise ValueError(
                    f"the vocabulary holds {len(terms)} terms ({len(set(terms))} distinct) "
                    f"for {n_out} features"
                )
        elif n_out != featurizer.n_features:
            raise ValueError(f"{n_out} hashed features but n_features={featurizer.n_features}")
        hashed_names = (
            self._hashed_names(arrays, values, n_out, bool(featurizer.hashed_names))
            if featurizer._hashing
            else None
        )
        vectorizer = featurizer._make_vectorizer(terms)
        weighting = featurizer._make_weighting()
        if weighting is not None and featurizer.weighting == "tfidf":
            weighting.idf_ = arrays["idf"]  # what fitting learns
        featurizer._vectorizer, featurizer._weighting = vectorizer, weighting
        featurizer.n_features_out_ = n_out
        featurizer._hashed_names = hashed_names

    @staticmethod
    def _hashed_names(
        arrays: dict[str, Any], values: dict[str, Any], n_out: int, kept: bool
    ) -> dict[int, str] | None:
        """The names of the hashed columns: the string table, or the JSON pairs of older
        files; a file without either has no names (``None``), unless the featurizer
        keeps names (``kept``: files older than the names, an empty table)."""
        table = ("hashed_columns", "hashed_names_text", "hashed_names_ends")
        present = [name for name in table if name in arrays]
        if present and len(present) != len(table):
            raise ValueError(f"the hashed names need all of {list(table)}, got {present}")
        if present:
            columns = arrays["hashed_columns"]
            if columns.shape[0] > 1 and not bool((columns[1:] > columns[:-1]).all()):
                raise ValueError("hashed_columns must be strictly increasing")
            names = _checked.unpack_strings(
                arrays["hashed_names_text"], arrays["hashed_names_ends"], "hashed_names"
            )
            return dict(zip(columns.tolist(), names, strict=True))
        if "hashed_names" not in values:
            return {} if kept else None
        pairs = {int(c): str(n) for c, n in values["hashed_names"]}
        if any(not 0 <= c < n_out for c in pairs):
            raise ValueError("a hashed feature name points outside the hashed features")
        return pairs

    def state_layout(self, values: dict[str, Any]) -> dict[str, _checked.Spec]:
        """The arrays :meth:`import_state` accepts, for ``n_features_out`` output
        features: ``idf`` (finite float64, one per feature) for ``weighting="tfidf"``; the
        vocabulary's string table (one string per feature) for ``vocabulary="fit"``
        unless the values hold the ``vocabulary`` (files written before the tables);
        for hashing, the names of at most ``n_features_out`` columns, in ``[0,
        n_features_out)`` (optional: files older than the names have none)."""
        featurizer = self.featurizer
        n_out = _checked.integer_value(values.get("n_features_out"), "n_features_out", 1)
        specs: dict[str, _checked.Spec] = {}
        if featurizer.weighting == "tfidf":
            specs["idf"] = _checked.floats(n_out)
        if featurizer.vocabulary == "fit" and "vocabulary" not in values:
            specs.update(_checked.strings("vocabulary", n_out))
        elif featurizer.vocabulary != "fit" and "hashed_names" not in values:
            named = _checked.Free("named columns", at_most=n_out)
            table = {
                "hashed_columns": _checked.indices(named, high=n_out),
                **_checked.strings("hashed_names", named),
            }
            specs.update({name: replace(spec, optional=True) for name, spec in table.items()})
        return specs
