"""Shared by the benchmarks: machine description, Markdown tables, RESULTS.md sections."""

from __future__ import annotations

import os
import platform
import tempfile
from pathlib import Path

import numba
import numpy as np
import scipy
import sklearn


def markers(name: str) -> tuple[str, str]:
    """The comment lines that delimit benchmark ``name``'s section of RESULTS.md."""
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def machine_info() -> str:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        import perceptrons

        ours = getattr(perceptrons, "__version__", "?")
    except Exception:
        ours = "not importable"
    return (
        f"{platform.platform()}, {cpu or 'unknown CPU'}, {os.cpu_count()} CPUs; "
        f"Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"scikit-learn {sklearn.__version__}, numba {numba.__version__}, perceptrons {ours}"
    )


def md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def write_section(path: Path, section: str, name: str) -> None:
    """Replace (or append) benchmark ``name``'s section of ``path``, atomically."""
    start_marker, end_marker = markers(name)
    path = Path(path)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    start, end = text.find(start_marker), text.find(end_marker)
    if start != -1 and end > start:
        new = text[:start] + section + text[end + len(end_marker) :]
    elif text:
        new = text.rstrip("\n") + "\n\n" + section + "\n"
    else:
        new = "# Benchmark results\n\n" + section + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(new)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def publish(section: str, name: str, output: str | Path, write: bool) -> None:
    """Benchmark ``name``'s ``section`` into RESULTS.md at ``output`` (``write``), else
    printed: the end of every benchmark's run."""
    if write:
        write_section(Path(output), section, name)
    else:
        print(section)
