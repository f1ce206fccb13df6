"""Reference implementations ("oracles") of the algorithms of the course notes cited below.

Every function here follows, line by line, the pseudocode of one of the lecture notes
listed under References: a loop over the examples, a prediction, and an update when the
prediction is a mistake. They are slow on purpose and exist so that the compiled
estimators can be tested against something that can be read next to the pseudocode it
comes from. One module per family:

``averaged``    the binary perceptron and its averaged variants
``multiclass``  the multiclass perceptron and averaged perceptron
``voted``       the voted perceptron, binary and multiclass, and its prediction rules
``kernel``      the dual (kernel) perceptron and voted perceptron on a Gram matrix
``logistic``    logistic regression by SGD with a Gaussian prior
``margin``      the perceptron with margin and the passive-aggressive updates
``confidence``  the confidence-weighted family (AROW...), full and diagonal covariance
``second_order`` the second-order perceptron and the improved ellipsoid method
``first_order``  ALMA_2 and online gradient descent on the hinge loss, plain or with L1
``adagrad``     AdaGrad (FOBOS and RDA forms) and the normalized adaptive gradient (NAG)
``ftrl``        FTRL-Proximal with per-coordinate rates and L1/L2
``dual_averaging`` regularized dual averaging (RDA, L1-RDA, enhanced L1-RDA)
``feature_selection`` online feature selection to a budget (PET, OFS, SOFS, AdaGrad's)
``sequence``    the structured perceptron and 1-best MIRA for sequence labelling
``budget``      kernel perceptrons on a budget (randomized, Forgetron, Projectron, BPA)

Every public name is importable from here: ``from perceptrons import reference;
reference.voted_perceptron(...)``.

Provenance, document by document
--------------------------------
Course notes on the voted and averaged perceptron
    ``averaged_perceptron_naive`` (the running sum ``w_s <- w_s + w^(i)``),
    ``averaged_perceptron_delta_list`` (the Δw list; multiclass:
    ``multiclass_averaged_perceptron_delta_list``), ``averaged_perceptron_improved``
    (the models after each update with their survival counts), ``averaged_perceptron_fast``
    (auxiliary vector ``w_a`` and example counter ``c``), ``voted_perceptron_naive`` (a
    model after every example), ``voted_perceptron`` (a model after every update, with
    its votes), ``vote_predict(rule="vote")``; with the multiclass update of Kuhlmann's
    slides, ``multiclass_averaged_perceptron_naive`` and
    ``multiclass_voted_perceptron_naive``.
Kuhlmann's slides, "The perceptron learning algorithm"
    ``multiclass_perceptron``, ``multiclass_averaged_perceptron`` (counter from 1), and
    the multiclass update of every multiclass oracle.
Nguyen's averaged-perceptron note
    ``averaged_perceptron_wb`` (Algorithm 1, ``w, b, u, β, c``), and the bias
    ``b <- b + y`` of every binary oracle.
Johansson's lecture on the averaged perceptron (2015)
    ``perceptron`` (vanilla pseudocode and Python code), ``averaged_perceptron_naive``
    (naive pseudocode), ``averaged_perceptron_decreasing_step`` ("better" pseudocode).
Cohen's lecture "The Perceptron" (logistic regression and the perceptron)
    ``voted_perceptron`` (``v_k, m_k`` bookkeeping), ``vote_predict(rule="average")``
    (the deterministic weighted average) and ``rule="random"``,
    ``multiclass_voted_perceptron``, the bookkeeping of ``dual_voted_perceptron``,
    ``logistic_regression_sgd`` (SGD, and the L2 prior as a MAP estimate),
    ``logistic_regression_batch`` (batch gradient ascent on the same MAP objective),
    ``linear_update_rule`` and ``multiclass_linear_update_rule`` (its "many variants";
    the passive-aggressive steps are Crammer et al. 2006; multiclass PA-I is 1-best
    MIRA, Crammer & Singer 2003), ``romma`` and ``multiclass_romma`` (ROMMA and
    aggressive ROMMA, Li & Long 2002; multiclass by the Kesler construction).
None of these documents
    ``epoch_orders`` (the estimators' visiting orders), ``dual_kernel_perceptron`` and
    ``dual_vote_scores`` (the textbook dual form of ``perceptron``).
    ``structured_perceptron`` (Collins 2002, "Discriminative training methods for hidden
    Markov models": the perceptron over whole tag sequences, averaged naively here; its
    ``update="mira"`` is 1-best MIRA, Crammer & Singer 2003, as McDonald, Crammer &
    Pereira 2005 apply it to structures), ``sequence_score`` and ``brute_force_decode``
    (the first-order model's score, and exact decoding by enumeration).
    ``second_order_perceptron`` (Cesa-Bianchi, Conconi & Gentile 2005) and
    ``improved_ellipsoid`` (Yang, Jin & Ye 2009), each from its paper's pseudocode (see
    :mod:`~perceptrons.reference.second_order`).
    ``first_order_online`` (ALMA_2, Gentile 2001, and online gradient descent on the hinge
    loss, Zinkevich 2003, with the L1 forms of Duchi & Singer 2009, FOBOS, and Langford,
    Li & Zhang 2009, truncated gradient: each paper's pseudocode, see its module).
    ``adaptive_gradient`` (Duchi, Hazan & Singer 2011, AdaGrad's FOBOS and RDA forms; Ross,
    Mineiro & Langford 2013, Algorithm 2, NAG: see its module).
    ``ftrl_proximal`` (McMahan et al. 2013, Algorithm 1, on the hinge loss: see its
    module).
    ``regularized_dual_averaging`` (Xiao 2010, "Dual averaging methods for regularized
    stochastic learning and online optimization", Algorithm 1 and its closed forms: see
    its module).
    ``online_feature_selection`` (Wang, Zhao, Hoi & Jin 2014, PET and OFS; Wu, Hoi, Mei
    & Yu 2017, SOFS; AdaGrad's updates truncated alike: see its module).

Conventions
-----------
``X``
    A dense ndarray of shape ``(n_samples, n_features)`` or any ``scipy.sparse`` matrix
    or array, read one row at a time as a dense 1-D float64 copy, so dense and sparse
    inputs go through the same arithmetic and give bit-identical results. All weights
    are float64.
``y``
    Binary functions: labels in ``{+1, -1}`` (int or float). Multiclass functions: int
    class codes ``0 .. n_classes - 1``; ``n_classes`` is passed explicitly.
Sentences
    The sequence oracles take nested lists instead of ``X``: a sentence is a list of
    tokens, a token a list of feature columns (each of value 1), and its tags a list of
    int codes ``0 .. n_tags - 1``; see :mod:`~perceptrons.reference.sequence`.
``orders``
    One 1-D integer index array per epoch: epoch ``e`` visits ``X[orders[e][0]],
    X[orders[e][1]], ...``, a sequence of ``N = sum(len(o) for o in orders)`` examples
    in all; :func:`~perceptrons.reference.epoch_orders` builds ``orders`` the way the estimators do.
Binary mistake
    ``y * (w @ x + b) <= 0``. A score of exactly zero is a mistake, so the very first
    example always triggers an update (with ``w = 0`` a strict ``< 0`` would never
    update at all). Nguyen's note, and Johansson's vanilla pseudocode and Python code,
    write ``<= 0``; Johansson's averaged pseudocode and Cohen's lecture write ``< 0``;
    we use ``<= 0`` everywhere.
Bias
    The course notes on the voted and averaged perceptron and Johansson's lecture have
    no bias. Here the bias is always learned, as the weight of an implicit constant
    feature equal to 1, which is exactly the ``b <- b + y`` of Nguyen's note.
Sample weights
    ``linear_update_rule``, ``multiclass_linear_update_rule`` and
    ``logistic_regression_sgd`` take ``sample_weight`` (scikit-learn's SGD convention):
    example ``i`` of weight ``s_i`` steps ``s_i`` times as far and counts ``s_i`` times
    in the mean, ``Σ s_t w_t / Σ s_t``; weight 0 skips it; None is every weight 1.
Averages, voted models
    How each averaged oracle normalises the running sum of the weights is tabulated in
    :mod:`~perceptrons.reference.averaged` and :mod:`~perceptrons.reference.multiclass`;
    the models and votes of a voted perceptron are defined in
    :mod:`~perceptrons.reference.voted`.

References
----------
Course notes on the voted and averaged perceptron (they name no author or course). They
cover the voted perceptron (naive and improved), four ways of computing the averaged
perceptron, and a table of the space and time each one costs.

M. Kuhlmann, "The perceptron learning algorithm", lecture slides, Department of Computer
and Information Science, Linköping University.

T. H. Nguyen, "Averaged perceptron note", CIS 472/572: Machine Learning, University of
Oregon.

R. Johansson, "Machine Learning for NLP, bonus lecture: the averaged perceptron",
lecture notes, 11 September 2015.

W. Cohen, "The Perceptron", lecture slides, 10-601, Carnegie Mellon University.

K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz and Y. Singer, "Online
passive-aggressive algorithms", Journal of Machine Learning Research 7:551-585, 2006.

K. Crammer and Y. Singer, "Ultraconservative online algorithms for multiclass
problems", Journal of Machine Learning Research 3:951-991, 2003.

Y. Li and P. M. Long, "The relaxed online maximum margin algorithm", Machine Learning
46(1-3):361-387, 2002.

M. Collins, "Discriminative training methods for hidden Markov models: theory and
experiments with perceptron algorithms", Proceedings of EMNLP, 2002.

C. Gentile, "A new approximate maximal margin classification algorithm", Journal of
Machine Learning Research 2:213-242, 2001.

M. Zinkevich, "Online convex programming and generalized infinitesimal gradient ascent",
ICML 2003.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ below
    from perceptrons.reference._common import epoch_orders
    from perceptrons.reference.adagrad import adaptive_gradient
    from perceptrons.reference.averaged import (
        averaged_perceptron_decreasing_step,
        averaged_perceptron_delta_list,
        averaged_perceptron_fast,
        averaged_perceptron_improved,
        averaged_perceptron_naive,
        averaged_perceptron_wb,
        multiclass_averaged_perceptron_delta_list,
        perceptron,
    )
    from perceptrons.reference.budget import (
        budgeted_pa,
        forgetron,
        projectron,
        randomized_budget_perceptron,
    )
    from perceptrons.reference.confidence import confidence_weighted
    from perceptrons.reference.dual_averaging import regularized_dual_averaging
    from perceptrons.reference.feature_selection import online_feature_selection
    from perceptrons.reference.first_order import first_order_online
    from perceptrons.reference.ftrl import ftrl_proximal
    from perceptrons.reference.kernel import (
        dual_kernel_perceptron,
        dual_vote_scores,
        dual_voted_perceptron,
    )
    from perceptrons.reference.logistic import logistic_regression_batch, logistic_regression_sgd
    from perceptrons.reference.margin import (
        linear_update_rule,
        multiclass_linear_update_rule,
        multiclass_romma,
        romma,
    )
    from perceptrons.reference.multiclass import (
        multiclass_averaged_perceptron,
        multiclass_averaged_perceptron_naive,
        multiclass_perceptron,
    )
    from perceptrons.reference.second_order import (
        improved_ellipsoid,
        second_order_perceptron,
    )
    from perceptrons.reference.sequence import (
        brute_force_decode,
        sequence_score,
        structured_perceptron,
    )
    from perceptrons.reference.voted import (
        multiclass_voted_perceptron,
        multiclass_voted_perceptron_naive,
        vote_predict,
        voted_perceptron,
        voted_perceptron_naive,
    )

__all__ = [
    "adaptive_gradient",
    "averaged_perceptron_decreasing_step",
    "averaged_perceptron_delta_list",
    "averaged_perceptron_fast",
    "averaged_perceptron_improved",
    "averaged_perceptron_naive",
    "averaged_perceptron_wb",
    "brute_force_decode",
    "budgeted_pa",
    "confidence_weighted",
    "dual_kernel_perceptron",
    "dual_vote_scores",
    "dual_voted_perceptron",
    "epoch_orders",
    "first_order_online",
    "forgetron",
    "ftrl_proximal",
    "improved_ellipsoid",
    "linear_update_rule",
    "logistic_regression_batch",
    "logistic_regression_sgd",
    "multiclass_averaged_perceptron",
    "multiclass_averaged_perceptron_delta_list",
    "multiclass_averaged_perceptron_naive",
    "multiclass_linear_update_rule",
    "multiclass_perceptron",
    "multiclass_romma",
    "multiclass_voted_perceptron",
    "multiclass_voted_perceptron_naive",
    "online_feature_selection",
    "perceptron",
    "projectron",
    "randomized_budget_perceptron",
    "regularized_dual_averaging",
    "romma",
    "second_order_perceptron",
    "sequence_score",
    "structured_perceptron",
    "vote_predict",
    "voted_perceptron",
    "voted_perceptron_naive",
]

# Imported on first use (perceptrons._lazy): the oracles are for tests and reading.
_ORIGINS = {
    "epoch_orders": "perceptrons.reference._common",
    "averaged_perceptron_decreasing_step": "perceptrons.reference.averaged",
    "averaged_perceptron_delta_list": "perceptrons.reference.averaged",
    "averaged_perceptron_fast": "perceptrons.reference.averaged",
    "averaged_perceptron_improved": "perceptrons.reference.averaged",
    "averaged_perceptron_naive": "perceptrons.reference.averaged",
    "averaged_perceptron_wb": "perceptrons.reference.averaged",
    "multiclass_averaged_perceptron_delta_list": "perceptrons.reference.averaged",
    "perceptron": "perceptrons.reference.averaged",
    "confidence_weighted": "perceptrons.reference.confidence",
    "budgeted_pa": "perceptrons.reference.budget",
    "forgetron": "perceptrons.reference.budget",
    "projectron": "perceptrons.reference.budget",
    "randomized_budget_perceptron": "perceptrons.reference.budget",
    "first_order_online": "perceptrons.reference.first_order",
    "adaptive_gradient": "perceptrons.reference.adagrad",
    "ftrl_proximal": "perceptrons.reference.ftrl",
    "regularized_dual_averaging": "perceptrons.reference.dual_averaging",
    "online_feature_selection": "perceptrons.reference.feature_selection",
    "dual_kernel_perceptron": "perceptrons.reference.kernel",
    "dual_vote_scores": "perceptrons.reference.kernel",
    "dual_voted_perceptron": "perceptrons.reference.kernel",
    "logistic_regression_batch": "perceptrons.reference.logistic",
    "logistic_regression_sgd": "perceptrons.reference.logistic",
    "linear_update_rule": "perceptrons.reference.margin",
    "multiclass_linear_update_rule": "perceptrons.reference.margin",
    "multiclass_romma": "perceptrons.reference.margin",
    "romma": "perceptrons.reference.margin",
    "multiclass_averaged_perceptron": "perceptrons.reference.multiclass",
    "multiclass_averaged_perceptron_naive": "perceptrons.reference.multiclass",
    "multiclass_perceptron": "perceptrons.reference.multiclass",
    "improved_ellipsoid": "perceptrons.reference.second_order",
    "second_order_perceptron": "perceptrons.reference.second_order",
    "brute_force_decode": "perceptrons.reference.sequence",
    "sequence_score": "perceptrons.reference.sequence",
    "structured_perceptron": "perceptrons.reference.sequence",
    "multiclass_voted_perceptron": "perceptrons.reference.voted",
    "multiclass_voted_perceptron_naive": "perceptrons.reference.voted",
    "vote_predict": "perceptrons.reference.voted",
    "voted_perceptron": "perceptrons.reference.voted",
    "voted_perceptron_naive": "perceptrons.reference.voted",
}

if not TYPE_CHECKING:  # hidden from type checkers, which would then accept any name
    from perceptrons._lazy import lazy_attributes

    __getattr__, __dir__ = lazy_attributes(globals(), _ORIGINS)
    del lazy_attributes
