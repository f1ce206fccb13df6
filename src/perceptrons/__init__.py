"""perceptrons: vanilla, averaged and voted perceptrons, exact and fast."""

from perceptrons.linear import AveragedPerceptron, Perceptron
from perceptrons.voted import VotedPerceptron

__version__ = "0.1.0"

__all__ = ["AveragedPerceptron", "Perceptron", "VotedPerceptron", "__version__"]
