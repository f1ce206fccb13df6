"""The template language of :mod:`perceptrons.sequence_features` (described there): the
attributes of a word, the fingerprints of values and templates, the presets, the parsing
of templates and the arrays the kernels read (:mod:`perceptrons._kernels.sequence_features`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

# perceptrons.sequence_features.ATTRIBUTES, documented there.
ATTRIBUTES = (
    "w",
    "lower",
    "prefix1",
    "prefix2",
    "prefix3",
    "prefix4",
    "suffix1",
    "suffix2",
    "suffix3",
    "suffix4",
    "shape",
    "digit",
    "hyphen",
    "upper",
    "title",
)
_ATTRIBUTE_INDEX = {name: i for i, name in enumerate(ATTRIBUTES)}

# perceptrons.sequence_features.MAX_OFFSET, documented there.
MAX_OFFSET = 4

_WORD_FEATURES = (
    "bias",
    "w[0]",
    "lower[0]",
    *(f"prefix{n}[0]" for n in range(1, 5)),
    *(f"suffix{n}[0]" for n in range(1, 5)),
    "shape[0]",
    "digit[0]",
    "hyphen[0]",
    "upper[0]",
    "title[0]",
)

# perceptrons.sequence_features.PRESETS, documented there.
PRESETS: dict[str, tuple[str, ...]] = {
    "pos": (
        *_WORD_FEATURES,
        "lower[-2]",
        "lower[-1]",
        "lower[1]",
        "lower[2]",
        "suffix3[-1]",
        "suffix3[1]",
        "shape[-1]",
        "shape[1]",
        "lower[-1]|lower[0]",
        "lower[0]|lower[1]",
    ),
    "chunk": (
        "bias",
        "lower[-2]",
        "lower[-1]",
        "lower[0]",
        "lower[1]",
        "lower[2]",
        "w[0]",
        "lower[-1]|lower[0]",
        "lower[0]|lower[1]",
        "c1[-2]",
        "c1[-1]",
        "c1[0]",
        "c1[1]",
        "c1[2]",
        "c1[-2]|c1[-1]",
        "c1[-1]|c1[0]",
        "c1[0]|c1[1]",
        "c1[1]|c1[2]",
        "c1[-2]|c1[-1]|c1[0]",
        "c1[-1]|c1[0]|c1[1]",
        "c1[0]|c1[1]|c1[2]",
        "c1[0]|lower[0]",
        "c1[-1]|lower[0]",
        "c1[1]|lower[0]",
        "suffix3[0]",
        "shape[0]",
    ),
}

_ITEM = re.compile(r"([a-z]+[0-9]*)\[(-?[0-9]+)\]\Z")
_EXTRA = re.compile(r"c([1-9][0-9]*)\Z")


# ------------------------------------------------------------------ fingerprints
def _digest(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def _value_fingerprint(value: str) -> int:
    """The 64-bit fingerprint of an attribute's value (a str)."""
    return _digest(b"v:" + value.encode("utf-8", "surrogatepass"))


def _template_fingerprint(template: str) -> int:
    """The 64-bit identity of a template (its canonical text), where its features'
    fingerprints start."""
    return _digest(b"t:" + template.encode("utf-8"))


# The values of positions outside the sentence: no value's bytes start like these.
_BOS = _digest(b"<BOS>")
_EOS = _digest(b"<EOS>")
_EDGE_VALUES = np.array([_BOS, _EOS], dtype=np.uint64)


_ASCII_SHAPES = str.maketrans(
    {
        **{chr(c): "X" for c in range(ord("A"), ord("Z") + 1)},
        **{chr(c): "x" for c in range(ord("a"), ord("z") + 1)},
        **{chr(c): "d" for c in range(ord("0"), ord("9") + 1)},
    }
)
_RUNS = re.compile(r"(.)\1+", re.DOTALL)


def _shape(word: str) -> str:
    if word.isascii():  # the common case, in C
        return _RUNS.sub(r"\1", word.translate(_ASCII_SHAPES))
    out: list[str] = []
    for char in word:
        if char.isupper():
            mapped = "X"
        elif char.islower():
            mapped = "x"
        elif char.isdigit():
            mapped = "d"
        else:
            mapped = char
        if not out or out[-1] != mapped:
            out.append(mapped)
    return "".join(out)


def _attribute_column(attribute: int, words: list[str], shapes: list[str]) -> list[str]:
    """The value of :data:`~perceptrons.sequence_features.ATTRIBUTES` ``[attribute]`` of
    each of ``words``."""
    name = ATTRIBUTES[attribute]
    if name == "w":
        return words
    if name == "lower":
        return [word.lower() for word in words]
    if name.startswith("prefix"):
        n = int(name[-1])
        return [word[:n] for word in words]
    if name.startswith("suffix"):
        n = int(name[-1])
        return [word[-n:] for word in words]  # all of a shorter word
    if name == "shape":
        return shapes
    if name == "digit":
        return ["1" if "d" in shape else "0" for shape in shapes]  # "d" only stands for digits
    if name == "hyphen":
        return ["1" if "-" in word else "0" for word in words]
    if name == "upper":
        return ["1" if word.isupper() else "0" for word in words]
    return ["1" if word[:1].isupper() else "0" for word in words]  # title


