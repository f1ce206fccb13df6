"""Sphinx configuration of the perceptrons documentation.

Built with ``sphinx-build -W --keep-going -b html docs docs/_build/html`` (or ``make -C docs
html``). Needs the ``docs`` extra: ``pip install -e ".[docs]"``. The one download is MathJax
(``_ext/local_mathjax.py``: a pinned release from the npm registry, its hash checked, cached
in ``_build/.mathjax``), which the site then serves itself: it reads without network. There
is no intersphinx, and the examples read built-in data or ``../shared/data``.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import perceptrons
from perceptrons.datasets import shared_data_dir

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "perceptrons"
author = "the perceptrons developers"
copyright = "2026, the perceptrons developers"
release = perceptrons.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "local_mathjax",  # sphinx.ext.mathjax, with MathJax in the site's _static/
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    "cli_reference",
    "update_rules",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = [
    "_build",
    "**.ipynb_checkpoints",
    "auto_examples/*.ipynb",
    "sg_execution_times.rst",  # left by older builds (write_computation_times below)
    "auto_examples/sg_execution_times.rst",
]
templates_path = ["_templates"]
default_role = "py:obj"

# Every cross-reference must resolve (warnings are errors): the internal link check of
# the references Sphinx makes. Other projects' names have no target without intersphinx,
# which needs the network; private names have no page by design.
nitpicky = True
_EXTERNAL = (
    "numpy|np|scipy|sklearn|matplotlib|dask|distributed|tqdm|numba|pandas|json|sys|os|csv"
    "|io|pathlib|collections|typing|zipfile|hashlib|argparse|re|gzip|threading|tempfile"
)
nitpick_ignore_regex = [
    (r"py:.*", rf"({_EXTERNAL})(\..+)?"),
    (r"py:.*", r"(.+\.)?_[A-Za-z]\w*(\..+)?"),
]

# -- API reference -----------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- Math --------------------------------------------------------------------------------
# MathJax (sphinx.ext.mathjax) typesets the formulas in the reader's browser, from the
# site's own _static/mathjax/ (local_mathjax fetches it when the site is built), never
# from a CDN: the site reads without network.

# -- Examples gallery --------------------------------------------------------------------
# Examples that read ../shared/data (those calling shared_data_dir) are shown without being
# run when it is absent: a clean clone without the data still builds, with no warnings. CI
# has the data and runs them all.
EXAMPLES = DOCS.parent / "examples"
NEEDS_SHARED_DATA = sorted(
    path.name for path in EXAMPLES.glob("*.py") if "shared_data_dir(" in path.read_text()
)
_skipped = "|".join(name.replace(".", r"\.") for name in NEEDS_SHARED_DATA) or "$^"
_runnable = rf".*[/\\](?!({_skipped}))[^/\\]+\.py$"
sphinx_gallery_conf = {
    "examples_dirs": str(EXAMPLES),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$" if shared_data_dir() is not None else _runnable,
    "ignore_pattern": r"__init__\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "min_reported_time": 1,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "within_subsection_order": "FileNameSortKey",
    "reset_modules": ("matplotlib",),
    "show_memory": False,
    "capture_repr": (),
    # "Examples using X" on each API page.
    "backreferences_dir": "api/generated/backreferences",
    "doc_module": ("perceptrons",),
    "inspect_global_variables": False,
    # Its table of run times (sg_execution_times) loads jQuery and DataTables from CDNs;
    # each example's page shows its own time.
    "write_computation_times": False,
}
os.environ.setdefault("MPLBACKEND", "Agg")
warnings.filterwarnings("ignore", message="Matplotlib is currently using agg")

# -- HTML --------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"perceptrons {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 7,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "benchmarks": []}
html_show_sourcelink = False
html_copy_source = False

myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]


def _skip_scikit_learn_members(app, what, name, obj, skip, options):
    """Leave out the methods scikit-learn's base classes give every estimator.

    ``get_params``, ``set_params``, ``score`` and the metadata-routing ``set_*_request``
    are scikit-learn's API, documented on its site; their docstrings point into it.
    """
    if what == "class" and (getattr(obj, "__module__", None) or "").startswith("sklearn."):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_scikit_learn_members)
