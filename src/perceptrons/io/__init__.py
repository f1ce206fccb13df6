"""Reading data files, streaming them, and the model files.

The names live in the modules: :mod:`perceptrons.io.formats` (readers),
:mod:`perceptrons.io.sequences` (tagged corpora), :mod:`perceptrons.io.stream` (training
from files larger than memory), :mod:`perceptrons.io.prepare` (data for a model),
:mod:`perceptrons.io.persist` (model files) and :mod:`perceptrons.io.files` (atomic writes).
"""

__all__: list[str] = []
