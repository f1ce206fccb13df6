"""perceptrons: vanilla, averaged and voted perceptrons, exact and fast."""

from perceptrons.linear import AveragedPerceptron, Perceptron

__version__ = "0.1.0"

__all__ = ["AveragedPerceptron", "Perceptron", "__version__"]
