"""Sequence labelling on CoNLL-2000: ``SequenceTagger`` vs CRFsuite and NLTK (issue 15).

Two tasks on ``../shared/data/conll2000`` (the given train / test split, sections 15-18
and 20 of the Wall Street Journal), every system in this one process and run:

* **Chunking** (the words and their given POS tags -> the chunk tags), scored with the
  conlleval rules (Tjong Kim Sang & Buchholz 2000) by
  :func:`perceptrons.chunking.chunk_scores`: our ``SequenceTagger(max_epochs=10,
  random_state=0)`` (the structured averaged perceptron of Collins 2002, templates
  ``"auto"``, which picks ``"chunk"`` for tokens with a POS column) against CRFsuite's
  averaged perceptron (``pycrfsuite.Trainer("ap")``, 10 iterations) on the classic
  CoNLL-2000 feature set of CRFsuite's ``example/chunking.py`` (words at -2..2, word
  bigrams (-1, 0) and (0, 1), POS at -2..2, POS bigrams and trigrams; rewritten here),
  and with ``--crf-lbfgs`` also CRFsuite's L-BFGS CRF (Lafferty et al. 2001; slow).
* **Part-of-speech tagging** (the words only -> the POS column): our
  ``SequenceTagger(templates="pos")`` against NLTK's greedy averaged-perceptron
  ``PerceptronTagger(load=False)`` (Honnibal 2013), trained with its default 5
  iterations.

For each system: the test score (chunk F1 or token accuracy), the training time (ours:
the whole ``fit``, feature extraction included; CRFsuite: the Python feature extraction
and the training -- loading the sequences into the trainer and ``train`` -- shown apart
and summed), and tagging throughput in tokens/s of the whole test set including
feature extraction (ours: ``predict`` on the raw sentences). Training runs
``--repeats-train`` times (median; default 3), tagging ``--repeats`` times
(median; default 7: this 2-core VM's timings vary by up to 2x from run to run). Our
tagger is JIT-compiled first by a tiny ``fit``/``predict`` that is not
timed. NLTK shuffles with the global ``random`` module, seeded to 0 before its training.

Memory: our models' file sizes (``perceptrons.save``, resumable and with
``resumable=False``), the resident-set growth of a fresh subprocess that has already
imported ``perceptrons`` when it loads the model (``VmRSS`` of ``/proc/self/status``),
the bytes of the NumPy arrays the loaded model holds, the number of observation
features and the weights' shapes; CRFsuite's model file size beside them.

Usage::

    python benchmarks/bench_tagger.py [--tasks chunk,pos] [--epochs 10] \\
        [--pos-epochs 5,10] [--repeats 7] [--repeats-train 3] [--crf-lbfgs] \\
        [--max-sentences 0] [--data-dir DIR] [--output benchmarks/RESULTS.md]

The Markdown section between ``<!-- bench_tagger:start -->`` and
``<!-- bench_tagger:end -->`` of the output file is replaced (other content kept). A
missing data set skips the benchmark with a message; a missing peer
(``pip install python-crfsuite nltk``) turns its rows into "not installed".
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _datasets  # benchmarks/ is sys.path[0]; it also puts src/ on sys.path if needed
import _report

NAME = "bench_tagger"

#: The issue's targets.
CHUNK_F1_TARGET = 94.0
CHUNK_TRAIN_SECONDS_TARGET = 10.0
CHUNK_TOKENS_PER_SECOND_TARGET = 200_000.0
POS_ACCURACY_TARGET = 97.3
POS_SPEEDUP_TARGET = 10.0

#: CRFsuite's classic CoNLL-2000 chunking templates (its ``example/chunking.py``): each
#: a conjunction of (column, offset); a template reaching outside the sentence is
#: left out for that token (CRFsuite's convention, not a padding value).
CRF_TEMPLATES: tuple[tuple[tuple[str, int], ...], ...] = (
    *((("w", k),) for k in (-2, -1, 0, 1, 2)),
    (("w", -1), ("w", 0)),
    (("w", 0), ("w", 1)),
    *((("pos", k),) for k in (-2, -1, 0, 1, 2)),
    *(((("pos", k), ("pos", k + 1))) for k in (-2, -1, 0, 1)),
    *(((("pos", k), ("pos", k + 1), ("pos", k + 2))) for k in (-2, -1, 0)),
)
_CRF_NAMES = tuple("|".join(f"{col}[{k}]" for col, k in t) for t in CRF_TEMPLATES)
_CRF_COLUMN = {"w": 0, "pos": 1}


# --------------------------------------------------------------------------- data


@dataclass
class Corpus:
    """CoNLL-2000 sentences: (word, POS) tokens and chunk tags."""

    tokens: list[list[tuple[str, str]]]
    chunks: list[list[str]]

    @property
    def n_tokens(self) -> int:
        return sum(len(s) for s in self.tokens)

    @property
    def words(self) -> list[list[str]]:
        return [[w for w, _ in s] for s in self.tokens]

    @property
    def pos(self) -> list[list[str]]:
        return [[p for _, p in s] for s in self.tokens]


def read_conll2000(path: Path, limit: int = 0) -> Corpus:
    """The sentences of a CoNLL-2000 file (word POS chunk, blank line between
    sentences); the first ``limit`` only when ``limit`` > 0."""
    tokens: list[list[tuple[str, str]]] = []
    chunks: list[list[str]] = []
    sentence: list[tuple[str, str]] = []
    tags: list[str] = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            fields = line.split()
            if not fields:
                if sentence:
                    tokens.append(sentence)
                    chunks.append(tags)
                    sentence, tags = [], []
                    if limit and len(tokens) >= limit:
                        break
                continue
            if len(fields) != 3:
                raise ValueError(f"{path}:{number}: expected 3 columns, got {len(fields)}")
            sentence.append((fields[0], fields[1]))
            tags.append(fields[2])
    if sentence and not (limit and len(tokens) >= limit):
        tokens.append(sentence)
        chunks.append(tags)
    if not tokens:
        raise ValueError(f"{path}: no sentences")
    return Corpus(tokens, chunks)


def base_np(corpus: Corpus) -> Corpus:
    """The same sentences with only their noun-phrase chunks (other tags -> ``O``): the
    base-NP chunking task of Ramshaw & Marcus (1995), on which Collins (2002) and Sha &
    Pereira (2003) report their figures."""
    chunks = [[t if t.endswith("-NP") else "O" for t in tags] for tags in corpus.chunks]
    return Corpus(corpus.tokens, chunks)


def find_data(data_dir: str | None) -> Path:
    """The conll2000 directory (FileNotFoundError naming what is missing)."""
    if data_dir is not None:
        base = Path(data_dir)
    else:
        found = _datasets.loaders.shared_data_dir()
        if found is None:
            raise FileNotFoundError(
                "the shared data directory was not found (set PERCEPTRONS_DATA or pass --data-dir)"
            )
        base = found
    directory = base / "conll2000" if (base / "conll2000").is_dir() else base
    for name in ("train.txt", "test.txt"):
        if not (directory / name).is_file():
            raise FileNotFoundError(f"{directory / name} is missing")
    return directory


# ------------------------------------------------------------------------ scoring


def chunk_f1(gold: list[list[str]], predicted: list[list[str]]) -> float:
    """conlleval's overall F1, in percent."""
    from perceptrons.chunking import chunk_scores

    return 100.0 * float(chunk_scores(gold, predicted)["overall"]["f1"])


