"""The voted perceptron of Freund & Schapire (1999), with kernels.

The model is the perceptron's *update sequence* (the improved voted perceptron of Daumé's notes):
which training examples were mistakes, with their sign or classes, and how many examples
each intermediate model survived (its votes). Weight vectors are never stored: the
examples that caused updates (the support vectors) are, once each, and every intermediate
model's score on a new point is a prefix sum of kernel values between that point and the
support vectors (:mod:`perceptrons._kernels.voted`).

Training is the online dual perceptron, exact, computed one block of examples at a time:
one BLAS kernel product scores a whole block under the model as it stood when the block
began; a compiled loop then walks the block in order, adding the updates made inside it.
When several epochs run, the kernel columns of support vectors over the training set are
cached (within ``cache_size`` megabytes), so later epochs gather instead of recompute.
The n×n Gram matrix of the training data is never formed (unless passed precomputed).

The estimator is this module's :class:`VotedPerceptron`; its training lives in
:mod:`perceptrons.kernel._training` (the epochs run by the one epoch loop,
:func:`perceptrons._engine.run_epochs`), its stores in :mod:`perceptrons.kernel._store`
and its model files' state in :mod:`perceptrons.kernel._voted_codec`.

The estimator here is the learner core of :mod:`perceptrons.kernel.voted` under
scikit-learn's face (:mod:`perceptrons._estimator`).
"""

from __future__ import annotations

from typing import Any

from perceptrons._estimator import ClassifierFace
from perceptrons.kernel import voted as core

__all__ = ["VotedPerceptron"]


class VotedPerceptron(ClassifierFace, core.VotedPerceptron):
    """The voted perceptron (Freund & Schapire 1999), with kernels, binary and multiclass.

    Trains the perceptron online (in the dual form, so any kernel works) and keeps every
    intermediate model, each with its votes: the number of training examples it survived.
    Prediction combines them by ``prediction``.

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "precomputed"} or callable, default="linear"
        ``"poly"`` is ``(gamma·<x, x'> + coef0) ** degree``, ``"rbf"`` is
        ``exp(-gamma·||x - x'||²)``. A callable takes two matrices and returns their kernel
        matrix. With ``"precomputed"``, ``fit`` takes the Gram matrix of the training data
        and prediction the kernel between the new points (rows) and the training points.
    degree : int, default=3
        Degree of the polynomial kernel.
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel coefficient of ``"poly"`` and ``"rbf"``: ``"scale"`` is
        ``1 / (n_features · X.var())`` of the first training data, ``"auto"`` is
        ``1 / n_features``.
    coef0 : float, default=1.0
        Constant term of the polynomial kernel (Freund & Schapire use ``(1 + <x, x'>)^d``).
    prediction : {"vote", "average", "last", "random"}, default="vote"
        ``"vote"``: every intermediate model votes with its survival count (binary: for
        the sign of its score; multiclass: for its own argmax class, ties to the lowest
        class) and the most voted class wins (ties to the lowest class; a binary tie
        predicts ``classes_[0]``). ``"average"``: the survival-weighted mean of the
        models' scores, which is the averaged perceptron. ``"last"``: the final model,
        which is the vanilla perceptron. ``"random"``: for each point, one model drawn
        with probability proportional to its votes (Freund & Schapire 1999), reproducible from
        ``random_state``. With ``multiclass="ovr"`` each class's binary sequence is
        reduced by the rule and the class with the highest value wins.
    multiclass : {"native", "ovr"}, default="native"
        ``"native"``: one sequence of multiclass updates (on a mistake, ``+x`` to the gold
        class and ``-x`` to the predicted one). ``"ovr"``: one binary voted perceptron per
        class, trained in the same pass and sharing every kernel evaluation, as Freund &
        Schapire ran MNIST.
    max_epochs : int, default=10
        Passes over the training data in ``fit``.
    shuffle : bool, default=True
        A fresh random order every epoch, drawn from ``random_state``.
    fit_intercept : bool, default=True
        Learn a bias, as the weight of a constant feature of value 1.
    delta : float, default=0.0
        The Δ trick (Freund & Schapire 1999): train as if each training example had its own extra
        feature of value ``delta``; it never enters prediction. Each ``partial_fit`` call
        treats its batch as new examples.
    batch_size : int or "auto", default="auto"
        Examples scored together by one kernel product during training. Each block
        costs a product against the support set (``batch_size × n_support`` kernel
        values) and one within the block (``batch_size²``): ``"auto"`` sizes each block
        by the support set as it stands, an eighth of it, between 128 (512 on a
        ``device``) and 1024 examples. Any value gives the same model, up to the
        rounding of the kernel sums (which can only matter for an example whose score
        is an exact tie: where the arithmetic is exact, as on small integer features,
        the models are identical).
    cache_size : float, default=256
        Megabytes for caching the kernel columns of support vectors over the training
        set between epochs of ``fit``; 0 disables the cache.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling and the ``"random"`` prediction rule.
    verbose : int, default=0
        Print one line per epoch.
    class_weight : dict, "balanced" or None, default=None
        Weight of each class, ``{label: weight}`` (labels not named weigh 1), as in
        scikit-learn: example ``i`` weighs ``sample_weight[i] * class_weight[y_i]``; an
        update on it steps ``s_i`` times as far (its dual coefficient and the intercept
        move by ``±s_i``), and it counts ``s_i`` times in the votes (a model's votes are
        the total weight of the examples it survived). ``"balanced"`` weighs class ``c``
        by ``n_samples / (n_classes * n_c)``, computed on the labels given to ``fit``
        (``partial_fit`` refuses it).
    device : str, torch.device, cupy.cuda.Device or None, default=None
        Where the kernel products of the built-in kernels run, through the array API:
        None computes them with NumPy (BLAS), unless ``X`` is another library's array
        (a PyTorch tensor, a CuPy array), whose namespace and device are used; a string
        or ``torch.device`` names a PyTorch device (``"cuda"``, ``"cuda:1"``,
        ``"cpu"``, ``"mps"``); a ``cupy.cuda.Device`` uses CuPy. The sequential pass
        inside each block stays on the host, compiled, and the model (support vectors,
        coefficients) is kept there: a model trained on a GPU predicts anywhere. Same
        mistakes on every backend where the arithmetic is exact (see ``batch_size``).
        Dense input only (the array API has no sparse arrays).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.
    support_vectors_ : ndarray or sparse matrix of shape (n_support, n_features)
        The training examples that caused updates, once each. With
        ``kernel="precomputed"``, ``support_`` holds their training indices instead.
    n_updates_ : int
        Length of the update sequence (for ``"ovr"``, over every class).
    intercept_ : ndarray of shape (n_columns,)
        The final model's biases (one column for binary problems).
    history_ : list of dict
        One record per epoch: ``epoch``, ``mistakes`` (updates made), ``examples``,
        ``support_vectors``. At most the 10,000 most recent records are kept
        (``epoch`` still counts from the first).
    n_features_in_ : int
        Number of features seen in ``fit``.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from perceptrons import VotedPerceptron
    >>> X, y = load_digits(return_X_y=True)
    >>> vp = VotedPerceptron(kernel="poly", degree=2, max_epochs=3, random_state=0)
    >>> vp = vp.fit(X[:1000], y[:1000])
    >>> round(vp.score(X[1000:], y[1000:]), 3)  # every intermediate model votes
    0.913
    >>> round(vp.set_params(prediction="last").score(X[1000:], y[1000:]), 3)
    0.867
    """

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
