"""The ``perceptrons`` command, driven as a user drives it.

Each command runs in-process through :func:`perceptrons.cli.main` (the console script's
entry point), with stdin, stdout and stderr swapped for strings; a few smoke tests at
the end run ``python -m perceptrons`` in a subprocess, as installed.
"""

import contextlib
import inspect
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from perceptrons import demo
from perceptrons.cli import main
from perceptrons.datasets import load_20newsgroups, shared_data_dir
from perceptrons.linear._online import OnlineLearner

SHARED = shared_data_dir()
needs_data = pytest.mark.skipif(
    SHARED is None, reason="shared data not found (set PERCEPTRONS_DATA or put ../shared/data)"
)


def run(*args, stdin=None):
    """Run ``perceptrons ARGS`` in-process; return (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    stream = io.TextIOWrapper(io.BytesIO((stdin or "").encode("utf-8")), encoding="utf-8")
    debug = os.environ.pop("PERCEPTRONS_DEBUG", None)
    old_stdin, sys.stdin = sys.stdin, stream
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main([str(arg) for arg in args])
    finally:
        sys.stdin = old_stdin
        if debug is not None:
            os.environ["PERCEPTRONS_DEBUG"] = debug
    assert isinstance(status, int)
    return status, out.getvalue(), err.getvalue()


def run_subprocess(*args, stdin=None):
    """Run ``python -m perceptrons ARGS``; return (exit code, stdout, stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "PERCEPTRONS_DEBUG"}
    done = subprocess.run(
        [sys.executable, "-m", "perceptrons", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    return done.returncode, done.stdout, done.stderr


def assert_user_error(result, code, *fragments):
    """A user's mistake: the given exit code, one line on stderr, no traceback."""
    status, _, err = result
    assert status == code, err
    lines = err.strip().splitlines()
    # perceptrons: error: ... (usage errors of argparse: perceptrons COMMAND: error: ...)
    assert len(lines) == 1 and lines[0].startswith("perceptrons"), err
    assert (": error: " in lines[0]) and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, err


# ---------------------------------------------------------------- shared data files
@pytest.fixture(scope="module")
def sentiment(tmp_path_factory):
    """The sentiment corpus split as its README says: file order, 80 % / 20 %."""
    if SHARED is None:
        pytest.skip("shared data not found")
    lines = (
        (SHARED / "sentiment" / "all_sentiment_shuffled.first5000.txt")
        .read_text(encoding="utf-8")
        .splitlines()
    )
    folder = tmp_path_factory.mktemp("sentiment")
    train, test = folder / "train.txt", folder / "test.txt"
    train.write_text("\n".join(lines[:4000]) + "\n", encoding="utf-8")
    test.write_text("\n".join(lines[4000:]) + "\n", encoding="utf-8")
    return train, test


@pytest.fixture(scope="module")
def newsgroups(tmp_path_factory):
    """20 Newsgroups raw posts as TSV files (label, tab, the post on one line)."""
    if SHARED is None:
        pytest.skip("shared data not found")
    docs_train, y_train, docs_test, y_test = load_20newsgroups()
    folder = tmp_path_factory.mktemp("20news")
    paths = []
    for name, docs, labels in (("train", docs_train, y_train), ("test", docs_test, y_test)):
        path = folder / f"{name}.tsv"
        pairs = zip(docs, labels, strict=True)
        rows = (f"{label}\t{' '.join(doc.split())}" for doc, label in pairs)
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        paths.append(path)
    return tuple(paths)


@pytest.fixture(scope="module")
def sentiment_model(sentiment, tmp_path_factory):
    train, test = sentiment
    model = tmp_path_factory.mktemp("models") / "sentiment.npz"
    result = run(
        "train",
        train,
        "-o",
        model,
        "--dev",
        test,
        "--tokenizer",
        "whitespace",
        "--features",
        "vocabulary",
        "--json",
        "--quiet",
    )
    assert result[0] == 0, result[2]
    return model, json.loads(result[1])


# ------------------------------------------------------------------------- commands
def test_demo_prints_the_comparison_and_writes_the_learning_curves(tmp_path):
    status, out, err = run("demo", "--output-dir", tmp_path)
    assert status == 0, err
    for name in ("Perceptron", "AveragedPerceptron", "VotedPerceptron", "sklearn SGD"):
        assert name in out
    assert "digits" in out and "breast cancer" in out
    png = tmp_path / "perceptrons-demo.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000


@needs_data
def test_train_on_the_sentiment_corpus(sentiment_model):
    model, metrics = sentiment_model
    assert model.exists()
    assert metrics["classes"] == ["neg", "pos"] and metrics["examples"] == 4000
    assert len(metrics["epochs"]) == 10
    # Johansson's lecture on the averaged perceptron reports 0.829 on the full corpus.
    assert metrics["dev_accuracy"] > 0.78


@needs_data
def test_train_prints_one_line_per_epoch_with_dev_accuracy(sentiment, tmp_path):
    train, test = sentiment
    status, out, err = run(
        "train",
        train,
        "-o",
        tmp_path / "m.npz",
        "--dev",
        test,
        "--epochs",
        "3",
        "--algorithm",
        "perceptron",
    )
    assert status == 0, err
    epochs = [line for line in out.splitlines() if line.startswith("epoch ")]
    assert len(epochs) == 3 and all("mistakes" in e and "dev accuracy" in e for e in epochs)


@needs_data
def test_evaluate_reports_accuracy_f1_and_the_confusion_matrix(sentiment, sentiment_model):
    _, test = sentiment
    model, metrics = sentiment_model
    status, out, err = run("evaluate", model, test)
    assert status == 0, err
    assert "accuracy" in out and "macro-F1" in out and "confusion matrix" in out
    assert "precision" in out and "recall" in out
    status, out, _ = run("evaluate", model, test, "--json")
    report = json.loads(out)
    assert report["accuracy"] == pytest.approx(metrics["dev_accuracy"])
    assert np.sum(report["confusion_matrix"]) == 1000
    assert set(report["classes"]) == {"neg", "pos"}


@needs_data
def test_predict_writes_one_label_per_line_from_a_file_or_stdin(
    sentiment, sentiment_model, tmp_path
):
    _, test = sentiment
    model, _ = sentiment_model
    out_file = tmp_path / "labels.txt"
    status, _, err = run("predict", model, test, "-o", out_file)
    assert status == 0, err
    labels = out_file.read_text().splitlines()
    assert len(labels) == 1000 and set(labels) <= {"neg", "pos"}
    texts = "this movie is great , i loved it\nterrible , boring , a waste of money\n"
    status, out, err = run("predict", model, "-", "--format", "lines", stdin=texts)
    assert status == 0, err
    assert out.splitlines() == ["pos", "neg"]
    status, out, _ = run("predict", model, "-", "--format", "lines", "--scores", stdin=texts)
    first = out.splitlines()[0].split("\t")
    assert first[0] == "pos" and float(first[1]) > 0


@needs_data
def test_inspect_names_the_top_words_of_each_class(sentiment_model):
    model, _ = sentiment_model
    status, out, err = run("inspect", model)
    assert status == 0, err
    assert "AveragedPerceptron" in out and "neg, pos" in out and "epoch 10" in out
    assert "class pos:" in out
    positive = out.split("class pos:")[1].splitlines()[1]
    assert any(word in positive for word in ("great", "excellent", "best", "love", "perfect"))
    info = json.loads(run("inspect", model, "--json")[1])
    assert info["features"] > 10_000 and info["hyperparameters"]["max_epochs"] == 10


@needs_data
def test_plot_draws_the_three_learning_curves_and_a_confusion_matrix(sentiment, tmp_path):
    train, test = sentiment
    png = tmp_path / "curves.png"
    status, out, err = run(
        "plot", train, "--dev", test, "-o", png, "--epochs", "4", "--tokenizer", "whitespace"
    )
    assert status == 0, err
    confusion = tmp_path / "curves-confusion.png"
    for path in (png, confusion):
        assert path.read_bytes()[:4] == b"\x89PNG" and path.stat().st_size > 15_000
    assert "perceptron" in out and "voted" in out


@needs_data
def test_train_plot_option_writes_a_png(sentiment, tmp_path):
    train, test = sentiment
    png = tmp_path / "train.png"
    status, _, err = run(
        "train",
        train,
        "-o",
        tmp_path / "m.npz",
        "--dev",
        test,
        "--plot",
        png,
        "--epochs",
        "2",
        "--quiet",
    )
    assert status == 0, err
    assert png.stat().st_size > 10_000 and (tmp_path / "train-confusion.png").exists()


@needs_data
def test_20_newsgroups_raw_text_end_to_end(newsgroups, tmp_path):
    train, test = newsgroups
    model = tmp_path / "news.npz"
    status, out, err = run(
        "train",
        train,
        "-o",
        model,
        "--features",
        "vocabulary",
        "--weighting",
        "tfidf",
        "--json",
        "--quiet",
    )
    assert status == 0, err
    assert json.loads(out)["examples"] == 11314
    report = json.loads(run("evaluate", model, test, "--json")[1])
    assert report["examples"] == 7532 and len(report["classes"]) == 20
    assert report["accuracy"] > 0.78  # scikit-learn's averaged SGD: 0.82 on TF-IDF
    status, out, _ = run("inspect", model, "--top", "3")
    assert "class sci.space:" in out


@needs_data
def test_svmlight_voted_perceptron_end_to_end(tmp_path):
    train, test = SHARED / "a9a" / "a9a", SHARED / "a9a" / "a9a.t"
    model = tmp_path / "a9a.npz"
    status, _, err = run(
        "train", train, "-o", model, "--algorithm", "voted", "--epochs", "2", "--quiet"
    )
    assert status == 0, err
    report = json.loads(run("evaluate", model, test, "--json")[1])
    assert report["accuracy"] > 0.8
    status, out, _ = run("predict", model, test)
    assert len(out.splitlines()) == 16281


@needs_data
def test_stream_trains_the_same_model_as_in_memory(tmp_path):
    train, test = SHARED / "a9a" / "a9a", SHARED / "a9a" / "a9a.t"
    streamed, in_memory = tmp_path / "streamed.npz", tmp_path / "memory.npz"
    status, out, err = run(
        "train",
        train,
        "-o",
        streamed,
        "--stream",
        "--chunk-size",
        "3000",
        "--epochs",
        "2",
        "--no-shuffle",
        "--json",
        "--quiet",
    )
    assert status == 0, err
    assert json.loads(out)["streamed"] is True
    assert run("train", train, "-o", in_memory, "--epochs", "2", "--no-shuffle", "--quiet")[0] == 0
    a = json.loads(run("evaluate", streamed, test, "--json")[1])
    b = json.loads(run("evaluate", in_memory, test, "--json")[1])
    assert a["accuracy"] == b["accuracy"] and a["confusion_matrix"] == b["confusion_matrix"]


# -------------------------------------------------------- parameter mixing (--shards)
def _linear_svmlight(path, n=300, seed=5, classes=2):
    """A noisy linear problem in svmlight (``seed`` draws the examples, the separator is
    fixed): mixed and serial models then differ."""
    weights = np.random.default_rng(0).normal(size=(6, classes))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    scores = X @ weights + 0.8 * rng.normal(size=(n, classes))
    y = scores.argmax(axis=1) if classes > 2 else np.where(scores[:, 0] > 0, 1, -1)
    path.write_text(
        "".join(
            f"{label} " + " ".join(f"{j + 1}:{v:.5f}" for j, v in enumerate(row)) + "\n"
            for row, label in zip(X, y, strict=True)
        )
    )
    return path


def _accuracy(model, data):
    status, out, err = run("evaluate", model, data, "--json")
    assert status == 0, err
    return json.loads(out)["accuracy"]


def test_shards_train_on_threads_and_compare_serial_prints_the_real_cost(tmp_path):
    train = _linear_svmlight(tmp_path / "train.svm")
    dev = _linear_svmlight(tmp_path / "dev.svm", n=200, seed=6)
    mixed, serial = tmp_path / "mixed.npz", tmp_path / "serial.npz"
    common = ("--epochs", "4", "--seed", "3", "--dev", dev)
    status, out, err = run(
        "train", train, "-o", mixed, "--shards", "3", "--compare-serial", "--json", *common
    )
    assert status == 0, err
    report = json.loads(out)["parallel"]
    assert report["backend"] == "threads" and report["cluster"] is None
    threads = min(3, os.cpu_count() or 1)  # one thread per shard, up to one per CPU
    assert report["shards"] == 3 and report["workers"] == threads
    assert report["local_epochs"] == 1
    assert "epoch 4: " in err and "on 3 shards" in err  # human lines on stderr with --json
    # the same estimator trained serially by the command line is the comparison's
    assert run("train", train, "-o", serial, "--quiet", *common)[0] == 0
    from perceptrons import load

    assert not np.allclose(load(mixed).coef_, load(serial).coef_)  # a real difference
    mixed_accuracy, serial_accuracy = _accuracy(mixed, dev), _accuracy(serial, dev)
    assert report["accuracy_on"] == "dev" and report["accuracy"] == mixed_accuracy
    assert report["serial"]["accuracy"] == serial_accuracy
    cost = 100 * (mixed_accuracy - serial_accuracy)
    assert report["accuracy_cost_points"] == pytest.approx(cost, abs=1e-4)
    speedup = report["speedup"]
    ratio = report["serial"]["fit_seconds"] / report["fit_seconds"]
    assert speedup == pytest.approx(ratio, rel=1e-2, abs=1e-3)
    # Under load the rounded speedup can be 0.0: the command guards it the same way.
    pace = f"{speedup:.1f}x faster" if speedup >= 1 else f"{1 / max(speedup, 1e-3):.1f}x slower"
    summary = [line for line in err.splitlines() if line.startswith("parameter mixing on")]
    assert len(summary) == 1 and f"{threads} threads (3 shards" in summary[0]
    assert f"dev accuracy {mixed_accuracy:.4f}" in summary[0]
    assert f"accuracy cost: {cost:+.2f} points vs serial" in err and pace in err
    # without --dev the accuracy is the training data's; --quiet prints no summary
    status, out, err = run("train", train, "-o", mixed, "--shards", "-1", "--json", "--quiet")
    assert status == 0 and err == ""
    report = json.loads(out)["parallel"]
    assert report["workers"] == report["shards"] == (os.cpu_count() or 1)
    assert report["accuracy_on"] == "train"
    assert report["accuracy"] == _accuracy(mixed, train) and "serial" not in report


@pytest.mark.parametrize(
    "algorithm, options",
    [
        ("perceptron", ("--mixing", "mistakes")),
        ("averaged", ("--update", "pa-i", "--mixing", "uniform")),
        ("logistic", ("--l2", "0.001", "--mixing", "sum")),
    ],
)
def test_every_mixable_algorithm_trains_with_shards_and_its_model_predicts(
    algorithm, options, tmp_path
):
    train = _linear_svmlight(tmp_path / "train.svm", classes=3)
    model = tmp_path / "m.npz"
    status, out, err = run(
        "train", train, "-o", model, "--algorithm", algorithm, *options, "--shards", "2",
        "--local-epochs", "2", "--json",
    )  # fmt: skip
    assert status == 0, err
    result = json.loads(out)
    report = result["parallel"]
    assert (report["backend"], report["local_epochs"]) == ("threads", 2)
    assert report["mixing"] == options[-1]  # as given
    assert len(result["epochs"]) == 10 and result["train_accuracy"] > 0.6
    status, out, _ = run("predict", model, train)
    assert status == 0 and set(out.split()) <= {"0", "1", "2"} and len(out.split()) == 300
    assert _accuracy(model, train) == result["train_accuracy"] == report["accuracy"]


@pytest.mark.parametrize("mode", [(), ("--stream",), ("--shards", "2")])
@pytest.mark.parametrize("update", ["pa-i", "perceptron"])
def test_the_epoch_line_gives_mistakes_and_updates(update, mode, tmp_path):
    """Mistakes: wrong predictions before the update; updates: every example the rule
    updated on (PA-I also on correct predictions of margin below 1). In memory, streamed
    and mixed, the line and the --json epochs give both."""
    train = _linear_svmlight(tmp_path / "train.svm", classes=3)
    options = ("--update", update, "--epochs", "3", "--seed", "1", *mode, "--json")
    status, out, err = run("train", train, "-o", tmp_path / "m.npz", *options)
    assert status == 0, err
    epochs = json.loads(out)["epochs"]
    lines = [line for line in err.splitlines() if line.startswith("epoch ")]
    assert len(epochs) == len(lines) == 3
    for entry, line in zip(epochs, lines, strict=True):
        counts = f"{entry['mistakes']} mistakes, {entry['updates']} updates in 300 examples"
        assert line.startswith(f"epoch {entry['epoch']}: {counts}")
        if update == "pa-i":
            assert entry["updates"] > entry["mistakes"] > 0
        else:
            assert entry["updates"] == entry["mistakes"] > 0
    if not mode:  # the model's own history says the same
        from perceptrons import load

        history = load(tmp_path / "m.npz").history_
        assert [(r["mistakes"], r["updates"]) for r in history] == [
            (e["mistakes"], e["updates"]) for e in epochs
        ]


def test_mixing_options_default_to_the_librarys():
    import inspect

    from perceptrons.parallel import ParameterMixing, mix_threads

    status, out, _ = run("train", "--help")
    assert status == 0
    help_text = " ".join(out.split())
    for function in (ParameterMixing, mix_threads):
        default = inspect.signature(function).parameters["mixing"].default
        assert f"(default: the library's, now {default})" in help_text


def test_bad_parallel_options_are_usage_errors_naming_the_option(tmp_path):
    data = _linear_svmlight(tmp_path / "train.svm")
    other = _linear_svmlight(tmp_path / "other.svm", seed=7)
    text = tmp_path / "t.tsv"
    text.write_text("a\tgood words\nb\tbad words\n")
    out = ("-o", tmp_path / "m.npz")
    cases = [
        (("--shards", "0"), "--shards"),
        (("--shards", "-2"), "--shards"),
        (("--shards", "two"), "--shards"),
        (("--shards", "2", "--local-epochs", "0"), "--local-epochs"),
        (("--shards", "2", "--mixing", "median"), "--mixing"),
        (("--shards", "2", "--algorithm", "logistic", "--mixing", "mistakes"), "--mixing"),
        (("--shards", "2", "--backend", "mpi"), "--backend"),
        (("--mixing", "sum"), "--mixing"),
        (("--local-epochs", "2"), "--local-epochs"),
        (("--compare-serial",), "--compare-serial"),
        (("--backend", "threads"), "--backend"),
        (("--backend", "threads", "--scheduler", "tcp://127.0.0.1:1"), "--backend threads"),
        (("--backend", "threads", "--stream", "--shards", "1"), "--backend threads"),
        (("--stream", "--shards", "3"), "split -n l/3"),
        (("--stream", "--shards", "1", "--compare-serial"), "--compare-serial"),
        (("--stream", "--shards", "1", "--shuffle-window", "2"), "--shuffle-window"),
        ((other, "--shards", "3"), "--shards 3 but 2 DATA files"),
        ((other,), "2 DATA files"),
        ((other, "--shards", "2", "--class-weight", "1:2"), "--class-weight"),
        ((text, "--shards", "2"), "t.tsv: tsv is text"),
        ((text, "--stream", "--shards", "2"), "svmlight files only"),
    ]
    for options, fragment in cases:
        files = [option for option in options if option in (other, text)]
        options = [option for option in options if option not in files]
        status, _, err = run("train", data, *files, *out, *options)
        assert status == 2, (options, err)
        assert fragment in err and "Traceback" not in err, (options, err)


@pytest.fixture(scope="module")
def dask_scheduler():
    """One small Dask cluster (threads of this process) for the --scheduler tests."""
    distributed = pytest.importorskip(
        "distributed", reason="the [distributed] extra is not installed"
    )
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address


@pytest.mark.filterwarnings("ignore:Port .* is already in use:UserWarning")  # dashboard
def test_scheduler_joins_an_existing_dask_cluster(dask_scheduler, tmp_path):
    train = _linear_svmlight(tmp_path / "train.svm")
    model = tmp_path / "m.npz"
    status, out, err = run(
        "train", train, "-o", model, "--scheduler", dask_scheduler, "--epochs", "3", "--json"
    )
    assert status == 0, err
    result = json.loads(out)
    report = result["parallel"]
    assert (report["backend"], report["cluster"]) == ("dask", dask_scheduler)
    assert report["workers"] == report["shards"] == 2  # one shard per worker of the cluster
    assert report["bytes_sent"] > 0 and report["bytes_received"] > 0
    assert [e["epoch"] for e in result["epochs"]] == [1, 2, 3]
    assert f"the Dask cluster at {dask_scheduler} of 2 workers (2 shards" in err
    assert _accuracy(model, train) == report["accuracy"]
    status, out, err = run(
        "train", train, "-o", model, "--scheduler", dask_scheduler, "--shards", "3", "--json"
    )
    assert status == 0, err
    assert json.loads(out)["parallel"]["shards"] == 3


@pytest.mark.filterwarnings("ignore:Port .* is already in use:UserWarning")  # dashboard
def test_stream_with_shards_streams_each_file_on_a_worker(dask_scheduler, tmp_path):
    parts = [_linear_svmlight(tmp_path / f"part{i}.svm", seed=5, n=150 + i) for i in range(2)]
    dev = _linear_svmlight(tmp_path / "dev.svm", n=200, seed=6)
    model = tmp_path / "m.npz"
    status, out, err = run(
        "train", *parts, "-o", model, "--stream", "--chunk-size", "40",
        "--scheduler", dask_scheduler, "--dev", dev, "--epochs", "3", "--json",
    )  # fmt: skip
    assert status == 0, err
    result = json.loads(out)
    report = result["parallel"]
    assert result["streamed"] is True and report["streamed"] is True
    assert report["backend"] == "dask" and report["shards"] == 2  # one per file
    assert result["epochs"][-1]["examples"] == 301
    assert report["accuracy_on"] == "dev"
    dev_accuracy = _accuracy(model, dev)  # what evaluate says of the saved model
    assert result["epochs"][-1]["dev_accuracy"] == report["accuracy"] == dev_accuracy
    assert "dev accuracy" in err and "streamed)" in err


@pytest.mark.parametrize(
    ("service", "message"),
    [
        ("http", "answered b'HTTP/1.1', not the handshake of a Dask scheduler"),
        ("silent", "no answer of a Dask scheduler within 1 s (is it one? --connect-timeout"),
    ],
    ids=["http", "silent"],
)
def test_a_scheduler_address_that_is_not_dask_is_one_line(
    tmp_path, not_dask_service, service, message
):
    """An HTTP reply was read as a 3 EiB Dask message (a MemoryError traceback); a
    service that never answers held the client forever: both are one line now, within
    the --connect-timeout (the run is in a thread, so that a hang fails the test)."""
    pytest.importorskip("distributed", reason="the [distributed] extra is not installed")
    import threading

    data = _counts_file(tmp_path / "data.svm")
    address = not_dask_service(service)
    done = []
    thread = threading.Thread(
        target=lambda: done.append(
            run("train", data, "-o", tmp_path / "m.npz", "--scheduler", address,
                "--connect-timeout", "1")
        ),
        daemon=True,
    )  # fmt: skip
    thread.start()
    thread.join(120)
    assert done, "the run did not end"
    assert_user_error(done[0], 1, f"--scheduler {address}: ", message)
    assert not (tmp_path / "m.npz").exists()


def test_connect_timeout_is_a_positive_number_for_a_scheduler(tmp_path):
    for options, fragment in (
        (("--scheduler", "tcp://127.0.0.1:1", "--connect-timeout", "0"), "positive number"),
        (("--scheduler", "tcp://127.0.0.1:1", "--connect-timeout", "inf"), "positive number"),
        (("--shards", "2", "--connect-timeout", "1"), "applies to --scheduler"),
        (
            (
                "--connect-timeout",
                "1",
            ),
            "applies to parameter mixing",
        ),
    ):
        status, _, err = run("train", "a.svm", "-o", tmp_path / "m.npz", *options)
        assert status == 2 and fragment in err, (options, err)


# A failing parameter-mixing run on a local Dask cluster, in a process of its own (its
# stderr is everything printed, the workers' logs included). Its workers are threads of
# that process (processes=False, else each test would start worker processes): the
# cluster is otherwise the command's own (its logging level included).
_LOCAL_CLUSTER_RUN = """
import sys
import distributed
from perceptrons.cli import main

Local = distributed.LocalCluster
distributed.LocalCluster = lambda **options: Local(
    **{**options, "processes": False, "protocol": "tcp://"}
)
sys.exit(main(sys.argv[1:]))
"""


def test_a_failing_mixing_run_on_a_local_cluster_prints_one_line(tmp_path):
    """A worker's task failed: the workers logged 'Compute Failed' and the task's
    traceback before the command's own one-line error; only that line is left."""
    pytest.importorskip("distributed", reason="the [distributed] extra is not installed")
    good = _counts_file(tmp_path / "a.svm")
    bad = tmp_path / "b.svm"
    bad.write_text("1 1:1\n1 x:oops\n")
    env = {k: v for k, v in os.environ.items() if k != "PERCEPTRONS_DEBUG"}
    done = subprocess.run(
        [sys.executable, "-c", _LOCAL_CLUSTER_RUN, "train", str(good), str(bad), "--shards",
         "2", "-o", str(tmp_path / "m.npz")],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        f'perceptrons: error: {bad}:2: feature index "x" is not an integer'
    ], done.stderr
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.skipif(os.name != "posix", reason="process groups and SIGINT")
def test_ctrl_c_during_a_mixing_run_on_a_local_cluster_prints_one_line(tmp_path):
    """Ctrl-C reaches every process of the terminal's foreground group: the local
    cluster's worker processes each printed a KeyboardInterrupt traceback (72 lines in
    all). They ignore it now, and the command closes them: 'interrupted', exit 130.
    The signal is sent to the run's process group once its first epoch is printed
    (the workers are up, and a run of 10^6 epochs is far from done)."""
    import signal

    pytest.importorskip("distributed", reason="the [distributed] extra is not installed")
    parts = [_linear_svmlight(tmp_path / f"part{i}.svm", seed=i, n=200) for i in range(2)]
    env = {k: v for k, v in os.environ.items() if k != "PERCEPTRONS_DEBUG"}
    command = [sys.executable, "-m", "perceptrons", "train", *map(str, parts), "--shards",
               "2", "-o", str(tmp_path / "m.npz"), "--epochs", "1000000"]  # fmt: skip
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    ) as process:  # fmt: skip
        try:
            first = process.stdout.readline()
            assert first.startswith("epoch 1: "), (first, process.stderr.read())
            os.killpg(process.pid, signal.SIGINT)
            _, err = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
    assert (process.returncode, err) == (130, "perceptrons: error: interrupted\n")
    assert not (tmp_path / "m.npz").exists()


def test_backend_auto_picks_threads_for_one_file_in_memory_else_dask(tmp_path):
    from perceptrons.cli import build_parser
    from perceptrons.cli.mixing import backend

    def chosen(*options):
        return backend(build_parser().parse_args(["train", *options, "-o", "m.npz"]))

    assert chosen("a.svm", "--shards", "4") == "threads"
    assert chosen("a.svm", "--scheduler", "tcp://h:8786") == "dask"
    assert chosen("a.svm", "--shards", "1", "--stream") == "dask"
    assert chosen("a.svm", "b.svm", "--shards", "2") == "dask"
    assert chosen("a.svm", "--shards", "2", "--backend", "dask") == "dask"


@pytest.mark.filterwarnings("ignore:Port .* is already in use:UserWarning")  # dashboard
def test_backend_dask_starts_a_local_cluster_of_a_worker_per_shard(tmp_path):
    pytest.importorskip("distributed", reason="the [distributed] extra is not installed")
    train = _linear_svmlight(tmp_path / "train.svm")
    model = tmp_path / "m.npz"
    status, out, err = run(
        "train", train, "-o", model, "--shards", "2", "--backend", "dask", "--epochs", "2",
        "--json",
    )  # fmt: skip
    assert status == 0, err
    report = json.loads(out)["parallel"]
    assert (report["backend"], report["cluster"]) == ("dask", "local")
    workers = min(2, os.cpu_count() or 1)  # one per shard, up to one per CPU
    assert report["shards"] == 2 and report["workers"] == workers
    assert f"a local Dask cluster of {workers} workers" in err and "starting the cluster" in err
    assert _accuracy(model, train) == report["accuracy"]


def test_stream_refuses_a_vocabulary_featurizer(tmp_path):
    train = tmp_path / "t.tsv"
    train.write_text("a\tx y\nb\ty z\n")
    status, _, err = run(
        "train", train, "-o", tmp_path / "m.npz", "--stream", "--features", "vocabulary"
    )
    assert status == 2 and "--stream" in err and "Traceback" not in err


def test_diagnose_reports_the_bound_and_the_mistakes(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.where(X @ [1.0, -2.0, 0.5] > 0, 1, -1)
    keep = np.abs(X @ [1.0, -2.0, 0.5]) > 0.3  # a margin: separable
    path = tmp_path / "sep.svm"
    lines = (
        f"{label} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(row))
        for row, label in zip(X[keep], y[keep], strict=True)
    )
    path.write_text("\n".join(lines) + "\n")
    status, out, err = run("diagnose", path, "--json")
    assert status == 0, err
    report = json.loads(out)
    assert report["separable"] and report["converged"]
    assert report["mistakes"] <= report["bound"]
    status, out, _ = run("diagnose", path)
    assert "R" in out and "bound" in out and "mistakes" in out


@needs_data
def test_diagnose_a_multiclass_corpus_one_class_against_the_rest(newsgroups):
    train, _ = newsgroups
    status, _, err = run("diagnose", train)
    assert status == 2 and "--positive" in err
    status, out, err = run("diagnose", train, "--positive", "sci.space", "--epochs", "5", "--json")
    assert status == 0, err
    report = json.loads(out)
    assert report["R"] > 0 and report["mistakes"] > 0


# ---------------------------------------------------------------------- error paths
def test_missing_file(tmp_path):
    assert_user_error(run("train", tmp_path / "nope.txt", "-o", tmp_path / "m.npz"), 1, "nope.txt")


def test_empty_file(tmp_path):
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    assert_user_error(run("train", empty, "-o", tmp_path / "m.npz"), 1, "empty.tsv")


def test_malformed_line_names_file_and_line_and_can_be_skipped(tmp_path):
    bad = tmp_path / "bad.svm"
    rows = [f"{1 if i % 2 else -1} 1:{i % 3} 2:{i % 5}" for i in range(40)]
    rows[6] = "1 1:0.5 2:oops"
    bad.write_text("\n".join(rows) + "\n")
    assert_user_error(run("train", bad, "-o", tmp_path / "m.npz"), 1, "bad.svm:7")
    status, out, err = run("train", bad, "-o", tmp_path / "m.npz", "--skip-bad-lines")
    assert status == 0, err
    assert "skipped 1 bad line" in out


def test_unknown_format_is_a_usage_error(tmp_path):
    status, _, err = run("train", tmp_path / "x", "-o", tmp_path / "m.npz", "--format", "xml")
    assert status == 2 and "invalid choice" in err and "Traceback" not in err


def test_unknown_command_and_missing_arguments_are_usage_errors():
    assert run("fly")[0] == 2
    assert run("train")[0] == 2


@pytest.fixture()
def small_text_model(tmp_path):
    train = tmp_path / "train.tsv"
    rows = [f"{'a' if i % 2 else 'b'}\tword{i % 2} other{i % 3} common" for i in range(40)]
    train.write_text("\n".join(rows) + "\n")
    model = tmp_path / "model.npz"
    assert run("train", train, "-o", model, "--quiet")[0] == 0
    return model


def test_label_never_seen_in_training(small_text_model, tmp_path):
    test = tmp_path / "test.tsv"
    test.write_text("a\tword1 common\nzebra\tword0 other1\n")
    assert_user_error(run("evaluate", small_text_model, test), 1, "zebra", "never seen")


def test_text_model_on_numeric_data_and_other_features(small_text_model, tmp_path):
    numeric = tmp_path / "x.svm"
    numeric.write_text("1 1:1 2:1\n-1 3:1\n")
    assert_user_error(run("evaluate", small_text_model, numeric), 1, "raw text")
    train = tmp_path / "narrow.svm"
    train.write_text("".join(f"{1 if i % 2 else -1} 1:{i % 3} 2:{i % 2}\n" for i in range(30)))
    narrow = tmp_path / "narrow.npz"
    assert run("train", train, "-o", narrow, "--quiet")[0] == 0
    wide = tmp_path / "wide.svm"
    wide.write_text("1 1:1 7:1\n-1 2:1\n")
    assert_user_error(run("evaluate", narrow, wide), 1, "wide.svm:1", "beyond the 2 features")


def test_corrupt_and_non_model_files(small_text_model, tmp_path):
    truncated = tmp_path / "truncated.npz"
    content = small_text_model.read_bytes()
    truncated.write_bytes(content[: len(content) // 2])
    assert_user_error(run("inspect", truncated), 1, "truncated.npz")
    text = tmp_path / "notes.npz"
    text.write_text("not a model")
    assert_user_error(run("predict", text, "-"), 1, "notes.npz")


def test_a_failed_train_leaves_an_existing_model_untouched(small_text_model, tmp_path):
    before = small_text_model.read_bytes()
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tfine text\nno tab on this line\n")
    assert_user_error(run("train", bad, "-o", small_text_model), 1, "bad.tsv:2")
    assert small_text_model.read_bytes() == before
    assert sorted(p.name for p in small_text_model.parent.glob(".*")) == []


def test_plot_without_matplotlib_says_how_to_get_it(tmp_path, monkeypatch):
    train = tmp_path / "train.tsv"
    train.write_text("".join(f"{'a' if i % 2 else 'b'}\tw{i % 2}\n" for i in range(20)))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    status, _, err = run("plot", train, "-o", tmp_path / "p.png")
    assert status == 1
    assert "pip install" in err and "perceptrons[plot]" in err
    assert "Traceback" not in err
    assert not (tmp_path / "p.png").exists()


def test_main_returns_the_exit_code_of_help_version_and_usage_errors(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("perceptrons ")
    assert main(["train", "--help"]) == 0
    assert "--stream" in capsys.readouterr().out
    assert main(["train", "data.svm", "--epochs", "0"]) == 2
    assert "must be at least 1" in capsys.readouterr().err


# ------------------------------------------------------- as installed: in a subprocess
def test_subprocess_version():
    from perceptrons import __version__

    status, out, err = run_subprocess("--version")
    assert status == 0, err
    assert out.strip() == f"perceptrons {__version__}"


def test_subprocess_train_then_predict_from_stdin(tmp_path):
    train = tmp_path / "train.tsv"
    rows = [f"{'a' if i % 2 else 'b'}\tword{i % 2} other{i % 3} common" for i in range(40)]
    train.write_text("\n".join(rows) + "\n")
    model = tmp_path / "model.npz"
    status, out, err = run_subprocess("train", train, "-o", model, "--json", "--quiet")
    assert status == 0, err
    assert json.loads(out)["classes"] == ["a", "b"]
    status, out, err = run_subprocess(
        "predict", model, "-", "--format", "lines", stdin="word1 common\nword0 other1\n"
    )
    assert status == 0, err
    assert out.splitlines() == ["a", "b"]


def test_subprocess_error_is_one_line_without_traceback(tmp_path):
    assert_user_error(
        run_subprocess("train", tmp_path / "nope.txt", "-o", tmp_path / "m.npz"), 1, "nope.txt"
    )
    assert not (tmp_path / "m.npz").exists()


# ------------------------------------------------------------ every estimator, every command
ALGORITHMS = ("perceptron", "averaged", "voted", "logistic", "multinomial-nb", "bernoulli-nb")
PROBABILISTIC = {"logistic", "multinomial-nb", "bernoulli-nb"}


def _counts_file(path, n=60, seed=0):
    """Three classes of non-negative counts (naive Bayes reads counts), svmlight."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        label = i % 3
        counts = rng.poisson(1.0, size=6) + 3 * (np.arange(6) // 2 == label)
        rows.append(f"{label} " + " ".join(f"{j + 1}:{c}" for j, c in enumerate(counts) if c))
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_algorithm_through_every_command(algorithm, tmp_path):
    pytest.importorskip("matplotlib")
    data = _counts_file(tmp_path / "train.svm")
    model = tmp_path / "m.npz"
    status, out, err = run("train", data, "-o", model, "--algorithm", algorithm, "--json")
    assert status == 0, err
    result = json.loads(out)
    assert result["algorithm"] == algorithm and result["train_accuracy"] > 0.6
    assert result["classes"] == ["0", "1", "2"] and result["sample_weights"] is False
    report = json.loads(run("evaluate", model, data, "--json")[1])
    assert report["accuracy"] == pytest.approx(result["train_accuracy"])
    status, out, err = run("predict", model, data, "--scores")
    assert status == 0, err
    rows = [line.split("\t") for line in out.splitlines()]
    assert len(rows) == 60 and all(len(row) == 4 for row in rows)
    status, out, err = run("predict", model, data, "--proba")
    if algorithm in PROBABILISTIC:
        assert status == 0, err
        probabilities = np.array(
            [[float(v) for v in line.split("\t")[1:]] for line in out.splitlines()]
        )
        assert probabilities.shape == (60, 3)
        np.testing.assert_allclose(probabilities.sum(axis=1), 1, atol=1e-5)
    else:
        assert_user_error((status, out, err), 2, "--scores", "CalibratedClassifierCV")
    status, out, err = run("inspect", model)
    assert status == 0, err
    assert "classes (3): 0, 1, 2" in out and "class 2:" in out
    info = json.loads(run("inspect", model, "--json")[1])
    assert info["features"] == 6 and len(info["top_features"]) == 3
    png = tmp_path / "curves.png"
    epochs = [] if algorithm.endswith("-nb") else ["--epochs", "2"]
    status, out, err = run("plot", data, "-o", png, "--algorithms", algorithm, *epochs)
    assert status == 0, err
    assert png.read_bytes()[:4] == b"\x89PNG" and (tmp_path / "curves-confusion.png").exists()
    assert f"{algorithm}: final dev error" in out


def test_plot_compares_any_algorithms(tmp_path):
    pytest.importorskip("matplotlib")
    data = _counts_file(tmp_path / "train.svm")
    png = tmp_path / "p.png"
    status, out, err = run(
        "plot",
        data,
        "-o",
        png,
        "--algorithms",
        "logistic,multinomial-nb,averaged",
        "--learning-rate",
        "0.5",
    )
    assert status == 0, err
    assert all(f"{name}: final dev error" in out for name in ("logistic", "multinomial-nb"))
    # an option that applies to none of the algorithms plotted
    status, _, err = run("plot", data, "-o", png, "--algorithms", "voted", "--alpha", "2")
    assert status == 2 and "--alpha" in err
    assert run("plot", data, "--algorithms", "svm")[0] == 2


def test_batch_logistic_regression_from_the_command_line(tmp_path):
    """--algorithm logistic-batch takes --l2, --tol and --max-iter (each estimator's
    own default when absent), refuses --epochs, and inspect says fit starts afresh."""
    data, model = _counts_file(tmp_path / "train.svm"), tmp_path / "m.npz"
    status, _, err = run("train", data, "-o", model, "--algorithm", "logistic-batch", "--quiet")
    assert status == 0, err
    status, text, _ = run("inspect", model, "--json")
    params = json.loads(text)["hyperparameters"]
    assert (params["l2"], params["tol"], params["max_iter"]) == (1e-4, 1e-8, 1000)
    assert "not applicable" in run("inspect", model)[1]
    extra = ("--l2", "0.01", "--tol", "1e-6", "--max-iter", "50")
    status, _, err = run(
        "train", data, "-o", model, "--algorithm", "logistic-batch", *extra, "--quiet"
    )
    assert status == 0, err
    params = json.loads(run("inspect", model, "--json")[1])["hyperparameters"]
    assert (params["l2"], params["tol"], params["max_iter"]) == (0.01, 1e-6, 50)
    # The SGD sibling keeps its own default l2 of 0 when --l2 is absent.
    run("train", data, "-o", model, "--algorithm", "logistic", "--quiet")
    assert json.loads(run("inspect", model, "--json")[1])["hyperparameters"]["l2"] == 0.0
    assert_user_error(
        run("train", data, "-o", model, "--algorithm", "logistic-batch", "--epochs", "3"),
        2,
        "--epochs does not apply to logistic-batch",
    )


def test_the_passive_aggressive_rules_and_the_algorithms_options(tmp_path):
    data = _counts_file(tmp_path / "train.svm")
    for algorithm in ("perceptron", "averaged"):
        for rule in ("pa", "pa-i", "pa-ii"):
            status, _, err = run(
                "train",
                data,
                "-o",
                tmp_path / "m.npz",
                "--algorithm",
                algorithm,
                "--update",
                rule,
                "--C",
                "0.5",
                "--json",
                "--quiet",
            )
            assert status == 0, err
            params = json.loads(run("inspect", tmp_path / "m.npz", "--json")[1])["hyperparameters"]
            assert (params["update"], params["C"]) == (rule, 0.5)
    for extra, param, value in (
        (["--learning-rate", "0.5", "--l2", "0.01", "--average"], "learning_rate", 0.5),
        (["--no-shuffle", "--epochs", "3"], "shuffle", False),
    ):
        status, _, err = run(
            "train", data, "-o", tmp_path / "m.npz", "--algorithm", "logistic", *extra, "--quiet"
        )
        assert status == 0, err
        params = json.loads(run("inspect", tmp_path / "m.npz", "--json")[1])["hyperparameters"]
        assert params[param] == value
    status, _, err = run(
        "train",
        data,
        "-o",
        tmp_path / "m.npz",
        "--algorithm",
        "bernoulli-nb",
        "--alpha",
        "0.5",
        "--binarize",
        "1.5",
        "--no-fit-prior",
        "--quiet",
    )
    assert status == 0, err
    params = json.loads(run("inspect", tmp_path / "m.npz", "--json")[1])["hyperparameters"]
    assert (params["alpha"], params["binarize"], params["fit_prior"]) == (0.5, 1.5, False)


@pytest.mark.parametrize(
    "algorithm, option",
    [
        ("voted", ["--update", "pa"]),
        ("voted", ["--learning-rate", "0.5"]),
        ("logistic", ["--delta", "0.5"]),
        ("logistic", ["--kernel", "rbf"]),
        ("multinomial-nb", ["--epochs", "3"]),
        ("multinomial-nb", ["--binarize", "0.5"]),
        ("bernoulli-nb", ["--no-shuffle"]),
        ("perceptron", ["--alpha", "0.5"]),
        ("averaged", ["--average"]),
        # given with its default value: still the wrong algorithm's option
        ("multinomial-nb", ["--epochs", "10"]),
        ("voted", ["--update", "perceptron"]),
        ("logistic", ["--C", "1.0"]),
    ],
)
def test_an_option_of_another_algorithm_is_a_usage_error_naming_it(algorithm, option, tmp_path):
    # before anything is read: the data file does not even exist
    status, _, err = run(
        "train",
        tmp_path / "missing.svm",
        "-o",
        tmp_path / "m.npz",
        "--algorithm",
        algorithm,
        *option,
    )
    assert status == 2, err
    assert option[0] in err and algorithm in err and "Traceback" not in err


def test_the_option_table_matches_the_estimators_constructors():
    from perceptrons.cli._common import ESTIMATOR_OPTIONS, estimator_class

    for algorithm in ALGORITHMS:
        params = estimator_class(algorithm)().get_params()
        for dest, (param, algorithms) in ESTIMATOR_OPTIONS.items():
            if param == "class_weight" and param not in params:
                continue  # estimators without class weights yet
            assert (param in params) == (algorithm in algorithms), (algorithm, dest)


def test_stream_and_shards_need_an_algorithm_that_can_do_them(tmp_path):
    data = _counts_file(tmp_path / "train.svm")
    for algorithm in ("voted", "multinomial-nb", "bernoulli-nb"):
        status, _, err = run(
            "train", data, "-o", tmp_path / "m.npz", "--algorithm", algorithm, "--shards", "2"
        )
        assert status == 2 and "--shards" in err and algorithm in err, err
        assert "perceptron, averaged" in err
    # naive Bayes streams: one counting pass, the same counts as in memory
    for algorithm in ("logistic", "voted", "multinomial-nb"):
        status, out, err = run(
            "train",
            data,
            "-o",
            tmp_path / "s.npz",
            "--algorithm",
            algorithm,
            "--stream",
            "--chunk-size",
            "7",
            "--json",
            "--quiet",
        )
        assert status == 0, err
        epochs = json.loads(out)["epochs"]
        assert len(epochs) == (1 if algorithm == "multinomial-nb" else 10)
    in_memory = tmp_path / "m.npz"
    assert run("train", data, "-o", in_memory, "--algorithm", "multinomial-nb", "--quiet")[0] == 0
    streamed = json.loads(run("evaluate", tmp_path / "s.npz", data, "--json")[1])
    memory = json.loads(run("evaluate", in_memory, data, "--json")[1])
    assert streamed["confusion_matrix"] == memory["confusion_matrix"]


def test_help_shows_every_default(capsys):
    import argparse

    from perceptrons.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in commands.choices.items():
        text = " ".join(sub.format_help().split())
        for action in sub._actions:
            if not action.option_strings or action.default in (None, argparse.SUPPRESS):
                continue
            if action.default is False or action.help == argparse.SUPPRESS:
                continue
            shown = action.default
            if isinstance(shown, tuple):
                shown = str(shown)
            assert f"(default: {shown})" in text, (name, action.dest)
            assert action.help, (name, action.dest)
    assert main(["train", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--epochs N passes over the data" in help_text and "(default: 10)" in help_text
    assert "--delta DELTA the Δ trick [perceptron, averaged, voted] (default: 0.0)" in help_text
    assert "--algorithm" in help_text and "multinomial-nb" in help_text


# -------------------------------------------------------------- never destroy data
def test_train_refuses_to_write_the_model_over_its_data(tmp_path, monkeypatch):
    data = _counts_file(tmp_path / "data.svm")
    before = data.read_bytes()
    monkeypatch.chdir(tmp_path)
    os.link("data.svm", "hard.svm")
    os.symlink("data.svm", "soft.svm")
    for output in ("data.svm", "./data.svm", str(data), "hard.svm", "soft.svm"):
        assert_user_error(run("train", "data.svm", "-o", output), 1, "is the input file")
    dev = _counts_file(tmp_path / "dev.svm", seed=1)
    assert_user_error(run("train", "data.svm", "-o", "dev.svm", "--dev", "dev.svm"), 1, "dev.svm")
    assert_user_error(run("train", "data.svm", "-o", "m.npz", "--plot", "data.svm"), 1, "input")
    assert_user_error(run("train", "data.svm", "-o", "m.npz", "--plot", "m.npz"), 1, "twice")
    assert_user_error(
        run("train", "data.svm", "-o", "data.svm", "--stream"), 1, "is the input file"
    )
    assert data.read_bytes() == before and dev.exists()
    assert sorted(os.listdir(tmp_path)) == ["data.svm", "dev.svm", "hard.svm", "soft.svm"]


def test_every_writing_command_refuses_its_inputs_as_output(tmp_path):
    pytest.importorskip("matplotlib")
    data = _counts_file(tmp_path / "data.svm")
    model = tmp_path / "m.npz"
    assert run("train", data, "-o", model, "--quiet")[0] == 0
    saved = {p: p.read_bytes() for p in (data, model)}
    for args in (
        ("predict", model, data, "-o", data),
        ("predict", model, data, "-o", model),
        ("evaluate", model, data, "-o", data),
        ("evaluate", model, data, "--json", "-o", model),
        ("plot", data, "-o", data),
        ("plot", data, "-o", tmp_path / "p.png", "--confusion", data),
        ("plot", data, "-o", tmp_path / "p.png", "--confusion", tmp_path / "p.png"),
    ):
        assert_user_error(run(*args), 1, str(args[-1]))
    assert all(p.read_bytes() == content for p, content in saved.items())
    status, _, err = run("evaluate", model, data, "-o", tmp_path / "report.txt")
    assert status == 0, err
    assert "accuracy" in (tmp_path / "report.txt").read_text()


# Every file a command reads, given as its output: (command line, the input named).
# {data}, {dev}, {model}: classifier files; {sentences}, {tagger}, {templates}: tagging.
_INPUT_AS_OUTPUT = [
    (("train", "{data}", "-o", "{data}"), "data"),
    (("train", "{data}", "--dev", "{dev}", "-o", "{dev}"), "dev"),
    (("train", "{data}", "{dev}", "--shards", "2", "-o", "{dev}"), "dev"),
    (("train", "{data}", "--stream", "--dev", "{dev}", "-o", "{dev}"), "dev"),
    (("predict", "{model}", "{data}", "-o", "{model}"), "model"),
    (("evaluate", "{model}", "{data}", "-o", "{data}"), "data"),
    (("plot", "{data}", "--dev", "{dev}", "-o", "{dev}"), "dev"),
    (("tag", "train", "{sentences}", "-o", "{sentences}"), "sentences"),
    (
        ("tag", "train", "{sentences}", "--dev", "{dev_sentences}", "-o", "{dev_sentences}"),
        "dev_sentences",
    ),
    (
        ("tag", "train", "{sentences}", "--templates", "{templates}", "-o", "{templates}"),
        "templates",
    ),
    (("tag", "predict", "{tagger}", "{sentences}", "-o", "{tagger}"), "tagger"),
    (("tag", "predict", "{tagger}", "{sentences}", "-o", "{sentences}"), "sentences"),
]


@pytest.fixture(scope="module")
def input_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("inputs")
    files = {
        "data": _counts_file(folder / "data.svm"),
        "dev": _counts_file(folder / "dev.svm", seed=1),
        "sentences": folder / "train.txt",
        "dev_sentences": folder / "dev.txt",
        "templates": folder / "templates.txt",
        "model": folder / "m.npz",
        "tagger": folder / "tagger.npz",
    }
    for name in ("sentences", "dev_sentences"):
        files[name].write_text("The DT\ndog NN\n\nA DT\ncat NN\n")
    files["templates"].write_text("w[0]\nw[-1]\n")
    assert run("train", files["data"], "-o", files["model"], "--quiet")[0] == 0
    status, _, err = run("tag", "train", files["sentences"], "-o", files["tagger"], "--quiet")
    assert status == 0, err
    return files


@pytest.mark.parametrize(("args", "input_name"), _INPUT_AS_OUTPUT)
def test_no_command_writes_over_a_file_it_reads(input_files, args, input_name):
    """Every file a command reads (DATA, MODEL, --dev, --templates) is checked against
    its outputs: refused in one line, before anything is read or written."""
    if args[0] == "plot":
        pytest.importorskip("matplotlib")
    saved = {name: path.read_bytes() for name, path in input_files.items()}
    argv = [arg.format(**{k: str(v) for k, v in input_files.items()}) for arg in args]
    assert_user_error(run(*argv), 1, "is the input file", str(input_files[input_name]))
    assert {name: path.read_bytes() for name, path in input_files.items()} == saved


def test_every_option_naming_a_file_to_read_is_an_input_of_the_output_check():
    """The parser's file arguments that are read, in every command, are the options
    :func:`check_outputs` takes its inputs from (an option added later must be too)."""
    import argparse

    from perceptrons.cli import build_parser
    from perceptrons.cli._common import INPUT_FILE_OPTIONS

    outputs = {"output", "plot", "confusion", "output_dir"}
    read_metavars = {"DATA", "MODEL", "FILE", "TRAIN", "TEST", "NAME|FILE"}

    def parsers(parser):
        yield parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    yield from parsers(child)

    seen = set()
    for parser in parsers(build_parser()):
        for action in parser._actions:
            if action.metavar in read_metavars and action.dest not in outputs:
                assert action.dest in INPUT_FILE_OPTIONS, (parser.prog, action.dest)
                seen.add(action.dest)
    assert seen == set(INPUT_FILE_OPTIONS)


# A scheduler address where nothing listens (port 1 of this machine).
_NOWHERE = ("--scheduler", "tcp://127.0.0.1:1")

# Bad invocations, each a user's mistake: (exit code, command line). {out} is a fresh
# name in a fresh folder; the files are those of the input_files fixture, and {random}
# (random bytes), {missing} (no such file), {folder} (a directory).
_BAD_INVOCATIONS = [
    (2, ()),
    (2, ("frob",)),
    (2, ("train", "{data}")),
    (1, ("train", "{missing}", "-o", "{out}")),
    (1, ("train", "{random}", "-o", "{out}")),
    (1, ("train", "{folder}", "-o", "{out}")),
    (1, ("train", "{data}", "-o", "{out}", "--dev", "{missing}")),
    (1, ("train", "{data}", "-o", "{out}", "--format", "idx")),
    (1, ("train", "{model}", "-o", "{out}")),
    (2, ("train", "{data}", "-o", "{out}", "--epochs", "0")),
    (2, ("train", "{data}", "-o", "{out}", "--epochs", "x")),
    (2, ("train", "{data}", "-o", "{out}", "--n-features", "2147483648")),
    (2, ("train", "{data}", "-o", "{out}", "--algorithm", "nope")),
    (2, ("train", "{data}", "-o", "{out}", "--kernel", "rbf")),
    (2, ("train", "{data}", "-o", "{out}", "--class-weight", "9:1")),
    (2, ("train", "{data}", "-o", "{out}", "--stream", "--chunk-size", "0")),
    (2, ("train", "{data}", "-o", "{out}", "--stream", "--shards", "3")),
    (2, ("train", "{data}", "-o", "{out}", "--connect-timeout", "1")),
    (2, ("train", "{data}", "-o", "{out}", *_NOWHERE, "--connect-timeout", "0")),
    (1, ("train", "{data}", "-o", "{out}", *_NOWHERE, "--connect-timeout", "1")),
    (1, ("train", "{data}", "-o", "{data}")),
    (1, ("train", "{data}", "-o", "{folder}")),
    (1, ("train", "{data}", "-o", "{missing}/m.npz")),
    (1, ("predict", "{model}", "{missing}")),
    (1, ("predict", "{missing}", "{data}")),
    (1, ("predict", "{data}", "{data}")),
    (1, ("predict", "{model}", "{random}")),
    (2, ("predict", "{model}", "{data}", "--scores", "--proba")),
    (1, ("evaluate", "{model}", "{missing}")),
    (1, ("evaluate", "{tagger}", "{data}")),
    (1, ("inspect", "{random}")),
    (2, ("inspect", "{model}", "--top", "0")),
    (1, ("diagnose", "{missing}")),
    (1, ("plot", "{data}", "-o", "{data}")),
    (2, ("tag", "train", "{sentences}", "-o", "{out}", "--templates", "nope")),
    (1, ("tag", "train", "{sentences}", "-o", "{templates}", "--templates", "{templates}")),
    (1, ("tag", "train", "{random}", "-o", "{out}")),
    (1, ("tag", "predict", "{model}", "{sentences}")),
    (1, ("tag", "evaluate", "{tagger}", "{missing}")),
    (2, ("tag", "train", "{sentences}", "-o", "{out}", "--epochs", "0")),
]


@pytest.mark.parametrize(("code", "args"), _BAD_INVOCATIONS)
def test_every_error_of_the_command_is_one_line(input_files, tmp_path, code, args):
    """Whatever the mistake (a file, a format, an option's value, an output), the
    command says it in one line, exits 1 (the data or files) or 2 (the usage), and
    writes nothing. argparse's usage errors too: without the usage synopsis."""
    pytest.importorskip("matplotlib")  # plot
    random = tmp_path / "random.bin"
    random.write_bytes(np.random.default_rng(3).integers(0, 256, 4096, np.uint8).tobytes())
    (tmp_path / "folder").mkdir()
    names = {k: str(v) for k, v in input_files.items()}
    names.update(
        out=str(tmp_path / "out" / "m.npz"),
        random=str(random),
        missing=str(tmp_path / "missing.svm"),
        folder=str(tmp_path / "folder"),
    )
    (tmp_path / "out").mkdir()
    saved = {name: path.read_bytes() for name, path in input_files.items()}
    assert_user_error(run(*[arg.format(**names) for arg in args]), code)
    assert os.listdir(tmp_path / "out") == [] and os.listdir(tmp_path / "folder") == []
    assert {name: path.read_bytes() for name, path in input_files.items()} == saved


def test_an_output_name_as_long_as_the_system_allows_is_written(tmp_path):
    """A legal 250-character -o name failed with 'File name too long': the temporary
    file beside it had a longer name."""
    data = _counts_file(tmp_path / "data.svm")
    model = tmp_path / ("m" * 246 + ".npz")
    status, _, err = run("train", data, "-o", model, "--quiet")
    assert status == 0, err
    assert sorted(os.listdir(tmp_path)) == sorted(["data.svm", model.name])
    assert run("evaluate", model, data)[0] == 0


def test_a_missing_or_unusable_output_place_is_reported_before_training(tmp_path, monkeypatch):
    def trained(*args, **kwargs):
        raise AssertionError("training started before the output place was checked")

    # Nothing may train (nor run the demo) before the output is found unusable.
    monkeypatch.setattr(OnlineLearner, "_partial_fit", trained)
    monkeypatch.setattr(demo, "run", trained)
    data = _counts_file(tmp_path / "data.svm")
    (tmp_path / "models").mkdir()
    cases = [
        (("train", data, "-o", tmp_path / "nowhere" / "m.npz"), "does not exist"),
        (("train", data, "-o", tmp_path / "models"), "is a directory"),
        (("train", data, "-o", data / "m.npz"), "data.svm is not a directory"),
        (("demo", "--output-dir", data), "data.svm is not a directory"),
    ]
    for args, message in cases:
        assert_user_error(run(*args), 1, message)
    # the output checks come before the data is read: an output error even for bad data
    assert_user_error(
        run("train", tmp_path / "missing.svm", "-o", tmp_path / "models"), 1, "is a directory"
    )
    assert sorted(os.listdir(tmp_path)) == ["data.svm", "models"]
    assert os.listdir(tmp_path / "models") == []


@pytest.mark.skipif(os.name != "posix", reason="FIFOs")
def test_a_fifo_output_is_written_through_not_replaced(tmp_path):
    import threading

    data = _counts_file(tmp_path / "data.svm")
    model = tmp_path / "m.npz"
    assert run("train", data, "-o", model, "--quiet")[0] == 0
    fifo = tmp_path / "labels"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    status, _, err = run("predict", model, data, "-o", fifo)
    reader.join(30)
    assert status == 0, err
    assert len(received[0].splitlines()) == 60 and fifo.is_fifo()


# ------------------------------------------------------------- bad input: one line
def _bad_inputs(tmp_path):
    rng = np.random.default_rng(3)
    files = {
        "random": tmp_path / "random.bin",
        "cr": tmp_path / "cr.csv",
        "empty": tmp_path / "empty.svm",
        "folder": tmp_path / "folder",
        "missing": tmp_path / "missing.svm",
    }
    files["random"].write_bytes(rng.integers(0, 256, 4096, dtype=np.uint8).tobytes())
    files["cr"].write_bytes(b'a,b,label\r1,2\r,x"y\r\x00\n3,"4\n')
    files["empty"].write_bytes(b"")
    files["folder"].mkdir()
    return files


def test_bad_input_files_are_one_line_errors_in_every_command(tmp_path):
    data = _counts_file(tmp_path / "data.svm")
    model = tmp_path / "m.npz"
    assert run("train", data, "-o", model, "--quiet")[0] == 0
    out = tmp_path / "out"
    for name, bad in _bad_inputs(tmp_path).items():
        for args in (
            ("train", bad, "-o", out / "m.npz"),
            ("train", bad, "-o", tmp_path / "m2.npz"),
            ("train", bad, "-o", tmp_path / "m2.npz", "--stream"),
            ("train", data, "-o", tmp_path / "m2.npz", "--dev", bad),
            ("evaluate", model, bad),
            ("evaluate", bad, data),
            ("predict", model, bad),
            ("predict", bad, data),
            ("inspect", bad),
            ("plot", bad, "-o", tmp_path / "p.png"),
            ("diagnose", bad),
        ):
            status, _, err = run(*args)
            assert status == 1, (name, args, err)
            lines = err.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("perceptrons: error:"), (name, err)
            assert "Traceback" not in err
    # a model given as data and data given as a model
    for args in (
        ("evaluate", model, model),
        ("predict", model, model),
        ("train", model, "-o", tmp_path / "m3.npz"),
        ("inspect", data),
        ("evaluate", data, data),
    ):
        assert_user_error(run(*args), 1)
    assert not (tmp_path / "m2.npz").exists() and not (tmp_path / "m3.npz").exists()


# ------------------------------------------------------ name:value text, sample weights
def test_name_value_formats_are_featurized_as_pairs(tmp_path):
    vw = tmp_path / "t.vw"
    vw.write_text(
        "".join(
            f"1 | good:{1 + i % 3} fine film\n-1 | bad dull:{1 + i % 2} film\n" for i in range(10)
        )
    )
    counts = tmp_path / "t.counts"
    counts.write_text(
        "".join(
            f"great:{1 + i % 3} fine:1 #label#:positive\nawful:2 not_good:1 #label#:negative\n"
            for i in range(10)
        )
    )
    for data in (vw, counts):
        model = tmp_path / f"{data.suffix}.npz"
        status, _, err = run("train", data, "-o", model, "--quiet", "--hashed-names")
        assert status == 0, err
        info = json.loads(run("inspect", model, "--json")[1])
        assert info["featurizer"]["tokenizer"] == "pairs"
        names = {n for entry in info["top_features"] for n, _ in entry["positive"]}
        assert names & {"good", "dull", "bad", "great", "awful", "not_good"}
        status, _, err = run("train", data, "-o", model, "--ngrams", "2")
        assert status == 2 and "--ngrams" in err and data.suffix[1:] in err
    # --tokenizer applies to words only: name:value files are read as pairs whatever it is
    status, _, err = run("train", vw, "-o", tmp_path / "w.npz", "--tokenizer", "whitespace")
    assert status == 0, err


def test_vw_feature_names_keep_their_case(tmp_path):
    """Vowpal Wabbit's names are case-sensitive: 'US' and 'us' are two features."""
    data = tmp_path / "case.vw"
    data.write_text("".join("1 | US x\n-1 | us x\n" for _ in range(10)))
    model = tmp_path / "case.npz"
    status, _, err = run("train", data, "-o", model, "--features", "vocabulary", "--quiet")
    assert status == 0, err
    info = json.loads(run("inspect", model, "--json")[1])
    assert info["features"] == 3  # US, us, x
    status, out, err = run("evaluate", model, data, "--json")
    assert status == 0 and json.loads(out)["accuracy"] == 1.0, err


@pytest.mark.parametrize("mode", [(), ("--stream",), ("--features", "vocabulary")])
def test_negative_values_are_refused_in_counts_and_weighted_in_vw_alike(tmp_path, mode):
    """A negative value under the text defaults (sublinear tf-idf in memory, counts
    streamed): a count cannot be negative, so a counts file is refused at its line in
    every mode; a vw value may be, and trains in every mode (in memory its sublinear tf
    took the log of it, and training failed on "NaN or infinity")."""
    rows = [f"good:{1 + i % 3} fine:1 #label#:positive\nawful:2 #label#:negative" for i in range(9)]
    rows[3] = "good:2 awful:-3 #label#:positive"
    counts = tmp_path / "t.counts"
    counts.write_text("\n".join(rows) + "\n")
    vw = tmp_path / "t.vw"
    vw.write_text("".join(f"1 | good:{1 + i % 3} drop:-3\n-1 | bad:2 fine\n" for i in range(10)))
    model = tmp_path / "m.npz"
    result = run("train", counts, "-o", model, *mode)
    assert_user_error(result, 1, f'{counts}:7: count of "awful" is negative')
    assert not model.exists()
    status, _, err = run("train", vw, "-o", model, "--quiet", *mode)
    assert status == 0, err
    status, out, err = run("evaluate", model, vw, "--json")
    assert status == 0 and json.loads(out)["accuracy"] == 1.0, err


def test_n_features_is_bounded_by_what_hashing_can_do():
    from perceptrons.features import MAX_N_FEATURES

    status, _, err = run("train", "x.svm", "-o", "m.npz", "--n-features", MAX_N_FEATURES + 1)
    assert status == 2 and f"must be at most {MAX_N_FEATURES}" in err


def test_importance_weights_of_a_vw_file_weigh_the_examples(tmp_path):
    # "a" is seen as 1 ten times as heavily in one file, as -1 in the other
    heavy_1, heavy_minus_1 = tmp_path / "one.vw", tmp_path / "minus.vw"
    heavy_1.write_text("1 10 | a\n-1 1 | a\n1 1 | b\n-1 1 | c\n")
    heavy_minus_1.write_text("1 1 | a\n-1 10 | a\n1 1 | b\n-1 1 | c\n")
    query = tmp_path / "q.vw"
    query.write_text("| a\n")
    model = tmp_path / "m.npz"
    from perceptrons.cli._common import estimator_class

    for algorithm in ALGORITHMS:
        if "sample_weight" not in inspect.signature(estimator_class(algorithm).fit).parameters:
            status, _, err = run("train", heavy_1, "-o", model, "--algorithm", algorithm)
            assert status == 2 and "importance weights" in err and algorithm in err
            continue
        predictions = []
        for data in (heavy_1, heavy_minus_1):
            status, out, err = run("train", data, "-o", model, "--algorithm", algorithm)
            assert status == 0, err
            assert "weighted by the file's importance weights" in out
            predictions.append(run("predict", model, query)[1].strip())
        assert predictions == ["1", "-1"], algorithm
        status, out, err = run("train", heavy_1, "-o", model, "--algorithm", algorithm, "--json")
        assert json.loads(out)["sample_weights"] is True
        status, out, err = run("train", heavy_1, "-o", model, "--algorithm", algorithm, "--stream")
        assert status == 0, err
        assert "weighted by the file's importance weights" in out
        assert run("predict", model, query)[1].strip() == "1"


@pytest.mark.parametrize("stream", [(), ("--stream",)])
def test_a_vw_file_without_importance_weights_is_not_said_weighted(tmp_path, stream):
    data = tmp_path / "plain.vw"
    data.write_text("1 | a\n-1 | b\n1 | a c\n-1 | b c\n")
    status, out, err = run("train", data, "-o", tmp_path / "m.npz", *stream)
    assert status == 0, err
    assert "model written to" in out and "importance weights" not in out


def test_class_weight_balanced_or_per_label(tmp_path):
    data = tmp_path / "t.tsv"
    data.write_text("".join(f"{'a' if i % 5 else 'b'}\tw{i % 5} common\n" for i in range(50)))
    model = tmp_path / "m.npz"
    from perceptrons.cli._common import estimator_class

    for algorithm in ALGORITHMS:
        if "class_weight" not in estimator_class(algorithm)().get_params():
            status, _, err = run(
                "train", data, "-o", model, "--algorithm", algorithm, "--class-weight", "balanced"
            )
            assert status == 2 and "class_weight" in err
            continue
        for given, saved in (("balanced", "balanced"), ("b:4,a:0.5", {"a": 0.5, "b": 4.0})):
            status, _, err = run(
                "train", data, "-o", model, "--algorithm", algorithm, "--class-weight", given
            )
            assert status == 0, err
            info = json.loads(run("inspect", model, "--json")[1])
            assert info["hyperparameters"]["class_weight"] == saved
    for wrong, message in (("c:2", "no label 'c'"), ("a=2", "LABEL:WEIGHT"), ("a:x", "number")):
        status, _, err = run("train", data, "-o", model, "--class-weight", wrong)
        assert status == 2 and message in err, err


def test_class_weight_when_streaming(tmp_path):
    data = tmp_path / "t.tsv"
    data.write_text("".join(f"{'a' if i % 5 else 'b'}\tw{i % 5} common\n" for i in range(50)))
    model = tmp_path / "m.npz"
    status, _, err = run("train", data, "-o", model, "--stream", "--class-weight", "balanced")
    assert status == 2 and "LABEL:WEIGHT" in err and not model.exists()
    status, _, err = run("train", data, "-o", model, "--stream", "--class-weight", "b:3")
    assert status == 0, err
    info = json.loads(run("inspect", model, "--json")[1])
    assert info["hyperparameters"]["class_weight"] == {"b": 3.0}


# -------------------------------------------- model files: --no-resumable, --sparsify
def _hashed_svmlight(path, n=200, classes=4, width=50_000, seed=3):
    """Hashed-text-like svmlight: many feature ids, each example using a handful."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        label = i % classes
        ids = sorted({*rng.integers(1, width, size=6).tolist(), 1 + label})
        lines.append(f"{label} " + " ".join(f"{j}:1" for j in ids) + "\n")
    path.write_text("".join(lines))
    return path


def test_inspect_says_how_the_weights_are_stored_and_whether_resumable(tmp_path):
    data = _hashed_svmlight(tmp_path / "train.svm")
    dense, small, sparse = tmp_path / "dense.npz", tmp_path / "small.npz", tmp_path / "sparse.npz"
    common = ("--algorithm", "averaged", "--epochs", "2", "--quiet")
    assert run("train", data, "-o", dense, *common)[0] == 0
    status, _, err = run("train", data, "-o", small, *common, "--no-resumable")
    assert status == 0, err
    status, _, err = run("train", data, "-o", sparse, *common, "--sparsify", "0")
    assert status == 0, err
    assert small.stat().st_size < dense.stat().st_size
    status, out, err = run("inspect", dense)
    assert status == 0, err
    assert "stored sparse: aux (" in out and "weights (" in out and "nonzeros)" in out
    assert "weights in memory: dense" in out and "resumable: yes" in out
    info = json.loads(run("inspect", small, "--json")[1])
    assert info["resumable"] is False and set(info["stored_sparse"]) == {"weights"}
    assert "resumable: no" in run("inspect", small)[1]
    info = json.loads(run("inspect", sparse, "--json")[1])
    assert info["sparsified"] is True and info["resumable"] is True
    assert 0 < info["nonzero_weights"] < info["features"] * 4 / 100
    assert info["top_features"][0]["positive"]  # ranked from the sparse weights
    out = run("inspect", sparse)[1]
    assert "weights in memory: sparse (sparsified)" in out
    # Every form predicts the same labels.
    predictions = {run("predict", model, data)[1] for model in (dense, small, sparse)}
    assert len(predictions) == 1


def test_sparsify_option_errors_are_usage_errors(tmp_path):
    data = _hashed_svmlight(tmp_path / "train.svm", n=40)
    model = tmp_path / "m.npz"
    assert_user_error(
        run("train", data, "-o", model, "--algorithm", "voted", "--sparsify", "0"),
        2,
        "--sparsify",
        "VotedPerceptron has no linear weights",
    )
    assert_user_error(
        run("train", data, "-o", model, "--sparsify", "-1"), 2, "--sparsify", "threshold"
    )


def test_a_library_warning_is_one_line_on_stderr(tmp_path):
    """scikit-learn's warning of a label per example (two lines with its source line)
    reaches the user as one line, as errors do."""
    data = tmp_path / "many.svm"
    data.write_text("".join(f"{i} 1:{i % 3} 2:1\n" for i in range(50)))
    status, _, err = run_subprocess("train", data, "-o", tmp_path / "m.npz", "--epochs", "1")
    assert status == 0, err
    assert err.splitlines() == [
        "perceptrons: warning: The number of unique classes is greater than 50% of the "
        "number of samples. `y` could represent a regression problem, not a classification "
        "problem."
    ], err


def test_stream_reports_an_epoch_shorter_than_its_rounding(tmp_path, monkeypatch):
    # The record's seconds are rounded to the millisecond: a shorter epoch has 0, which
    # the epoch line divided by.
    import perceptrons.io.stream as stream_module

    monkeypatch.setattr(stream_module.time, "perf_counter", lambda: 1.0)
    path = tmp_path / "tiny.svm"
    path.write_text("1 1:1\n-1 2:1\n")
    status, out, err = run("train", path, "-o", tmp_path / "m.npz", "--stream")
    assert status == 0, err
    assert "epoch 1: " in out and "2 examples (2,000 examples/s)" in out