def token_accuracy(gold: list[list[str]], predicted: list[list[str]]) -> float:
    """Token accuracy, in percent."""
    right = total = 0
    for g, p in zip(gold, predicted, strict=True):
        if len(g) != len(p):
            raise ValueError("a predicted sentence has the wrong length")
        right += sum(a == b for a, b in zip(g, p, strict=True))
        total += len(g)
    return 100.0 * right / total


# ------------------------------------------------------------------------ systems


@dataclass
class Result:
    """One system on one task; ``status`` is "ok" or why it has no numbers."""

    system: str
    status: str = "ok"
    score: float = float("nan")
    extract_s: float = 0.0  # feature extraction counted apart (CRFsuite), else 0
    train_s: float = float("nan")  # training proper (ours: the whole fit)
    tag_tokens_per_s: float = float("nan")
    # Ours: the first pass of a model loaded from its file, whose featurizer has not yet
    # seen the test set's strings (NaN for the peers, which keep nothing between calls).
    first_pass_tokens_per_s: float = float("nan")
    notes: list[str] = field(default_factory=list)
    model: Any = None
    model_bytes: int | None = None

    @property
    def total_train_s(self) -> float:
        return self.extract_s + self.train_s


def _median_time(function: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """The median of ``repeats`` timings of ``function()`` and its last result."""
    times, result = [], None
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def warm_jit(train: Corpus, params: dict[str, Any], with_pos: bool) -> float:
    """Compile our tagger's kernels by a tiny fit and predict (not timed with the rest)."""
    from perceptrons import SequenceTagger

    start = time.perf_counter()
    X = (
        [list(s) for s in train.tokens[:20]]
        if with_pos
        else [[w for w, _ in s] for s in train.tokens[:20]]
    )
    y = train.chunks[:20] if with_pos else [[p for _, p in s] for s in train.tokens[:20]]
    tagger = SequenceTagger(**{**params, "max_epochs": 1}).fit(X, y)
    tagger.predict(X)
    return time.perf_counter() - start


def run_ours(
    name: str,
    X_train: list,
    y_train: list[list[str]],
    X_test: list,
    y_test: list[list[str]],
    params: dict[str, Any],
    scorer: Callable[[list[list[str]], list[list[str]]], float],
    args: argparse.Namespace,
) -> Result:
    from perceptrons import SequenceTagger, load, save

    result = Result(name)
    result.train_s, model = _median_time(
        lambda: SequenceTagger(**params).fit(X_train, y_train), args.repeats_train
    )
    n_tokens = sum(len(s) for s in X_test)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = load(save(model, Path(tmp) / "model.npz", resumable=False))
    first_s, _ = _median_time(lambda: fresh.predict(X_test), 1)
    result.first_pass_tokens_per_s = n_tokens / first_s
    tag_s, predicted = _median_time(lambda: model.predict(X_test), args.repeats)
    result.tag_tokens_per_s = n_tokens / tag_s
    result.score = scorer(y_test, predicted)
    result.model = model
    return result


def crf_features(sentence: Sequence[tuple[str, str]]) -> list[list[str]]:
    """CRFsuite's chunking attributes of every token of a (word, POS) sentence."""
    n = len(sentence)
    items: list[list[str]] = []
    for i in range(n):
        attributes = []
        for name, template in zip(_CRF_NAMES, CRF_TEMPLATES, strict=True):
            values = []
            for column, offset in template:
                j = i + offset
                if j < 0 or j >= n:
                    break
                values.append(sentence[j][_CRF_COLUMN[column]])
            else:
                attributes.append(name + "=" + "|".join(values))
        items.append(attributes)
    items[0].append("__BOS__")
    items[-1].append("__EOS__")
    return items


def run_crfsuite(
    name: str,
    algorithm: str,
    params: dict[str, Any],
    train: Corpus,
    test: Corpus,
    args: argparse.Namespace,
    workdir: Path,
) -> Result:
    try:
        import pycrfsuite
    except ImportError:
        return Result(name, status="not installed")
    result = Result(name)
    path = str(workdir / f"crfsuite-{algorithm}.model")
    result.extract_s, X_train = _median_time(
        lambda: [crf_features(s) for s in train.tokens], args.repeats_train
    )

    def train_once() -> None:
        trainer = pycrfsuite.Trainer(algorithm=algorithm, verbose=False)
        for xseq, yseq in zip(X_train, train.chunks, strict=True):
            trainer.append(xseq, yseq)
        trainer.set_params(params)
        trainer.train(path)

    result.train_s, _ = _median_time(train_once, args.repeats_train)
    tagger = pycrfsuite.Tagger()
    tagger.open(path)

    def tag_all() -> list[list[str]]:
        return [tagger.tag(crf_features(s)) for s in test.tokens]

    tag_s, predicted = _median_time(tag_all, args.repeats)
    X_test = [crf_features(s) for s in test.tokens]
    only_tag_s, _ = _median_time(lambda: [tagger.tag(x) for x in X_test], args.repeats)
    result.tag_tokens_per_s = test.n_tokens / tag_s
    result.score = chunk_f1(test.chunks, predicted)
    result.model_bytes = os.path.getsize(path)
    result.notes.append(
        f"{name}: {test.n_tokens / only_tag_s:,.0f} tokens/s without its feature extraction"
    )
    tagger.close()
    return result


def run_nltk(train: Corpus, test: Corpus, args: argparse.Namespace) -> Result:
    name = f"NLTK PerceptronTagger ({args.nltk_iterations} iterations)"
    try:
        from nltk.tag.perceptron import PerceptronTagger
    except ImportError:
        return Result(name, status="not installed")
    result = Result(name)
    pairs = [list(s) for s in train.tokens]  # (word, POS) pairs: what NLTK trains on

    def train_once() -> Any:
        random.seed(0)  # NLTK shuffles the sentences with the global generator
        tagger = PerceptronTagger(load=False)
        tagger.train(pairs, nr_iter=args.nltk_iterations)
        return tagger

    result.train_s, tagger = _median_time(train_once, args.repeats_train)
    words = test.words
    tag_s, tagged = _median_time(lambda: [tagger.tag(s) for s in words], args.repeats)
    result.tag_tokens_per_s = test.n_tokens / tag_s
    result.score = token_accuracy(test.pos, [[t for _, t in s] for s in tagged])
    return result


# ------------------------------------------------------------------------- memory

_PROBE = r"""
import gc, json, sys
import numpy as np
import perceptrons
from perceptrons import SequenceTagger  # noqa: F401  (imported before the baseline)
from bench_tagger import array_bytes

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024

gc.collect()
before = rss()
first = perceptrons.load(sys.argv[1])
gc.collect()
middle = rss()
# A second copy, the first kept alive: its growth is the model alone, without the
# compiled code and modules that the first load brought in.
second = perceptrons.load(sys.argv[1])
gc.collect()
after = rss()
print(json.dumps({"first": middle - before, "second": after - middle,
                  "array_bytes": array_bytes(second)}))
"""


def array_bytes(obj: Any) -> int:
    """The bytes of the NumPy arrays reachable from ``obj``'s attributes (each counted
    once; a view counts nothing when its base is counted)."""
    import numpy as np

    seen: set[int] = set()
    bases: set[int] = set()

    def walk(item: Any, depth: int) -> int:
        if id(item) in seen or depth > 6:
            return 0
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            owner = item if item.base is None else item.base
            if id(owner) in bases:
                return 0
            bases.add(id(owner))
            return int(getattr(owner, "nbytes", item.nbytes))
        if isinstance(item, dict):
            return sum(walk(v, depth + 1) for v in item.values())
        if isinstance(item, list | tuple):
            return sum(walk(v, depth + 1) for v in item)
        if hasattr(item, "__dataclass_fields__"):
            return sum(walk(getattr(item, f), depth + 1) for f in item.__dataclass_fields__)
        if hasattr(item, "__dict__") and not isinstance(item, type):
            return walk(vars(item), depth + 1)
        return 0

    return walk(obj, 0)


def _shape(model: Any, name: str) -> str:
    value = getattr(model, name, None)
    shape = getattr(value, "shape", None)
    return "×".join(str(n) for n in shape) if shape is not None else "?"


def measure_memory(label: str, model: Any, workdir: Path) -> list[str]:
    """One row: file sizes, resident growth on load, array bytes, features, shapes."""
    from perceptrons import save

    sizes: dict[bool, int] = {}
    rss = "not measured"
    nbytes = f"{_mib(array_bytes(model))} (in the trained model)"
    try:
        for resumable in (True, False):
            path = Path(save(model, workdir / f"{resumable}.npz", resumable=resumable))
            sizes[resumable] = os.path.getsize(path)
    except (ValueError, TypeError) as exc:
        # The timings are still worth writing when the model cannot be saved.
        print(f"memory: cannot save the {label}: {exc}", flush=True)
        sizes = {}
    if sizes:
        here = str(Path(__file__).resolve().parent)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([here, *sys.path])}
        probe = subprocess.run(
            [sys.executable, "-c", _PROBE, str(workdir / "False.npz")],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if probe.returncode == 0:
            measured = json.loads(probe.stdout.strip().splitlines()[-1])
            rss = f"{_mib(measured['second'])} ({_mib(measured['first'])} first)"
            nbytes = _mib(measured["array_bytes"])
        else:
            tail = (probe.stderr.strip().splitlines() or ["?"])[-1]
            print(f"memory probe failed: {tail}", flush=True)
            rss = "probe failed"
    featurizer = getattr(model, "featurizer_", None)
    n_features = getattr(featurizer, "n_features_out_", "?")
    return [
        label,
        f"{sizes[True]:,}" if sizes else "cannot be saved",
        f"{sizes[False]:,}" if sizes else "",
        rss,
        nbytes,
        f"{n_features:,}" if isinstance(n_features, int) else str(n_features),
        f"{len(model.classes_)}",
        _shape(model, "coef_"),
        _nonzeros(model.coef_),
        _shape(model, "transitions_"),
    ]


def _nonzeros(coef: Any) -> str:
    """``coef_``'s stored nonzeros and their share of its entries."""
    nnz = int(coef.nnz) if hasattr(coef, "nnz") else int((coef != 0).sum())
    return f"{nnz:,} ({100.0 * nnz / max(1, coef.shape[0] * coef.shape[1]):.1f}%)"


def _mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:,.2f} MiB"


