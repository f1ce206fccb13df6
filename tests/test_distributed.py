"""Parameter mixing: one shard is the serial fit; threads and Dask agree; faults recover.

Every cluster here is a LocalCluster of worker processes bound to 127.0.0.1, stopped at
the end. One module-scoped cluster serves most tests; the fault test starts its own,
since it kills workers.
"""

import faulthandler
import os
import re
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import dump_svmlight_file, make_classification
from sklearn.model_selection import train_test_split

from perceptrons import AveragedPerceptron, Perceptron, VotedPerceptron, load, save
from perceptrons._engine import Stopping
from perceptrons.io.formats import read_data
from perceptrons.logistic import LogisticRegressionSGD

distributed = pytest.importorskip(
    "distributed",
    reason='parameter mixing needs dask and distributed ("pip install .[distributed]")',
)
da = pytest.importorskip(
    "dask.array", reason='parameter mixing needs dask[array] ("pip install .[distributed]")'
)

from perceptrons.parallel import ParameterMixing, mix_threads  # noqa: E402
from perceptrons.parallel._mixing import mixing_weights  # noqa: E402
from perceptrons.parallel._shards import ShardResult  # noqa: E402

# Several clusters in one process: the later ones serve HTTP on another local port.
pytestmark = pytest.mark.filterwarnings("ignore:Port 8787 is already in use:UserWarning")

LINEAR = [Perceptron, AveragedPerceptron]
# Every estimator parameter mixing trains (logistic regression with a prior and averaged).
MIXABLE = [
    *LINEAR,
    lambda **kw: LogisticRegressionSGD(learning_rate=0.05, l2=0.01, average=True, **kw),
]
TOL = {"rtol": 1e-9, "atol": 1e-9}


def _local_cluster(n_workers=2):
    from perceptrons.parallel._dask_cluster import start_local_cluster

    return start_local_cluster(distributed, n_workers)


@pytest.fixture(scope="module")
def cluster():
    with _local_cluster() as cluster:
        yield cluster


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster) as client:
        yield client


def _problem(n_classes=2, sparse=False, n_samples=120, seed=0):
    X, y = make_classification(
        n_samples,
        12,
        n_informative=6,
        n_classes=n_classes,
        n_clusters_per_class=1,
        class_sep=1.5,
        random_state=seed,
    )
    X = np.round(X, 3)
    X[np.abs(X) < 0.4] = 0.0  # some zeros, so that CSR differs from dense
    return (sp.csr_matrix(X) if sparse else X), y


def _same_model(a, b, **tol):
    if tol:
        assert_allclose(a.coef_, b.coef_, **tol)
        assert_allclose(a.intercept_, b.intercept_, **tol)
    else:
        assert_array_equal(a.coef_, b.coef_)
        assert_array_equal(a.intercept_, b.intercept_)
    assert_array_equal(a.classes_, b.classes_)


# ----------------------------------------------------------------- one shard
@pytest.mark.parametrize("cls", MIXABLE)
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("shuffle", [False, True])
def test_one_shard_equals_serial_fit(client, cls, sparse, n_classes, shuffle):
    """Bit for bit: one shard's state is the serial fit's, on the worker and back."""
    X, y = _problem(n_classes, sparse)
    serial = cls(max_epochs=3, shuffle=shuffle, random_state=7).fit(X, y)
    mixed = ParameterMixing(
        cls(max_epochs=3, shuffle=shuffle, random_state=7), n_shards=1, client=client
    ).fit(X, y)
    _same_model(mixed.estimator_, serial)
    for mixed_record, serial_record in zip(mixed.estimator_.history_, serial.history_, strict=True):
        assert {k: v for k, v in mixed_record.items() if not k.startswith("shard_")} == (
            serial_record
        )
    assert_array_equal(mixed.predict(X), serial.predict(X))
    # The generator ends where the serial fit's does, so partial_fit continues alike.
    assert_array_equal(
        mixed.estimator_.random_state_.get_state()[1], serial.random_state_.get_state()[1]
    )


