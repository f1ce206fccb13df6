"""Size bombs: small inputs that declare huge sizes either train or are refused.

Hypothesis draws inputs of a few rows whose declared sizes are huge (the width of a
sparse matrix up to 2**40, thousands of classes, shards), and every estimator must train
on them or refuse with a :class:`~perceptrons._memory.MemoryBudgetError`, never
allocate past the budget. All examples run in one child process that, once its imports
and kernels are warm, caps its own address space a little above the budget
(``RLIMIT_AS``): an allocation the estimates missed is a MemoryError there, and the
property fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from perceptrons._memory import MEMORY_LIMIT_VARIABLE

BUDGET = 96 * 2**20

_CHILD = """
import resource
import warnings

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from perceptrons import *
from perceptrons._memory import MemoryBudgetError
from perceptrons.parallel import mix_threads

BUDGET = {budget}
warnings.simplefilter("ignore")  # two epochs do not converge: nothing to say here
ESTIMATORS = {{
    "Perceptron": lambda: Perceptron(max_epochs=2),
    "AveragedPerceptron": lambda: AveragedPerceptron(max_epochs=2),
    "LogisticRegressionSGD": lambda: LogisticRegressionSGD(max_epochs=2),
    "LogisticRegressionBatch": lambda: LogisticRegressionBatch(max_iter=2),
    "MultinomialNaiveBayes": lambda: MultinomialNaiveBayes(),
    "VotedPerceptron": lambda: VotedPerceptron(kernel="linear", max_epochs=2),
}}


def bomb(n_features, n_classes, seed):
    # Two rows per class, two stored values each (one at the last declared column).
    rng = np.random.default_rng(seed)
    n_rows = 2 * n_classes
    columns = np.column_stack(
        [rng.integers(0, n_features, n_rows), np.full(n_rows, n_features - 1)]
    ).ravel()
    X = sp.csr_matrix(
        (np.ones(2 * n_rows), columns, np.arange(0, 2 * n_rows + 1, 2)),
        shape=(n_rows, n_features),
    )
    return X, np.arange(n_rows) % n_classes


outcomes = {{"trained": 0, "refused": 0}}
widths = st.one_of(st.integers(1, 2**12), st.integers(0, 40).map(lambda e: 2**e))


@settings(max_examples=40, derandomize=True, deadline=None, database=None)
@given(
    name=st.sampled_from(sorted(ESTIMATORS) + ["mix_threads"]),
    n_features=widths,
    n_classes=st.one_of(st.integers(2, 8), st.integers(2, 3000)),
    n_shards=st.integers(1, 8),
    seed=st.integers(0, 2**16),
)
def size_bomb(name, n_features, n_classes, n_shards, seed):
    X, y = bomb(n_features, n_classes, seed)
    try:
        if name == "mix_threads":
            shards = min(n_shards, X.shape[0])
            model = mix_threads(AveragedPerceptron(max_epochs=2), X, y, n_shards=shards)
        else:
            model = ESTIMATORS[name]().fit(X, y)
        assert model.predict(X).shape == y.shape
    except MemoryBudgetError as error:
        assert "would take" in str(error), str(error)
        outcomes["refused"] += 1
    else:
        outcomes["trained"] += 1


# Warm up: imports, every kernel compiled, thread pools started; then the cap.
X, y = bomb(5, 3, 0)
for make in ESTIMATORS.values():
    make().fit(X, y).predict(X)
mix_threads(AveragedPerceptron(max_epochs=2), X, y, n_shards=2).predict(X)
with open("/proc/self/status") as status:
    in_use = next(int(l.split()[1]) * 1024 for l in status if l.startswith("VmSize:"))
cap = in_use + 4 * BUDGET  # the budget's arrays, the data and the run's temporaries
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
size_bomb()
print(outcomes["trained"], outcomes["refused"])
"""


def test_small_inputs_declaring_huge_sizes_train_or_are_refused():
    env = {**os.environ, MEMORY_LIMIT_VARIABLE: str(BUDGET), "OPENBLAS_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_CHILD.format(budget=BUDGET))],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    trained, refused = map(int, result.stdout.split())
    # The property held on both sides of the budget.
    assert trained > 0 and refused > 0, (trained, refused)