# ------------------------------------------------------------------------- report


def _fmt(value: float, spec: str) -> str:
    return "—" if value != value else format(value, spec)


def _system_row(result: Result, score_spec: str = ".2f") -> list[str]:
    if result.status != "ok":
        return [result.system, result.status, "", "", "", "", ""]
    extract = f"{result.extract_s:.2f}" if result.extract_s else "in fit"
    return [
        result.system,
        _fmt(result.score, score_spec),
        extract,
        _fmt(result.train_s, ".2f"),
        _fmt(result.total_train_s, ".2f"),
        _fmt(result.tag_tokens_per_s, ",.0f"),
        _fmt(result.first_pass_tokens_per_s, ",.0f"),
    ]


def _check(label: str, value: float | None, target: str, met: bool | None, spec: str) -> list[str]:
    """A ratio-table row; ``value`` None: a peer is missing."""
    if value is None or value != value:
        return [label, "not installed" if value is None else "—", target, "n/a"]
    verdict = "—" if met is None else ("met" if met else "missed")
    return [label, format(value, spec), target, verdict]


def chunk_checks(ours: Result, peers: list[Result]) -> list[list[str]]:
    rows = [
        _check(
            "chunk F1 (ours)",
            ours.score,
            f"≥ {CHUNK_F1_TARGET}",
            ours.score >= CHUNK_F1_TARGET,
            ".2f",
        ),
        _check(
            "chunk train s (ours; the target is for 10 epochs)",
            ours.train_s,
            f"≤ {CHUNK_TRAIN_SECONDS_TARGET:g}",
            ours.train_s <= CHUNK_TRAIN_SECONDS_TARGET,
            ".2f",
        ),
    ]
    for label, speed in (
        ("chunk tagging tokens/s (ours)", ours.tag_tokens_per_s),
        (
            "chunk tagging tokens/s (ours), first pass of a loaded model",
            ours.first_pass_tokens_per_s,
        ),
    ):
        target = f"≥ {CHUNK_TOKENS_PER_SECOND_TARGET:,.0f}"
        rows.append(_check(label, speed, target, speed >= CHUNK_TOKENS_PER_SECOND_TARGET, ",.0f"))
    for peer in peers:
        ok = peer.status == "ok"
        rows += [
            _check(
                f"F1 ours − {peer.system}",
                ours.score - peer.score if ok else None,
                "> 0",
                ours.score > peer.score if ok else None,
                "+.2f",
            ),
            _check(
                f"train speed-up vs {peer.system}: its extraction + training / our fit",
                peer.total_train_s / ours.train_s if ok else None,
                "info",
                None,
                ".1f",
            ),
            _check(
                f"tagging speed-up vs {peer.system}",
                ours.tag_tokens_per_s / peer.tag_tokens_per_s if ok else None,
                "info",
                None,
                ".1f",
            ),
        ]
    return rows