@pytest.mark.parametrize("cls", LINEAR)
@pytest.mark.parametrize("n_classes", [2, 4])
def test_one_thread_shard_equals_serial_fit(cls, n_classes):
    """Also with the Δ trick and another update rule: the shard runs the estimator's own epoch."""
    X, y = _problem(n_classes, sparse=False)
    for params in ({"delta": 0.0}, {"delta": 0.5}, {"update": "pa-i", "margin": 1.0}):
        serial = cls(max_epochs=4, random_state=3, **params).fit(X, y)
        mixed = mix_threads(cls(max_epochs=4, random_state=3, **params), X, y, n_shards=1)
        _same_model(mixed, serial, **TOL)
        assert mixed.n_iter_ == serial.n_iter_ == 4
        assert mixed._state.count == serial._state.count == 4 * len(y)


# --------------------------------------------------------------- several shards
@pytest.mark.parametrize(
    ("cls", "mixing"),
    [(cls, mixing) for cls in LINEAR for mixing in ("uniform", "mistakes", "sum")]
    + [(MIXABLE[2], "uniform")],
)
def test_threads_equal_dask(client, cls, mixing):
    X, y = _problem(3, sparse=True, n_samples=200)
    estimator = cls(max_epochs=4, random_state=11)
    mixed = ParameterMixing(estimator, n_shards=3, client=client, mixing=mixing).fit(X, y)
    threaded = mix_threads(clone_of(estimator), X, y, n_shards=3, n_threads=2, mixing=mixing)
    _same_model(mixed.estimator_, threaded)
    assert mixed.estimator_.history_ == threaded.history_
    assert all(any(k.startswith("shard_") for k in r) for r in threaded.history_)


def clone_of(estimator):
    return type(estimator)(**estimator.get_params())


@pytest.mark.parametrize("cls", LINEAR)
def test_threads_equal_dask_with_sample_and_class_weights(client, cls):
    """Each shard, threaded or sent to a worker, carries the weights of its own rows."""
    X, y = _problem(3, sparse=True, n_samples=200)
    weights = np.linspace(0.0, 2.0, len(y))
    estimator = cls(max_epochs=3, random_state=11, class_weight={0: 2.0, 1: 0.5})
    mixed = ParameterMixing(estimator, n_shards=3, client=client)
    mixed.fit(X, y, sample_weight=weights)
    threaded = mix_threads(
        clone_of(estimator), X, y, n_shards=3, n_threads=2, sample_weight=weights
    )
    _same_model(mixed.estimator_, threaded)
    assert mixed.estimator_.history_ == threaded.history_
    unweighted = mix_threads(clone_of(cls(max_epochs=3, random_state=11)), X, y, n_shards=2)
    assert not np.array_equal(unweighted.coef_, threaded.coef_)
    with pytest.raises(ValueError, match="sample_weight is supported with in-memory arrays"):
        ParameterMixing(cls(), client=client).fit(
            da.from_array(X.toarray(), chunks=100),
            da.from_array(y, chunks=100),
            sample_weight=weights,
        )


def test_fixed_random_state_is_deterministic(client):
    X, y = _problem(3, n_samples=200)
    fits = [
        ParameterMixing(
            AveragedPerceptron(max_epochs=3, random_state=seed), n_shards=4, client=client
        )
        .fit(X, y)
        .estimator_
        for seed in (5, 5, 6)
    ]
    _same_model(fits[0], fits[1])
    assert not np.array_equal(fits[0].coef_, fits[2].coef_)


def test_history_records_every_shard(client):
    X, y = _problem(2, n_samples=101)
    mixer = ParameterMixing(
        Perceptron(max_epochs=3, random_state=0), n_shards=3, client=client
    ).fit(X, y)
    assert mixer.n_shards_ == 3
    assert [r["epoch"] for r in mixer.history_] == [1, 2, 3]
    for record in mixer.history_:
        assert len(record["shard_mistakes"]) == len(record["shard_updates"]) == 3
        assert sum(record["shard_mistakes"]) == record["mistakes"]
        assert sum(record["shard_updates"]) == record["updates"]
        assert record["examples"] == 101
        assert record["seconds"] >= 0
        assert 0 < record["changed_rows"] <= X.shape[1] + 1
        # The first start is the zeros every new trainer holds: nothing is sent.
        assert (record["bytes_sent"] > 0) == (record["epoch"] > 1)
        assert record["bytes_received"] > 0
    transport = ("seconds", "changed_rows", "bytes_sent", "bytes_received")
    assert mixer.estimator_.history_ == [
        {k: v for k, v in r.items() if k not in transport} for r in mixer.history_
    ]


