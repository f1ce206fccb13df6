"""Parsers of the data files users hand to the CLI and to :func:`read_data`.

:func:`read_data` reads a user's file in one of :data:`FORMATS`, detected by
:func:`detect_format` unless given, into a :class:`LabeledData`.  A line of each:

- ``svmlight`` (LIBSVM): ``-1 3:1 7:0.5`` (or a label alone, ``-1``, a row without
  features as in LIBSVM's w8a);
- ``fasttext``: ``__label__pos a fine film``;
- ``tsv``: ``pos<TAB>a fine film``;
- ``sentiment``: ``books pos 12.txt a fine read`` (domain, label, id, tokens);
- ``csv``: a header ``f1,f2,label`` then rows ``0.5,1,pos``;
- ``idx``: MNIST's binary IDX images (``train-images-idx3-ubyte.gz``);
- ``vw`` (Vowpal Wabbit's text format, https://vowpalwabbit.org):
  ``1 2.0 'id|words great:2 fun |meta length:0.3`` (label, importance, tag, then
  namespaces of ``name[:value]`` features; features become ``namespace^name``);
- ``counts`` (the processed multi-domain sentiment corpus of Blitzer, Dredze and
  Pereira, "Biographies, Bollywood, Boom-boxes and Blenders: Domain Adaptation for
  Sentiment Classification", ACL 2007): ``great:2 not_good:1 was_very:1
  #label#:positive``;
- ``lines``: ``a fine film`` (unlabeled text).

``vw`` and ``counts`` are text formats of weighted features
(:data:`WEIGHTED_TEXT_FORMATS`): each row's document is its ``name:value`` tokens
joined by single spaces, featurized by ``TextFeaturizer(tokenizer="pairs")``; ``vw``
importance weights are returned as ``LabeledData.sample_weight``.

Every problem with the file is a :class:`DataFormatError` whose message is one line,
``'PATH:LINE: what is wrong'``; a missing or unreadable file is an :class:`OSError`
with a one-line message.  Nothing else escapes, whatever the bytes (the fuzz tests
feed random and mutated files), so a command-line tool can print ``str(exc)`` instead
of a traceback.  :func:`read_idx` reads one IDX array (the MNIST format).

The loaders of the public data sets (MNIST, a9a, ...) are in :mod:`perceptrons.datasets`;
fitting a file to a trained model is :mod:`perceptrons.io.prepare`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from perceptrons.io.formats._names import (
    FORMATS,
    MAX_SVMLIGHT_WIDTH,
    TEXT_FORMATS,
    WEIGHTED_TEXT_FORMATS,
)

if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ below
    from perceptrons.io.formats._common import DataFormatError, LabeledData
    from perceptrons.io.formats._detect import detect_format
    from perceptrons.io.formats._idx import read_idx
    from perceptrons.io.formats._read import read_data

    # Not in __all__ nor documented: the compiled svmlight reader's pieces and the labels
    # of vw, with which perceptrons.io.stream reads a file chunk by chunk.
    from perceptrons.io.formats._svmlight import SvmlightBuffers as SvmlightBuffers
    from perceptrons.io.formats._svmlight import parse_svmlight_block as parse_svmlight_block
    from perceptrons.io.formats._svmlight import svmlight_block_data as svmlight_block_data
    from perceptrons.io.formats._weighted import numeric_labels as numeric_labels

__all__ = [
    "FORMATS",
    "MAX_SVMLIGHT_WIDTH",
    "TEXT_FORMATS",
    "WEIGHTED_TEXT_FORMATS",
    "DataFormatError",
    "LabeledData",
    "detect_format",
    "read_data",
    "read_idx",
]

# The constants are defined in _names (which imports nothing: the command's parser reads
# them), and bound again here for their documentation: Sphinx reads a constant's #:
# comment in the module that documents it.

#: The formats :func:`read_data` understands (besides ``"auto"``).
FORMATS = FORMATS

#: The formats of :data:`FORMATS` that hold raw text (one document per line) rather than
#: numeric features: their documents need a featurizer, e.g.
#: :class:`perceptrons.TextFeaturizer`.
TEXT_FORMATS = TEXT_FORMATS

#: The text formats whose documents are ``name:value`` tokens (one canonical document per
#: row, the tokens separated by single spaces): featurize them with
#: ``TextFeaturizer(tokenizer="pairs")``, which adds each value instead of counting 1.
WEIGHTED_TEXT_FORMATS = WEIGHTED_TEXT_FORMATS

#: The largest svmlight feature index :func:`read_data` accepts when ``n_features`` is not
#: given: an index makes a model that many columns wide (8 bytes of weights per column
#: and class), so a stray ``2147483647:1`` would ask for 16 GiB.  Hash such features, or
#: pass ``n_features`` explicitly to accept a wider file.
MAX_SVMLIGHT_WIDTH = MAX_SVMLIGHT_WIDTH

# The readers are imported on first use (perceptrons._lazy): the constants above are all
# the command's parser needs.
_ORIGINS = {
    "DataFormatError": "perceptrons.io.formats._common",
    "LabeledData": "perceptrons.io.formats._common",
    "detect_format": "perceptrons.io.formats._detect",
    "read_idx": "perceptrons.io.formats._idx",
    "read_data": "perceptrons.io.formats._read",
    "SvmlightBuffers": "perceptrons.io.formats._svmlight",
    "parse_svmlight_block": "perceptrons.io.formats._svmlight",
    "svmlight_block_data": "perceptrons.io.formats._svmlight",
    "numeric_labels": "perceptrons.io.formats._weighted",
}

if not TYPE_CHECKING:  # hidden from type checkers, which would then accept any name
    from perceptrons._lazy import lazy_attributes

    __getattr__, __dir__ = lazy_attributes(globals(), _ORIGINS)
    del lazy_attributes