def pos_checks(ours: Result, nltk: Result) -> list[list[str]]:
    ok = nltk.status == "ok"
    which = ours.system.removeprefix("SequenceTagger (templates pos, ").removesuffix(")")
    rows = [
        _check(
            "POS accuracy (ours)",
            ours.score,
            f"≥ {POS_ACCURACY_TARGET}",
            ours.score >= POS_ACCURACY_TARGET,
            ".2f",
        ),
        _check(
            "POS accuracy ours − NLTK",
            ours.score - nltk.score if ok else None,
            "> 0",
            ours.score > nltk.score if ok else None,
            "+.2f",
        ),
        _check(
            "POS train speed-up vs NLTK",
            nltk.train_s / ours.train_s if ok else None,
            f"≥ {POS_SPEEDUP_TARGET:g}",
            nltk.train_s / ours.train_s >= POS_SPEEDUP_TARGET if ok else None,
            ".1f",
        ),
    ]
    for label, speed in (
        ("POS tagging speed-up vs NLTK", ours.tag_tokens_per_s),
        (
            "POS tagging speed-up vs NLTK, our first pass of a loaded model",
            ours.first_pass_tokens_per_s,
        ),
    ):
        ratio = speed / nltk.tag_tokens_per_s if ok else None
        met = None if ratio is None else ratio >= POS_SPEEDUP_TARGET
        rows.append(_check(label, ratio, f"≥ {POS_SPEEDUP_TARGET:g}", met, ".1f"))
    return [[f"{row[0]}, {which}", *row[1:]] for row in rows]