_SHAPED = frozenset({_ATTRIBUTE_INDEX["shape"], _ATTRIBUTE_INDEX["digit"]})


def _type_values(words: list[str], used: Sequence[int]) -> np.ndarray:
    """The fingerprints of the attributes ``used`` (indices of
    :data:`~perceptrons.sequence_features.ATTRIBUTES`) of each of ``words``: uint64,
    shape ``(len(words), len(ATTRIBUTES))``, 0 for the attributes not used (no template
    reads them). Python string work, once per distinct string, attribute by attribute:
    only those the templates name, since a first pass over new text spends most of its
    time here."""
    shapes = [_shape(word) for word in words] if _SHAPED.intersection(used) else []
    by_attribute = {a: _attribute_column(a, words, shapes) for a in sorted(set(used))}
    distinct = set().union(*by_attribute.values())
    fingerprints = {value: _value_fingerprint(value) for value in distinct}
    out = np.zeros((len(words), len(ATTRIBUTES)), dtype=np.uint64)
    for a, column in by_attribute.items():
        out[:, a] = np.fromiter(map(fingerprints.__getitem__, column), np.uint64, len(words))
    return out


# ----------------------------------------------------------------------- templates
def _parse_template(template: Any) -> tuple[str, tuple[tuple[int, str, int], ...]]:
    """The canonical text of a template and its items ``(column, attribute, offset)``.

    Raises a ValueError naming the template and what is wrong with it.
    """
    if not isinstance(template, str):
        raise ValueError(f"a template must be a str such as 'w[0]', got {template!r}")
    if template.strip() == "bias":
        return "bias", ()
    items: list[tuple[int, str, int]] = []
    for raw in template.split("|"):
        piece = raw.strip()
        match = _ITEM.match(piece)
        if match is None:
            raise ValueError(
                f"template {template!r}: {piece!r} is not attr[offset] (e.g. 'w[0]', "
                "'lower[-1]'; 'bias' stands alone)"
            )
        attr, offset = match.group(1), int(match.group(2))
        extra = _EXTRA.match(attr)
        if attr == "bias":
            raise ValueError(f"template {template!r}: 'bias' takes no offset and stands alone")
        if extra is None and attr not in _ATTRIBUTE_INDEX:
            raise ValueError(
                f"template {template!r}: unknown attribute {attr!r} (one of "
                f"{', '.join(ATTRIBUTES)}, or cK for the extra column K >= 1)"
            )
        if not -MAX_OFFSET <= offset <= MAX_OFFSET:
            raise ValueError(
                f"template {template!r}: offset {offset} of {attr!r} is outside "
                f"-{MAX_OFFSET}..{MAX_OFFSET}"
            )
        item = (int(extra.group(1)), "w", offset) if extra else (0, attr, offset)
        if item in items:
            raise ValueError(f"template {template!r}: {piece!r} appears twice")
        items.append(item)
    return "|".join(_item_text(*item) for item in items), tuple(items)


def _item_text(column: int, attr: str, offset: int) -> str:
    return f"{f'c{column}' if column else attr}[{offset}]"


def _resolve_templates(templates: Any, n_columns: int) -> tuple[str, ...]:
    """The canonical templates a ``templates`` parameter stands for."""
    if isinstance(templates, str):
        if templates == "auto":
            templates = "chunk" if n_columns >= 2 else "pos"
        if templates not in PRESETS:
            raise ValueError(
                f"SequenceFeaturizer: templates={templates!r} is not a preset ('auto', "
                f"{', '.join(repr(p) for p in PRESETS)}); give a list of templates such as "
                "['bias', 'w[0]', 'lower[-1]|lower[0]']"
            )
        templates = PRESETS[templates]
    if not isinstance(templates, Sequence) or len(templates) == 0:
        raise ValueError(
            "SequenceFeaturizer: templates must be a preset name or a non-empty list of "
            f"templates, got {templates!r}"
        )
    canonical = tuple(_parse_template(t)[0] for t in templates)
    seen: set[str] = set()
    for text, given in zip(canonical, templates, strict=True):
        if text in seen:
            raise ValueError(f"template {given!r}: listed twice (as {text!r})")
        seen.add(text)
    return canonical


def _columns_needed(templates: Sequence[str]) -> int:
    """How many columns a token needs for ``templates`` (1: the word alone)."""
    return 1 + max((column for t in templates for column, _, _ in _parse_template(t)[1]), default=0)


def _template_arrays(templates: Sequence[str]) -> tuple[np.ndarray, ...]:
    """The kernels' ``templates`` tuple (see :mod:`perceptrons._kernels.sequence_features`)."""
    parsed = [_parse_template(t)[1] for t in templates]
    items = [item for group in parsed for item in group]
    return (
        np.array([_template_fingerprint(t) for t in templates], dtype=np.uint64),
        np.concatenate([[0], np.cumsum([len(g) for g in parsed])]).astype(np.int64),
        np.array([c for c, _, _ in items], dtype=np.int64),
        np.array([_ATTRIBUTE_INDEX[a] for _, a, _ in items], dtype=np.int64),
        np.array([o for _, _, o in items], dtype=np.int64),
    )
