"""The training engine's contract, and the one epoch loop every trainer shares.

An estimator is configuration plus the model that is truly its own; how its state is
stored is its *codec*, handed out by ``_codec()`` (every model), and how an online
learner trains is its *engine*, handed out by ``_engine()`` (the online learners only:
:class:`perceptrons.linear._online.OnlineLearner`; the engine is their codec too). What drives
training from outside an estimator -- parameter mixing (:mod:`perceptrons.parallel`),
streaming (:mod:`perceptrons.io.stream`), model files (:mod:`perceptrons.io.persist`)
and the command line -- uses only those, through the protocols declared here (the type
checker holds every engine and codec to them); nothing asks an object what it has:

* :class:`StateCodec` -- every model that a file can hold: its state as arrays and JSON
  values, and the exact layout those arrays must have (checked before any kernel sees
  them: a file is untrusted input);
* :class:`Engine` -- an online learner's engine besides: a fresh training state, targets
  in the kernels' form, one epoch over an order of examples, what an epoch's record says.

The epoch loop
--------------
:func:`run_epochs` is the one loop of every trainer: the serial online learners, the
voted perceptron, the tagger, parameter mixing (an epoch is "run the shards, then mix")
and streaming (an epoch is a pass over a file's chunks). A trainer says what one epoch
is (:class:`Epochs`); the loop does the rest, the same way everywhere: the non-finite
check, ``history_`` and the verbose line, the held-out score, every stopping rule
(:class:`Stopping`) and when the published model is formed. :func:`hold_out` splits off
``validation_fraction`` of the examples for early stopping, the same split for every
trainer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from perceptrons._kernels._rows import NON_FINITE_SCORE
from perceptrons._validation import NonFiniteScores, NonFiniteStep

if TYPE_CHECKING:
    from perceptrons._checked import Spec
    from perceptrons._states import TrainingState

__all__ = [
    "MAX_HISTORY",
    "Engine",
    "Epochs",
    "NonFiniteScores",
    "NonFiniteStep",
    "StateCodec",
    "Stopping",
    "add_record",
    "check_statistic",
    "epochs_recorded",
    "hold_out",
    "non_finite_message",
    "run_epochs",
]


class StateCodec(Protocol):
    """A fitted model's state as a model file holds it (see :mod:`perceptrons.io.persist`)."""

    def check_params(self) -> None:
        """Raise a ValueError unless the estimator's parameters are valid together."""

    def export_state(self, resumable: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
        """The state as arrays and JSON values; ``resumable=False``: only what predicts."""
        ...

    def import_state(self, arrays: dict[str, Any], values: dict[str, Any]) -> None:
        """Rebuild the model from :meth:`export_state`'s arrays, already checked against
        :meth:`state_layout`, and values, checked here."""

    def state_layout(self, values: dict[str, Any]) -> dict[str, Spec]:
        """The exact arrays :meth:`import_state` takes, for the fitted input width and
        classes and the JSON ``values`` (a model saved without its training state has
        fewer)."""
        ...


class Engine(StateCodec, Protocol):
    """An online learner's engine: what parameter mixing and streaming drive."""

    @property
    def averaged(self) -> bool:
        """Whether the model predicts with the mean of its weights."""
        ...

    @property
    def logs_updates(self) -> bool:
        """Whether an epoch can log the examples it updated on (``mistake_log``);
        otherwise every example updates the weights (logistic regression)."""
        ...

    @property
    def dense_changes(self) -> bool:
        """Whether every epoch changes every weight (a prior that decays them all)."""
        ...

    @property
    def delta(self) -> float:
        """The Δ trick's margin (0: no per-example weights)."""
        ...

    @property
    def validation_fraction(self) -> float | None:
        """The share of the examples held out for early stopping (None: none)."""
        ...

    def stopping(self) -> Stopping:
        """The stopping rules of a fit (``early_stopping``, ``n_iter_no_change``)."""
        ...

    def non_finite_cause(self, what: str) -> str | None:
        """What the error says when ``what`` (``"scores"``, ``"weights"``, ``"steps"``)
        became non-finite, when the update rule can say better than "the features are
        too large" (:func:`non_finite_message`); None otherwise."""
        ...

    def mixing_refusal(self) -> str | None:
        """Why parameter mixing cannot train this configuration (None: it can)."""
        ...

    def training_data(
        self, X: Any, y: Any, sample_weight: Any = None
    ) -> tuple[Any, Any, np.ndarray | None]:
        """``(X, labels, weights)`` validated like a first ``fit`` call (which fixes
        ``classes_`` and the input's width), ``weights`` each example's
        ``sample_weight[i] * class_weight[y_i]`` (None when every weight is 1)."""
        ...

    def train_batch(
        self,
        X: Any,
        y: Any,
        classes: Any = None,
        sample_weight: Any = None,
        *,
        checked: bool = False,
    ) -> tuple[float, int, int]:
        """One epoch over a batch of new examples as ``partial_fit`` runs it, without
        forming the published model (streaming's chunks): the kernels' statistic, the
        number of examples and the mistakes; the first batch starts the training state.
        ``checked``: the batch's reader checked its rows (the compiled svmlight
        reader), so a later batch's data checks may be skipped."""
        ...

    def is_finite(self) -> bool:
        """Whether the training state is made of finite numbers (True without one)."""
        ...

    def publish(self, n_iter: int) -> None:
        """Form the published model from the training state, after ``n_iter`` epochs."""

    def encode_targets(self, labels: Any) -> Any:
        """Labels of ``classes_`` to the kernels' targets (indexed by example)."""
        ...

    def n_nonzero(self) -> int | None:
        """How many feature weights of the model the training state holds are nonzero
        (None: no state yet, or a model without weights per feature)."""
        ...

    def check_state_memory(self, n_features: int, copies: int = 1) -> None:
        """Raise a :class:`~perceptrons._memory.MemoryBudgetError` unless ``copies``
        training states for ``n_features`` features (and everything formed from them)
        fit in memory; before any is allocated."""

    def new_state(self, n_features: int) -> TrainingState:
        """Zero weights for ``n_features`` features and the classes of ``classes_``
        (their memory checked first: :meth:`check_state_memory`)."""
        ...

    def training_view(self, X: Any, first_call: bool, weight: float) -> tuple[TrainingState, Any]:
        """The state a training call over ``X`` (weighing ``weight`` over its epochs)
        trains -- the dense state, or a compact state's own over the rows its data
        reaches -- and ``X`` as the kernels then read it; a first call starts it."""
        ...

    def new_slack(self, state: TrainingState, n_samples: int) -> np.ndarray:
        """Zero Δ weights for ``n_samples`` examples (empty without the Δ trick)."""
        ...

    def rows_written(self, X: Any, state: TrainingState, weight: float) -> np.ndarray | None:
        """The sorted rows of ``state`` that epochs over the examples of ``X`` (weighing
        ``weight`` in all, over the epochs) can write -- of the weights, the average
        and per-row statistics -- or None when they can write any (dense input, or a
        rule whose epochs rescale every weight): what a training call keeps to put the
        state back
        (:meth:`perceptrons._states.TrainingState.saved`)."""
        ...

    def example_rows(self, X: Any) -> tuple[Any, int]:
        """The weight rows the examples of ``X`` read, in the form of
        :func:`perceptrons._kernels.mixing.rows_of_examples`, and how many of the last
        rows every example reads."""
        ...

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
        """One epoch of the compiled kernel over ``X[order]``, updating ``state`` in
        place; every size and index checked before the kernel runs."""
        ...

    def epoch_record(self, statistic: float, n_examples: int, mistakes: int) -> dict[str, Any]:
        """The record of ``n_examples`` examples whose kernels' statistics add up to
        ``statistic`` and ``mistakes`` (``run_epoch(..., raw=True)``)."""
        ...

    def describe(self, record: dict[str, Any]) -> str:
        """An epoch's verbose line."""
        ...

    def publish_state(self, state: TrainingState, n_iter: int) -> None:
        """Make the estimator a fitted model of ``state`` (a new one it now owns) after
        ``n_iter`` epochs."""


class Epochs(Protocol):
    """One training run as the epoch loop sees it: what an epoch is, and what the
    estimator's model becomes."""

    def run_epoch(self, epoch: int) -> dict[str, Any]:
        """Train one epoch (the ``epoch``-th of this run, from 1); its record."""
        ...

    def is_finite(self) -> bool:
        """Whether the model is still made of finite numbers."""
        ...

    def publish(self, n_iter: int) -> None:
        """Form the estimator's model (``coef_``...) after ``n_iter`` epochs of this run."""

    def score(self, validation: tuple[Any, ...]) -> float:
        """The published model's score on held-out ``(X, y[, sample_weight])``."""
        ...


@dataclass
class Stopping:
    """The stopping rules of ``early_stopping``: with held-out data, stop once its
    score has not improved for ``n_iter_no_change`` epochs; without, stop after an
    epoch without updates (without mistakes, for the records that count no updates)."""

    early_stopping: bool
    n_iter_no_change: int = 5
    best: float = -np.inf
    epochs_without_gain: int = 0

    def stop(self, record: dict[str, Any]) -> bool:
        if not self.early_stopping:
            return False
        score = record.get("validation_score")
        if score is None:
            # An epoch without updates left the model as it was: it has converged. The
            # margin rules may still update after an epoch without mistakes (margins
            # below their target), so they stop on updates, as they always did (their
            # "mistakes" counted updates until both were recorded).
            return record.get("updates", record.get("mistakes")) == 0
        if score > self.best:
            self.best, self.epochs_without_gain = score, 0
            return False
        self.epochs_without_gain += 1
        return self.epochs_without_gain >= self.n_iter_no_change


def hold_out(
    n_samples: int, fraction: float, stratify: Any, rng: np.random.RandomState
) -> tuple[np.ndarray, np.ndarray]:
    """``(train_rows, held_out_rows)``: ``fraction`` of ``n_samples`` examples split off
    for early stopping, stratified by ``stratify``; the training rows sorted (they keep
    their order). Draws one number from ``rng``, before the epochs' shuffles.
    scikit-learn's split, imported only for early stopping: the command line's other
    runs import no scikit-learn."""
    from sklearn.model_selection import train_test_split

    train_rows, held_out = train_test_split(
        np.arange(n_samples),
        test_size=fraction,
        stratify=stratify,
        random_state=rng.randint(np.iinfo(np.int32).max),
    )
    return np.sort(train_rows), held_out


#: The most records a ``history_`` keeps: the most recent ones (their ``epoch`` or
#: ``iteration`` still counts from the first). One record per epoch would otherwise grow
#: without bound over many ``partial_fit`` calls or epochs -- in memory and in a model
#: file's metadata, which :data:`perceptrons.io.persist.MAX_META_BYTES` bounds.
MAX_HISTORY = 10_000


def add_record(history: list[dict[str, Any]], record: dict[str, Any]) -> None:
    """Append ``record`` to ``history``, dropping the oldest records beyond
    :data:`MAX_HISTORY`."""
    history.append(record)
    if len(history) > MAX_HISTORY:
        del history[: len(history) - MAX_HISTORY]


def epochs_recorded(history: list[dict[str, Any]], key: str = "epoch") -> int:
    """The number of the last record of ``history`` (its ``key``: a trimmed history
    holds fewer records than that), or how many records it holds when that is not a
    count (a history loaded from a file of an older version, or without the key)."""
    if history:
        last = history[-1].get(key)
        if isinstance(last, int) and not isinstance(last, bool) and last >= len(history):
            return last
    return len(history)


def check_statistic(statistic: Any) -> Any:
    """A training kernel's statistic, or :class:`NonFiniteScores` when the kernel
    stopped at a non-finite score, :class:`NonFiniteStep` at a non-finite step (see
    :mod:`perceptrons._kernels._rows`)."""
    # The statistics are never negative otherwise: the one comparison serves the hot
    # path, the two statuses (NON_FINITE_SCORE, and NON_FINITE_STEP below it) the rare.
    if statistic < 0:
        if statistic == NON_FINITE_SCORE:
            raise NonFiniteScores("a training score became non-finite")
        raise NonFiniteStep("an update's step became non-finite")
    return statistic


def non_finite_message(
    name: str, epoch: int, what: str = "weights", cause: str | None = None
) -> str:
    """Why training stopped on ``what`` (weights, scores, steps) that overflowed, and
    what to do about it: ``cause`` when the update rule says it
    (:meth:`Engine.non_finite_cause`), else the features' scale."""
    if cause is None:
        cause = (
            "the features are too large for the step; scale the features (e.g. "
            "StandardScaler/MaxAbsScaler) or lower learning_rate/C"
        )
    return (
        f"{name}: {what} became non-finite (inf/NaN) in epoch {epoch}: {cause}. The "
        "estimator is left as it was before this call (no silently wrong model)."
    )


def run_epochs(
    epochs: Epochs,
    *,
    max_epochs: int,
    history: list[dict[str, Any]],
    name: str,
    heading: str | None = None,
    describe: Callable[[dict[str, Any]], str] | None = None,
    verbose: bool = False,
    stopping: Stopping | None = None,
    validation: tuple[Any, ...] | Callable[[], tuple[Any, ...] | None] | None = None,
    publish_each_epoch: bool = True,
    cause: Callable[[str], str | None] | None = None,
) -> Iterator[dict[str, Any]]:
    """The epoch loop: up to ``max_epochs`` epochs of ``epochs``, yielding each record.

    After every epoch the model must still be finite: weights that overflowed to inf or
    NaN stop training with a ValueError rather than leave a model that predicts garbage
    (the caller's :meth:`~perceptrons._base.Trainable._all_or_nothing` then puts the
    estimator back as it was before the call); so does a score that overflowed during
    the epoch (the kernels stop there, :class:`NonFiniteScores`), even when the weights
    stayed finite, and a published model whose weights give non-finite scores to inputs
    within the range of its training inputs ([-1, 1] at least).
    Each record is appended to ``history`` numbered on from its last (``partial_fit``
    adds to the same history; at most :data:`MAX_HISTORY` records are kept, the most
    recent), with the held-out score
    (``validation_score``) when ``validation`` is given; ``verbose`` prints the line
    ``describe`` makes of it, headed by ``heading`` (else ``name``, the estimator's).
    The model is published after every epoch with ``publish_each_epoch`` or held-out
    data, else once: after the last epoch, or when the caller leaves the loop early
    (the generator is closed). ``validation`` may be a function that gives
    the held-out data after each epoch (a stream gathers it during its first pass).
    ``cause`` (:meth:`Engine.non_finite_cause`) words the non-finite errors of an update
    rule that can say why better than the features' scale.
    """
    stopping = Stopping(False) if stopping is None else stopping

    def overflowed(what: str) -> ValueError:
        said = cause(what) if cause is not None else None
        return ValueError(non_finite_message(name, epoch, what, said))

    def publish(n_iter: int) -> None:
        # A model whose weights give non-finite scores to the inputs it must score
        # (check_linear_model) stops training as a non-finite score does.
        try:
            epochs.publish(n_iter)
        except NonFiniteScores:
            raise overflowed("scores") from None

    for n_iter in range(1, max_epochs + 1):
        epoch = epochs_recorded(history) + 1
        try:
            record = epochs.run_epoch(n_iter)
        except NonFiniteScores as error:
            raise overflowed("steps" if isinstance(error, NonFiniteStep) else "scores") from None
        held_out = validation() if callable(validation) else validation
        if not epochs.is_finite():
            raise overflowed("weights")
        if held_out is not None or publish_each_epoch:
            publish(n_iter)
        if held_out is not None:
            record["validation_score"] = float(epochs.score(held_out))
        record = {"epoch": epoch, **record}
        add_record(history, record)
        if verbose:
            text = describe(record) if describe is not None else str(record)
            print(f"{heading or name} epoch {epoch}: {text}", flush=True)
        stop = stopping.stop(record)
        published = publish_each_epoch or held_out is not None
        if not published and (stop or n_iter == max_epochs):
            publish(n_iter)
            published = True
        try:
            yield record
        except GeneratorExit:
            # The caller left the loop: the model it keeps is the one trained so far,
            # never the one before this call.
            if not published:
                publish(n_iter)
            raise
        if stop:
            break