@pytest.mark.parametrize("cls", LINEAR)
def test_accuracy_close_to_serial(cls):
    X, y = make_classification(
        2000,
        20,
        n_informative=10,
        n_classes=3,
        n_clusters_per_class=1,
        class_sep=2.0,
        random_state=1,
    )
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    serial = cls(max_epochs=10, random_state=0).fit(X_train, y_train).score(X_test, y_test)
    for mixing in ("uniform", "mistakes"):
        model = mix_threads(
            cls(max_epochs=10, random_state=0),
            X_train,
            y_train,
            n_shards=4,
            n_threads=2,
            mixing=mixing,
        )
        assert model.score(X_test, y_test) > serial - 0.05


def test_mistake_weighted_mixing():
    def results(k0, k1):
        return [
            ShardResult(None, np.zeros(2), None, {"count": 5}, k, 5, None, None) for k in (k0, k1)
        ]

    assert_allclose(mixing_weights(results(3, 1), "mistakes"), [0.75, 0.25])
    assert_allclose(mixing_weights(results(0, 0), "mistakes"), [0.5, 0.5])  # uniform
    assert_allclose(mixing_weights(results(3, 1), "uniform"), [0.5, 0.5])
    assert_allclose(mixing_weights(results(3, 1), "sum"), [1.0, 1.0])


def test_averaged_model_is_mean_of_every_shard_weight_vector():
    """The averaged model is the mean of the weights after each example of each shard."""
    X, y = _problem(2, n_samples=40)
    model = mix_threads(
        AveragedPerceptron(max_epochs=3, shuffle=False), X, y, n_shards=2, mixing="uniform"
    )
    codes = np.where(y == model.classes_[1], 1.0, -1.0)
    Xb = np.hstack([X, np.ones((len(y), 1))])
    shards = np.array_split(np.arange(len(y)), 2)
    start, seen = np.zeros(X.shape[1] + 1), []
    for _ in range(3):
        ends = []
        for rows in shards:
            w = start.copy()
            for i in rows:
                if codes[i] * (Xb[i] @ w) <= 0:
                    w += codes[i] * Xb[i]
                seen.append(w.copy())
            ends.append(w)
        start = np.mean(ends, axis=0)
    mean = np.mean(seen, axis=0)
    assert_allclose(model.coef_.ravel(), mean[:-1], **TOL)
    assert_allclose(model.intercept_, mean[-1:], **TOL)
    assert_allclose(model._state.weights, start, **TOL)  # training continues from the mix


def test_fitted_estimator_saves_and_continues(client, tmp_path):
    X, y = _problem(3, sparse=True)
    model = (
        ParameterMixing(AveragedPerceptron(max_epochs=2, random_state=0), n_shards=2, client=client)
        .fit(X, y)
        .estimator_
    )
    again = load(save(model, tmp_path / "mixed.npz"))
    _same_model(again, model)
    assert_array_equal(again.predict(X), model.predict(X))
    # The state is a genuine training state: partial_fit continues the same way.
    _same_model(again.partial_fit(X, y), model.partial_fit(X, y))


def test_early_stopping_after_an_epoch_without_mistakes():
    X = np.array([[1.0, 0.0], [2.0, 1.0], [-1.0, 0.0], [-2.0, -1.0]] * 5)
    y = np.array([1, 1, 0, 0] * 5)
    model = mix_threads(
        Perceptron(max_epochs=50, early_stopping=True, random_state=0), X, y, n_shards=2
    )
    assert model.history_[-1]["mistakes"] == 0
    assert len(model.history_) < 50
    assert model.score(X, y) == 1.0


