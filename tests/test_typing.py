"""The public API is typed (``py.typed`` ships with the package): every public function
and every public method of a public class has an annotation on each of its parameters
(``self``, ``cls``, ``*args`` and ``**kwargs`` aside) and a return annotation.

Public: a name without a leading underscore, in a module whose dotted path has no
component starting with one (``perceptrons.__main__`` aside), defined there or in a
private module of that package (``perceptrons.io.formats._read.read_data`` is
``perceptrons.io.formats.read_data``); a public class's methods
are those it defines and those it inherits from a class of this package (what it
inherits from scikit-learn or ``object`` is not ours), dunders and properties aside. The
codecs and engines that the estimators and featurizers hand out through ``_codec()``
(see :mod:`perceptrons._engine`) are public by their protocols' documentation, though their
modules are not."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import perceptrons

# What hands out an engine: every class of the package's namespace that has one (the
# estimators and the featurizers).
# Every public class (looked up, so imported: the package binds its names on first use)
# with an engine, whatever the tests imported before.
CODEC_OWNERS = [
    obj
    for obj in (getattr(perceptrons, name) for name in perceptrons.__all__)
    if inspect.isclass(obj) and hasattr(obj, "_codec")
]


def _public_modules() -> Iterator[Any]:
    yield perceptrons
    for info in pkgutil.walk_packages(perceptrons.__path__, prefix="perceptrons."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        yield importlib.import_module(info.name)


def _own(cls: type) -> bool:
    return cls.__module__.split(".")[0] == "perceptrons"


def _methods(cls: type) -> Iterator[tuple[str, Callable[..., Any]]]:
    """The public methods of ``cls``: its own and those inherited from this package."""
    seen: set[str] = set()
    for klass in cls.__mro__:
        if not _own(klass):
            continue
        for name, attr in vars(klass).items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            if isinstance(attr, (staticmethod, classmethod)):
                attr = attr.__func__
            if inspect.isfunction(attr):
                yield name, attr


def _defined_in(obj: Any, module: Any) -> bool:
    """``obj`` is ``module``'s own: defined in it, or in a private module of the package."""
    owner = inspect.getmodule(obj)
    return owner is module or (
        owner is not None
        and hasattr(module, "__path__")
        and owner.__name__.startswith(f"{module.__name__}._")
    )


def _public_callables() -> dict[str, Callable[..., Any]]:
    found: dict[str, Callable[..., Any]] = {}
    for module in _public_modules():
        for name, obj in vars(module).items():
            if name.startswith("_") or not _defined_in(obj, module):
                continue
            if inspect.isfunction(obj):
                found[f"{module.__name__}.{name}"] = obj
            elif inspect.isclass(obj):
                for method_name, method in _methods(obj):
                    found[f"{module.__name__}.{name}.{method_name}"] = method
    for owner in CODEC_OWNERS:
        engine = type(owner()._codec())
        for method_name, method in _methods(engine):
            found[f"{engine.__module__}.{engine.__qualname__}.{method_name}"] = method
    return found


CALLABLES = _public_callables()


def test_the_walk_finds_the_api() -> None:
    # A walk that found nothing would pass every check below.
    for qualname in (
        "perceptrons.io.formats.read_data",
        "perceptrons.io.stream.fit_stream",
        "perceptrons.features.TextFeaturizer.fit",
        "perceptrons.voted.VotedPerceptron.partial_fit",
        # inherited from the engine, a class of a private module
        "perceptrons.perceptron.AveragedPerceptron.decision_function",
        "perceptrons.parallel.dask.ParameterMixing.fit",
        "perceptrons.reference.voted.vote_predict",
        # engines, classes of private modules
        "perceptrons.linear._online_engine.LinearEngine.run_epoch",
        "perceptrons.kernel._voted_codec.VotedCodec.import_state",
        "perceptrons.probabilistic.naive_bayes._NaiveBayesCodec.export_state",
    ):
        assert qualname in CALLABLES, qualname
    assert len(CALLABLES) > 100


@pytest.mark.parametrize("qualname", sorted(CALLABLES))
def test_public_callable_is_annotated(qualname: str) -> None:
    func = CALLABLES[qualname]
    annotations = func.__annotations__
    missing = [
        name
        for name, param in inspect.signature(func).parameters.items()
        if name not in ("self", "cls")
        and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD)
        and name not in annotations
    ]
    assert not missing, f"{qualname}: parameters without an annotation: {missing}"
    assert "return" in annotations, f"{qualname}: no return annotation"
