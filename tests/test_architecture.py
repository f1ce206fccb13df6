"""The package's shape: its import graph has no circle, and no module imports another's
private names. Built from the source (every ``import`` statement, function-level ones
included), so a lazy import cannot hide a circle."""

import ast
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
    assert "perceptrons._online" in graph["perceptrons.linear.perceptron"]
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
