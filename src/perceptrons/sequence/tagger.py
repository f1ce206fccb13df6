"""Sequence labelling with the structured (averaged) perceptron: the learner core.

:class:`SequenceTagger` here is :class:`perceptrons.SequenceTagger` without scikit-learn's
face (the same parameters, training, model and files): what ``perceptrons tag`` trains,
saves and loads. The algorithm is documented in :mod:`perceptrons.tagger`.

Over 600 lines: the engine reads what is the tagger's alone (its tag encoding, its
featurizer, its weight layout), and is typed against the class itself, which a module
of its own could only import in a circle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from perceptrons import _checked, _input, _validation
from perceptrons import _params as rules
from perceptrons._engine import check_statistic
from perceptrons._kernels import sequence as _kernels
from perceptrons._memory import array_bytes, check_allocation
from perceptrons._sequences import TagCodes, TokenFeatures
from perceptrons._states import TrainingState, as_count
from perceptrons.linear._online import OnlineLearner
from perceptrons.linear._online_engine import LinearEngine
from perceptrons.sequence.featurizer import SequenceFeaturizer

__all__ = ["SequenceTagger"]

_UPDATES = {"perceptron": _kernels.PERCEPTRON, "mira": _kernels.MIRA}
_PRESETS = ("auto", "pos", "chunk")
# Sentences per kernel call when the caller follows progress.
_PROGRESS_SENTENCES = 2**11


def viterbi_steps(n_tokens: int, n_tags: int) -> int:
    """The inner steps of one Viterbi pass over ``n_tokens`` tokens with ``n_tags`` tags
    (a previous tag times a tag, per token): an epoch's time grows as ``n_tags**2``.

    Examples
    --------
    >>> viterbi_steps(3_000, 3_000)
    27000000000
    """
    return int(n_tokens) * int(n_tags) ** 2


def _check_viterbi_memory(offsets: np.ndarray, n_tags: int) -> None:
    """Refuse, before the kernel allocates them, Viterbi tables for the longest
    sentence that would not fit: the emissions, the best scores and the back
    pointers, ``longest x n_tags`` each (and MIRA's update log, smaller)."""
    longest = int(np.diff(offsets).max()) if offsets.shape[0] > 1 else 0
    check_allocation(
        array_bytes(longest, n_tags, 4),
        f"the Viterbi tables (the longest sentence's {longest:,} tokens x {n_tags:,} tags "
        "x 4 arrays)",
        "split long sentences, or use fewer tags",
    )


# Names of the featurizer's arrays among the tagger's state arrays.
_FEATURIZER_PREFIX = "featurizer_"
# Decoding keeps a feature's weights as a dense row when more than
# max(2, n_tags // _BUSY) of them are nonzero, else as (tag, weight) pairs: a row that
# only one mistake changed holds two nonzeros. Measured on CoNLL-2000 (decoding alone,
# tokens/s and MiB of the tables, with a first version of these tables that located
# the dense rows through a map of their own): chunker, 22 tags, every row dense
# 510-620k in 77, pairs only 355k in 12.5, this split 560k in 16.6; POS tagger, 44
# tags, dense 312k in 115, pairs 230k in 9.5, split 303k in 17.5.
_BUSY = 16


def _decoding_tables(by_feature: sp.csr_matrix) -> tuple[np.ndarray, ...]:
    """The observation weights as :func:`perceptrons._kernels.sequence.split_emissions`
    reads them, from their CSR matrix of shape (n_features, n_tags): busy rows with
    every tag's weight, the others with their nonzeros."""
    n_features, n_tags = by_feature.shape
    counts = np.diff(by_feature.indptr)
    busy = counts > max(2, n_tags // _BUSY)
    if n_tags <= 2:  # a light row of n_tags entries would read as a dense one
        busy = counts > 0
    sizes = np.where(busy, n_tags, counts)
    starts = np.zeros(n_features + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    tags = np.empty(starts[-1], dtype=np.int32)
    values = np.zeros(starts[-1], dtype=np.float64)
    # Light rows: their nonzeros as they are. Busy rows: every tag, zeros included.
    light = np.repeat(~busy, counts)
    positions = np.repeat(starts[:-1] - by_feature.indptr[:-1], counts) + np.arange(by_feature.nnz)
    tags[positions[light]] = by_feature.indices[light]
    values[positions[light]] = by_feature.data[light]
    rows = np.flatnonzero(busy)
    busy_positions = (starts[rows][:, None] + np.arange(n_tags)).ravel()
    values[busy_positions] = by_feature[rows].toarray().ravel()
    tags[busy_positions] = np.tile(np.arange(n_tags, dtype=np.int32), rows.size)
    return starts, tags, values


def _templates_rule() -> rules.Rule:
    return rules.Rule(
        "'auto', 'pos', 'chunk' or a non-empty list of template strings",
        lambda v: (
            (isinstance(v, str) and v in _PRESETS)
            or (isinstance(v, list | tuple) and len(v) > 0 and all(isinstance(t, str) for t in v))
        ),
    )


def _sentence_list(X: Any, name: str) -> list:
    """``X`` as a list of sentences (each a non-empty list or tuple of tokens)."""
    if isinstance(X, str | bytes) or not isinstance(X, Sequence):
        raise ValueError(
            f"{name} must be a list of sentences (lists of tokens), got {type(X).__name__}."
        )
    sentences = list(X)
    for i, sentence in enumerate(sentences):
        if isinstance(sentence, str | bytes) or not isinstance(sentence, Sequence):
            raise ValueError(
                f"{name}[{i}] must be a list of tokens, got {type(sentence).__name__}."
            )
        if len(sentence) == 0:
            raise ValueError(f"{name}[{i}] is an empty sentence: every sentence needs a token.")
    return sentences


def _tag_lists(y: Any, sentences: list, name: str = "y") -> list:
    """``y`` checked against the sentences: one string tag per token."""
    if isinstance(y, str | bytes) or not isinstance(y, Sequence):
        raise ValueError(f"{name} must be a list of tag lists, got {type(y).__name__}.")
    tags = list(y)
    if len(tags) != len(sentences):
        raise ValueError(f"{name} has {len(tags)} tag sequences for {len(sentences)} sentences.")
    for i, (sentence, sequence) in enumerate(zip(sentences, tags, strict=True)):
        if isinstance(sequence, str | bytes) or not isinstance(sequence, Sequence):
            raise ValueError(f"{name}[{i}] must be a list of tags, got {type(sequence).__name__}.")
        if len(sequence) != len(sentence):
            raise ValueError(
                f"{name}[{i}] has {len(sequence)} tags for a sentence of {len(sentence)} tokens."
            )
        _check_tags(sequence, f"{name}[{i}]")
    return tags


def _check_tags(tags: Any, where: str) -> None:
    """Tags are strings: those of ``fit`` and those a model file declares alike."""
    for tag in tags:
        if not isinstance(tag, str):
            raise ValueError(f"{where} holds a tag that is not a str: {tag!r}.")


def _flat_tags(tags: list) -> tuple[np.ndarray, np.ndarray]:
    """Every tag in one array, and each sentence's offsets into it."""
    lengths = np.fromiter((len(s) for s in tags), dtype=np.int64, count=len(tags))
    offsets = np.zeros(len(tags) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = [tag for sequence in tags for tag in sequence]
    return np.array(flat, dtype=str) if flat else np.zeros(0, dtype=str), offsets


class SequenceTagger(OnlineLearner):
    """The tagger's learner core: :class:`perceptrons.SequenceTagger` without
    scikit-learn (the same parameters, training, model and files)."""

    _state_class = TrainingState
    #: The class of ``featurizer_``: the core's (the estimator's face has its own).
    _featurizer_class: ClassVar[type[SequenceFeaturizer]] = SequenceFeaturizer
    _logs_updates = True
    _rules: ClassVar[dict[str, rules.Rule]] = {
        **OnlineLearner._rules,
        "templates": _templates_rule(),
        "n_features": rules.either(rules.Rule("None", lambda v: v is None), rules.integer(1)),
        "min_count": rules.integer(1),
        "average": rules.boolean(),
        "update": rules.one_of(*_UPDATES),
        "C": rules.real(0.0, inclusive=False),
        "early_stopping": rules.boolean(),
        "n_iter_no_change": rules.integer(1),
    }

    featurizer_: SequenceFeaturizer
    classes_: np.ndarray
    n_features_in_: int
    transitions_: np.ndarray

    def __init__(
        self,
        templates: str | Sequence[str] = "auto",
        n_features: int | None = None,
        min_count: int = 1,
        average: bool = True,
        update: str = "perceptron",
        C: float = 1.0,
        max_epochs: int = 10,
        shuffle: bool = True,
        random_state: int | np.random.RandomState | None = None,
        early_stopping: bool = False,
        n_iter_no_change: int = 3,
        verbose: int = 0,
    ) -> None:
        self.templates = templates
        self.n_features = n_features
        self.min_count = min_count
        self.average = average
        self.update = update
        self.C = C
        self.max_epochs = max_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.early_stopping = early_stopping
        self.n_iter_no_change = n_iter_no_change
        self.verbose = verbose

    def _check_params(self) -> None:
        super()._check_params()
        try:  # the featurizer's own rules (n_features, min_count and how they combine)
            self._new_featurizer()._validate_params()
        except ValueError as error:
            message = str(error).removeprefix(f"{SequenceFeaturizer.__name__}: ")
            raise ValueError(f"{type(self).__name__}: {message}") from None

    # ------------------------------------------------------------ the family's hooks
    @property
    def _averaged(self) -> bool:
        return bool(self.average)

    def _epoch_record(self, statistic: float, n_examples: int, mistakes: int) -> dict[str, Any]:
        # The sentences tagged wrongly: the statistic (the update rules update on them).
        return {"mistakes": int(statistic), "examples": int(n_examples)}

    def _describe(self, record: dict[str, Any]) -> str:
        text = f"{record['mistakes']} of {record['examples']} sentences tagged wrongly"
        if "validation_score" in record:
            text += f", development accuracy {record['validation_score']:.4f}"
        return text

    def _new_featurizer(self) -> SequenceFeaturizer:
        templates = self.templates if isinstance(self.templates, str) else list(self.templates)
        return self._featurizer_class(
            templates=templates, n_features=self.n_features, min_count=self.min_count
        )

    @property
    def _n_tags(self) -> int:
        return int(self.classes_.shape[0])

    def _encode(self, tags: list, known: np.ndarray) -> TagCodes:
        flat, offsets = _flat_tags(tags)
        codes = np.searchsorted(known, flat).astype(np.int64)
        np.minimum(codes, known.shape[0] - 1, out=codes)
        unseen = known[codes] != flat if flat.shape[0] else np.zeros(0, dtype=bool)
        if np.any(unseen):
            raise ValueError(
                f"y contains tags never declared to {type(self).__name__}: "
                f"{sorted(set(flat[unseen].tolist()))!r}; known tags are {known.tolist()!r}."
            )
        return TagCodes(offsets, codes)

    def _begin_call(
        self,
        X: Any,
        y: Any,
        classes: Any,
        *,
        incremental: bool,
        reset: bool = False,
        sample_weight: Any = None,
    ) -> tuple[Any, Any, bool, np.ndarray | None]:
        """Check the parameters and the sentences; on a first call fit the featurizer
        and fix the tags. Returns the featurized sentences and their tags."""
        self._check_params()
        if sample_weight is not None:
            raise ValueError(f"{type(self).__name__} does not take sample_weight.")
        if not reset:
            problem = self._continuation_problem()
            if problem is not None:
                raise ValueError(f"{type(self).__name__}: {problem}.")
        first_call = reset or self._is_first_call()
        sentences = _sentence_list(X, "X")
        if not sentences:
            raise ValueError("X holds no sentence: there is nothing to train on.")
        tags = _tag_lists(y, sentences)
        data = None
        if first_call:
            # The new featurizer stays local until the tags are accepted.
            featurizer = self._new_featurizer()
            data = featurizer.fit_transform(sentences)
            seen = np.unique(_flat_tags(tags)[0])
            known = seen if classes is None else np.unique(np.asarray(classes, dtype=str))
            if known.shape[0] < 2:
                raise ValueError(
                    f"{type(self).__name__} needs at least two distinct tags, got "
                    f"{known.tolist()!r}."
                )
        else:
            featurizer, known = self.featurizer_, self.classes_
            if classes is not None and not np.array_equal(
                np.unique(np.asarray(classes, dtype=str)), known
            ):
                raise ValueError(
                    f"classes differ from the tags of the first call: {known.tolist()!r}."
                )
        codes = self._encode(tags, known)  # unknown tags refused before anything changes
        if data is None:
            data = featurizer.transform(sentences)
        data.check()
        if first_call:
            self._thaw()
            self.featurizer_ = featurizer
            self.classes_ = known
            self.n_features_in_ = int(data.n_features)
        return data, codes, first_call, None

    def _engine(self) -> TaggerEngine:
        return TaggerEngine(self)

    def _model_array(self) -> _checked.SparseArray:
        """The model in the training state's layout, given by its nonzeros (never
        expanded: what a non-resumable model file stores)."""
        by_feature = self.coef_.T.tocoo()
        n_tags = self._n_tags
        transitions = _checked.SparseArray.from_dense(self.transitions_)
        offset = self.n_features_in_ * n_tags
        index = np.concatenate(
            [
                by_feature.row.astype(np.int64) * n_tags + by_feature.col,
                offset + transitions.index,
            ]
        )
        values = np.concatenate([by_feature.data, transitions.values])
        order = np.argsort(index, kind="stable")
        shape = (self.n_features_in_ + n_tags + 1, n_tags)
        return _checked.SparseArray(shape, index[order], values[order].astype(np.float64))

    def _publish(self, rows: np.ndarray | None = None) -> None:
        # rows: unused, the nonzeros are found below (sentences are not CSR rows).
        assert self._state is not None  # called once training has a state
        state, n_tags = self._state, self._n_tags
        n_features = self.n_features_in_
        # Only the nonzeros, found without forming the dense model (a pass over it
        # cost 0.35 s of a 4.5 s fit on CoNLL-2000): the mistakes touched about 2% of
        # the (feature, tag) pairs.
        touched = state.touched(n_features * n_tags)
        with np.errstate(over="ignore", invalid="ignore"):  # checked below
            values = state.model_entries(touched)
        nonzero = values != 0
        rows, tags = np.divmod(touched[nonzero], n_tags)
        indptr = np.zeros(n_features + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n_features), out=indptr[1:])
        by_feature = sp.csr_matrix(
            (values[nonzero], tags, indptr), shape=(n_features, n_tags), dtype=np.float64
        )
        start = n_features * n_tags
        with np.errstate(over="ignore", invalid="ignore"):
            transitions = state.model_entries(np.arange(start, start + (n_tags + 1) * n_tags))
        # A token's score under a tag adds at most every feature's weight and one
        # transition: bounded as a linear model's with that transition as intercept.
        _validation.check_linear_model(
            by_feature.T, np.abs(transitions).reshape(n_tags + 1, n_tags).max(axis=0), self
        )
        self._decoding = _decoding_tables(by_feature)
        self.coef_ = by_feature.T
        self.transitions_ = transitions.reshape(n_tags + 1, n_tags)
        self.intercept_ = np.zeros(n_tags)

    def _sparsified(self) -> bool:
        return False  # coef_ is sparse by design, the training state dense

    # ------------------------------------------------------------------ training
    def fit(
        self, X: Sequence[Sequence[Any]], y: Sequence[Sequence[str]], dev: Any = None
    ) -> SequenceTagger:
        """Train for up to ``max_epochs`` passes over the sentences.

        Parameters
        ----------
        X : list of list of str or tuple
            The sentences: each a non-empty list of tokens, a token being the word (a
            str) or a tuple of strings (the word, then extra input columns such as
            its POS tag).
        y : list of list of str
            The gold tags, one per token.
        dev : tuple (X_dev, y_dev), default=None
            A development set, scored (token accuracy, ``validation_score``) after
            every epoch; with ``early_stopping`` it decides when to stop.

        Returns
        -------
        self : SequenceTagger
            The fitted tagger.
        """
        for _ in self._fit(
            X, y, progress=None, publish_each_epoch=False, validation=self._dev(dev)
        ):
            pass
        return self

    def fit_epochs(
        self,
        X: Sequence[Sequence[Any]],
        y: Sequence[Sequence[str]],
        progress: Callable[[int], object] | None = None,
        dev: Any = None,
    ) -> Iterator[dict[str, Any]]:
        """Train like :meth:`fit`, pausing after every epoch (the model is then
        current); ``progress`` is called with the number of sentences just processed.

        Yields
        ------
        record : dict
            The epoch's entry of ``history_``.
        """
        yield from self._fit(
            X, y, progress=progress, publish_each_epoch=True, validation=self._dev(dev)
        )

    def partial_fit(
        self, X: Sequence[Sequence[Any]], y: Sequence[Sequence[str]], classes: Any = None
    ) -> SequenceTagger:
        """One epoch over a batch of sentences, continuing from the current state (the
        first call fits the featurizer and fixes the tags: pass every tag as
        ``classes`` if the first batch lacks some)."""
        for _ in self._partial_fit(X, y, classes, epochs=1, incremental=True):
            pass
        return self

    @staticmethod
    def _dev(dev: Any) -> tuple[Any, Any] | None:
        if dev is None:
            return None
        if not isinstance(dev, tuple | list) or len(dev) != 2:
            raise ValueError("dev must be a pair (X_dev, y_dev).")
        sentences = _sentence_list(dev[0], "X_dev")
        return sentences, _tag_lists(dev[1], sentences, "y_dev")

    # ---------------------------------------------------------------- prediction
    def _decode(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        _input.check_is_fitted(self, "coef_")
        sentences = _sentence_list(X, "X")
        if not sentences:
            return np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64)
        data = self.featurizer_.transform(sentences)
        data.check()
        codes = np.empty(data.n_tokens, dtype=np.int64)
        if self.transitions_.shape != (self._n_tags + 1, self._n_tags):
            raise ValueError("transitions_ was replaced by an array of another shape.")
        _check_viterbi_memory(data.offsets, self._n_tags)
        _kernels.decode(
            data.indptr, data.indices, data.offsets, self._decoding, self.transitions_, codes
        )
        return codes, data.offsets

    def predict(self, X: Sequence[Sequence[Any]]) -> list[list[str]]:
        """The Viterbi tags of each sentence.

        Parameters
        ----------
        X : list of list of str or tuple
            Sentences, tokens as in :meth:`fit`.

        Returns
        -------
        tags : list of list of str
        """
        codes, offsets = self._decode(X)
        tags = self.classes_[codes].tolist()
        bounds = offsets.tolist()
        return [tags[bounds[s] : bounds[s + 1]] for s in range(len(bounds) - 1)]

    def score(
        self, X: Sequence[Sequence[Any]], y: Sequence[Sequence[str]], sample_weight: Any = None
    ) -> float:
        """Token accuracy of :meth:`predict` (a gold tag never seen in training counts
        as an error)."""
        if sample_weight is not None:
            raise ValueError(f"{type(self).__name__}.score takes no sample_weight.")
        sentences = _sentence_list(X, "X")
        gold = _tag_lists(y, sentences)
        codes, _ = self._decode(sentences)
        if codes.shape[0] == 0:
            raise ValueError("X holds no sentence: there is nothing to score.")
        flat, _ = _flat_tags(gold)
        return float(np.mean(self.classes_[codes] == flat))


class TaggerEngine(LinearEngine):
    """The tagger's engine: the linear engine's state and files over sentences -- a
    sentence is an example, its targets ragged tag codes, its epoch the compiled
    structured perceptron -- plus the featurizer in the model's state."""

    estimator: SequenceTagger
    COLUMNS = "tags"

    def encode_targets(self, y: Any) -> TagCodes:
        """Tag lists (of ``classes_``) to their codes; an unknown tag is an error.
        Codes (what :meth:`_begin_call` returns, already checked) pass through."""
        if isinstance(y, TagCodes):
            return y
        return self.estimator._encode(_tag_lists(y, list(y)), self.estimator.classes_)

    def state_size(self, n_features: int) -> tuple[int, int]:
        """``n_features`` observation rows and a row per previous tag (the sentence
        start's is the intercept's); a column per tag."""
        return self.size_for_tags(n_features, self.estimator._n_tags)

    @staticmethod
    def size_for_tags(n_features: int, n_tags: int) -> tuple[int, int]:
        """:meth:`state_size` for ``n_tags`` tags, before the tagger knows them."""
        return n_features + n_tags, n_tags

    def training_data(
        self, X: Any, y: Any, sample_weight: Any = None
    ) -> tuple[TokenFeatures, TagCodes, None]:
        data, codes, _, _ = self.estimator._begin_call(
            X, y, None, incremental=False, reset=True, sample_weight=sample_weight
        )
        return data, codes, None

    def example_rows(self, X: Any) -> tuple[Any, int]:
        """A sentence reads its tokens' feature rows and every transition row."""
        sentence_indptr = np.ascontiguousarray(X.indptr[X.offsets])
        return (np.empty(0), X.indices, sentence_indptr), self.estimator._n_tags + 1

    def run_epoch(
        self,
        state: TrainingState,
        X: Any,
        targets: Any,
        order: np.ndarray,
        *,
        slack: np.ndarray | None = None,
        progress: Callable[[int], object] | None = None,
        sample_weight: np.ndarray | None = None,
        structure_checked: bool = False,
        mistake_log: np.ndarray | None = None,
        raw: bool = False,
    ) -> dict[str, Any]:
        """One epoch of the compiled structured perceptron over the sentences ``order``
        of ``X`` (a :class:`~perceptrons._sequences.TokenFeatures`) with the gold tags
        ``targets`` (a :class:`~perceptrons._sequences.TagCodes`), updating ``state``
        in place. ``progress`` is called with the number of sentences done; the other
        arguments are those of the engine's ``run_epoch``."""
        if sample_weight is not None or (slack is not None and slack.size):
            raise ValueError(f"{type(self).__name__} takes no sample weights nor Δ trick.")
        if not isinstance(X, TokenFeatures) or not isinstance(targets, TagCodes):
            raise ValueError("run_epoch: X must be TokenFeatures and targets TagCodes.")
        weights, aux = state.weights, state.aux
        n_tags = self.estimator._n_tags
        if (
            weights.ndim != 2
            or weights.shape != (X.n_features + n_tags + 1, n_tags)
            or weights.dtype != np.float64
            or not weights.flags.c_contiguous
            or not (aux.shape == weights.shape or aux.shape == (0, 0))
            or aux.dtype != np.float64
            or not aux.flags.c_contiguous
        ):
            raise ValueError(
                f"run_epoch: weights of shape {weights.shape} do not fit {X.n_features} "
                f"features and {n_tags} tags."
            )
        if not structure_checked:
            X.check()
            targets.check(n_tags)
        if not np.array_equal(X.offsets, targets.offsets):
            raise ValueError("run_epoch: the tags do not match the sentences' lengths.")
        _check_viterbi_memory(X.offsets, n_tags)
        order = np.ascontiguousarray(order, dtype=np.int64)
        if order.ndim != 1 or (order.shape[0] and (order.min() < 0 or order.max() >= len(X))):
            raise ValueError(f"run_epoch: order must index the {len(X)} sentences.")
        log = np.empty((0, 2), dtype=np.int64)
        if mistake_log is not None:
            self.check_mistake_log(mistake_log, len(order), progress)
            log = mistake_log
        chunk = len(order) if progress is None else _PROGRESS_SENTENCES
        mistakes = 0
        for begin in range(0, len(order), max(chunk, 1)):
            part = order[begin : begin + chunk]
            wrong, count = _kernels.epoch(
                X.indptr,
                X.indices,
                X.offsets,
                targets.codes,
                part,
                weights,
                aux,
                float(state.count),
                _UPDATES[self.estimator.update],
                float(self.estimator.C),
                log,
            )
            state.count = as_count(count)
            mistakes += int(check_statistic(wrong))
            if progress is not None:
                progress(len(part))
        if raw:
            return {"statistic": float(mistakes), "mistakes": mistakes, "examples": len(order)}
        return self.estimator._epoch_record(mistakes, len(order), mistakes)

    def state_layout(self, values: dict[str, Any]) -> dict[str, _checked.Spec]:
        """What :meth:`import_state` accepts: the weights and ``aux`` for
        ``n_features_in_`` features and ``classes_``, and the featurizer's arrays."""
        rows, n_tags = (
            self.estimator.n_features_in_ + self.estimator._n_tags + 1,
            self.estimator._n_tags,
        )
        averaged = self.config.averaged and values.get("resumable", True) is not False
        layout = self.config.state_class.layout((rows, n_tags), averaged)
        featurizer_values = values.get("featurizer")
        if isinstance(featurizer_values, dict):
            for name, spec in (
                self.estimator._new_featurizer()._codec().state_layout(featurizer_values).items()
            ):
                layout[_FEATURIZER_PREFIX + name] = spec
        return layout

    def export_state(self, resumable: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
        """The training state and the featurizer as arrays and JSON values (see
        the engine's ``export_state`` and :mod:`perceptrons.io.persist`)."""
        arrays, values = super().export_state(resumable=resumable)
        featurizer_arrays, featurizer_values = self.estimator.featurizer_._codec().export_state()
        for name, array in featurizer_arrays.items():
            arrays[_FEATURIZER_PREFIX + name] = array
        values["featurizer"] = featurizer_values
        return arrays, values

    def import_state(self, arrays: dict[str, Any], values: dict[str, Any]) -> None:
        """Rebuild the state written by :meth:`export_state`, every array checked
        against ``n_features_in_`` and ``classes_`` (it may come from an untrusted
        file). Without the featurizer's part (parameter mixing publishing its mixed
        weights) the fitted featurizer is kept."""
        _check_tags(self.estimator.classes_.tolist(), "classes_")
        own = {k: v for k, v in arrays.items() if not k.startswith(_FEATURIZER_PREFIX)}
        featurizer = None
        if "featurizer" in values:
            featurizer_values = values["featurizer"]
            if not isinstance(featurizer_values, dict):
                raise ValueError("the featurizer's state must be a JSON object")
            featurizer = self.estimator._new_featurizer()
            featurizer._codec().import_state(
                {
                    k[len(_FEATURIZER_PREFIX) :]: v
                    for k, v in arrays.items()
                    if k.startswith(_FEATURIZER_PREFIX)
                },
                featurizer_values,
            )
            if featurizer.n_features_out_ != self.estimator.n_features_in_:
                raise ValueError(
                    f"the featurizer makes {featurizer.n_features_out_} features, the "
                    f"tagger takes {self.estimator.n_features_in_}"
                )
        elif "featurizer_" not in self.estimator.__dict__:
            raise ValueError("the tagger's state has no featurizer")
        values = {k: v for k, v in values.items() if k != "featurizer"}
        super().import_state(own, values)
        if featurizer is not None:
            self.estimator.featurizer_ = featurizer
