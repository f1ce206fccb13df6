"""
A chunker trained on CoNLL-2000
===============================

Chunking divides a sentence into non-overlapping phrases: noun phrases (NP), verb
phrases (VP), prepositional phrases (PP), and so on. CoNLL-2000 (E. F. Tjong Kim Sang
and S. Buchholz, *Introduction to the CoNLL-2000 shared task: chunking*, CoNLL 2000)
gives every token of Wall Street Journal text its word, its part-of-speech tag and a
chunk tag. ``B-NP`` begins a noun phrase, ``I-NP`` continues it, and ``O`` is outside
any chunk. The task is scored on whole chunks: a predicted chunk is correct when a gold
chunk has the same type, first token and last token.

:class:`perceptrons.SequenceTagger` is the structured perceptron of M. Collins
(*Discriminative training methods for hidden Markov models: theory and experiments with
perceptron algorithms*, EMNLP 2002). It scores a whole tag sequence by the weights of
its (feature, tag) pairs plus its tag transitions and decodes the best sequence with
Viterbi. After a wrongly tagged sentence it moves the weights towards the gold
sequence and away from the predicted one. It predicts with the average of the weights
after every sentence. Its features come from a
:class:`perceptrons.SequenceFeaturizer` with the ``"chunk"`` preset: the lower-cased
words up to two tokens away and pairs of neighbouring words, the POS tags up to two
tokens away with their pairs and triples, the word paired with its own POS tag and
with its neighbours' tags, and the word's last three letters and shape.

The example trains for five epochs and scores the test set after each one with
:func:`perceptrons.chunking.chunk_scores`, which follows the rules of the CoNLL
``conlleval`` script. It needs the data set in ``conll2000/`` of the shared data
directory (:func:`perceptrons.datasets.shared_data_dir`); without it, it says what is
missing and stops. :doc:`/benchmarks` compares the tagger trained for 10 epochs with
CRFsuite.
"""

import sys

import matplotlib.pyplot as plt
import numpy as np

from perceptrons import SequenceTagger
from perceptrons.chunking import chunk_scores
from perceptrons.datasets import DATA_ENV_VAR, shared_data_dir
from perceptrons.io.sequences import read_conll

data_dir = shared_data_dir()
conll = None if data_dir is None else data_dir / "conll2000"
if conll is None or not all((conll / name).is_file() for name in ("train.txt", "test.txt")):
    print(
        "CoNLL-2000 is missing: this example needs conll2000/train.txt and test.txt "
        "(https://www.clips.uantwerpen.be/conll2000/chunking/, unzipped) in the shared "
        f"data directory; set {DATA_ENV_VAR} to the directory that holds conll2000/."
    )
    sys.exit(0)

# %%
# The data
# --------
# :func:`perceptrons.io.sequences.read_conll` reads a token per line and a blank line
# between sentences. The last column is the tag, and the others (word, POS) are the
# token's input.

train = read_conll(conll / "train.txt")
test = read_conll(conll / "test.txt")
for name, corpus in (("train", train), ("test", test)):
    n_tokens = sum(len(sentence) for sentence in corpus.sentences)
    print(f"{name}: {len(corpus.sentences):,} sentences, {n_tokens:,} tokens")
print("first tokens:", train.sentences[0][:3], "->", train.tags[0][:3], "\n")

# %%
# Training, scored after every epoch
# ----------------------------------
# :meth:`~perceptrons.SequenceTagger.fit_epochs` trains exactly as ``fit`` does, but
# pauses after each epoch with the averaged model current. That is when the test set
# is tagged and scored. The chunk scores count whole chunks. Token accuracy counts
# tags.

EPOCHS = 5
tagger = SequenceTagger(templates="chunk", max_epochs=EPOCHS, random_state=0)
scores = []
print(
    f"{'epoch':>5} {'wrong sentences':>15} {'precision':>9} {'recall':>6} {'F1':>6} {'tokens':>6}"
)
for record in tagger.fit_epochs(train.sentences, train.tags):
    result = chunk_scores(test.tags, tagger.predict(test.sentences))
    scores.append(result)
    overall = result["overall"]
    print(
        f"{record['epoch']:>5} {record['mistakes']:>15,} {overall['precision']:>9.4f} "
        f"{overall['recall']:>6.4f} {overall['f1']:>6.4f} {result['accuracy']:>6.4f}"
    )
featurizer = tagger.featurizer_
print(
    f"\n{featurizer.n_features_out_:,} features from {len(featurizer.templates_)} templates, "
    f"{len(tagger.classes_)} tags"
)

f1 = [result["overall"]["f1"] for result in scores]
assert f1[-1] > 0.90  # measured: about 0.94
assert f1[-1] > f1[0]

# %%
# Scores by chunk type
# --------------------
# The frequent types (NP, PP, VP) score highest. Most rare types, with fewer examples
# to learn from, score lower; a type with a handful of test chunks (the count is in
# parentheses) has a score that a single chunk moves a long way.

final = scores[-1]["by_type"]
types = sorted((t for t in final if final[t]["gold"] > 0), key=lambda t: -final[t]["gold"])
print(f"\n{'type':<6} {'gold chunks':>11} {'precision':>9} {'recall':>6} {'F1':>6}")
for kind in types:
    row = final[kind]
    print(
        f"{kind:<6} {row['gold']:>11,} {row['precision']:>9.4f} {row['recall']:>6.4f} "
        f"{row['f1']:>6.4f}"
    )

# %%
# The figure
# ----------
# On the left, chunk precision, recall and F1 on the test set after each epoch. On the
# right, the F1 of each chunk type after the last epoch, with the number of gold chunks
# of that type in the test set.

fig, (ax_epochs, ax_types) = plt.subplots(
    1, 2, figsize=(11, 4.5), gridspec_kw={"width_ratios": [1, 1.3]}
)
epochs = np.arange(1, EPOCHS + 1)
for key, marker in (("precision", "^"), ("recall", "v"), ("f1", "o")):
    values = [result["overall"][key] for result in scores]
    ax_epochs.plot(epochs, values, marker=marker, label=key if key != "f1" else "F1")
ax_epochs.set(
    xlabel="epoch", ylabel="test score", title="Chunk scores after each epoch", xticks=epochs
)
ax_epochs.legend()

positions = np.arange(len(types))
bars = ax_types.barh(positions, [final[t]["f1"] for t in types])
ax_types.bar_label(bars, fmt="%.3f", padding=3, fontsize=8)
ax_types.set_yticks(positions, [f"{t} ({final[t]['gold']:,})" for t in types])
ax_types.invert_yaxis()
ax_types.set(
    xlabel="test F1",
    xlim=(0, 1.12),
    title=f"F1 by chunk type after epoch {EPOCHS} (gold chunks)",
)
fig.tight_layout()

if __name__ == "__main__" and len(sys.argv) > 1:
    fig.savefig(sys.argv[1])
