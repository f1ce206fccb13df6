"""The version is written once, in ``perceptrons/_version.py``: the installed distribution's
metadata (setuptools reads the file, see ``pyproject.toml``), ``perceptrons.__version__``
and ``perceptrons --version`` all show it. ``.ci/release-check`` checks the built sdist and
wheel against the same file."""

import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path

from packaging.version import Version

import perceptrons
from perceptrons._version import __version__


def test_version_is_a_normalized_pep_440_version():
    # Build tools write the normalized form to the metadata ("0.2.0-RC1" becomes "0.2.0rc1"):
    # only a version already normalized reads the same in the metadata as in the package.
    assert str(Version(__version__)) == __version__
    assert perceptrons.__version__ == __version__


def test_installed_distribution_metadata_has_the_package_version():
    assert importlib.metadata.version("perceptrons") == perceptrons.__version__


def test_installed_command_prints_the_package_version():
    # The console script pip wrote next to this interpreter (`pip install -e .`), not
    # `python -m perceptrons`: the entry point of the metadata is what users run.
    command = shutil.which("perceptrons", path=str(Path(sys.executable).parent))
    assert command is not None, f"no perceptrons command beside {sys.executable}"
    done = subprocess.run(
        [command, "--version"], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"perceptrons {perceptrons.__version__}\n"
