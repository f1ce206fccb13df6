"""The online learners: one training path behind every one of them.

:class:`OnlineLearner` is the one training path of every online learner (the linear
classifiers and :class:`~perceptrons.SequenceTagger`): ``fit`` resets the state (unless
``warm_start``) and ``partial_fit`` does not; both then go through
:meth:`~OnlineLearner._partial_fit`: parameters checked, input validated, labels fixed
on the first call, then the one epoch loop (:func:`perceptrons._engine.run_epochs`)
over the engine's compiled epochs. :class:`OnlineLinearClassifier` is the base of
:class:`~perceptrons.Perceptron`, :class:`~perceptrons.AveragedPerceptron` and
:class:`~perceptrons.LogisticRegressionSGD`: a family member is configuration plus what
is truly its own, its parameters, its state class, its compiled kernel
(:meth:`OnlineLinearClassifier._epoch_kernel`) and how an epoch's statistic reads. What
trains it from outside (parameter mixing, streaming, model files) goes through its
engine, :meth:`OnlineLearner._engine` (see :mod:`perceptrons._engine`). The shared
faces of every estimator (parameters checked on every call, the lifecycle) are in
:mod:`perceptrons._base`.

Over 600 lines: the one training path (its rollback included) and its serial epochs,
which the tagger shares, sit beside the linear classifiers' public verbs and their
numpydoc; split, each half would import the other's private parts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from perceptrons import _input, _validation
from perceptrons import _params as rules
from perceptrons._base import IncrementalClassifier, Trainable
from perceptrons._engine import Engine, hold_out, run_epochs
from perceptrons._linear import SparseCoefMixin, linear_scores
from perceptrons._states import (
    CompactState,
    Frozen,
    PerceptronState,
    TrainingState,
)
from perceptrons.linear._online_engine import LinearConfig, LinearEngine

__all__ = ["OnlineLearner", "OnlineLinearClassifier"]


class OnlineLearner(Trainable):
    """The one training path of the online learners (see the module).

    A member supplies ``_begin_call`` (its input checked and, on a first call, its
    labels fixed), ``_engine()``, ``_publish`` (the model formed from the state) and
    the parameters read here: ``max_epochs``, ``shuffle``, ``random_state``,
    ``verbose`` and, where it has them, ``warm_start``, ``early_stopping``,
    ``validation_fraction``, ``n_iter_no_change`` and ``delta``.
    """

    _rules: ClassVar[dict[str, rules.Rule]] = {
        "max_epochs": rules.integer(1),
        "shuffle": rules.boolean(),
        "random_state": rules.random_state(),
        "verbose": rules.integer(0),
    }

    #: The training options a member may declare as parameters, and their values for
    #: one that does not (kept off its public face: see :meth:`_option`).
    _options: ClassVar[dict[str, Any]] = {
        "warm_start": False,
        "early_stopping": False,
        "validation_fraction": None,
        "n_iter_no_change": 5,
        "delta": 0.0,
    }

    max_epochs: int
    shuffle: bool
    random_state: int | np.random.RandomState | None
    verbose: int

    n_iter_: int
    history_: list[dict[str, Any]]
    random_state_: np.random.RandomState

    @property
    def _state(self) -> TrainingState | None:
        """The training state, while the model can train on (else None): a compact
        state's own, over its rows."""
        lifecycle = self._lifecycle
        if isinstance(lifecycle, CompactState):
            return lifecycle.state
        return lifecycle if isinstance(lifecycle, TrainingState) else None

    #: Whether training may keep the state in the rows the data reaches
    #: (:meth:`~perceptrons.linear._online_engine.LinearEngine.training_view`): None
    #: decides by size, True whenever a call allows it, False never (a private switch:
    #: the tests set it on an instance to compare with the dense state).
    _touched_rows: bool | None = False

    #: The family's training state.
    _state_class: ClassVar[type[TrainingState]] = TrainingState
    #: Whether the kernels can log the examples they updated on (``mistake_log``);
    #: otherwise (logistic regression) every example updates the weights.
    _logs_updates: ClassVar[bool] = False

    @property
    def _dense_changes(self) -> bool:
        """Whether every epoch changes every weight (a prior that decays them all)."""
        return False

    def _example_rows_only(self, state: TrainingState, weight: float) -> bool:
        """Whether epochs over examples weighing ``weight`` write only their rows."""
        return not self._dense_changes

    @property
    def _averaged(self) -> bool:
        """Whether the model predicts with the mean of its weights."""
        raise NotImplementedError

    # ------------------------------------------------------------- the members' hooks
    def _targets(self, codes: np.ndarray) -> np.ndarray:
        """Class codes to the kernel's targets (binary: one float per example)."""
        raise NotImplementedError

    def _epoch_kernel(
        self, state: TrainingState, multiclass: bool, slack: np.ndarray
    ) -> tuple[Callable[..., tuple[Any, ...]], dict[str, Any]]:
        """``(kernel, arguments)``: the compiled epoch and its family's own arguments.
        The kernel returns ``(updates, mistakes, count)``, or ``(statistic, count)``
        for a family that counts no mistakes (logistic regression's log-loss)."""
        raise NotImplementedError

    def _epoch_record(self, statistic: float, n_examples: int, mistakes: int) -> dict[str, Any]:
        """An epoch's ``history_`` record from the kernels' summed statistic and mistakes."""
        raise NotImplementedError

    def _describe(self, record: dict[str, Any]) -> str:
        """The verbose line of an epoch."""
        raise NotImplementedError

    def _non_finite_cause(self, what: str) -> str | None:
        """:meth:`perceptrons._engine.Engine.non_finite_cause` (None: the usual words)."""
        return None

    def _linear_config(self) -> LinearConfig:
        """The configuration the engine reads
        (:class:`~perceptrons.linear._online_engine.LinearConfig`), resolved once per
        engine from the parameters and the family's hooks."""
        return LinearConfig(
            name=type(self).__name__,
            averaged=self._averaged,
            logs_updates=self._logs_updates,
            dense_changes=self._dense_changes,
            example_rows_only=self._example_rows_only,
            delta=float(self._option("delta")),
            early_stopping=bool(self._option("early_stopping")),
            n_iter_no_change=self._option("n_iter_no_change"),
            validation_fraction=self._option("validation_fraction"),
            shuffle=bool(self.shuffle),
            state_class=self._state_class,
            epoch_kernel=self._epoch_kernel,
            targets=self._targets,
            epoch_record=self._epoch_record,
            describe=self._describe,
            non_finite_cause=self._non_finite_cause,
        )

    def _engine(self) -> Engine:
        """The training machinery over this estimator (see :mod:`perceptrons._engine`)."""
        raise NotImplementedError

    def _mixing_refusal(self) -> str | None:
        """The engine trains shards: every configuration mixes unless it says why not."""
        return None

    def _codec(self) -> Engine:
        """The engine is also the model's codec (an :class:`~perceptrons._engine.Engine`
        is a :class:`~perceptrons._engine.StateCodec`)."""
        return self._engine()

    @property
    def resumable(self) -> bool:
        """Whether the model holds the training state to continue exactly (after
        ``densify()``, for a sparsified one)."""
        _input.check_is_fitted(self, "coef_")
        return isinstance(self._lifecycle, TrainingState | CompactState)

    def _is_first_call(self) -> bool:
        """True until training has state to continue (``fit`` resets it)."""
        return self._state is None

    def _saved_model(self, X: Any = None) -> Callable[[], None]:
        state = self._state  # whole: a call over known data keeps fewer rows (_partial_fit)
        return super()._saved_model(X) if state is None else state.saved()

    def _option(self, name: str) -> Any:
        """A training option: the member's parameter, or its value when it has none."""
        return self.__dict__.get(name, self._options[name])

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
        """The call's input checked, ``(X, y, first_call, weights)`` (see
        :meth:`perceptrons._base.IncrementalClassifier._begin_call`)."""
        raise NotImplementedError

    def _publish(self, rows: np.ndarray | None = None) -> None:
        """Form the published model (``coef_``...) from the training state; ``rows``,
        when given, hold every nonzero row of the state (see
        :meth:`OnlineLinearClassifier._publish`)."""
        raise NotImplementedError

    def _fit(
        self,
        X: Any,
        y: Any,
        *,
        progress: Callable[[int], object] | None,
        publish_each_epoch: bool,
        sample_weight: ArrayLike | None = None,
        validation: tuple[Any, ...] | None = None,
    ) -> Iterator[dict[str, Any]]:
        yield from self._partial_fit(
            X,
            y,
            None,
            epochs=self.max_epochs,
            incremental=False,
            reset=not self._option("warm_start"),
            progress=progress,
            publish_each_epoch=publish_each_epoch,
            sample_weight=sample_weight,
            validation=validation,
        )

    def _partial_fit(
        self,
        X: Any,
        y: Any,
        classes: Any,
        *,
        epochs: int,
        incremental: bool,
        reset: bool = False,
        progress: Callable[[int], object] | None = None,
        publish_each_epoch: bool = True,
        sample_weight: ArrayLike | None = None,
        validation: tuple[Any, ...] | None = None,
    ) -> Iterator[dict[str, Any]]:
        """The one training path: ``epochs`` epochs over ``(X, y)`` from the current state.

        ``incremental`` (``partial_fit``): one call is one batch of new examples, so the
        Δ features start from zero and early stopping does not apply. ``reset``
        (``fit`` without ``warm_start``): start from zero weights. A call that raises
        leaves the estimator as it was (``_all_or_nothing``). Each example weighs
        ``sample_weight[i] * class_weight[y_i]`` (validated once, here).

        ``validation``: held-out ``(X, y)`` given by the caller (a development set), scored
        after every epoch (``validation_score`` in ``history_``) and, with
        ``early_stopping``, used instead of splitting off ``validation_fraction`` of the
        training data.
        """
        with self._all_or_nothing() as rollback:  # keeps what the epochs write in place
            X, y, first_call, weights = self._begin_call(
                X, y, classes, incremental=incremental, reset=reset, sample_weight=sample_weight
            )
            engine = self._engine()
            continued = None if first_call else self._state
            if continued is not None and continued.averaged != self._averaged:
                raise ValueError(
                    f"{type(self).__name__}: average={self._averaged!r} differs from the "
                    "state being continued; call fit to start again."
                )
            targets = engine.encode_targets(y)
            if first_call:
                self.history_ = []
            if first_call or not incremental:
                # Every fit draws its shuffles afresh from random_state, warm started or
                # not; partial_fit goes on drawing from its first call's generator.
                self.random_state_ = _input.check_random_state(self.random_state)
            rng = self.random_state_
            seen = X.shape[0] if weights is None else float(weights.sum())
            # X_train: X as the kernels read it, renumbered to a compact state's rows.
            state, X_train = engine.training_view(X, first_call, epochs * seen)
            written = engine.rows_written(X_train, state, epochs * seen)
            if not first_call:  # a new state is put back by forgetting it
                rollback.keep(state.saved(written))
            state.note_inputs(X)

            train_rows = np.arange(X.shape[0])
            fraction = engine.validation_fraction
            if not incremental and validation is None and fraction is not None:
                train_rows, rows = hold_out(X.shape[0], fraction, targets, rng)
                validation = (X[rows], y[rows])
                if weights is not None:
                    validation += (weights[rows],)
            slack = engine.new_slack(state, X.shape[0])
            if not incremental and engine.delta > 0:
                # fit's examples keep their Δ features over its epochs and, with warm_start,
                # over later fits on as many examples (a copy: the state's stay as they were).
                assert isinstance(state, PerceptronState)  # only perceptrons have delta
                if state.slack is not None and state.slack.shape[0] == X.shape[0]:
                    slack = state.slack.copy()
                state.slack = slack

            self.n_iter_ = 0
            model_rows = _rows_to_publish(state, X_train, fresh=first_call)
            epochs_of = _SerialEpochs(
                self,
                engine,
                state,
                X_train,
                targets,
                train_rows,
                slack,
                weights,
                progress,
                model_rows,
            )
            epochs_of.written = written
            yield from run_epochs(
                epochs_of,
                max_epochs=epochs,
                history=self.history_,
                name=type(self).__name__,
                describe=engine.describe,
                verbose=bool(self.verbose),
                stopping=engine.stopping() if not incremental else None,
                validation=validation,
                publish_each_epoch=publish_each_epoch,
                cause=engine.non_finite_cause,
            )


