"""The package's shape: its import graph has no circle, no module imports another's
private names, and the underscore imports across packages only ever become fewer. Built
from the source (every ``import`` statement, function-level ones included), so a lazy
import cannot hide a circle."""

import ast
import textwrap
from pathlib import Path

import pytest

import perceptrons

PACKAGE = Path(perceptrons.__file__).parent


def _module_name(path: Path) -> str:
    parts = ["perceptrons", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(name: str) -> str | None:
    """The package module ``name`` denotes (a module, or a name inside one)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> list[tuple[str, str | None, int]]:
    """(imported module, imported name or None, line) for every import in ``module``."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in MODULES:
                    found.append((submodule, None, node.lineno))
                else:
                    found.append((base, alias.name, node.lineno))
    return [(m, n, line) for m, n, line in found if m.split(".")[0] == "perceptrons"]


def _graph() -> dict[str, set[str]]:
    graph = {}
    for module in MODULES:
        targets = {_resolve(target) for target, _, _ in _imports(module)}
        # A module's package __init__ runs first whatever is imported: the edge to a
        # parent package is not a dependency of the module's own code.
        graph[module] = {t for t in targets if t and t != module}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_graph_is_read_from_the_sources():
    graph = _graph()
    # Spot checks that the reader sees what is there (so an empty graph cannot pass).
    assert "perceptrons.linear._online" in graph["perceptrons.linear.perceptron"]
    assert "perceptrons._kernels.perceptron" in graph["perceptrons.linear._families"]
    # A lazy import:
    assert "perceptrons.parallel.threads" in graph["perceptrons.linear.perceptron"]
    assert "perceptrons.linear.perceptron" in graph["perceptrons.perceptron"]
    assert "perceptrons._registry" in graph["perceptrons.io.persist"]


def test_the_import_graph_has_no_circle():
    assert _cycle(_graph()) is None, " -> ".join(_cycle(_graph()) or [])


def test_the_cycle_finder_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_private_names_of_another(module):
    """Private names stay in their module, or in a private helper module (``_common``,
    ``_rows``...) that its own package's modules share."""

    def shared_helper(target: str) -> bool:
        package, _, leaf = target.rpartition(".")
        return leaf.startswith("_") and module.rpartition(".")[0] == package

    private = [
        f"line {line}: {name} from {target}"
        for target, name, line in _imports(module)
        if name is not None
        and name.startswith("_")
        and not name.startswith("__")
        and _resolve(target) != module
        and not shared_helper(_resolve(target) or "")
    ]
    assert not private, f"{module} imports private names: {private}"


def _package(module: str) -> str:
    """The package ``module`` belongs to: the directory of its file (a package's
    ``__init__`` belongs to that package, not to its parent)."""
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def _underscored(dotted: str) -> bool:
    """Whether ``perceptrons.a.b...`` passes through an underscore package, module or name
    (a dunder such as ``__version__`` is no private name)."""
    parts = dotted.split(".")[1:]
    return any(part.startswith("_") and not part.startswith("__") for part in parts)


def _crosses(module: str, target: str, name: str | None) -> bool:
    """Whether ``module`` importing ``name`` from ``target`` (or the module ``target``
    itself) takes an underscore module or name from another package."""
    defining = _resolve(target)
    imported = f"{target}.{name}" if name else target
    return (
        defining is not None
        and defining != module
        and _underscored(imported)
        and _package(defining) != _package(module)
    )


def _crossings() -> set[tuple[str, str]]:
    """(importer, imported name) for every underscore import across packages."""
    return {
        (module, f"{target}.{name}" if name else target)
        for module in MODULES
        for target, name, _ in _imports(module)
        if _crosses(module, target, name)
    }


def _entries(text: str) -> frozenset[tuple[str, str]]:
    """The allowlist's text as (importer, imported name) pairs: ``importer: name name...``,
    continued on indented lines, both without the leading ``perceptrons.``."""
    entries: set[tuple[str, str]] = set()
    importer = ""
    for line in text.strip().splitlines():
        if not line.startswith(" "):
            importer, _, line = line.partition(": ")
        entries |= {(f"perceptrons.{importer}", f"perceptrons.{name}") for name in line.split()}
    return frozenset(entries)


def _short(pairs: set[tuple[str, str]]) -> list[str]:
    return sorted(
        f"{a.removeprefix('perceptrons.')}: {b.removeprefix('perceptrons.')}" for a, b in pairs
    )


# The underscore imports that cross a package today, frozen: this list only shrinks.
#
# A package is a directory: the top level (``perceptrons/``), ``linear/``, ``kernel/``,
# ``io/``, ``io/formats/``, ``cli/``, ``parallel/``, ``_kernels/``... The top level counts
# as a package like any other: its underscore modules (``_engine``, ``_input``,
# ``_validation``, ``_memory``...) are its own, so a subpackage that imports them crosses,
# and so does a top-level module that imports ``perceptrons._kernels`` or
# ``perceptrons.io._persist_read``. An import crosses when what it names passes through an
# underscore package, module or name (``from perceptrons._kernels import voted``,
# ``from perceptrons import _input``, ``from perceptrons.io.persist import _x``) and the
# module defining it lies in another package than the importer. Inside a package, its
# underscore modules are shared freely (their private names only as the test above allows).
#
# A new such import fails: name what it needs in the other package without an
# underscore (the package's internal API), or move the code into the package it
# belongs to. An entry whose import is gone fails too: delete it. 225 entries when frozen;
# ``python tests/test_architecture.py`` prints today's in this form (for a merge).
UNDERSCORE_CROSSINGS = _entries(
    """
_engine: _kernels._rows.NON_FINITE_SCORE
_linear: _kernels.scoring
_states: _kernels.finite
_svm: _kernels.svm.hinge_dual_pass _kernels.svm.shuffle_prefix
cli._common: _registry.ALGORITHMS _registry.kind_of linear._update_rules.RULES
    linear._update_rules.UpdateRule
cli._parser: _limits.MAX_N_FEATURES _version.__version__ io.formats._names.FORMATS
    linear._update_rules.RULES parallel._names.CONNECT_TIMEOUT
    parallel._names.DEFAULT_LOCAL_EPOCHS parallel._names.DEFAULT_MIXING parallel._names.MIXINGS
cli.evaluate: _metrics.confusion_matrix _metrics.scores_of_confusion
cli.mixing: parallel._dask_cluster.SchedulerConnectionError
    parallel._dask_cluster.connect_scheduler parallel._dask_cluster.quiet_dask_logs
    parallel._dask_cluster.start_local_cluster parallel._mixing.check_estimator
    parallel._names.CONNECT_TIMEOUT
cli.tag: io.formats._names.SEQUENCE_FORMATS
cli.tools: linear._update_rules.RULES linear._update_rules.UpdateRule
cli.train: _metrics.confusion_matrix parallel._mixing.mixing_refusal
complexity: _kernels.strategies
io._chunks: _kernels.hashing _kernels.parse _memory.array_bytes _memory.check_allocation
    _memory.format_bytes _validation.canonical_csr io.formats._common.READ_WHOLE_REMEDY
    io.formats._common.check_in_memory io.formats._common.open_binary
    io.formats._common.out_of_memory_in_one_line
io._persist_format: _checked
io._persist_read: _checked _engine.MAX_HISTORY _engine.StateCodec _linear.SparseCoefMixin
    _memory.MemoryBudgetError _memory.array_bytes _memory.check_allocation _validation
    linear._online.OnlineLinearClassifier
io._persist_write: _checked _engine.StateCodec _input _version.__version__
io.formats: _lazy.lazy_attributes
io.formats._common: _memory.MemoryBudgetError _memory.check_allocation _memory.format_bytes
    _memory.memory_limit
io.formats._csv: _decimal.decimal_number
io.formats._idx: _memory.MemoryBudgetError _memory.array_bytes _memory.check_allocation
io.formats._svmlight: _decimal.decimal_number _kernels.parse _memory.array_bytes
    _memory.check_allocation
io.formats._svmlight_reference: _decimal.decimal_index _decimal.decimal_number
io.formats._weighted: _decimal.decimal_number _decimal.is_decimal_number
io.onnx: _input.check_is_fitted _kernels.voted.stage_totals _linear.LogLinearProbabilities
    _memory.check_allocation _registry.MODELS _version.__version__
io.persist: _engine.StateCodec _lazy.LazyClasses _registry.MODELS
io.sequences: io.formats._common.read_input io.formats._names.SEQUENCE_FORMATS
io.stream: _base.Trainable _engine.add_record _engine.run_epochs _input.check_random_state
    linear._online.OnlineLearner
kernel: _lazy.lazy_attributes
kernel._budget_codec: _checked _kernels.budget.nearest_neighbours
kernel._gram: _linear.sparse_scores
kernel._scores: _kernels.voted.RULE_AVERAGE _kernels.voted.RULE_LAST _kernels.voted.RULE_RANDOM
    _kernels.voted.RULE_VOTE _kernels.voted.stage_totals
kernel._training: _base.IncrementalClassifier _engine.check_statistic _engine.epochs_recorded
    _kernels.perceptron _kernels.voted _memory.check_training_state _validation
kernel._voted_codec: _checked
kernel.budget: _base.IncrementalClassifier _engine.check_statistic _engine.epochs_recorded
    _engine.run_epochs _input _kernels.budget _memory.check_allocation _params _validation
kernel.voted: _engine.run_epochs _input _kernels.voted _params _validation
linear: _lazy.lazy_attributes
linear._families: _kernels.adagrad _kernels.confidence _kernels.dual_averaging
    _kernels.feature_selection _kernels.first_order _kernels.ftrl _kernels.perceptron
    _kernels.romma _kernels.second_order
    _states.AlmaState _states.PerceptronState _states.RommaState _states.TrainingState
    _states.adaptive_state
linear._online: _base.IncrementalClassifier _base.Trainable _engine.Engine _engine.hold_out
    _engine.run_epochs _input _linear.SparseCoefMixin _linear.linear_scores _params
    _states.CompactState _states.Frozen _states.PerceptronState _states.TrainingState
    _validation
linear._online_engine: _checked _engine.Stopping _engine.check_statistic _input
    _memory.check_training_state _states.AdaptiveState _states.CompactState _states.Frozen
    _states.TrainingState _states.as_count _states.sorted_union _validation
linear.logistic: _kernels.logistic _linear.LogLinearProbabilities _params _states.LogisticState
    _states.TrainingState
linear.perceptron: _params _states.PerceptronState _states.TrainingState
parallel: _lazy.lazy_attributes
parallel._dask_runner: _validation
parallel._mixing: _base.Trainable _engine.hold_out _engine.run_epochs _input.check_random_state
    _kernels.mixing.add_shard _kernels.mixing.apply_mix _kernels.mixing.union_rows _params
    _states.AdaptiveState _states.PerceptronState _states.TrainingState _states.all_finite
    _states.as_count linear._online.OnlineLinearClassifier
parallel._shards: _engine.Engine _kernels.mixing.sorted_rows_of_examples _states.AdaptiveState
    _states.TrainingState _states.as_count linear._online.OnlineLinearClassifier
parallel.dask: _params _validation linear._online.OnlineLinearClassifier
parallel.threads: _params linear._online.OnlineLinearClassifier
probabilistic: _lazy.lazy_attributes
probabilistic.logistic_batch: _base.IncrementalClassifier _checked _engine.add_record _input
    _linear.LogLinearProbabilities _linear.SparseCoefMixin _linear.linear_scores
    _memory.array_bytes _memory.check_allocation _memory.check_training_state _params
    _validation
probabilistic.naive_bayes: _base.IncrementalClassifier _checked _input
    _linear.LogLinearProbabilities _linear.SparseCoefMixin _linear.linear_scores
    _memory.check_training_state _params _states.Frozen _validation
reference: _lazy.lazy_attributes
sequence: _lazy.lazy_attributes
sequence.featurizer: _base.Trainable _checked _input _kernels.sequence_features _params
    _sequences.TokenFeatures
sequence.tagger: _checked _engine.check_statistic _input _kernels.sequence _memory.array_bytes
    _memory.check_allocation _params _sequences.TagCodes _sequences.TokenFeatures
    _states.TrainingState _states.as_count _validation linear._online.OnlineLearner
    linear._online_engine.LinearEngine
text: _lazy.lazy_attributes
text._codec: _checked _input
text._pairs: _decimal.decimal_number _kernels.hashing.hash_names
text.featurizer: _base.Trainable _input _kernels.tokens _limits _memory.array_bytes
    _memory.check_allocation _params _validation.canonical_csr
text.weighting: _kernels.weighting.normalize_rows_l2 _validation.check_sparse_structure
"""
)


def _listed(pairs: set[tuple[str, str]]) -> str:
    """``pairs`` written as :data:`UNDERSCORE_CROSSINGS`'s text (``python
    tests/test_architecture.py`` prints today's, e.g. to settle a merge)."""
    imported: dict[str, list[str]] = {}
    for importer, name in sorted(pairs):
        imported.setdefault(importer.removeprefix("perceptrons."), []).append(
            name.removeprefix("perceptrons.")
        )
    return "\n".join(
        textwrap.fill(
            f"{importer}: {' '.join(names)}", 96, subsequent_indent="    ", break_long_words=False
        )
        for importer, names in imported.items()
    )


def test_the_allowlist_reads_back_as_written():
    assert _entries(_listed(set(UNDERSCORE_CROSSINGS))) == UNDERSCORE_CROSSINGS


def test_the_crossing_check_reads_packages_as_directories():
    assert _crosses("perceptrons.kernel.voted", "perceptrons._kernels.voted", None)
    assert _crosses("perceptrons.kernel.voted", "perceptrons._kernels", "voted")
    assert _crosses("perceptrons.kernel.voted", "perceptrons._engine", "run_epochs")
    assert _crosses("perceptrons.kernel", "perceptrons._lazy", "lazy_attributes")
    assert _crosses("perceptrons.voted", "perceptrons.kernel._gram", "to_host")
    assert _crosses("perceptrons.cli.train", "perceptrons.io.persist", "_private")
    assert _crosses("perceptrons.io.stream", "perceptrons.io.formats._common", "open_binary")
    # inside one package, and public names across packages, are fine
    assert not _crosses("perceptrons.kernel.voted", "perceptrons.kernel._gram", "to_host")
    assert not _crosses("perceptrons.kernel.voted", "perceptrons.kernel", "_gram")
    assert not _crosses("perceptrons.voted", "perceptrons._estimator", "ClassifierFace")
    assert not _crosses("perceptrons.voted", "perceptrons.kernel.voted", "VotedPerceptron")
    assert not _crosses("perceptrons.cli.tools", "perceptrons", "__version__")
    # and the walk finds what is there (so an empty set cannot pass)
    assert ("perceptrons.kernel.voted", "perceptrons._kernels.voted") in _crossings()


def test_no_new_underscore_import_crosses_a_package():
    new = _crossings() - UNDERSCORE_CROSSINGS
    assert not new, (
        "underscore imports across packages (import the other package's non-underscore "
        f"internal API, or move the code where it belongs): {_short(new)}"
    )


def test_the_allowlist_of_crossings_only_shrinks():
    gone = UNDERSCORE_CROSSINGS - _crossings()
    assert not gone, f"no longer imported: delete from UNDERSCORE_CROSSINGS: {_short(gone)}"


# The modules of the parameter-mixing algorithm: the client's side and a shard's side.
MIXING_ALGORITHM = ["perceptrons.parallel._mixing", "perceptrons.parallel._shards"]


@pytest.mark.parametrize("module", MIXING_ALGORITHM)
def test_the_mixing_algorithm_imports_neither_dask_nor_an_estimator(module):
    source = MODULES[module].read_text(encoding="utf-8")
    imported = {target for target, _, _ in _imports(module)} | {
        n.names[0].name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import)
    }
    assert not any(name.split(".")[0] in ("dask", "distributed") for name in imported)
    estimators = {"perceptrons.perceptron", "perceptrons.logistic", "perceptrons.voted"}
    assert not (imported & estimators)


#: Beyond this many lines a module says why it is one module.
LONG_MODULE = 600


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_long_module_says_why_at_its_top(module):
    path = MODULES[module]
    lines = path.read_text(encoding="utf-8").count("\n")
    if lines <= LONG_MODULE:
        return
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert "Over 600 lines: " in docstring, f"{module}: {lines} lines, and no reason given"


if __name__ == "__main__":
    print(_listed(_crossings()))
