"""Limits the command's parser states in its help, in a module that imports nothing (the
parser, and so ``perceptrons --help``, loads no featurizer or scikit-learn)."""

# Documented where perceptrons.features exports it.
MAX_N_FEATURES = 2**31 - 2
