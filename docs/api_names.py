"""The names the API reference documents, and the names it must document.

Used by ``tests/test_docs.py`` (every public name has an entry) and by ``check_site.py``
(every entry has a built page). No Sphinx needed.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from types import ModuleType

API = Path(__file__).resolve().parent / "api"

# Modules whose names are the command line's internals: documented as commands in cli.rst.
COMMAND_MODULES = re.compile(r"^perceptrons\.(cli\.\w+|demo|__main__)$")

_CURRENT = re.compile(r"^\.\. currentmodule:: (\S+)\s*$")
_AUTOSUMMARY = re.compile(r"^\.\. autosummary::\s*$")
_ENTRY = re.compile(r"^   ([A-Za-z_][\w.]*)\s*$")


def documented_names() -> list[str]:
    """Every ``module.name`` listed in an autosummary table of docs/api/*.rst."""
    names = []
    for page in sorted(API.glob("*.rst")):
        module = None
        in_table = False
        for line in page.read_text(encoding="utf-8").splitlines():
            if match := _CURRENT.match(line):
                module, in_table = match.group(1), False
            elif _AUTOSUMMARY.match(line):
                in_table = True
            elif in_table and (match := _ENTRY.match(line)):
                names.append(f"{module}.{match.group(1)}")
            elif in_table and line and not line.startswith(" "):
                in_table = False
    return names


def public_modules() -> list[ModuleType]:
    """perceptrons and every module or subpackage of it without a leading underscore."""
    import perceptrons

    modules = [perceptrons]
    for info in pkgutil.walk_packages(perceptrons.__path__, "perceptrons."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        if COMMAND_MODULES.match(info.name):
            continue
        modules.append(importlib.import_module(info.name))
    return modules


def resolve(dotted: str) -> object:
    module_name, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module_name), name)