def _stopped_by_patience(history, patience):
    """Whether training stopped at the first epoch where the serial fit's rule (its
    Stopping, whose scripted cases test_engine checks) says to, and only there."""
    rule = Stopping(True, patience)
    return [rule.stop(record) for record in history] == [False] * (len(history) - 1) + [True]


def test_early_stopping_on_held_out_data_under_dask(client):
    """ParameterMixing holds out validation_fraction of in-memory arrays as the serial fit
    does (one shard: exactly the serial fit, early stop included)."""
    X, y = _problem(3, n_samples=300)
    params = dict(early_stopping=True, validation_fraction=0.2, n_iter_no_change=2, max_epochs=60)
    serial = AveragedPerceptron(random_state=0, **params).fit(X, y)
    one = ParameterMixing(
        AveragedPerceptron(random_state=0, **params), n_shards=1, client=client
    ).fit(X, y)
    assert serial.n_iter_ < 60
    assert _stopped_by_patience(serial.history_, 2)
    scores = [r["validation_score"] for r in one.estimator_.history_]
    assert scores == [r["validation_score"] for r in serial.history_]
    assert np.array_equal(one.estimator_.coef_, serial.coef_)
    three = ParameterMixing(
        AveragedPerceptron(random_state=0, **params), n_shards=3, client=client
    ).fit(X, y)
    history = three.estimator_.history_
    assert len(history) < 60 and all("validation_score" in r for r in history)
    assert _stopped_by_patience(history, 2)
    # The held-out fifth is never trained on: each epoch sees the other 240 examples.
    assert {r["examples"] for r in history} == {240}


def test_early_stopping_on_held_out_data_in_threads():
    X, y = _problem(3, n_samples=300)
    model = AveragedPerceptron(
        early_stopping=True,
        validation_fraction=0.2,
        n_iter_no_change=2,
        max_epochs=60,
        n_shards=2,
        random_state=0,
    ).fit(X, y)
    assert model.n_iter_ == len(model.history_) < 60
    assert _stopped_by_patience(model.history_, 2)
    assert {r["examples"] for r in model.history_} == {240}
    assert [len(r["shard_mistakes"]) for r in model.history_] == [2] * model.n_iter_


def test_held_out_early_stopping_needs_in_memory_arrays(client, tmp_path):
    X, y = _problem(2)
    paths = []
    for i in range(2):
        path = tmp_path / f"part{i}.svm"
        dump_svmlight_file(X[i::2], y[i::2], str(path))
        paths.append(str(path))
    with pytest.raises(ValueError, match="in-memory arrays"):
        ParameterMixing(
            Perceptron(early_stopping=True, validation_fraction=0.2), client=client
        ).fit(paths)


# ----------------------------------------------------------------- other inputs
def test_dask_array_blocks_are_the_shards(client):
    X, y = _problem(3, n_samples=150)
    sizes = tuple(len(p) for p in np.array_split(np.arange(150), 3))
    estimator = AveragedPerceptron(max_epochs=3, shuffle=True, random_state=2)
    threaded = mix_threads(
        clone_of(estimator).set_params(shuffle=False), X, y, n_shards=3, n_threads=1
    )
    by_chunks = ParameterMixing(clone_of(estimator).set_params(shuffle=False), client=client)
    by_chunks.fit(da.from_array(X, chunks=(sizes, -1)), da.from_array(y, chunks=(sizes,)))
    assert by_chunks.n_shards_ == 3
    _same_model(by_chunks.estimator_, threaded)
    # Given n_shards, the rows are rechunked into as many near-equal blocks.
    rechunked = ParameterMixing(estimator, n_shards=3, client=client)
    rechunked.fit(da.from_array(X, chunks=(40, 6)), y)
    assert rechunked.n_shards_ == 3
    assert rechunked.score(X, y) > 0.8


