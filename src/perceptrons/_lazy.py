"""Lazy package attributes (PEP 562): a package's public names imported on first use.

``import perceptrons`` (and so every ``perceptrons`` command, ``--version`` included)
would otherwise import every estimator, and with them scikit-learn, SciPy and the
compiled kernels (about two seconds). A package lists where each of its names is
defined; :func:`lazy_attributes` gives it the module ``__getattr__`` and ``__dir__``
that import a name's module when the name is first looked up (``perceptrons.X``,
``from perceptrons import X``) and bind it in the package, so the lookup happens once.
Type checkers read the same names from ``if TYPE_CHECKING:`` imports in the package.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any


def lazy_attributes(
    namespace: dict[str, Any], origins: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose names load on first use.

    Parameters
    ----------
    namespace : dict
        The package's ``globals()``: a name, once imported, is bound there.
    origins : mapping of str to str
        Each lazy name and the module that defines it (``"Perceptron":
        "perceptrons.perceptron"``).

    Returns
    -------
    (callable, callable)
        The package's ``__getattr__(name)`` (an ``AttributeError`` for a name it does
        not hold, as for any module) and ``__dir__()`` (its globals and the lazy names).
    """
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        origin = origins.get(name)
        if origin is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(origin), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *origins})

    return __getattr__, __dir__


class LazyClasses(Mapping[str, type]):
    """A fixed table of classes by name, each imported when first looked up.

    The model files' registry (:mod:`perceptrons.io.persist`): loading a perceptron's
    file imports neither the tagger nor the voted perceptron (nor their compiled kernels).
    Only the modules of the table are ever imported; a name outside it is a ``KeyError``
    without any import, and ``in`` and iteration import nothing.

    Parameters
    ----------
    origins : mapping of str to str
        Each class name and the module that defines it.
    """

    def __init__(self, origins: Mapping[str, str]) -> None:
        self._origins = dict(origins)

    def __getitem__(self, name: str) -> type:
        cls = getattr(importlib.import_module(self._origins[name]), name)
        if not isinstance(cls, type):
            raise TypeError(f"{self._origins[name]}.{name} is not a class")
        return cls

    def module_of(self, name: str) -> str | None:
        """The module of the class ``name`` (None for a name outside the table), without
        importing it."""
        return self._origins.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._origins

    def __iter__(self) -> Iterator[str]:
        return iter(self._origins)

    def __len__(self) -> int:
        return len(self._origins)
