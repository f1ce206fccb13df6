"""The voted perceptron of Freund & Schapire (1999), with kernels: the learner core.

:class:`VotedPerceptron` here is :class:`perceptrons.VotedPerceptron` without
scikit-learn's face (the same parameters, training, model and files); the algorithm is
documented in :mod:`perceptrons.voted`.

Over 600 lines: the estimator's training verbs, its staged scores (threads over the
compiled passes) and its fitted views read one model, the update sequence.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from perceptrons import _input, _validation
from perceptrons import _params as rules
from perceptrons._engine import run_epochs
from perceptrons._kernels import voted as _voted
from perceptrons.kernel import _gram, _scores
from perceptrons.kernel._store import NO_WEIGHTS
from perceptrons.kernel._training import VotedEpochs, VotedTraining, describe
from perceptrons.kernel._voted_codec import VotedCodec

__all__ = ["VotedPerceptron"]

_RULES = {
    "vote": _voted.RULE_VOTE,
    "average": _voted.RULE_AVERAGE,
    "last": _voted.RULE_LAST,
    "random": _voted.RULE_RANDOM,
}
# Steps of the sequence pass (rows x updates) below which prediction stays in the
# calling thread: about a millisecond of work, more than a thread's start costs.
_STEPS_PER_THREAD = 2**20


def _in_threads(
    score: Callable[[slice], None],
    n_rows: int,
    n_steps: int,
    pool: ThreadPoolExecutor,
    max_threads: int,
) -> None:
    """``score(rows)`` over ``range(n_rows)`` cut into one slice per thread of ``pool``
    (up to ``max_threads``, fewer for little work: ``n_steps`` in all): the compiled
    passes release the GIL, and each row's scores are its own (the same whatever the
    cut)."""
    n_threads = min(max_threads, n_rows, max(1, n_steps // _STEPS_PER_THREAD))
    if n_threads == 1:
        score(slice(0, n_rows))
        return
    bounds = np.linspace(0, n_rows, n_threads + 1).astype(int)
    done = [pool.submit(score, slice(a, b)) for a, b in itertools.pairwise(bounds)]
    for future in done:
        future.result()


class VotedPerceptron(VotedTraining):
    """The voted perceptron's learner core: :class:`perceptrons.VotedPerceptron` without
    scikit-learn (the same parameters, training, model and files)."""

    _rules: ClassVar[dict[str, rules.Rule]] = {
        **VotedTraining._rules,
        "kernel": rules.either(
            rules.one_of("linear", "poly", "rbf", "precomputed"), rules.callable_()
        ),
        "degree": rules.integer(1),
        "gamma": rules.either(rules.one_of("scale", "auto"), rules.real(0.0, inclusive=False)),
        "coef0": rules.finite_real(),
        "prediction": rules.one_of(*_RULES),
        "multiclass": rules.one_of("native", "ovr"),
        "max_epochs": rules.integer(1),
        "shuffle": rules.boolean(),
        "fit_intercept": rules.boolean(),
        # Δ² enters the training scores: bounded so that it is a finite float.
        "delta": rules.Rule(
            "a float in [0, 1e150]", lambda v: rules.real(0.0).accepts(v) and v <= 1e150
        ),
        "batch_size": rules.either(rules.one_of("auto"), rules.integer(1)),
        "cache_size": rules.real(0.0),
        "random_state": rules.random_state(),
        "verbose": rules.integer(0),
        "class_weight": rules.class_weight(),
        "device": rules.Rule(_gram.DEVICE_RULE_TEXT, _gram.device_accepted),
    }

    def __init__(
        self,
        *,
        kernel: str | Callable = "linear",
        degree: int = 3,
        gamma: str | float = "scale",
        coef0: float = 1.0,
        prediction: str = "vote",
        multiclass: str = "native",
        max_epochs: int = 10,
        shuffle: bool = True,
        fit_intercept: bool = True,
        delta: float = 0.0,
        batch_size: int | str = "auto",
        cache_size: float = 256,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
        class_weight: dict[Any, float] | str | None = None,
        device: Any = None,
    ) -> None:
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.prediction = prediction
        self.multiclass = multiclass
        self.max_epochs = max_epochs
        self.shuffle = shuffle
        self.fit_intercept = fit_intercept
        self.delta = delta
        self.batch_size = batch_size
        self.cache_size = cache_size
        self.random_state = random_state
        self.verbose = verbose
        self.class_weight = class_weight
        self.device = device

    # ------------------------------------------------------------------ training
    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> VotedPerceptron:
        """Train for ``max_epochs`` passes over ``(X, y)``, starting from scratch.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Training data, or the (n_samples, n_samples) Gram matrix when
            ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Labels of any type; at least two distinct values.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each example (finite, >= 0), multiplied by ``class_weight`` of its
            class: an update on it steps that many times as far, and it counts that
            many times in the votes. A weight of 0 trains exactly as without the
            example; None gives every example weight 1.

        Returns
        -------
        self : object
            The estimator, holding the update sequence with its votes and the
            support vectors.
        """
        for _ in self.fit_epochs(X, y, sample_weight=sample_weight):
            pass
        return self

    def fit_epochs(
        self,
        X: ArrayLike,
        y: ArrayLike,
        progress: Callable[[int], object] | None = None,
        sample_weight: ArrayLike | None = None,
        *,
        publish_each_epoch: bool = True,
    ) -> Iterator[dict[str, Any]]:
        """Train like :meth:`fit`, pausing after every epoch.

        After each epoch the model is current (``predict`` and the rest work), so the
        caller can evaluate it on development data or stop by leaving the loop.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Training data (the Gram matrix if ``kernel="precomputed"``).
        y : array-like of shape (n_samples,)
            Labels.
        progress : callable, default=None
            Called with the number of examples just processed (once per block or
            epoch), for progress bars.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each example, as for :meth:`fit`.
        publish_each_epoch : bool, default=True
            Accepted as :meth:`AveragedPerceptron.fit_epochs
            <perceptrons.AveragedPerceptron.fit_epochs>` takes it; the update sequence
            is the model, current after every epoch at no cost, either way.

        Yields
        ------
        record : dict
            The epoch's entry of ``history_``.
        """
        self._check_params()
        with self._all_or_nothing():  # a fit that fails leaves the model before it
            backend, X = self._backend(X)
            # Labels and weights as well may come as a device's arrays: they are the host's.
            y, sample_weight = _gram.to_host(y), _gram.to_host(sample_weight)
            data, labels, _, weights = self._begin_call(
                X, y, None, incremental=False, reset=True, sample_weight=sample_weight
            )
            if self.kernel == "precomputed" and data.shape[0] != data.shape[1]:
                raise ValueError(
                    "kernel='precomputed' needs the square Gram matrix of the training data in "
                    f"fit, got shape {data.shape}."
                )
            self._start(data)
            self.random_state_ = _input.check_random_state(self.random_state)
            targets = self._targets(labels)
            call = self._new_call(data, cache=self.max_epochs > 1, backend=backend)
            self.history_ = []
            yield from self._run_epochs(
                VotedEpochs(self, data, targets, call, weights, progress), self.max_epochs
            )

    def partial_fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        classes: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> VotedPerceptron:
        """Run one epoch over ``(X, y)``, extending the update sequence.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            A batch of new training examples (not available with
            ``kernel="precomputed"``: a batch's Gram matrix cannot index earlier
            support vectors).
        y : array-like of shape (n_samples,)
            Its labels.
        classes : array-like of shape (n_classes,), default=None
            Every label the model will ever see; needed on the first call unless that
            batch holds them all.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each example of the batch, as for :meth:`fit`.

        Returns
        -------
        self : object
            The updated estimator.
        """
        self._check_params()
        if self.kernel == "precomputed":
            raise ValueError(
                "partial_fit is not available with kernel='precomputed': the Gram matrix "
                "of one batch does not index the support vectors of another."
            )
        # What the epochs extend or write in place is kept to put it back should the
        # call fail; the rest of the model the call replaces.
        with self._all_or_nothing() as rollback:
            backend, X = self._backend(X)
            # Labels and weights as well may come as a device's arrays: they are the host's.
            y, sample_weight = _gram.to_host(y), _gram.to_host(sample_weight)
            data, labels, first_call, weights = self._begin_call(
                X, y, classes, incremental=True, sample_weight=sample_weight
            )
            if first_call:
                self._start(data)
                self.random_state_ = _input.check_random_state(self.random_state)
                self.history_ = []
            elif self._kernel_name != self._kernel_in_use():
                raise ValueError(
                    f"VotedPerceptron: kernel={self.kernel!r} differs from the kernel the "
                    "support vectors were trained with; call fit to start again."
                )
            else:
                rollback.keep(self._saved_model(data))
            targets = self._targets(labels)
            call = self._new_call(data, cache=False, backend=backend)
            for _ in self._run_epochs(VotedEpochs(self, data, targets, call, weights, None), 1):
                pass
        return self

    def _run_epochs(self, epochs: VotedEpochs, max_epochs: int) -> Iterator[dict[str, Any]]:
        """The one epoch loop over ``epochs``, ``history_`` going on from its last record."""
        return run_epochs(
            epochs,
            max_epochs=max_epochs,
            history=self.history_,
            name=type(self).__name__,
            describe=describe,
            verbose=bool(self.verbose),
        )

    def _codec(self) -> VotedCodec:
        """The model's state as a model file stores it (see :mod:`perceptrons._engine`)."""
        return VotedCodec(self)

    def _mixing_refusal(self) -> str | None:
        """Parameter mixing averages weight vectors; this model is their sequence."""
        return (
            f"{type(self).__name__}: the voted perceptron keeps every intermediate weight "
            "vector, so it cannot be mixed"
        )

    # ---------------------------------------------------------------- prediction
    @property
    def support_vectors_(self) -> Any:
        _input.check_is_fitted(self, "classes_")
        if self.kernel == "precomputed":
            raise AttributeError("with kernel='precomputed' the support vectors are support_")
        assert self._support is not None
        return self._support.matrix()

    @property
    def support_(self) -> np.ndarray:
        _input.check_is_fitted(self, "classes_")
        if self.kernel != "precomputed":
            raise AttributeError("support_ is defined for kernel='precomputed' only")
        assert self._support is not None
        return self._support.matrix()

    @property
    def n_updates_(self) -> int:
        _input.check_is_fitted(self, "classes_")
        return self._updates.size

    @property
    def coef_(self) -> np.ndarray:
        """The final model's weights, shape (n_columns, n_features): linear kernel only.

        One row for binary problems (positive weights push towards ``classes_[1]``), one
        per class otherwise. Other kernels have no weights in input space.
        """
        _input.check_is_fitted(self, "classes_")
        if not self._primal:
            raise AttributeError(
                f"coef_ is only available with kernel='linear', not {self.kernel!r}"
            )
        return (self._weights[:-1].T if self._native else self._weights[:, :-1]).copy()

    @property
    def intercept_(self) -> np.ndarray:
        _input.check_is_fitted(self, "classes_")
        return self._bias.copy()

    def _sequences(self, stages: list[int]) -> list[tuple[np.ndarray, ...]]:
        """The update sequences of the model, with where each stage of ``stages`` (a
        nondecreasing list of numbers of examples seen) ends in them.

        Native: one ``(support, gold, predicted, steps, votes, stage_updates,
        stage_last)``; binary and one-vs-rest: one ``(support, signs, votes,
        stage_updates, stage_last)`` per column. The sequence runs to the last stage;
        votes are the gaps between its mistakes (the last model's: to the end of the
        last stage). Stage ``s`` is the first ``stage_updates[s]`` updates, its last
        model surviving ``stage_last[s]`` (see
        :func:`perceptrons._kernels.voted.staged_scores_binary`).
        """
        updates = self._updates.view
        kept = updates[:, 0] < stages[-1]
        updates = updates[kept]
        # Per update: its step and the weight seen before it (unweighted: 1 and position).
        if self._update_weights is None:
            steps, before = None, updates[:, 0].astype(np.float64)
            ends = [float(n_seen) for n_seen in stages]
        else:
            steps, before = self._update_weights.view[kept].T
            known = dict(zip(self._epoch_ends, self._weight_ends, strict=True))
            known[self._n_seen] = self._weight_seen
            ends = [known[n_seen] for n_seen in stages]

        def staged(mask: np.ndarray | slice) -> tuple[np.ndarray, ...]:
            mine = before[mask]
            votes = np.diff(np.concatenate([[0.0], mine, [ends[-1]]]))
            counts = np.searchsorted(updates[mask, 0], stages, side="left").astype(np.int64)
            last = np.array(
                [end - (mine[n - 1] if n else 0.0) for n, end in zip(counts, ends, strict=True)]
            )
            return votes, counts, last

        if self._native:
            columns = [np.ascontiguousarray(updates[:, k]) for k in (1, 2, 3)]
            native_steps = NO_WEIGHTS if steps is None else np.ascontiguousarray(steps)
            return [(*columns, native_steps, *staged(slice(None)))]
        sequences: list[tuple[np.ndarray, ...]] = []
        for column in range(self._bias.shape[0]):
            mask = updates[:, 2] == column
            mine = updates[mask]
            support = np.ascontiguousarray(mine[:, 1])
            signs = mine[:, 3].astype(np.float64)
            if steps is not None:
                signs = signs * steps[mask]
            sequences.append((support, signs, *staged(mask)))
        return sequences

    def _staged_scores(self, X, stages: list[int]) -> list[np.ndarray]:
        """Decision values after each number of examples seen in ``stages``
        (nondecreasing).

        The kernel between X and the support vectors, the expensive part, is computed
        once per block of rows (on the ``device``'s backend); one pass over the update
        sequence then gives every stage's scores, the blocks' rows split among threads.
        """
        _input.check_is_fitted(self, "classes_")
        self._check_params()
        backend, X = self._backend(X)
        X = _validation.validate_prediction_data(self, X, accept_sparse="csr")
        rule = _RULES[self.prediction]
        bias_sq = 1.0 if self.fit_intercept else 0.0
        n_columns = self._bias.shape[0]
        sequences = self._sequences(stages)
        # Every stage's scores at once: refused before allocation when they cannot fit.
        _validation.check_scores_memory(len(stages) * X.shape[0], n_columns)
        out = np.zeros((len(stages), X.shape[0], n_columns))
        # Every stage draws the same numbers, so "random" picks coincide where models do.
        rng = _input.check_random_state(self.random_state)
        draws = [rng.random_sample(X.shape[0]) for _ in range(len(sequences))]
        assert self._support is not None
        support = self._support.matrix()
        if not backend.is_numpy:
            support = backend.asarray(support)
        rows_per_block = _gram.rows_per_block(self._support.size)
        n_updates = sum(sequence[0].shape[0] for sequence in sequences)
        max_threads = os.cpu_count() or 1
        with ThreadPoolExecutor(max_threads) as pool:
            for start in range(0, X.shape[0], rows_per_block):
                stop = min(start + rows_per_block, X.shape[0])
                with np.errstate(over="ignore", invalid="ignore"):  # checked next
                    on_backend = (
                        X[start:stop] if backend.is_numpy else backend.asarray(X[start:stop])
                    )
                    gram = self._gram(on_backend, support, backend)
                # Every rule reads these kernel values: one that overflowed makes each
                # score of its row inf or NaN (and "vote" would turn NaN into a silent
                # -1). Checked where they are, before they travel.
                if not backend.all_finite(gram):
                    _validation.check_scores(backend.to_numpy(gram), self, first_row=start)
                if not backend.is_numpy and not self._native:
                    # Binary sequences on the device: only the scores travel.
                    for column, (ids, signs, votes, counts, last) in enumerate(sequences):
                        out[:, start:stop, column] = _scores.staged_binary_scores(
                            backend,
                            gram,
                            ids,
                            signs,
                            votes,
                            counts,
                            last,
                            bias_sq,
                            rule,
                            draws[column][start:stop],
                        )
                    continue
                gram = backend.to_numpy(gram)

                def score(rows: slice, gram: np.ndarray = gram, start: int = start) -> None:
                    self._score_rows(
                        gram[rows], sequences, rule, bias_sq, draws, start + rows.start, out
                    )

                n_steps = gram.shape[0] * n_updates
                _in_threads(score, gram.shape[0], n_steps, pool, max_threads)
        return [stage[:, 0] if n_columns == 1 else stage for stage in out]

    def _score_rows(self, gram, sequences, rule, bias_sq, draws, first, out) -> None:
        """Every stage's scores of the rows ``first:`` (their kernel values ``gram``)."""
        rows = slice(first, first + gram.shape[0])
        shared = {"gram": gram, "bias_sq": bias_sq, "rule": rule}
        if self._native:
            ids, gold, predicted, steps, votes, counts, last = sequences[0]
            _voted.staged_scores_native(
                **shared,
                support=ids,
                gold=gold,
                predicted=predicted,
                steps=steps,
                votes=votes,
                stage_updates=counts,
                stage_last=last,
                draws=draws[0][rows],
                out=out[:, rows],
            )
            return
        column_out = np.empty((out.shape[0], gram.shape[0]))
        for column, (ids, signs, votes, counts, last) in enumerate(sequences):
            _voted.staged_scores_binary(
                **shared,
                support=ids,
                signs=signs,
                votes=votes,
                stage_updates=counts,
                stage_last=last,
                draws=draws[column][rows],
                out=column_out,
            )
            out[:, rows, column] = column_out

    def _scores_rows_alone(self) -> bool:
        # "random" draws a model per row, in row order, from random_state on each call:
        # blocks would each start the draws afresh.
        return self.prediction != "random"

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Decision values under the ``prediction`` rule.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples (kernel values against the training points if precomputed).

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: positive predicts ``classes_[1]`` (``"vote"`` gives the vote margin
            in [-1, 1]). Multiclass: ``"vote"`` gives each class's share of the votes.
        """
        _input.check_is_fitted(self, "classes_")
        return _validation.check_scores(self._staged_scores(X, [self._n_seen])[0], self)

    def staged_decision_function(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """Decision values of the model as it stood after each epoch.

        After epoch ``t`` of a fit of ``T`` epochs, the model is exactly the one a fit of
        ``t`` epochs with the same ``random_state`` would give: the update sequence up
        to the end of epoch ``t``. The kernel between X and the support vectors is
        computed once for all epochs. ``partial_fit`` calls count as epochs.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Yields
        ------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            As :meth:`decision_function`, one array per epoch.
        """
        _input.check_is_fitted(self, "classes_")
        for scores in self._staged_scores(X, list(self._epoch_ends)):
            yield _validation.check_scores(scores, self)

    def staged_predict(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """Predicted labels after each epoch (see :meth:`staged_decision_function`).

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples to classify.

        Yields
        ------
        labels : ndarray of shape (n_samples,)
            One array per epoch.
        """
        for scores in self.staged_decision_function(X):
            yield _validation.labels_from_scores(self.classes_, scores)