@pytest.mark.parametrize("given", [False, True])
def test_files_are_read_by_the_workers(client, tmp_path, given):
    X, y = _problem(3, sparse=True, n_samples=150)
    X = X.tolil()
    X[:, 0] = 0
    X[3, 0] = 1.5  # only the first file has feature 0: every file is read 0-based
    X = X.tocsr()
    paths = []
    for i, rows in enumerate(np.array_split(np.arange(150), 3)):
        paths.append(tmp_path / f"part{i}.svm")
        dump_svmlight_file(X[rows], y[rows], str(paths[-1]), zero_based=True)
    read = [read_data(p, zero_based=True, n_features=X.shape[1]) for p in paths]
    X_read = sp.vstack([r.X for r in read]).tocsr()
    estimator = AveragedPerceptron(max_epochs=3, random_state=4)
    threaded = mix_threads(
        clone_of(estimator).set_params(shuffle=False), X_read, y, n_shards=3, n_threads=1
    )
    extra = {"classes": np.unique(y), "n_features": X.shape[1]} if given else {}
    from_files = ParameterMixing(clone_of(estimator).set_params(shuffle=False), client=client)
    from_files.fit([str(p) for p in paths], **extra)
    assert from_files.n_shards_ == 3
    assert from_files.estimator_.n_features_in_ == X.shape[1]
    _same_model(from_files.estimator_, threaded)
    # With shuffling the shards are still the files, each shuffled with its generator.
    shuffled = ParameterMixing(estimator, client=client).fit(paths, **extra)
    assert shuffled.score(X_read, y) > 0.8


def _files(tmp_path, X, y, n_files):
    paths = []
    for i, rows in enumerate(np.array_split(np.arange(len(y)), n_files)):
        paths.append(str(tmp_path / f"part{i}.svm"))
        dump_svmlight_file(X[rows], y[rows], paths[-1], zero_based=False)
    return paths


def test_streamed_files_are_the_files_read_whole(client, tmp_path):
    """Out of core: each worker reads its file a chunk at a time every epoch. In file
    order that is the model of the files read whole (one file: the serial fit)."""
    X, y = _problem(3, sparse=True, n_samples=180)
    paths = _files(tmp_path, X, y, 3)
    for cls in MIXABLE:
        estimator = cls(max_epochs=3, shuffle=False)
        streamed = ParameterMixing(estimator, client=client).fit(paths, stream=True, chunk_size=7)
        whole = ParameterMixing(estimator, client=client).fit(paths)
        _same_model(streamed.estimator_, whole.estimator_)
        assert [r["examples"] for r in streamed.history_] == [180] * 3
        one = ParameterMixing(estimator, client=client).fit(paths[:1], stream=True, chunk_size=4)
        first = read_data(paths[0])
        _same_model(one.estimator_, clone_of(estimator).fit(first.X, first.y))
    # Shuffled within chunks, seeded: the same model twice, and a good one.
    shuffled = [
        ParameterMixing(AveragedPerceptron(random_state=3), client=client)
        .fit(paths, stream=True, chunk_size=20)
        .estimator_
        for _ in range(2)
    ]
    _same_model(*shuffled)
    assert shuffled[0].score(X, y) > 0.8


def test_stream_errors(client, tmp_path):
    X, y = _problem(2, sparse=True, n_samples=40)
    paths = _files(tmp_path, X, y, 2)
    mixer = ParameterMixing(Perceptron(), client=client)
    with pytest.raises(ValueError, match="stream=True reads files"):
        mixer.fit(X, y, stream=True)
    with pytest.raises(ValueError, match="chunk_size must be an int >= 1"):
        mixer.fit(paths, stream=True, chunk_size=0)
    with pytest.raises(ValueError, match="Δ trick"):
        ParameterMixing(Perceptron(delta=1.0), client=client).fit(paths, stream=True)
    text = tmp_path / "docs.tsv"
    text.write_text("pos\ta good film\nneg\ta bad one\n")
    with pytest.raises(ValueError, match="svmlight only"):
        mixer.fit([str(text)], stream=True)


def test_wide_sparse_data_moves_rows_not_matrices(client):
    """Each epoch moves the changed rows: far less than whole weight matrices."""
    rng = np.random.RandomState(0)
    X = sp.random(400, 20_000, density=5e-4, random_state=rng, format="csr")
    y = rng.randint(0, 5, size=400)
    mixer = ParameterMixing(
        AveragedPerceptron(max_epochs=3, random_state=0), n_shards=2, client=client
    ).fit(X, y)
    matrix = (X.shape[1] + 1) * 5 * 8
    for record in mixer.history_:
        assert record["changed_rows"] < X.shape[1] / 4
    # The old exchange: the start to each shard, its weights and sums back. Now the
    # start is whole in the first epoch only.
    for record in mixer.history_[1:]:
        assert record["bytes_received"] + record["bytes_sent"] < 3 * 2 * matrix / 4


