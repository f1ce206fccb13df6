"""The formats' names and the svmlight width limit, in a module that imports nothing:
the command's parser offers them (``--format``) without loading a reader.

Documented where :mod:`perceptrons.io.formats` (and :mod:`perceptrons.io.sequences`)
export them, by the ``#:`` comments Sphinx reads there; the readers take them from
:mod:`perceptrons.io.formats._common`.
"""

FORMATS = ("svmlight", "fasttext", "tsv", "sentiment", "csv", "idx", "vw", "counts", "lines")
TEXT_FORMATS = ("fasttext", "tsv", "sentiment", "vw", "counts", "lines")
WEIGHTED_TEXT_FORMATS = ("vw", "counts")
MAX_SVMLIGHT_WIDTH = 2**26

# The tagged corpora's (perceptrons.io.sequences).
SEQUENCE_FORMATS = ("conll", "conllu", "tagged")
