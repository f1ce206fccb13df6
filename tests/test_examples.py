"""The scripts in examples/ run to completion (each asserts what it shows).

They run in this process, as sphinx-gallery runs them (``runpy``, as ``__main__``, with
the figure's file name as their argument): a subprocess per script would import the
library again each time.
"""

import runpy
import sys
from pathlib import Path

import pytest

from perceptrons.datasets import shared_data_dir

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(script: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    # The rule docs/conf.py applies to the gallery: an example that looks for the shared
    # data sets needs them.
    if "shared_data_dir(" in script.read_text() and shared_data_dir() is None:
        pytest.skip(f"{script.name} needs ../shared/data (or $PERCEPTRONS_DATA)")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = tmp_path / "figure.png"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(script), str(figure)])
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as done:  # an example that finds its data set missing stops here
        assert done.code in (None, 0), f"{script.name} exited with {done.code}"
        pytest.skip(capsys.readouterr().out.strip() or f"{script.name} stopped early")
    finally:
        plt.close("all")
    assert capsys.readouterr().out.strip(), "an example prints what it shows"
    assert figure.is_file() and figure.stat().st_size > 0, "an example saves its figure"


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 2
