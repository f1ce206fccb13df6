"""The memory a large allocation will take, estimated before it is made.

Every allocation whose size follows from the user's data or options (weights for
``n_features x n_classes``, the averaging state, a block of scores, a Viterbi table, a
chunk of a stream, decompressed data) is checked here first, so that an input of a few
bytes cannot make the library ask the operating system for gigabytes. A refusal is one
:class:`MemoryBudgetError` line that names what would be allocated, its size, the limit and
the option that lowers the cost.

The limit is the environment variable ``PERCEPTRONS_MEMORY_LIMIT`` when it is set (bytes,
or a number with a binary suffix ``K``, ``M``, ``G`` or ``T``: ``512M``, ``8G``), else the
least of the physical memory of the machine, what is left of the process's address-space
limit (``ulimit -v``: the limit less the address space the process has mapped already) and
its control group's memory limit (a container's): figures of the machine, the session and
the process itself, so that whether a run is refused does not depend on what else happens
to be running.
"""

from __future__ import annotations

import math
import os
import re

__all__ = [
    "MEMORY_LIMIT_VARIABLE",
    "MemoryBudgetError",
    "array_bytes",
    "check_allocation",
    "check_training_state",
    "format_bytes",
    "memory_limit",
]

MEMORY_LIMIT_VARIABLE = "PERCEPTRONS_MEMORY_LIMIT"

_SUFFIXES = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_LIMIT = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", re.IGNORECASE)


class MemoryBudgetError(ValueError, MemoryError):
    """An allocation refused before it was made: it would exceed the memory limit.

    A :class:`ValueError` (a problem with the input or the options, reported by the CLI in
    one line) and a :class:`MemoryError` (what a caller who guards allocations catches).
    The limit is ``PERCEPTRONS_MEMORY_LIMIT`` (bytes, or a number with ``K``, ``M``,
    ``G`` or ``T``) when set, else the least of the machine's physical memory, what the
    address-space limit (``ulimit -v``) leaves the process and the control group's
    memory limit.

    Examples
    --------
    >>> import os
    >>> from perceptrons import AveragedPerceptron, MemoryBudgetError
    >>> os.environ["PERCEPTRONS_MEMORY_LIMIT"] = "1M"
    >>> X, y = [[0.0] * 200_000, [1.0] * 200_000], [0, 1]
    >>> try:
    ...     AveragedPerceptron().fit(X, y)
    ... except MemoryBudgetError as error:
    ...     print(str(error)[:60])
    AveragedPerceptron's training state (200,001 weight rows x 1
    >>> del os.environ["PERCEPTRONS_MEMORY_LIMIT"]
    """


def format_bytes(n_bytes: float) -> str:
    """``n_bytes`` for people: ``'512 bytes'``, ``'3.0 MiB'``, ``'16.0 GiB'``."""
    if n_bytes < 1024:
        return f"{int(n_bytes)} bytes"
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        n_bytes /= 1024
        if n_bytes < 1024 or unit == "PiB":
            return f"{n_bytes:,.1f} {unit}"
    raise AssertionError("unreachable")


def array_bytes(*shape: int, itemsize: int = 8) -> int:
    """The bytes of an array of ``shape`` and ``itemsize``, in Python integers (no overflow)."""
    return math.prod(int(n) for n in shape) * int(itemsize)


def _physical_memory() -> int | None:
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # not POSIX (Windows) or not reported
        return None
    return pages * page_size if pages > 0 and page_size > 0 else None


def memory_limit() -> tuple[int | None, str]:
    """The limit in bytes (None: unknown, nothing is refused) and where it comes from."""
    text = os.environ.get(MEMORY_LIMIT_VARIABLE, "").strip()
    if text:
        match = _LIMIT.fullmatch(text)
        if match is None:
            raise ValueError(
                f"{MEMORY_LIMIT_VARIABLE}={text!r} is not a size: give bytes or a number "
                "with K, M, G or T (binary units), such as 8G"
            )
        limit = int(float(match[1]) * _SUFFIXES[match[2].upper()])
        return limit, f"the limit {MEMORY_LIMIT_VARIABLE}={text} sets"
    limits = [
        (limit, source)
        for limit, source in (
            (_physical_memory(), "the machine's physical memory"),
            (_address_space_limit(), "what the address-space limit (ulimit -v) leaves"),
            (_control_group_limit(), "the memory limit of the process's control group"),
        )
        if limit is not None
    ]
    if not limits:
        return None, "no limit is known"
    limit, source = min(limits)
    return limit, f"{source} ({MEMORY_LIMIT_VARIABLE} sets another limit)"


# Address space kept back for what a process maps after an allocation is checked: the
# compiled kernels it loads, thread stacks, the interpreter's own growth. Without it a
# state that just fits leaves LLVM no room, and it aborts the process.
_ADDRESS_SPACE_RESERVE = 128 * 2**20


