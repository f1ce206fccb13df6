"""Tokenized sentences to sparse per-token features: the learner core's featurizer.

:class:`SequenceFeaturizer` here is :class:`perceptrons.SequenceFeaturizer` without
scikit-learn's face (the same parameters, templates and output); the template language,
presets and feature identity are documented in :mod:`perceptrons.sequence_features`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from numbers import Integral
from typing import Any, ClassVar

import numpy as np

from perceptrons import _checked, _input
from perceptrons import _params as rules
from perceptrons._base import Trainable
from perceptrons._kernels import sequence_features as kernels
from perceptrons._sequences import TokenFeatures
from perceptrons.sequence import _templates
from perceptrons.sequence._input import _read, _sentences
from perceptrons.sequence._templates import (
    _EDGE_VALUES,
    _columns_needed,
    _resolve_templates,
    _template_arrays,
    _type_values,
)

# ATTRIBUTES, MAX_OFFSET and PRESETS are documented where perceptrons.sequence_features
# exports them.
__all__ = ["SequenceFeaturizer"]

# The public constants of the template language, which perceptrons.sequence._templates
# defines: assigned here, where their doc comments are (the API reference reads them).

#: The attributes of the word a template can name (besides ``cK``), in the order of the
#: fingerprint table's columns.
ATTRIBUTES = _templates.ATTRIBUTES

#: The largest distance from the current token an item may look at.
MAX_OFFSET = _templates.MAX_OFFSET

#: The named template sets. ``"pos"``: words only, for part-of-speech tagging (the
#: word, its case, affixes, shape and flags, and its neighbours, after Ratnaparkhi 1996
#: and Collins 2002). ``"chunk"``: words and the POS column ``c1``, for chunking (the
#: CoNLL-2000 set of Sha & Pereira 2003, as in CRFsuite's chunking example, plus the
#: word with the POS at -1, 0 and 1, its suffix and shape: the conjunctions of the word
#: with the neighbours' POS raised the test F1 of a 10-epoch tagger by 0.15 on three
#: shuffles; other extras tried, such as more word pairs, affixes and flags, did not
#: help).
PRESETS = _templates.PRESETS

# The most distinct strings kept between calls (their rows take 120 bytes each, plus
# the dict): a stream of ever new words must not grow the featurizer without bound.
_CACHE_LIMIT = 1 << 22

#: What a featurizer knows of the distinct strings it has seen: their rows, the
#: fingerprints of their attributes by row (uint64, ``(n_rows, len(ATTRIBUTES))``), and
#: the columns of the templates of at most one item by row (int64, ``(2 + n, n_templates)``
#: for the first ``n`` rows, rows 0 and 1 for BOS and EOS; None until computed, after
#: fitting). Replaced whole, never changed in place.
_Cache = tuple[dict[str, int], np.ndarray, "np.ndarray | None"]


def _n_features(value: Any) -> bool:
    return value is None or (
        isinstance(value, Integral) and not isinstance(value, bool) and 1 <= int(value) <= 2**62
    )


def _min_count(value: Any) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool) and int(value) >= 1


class SequenceFeaturizer(Trainable):
    """The sequence featurizer's learner core: :class:`perceptrons.SequenceFeaturizer`
    without scikit-learn (the same parameters, templates and output)."""

    _rules: ClassVar[dict[str, rules.Rule]] = {
        "n_features": rules.Rule("None or an int in [1, 2**62]", _n_features),
        "min_count": rules.Rule("an int >= 1", _min_count),
    }

    def __init__(
        self,
        templates: str | Sequence[str] = "auto",
        n_features: int | None = None,
        min_count: int = 1,
    ) -> None:
        self.templates = templates
        self.n_features = n_features
        self.min_count = min_count

    def _validate_params(self) -> None:
        rules.validate(self, self._rules)
        if self.n_features is not None and self.min_count != 1:
            raise ValueError(
                f"SequenceFeaturizer: parameter 'min_count' must be 1 with hashing "
                f"(n_features={self.n_features}), got {self.min_count!r}: hashed features "
                "keep no counts; use n_features=None"
            )

    # --------------------------------------------------------------- fitting
    def fit(self, X: Sequence[Sequence[Any]], y: Any = None) -> SequenceFeaturizer:
        """Resolve the templates and learn the vocabulary of features.

        Parameters
        ----------
        X : list of list of (str or tuple of str)
            Sentences, each a non-empty list of tokens: a word, or a tuple ``(word,
            c1, c2, ...)`` of the word and extra input columns.
        y : None
            Ignored.

        Returns
        -------
        self : SequenceFeaturizer
            The fitted featurizer.
        """
        self._fit(X)
        return self

    def fit_transform(self, X: Sequence[Sequence[Any]], y: Any = None) -> TokenFeatures:
        """:meth:`fit`, then the features of ``X`` (its tokens read once).

        Parameters
        ----------
        X : list of list of (str or tuple of str)
            Sentences.
        y : None
            Ignored.

        Returns
        -------
        TokenFeatures
            The feature columns of every token.
        """
        offsets, rows, snapshot = self._fit(X)
        return self._columns(offsets, rows, snapshot)

    def _fit(self, X: Any) -> tuple[np.ndarray, np.ndarray, _Cache]:
        self._validate_params()
        if not isinstance(self.templates, str):
            _resolve_templates(self.templates, 1)  # a bad template before reading X
        X = _sentences(X)
        offsets, columns, width = _read(X, None)
        templates = _resolve_templates(self.templates, width)
        needed = _columns_needed(templates)
        if width < needed:
            _read(X, needed)  # raises, naming the token
        self.templates_ = templates
        self.n_columns_ = width
        self._template_arrays = _template_arrays(templates)
        self._cache = _empty_cache()
        rows, snapshot = self._rows(columns[:needed])
        if self.n_features is None:
            fps = np.empty((offsets[-1], len(templates)), dtype=np.uint64)
            kernels.fingerprints(
                offsets=offsets,
                rows=rows,
                values=snapshot[1],
                templates=self._template_arrays,
                edge_values=_EDGE_VALUES,
                out=fps,
            )
            keys, counts = np.unique(fps, return_counts=True)
            keys = keys[counts >= self.min_count]
            if keys.shape[0] == 0:
                raise ValueError(
                    f"SequenceFeaturizer: no feature occurs min_count={self.min_count} times "
                    "in the training tokens; lower min_count"
                )
            self._set_vocabulary(keys)
        else:
            self._table = _empty_table()
            self.n_features_out_ = int(self.n_features)
        return offsets, rows, snapshot

    def _set_vocabulary(self, keys: np.ndarray) -> None:
        """Keep the sorted fingerprints ``keys`` as the columns, and their lookup table."""
        capacity = 1 << max(1, int(2 * keys.shape[0]).bit_length())  # at most half full
        slots = np.zeros((capacity, 2), dtype=np.uint64)
        kernels.build_table(keys=keys, slots=slots)
        self._keys = keys
        self._table = slots
        self.n_features_out_ = int(keys.shape[0])

    def _rows(self, columns: Sequence[Sequence[str]]) -> tuple[np.ndarray, _Cache]:
        """The row of every token's value in each column, and the cache those rows are
        of (with the distinct strings not yet known added: kept for the next calls)."""
        snapshot = self._cache
        index, values, singles = snapshot
        n_tokens = len(columns[0])
        rows = np.empty((n_tokens, len(columns)), dtype=np.int64)
        for k, column in enumerate(columns):
            rows[:, k] = np.fromiter(map(index.get, column, repeat(-1)), np.int64, n_tokens)
        if rows.shape[0] == 0 or rows.min() >= 0:
            return rows, snapshot
        words = sorted(set().union(*columns).difference(index))  # rows in a fixed order
        index = dict(index)
        index.update(zip(words, range(len(index), len(index) + len(words)), strict=True))
        used = self._template_arrays[3].tolist()  # the attribute of every item
        values = np.concatenate([values, _type_values(words, used)])
        snapshot = (index, values, singles)
        if len(index) <= _CACHE_LIMIT:
            # Swapped in whole: a transform running in another thread sees the old or
            # the new cache, never half of one.
            self._cache = snapshot
        for k, column in enumerate(columns):
            rows[:, k] = np.fromiter(map(index.__getitem__, column), np.int64, n_tokens)
        return rows, snapshot

    # ------------------------------------------------------------- transform
    def transform(self, X: Sequence[Sequence[Any]]) -> TokenFeatures:
        """The feature columns of every token of ``X``.

        Parameters
        ----------
        X : list of list of (str or tuple of str)
            Sentences, each a non-empty list of tokens with at least the columns the
            templates name.

        Returns
        -------
        TokenFeatures
            ``indices[indptr[t]:indptr[t + 1]]`` are token ``t``'s columns in template
            order (a vocabulary drops features unseen in training; hashing keeps all,
            colliding ones repeated), ``offsets`` the sentences' tokens.
        """
        _input.check_is_fitted(self, "n_features_out_")
        offsets, columns, _ = _read(X, _columns_needed(self.templates_))
        rows, snapshot = self._rows(columns)
        return self._columns(offsets, rows, snapshot)

    def _single_columns(self, values: np.ndarray) -> np.ndarray:
        """The columns of the templates of at most one item by row of ``values``."""
        out = np.full((values.shape[0], len(self.templates_)), -1, dtype=np.int64)
        kernels.single_columns(
            values=values,
            templates=self._template_arrays,
            slots=self._table,
            n_features=self._n_hashed,
            out=out,
        )
        return out

    @property
    def _n_hashed(self) -> int:
        """The kernels' ``n_features``: 0 for a vocabulary."""
        return 0 if self.n_features is None else int(self.n_features)

    def _columns(self, offsets: np.ndarray, rows: np.ndarray, snapshot: _Cache) -> TokenFeatures:
        index, values, singles = snapshot
        if singles is None:  # first call since fitting: BOS and EOS first
            singles = self._single_columns(np.repeat(_EDGE_VALUES[:, None], len(ATTRIBUTES), 1))
        if singles.shape[0] < 2 + values.shape[0]:
            singles = np.concatenate(
                [singles, self._single_columns(values[singles.shape[0] - 2 :])]
            )
            if self._cache is snapshot:
                self._cache = (index, values, singles)
        n_tokens = rows.shape[0]
        indptr = np.empty(n_tokens + 1, dtype=np.int64)
        indices = np.empty(n_tokens * len(self.templates_), dtype=np.int64)
        nnz = kernels.columns(
            offsets=offsets,
            rows=rows,
            values=values,
            templates=self._template_arrays,
            edge_values=_EDGE_VALUES,
            singles=singles,
            slots=self._table,
            n_features=self._n_hashed,
            indptr=indptr,
            indices=indices,
        )
        if nnz < indices.shape[0]:
            indices = indices[:nnz].copy()
        return TokenFeatures(offsets, indptr, indices, self.n_features_out_)

    # ----------------------------------------------------------- persistence
    def _codec(self) -> _SequenceCodec:
        """The fitted state as a model file stores it (see :mod:`perceptrons._engine`)."""
        return _SequenceCodec(self)