def _rows_to_publish(state: TrainingState, X: Any, fresh: bool) -> np.ndarray | None:
    """The rows of ``state`` that epochs over ``X`` can leave nonzero: the columns ``X``
    holds, the rows already in use (none in a ``fresh`` state) and the intercept's --
    a kernel writes only the rows of an example's features and the intercept's. None
    (every row) for dense or other non-CSR input, which may touch them all, and when
    those rows are over a quarter of the model: forming the whole model then costs less
    than gathering and scattering them (the same numbers either way)."""
    if not (sp.issparse(X) and X.format == "csr"):
        return None
    n_rows = state.weights.shape[0]
    # A mask over the rows, O(nnz + rows): np.unique's hashing of the indices cost a
    # sixth of a 20 Newsgroups fit.
    used = np.zeros(n_rows, dtype=bool)
    used[X.indices[: X.indptr[-1]]] = True
    used[n_rows - 1] = True
    if not fresh:
        used[state.rows_in_use()] = True
    rows = np.flatnonzero(used)
    return None if 4 * rows.shape[0] > n_rows else rows


class _SerialEpochs:
    """An in-memory fit's epochs (:class:`perceptrons._engine.Epochs`): the engine's
    compiled epoch over the training rows, shuffled afresh each epoch; the model is
    published on ``model_rows`` only (:func:`_rows_to_publish`; None: every row)."""

    written: np.ndarray | None = None  # the rows the epochs can write (None: any)

    def __init__(
        self,
        estimator: OnlineLearner,
        engine: Engine,
        state: TrainingState,
        X: Any,
        targets: Any,
        rows: np.ndarray,
        slack: np.ndarray,
        weights: np.ndarray | None,
        progress: Callable[[int], object] | None,
        model_rows: np.ndarray | None = None,
    ) -> None:
        self.estimator, self.engine, self.state = estimator, engine, state
        self.X, self.targets, self.rows = X, targets, rows
        self.slack, self.weights, self.progress = slack, weights, progress
        self.model_rows = model_rows

    def run_epoch(self, epoch: int) -> dict[str, Any]:
        estimator = self.estimator
        rows = self.rows
        order = estimator.random_state_.permutation(rows) if estimator.shuffle else rows
        record = self.engine.run_epoch(
            self.state,
            self.X,
            self.targets,
            order,
            slack=self.slack,
            progress=self.progress,
            sample_weight=self.weights,
            structure_checked=True,  # by _begin_call's validation, once per call
        )
        # On the rows the model is published on (None: those in use): what the epoch
        # costs already, not the whole of a hashed model.
        record["n_nonzero"] = self.state.n_nonzero(self.model_rows)
        return record

    def is_finite(self) -> bool:
        # Only where the epochs can have written (the state was finite before them).
        return self.state.is_finite(self.written)

    def publish(self, n_iter: int) -> None:
        self.estimator.n_iter_ = n_iter
        self.estimator._publish(self.model_rows)

    def score(self, validation: tuple[Any, ...]) -> float:
        estimator: Any = self.estimator  # a classifier or the tagger: each scores
        return float(estimator.score(*validation))


