"""``predict`` and ``evaluate`` read svmlight, vw and counts files a chunk at a time
(:func:`perceptrons.io.prepare.score_in_chunks`): the output is the whole file's, bit
for bit, errors included, and nothing is written on an error."""

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from perceptrons.io import prepare
from test_cli import run


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Models trained on small files: an svmlight model of 12 features (1-based), vw
    text pipelines trained in memory (tf-idf) and streamed (counts), a counts model."""
    folder = tmp_path_factory.mktemp("models")
    rng = np.random.default_rng(3)
    svm, vw, counts, ft = [], [], [], []
    for i in range(120):
        label = (-1, 1, 2)[i % 3]
        cols = sorted(rng.choice(np.arange(1, 13), size=rng.integers(1, 5), replace=False))
        svm.append(f"{label} " + " ".join(f"{c}:{rng.integers(1, 4)}" for c in cols))
        words = " ".join(f"w{rng.integers(0, 9)}:{rng.integers(1, 3)}" for _ in range(3))
        vw.append(f"{label} |a {words} | x{i % 5}")
        counts.append(f"{words} #label#:{'neg' if i % 2 else 'pos'}")
        ft.append(f"__label__{'neg' if i % 2 else 'pos'} " + " ".join(f"w{i % 7} x{i % 4}".split()))
    files = {"svm": svm, "vw": vw, "counts": counts, "ft": ft}
    paths = {}
    for kind, lines in files.items():
        path = folder / f"train.{kind}"
        path.write_text("\n".join(lines) + "\n")
        paths[kind] = path
    made = {}
    for name, kind, options in [
        ("svm", "svm", ["--algorithm", "averaged", "--format", "svmlight"]),
        ("vw", "vw", []),
        ("vw-stream", "vw", ["--stream"]),
        ("counts", "counts", []),
        ("ft", "ft", ["--format", "fasttext"]),
    ]:
        model = folder / f"{name}.npz"
        status, _, err = run("train", paths[kind], "-o", model, "--quiet", *options)
        assert status == 0, err
        made[name] = model
    return made


def _both(monkeypatch, args, chunk_size):
    """(status, stdout, stderr) of the command read in chunks of ``chunk_size`` lines,
    the same read whole, and whether the chunks went over the file."""
    original = prepare.score_in_chunks
    taken = []

    def spy(*a, **k):
        done = original(*a, **{**k, "chunk_size": chunk_size})
        taken.append(done)
        return done

    monkeypatch.setattr(prepare, "score_in_chunks", spy)
    chunked = run(*args)
    monkeypatch.setattr(prepare, "score_in_chunks", lambda *a, **k: False)
    whole = run(*args)
    monkeypatch.setattr(prepare, "score_in_chunks", original)
    return chunked, whole, taken == [True]


def _chunks_read_as_whole(monkeypatch, path, content, command, model, chunk_size, *options):
    """``command`` over ``content`` (written to ``path``) read in chunks says what it says
    read whole (hypothesis counts which way each example went)."""
    path.write_text(content)
    args = (command[0], model, path, *command[1:], *options)
    chunked, whole, through = _both(monkeypatch, args, chunk_size)
    assert chunked == whole
    event("read in chunks" if through else "read whole")


@st.composite
def svmlight_files(draw):
    """Lines of svmlight: 0- or 1-based indices up to the model's width (12) or past
    it, blank lines, comments, sometimes a line without a label or a bad value."""
    zero = draw(st.booleans())
    faulty = draw(st.booleans())  # whether lines that stop the chunks may occur
    kinds = ["row"] * 8 + ["blank", "comment"] + (["nolabel", "bad"] if faulty else [])
    lines = []
    for _ in range(draw(st.integers(1, 30))):
        kind = draw(st.sampled_from(kinds))
        label = draw(st.sampled_from(["-1", "1", "2"]))
        top = draw(st.sampled_from([11, 12, 12, 12, 13] if faulty else [11, 12]))
        cols = sorted(draw(st.sets(st.integers(0 if zero else 1, top), max_size=4)))
        cells = " ".join(f"{c}:{draw(st.integers(-3, 3))}" for c in cols)
        lines.append(
            {
                "row": f"{label} {cells}",
                "blank": "",
                "comment": f"{label} {cells} # a comment",
                "nolabel": cells or "1:1",
                "bad": f"{label} 1:x",
            }[kind]
        )
    return "\n".join(lines) + draw(st.sampled_from(["\n", ""]))


@st.composite
def vw_files(draw):
    """Lines of vw text: namespaces with scales, importance weights, tags, labels that
    may be fractions or unseen, sometimes a bad line or one without a label."""
    faulty = draw(st.booleans())  # whether lines that stop the chunks may occur
    labels = ["-1", "1", "2"] + (["1.5", "3"] if faulty else [])
    kinds = ["row"] * 10 + ["blank", "unicode"] + (["bad", "nolabel"] if faulty else [])
    lines = []
    for _ in range(draw(st.integers(1, 30))):
        label = draw(st.sampled_from(labels))
        head = draw(st.sampled_from([label, f"{label} 2", f"{label} 0.5 'tag", f"{label}"]))
        features = " ".join(
            f"w{draw(st.integers(0, 12))}" + draw(st.sampled_from(["", ":2", ":-0.5"]))
            for _ in range(draw(st.integers(0, 4)))
        )
        space = draw(st.sampled_from(["|a ", "|a:3 ", "| "]))
        kind = draw(st.sampled_from(kinds))
        lines.append(
            {
                "row": f"{head} {space}{features} | x{draw(st.integers(0, 5))}",
                "blank": "",
                "bad": f"{label} |a w:x",
                "nolabel": f"|a {features}",
                "unicode": f"{label} |a caf\u00e9 {features}",
            }[kind]
        )
    return "\n".join(lines) + "\n"


@settings(max_examples=40)
@given(
    content=svmlight_files(),
    chunk_size=st.sampled_from([1, 2, 3, 7, 10_000]),
    command=st.sampled_from([("predict",), ("predict", "--scores"), ("evaluate", "--json")]),
)
def test_svmlight_chunks_give_the_whole_files_output(
    models, tmp_path_factory, monkeypatch_module, content, chunk_size, command
):
    folder = tmp_path_factory.mktemp("svm")
    options = ("--format", "svmlight")
    _chunks_read_as_whole(monkeypatch_module, folder / "test.svm", content, command, models["svm"],
                          chunk_size, *options)  # fmt: skip


@settings(max_examples=40)
@given(
    content=vw_files(),
    chunk_size=st.sampled_from([1, 2, 5, 10_000]),
    model=st.sampled_from(["vw", "vw-stream"]),
    command=st.sampled_from([("predict",), ("predict", "--scores"), ("evaluate",)]),
)
def test_vw_chunks_give_the_whole_files_output(
    models, tmp_path_factory, monkeypatch_module, content, chunk_size, model, command
):
    folder = tmp_path_factory.mktemp("vw")
    _chunks_read_as_whole(monkeypatch_module, folder / "test.vw", content, command, models[model],
                          chunk_size)  # fmt: skip


@st.composite
def fasttext_files(draw):
    """fastText lines: several leading labels, words of any script, blank lines,
    sometimes a line without a label or a label never seen."""
    faulty = draw(st.booleans())
    labels = ["pos", "neg"] + (["other"] if faulty else [])
    lines = []
    for _ in range(draw(st.integers(1, 20))):
        words = " ".join(
            draw(st.sampled_from(["w1", "x2", "W3", "caf\u00e9", "w1,"])) for _ in range(3)
        )
        kind = draw(st.sampled_from(["row"] * 6 + ["blank"] + (["nolabel"] if faulty else [])))
        label = draw(st.sampled_from(labels))
        lines.append({"row": f"__label__{label} {words}", "blank": "", "nolabel": words}[kind])
    return "\n".join(lines) + "\n"


@settings(max_examples=25)
@given(
    content=fasttext_files(),
    chunk_size=st.sampled_from([1, 3, 10_000]),
    command=st.sampled_from([("predict", "--scores"), ("evaluate",)]),
)
def test_fasttext_chunks_give_the_whole_files_output(
    models, tmp_path_factory, monkeypatch_module, content, chunk_size, command
):
    folder = tmp_path_factory.mktemp("ft")
    options = ("--format", "fasttext")
    _chunks_read_as_whole(monkeypatch_module, folder / "test.txt", content, command, models["ft"],
                          chunk_size, *options)  # fmt: skip


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.mark.parametrize("chunk_size", [1, 4, 10_000])
@pytest.mark.parametrize("command", [("predict", "--scores"), ("evaluate",)])
def test_good_files_go_through_the_chunks(models, tmp_path, monkeypatch, chunk_size, command):
    """Each format the chunks read, a clean file: the chunks read it (none read whole)
    and give the whole file's output; a 0-based svmlight file whose first index 0
    comes late is read again, 0-based."""
    svm = tmp_path / "test.svm"
    svm.write_text("1 3:1 11:2\n-1 1:1\n\n2 5:1 11:1\n1 0:1 4:2\n-1 2:1\n")
    vw = tmp_path / "test.vw"
    vw.write_text("1 |a w1:2 w3 | x1\n-1 2 |a w2\n\n2 'tag|a:2 w4 w1\n1 | x3\n")
    counts = tmp_path / "test.counts"
    counts.write_text("w1:2 w3:1 #label#:pos\nw2:1 #label#:neg\n")
    ft = tmp_path / "test.ft"
    ft.write_text("__label__pos w1 x2 w1\n\n__label__neg  w3\n__label__pos __label__neg x1\n")
    for model, path in [
        ("svm", svm),
        ("vw", vw),
        ("vw-stream", vw),
        ("counts", counts),
        ("ft", ft),
    ]:
        fmt = {"svm": ("--format", "svmlight"), "ft": ("--format", "fasttext")}.get(model, ())
        args = (command[0], models[model], path, *command[1:], *fmt)
        chunked, whole, through_chunks = _both(monkeypatch, args, chunk_size)
        assert chunked == whole and chunked[0] == 0, (model, chunked, whole)
        assert through_chunks, model


@pytest.mark.parametrize("model", ["svm", "vw"])
def test_a_bad_line_is_named_and_no_predictions_are_written(models, tmp_path, model):
    """A bad line after chunks already scored: the whole file's error (PATH:LINE), no
    output file, and an existing one left as it was."""
    good = "1 3:1\n" if model == "svm" else "1 |a w1\n"
    path = tmp_path / f"test.{model}"
    bad = "1 3:x\n" if model == "svm" else "1 |a w:x\n"
    path.write_text(good * 50 + bad + good)
    out = tmp_path / "predictions.txt"
    status, stdout, err = run("predict", models[model], path, "-o", out)
    assert status == 1 and f"{path}:51:" in err and not out.exists(), err
    out.write_text("before\n")
    status, stdout, err = run("predict", models[model], path, "-o", out)
    assert status == 1 and out.read_text() == "before\n"
    status, stdout, err = run("predict", models[model], path)
    assert status == 1 and stdout == "" and f"{path}:51:" in err


def test_an_index_past_the_models_width_is_a_bad_line_as_before(models, tmp_path, monkeypatch):
    path = tmp_path / "wide.svm"
    path.write_text("1 3:1\n" * 30 + "1 13:1\n")
    chunked, whole, through = _both(monkeypatch, ("predict", models["svm"], path), 4)
    assert chunked == whole and not through
    assert chunked[0] == 1 and "wide.svm:31: feature index 13 is beyond the 12" in chunked[2]
    status, out, _ = run("predict", models["svm"], path, "--skip-bad-lines")
    # The notice of the lines skipped goes to stdout before the labels, as before.
    notice, *labels = out.splitlines()
    assert status == 0 and len(labels) == 30 and "skipped 1 bad line" in notice


def test_score_in_chunks_names_what_it_cannot_read(models, tmp_path):
    """Standard input, another format, or a model of another kind: ``False``, consume
    never called."""
    from perceptrons.io.persist import load

    svm = tmp_path / "a.svm"
    svm.write_text("1 1:1\n")
    called = []
    consume = called.append
    model = load(models["svm"], core=True)
    assert not prepare.score_in_chunks("-", model, consume)
    assert not prepare.score_in_chunks(svm, model, consume, format="tsv")
    assert not prepare.score_in_chunks(svm, load(models["vw"], core=True), consume)
    assert called == []


def test_memory_holds_a_few_chunks_whatever_the_files_size(models, tmp_path):
    """A file larger than the memory limit (PERCEPTRONS_MEMORY_LIMIT): read whole it is
    refused in one line; read in chunks, predict goes over it."""
    from test_input_bounds import _child

    path = tmp_path / "big.svm"
    rows = np.array(["1 3:1 7:2 11:3", "-1 2:1 5:1", "2 1:2 12:1"])
    path.write_text("\n".join(rows[np.arange(600_000) % 3]) + "\n")
    assert path.stat().st_size > 6 << 20
    args = ["predict", str(models["svm"]), str(path), "-o", str(tmp_path / "p.txt")]
    done = _child(["-m", "perceptrons", *args], tmp_path, limit="4M")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "p.txt").read_text().count("\n") == 600_000
    whole = (
        "import sys; from perceptrons.io import prepare; from perceptrons.cli import main; "
        "prepare.score_in_chunks = lambda *a, **k: False; sys.exit(main(sys.argv[1:]))"
    )
    done = _child(["-c", whole, *args], tmp_path, limit="4M")
    assert done.returncode == 1 and "reading it whole" in done.stderr, done.stderr[-3000:]
    assert len(done.stderr.strip().splitlines()) == 1


def test_labels_not_ascii_reach_stdout_whole(tmp_path, monkeypatch):
    """Predictions spooled to stdout a piece at a time: a piece that ends inside a
    character is decoded with the next."""
    from perceptrons.cli import evaluate

    train = tmp_path / "train.counts"
    train.write_text("".join(f"w{i % 3}:1 #label#:{'né' if i % 2 else 'ñu'}\n" for i in range(12)))
    model = tmp_path / "m.npz"
    assert run("train", train, "-o", model, "--quiet")[0] == 0
    monkeypatch.setattr(evaluate, "_SPOOL_PIECE", 1)
    chunked, whole, through = _both(monkeypatch, ("predict", model, train), 5)
    assert chunked == whole and through and "né\nñu\n" in chunked[1]