class _SequenceCodec:
    """A :class:`SequenceFeaturizer`'s fitted state
    (:class:`perceptrons._engine.StateCodec`)."""

    def __init__(self, featurizer: SequenceFeaturizer) -> None:
        self.featurizer = featurizer

    def check_params(self) -> None:
        self.featurizer._validate_params()

    def export_state(self, resumable: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
        """The fitted state as arrays and JSON values (see :mod:`perceptrons.io.persist`).

        Values: ``templates`` (canonical), ``n_columns``, ``n_features_out``. Arrays:
        ``keys`` (uint64, the sorted fingerprints of the columns) with a vocabulary.
        ``resumable`` is ignored: the state is all the featurizer holds.
        """
        featurizer = self.featurizer
        _input.check_is_fitted(featurizer, "n_features_out_")
        arrays = {} if featurizer.n_features is not None else {"keys": featurizer._keys}
        values = {
            "templates": list(featurizer.templates_),
            "n_columns": int(featurizer.n_columns_),
            "n_features_out": int(featurizer.n_features_out_),
        }
        return arrays, values

    def state_layout(self, values: dict[str, Any]) -> dict[str, _checked.Spec]:
        """The arrays :meth:`import_state` accepts: with a vocabulary, ``keys`` of
        ``n_features_out`` uint64 fingerprints; with hashing, none."""
        featurizer = self.featurizer
        featurizer._validate_params()
        if not isinstance(values, dict):
            raise ValueError(f"the featurizer's values must be a dict, got {type(values).__name__}")
        n_out = _checked.integer_value(values.get("n_features_out"), "n_features_out", 1)
        if featurizer.n_features is not None:
            return {}
        return {"keys": _checked.Spec((np.dtype(np.uint64),), (n_out,))}

    def import_state(self, arrays: dict[str, Any], values: dict[str, Any]) -> None:
        """Rebuild the fitted state written by :meth:`export_state`, checking all of it
        (the arrays and values may come from an untrusted file)."""
        featurizer = self.featurizer
        arrays = _checked.check_arrays(arrays, self.state_layout(values), "n_features_out")
        n_out = _checked.integer_value(values.get("n_features_out"), "n_features_out", 1)
        n_columns = _checked.integer_value(values.get("n_columns"), "n_columns", 1, 2**31)
        given = values.get("templates")
        if not isinstance(given, list) or not given:
            raise ValueError("templates must be a non-empty list of templates")
        templates = _resolve_templates(given, n_columns)
        if list(templates) != given:
            raise ValueError("templates are not in their canonical text")
        if _columns_needed(templates) > n_columns:
            raise ValueError(f"the templates need more than the n_columns={n_columns} columns")
        if featurizer.n_features is None:
            keys = arrays["keys"]
            if keys.shape[0] > 1 and not bool((keys[1:] > keys[:-1]).all()):
                raise ValueError("keys must be strictly increasing (sorted, no repeats)")
            featurizer._set_vocabulary(keys)
        else:
            if n_out != featurizer.n_features:
                raise ValueError(f"{n_out} hashed features but n_features={featurizer.n_features}")
            featurizer._table = _empty_table()
            featurizer.n_features_out_ = n_out
        featurizer.templates_ = templates
        featurizer.n_columns_ = n_columns
        featurizer._template_arrays = _template_arrays(templates)
        featurizer._cache = _empty_cache()


def _empty_cache() -> _Cache:
    """No distinct string known yet (see :data:`_Cache`)."""
    return {}, np.zeros((0, len(ATTRIBUTES)), dtype=np.uint64), None


def _empty_table() -> np.ndarray:
    """The vocabulary table of hashing (never read): one free slot."""
    return np.zeros((1, 2), dtype=np.uint64)
