"""The scripts in examples/ run to completion (each asserts what it shows)."""

import subprocess
import sys
from pathlib import Path

import pytest

from perceptrons.datasets import shared_data_dir

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(script: Path, tmp_path: Path) -> None:
    # The rule docs/conf.py applies to the gallery: an example that looks for the shared
    # data sets needs them.
    if "shared_data_dir(" in script.read_text() and shared_data_dir() is None:
        pytest.skip(f"{script.name} needs ../shared/data (or $PERCEPTRONS_DATA)")
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "figure.png")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip(), "an example prints what it shows"


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 2
