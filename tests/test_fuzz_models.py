"""Model files are untrusted input: mutated files of every estimator load cleanly or not
at all.

Valid files of every estimator (the linear family with each update rule, logistic
regression, both naive Bayes, the voted perceptron with each kind of support set, the
budgeted kernel perceptron with each removal rule, a text pipeline) are mutated --
array shapes, dtypes and values, metadata fields, zip members -- and sealed again with
a correct checksum (anyone can recompute it). ``load`` must then raise a one-line
``ValueError`` (or an ``OSError``), or return a model whose ``predict``,
``decision_function`` and ``partial_fit`` run on matching data, giving any result or a
``ValueError``: never another exception, never a crash.

The fuzz loop runs with Hypothesis in a child process (this file run as a script), so a
segmentation fault in a compiled kernel fails the test instead of killing the test run.
It is deterministic (``derandomize=True``) and bounded to a few seconds.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile

import pytest

# Values a mutation puts in an array or a metadata field.
NUMBERS = [
    float("nan"), float("inf"), -float("inf"), 1e308, -1e308, -1, 0, 1, 3, 1.5, 10**7,
    -100000, 10**9, 2**62, 2**63, 10**30, -(10**30),
]  # fmt: skip
DTYPES = ["<f4", "<i8", "<i4", "<c16", "|b1", ">f8", "<U3", "|u1", "<f8", "|S2", "structured"]
JSON_VALUES = [None, True, False, "", "x", "bogus", [], {}, [1, 2], [1, 100000], {"a": 1}]


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def _bases(directory: str) -> dict[str, tuple[str, object, object]]:
    """``name: (file, X, y)``: a valid file of every kind of model, and data it takes."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.pipeline import make_pipeline

    from perceptrons import (
        AveragedPerceptron,
        BernoulliNaiveBayes,
        BudgetPerceptron,
        LogisticRegressionSGD,
        MultinomialNaiveBayes,
        Perceptron,
        TextFeaturizer,
        VotedPerceptron,
        save,
    )
    from perceptrons.linear._update_rules import RULES
    from perceptrons.logistic_batch import LogisticRegressionBatch

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 5))
    X[rng.random(X.shape) < 0.3] = 0.0
    y3 = np.argmax(X[:, :3] + 0.3 * rng.normal(size=(30, 3)), axis=1)
    y2 = (X[:, 0] > 0).astype(int)
    counts = np.abs(X).round()
    gram = (X @ X.T + 1.0) ** 2
    texts = [f"{'good' if label else 'bad'} film {i % 4} plot" for i, label in enumerate(y2)]
    models = {
        "perceptron": (Perceptron(delta=0.5), X, y3),
        "perceptron-binary": (Perceptron(), X, y2),
        "logistic": (LogisticRegressionSGD(average=True), X, y2),
        "logistic-multi": (LogisticRegressionSGD(), X, y3),
        "logistic-batch": (LogisticRegressionBatch(), X, y3),
        "multinomial-nb": (MultinomialNaiveBayes(), counts, y3),
        "bernoulli-nb": (BernoulliNaiveBayes(), X, y2),
        "voted-linear": (VotedPerceptron(), X, y3),
        "voted-poly-ovr": (VotedPerceptron(kernel="poly", degree=2, multiclass="ovr"), X, y3),
        "voted-rbf-binary": (VotedPerceptron(kernel="rbf"), X, y2),
        "voted-sparse": (VotedPerceptron(kernel="poly", degree=2), sp.csr_matrix(X), y3),
        "voted-precomputed": (VotedPerceptron(kernel="precomputed"), gram, y3),
        # Budgets the data fill, so that the rules' matrices are in the files.
        "budget-projectron": (BudgetPerceptron(budget=6, degree=2), X, y3),
        "budget-forgetron-binary": (
            BudgetPerceptron(budget=4, removal="forgetron", kernel="rbf"),
            X,
            y2,
        ),
        "budget-random-sparse": (
            BudgetPerceptron(budget=5, removal="random"),
            sp.csr_matrix(X),
            y3,
        ),
        "budget-bpa": (BudgetPerceptron(budget=5, removal="bpa"), X, y3),
        "budget-bpa-nn": (BudgetPerceptron(budget=5, removal="bpa-nn"), X, y2),
        "text": (make_pipeline(TextFeaturizer(weighting="tfidf"), AveragedPerceptron()), texts, y2),
    }
    for update, rule in RULES.items():  # every rule of the table, whatever state it keeps
        # (averaging refuses a penalty on by default: the last weights)
        averaged = Perceptron if rule.penalized(rule.defaults) else AveragedPerceptron
        models[f"averaged-{update}"] = (averaged(update=update), X, y3)
        if rule.covariance:
            full = AveragedPerceptron(update=update, covariance="full")
            models[f"averaged-{update}-full"] = (full, X, y3)
    # Trained with sample weights: a float count, the voted perceptron's update weights.
    weights = rng.choice([0.0, 0.5, 1.0, 2.5], size=len(y3))
    weighted = {
        "averaged-weighted": AveragedPerceptron(),
        "voted-weighted": VotedPerceptron(kernel="poly", degree=2),
        "voted-linear-weighted": VotedPerceptron(multiclass="ovr"),
    }
    bases = {}
    for name, (model, data, labels) in [
        *models.items(),
        *((n, (m, X, y3)) for n, m in weighted.items()),
    ]:
        step = model[-1] if hasattr(model, "steps") else model
        if "max_epochs" in step.get_params():
            step.set_params(max_epochs=2, random_state=0)
        fitted = (
            model.fit(data, labels, sample_weight=weights)
            if name in weighted
            else model.fit(data, labels)
        )
        bases[name] = (str(save(fitted, f"{directory}/{name}.npz")), data, labels)
    # Files whose state is stored as its nonzeros (index, values): hashed-text-like data,
    # many features, few used; sparsified models (compact state), pruned ones and
    # non-resumable ones (no aux).
    wide = sp.random(30, 300, density=0.02, random_state=0, format="csr")
    wide.data[:] = np.round(wide.data * 3) + 1.0
    sparse_files = {
        "averaged-sparse-file": (AveragedPerceptron(), y3, None, True),
        "averaged-sparsified": (AveragedPerceptron(), y3, 0.0, True),
        "averaged-non-resumable": (AveragedPerceptron(), y2, None, False),
        "perceptron-delta-sparsified": (Perceptron(delta=0.5), y3, 0.0, True),
        "logistic-pruned": (LogisticRegressionSGD(average=True), y3, 0.01, True),
        "logistic-binary-sparsified": (LogisticRegressionSGD(), y2, 0.0, False),
        "multinomial-nb-sparse-file": (MultinomialNaiveBayes(), y3, 0.5, True),
    }
    for name, (model, labels, threshold, resumable) in sparse_files.items():
        if "max_epochs" in model.get_params():
            model.set_params(max_epochs=2, random_state=0)
        model.fit(wide, labels)
        if threshold is not None:
            model.sparsify(threshold=threshold)
        path = save(model, f"{directory}/{name}.npz", resumable=resumable)
        bases[name] = (str(path), wide, labels)
    return bases