def test_text_files_are_refused(client, tmp_path):
    path = tmp_path / "docs.tsv"
    path.write_text("pos\ta good film\nneg\ta bad one\n")
    with pytest.raises(ValueError, match="text format"):
        ParameterMixing(Perceptron(), client=client).fit([path])


def test_client_as_address(cluster):
    X, y = _problem(2)
    # Seeded: unseeded, about 1 shuffle in 40 scores 0.8 or less after two epochs.
    mixer = ParameterMixing(
        Perceptron(max_epochs=2, random_state=0), n_shards=2, client=cluster.scheduler_address
    ).fit(X, y)
    assert mixer.score(X, y) > 0.8


def test_client_not_set_as_default(cluster):
    X, y = _problem(2)
    with distributed.Client(cluster, set_as_default=False) as client:
        mixer = ParameterMixing(
            Perceptron(max_epochs=2, random_state=0), n_shards=2, client=client
        ).fit(X, y)
    threaded = mix_threads(Perceptron(max_epochs=2, random_state=0), X, y, 2)
    _same_model(mixer.estimator_, threaded)


def test_own_local_cluster_is_started_and_closed():
    X, y = _problem(2)
    mixer = ParameterMixing(Perceptron(max_epochs=2, random_state=0), n_shards=1).fit(X, y)
    _same_model(mixer.estimator_, Perceptron(max_epochs=2, random_state=0).fit(X, y))


# ----------------------------------------------------------------------- faults
@pytest.fixture
def fragile_client():
    """A cluster of its own, whose workers the test kills. Short comm timeouts bound
    any wait on a dead worker; a stuck test dumps every thread's stack after 60 s."""
    import dask

    faulthandler.dump_traceback_later(60, exit=False, file=sys.stderr)
    try:
        with (
            dask.config.set({"distributed.comm.timeouts.connect": "5s"}),
            _local_cluster() as cluster,
            distributed.Client(cluster) as client,
        ):
            yield client
    finally:
        faulthandler.cancel_dump_traceback_later()


def _kill(client, address):
    try:
        client.run(os._exit, 1, workers=[address])
    except OSError:  # the worker died before answering: as intended
        pass


def test_lost_worker_is_recovered_or_named(fragile_client):
    """Kill a worker after an epoch: its shards are sent again and the model is the
    uninterrupted one; with max_retries=0 the fit fails naming the lost worker."""
    client = fragile_client
    X, y = _problem(3, sparse=True, n_samples=300)
    estimator = AveragedPerceptron(max_epochs=4, random_state=9)
    expected = mix_threads(clone_of(estimator), X, y, n_shards=4, n_threads=2)
    mixer = ParameterMixing(estimator, n_shards=4, client=client)
    for record in mixer.fit_epochs(X, y):
        if record["epoch"] == 2:
            _kill(client, sorted(client.scheduler_info()["workers"])[0])
    _same_model(mixer.estimator_, expected)
    assert mixer.estimator_.history_ == expected.history_

    client.wait_for_workers(2, timeout=30)  # the nanny restarts the killed worker
    strict = ParameterMixing(estimator, n_shards=4, client=client, max_retries=0)
    with pytest.raises(RuntimeError, match="lost worker") as failure:
        for record in strict.fit_epochs(X, y):
            if record["epoch"] == 2:
                victim = sorted(client.scheduler_info()["workers"])[0]
                _kill(client, victim)
    assert re.search(re.escape(victim), str(failure.value))


