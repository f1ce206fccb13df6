"""The mixing algorithm itself, run in threads: what a shard sends, how it is mixed.

Parameter mixing exchanges only the weight rows an epoch changed; these tests pin that
down against plain simulations of the algorithm, against the dense exchange, and
against the serial fit (one shard is it, bit for bit). The Dask runner is tested in
``test_distributed.py``.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_classification

from perceptrons import AveragedPerceptron, Perceptron
from perceptrons._kernels.mixing import rows_of_examples, sorted_rows_of_examples, union_rows
from perceptrons.logistic import LogisticRegressionSGD
from perceptrons.parallel import _shards, mix_threads
from perceptrons.parallel._mixing import Training, array_shards, mixing_refusal
from perceptrons.parallel._shards import ShardData, ShardTrainer, Start

TOL = {"rtol": 1e-10, "atol": 1e-10}

# Every family the kernels drive, with the settings that change what a shard sends.
FAMILIES = [
    Perceptron(),
    AveragedPerceptron(),
    AveragedPerceptron(update="pa-i", C=0.5),
    LogisticRegressionSGD(learning_rate=0.05),
    LogisticRegressionSGD(learning_rate=0.05, average=True),
    LogisticRegressionSGD(learning_rate=0.05, average=True, l2=0.01),
    # Each shard keeps its own per-weight statistics; the weights are mixed.
    AveragedPerceptron(update="arow", update_params={"r": 0.5}),
]
IDS = [
    "perceptron",
    "averaged",
    "averaged-pa-i",
    "logistic",
    "logistic-avg",
    "logistic-l2",
    "averaged-arow",
]


def _fresh(estimator, **params):
    return type(estimator)(**{**estimator.get_params(), **params})


def _text_like(n_classes=3, n_samples=240, n_features=400, seed=0):
    """Sparse rows over many features: an epoch touches only some of them."""
    rng = np.random.RandomState(seed)
    X = sp.random(n_samples, n_features, density=8 / n_features, random_state=rng, format="csr")
    X.data = np.round(X.data * 3, 2) + 0.5
    w = rng.normal(size=(n_features, n_classes))
    y = np.argmax(X @ w + rng.normal(scale=0.3, size=(n_samples, n_classes)), axis=1)
    return X, y


def _dense(n_classes=2, n_samples=150, seed=0):
    X, y = make_classification(
        n_samples, 10, n_informative=5, n_classes=n_classes, n_clusters_per_class=1,
        random_state=seed,
    )  # fmt: skip
    X = np.round(X, 3)
    X[np.abs(X) < 0.4] = 0.0
    return X, y


def _same(a, b):
    assert_array_equal(a.coef_, b.coef_)
    assert_array_equal(a.intercept_, b.intercept_)


# -------------------------------------------------------------- one shard is serial
@pytest.mark.parametrize("estimator", FAMILIES, ids=IDS)
@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_one_shard_is_the_serial_fit_bit_for_bit(estimator, layout, n_classes):
    X, y = _dense(n_classes)
    X = sp.csr_matrix(X) if layout == "csr" else X
    weights = np.random.RandomState(1).uniform(0.5, 2.0, size=len(y))
    for sample_weight in (None, weights):
        serial = _fresh(estimator, max_epochs=4, random_state=5).fit(
            X, y, sample_weight=sample_weight
        )
        mixed = mix_threads(
            _fresh(estimator, max_epochs=4, random_state=5),
            X,
            y,
            n_shards=1,
            sample_weight=sample_weight,
        )
        _same(mixed, serial)
        assert mixed._state.count == serial._state.count
        for mixed_record, serial_record in zip(mixed.history_, serial.history_, strict=True):
            assert {k: v for k, v in mixed_record.items() if not k.startswith("shard_")} == (
                serial_record
            )


@pytest.mark.parametrize("estimator", FAMILIES[:2] + FAMILIES[4:5], ids=IDS[:2] + IDS[4:5])
def test_one_shard_with_local_epochs_is_the_serial_fit_of_as_many_passes(estimator):
    X, y = _text_like()
    serial = _fresh(estimator, max_epochs=6, random_state=2).fit(X, y)
    mixed = mix_threads(
        _fresh(estimator, max_epochs=3, random_state=2), X, y, n_shards=1, local_epochs=2
    )
    _same(mixed, serial)


# ------------------------------------------------- rows exchanged = dense exchange
@pytest.mark.parametrize(
    ("estimator", "mixing"),
    [
        (estimator, mixing)
        for estimator in FAMILIES
        # Logistic regression makes no mistakes to weigh shards by.
        for mixing in ("uniform", "mistakes", "sum")[: 3 if estimator._engine().logs_updates else 1]
    ]
    + [(FAMILIES[4], "sum")],
)
def test_changed_rows_mix_like_whole_matrices(estimator, mixing, monkeypatch):
    """Sending only changed rows gives the model that sending every row gives."""
    X, y = _text_like()

    def fit():
        model = _fresh(estimator, max_epochs=4, random_state=3)
        return mix_threads(model, X, y, n_shards=4, n_threads=2, mixing=mixing)

    sparse_model = fit()
    monkeypatch.setattr(_shards, "DENSE_SHARE", -1.0)  # every shard sends every row
    dense_model = fit()
    assert_allclose(sparse_model.coef_, dense_model.coef_, **TOL)
    assert_allclose(sparse_model.intercept_, dense_model.intercept_, **TOL)
    assert sparse_model._state.count == dense_model._state.count


def _run(estimator, X, y, n_shards, **options):
    """The training records of a threaded fit (bytes and rows exchanged per epoch)."""
    dealt = array_shards(estimator, X, y, n_shards, share=True)
    shards, plan, streams = dealt.shards, dealt.plan, dealt.streams
    trainers = [ShardTrainer(plan) for _ in shards]

    def run_epoch(epoch, start, rng_states, slacks, whole_start):
        return [
            _shards.shard_epoch(t, s, start, rng_states[i], slacks[i])
            for i, (t, s) in enumerate(zip(trainers, shards, strict=True))
        ]

    training = Training(estimator, plan, "uniform", run_epoch, streams, [4] * n_shards)
    return list(training.epochs(publish_each_epoch=False))


def test_shards_send_only_the_rows_they_changed():
    X, y = _text_like(n_classes=5, n_features=5000)
    records = _run(AveragedPerceptron(max_epochs=5, random_state=0), X, y, 4)
    dense = (X.shape[1] + 1) * 5 * 8  # one weight matrix
    for record in records:
        assert 0 < record["changed_rows"] < (X.shape[1] + 1) / 2
        # Weights and aux of the changed rows with their indices, from each shard.
        assert record["bytes_received"] < 4 * 2 * dense / 2
    # The first start is the zeros every trainer begins with: nothing to send.
    assert records[0]["bytes_sent"] == 0 < records[1]["bytes_sent"]
    # Fewer mistakes, fewer rows: the exchange shrinks as training converges.
    assert records[-1]["changed_rows"] < records[0]["changed_rows"]


def test_logistic_with_a_prior_sends_whole_matrices():
    """The prior decays every weight: every row changes, so shards send them all."""
    X, y = _text_like()
    model = LogisticRegressionSGD(learning_rate=0.05, l2=0.01, max_epochs=2, random_state=0)
    for record in _run(model, X, y, 2):
        assert record["changed_rows"] == X.shape[1] + 1


# --------------------------------------------------- against plain simulations
def _simulate(X, y, n_shards, epochs, mixing="uniform"):
    """Binary perceptron mixing, no shuffling, written out: (models, mean of every
    shard's weights after each example, mean of the mixed weights)."""
    codes = np.where(y == np.unique(y)[1], 1.0, -1.0)
    Xb = np.hstack([X, np.ones((len(y), 1))])
    shards = np.array_split(np.arange(len(y)), n_shards)
    start, seen, mixes = np.zeros(Xb.shape[1]), [], []
    for _ in range(epochs):
        ends, mistakes = [], []
        for rows in shards:
            w, k = start.copy(), 0
            for i in rows:
                if codes[i] * (Xb[i] @ w) <= 0:
                    w += codes[i] * Xb[i]
                    k += 1
                seen.append(w.copy())
            ends.append(w)
            mistakes.append(k)
        if mixing == "sum":
            start = start + sum(end - start for end in ends)
        elif mixing == "mistakes" and sum(mistakes):
            start = sum(k * end for k, end in zip(mistakes, ends, strict=True)) / sum(mistakes)
        else:
            start = np.mean(ends, axis=0)
        mixes.append(start)
    return start, np.mean(seen, axis=0), np.mean(mixes, axis=0)


@pytest.mark.parametrize("mixing", ["uniform", "mistakes", "sum"])
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_models_are_the_written_out_algorithm(mixing, layout):
    X, y = _dense(2, n_samples=60)
    data = sp.csr_matrix(X) if layout == "csr" else X
    last, mean, mixes = _simulate(X, y, 3, 4, mixing)
    options = {"n_shards": 3, "n_threads": 2, "mixing": mixing}
    vanilla = mix_threads(Perceptron(max_epochs=4, shuffle=False), data, y, **options)
    assert_allclose(np.r_[vanilla.coef_.ravel(), vanilla.intercept_], last, **TOL)
    averaged = mix_threads(AveragedPerceptron(max_epochs=4, shuffle=False), data, y, **options)
    assert_allclose(np.r_[averaged.coef_.ravel(), averaged.intercept_], mean, **TOL)
    assert_allclose(averaged._state.weights, last, **TOL)  # training continues from the mix
    by_mixes = mix_threads(
        AveragedPerceptron(max_epochs=4, shuffle=False), data, y, average="mixes", **options
    )
    assert_allclose(np.r_[by_mixes.coef_.ravel(), by_mixes.intercept_], mixes, **TOL)


def test_logistic_state_in_plain_form():
    """The lazily scaled state, rewritten as true weights and a plain average."""
    X, y = _text_like(n_classes=2)
    for average in (False, True):
        model = LogisticRegressionSGD(learning_rate=0.2, l2=0.05, average=average)
        model.set_params(max_epochs=3, random_state=0).fit(X, y)
        state = model._state
        assert state.scale != 1.0  # the decay is pending in the scale
        weights, aux = state.plain_rows(None)
        if average:
            mean = weights - aux / state.count
        else:
            assert aux is None
            mean = weights
        assert_allclose(mean, np.r_[model.coef_.ravel(), model.intercept_], **TOL)
        rows = np.array([0, 7, X.shape[1]])
        some_weights, some_aux = state.plain_rows(rows)
        assert_allclose(some_weights, weights[rows], **TOL)
        if average:
            assert_allclose(some_aux, aux[rows], **TOL)


# ----------------------------------------------------------------- strategies
def test_redeal_deals_every_row_every_epoch_and_is_seeded():
    X, y = _text_like()
    fit = lambda **kw: mix_threads(  # noqa: E731
        AveragedPerceptron(max_epochs=4, random_state=4), X, y, n_shards=4, n_threads=2, **kw
    )
    once, again, kept = fit(redeal=True), fit(redeal=True), fit()
    _same(once, again)
    assert not np.array_equal(once.coef_, kept.coef_)
    assert [r["examples"] for r in once.history_] == [len(y)] * 4
    one = mix_threads(AveragedPerceptron(max_epochs=3, random_state=4), X, y, 1, redeal=True)
    _same(one, AveragedPerceptron(max_epochs=3, random_state=4).fit(X, y))


def test_strategy_errors_name_the_problem():
    X, y = _text_like()
    with pytest.raises(ValueError, match="local_epochs must be an int >= 1"):
        mix_threads(Perceptron(), X, y, 2, local_epochs=0)
    with pytest.raises(ValueError, match="average must be one of"):
        mix_threads(AveragedPerceptron(), X, y, 2, average="epochs")
    with pytest.raises(ValueError, match="average='mixes' needs an averaged model"):
        mix_threads(Perceptron(), X, y, 2, average="mixes")
    with pytest.raises(ValueError, match="redeal needs shuffle=True"):
        mix_threads(Perceptron(shuffle=False), X, y, 2, redeal=True)
    with pytest.raises(ValueError, match="redeal needs shuffle=True and no Δ trick"):
        mix_threads(Perceptron(delta=0.5), X, y, 2, redeal=True)
    with pytest.raises(ValueError, match="mixing must be one of"):
        mix_threads(Perceptron(), X, y, 2, mixing="median")
    with pytest.raises(ValueError, match="mixing='mistakes' weighs shards by their mistakes"):
        mix_threads(LogisticRegressionSGD(), X, y, 2, mixing="mistakes")


# --------------------------------------------------------------- the shard side
def test_a_new_trainer_asks_for_the_whole_start():
    X, y = _text_like()
    dealt = array_shards(AveragedPerceptron(random_state=0), X, y, 2, share=True)
    shards, plan = dealt.shards, dealt.plan
    trainer = ShardTrainer(plan)
    rows = np.array([0, 3])
    assert (
        _shards.shard_epoch(trainer, shards[0], Start(2, rows, np.zeros((2, 3))), None, None)
        is None
    )
    whole = Start(1, None, np.zeros((X.shape[1] + 1, 3)))
    result = _shards.shard_epoch(trainer, shards[0], whole, None, None)
    assert result is not None and result.examples == shards[0].n_samples
    # Epoch 2 from rows works now, epoch 4 (a skipped epoch) does not.
    assert _shards.shard_epoch(trainer, shards[0], Start(2, rows, np.zeros((2, 3))), None, None)
    assert (
        _shards.shard_epoch(trainer, shards[0], Start(4, rows, np.zeros((2, 3))), None, None)
        is None
    )


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_rows_of_examples(layout):
    rng = np.random.RandomState(0)
    X = sp.random(50, 30, density=0.1, random_state=rng, format="csr")
    data = (X.data, X.indices, X.indptr) if layout == "csr" else X.toarray()
    marks = np.zeros(31, dtype=np.uint8)
    for size in (0, 1, 7, 50):
        examples = rng.choice(50, size, replace=False).astype(np.int64)
        expected = np.unique(X[examples].indices)
        if size:
            expected = np.r_[expected, 30]  # the intercept row
        assert_array_equal(sorted_rows_of_examples(data, examples, marks), expected)
        assert not marks.any()  # left clean for the next call
    out = np.empty(31, dtype=np.int64)
    assert rows_of_examples(data, np.array([3, 3, 3]), marks, out, 31, 1) == len(X[3].indices) + 1
    # Past the limit: -1 (every row then), the marks left clean.
    everything = np.arange(50)
    n_rows = len(np.unique(X.indices)) + 1
    assert rows_of_examples(data, everything, marks, out, n_rows, 1) == n_rows
    assert rows_of_examples(data, everything, marks, out, n_rows - 1, 1) == -1
    assert sorted_rows_of_examples(data, everything, marks, 5) is None
    assert not marks.any()


def test_run_epoch_checks_the_mistake_log():
    X, y = _text_like(n_classes=2)
    model = AveragedPerceptron().fit(X, y)
    state, codes = model._state, model._engine().encode_targets(y)
    order = np.arange(len(y))
    with pytest.raises(ValueError, match="mistake_log must be a C-contiguous int64"):
        model._engine().run_epoch(
            state, X, codes, order, mistake_log=np.empty((3, 2), dtype=np.int64)
        )
    with pytest.raises(ValueError, match="mistake_log must be a C-contiguous int64"):
        model._engine().run_epoch(state, X, codes, order, mistake_log=np.empty((len(y), 2)))
    log = np.full((len(y), 2), -7, dtype=np.int64)
    record = model._engine().run_epoch(state, X, codes, order, mistake_log=log)
    assert (log[: record["updates"], 0] >= 0).all() and (log[record["updates"] :, 0] == -7).all()
    logistic = LogisticRegressionSGD().fit(X, y)
    with pytest.raises(ValueError, match="logs no updates"):
        logistic._engine().run_epoch(logistic._state, X, codes.clip(0), order, mistake_log=log)


def test_shard_data_pieces_are_the_whole_shard():
    X, y = _text_like()
    shard = ShardData(X, y, rows=np.array([2, 5, 9]))
    ((data, codes, order, weights),) = list(shard.pieces(None, None))
    assert data is X and codes is y and weights is None
    assert_array_equal(order, [2, 5, 9])


def test_union_rows_sorts_and_places():
    rng = np.random.RandomState(1)
    marks = np.zeros(40, dtype=np.uint8)
    out, positions = np.empty(40, dtype=np.int64), np.empty(40, dtype=np.int64)
    for size in (0, 1, 30, 200):
        rows = rng.randint(0, 40, size=size).astype(np.int64)
        n = union_rows(rows, marks, out, positions)
        assert_array_equal(out[:n], np.unique(rows))
        assert_array_equal(out[positions[rows]], rows)
        assert not marks.any()


# --------------------------------------------------------------------------- ROMMA
@pytest.mark.parametrize("update", ["romma", "aggressive-romma"])
def test_romma_is_refused_by_parameter_mixing(update):
    """Every ROMMA update rescales all the weights, so a shard cannot send only the
    rows its mistakes touched: mixing refuses it rather than mix something else."""
    X, y = _text_like()
    assert mixing_refusal(AveragedPerceptron(update=update)) is not None
    with pytest.raises(ValueError, match="parameter mixing"):
        mix_threads(AveragedPerceptron(update=update), X, y, n_shards=2)
    with pytest.raises(ValueError, match="n_shards"):
        AveragedPerceptron(update=update, n_shards=2).fit(X, y)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_romma_state_in_plain_form(n_classes):
    """ROMMA's lazily scaled state (every row, the intercept's too), rewritten as true
    weights and a plain average; restart_count takes true weights at scale 1."""
    X, y = _text_like(n_classes=n_classes)
    for model in (Perceptron(update="romma"), AveragedPerceptron(update="aggressive-romma")):
        model.set_params(max_epochs=3, random_state=0).fit(X, y)
        state = model._state
        assert state.scales[0] != 1.0  # a scale is pending
        weights, aux = state.plain_rows(None)
        mean = weights if aux is None else weights - aux / state.count
        assert_allclose(
            mean, np.r_[model.coef_.T, model.intercept_[None]].reshape(mean.shape), **TOL
        )
        rows = np.array([0, 7, X.shape[1]])
        some_weights, some_aux = state.plain_rows(rows)
        assert_allclose(some_weights, weights[rows], **TOL)
        if aux is not None:
            assert_allclose(some_aux, aux[rows], **TOL)
        state.weights[:] = weights
        state.restart_count()
        assert state.count == 0 and state.scales[0] == 1.0 and state.scales[1] == 0.0
        assert_allclose(state.scales[2], np.sum(weights**2), **TOL)


# ----------------------------------------------------------------- adaptive rules
@pytest.mark.parametrize("update", ["arow", "sop", "iellip", "ogd"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_one_shard_publishes_the_serial_statistics(update, n_classes):
    """With one shard the mixed model is the serial fit's state, statistics included:
    a partial_fit after it continues exactly as after the serial fit."""
    X, y = _text_like(n_classes)
    serial = AveragedPerceptron(update=update, max_epochs=3, random_state=4).fit(X, y)
    mixed = mix_threads(
        AveragedPerceptron(update=update, max_epochs=3, random_state=4), X, y, n_shards=1
    )
    assert_array_equal(mixed._state.stats, serial._state.stats)
    assert_array_equal(mixed._state.scalars, serial._state.scalars)
    serial.partial_fit(X, y)
    mixed.partial_fit(X, y)
    _same(mixed, serial)


def test_several_shards_publish_the_mean_of_their_statistics():
    """Each row's statistic is the mean of those of the shards that changed it: after a
    mixed fit, AROW's variances have shrunk where the data are, as after a serial fit."""
    X, y = _text_like(3)
    mixed = mix_threads(
        AveragedPerceptron(update="arow", max_epochs=2, random_state=0), X, y, n_shards=3
    )
    variance = mixed._state.stats[0]
    used = np.unique(X.indices)
    assert (variance[used].min(axis=1) < 1.0).all()  # the classes it moved
    unused = np.setdiff1d(np.arange(X.shape[1]), used)
    assert (variance[unused] == 1.0).all()
    assert (variance > 0).all()


@pytest.mark.parametrize(
    ("make", "average"),
    [
        (lambda: Perceptron(update="ada-fobos", update_params={"l1": 0.05}), "examples"),
        (lambda: AveragedPerceptron(), "examples"),
        (lambda: AveragedPerceptron(update="arow"), "mixes"),
    ],
)
def test_mixed_epochs_count_the_published_models_nonzero_weights(make, average):
    X, y = make_classification(n_samples=120, n_features=12, n_informative=6, random_state=2)
    X[np.abs(X) < 0.8] = 0.0
    model = make().set_params(max_epochs=3, random_state=0)
    mix_threads(model, sp.csr_matrix(X), y, n_shards=3, n_threads=2, average=average)
    coef = model.coef_.toarray() if sp.issparse(model.coef_) else model.coef_
    assert model.history_[-1]["n_nonzero"] == np.count_nonzero(coef) > 0
