"""Parameter mixing's rules and defaults, in a module that imports nothing: the command's
parser offers them (``--mixing``, ``--local-epochs``, ``--connect-timeout``) without
loading the algorithm, scikit-learn, Dask or the cluster's plumbing."""

# Documented where perceptrons.parallel exports it (Sphinx reads the #: comment there).
MIXINGS = ("auto", "uniform", "mistakes", "sum")

#: The defaults of :class:`~perceptrons.parallel.ParameterMixing` and
#: :func:`~perceptrons.parallel.mix_threads` (``mixing``, ``local_epochs``).
DEFAULT_MIXING = "auto"
DEFAULT_LOCAL_EPOCHS = 1

#: Seconds a scheduler has to answer a connection, by default (``connect_timeout`` of
#: ParameterMixing, ``--connect-timeout`` of the command line).
CONNECT_TIMEOUT = 10.0