@pytest.mark.parametrize("stream", [False, True])
def test_lost_worker_with_file_shards_is_recovered(fragile_client, tmp_path, stream):
    """Shards read from files are read again by Dask after a worker dies mid-training
    (streamed: the new worker's trainer starts from the whole mixed state)."""
    client = fragile_client
    X, y = _problem(3, sparse=True, n_samples=200)
    paths = []
    for i, rows in enumerate(np.array_split(np.arange(200), 4)):
        paths.append(str(tmp_path / f"part{i}.svm"))
        dump_svmlight_file(X[rows], y[rows], paths[-1], zero_based=True)
    estimator = AveragedPerceptron(max_epochs=4, random_state=2)
    options = {"stream": stream, "chunk_size": 9}
    expected = ParameterMixing(estimator, client=client).fit(paths, **options).estimator_
    mixer = ParameterMixing(estimator, client=client)
    for record in mixer.fit_epochs(paths, **options):
        if record["epoch"] == 1:
            _kill(client, sorted(client.scheduler_info()["workers"])[-1])
    _same_model(mixer.estimator_, expected)
    assert mixer.estimator_.history_ == expected.history_


# ----------------------------------------------------------------------- errors
def test_unsupported_settings_are_clear_errors():
    X, y = _problem(2)
    with pytest.raises(ValueError, match="mixing must be one of"):
        ParameterMixing(Perceptron(), mixing="median").fit(X, y)
    with pytest.raises(ValueError, match="n_shards must be an int >= 1"):
        ParameterMixing(Perceptron(), n_shards=0).fit(X, y)
    with pytest.raises(ValueError, match=r"VotedPerceptron.*cannot be mixed"):
        ParameterMixing(VotedPerceptron()).fit(X, y)
    with pytest.raises(ValueError, match="max_epochs"):
        ParameterMixing(Perceptron(max_epochs=0)).fit(X, y)
    with pytest.raises(ValueError, match="VotedPerceptron"):
        mix_threads(VotedPerceptron(), X, y, n_shards=2)
    with pytest.raises(ValueError, match="n_shards must be an int >= 1 or -1"):
        mix_threads(Perceptron(), X, y, n_shards=0)
    with pytest.raises(ValueError, match="n_threads must be None or an int >= 1"):
        mix_threads(Perceptron(), X, y, n_shards=2, n_threads=0)
    with pytest.raises(ValueError, match="more than the 4 training examples"):
        mix_threads(Perceptron(), X[:4], y[:4], n_shards=5)


def test_input_errors(client, tmp_path):
    X, y = _problem(2)
    with pytest.raises(ValueError, match="more than the 120 training examples"):
        ParameterMixing(Perceptron(), n_shards=121, client=client).fit(X, y)
    with pytest.raises(ValueError, match="y is required"):
        ParameterMixing(Perceptron(), client=client).fit(X)
    path = tmp_path / "a.svm"
    dump_svmlight_file(X, y, str(path))
    with pytest.raises(ValueError, match="each file is one shard"):
        ParameterMixing(Perceptron(), n_shards=2, client=client).fit([path])
    with pytest.raises(ValueError, match="y must be None"):
        ParameterMixing(Perceptron(), client=client).fit([path], y)
    with pytest.raises(ValueError, match="client must be"):
        ParameterMixing(Perceptron(), client=42).fit(X, y)
    with pytest.raises(ValueError, match="never declared"):  # a label outside classes
        ParameterMixing(Perceptron(), client=client).fit([path], classes=[0, 7])


@pytest.mark.parametrize(
    ("service", "message"),
    [
        ("http", "answered b'HTTP/1.1', not the handshake of a Dask scheduler"),
        ("silent", "no answer of a Dask scheduler within 0.5 s (is it one? connect_timeout"),
    ],
    ids=["http", "silent"],
)
def test_a_client_address_that_is_not_a_dask_scheduler(not_dask_service, service, message):
    """One line (a ConnectionError) within connect_timeout, before any work: an HTTP
    answer was read as a 3 EiB message, and a silent service held the fit forever."""
    X, y = _problem(2)
    address = not_dask_service(service)
    mixer = ParameterMixing(Perceptron(), client=address, connect_timeout=0.5)
    with pytest.raises(ConnectionError) as raised:
        mixer.fit(X, y)
    assert message in str(raised.value) and "\n" not in str(raised.value)
    assert str(raised.value).startswith(f"{address}: ")
    assert not hasattr(mixer, "estimator_") or not hasattr(mixer.estimator_, "coef_")


