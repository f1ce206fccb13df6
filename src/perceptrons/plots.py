"""Figures: learning curves and confusion matrices, written to PNG files.

The learning curves show training mistakes and development error per epoch: the vanilla
perceptron's error jumps from epoch to epoch, while the voted and averaged perceptrons
(Freund & Schapire, "Large margin classification using the perceptron algorithm",
Machine Learning 37, 1999) stay stable.

matplotlib is an optional dependency (``pip install "perceptrons[plot]"``); it is imported
only when a figure is drawn.  Figures are drawn on their own
:class:`matplotlib.figure.Figure`, never through :mod:`matplotlib.pyplot`, so plotting
works on a machine without a display and leaves the caller's backend and open figures
(in a notebook, say) untouched.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from perceptrons.io.files import write_atomically

__all__ = ["PlottingUnavailable", "confusion_matrix", "learning_curves", "require_matplotlib"]

INSTALL_HINT = 'plots need matplotlib: pip install "perceptrons[plot]"'


class PlottingUnavailable(ImportError):
    """matplotlib is not installed."""


def require_matplotlib() -> None:
    """Check that figures can be drawn, before a long computation whose result they show.

    Raises
    ------
    PlottingUnavailable
        matplotlib is not installed; the message says how to install it.
    """
    _figure_class()


def _figure_class():
    """matplotlib's ``Figure``: a figure of its own, outside pyplot's global state."""
    try:
        import matplotlib  # noqa: F401  (first: a blocked matplotlib must fail here)
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise PlottingUnavailable(INSTALL_HINT) from exc
    return Figure


def _save(figure, path: str | os.PathLike) -> Path:
    """Write the PNG atomically: a failed or interrupted save leaves no partial file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomically(
        path, lambda stream: figure.savefig(stream, format="png", dpi=110, bbox_inches="tight")
    )


def learning_curves(
    curves: Mapping[str, Mapping[str, Sequence[float]]],
    path: str | os.PathLike,
    title: str = "",
) -> Path:
    """Training mistakes and development error per epoch, one line per model.

    Parameters
    ----------
    curves : mapping of str to mapping
        For each model name: ``"mistakes"`` (training mistakes per epoch) or
        ``"log_loss"`` (mean training log-loss per epoch, shown when no model has
        mistakes), and optionally ``"dev_error"`` (error rate on development data after
        each epoch).
    path : path-like
        The PNG to write.
    title : str, default=""
        A title over both panels.

    Returns
    -------
    path : Path
        The file written.
    """
    Figure = _figure_class()
    with_dev = any(curve.get("dev_error") for curve in curves.values())
    figure = Figure(figsize=(11 if with_dev else 6, 4))
    axes = np.atleast_1d(figure.subplots(1, 2 if with_dev else 1))
    # Models without mistakes to count (logistic regression) show their log-loss when
    # no model has mistakes; else they appear in the development panel only.
    key = "mistakes" if any("mistakes" in c for c in curves.values()) else "log_loss"
    training = {name: list(c[key]) for name, c in curves.items() if key in c}
    mistakes = list(training.values())
    # Vanilla, averaged and voted perceptrons make the very same updates: one line, named so.
    shared = key == "mistakes" and len(mistakes) > 1 and all(m == mistakes[0] for m in mistakes)
    if shared:
        epochs = np.arange(1, len(mistakes[0]) + 1)
        axes[0].plot(epochs, mistakes[0], marker="o", color="gray", label="all (same updates)")
    for name, curve in curves.items():
        if not shared and name in training:
            epochs = np.arange(1, len(training[name]) + 1)
            axes[0].plot(epochs, training[name], marker="o", label=name)
        if with_dev and curve.get("dev_error"):
            epochs = np.arange(1, len(curve["dev_error"]) + 1)
            axes[1].plot(epochs, 100 * np.asarray(curve["dev_error"]), marker="o", label=name)
    if key == "mistakes":
        axes[0].set(xlabel="epoch", ylabel="training mistakes", title="Training mistakes")
    else:
        axes[0].set(xlabel="epoch", ylabel="mean log-loss", title="Training log-loss")
    if with_dev:
        axes[1].set(xlabel="epoch", ylabel="error (%)", title="Development error")
    for axis in axes:
        axis.grid(alpha=0.3)
        if axis.get_legend_handles_labels()[0]:
            axis.legend()
        axis.xaxis.get_major_locator().set_params(integer=True)
    if title:
        figure.suptitle(title)
    return _save(figure, path)


def confusion_matrix(
    matrix: np.ndarray,
    labels: Sequence[object] | np.ndarray,
    path: str | os.PathLike,
    title: str = "",
) -> Path:
    """A heat map of a confusion matrix (rows: true class, columns: predicted).

    Parameters
    ----------
    matrix : ndarray of shape (n_classes, n_classes)
        Counts, as from :func:`sklearn.metrics.confusion_matrix`.
    labels : sequence
        The class names, in the matrix's order.
    path : path-like
        The PNG to write.
    title : str, default=""
        The figure's title.

    Returns
    -------
    path : Path
        The file written.
    """
    Figure = _figure_class()
    n = len(labels)
    size = min(4 + 0.45 * n, 16)
    figure = Figure(figsize=(size, size * 0.85))
    axis = figure.subplots()
    image = axis.imshow(matrix, cmap="Blues")
    figure.colorbar(image, ax=axis, fraction=0.046, pad=0.04)
    names = [str(label) for label in labels]
    axis.set_xticks(range(n), names, rotation=60 if n > 6 else 0, ha="right" if n > 6 else "center")
    axis.set_yticks(range(n), names)
    axis.set(xlabel="predicted", ylabel="true", title=title or "Confusion matrix")
    if n <= 25:
        threshold = matrix.max() / 2 if matrix.size else 0
        for i in range(n):
            for j in range(n):
                color = "white" if matrix[i, j] > threshold else "black"
                axis.text(
                    j, i, int(matrix[i, j]), ha="center", va="center", color=color, fontsize=8
                )
    return _save(figure, path)