class OnlineLinearClassifier(SparseCoefMixin, IncrementalClassifier, OnlineLearner):
    """The shared base: subclasses set the class attributes and the kernel hooks.

    Parameters shared by every member are ``max_epochs``, ``shuffle``,
    ``fit_intercept``, ``random_state`` and ``verbose``. A member without early stopping,
    warm start or the Δ trick inherits the class attributes of
    :class:`OnlineLearner`, which keep them off.
    """

    _rules: ClassVar[dict[str, rules.Rule]] = {
        **OnlineLearner._rules,
        "fit_intercept": rules.boolean(),
    }
    fit_intercept: bool
    #: None before training, then the state trained, the compact state of a model
    #: sparsified exactly, or a frozen model.
    _lifecycle: TrainingState | CompactState | Frozen | None = None
    _touched_rows: bool | None = None
    coef_: Any  # ndarray, or scipy.sparse.csr_matrix after sparsify()
    intercept_: np.ndarray

    def _continuation_problem(self) -> str | None:
        # A compact state trains on as it is (a sparsified model's too).
        if isinstance(self._lifecycle, CompactState):
            return None
        return super()._continuation_problem()

    def _engine(self) -> LinearEngine:
        return LinearEngine(self)

    def _shed_state(self, pruned_at: float | None) -> None:
        lifecycle = self._lifecycle
        if isinstance(lifecycle, TrainingState):
            lifecycle = CompactState.of(lifecycle)
        if pruned_at is None:
            self._lifecycle = lifecycle
            return
        if isinstance(lifecycle, CompactState):
            self._lifecycle = Frozen(lifecycle.state.count, pruned_at)
        else:
            seen = lifecycle.seen if isinstance(lifecycle, Frozen) else 0
            self._lifecycle = Frozen(seen, pruned_at)

    def _restore_state(self) -> bool:
        compact = self._lifecycle
        if not isinstance(compact, CompactState):
            return False
        # The dense state and the model published from it: estimated before any is made.
        self._engine().check_state_shape(compact.n_rows - 1, compact.state.weights[:1].size)
        self._lifecycle = compact.expand()
        self._publish(compact.rows)  # every nonzero row, the intercept's last
        return True

    # ------------------------------------------------------------------ training
    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> OnlineLinearClassifier:
        """Train for up to ``max_epochs`` passes over ``(X, y)``.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Training data. Sparse input is never densified. On sparse CSR input whose
            features are at most a quarter of ``n_features``, a model whose dense
            training state would take 16 MiB or more (a hashed text model: ``2**20``
            features) is trained in the rows of those features only, when its update
            rule writes nowhere else: bit for bit the same model, published as after
            :meth:`sparsify` (``coef_`` a CSR matrix), which ``partial_fit`` and a
            warm-started ``fit`` continue without :meth:`densify` (see
            :mod:`perceptrons.linear._online_engine`).
        y : array-like of shape (n_samples,)
            Labels of any type; at least two distinct values.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each example (finite, >= 0), multiplied by ``class_weight`` of its
            class: its update step is that many times as large and it counts that many
            times in an average. A weight of 0 trains exactly as without the example;
            None gives every example weight 1.

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        ValueError
            On invalid input and when the weights or scores overflow to inf or NaN
            during training. Whatever it raises, a call leaves the estimator as it
            was before it (unfitted, before a first one).
        """
        for _ in self._fit(
            X, y, progress=None, publish_each_epoch=False, sample_weight=sample_weight
        ):
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

        Exactly the training of ``fit`` (same shuffles, early stopping, Δ trick); after
        each epoch the model (``coef_``, ``intercept_``, ``predict``...) is current, so
        the caller can evaluate it on development data, log or plot, or stop early by
        leaving the loop. With ``publish_each_epoch=False`` the model is formed only
        once, as ``fit`` forms it: after the last epoch, or when the caller leaves the
        loop; the records (mistakes, loss) still come after every epoch.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Labels.
        progress : callable, default=None
            Called with the number of examples just processed, several times per epoch
            on large data (for progress bars).
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each example, as for :meth:`fit`.
        publish_each_epoch : bool, default=True
            Form the model after every epoch. False saves forming it (for a hashed
            model, ``n_features x n_classes`` numbers) when nothing reads the model
            between epochs; the model read between epochs is then whatever it was
            before the call (none, for a first fit). The final model is the same
            either way.

        Yields
        ------
        record : dict
            The epoch's entry of ``history_``.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from perceptrons import AveragedPerceptron
        >>> X, y = load_iris(return_X_y=True)
        >>> model = AveragedPerceptron(max_epochs=3, random_state=0)
        >>> [record["epoch"] for record in model.fit_epochs(X, y)]
        [1, 2, 3]
        """
        yield from self._fit(
            X,
            y,
            progress=progress,
            publish_each_epoch=publish_each_epoch,
            sample_weight=sample_weight,
        )

    def partial_fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        classes: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> OnlineLinearClassifier:
        """Run one epoch over ``(X, y)``, continuing from the current state.

        An averaged model stays the exact mean over every example seen by every ``fit``
        and ``partial_fit`` call. A call that raises leaves everything as it was. As
        with :meth:`fit`, a first call on sparse input may start a state in the rows
        its features reach (``coef_`` then a CSR matrix); later calls grow it to the
        features they bring while those stay at most half of ``n_features``.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            A batch of training data.
        y : array-like of shape (n_samples,)
            Its labels.
        classes : array-like of shape (n_classes,), default=None
            Every label the model will ever see. Required on the first call unless
            that first batch already holds every label; ignored afterwards.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Weight of each example of the batch, as for :meth:`fit`.

        Returns
        -------
        self : object
            The updated estimator.
        """
        for _ in self._partial_fit(
            X, y, classes, epochs=1, incremental=True, sample_weight=sample_weight
        ):
            pass
        return self

    def _publish(self, rows: np.ndarray | None = None) -> None:
        """Expose the current model as scikit-learn's ``coef_`` and ``intercept_``.

        ``rows``: sorted rows of the state, the intercept's (the last) among them, that
        hold every nonzero weight and aux entry; the model is then formed and checked
        on them only (:meth:`~perceptrons._states.TrainingState.model_on`), bit for bit
        the whole model. A compact state publishes ``coef_`` as a CSR matrix of its
        nonzero weights, as after ``sparsify()``."""
        lifecycle = self._lifecycle
        if isinstance(lifecycle, CompactState):
            with np.errstate(over="ignore", invalid="ignore"):  # checked next
                coef, intercept = lifecycle.published()
            bound = lifecycle.state.input_bound
            _validation.check_linear_model(coef, intercept, self, bound)
            self.coef_, self.intercept_ = coef, intercept
            return
        state = self._state
        assert state is not None  # called once training has a state
        if rows is not None and not state.zero_rows_stay_zero():
            rows = None
        with np.errstate(over="ignore", invalid="ignore"):  # checked below
            model = state.model_on(rows)
        if model.ndim == 1:
            model = model[:, np.newaxis]
        # The other rows are zeros: the check's sums over the rows alone are the same.
        checked = model if rows is None else model[rows]
        _validation.check_linear_model(checked[:-1].T, checked[-1], self, state.input_bound)
        # coef_ is a transposed view, so that coef_.T, which prediction multiplies by,
        # is C-contiguous: scipy's sparse product then needs no copy.
        self.coef_ = model[:-1].T
        self.intercept_ = model[-1].copy()

    # ---------------------------------------------------------------- prediction
    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Scores ``w·x + b``: shape (n_samples,) for binary, (n_samples, n_classes) else.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For binary models, positive scores predict ``classes_[1]``.
        """
        _input.check_is_fitted(self, "coef_")
        X = _validation.validate_prediction_data(self, X)
        scores = linear_scores(X, self.coef_, self.intercept_, self)
        return scores.ravel() if scores.shape[1] == 1 else scores