@pytest.mark.parametrize("timeout", [0, -1, float("inf"), float("nan"), "10", True])
def test_connect_timeout_is_a_finite_positive_number(timeout):
    X, y = _problem(2)
    with pytest.raises(ValueError, match="connect_timeout must be a finite number > 0"):
        ParameterMixing(Perceptron(), client="tcp://127.0.0.1:1", connect_timeout=timeout).fit(X, y)


@pytest.mark.parametrize("cls", [Perceptron, AveragedPerceptron])
def test_n_shards_fits_by_parameter_mixing_over_threads(cls):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(400, 6))
    y = (X @ rng.normal(size=6) > 0).astype(int)
    threaded = cls(max_epochs=4, random_state=0, n_shards=2).fit(X, y)
    mixed = mix_threads(cls(max_epochs=4, random_state=0), X, y, n_shards=2)
    np.testing.assert_array_equal(threaded.coef_, mixed.coef_)
    assert all(len(r["shard_mistakes"]) == 2 for r in threaded.history_)
    serial = cls(max_epochs=4, random_state=0, n_shards=1).fit(X, y)
    assert "shard_mistakes" not in serial.history_[0]
    with pytest.raises(ValueError, match="fit_epochs trains serially"):
        next(cls(n_shards=2).fit_epochs(X, y))
    with pytest.raises(ValueError, match="parameter 'n_shards' must be"):
        cls(n_shards=0).fit(X, y)


def _tagged_sentences(n=40, seed=0):
    rng = np.random.RandomState(seed)
    words = {"the": "DT", "a": "DT", "dog": "NN", "cat": "NN", "runs": "VB", "big": "JJ"}
    names = list(words)
    X = [[names[i] for i in rng.randint(len(names), size=rng.randint(1, 6))] for _ in range(n)]
    y = [[words[w] if rng.rand() > 0.1 else "NN" for w in s] for s in X]  # some noise
    return X, y


def test_sequence_tagger_one_shard_equals_serial_fit(client):
    from perceptrons import SequenceTagger

    X, y = _tagged_sentences()
    serial = SequenceTagger(max_epochs=3, random_state=0).fit(X, y)
    mixed = ParameterMixing(SequenceTagger(max_epochs=3, random_state=0), n_shards=1)
    fitted = mixed.fit(X, y).estimator_
    assert np.array_equal(fitted.coef_.toarray(), serial.coef_.toarray())
    assert np.array_equal(fitted.transitions_, serial.transitions_)
    assert mixed.predict(X) == serial.predict(X)


def test_sequence_tagger_threads_equal_dask(client):
    from perceptrons import SequenceTagger

    X, y = _tagged_sentences(seed=1)
    dask = ParameterMixing(SequenceTagger(max_epochs=3, random_state=0), n_shards=2)
    on_dask = dask.fit(X, y).estimator_
    on_threads = mix_threads(SequenceTagger(max_epochs=3, random_state=0), X, y, n_shards=2)
    np.testing.assert_allclose(on_dask.coef_.toarray(), on_threads.coef_.toarray(), **TOL)
    np.testing.assert_allclose(on_dask.transitions_, on_threads.transitions_, **TOL)
    assert [r["shard_mistakes"] for r in dask.history_] == [
        r["shard_mistakes"] for r in on_threads.history_
    ]


def test_fit_epochs_publishing_once_ends_with_the_model_of_publishing_each_epoch(client):
    X, y = _problem(3, sparse=True)
    models = []
    for each in (True, False):
        mixer = ParameterMixing(
            AveragedPerceptron(max_epochs=3, random_state=0), n_shards=2, client=client
        )
        seen = [
            hasattr(getattr(mixer, "estimator_", None), "coef_")
            for _ in mixer.fit_epochs(X, y, publish_each_epoch=each)
        ]
        assert seen == ([True] * 3 if each else [False, False, True])
        models.append(mixer.estimator_)
    _same_model(models[0], models[1])