def _command(args: argparse.Namespace) -> str:
    parts = [
        "python benchmarks/bench_tagger.py",
        f"--tasks {','.join(args.tasks)}",
        f"--epochs {args.epochs}",
        f"--pos-epochs {','.join(map(str, args.pos_epochs))}",
        f"--repeats {args.repeats}",
        f"--repeats-train {args.repeats_train}",
    ]
    if args.max_sentences:
        parts.append(f"--max-sentences {args.max_sentences}")
    if args.crf_lbfgs:
        parts.append("--crf-lbfgs")
    return " ".join(parts)


def run(args: argparse.Namespace) -> str | None:
    try:
        directory = find_data(args.data_dir)
    except FileNotFoundError as exc:
        print(f"bench_tagger: skipped, CoNLL-2000 data not found: {exc}", flush=True)
        return None
    started = time.perf_counter()
    train = read_conll2000(directory / "train.txt", args.max_sentences)
    test = read_conll2000(directory / "test.txt", args.max_sentences)
    print(
        f"read {len(train.tokens):,} train sentences ({train.n_tokens:,} tokens) and "
        f"{len(test.tokens):,} test sentences ({test.n_tokens:,} tokens) in "
        f"{time.perf_counter() - started:.1f} s",
        flush=True,
    )
    chunk_params = {"max_epochs": args.epochs, "random_state": 0}
    pos_params = {"templates": "pos", "random_state": 0}
    lines = [
        _report.markers(NAME)[0],
        "## Sequence labelling: SequenceTagger vs CRFsuite and NLTK (`benchmarks/bench_tagger.py`)",
        "",
        f"- Run: {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC; `{_command(args)}`",
        f"- Machine: {_report.machine_info()}; peers: {_peer_versions()}",
        f"- Data: CoNLL-2000 (`{directory.name}/train.txt`, `test.txt`), "
        f"{len(train.tokens):,} train sentences "
        f"({train.n_tokens:,} tokens) / {len(test.tokens):,} test sentences "
        f"({test.n_tokens:,} tokens), the given split.",
        f"- Times: the median of {args.repeats_train} trainings per system and of "
        f"{args.repeats} taggings of the whole test set, feature extraction "
        "included; all systems in one process. Our kernels are JIT-compiled first by a "
        "tiny untimed fit/predict. CRFsuite's feature extraction (Python) is shown apart "
        "and counted in its total; ours is inside `fit` and `predict`. Our featurizer "
        "keeps what it computed for each distinct string, so repeated passes run "
        "faster than the first: *first pass, loaded model* is one pass of a model "
        "just loaded from its file (`resumable=False`), which has seen none of the "
        "test set's strings; the peers keep nothing between calls.",
    ]
    memory_rows: list[list[str]] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if "chunk" in args.tasks:
            warm = warm_jit(train, chunk_params, with_pos=True)
            print(f"JIT warm-up (chunking) {warm:.1f} s", flush=True)
            ours, averaged_crf = run_chunkers("chunking", train, test, chunk_params, args, workdir)
            peers = [averaged_crf]
            if args.crf_lbfgs:
                peers.append(
                    run_crfsuite("CRFsuite L-BFGS CRF", "lbfgs", {}, train, test, args, workdir)
                )
                print("chunking:", " | ".join(_system_row(peers[-1])), flush=True)
            for peer in peers:
                notes += peer.notes
            lines += [
                "",
                "### Chunking (words + given POS → chunk tags; conlleval F1)",
                "",
                _system_table("test F1", [ours, *peers]),
                "",
                _report.md_table(["check", "value", "target", ""], chunk_checks(ours, peers)),
            ]
            memory_rows.append(measure_memory("chunker", ours.model, workdir))
            crf = [p for p in peers if p.model_bytes is not None]
            notes += [f"{p.system}: model file {p.model_bytes:,} bytes" for p in crf]
        if "np" in args.tasks:
            lines += run_base_np(train, test, chunk_params, args, workdir)
        if "pos" in args.tasks:
            warm = warm_jit(train, pos_params, with_pos=False)
            print(f"JIT warm-up (POS) {warm:.1f} s", flush=True)
            taggers = []
            for epochs in args.pos_epochs:
                taggers.append(
                    run_ours(
                        f"SequenceTagger (templates pos, {epochs} epochs)",
                        train.words,
                        train.pos,
                        test.words,
                        test.pos,
                        {**pos_params, "max_epochs": epochs},
                        token_accuracy,
                        args,
                    )
                )
                print("POS:", " | ".join(_system_row(taggers[-1])), flush=True)
            nltk = run_nltk(train, test, args)
            print("POS:", " | ".join(_system_row(nltk)), flush=True)
            lines += [
                "",
                "### Part-of-speech tagging (words → POS; token accuracy)",
                "",
                "CoNLL-2000's POS column was made by the Brill tagger (its README), not by "
                "annotators: these taggers learn to imitate it, so their accuracies are not "
                "comparable with results on the WSJ's gold tags.",
                "",
                _system_table("test accuracy %", [*taggers, nltk]),
                "",
                _report.md_table(
                    ["check", "value", "target", ""],
                    [row for ours in taggers for row in pos_checks(ours, nltk)],
                ),
            ]
            memory_rows.append(
                measure_memory(
                    f"POS tagger ({args.pos_epochs[-1]} epochs)", taggers[-1].model, workdir
                )
            )
    if memory_rows:
        lines += [
            "",
            "### Memory of our models",
            "",
            "File bytes: `perceptrons.save(model)` (resumable: with the averaging state) and "
            "`save(model, resumable=False)`. Resident growth: `VmRSS` of a fresh "
            "subprocess, after `import perceptrons`, across `perceptrons.load` of the "
            "non-resumable file: a second copy loaded beside the first (the model alone), "
            "and in parentheses the first load (with the compiled code and modules it "
            "brings in). Array bytes: the NumPy arrays the loaded model holds "
            "(featurizer included). `coef_`: (tags, observation features), stored by its "
            "nonzeros (a sparse matrix); "
            "`transitions_`: (tags + 1 with the start, tags).",
            "",
            _report.md_table(
                [
                    "model",
                    "file bytes",
                    "file bytes, non-resumable",
                    "resident growth on load",
                    "array bytes",
                    "features",
                    "tags",
                    "coef_",
                    "coef_ nonzeros",
                    "transitions_",
                ],
                memory_rows,
            ),
        ]
    if notes:
        lines += ["", *(f"- {note}" for note in notes)]
    lines.append(_report.markers(NAME)[1])
    return "\n".join(lines)


