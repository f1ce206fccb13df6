"""The command line's classification scores (perceptrons._metrics, NumPy alone) equal
scikit-learn's, which ``perceptrons evaluate`` used to import."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from sklearn.metrics import accuracy_score, confusion_matrix, precision_recall_fscore_support

from perceptrons._metrics import classification_scores
from perceptrons._metrics import confusion_matrix as our_confusion_matrix


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 5), min_size=1, max_size=60),
    st.lists(st.integers(0, 5), min_size=1, max_size=60),
    st.lists(st.integers(0, 5), min_size=2, max_size=6, unique=True),
)
def test_the_scores_are_scikit_learns(true, predicted, classes):
    n = min(len(true), len(predicted))
    y_true, y_pred = np.array(true[:n]), np.array(predicted[:n])
    classes = np.array(sorted(classes))
    scores = classification_scores(y_true, y_pred, classes)
    precision, recall, f1, support = precision_recall_fscore_support(
        y_true, y_pred, labels=classes, zero_division=0
    )
    np.testing.assert_allclose(scores.precision, precision, rtol=0, atol=1e-12)
    np.testing.assert_allclose(scores.recall, recall, rtol=0, atol=1e-12)
    np.testing.assert_allclose(scores.f1, f1, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(scores.support, support)
    if np.isin(y_true, classes).any():  # else scikit-learn refuses to count
        expected = confusion_matrix(y_true, y_pred, labels=classes)
        np.testing.assert_array_equal(scores.matrix, expected)
    else:
        assert not scores.matrix.any()
    assert scores.accuracy == accuracy_score(y_true, y_pred)


def test_string_labels_and_labels_outside_the_classes():
    classes = np.array(["neg", "pos"])
    y_true = np.array(["pos", "neg", "other", "pos"])
    y_pred = np.array(["pos", "pos", "neg", "neg"])
    matrix = our_confusion_matrix(y_true, y_pred, classes)
    np.testing.assert_array_equal(matrix, [[0, 1], [1, 1]])
    np.testing.assert_array_equal(matrix, confusion_matrix(y_true, y_pred, labels=classes))
    assert classification_scores(y_true, y_pred, classes).accuracy == 0.25
    # Labels of another type than the classes are none of them.
    assert our_confusion_matrix(np.array([1, 2]), np.array([1, 2]), classes).sum() == 0


@given(
    pairs=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=60),
    cuts=st.lists(st.integers(0, 60), max_size=4),
)
def test_scores_of_summed_confusion_counts_are_the_whole_sets(pairs, cuts):
    """``evaluate`` sums the confusion counts of a file's chunks: the scores of the sum
    are classification_scores of all the labels at once, bit for bit."""
    from perceptrons._metrics import scores_of_confusion

    classes = np.array([-1, 0, 2, 7])
    y_true = classes[[t for t, _ in pairs]]
    y_pred = classes[[p for _, p in pairs]]
    matrix = np.zeros((4, 4), dtype=np.int64)
    for part in np.split(np.arange(len(pairs)), sorted(c for c in cuts if c <= len(pairs))):
        matrix += our_confusion_matrix(y_true[part], y_pred[part], classes)
    whole, summed = classification_scores(y_true, y_pred, classes), scores_of_confusion(matrix)
    assert whole.accuracy == summed.accuracy
    for name in ("precision", "recall", "f1", "support", "matrix"):
        assert_array_equal(getattr(whole, name), getattr(summed, name))
        assert getattr(whole, name).dtype == getattr(summed, name).dtype