def _run() -> None:
    """The fuzz loop: raises (or crashes) on a model file that is neither refused
    cleanly nor usable."""
    import numpy as np
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from perceptrons import load
    from perceptrons.io._persist_format import checksum
    from perceptrons.io.persist import describe

    directory = tempfile.mkdtemp(prefix="fuzz-models-")
    bases = _bases(directory)
    contents = {}
    for name, (path, _, _) in bases.items():
        with np.load(path, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
        contents[name] = (arrays, json.loads(arrays.pop("__meta__").tobytes()))

    def paths(value, prefix=()):
        """Every place in the metadata: (keys...) paths to dict entries and list items."""
        found = [prefix]
        if isinstance(value, dict | list) and len(prefix) < 6:
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in list(items)[:20]:
                found += paths(item, (*prefix, key))
        return found

    def mutate_array(array, draw):
        what = draw(st.sampled_from(["shape", "dtype", "value", "value", "reorder", "reorder"]))
        if what == "reorder":  # same dtype, shape and values: only their order breaks
            if not array.size:
                return array
            order = draw(st.permutations(range(len(array.reshape(-1)))))
            return array.reshape(-1)[list(order)].reshape(array.shape)
        if what == "shape":
            change = draw(st.sampled_from(["shorter", "longer", "flat", "axis", "empty", "T"]))
            if change == "shorter" and array.ndim and len(array):
                return array[:-1]
            if change == "longer" and array.ndim and len(array):
                return np.concatenate([array, array[:1]])
            if change == "flat":
                return array.reshape(-1)
            if change == "axis":
                return array[np.newaxis]
            if change == "empty" and array.ndim:
                return array[:0]
            return array.T
        if what == "dtype":
            dtype = draw(st.sampled_from(DTYPES))
            if dtype == "structured":
                return np.zeros(array.shape, dtype=[("a", "<f8"), ("b", "<i4")])
            try:
                return array.astype(dtype)
            except (ValueError, TypeError, OverflowError):
                return array
        if not array.size:
            return array
        changed = array.copy()
        flat = changed.reshape(-1)
        for _ in range(draw(st.integers(1, 3))):
            where = draw(st.integers(0, array.size - 1))
            try:
                flat[where] = draw(st.sampled_from(NUMBERS))
            except (ValueError, TypeError, OverflowError):
                pass
        return changed

    def mutate_meta(meta, draw):
        if draw(st.integers(0, 19)) == 0:
            meta["history"] = [{"deep": _nested(draw(st.sampled_from([30, 40, 200])))}]
            return
        place = draw(st.sampled_from(paths(meta)[1:]))
        parent = meta
        for key in place[:-1]:
            parent = parent[key]
        what = draw(st.sampled_from(["replace", "replace", "replace", "delete", "add"]))
        value = draw(st.sampled_from(NUMBERS) | st.sampled_from(JSON_VALUES))
        if what == "delete" and isinstance(parent, dict):
            del parent[place[-1]]
        elif what == "add" and isinstance(parent, dict):
            parent["extra"] = value
        elif what == "add" and isinstance(parent, list):
            parent.append(value)
        else:
            parent[place[-1]] = value

    def npy(array) -> bytes:
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, array, allow_pickle=False)
        return buffer.getvalue()

    def sealed(arrays, meta) -> bytes:
        """The metadata sealed with persist's own checksum (NaN and infinity allowed
        in the JSON, which save never writes)."""
        meta = {key: value for key, value in meta.items() if key != "sha256"}
        blank = json.dumps({**meta, "sha256": "0" * 64}).encode()
        digest = checksum({**arrays, "__meta__": np.frombuffer(blank, np.uint8)})
        return blank[:-66] + digest.encode() + blank[-2:]

    def mutate_members(members, draw):
        what = draw(st.sampled_from(["drop", "extra", "pad", "huge header", "raw", "deep"]))
        name = draw(st.sampled_from(sorted(members)))
        if what == "drop":
            del members[name]
        elif what == "extra":
            extra = draw(st.sampled_from(["estimator/extra.npy", "x.bin", "featurizer/idf.npy"]))
            members[extra] = npy(np.zeros(draw(st.sampled_from([1, 1000]))))
        elif what == "pad":
            members[name] += bytes(draw(st.sampled_from([1, 8, 4096])))
        elif what == "huge header":
            shape = draw(st.sampled_from([(10**9,), (2**40, 2), (10**6, 10**6)]))
            header = io.BytesIO()
            np.lib.format.write_array_header_1_0(
                header, {"descr": "<f8", "fortran_order": False, "shape": shape}
            )
            members[name] = b"\x93NUMPY\x01\x00" + header.getvalue()[8:] + bytes(64)
        elif what == "raw":
            members[name] = draw(st.binary(max_size=64))
        else:
            depth = draw(st.sampled_from([1000, 200_000]))
            members["__meta__.npy"] = npy(
                np.frombuffer(b"[" * depth + b"]" * depth, dtype=np.uint8)
            )

    def exercise(model, data, labels) -> None:
        """predict, decision_function and partial_fit: any result or a ValueError."""
        steps = getattr(model, "steps", None)
        calls = [lambda: model.predict(data), lambda: model.decision_function(data)]
        if steps:
            featurizer, estimator = steps[0][1], steps[1][1]
            calls.append(lambda: estimator.partial_fit(featurizer.transform(data), labels))
        elif getattr(model, "kernel", None) != "precomputed" and hasattr(model, "partial_fit"):
            calls.append(lambda: model.partial_fit(data, labels))
        elif not hasattr(model, "partial_fit"):  # a batch learner continues by a warm fit
            calls.append(lambda: model.fit(data, labels))
        for call in calls:
            try:
                call()
            except ValueError:
                pass

    @settings(
        derandomize=True,
        deadline=None,
        database=None,
        max_examples=int(os.environ.get("FUZZ_EXAMPLES", "600")),
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def fuzz(data):
        draw = data.draw
        base = draw(st.sampled_from(sorted(bases)))
        arrays, meta = contents[base]
        arrays = dict(arrays)
        meta = json.loads(json.dumps(meta))
        kinds = draw(st.lists(st.sampled_from(["array", "meta", "member"]), min_size=1, max_size=2))
        for kind in kinds:
            if kind == "array":
                name = draw(st.sampled_from(sorted(arrays)))
                arrays[name] = mutate_array(arrays[name], draw)
            elif kind == "meta":
                mutate_meta(meta, draw)
        members = {f"{name}.npy": npy(array) for name, array in arrays.items()}
        members["__meta__.npy"] = npy(np.frombuffer(sealed(arrays, meta), np.uint8))
        for _ in range(kinds.count("member")):
            mutate_members(members, draw)
        path = f"{directory}/mutated.npz"
        compression = draw(st.sampled_from([zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED]))
        with zipfile.ZipFile(path, "w", compression=compression) as archive:
            for name, raw in members.items():
                archive.writestr(name, raw)
        for read in (describe, load):
            try:
                result = read(path)
            except (ValueError, OSError) as exc:
                assert type(exc) in (ValueError, FileNotFoundError), repr(exc)
                assert "\n" not in str(exc) and path in str(exc), str(exc)
                continue
            if read is load:
                _, X, y = bases[base]
                exercise(result, X, y)

    fuzz()


def test_mutated_model_files_load_cleanly_or_not_at_all():
    try:
        done = subprocess.run(
            [sys.executable, __file__],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONFAULTHANDLER": "1", "PYTHONWARNINGS": "ignore"},
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the model fuzz loop hung (over {exc.timeout} s)")
    assert done.returncode == 0, f"model fuzz failed:\n{done.stdout}\n{done.stderr[-8000:]}"


if __name__ == "__main__":
    _run()


# ------------------------------------------------------------ ONNX export of fuzzed models
def _run_export() -> None:
    """The fuzz loop, each model that loads exported with the check: a graph whose
    labels are ``predict``'s on the probe rows, or a one-line ValueError (a model that
    cannot be exported, or whose graph fails the check), never another exception."""
    import perceptrons
    from perceptrons.io.onnx import to_onnx

    load = perceptrons.load

    def load_and_export(path, *args, **kwargs):
        model = load(path, *args, **kwargs)
        try:
            to_onnx(model, check=True)
        except ValueError as exc:
            assert "\n" not in str(exc), str(exc)
        return model

    perceptrons.load = load_and_export  # what _run imports
    _run()


def test_mutated_model_files_export_cleanly_or_not_at_all():
    pytest.importorskip("onnxruntime", reason="the [onnx] extra is not installed")
    code = f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
    code += "import test_fuzz_models; test_fuzz_models._run_export()"
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=300,
            env={
                **os.environ,
                "PYTHONFAULTHANDLER": "1",
                "PYTHONWARNINGS": "ignore",
                "FUZZ_EXAMPLES": "100",
            },
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the export fuzz loop hung (over {exc.timeout} s)")
    assert done.returncode == 0, f"export fuzz failed:\n{done.stdout}\n{done.stderr[-8000:]}"


def test_a_refused_partial_fit_leaves_every_model_as_it_was(tmp_path):
    """Batches of huge, tiny and mixed features (and unknown labels) given to
    ``partial_fit`` of every kind of model file: a refused batch (scores or weights that
    overflow, bad input, a model that cannot go on) raises a one-line ``ValueError`` and
    leaves the model bit for bit as it was (tests/test_rollback.py's fingerprint).
    In-process: these files are valid, so the kernels' inputs are checked ones."""
    import numpy as np
    import scipy.sparse as sp
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from fingerprints import fingerprint
    from perceptrons import load

    bases = {
        name: base
        for name, base in _bases(str(tmp_path)).items()
        if hasattr(load(base[0]), "partial_fit")
    }
    sizes = [1e308, -1e308, 1e300, -1e300, 1e200, 1e160, -1e160, 1e-300, 0.0, 3.0]

    @settings(
        derandomize=True,
        deadline=None,
        max_examples=int(os.environ.get("FUZZ_EXAMPLES", "80")),
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def fuzz(data):
        draw = data.draw
        name = draw(st.sampled_from(sorted(bases)))
        path, X, y = bases[name]
        dense = X.toarray() if sp.issparse(X) else np.array(X, dtype=np.float64)
        rows = draw(st.lists(st.integers(0, dense.shape[0] - 1), min_size=1, max_size=12))
        batch, labels = dense[rows], np.asarray(y)[rows]
        for _ in range(draw(st.integers(0, 6))):
            row = draw(st.integers(0, len(rows) - 1))
            column = draw(st.integers(0, dense.shape[1] - 1))
            batch[row, column] = draw(st.sampled_from(sizes))
        if draw(st.integers(0, 9)) == 0:
            labels = labels.copy()
            labels[0] = 99  # a label the model was not trained on
        model = load(path)
        before = fingerprint(model, tmp_path)
        try:
            model.partial_fit(sp.csr_matrix(batch) if sp.issparse(X) else batch, labels)
        except ValueError as exc:
            assert "\n" not in str(exc), f"{name}: {exc}"
            assert fingerprint(model, tmp_path) == before, f"{name} changed: {exc}"

    fuzz()
