"""Shared by the kernel benchmarks: backends named on the command line, machine tags, JSON runs.

A backend is what ``--device`` names: ``cpu`` (or ``numpy``) is the estimator's default,
NumPy and BLAS on the CPU, built *without* a ``device`` argument; anything else (``cuda``,
``cuda:0``, ``torch:cpu`` for PyTorch on the CPU) is passed as ``device=`` to
``VotedPerceptron``. Passing ``device`` only when one is named keeps the benchmarks
running on a ``VotedPerceptron`` that has no such parameter (the row then says why).

GPU rows are produced on another machine and brought back as JSON (``--json-out``);
``--from-json A B ...`` builds the RESULTS.md section from several such files, every row
tagged with the machine and backend that produced it.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import resource
import shlex
import sys
from pathlib import Path
from typing import Any

import _report

NUMPY_NAMES = ("cpu", "numpy")


def add_run_options(parser: Any, script_file: str) -> None:
    """The options both kernel benchmarks take: the backends, BLAS threads, the
    machine's label and the saved runs (``--json-out``, ``--from-json``), the output."""
    parser.add_argument(
        "--device",
        action="append",
        help="backend, repeatable or a comma list: cpu (NumPy, the default), cuda, cuda:1, "
        "torch:cpu (PyTorch on the CPU)",
    )
    parser.add_argument(
        "--blas-threads",
        type=int,
        default=None,
        help="BLAS threads (default: the library's own choice); recorded with the run",
    )
    parser.add_argument("--machine-label", help='e.g. "2-core VM" or "H100"; default: cores, CPU')
    parser.add_argument("--json-out", help="also save this run's raw results here")
    parser.add_argument("--from-json", nargs="+", help="build the section from saved runs")
    parser.add_argument("--output", default=str(Path(script_file).with_name("RESULTS.md")))


def parse_devices(values: list[str] | None) -> list[str | None]:
    """``--device`` values (repeatable, each a comma list) as estimator ``device`` arguments.

    ``None`` stands for the NumPy default; the order given is kept, duplicates dropped.
    """
    devices: list[str | None] = []
    for value in values or ["cpu"]:
        for name in value.split(","):
            name = name.strip()
            if not name:
                continue
            if name.lower() in NUMPY_NAMES:
                device = None
            elif name.lower().startswith("torch:"):
                device = name.split(":", 1)[1]  # "torch:cpu" -> PyTorch on the CPU
            else:
                device = name
            if device not in devices:
                devices.append(device)
    if not devices:
        raise ValueError("--device named no backend")
    return devices


def backend_label(device: str | None) -> str:
    """How a row names its backend: "NumPy" or "PyTorch <device>"."""
    return "NumPy" if device is None else f"PyTorch {device}"


def make_voted(device: str | None, **params: Any) -> Any:
    """A ``VotedPerceptron(**params)``, with ``device=`` only when a device is named.

    Raises ``RuntimeError`` saying why when this ``VotedPerceptron`` cannot take the device
    (no ``device`` parameter yet, or the backend refuses it).
    """
    from perceptrons import VotedPerceptron

    if device is None:
        return VotedPerceptron(**params)
    try:
        return VotedPerceptron(**params, device=device)
    except TypeError as exc:  # the estimator predates the device parameter
        raise RuntimeError(f"VotedPerceptron takes no device here ({exc})") from exc


def accelerator_name(device: str | None) -> str | None:
    """The GPU's name when ``device`` is a CUDA device and PyTorch can see it, else None."""
    if device is None or not device.startswith("cuda"):
        return None
    try:
        import torch

        return str(torch.cuda.get_device_name(torch.device(device)))
    except Exception:  # no torch, no CUDA: the machine tag says less
        return None


def machine_tag(devices: list[str | None], label: str | None = None) -> str:
    """A short tag for the rows of this run: ``label`` if given, else cores and CPU (and GPU)."""
    if label:
        return label
    cpu = platform.processor() or "CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    tag = f"{os.cpu_count()}-core {cpu}"
    gpus = sorted({name for name in map(accelerator_name, devices) if name})
    return tag + (f" + {', '.join(gpus)}" if gpus else "")


def peak_rss_gb() -> float:
    """This process's peak resident memory, in GB (``ru_maxrss`` is in kB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def peak_device_gb(device: str | None) -> float | None:
    """PyTorch's peak allocated memory on a CUDA ``device``, in GB; None elsewhere."""
    if device is None or not device.startswith("cuda"):
        return None
    try:
        import torch

        return torch.cuda.max_memory_allocated(torch.device(device)) / 2**30
    except Exception:
        return None


_BLAS_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_blas_limits: list[Any] = []  # keeps threadpoolctl's limit alive for the whole run


def limit_blas_threads(threads: int | None) -> None:
    """Run BLAS on ``threads`` threads here and in child processes (None: leave as is).

    On a shared 2-core machine, OpenBLAS's second thread can make the kernel products
    several times slower when the other core is busy; a benchmark should say which it ran.
    """
    if not threads:
        return
    for name in _BLAS_ENV:  # child processes read these when they load BLAS
        os.environ[name] = str(threads)
    from threadpoolctl import threadpool_limits

    _blas_limits.append(threadpool_limits(limits=threads, user_api="blas"))


def blas_summary() -> str:
    """The BLAS libraries loaded in this process and their thread counts."""
    try:
        import numpy  # noqa: F401  (loads its BLAS, which threadpool_info lists)
        from threadpoolctl import threadpool_info

        pools = [p for p in threadpool_info() if p.get("user_api") == "blas"]
    except Exception:  # threadpoolctl missing: say so rather than fail the run
        return "BLAS unknown"
    return (
        ", ".join(
            f"{p.get('internal_api')} {p.get('version')} (threads: {p.get('num_threads')})"
            for p in pools
        )
        or "no BLAS found"
    )


def command_line(argv: list[str] | None) -> str:
    """The command that ran, quoted for a shell."""
    return "python " + " ".join(shlex.quote(a) for a in [sys.argv[0], *(argv or sys.argv[1:])])


def run_header(script: str, argv: list[str] | None, tag: str) -> dict[str, Any]:
    """What every JSON run records about itself: script, command, date, machine."""
    return {
        "script": script,
        "command": command_line(argv),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": _report.machine_info(),
        "machine_tag": tag,
        "blas": blas_summary(),
    }


def write_json(path: str | Path, run: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")


def read_json(paths: list[str], script: str) -> list[dict[str, Any]]:
    """The runs saved by ``script`` in ``paths``, in order; refuses another script's file."""
    runs = []
    for path in paths:
        run = json.loads(Path(path).read_text(encoding="utf-8"))
        if run.get("script") != script:
            raise ValueError(f"{path} holds a {run.get('script')!r} run, not {script!r}")
        runs.append(run)
    return runs


def provenance_lines(runs: list[dict[str, Any]]) -> list[str]:
    """One bullet per run: its tag, command, date and full machine description."""
    return [
        f"- **{run['machine_tag']}**: `{run['command']}` on {run['date']}; {run['machine']}; "
        f"{run.get('blas', 'BLAS unknown')}"
        for run in runs
    ]