def _address_space_limit() -> int | None:
    """What the address-space limit leaves: the limit less what the process has mapped
    already (its libraries, the compiler's, what it holds), which no allocation can use,
    and less :data:`_ADDRESS_SPACE_RESERVE`."""
    try:
        import resource
    except ImportError:  # not POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return None
    return max(int(soft) - _mapped_bytes() - _ADDRESS_SPACE_RESERVE, 0)


def _mapped_bytes() -> int:
    """The process's address space in use (Linux's ``VmSize``; 0 where not reported)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


# cgroup v2, then v1; "max" or a huge number (v1's "unlimited") means none.
_CONTROL_GROUP_FILES = (
    "/sys/fs/cgroup/memory.max",
    "/sys/fs/cgroup/memory/memory.limit_in_bytes",
)


def _control_group_limit() -> int | None:
    for path in _CONTROL_GROUP_FILES:
        try:
            with open(path, encoding="ascii") as file:
                text = file.read().strip()
        except (OSError, ValueError):
            continue
        if text.isdigit() and 0 < int(text) < 2**60:
            return int(text)
    return None


def check_allocation(n_bytes: int, what: str, lower: str | None = None) -> None:
    """Refuse, before it is made, an allocation of ``n_bytes`` beyond the memory limit.

    Parameters
    ----------
    n_bytes : int
        What the allocation (or the whole set of allocations of one step) will take.
    what : str
        What is allocated and why, with its dimensions: ``"the weights (2,147,483,646
        features x 2 arrays x 8 bytes)"``.
    lower : str, optional
        What lowers the cost: ``"lower --n-features"``.

    Raises
    ------
    MemoryBudgetError
        ``n_bytes`` is above :func:`memory_limit`.

    Examples
    --------
    >>> from perceptrons._memory import array_bytes, check_allocation
    >>> check_allocation(array_bytes(10, 3), "the weights (10 features x 3 classes)")
    >>> check_allocation(array_bytes(2**40, 8), "the weights", "lower n_features")
    Traceback (most recent call last):
    ...
    perceptrons._memory.MemoryBudgetError: the weights would take 64.0 TiB, ...
    """
    limit, source = memory_limit()
    if limit is None or n_bytes <= limit:
        return
    advice = f"; {lower}" if lower else ""
    raise MemoryBudgetError(
        f"{what} would take {format_bytes(n_bytes)}, more than {format_bytes(limit)}, "
        f"{source}{advice}"
    )


#: What a shard of parameter mixing holds besides its state's arrays (its generator,
#: about 3 KiB, its rows, its trainer, its records: 13 KiB measured with 20,000 shards),
#: counted for each copy when there are several.
SHARD_BYTES = 16 * 2**10

#: What lowers a training state's size, the same advice wherever it is checked.
FEWER_FEATURES = (
    "use fewer features (n_features / --n-features when hashing; smaller feature indices otherwise)"
)


def check_training_state(
    who: str,
    n_rows: int,
    n_columns: int,
    *,
    arrays: int,
    copies: int = 1,
    lower: str | None = None,
    classes: str = "classes",
    statistics: int = 0,
    statistics_what: str = "",
) -> None:
    """Refuse, before any of it is allocated, a training state that will not fit.

    The one estimate of a model's training memory: ``arrays`` float64 arrays of
    ``n_rows x n_columns`` (the weights, the averaging state, the published model...)
    held ``copies`` times at once (parameter mixing's shards, one per job, and the mixed
    state; each shard also holds :data:`SHARD_BYTES` of its own).

    Parameters
    ----------
    who : str
        The estimator, as the message names it.
    n_rows, n_columns : int
        The shape of one array: weight rows (features, the intercept, a tagger's
        transitions) and columns (one per class, one for a binary model).
    arrays : int
        How many such arrays one copy of the state holds, all told.
    copies : int, default=1
        How many copies exist at once.
    lower : str, optional
        What else lowers the cost, added to the advice on features, classes and jobs.
    classes : str, default="classes"
        What the columns are called (a tagger's are its ``"tags"``).
    statistics : int, default=0
        Float64 entries an adaptive rule keeps besides (its covariance, per copy).
    statistics_what : str, default=""
        What those are, for the message (``"a full covariance of 785 x 785 per class"``).

    Raises
    ------
    MemoryBudgetError
        The whole state is above :func:`memory_limit`.
    """
    per_copy = array_bytes(n_rows, n_columns) * arrays + 8 * statistics
    n_bytes = (per_copy + (SHARD_BYTES if copies > 1 else 0)) * copies
    held = f" x {copies:,} copies (one per shard, and the mixed one)" if copies > 1 else ""
    besides = f", plus {statistics_what}" if statistics else ""
    what = (
        f"{who}'s training state ({n_rows:,} weight rows x {n_columns:,} columns "
        f"x {arrays} arrays{besides}{held})"
    )
    remedies = [FEWER_FEATURES, f"fewer {classes}"]
    if copies > 1:
        remedies.append("fewer shards (n_shards, --shards)")
    if lower:
        remedies.append(lower)
    check_allocation(
        n_bytes, what, "to lower it, " + ", ".join(remedies[:-1]) + " or " + remedies[-1]
    )
