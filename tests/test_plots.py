"""The figures of :mod:`perceptrons.plots`: PNG files, and no change to pyplot's state."""

import subprocess
import sys

import numpy as np
import pytest

from perceptrons import plots

matplotlib = pytest.importorskip("matplotlib")

PNG = b"\x89PNG\r\n\x1a\n"


def test_figures_leave_the_backend_and_pyplot_alone(tmp_path):
    backend = matplotlib.get_backend()
    pyplot_loaded = "matplotlib.pyplot" in sys.modules
    curves = {
        "perceptron": {"mistakes": [9, 5, 4], "dev_error": [0.3, 0.2, 0.25]},
        "averaged": {"mistakes": [9, 6, 3], "dev_error": [0.3, 0.2, 0.15]},
    }
    first = plots.learning_curves(curves, tmp_path / "curves.png", title="t")
    second = plots.confusion_matrix(
        np.array([[5, 1], [2, 7]]), ["neg", "pos"], tmp_path / "sub" / "confusion.png"
    )
    for path in (first, second):
        assert path.read_bytes()[:8] == PNG
    assert matplotlib.get_backend() == backend
    assert ("matplotlib.pyplot" in sys.modules) is pyplot_loaded
    if pyplot_loaded:
        import matplotlib.pyplot as plt

        assert plt.get_fignums() == []  # no figure left open in pyplot
    assert sorted(p.name for p in tmp_path.rglob(".*")) == []  # no temporary file left


def test_import_perceptrons_does_not_import_matplotlib():
    code = "import sys, perceptrons, perceptrons.plots; print('matplotlib' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_missing_matplotlib_is_a_plotting_unavailable_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(plots.PlottingUnavailable, match=r"perceptrons\[plot\]"):
        plots.require_matplotlib()
    with pytest.raises(ImportError, match="pip install"):
        plots.learning_curves({"p": {"mistakes": [1]}}, tmp_path / "p.png")