def run_chunkers(
    task: str,
    train: Corpus,
    test: Corpus,
    params: dict[str, Any],
    args: argparse.Namespace,
    workdir: Path,
) -> tuple[Result, Result]:
    """Our chunker and CRFsuite's averaged perceptron on ``train`` / ``test``."""
    ours = run_ours(
        f"SequenceTagger (templates auto, {params['max_epochs']} epochs)",
        [list(s) for s in train.tokens],
        train.chunks,
        [list(s) for s in test.tokens],
        test.chunks,
        params,
        chunk_f1,
        args,
    )
    print(f"{task}:", " | ".join(_system_row(ours)), flush=True)
    crf = run_crfsuite(
        f"CRFsuite AP ({args.crf_iterations} iterations)",
        "ap",
        {"max_iterations": args.crf_iterations},
        train,
        test,
        args,
        workdir,
    )
    print(f"{task}:", " | ".join(_system_row(crf)), flush=True)
    return ours, crf


def _system_table(score: str, results: list[Result]) -> str:
    columns = ["extraction s", "train s", "total train s", "tagging tokens/s"]
    return _report.md_table(
        ["system", score, *columns, "first pass, loaded model"],
        [_system_row(r) for r in results],
    )


def run_base_np(
    train: Corpus,
    test: Corpus,
    params: dict[str, Any],
    args: argparse.Namespace,
    workdir: Path,
) -> list[str]:
    """The base-NP rows: ours and CRFsuite's averaged perceptron on the NP chunks only."""
    warm_jit(train, params, with_pos=True)
    ours, crf = run_chunkers("base NP", base_np(train), base_np(test), params, args, workdir)
    ok = crf.status == "ok"
    checks = [
        _check(
            "NP F1 (ours)", ours.score, f"≥ {CHUNK_F1_TARGET}", ours.score >= CHUNK_F1_TARGET, ".2f"
        ),
        _check(
            f"NP F1 ours − {crf.system}",
            ours.score - crf.score if ok else None,
            "> 0",
            ours.score > crf.score if ok else None,
            "+.2f",
        ),
    ]
    return [
        "",
        "### Base-NP chunking (words + given POS → NP chunks, the other tags O; conlleval F1)",
        "",
        "The task of the published figures the issue quotes: Collins (2002) 93.53 with the "
        "averaged perceptron, Sha & Pereira (2003) 94.38 with a CRF (Ramshaw & Marcus's "
        "NP data, sections 15-18 / 20, the sentences of CoNLL-2000). Same systems and "
        "settings as above, trained and scored on the NP chunks alone.",
        "",
        _system_table("test F1", [ours, crf]),
        "",
        _report.md_table(["check", "value", "target", ""], checks),
    ]


def _peer_versions() -> str:
    from importlib import metadata

    found = []
    for package in ("python-crfsuite", "nltk"):
        try:
            found.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            found.append(f"{package} not installed")
    return ", ".join(found)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--tasks",
        type=lambda s: [t for t in s.split(",") if t],
        default=["chunk", "np", "pos"],
        help="comma-separated: chunk, np (base-NP chunking), pos",
    )
    parser.add_argument("--epochs", type=int, default=10, help="our chunker's epochs")
    parser.add_argument(
        "--pos-epochs",
        type=lambda s: [int(n) for n in s.split(",") if n],
        default=[5, 10],
        help="our POS tagger's epochs, comma-separated: a row each (5 is NLTK's default "
        "number of passes, 10 our default)",
    )
    parser.add_argument("--crf-iterations", type=int, default=10)
    parser.add_argument("--nltk-iterations", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=7, help="tagging timings (median)")
    parser.add_argument("--repeats-train", type=int, default=3, help="training timings (median)")
    parser.add_argument(
        "--crf-lbfgs", action="store_true", help="also CRFsuite's L-BFGS CRF (minutes)"
    )
    parser.add_argument(
        "--max-sentences", type=int, default=0, help="first N train and test sentences (0: all)"
    )
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--output", type=Path, default=Path("benchmarks/RESULTS.md"))
    args = parser.parse_args(argv)
    unknown = set(args.tasks) - {"chunk", "np", "pos"}
    if unknown or not args.tasks:
        parser.error(
            f"--tasks takes chunk, np and/or pos, not {','.join(sorted(unknown)) or '(none)'}"
        )
    print(f"{NAME}: {_report.machine_info()}", flush=True)
    section = run(args)
    if section is None:
        return
    print("\n" + section)
    _report.write_section(args.output, section, NAME)
    print(f"\nwrote section to {args.output}", flush=True)


if __name__ == "__main__":
    main()
