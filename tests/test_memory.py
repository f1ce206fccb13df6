"""The memory budget: what an allocation will take, refused before it is made."""

import pytest

from perceptrons._memory import (
    MEMORY_LIMIT_VARIABLE,
    MemoryBudgetError,
    array_bytes,
    check_allocation,
    format_bytes,
    memory_limit,
)


def test_array_bytes_does_not_overflow():
    assert array_bytes(2**40, 2**30) == 2**73
    assert array_bytes(3, 4, itemsize=4) == 48


@pytest.mark.parametrize(
    ("n_bytes", "text"),
    [(0, "0 bytes"), (1023, "1023 bytes"), (1024, "1.0 KiB"), (16 * 2**30, "16.0 GiB")],
)
def test_format_bytes(n_bytes, text):
    assert format_bytes(n_bytes) == text


@pytest.mark.parametrize(
    ("setting", "limit"), [("1000", 1000), ("512M", 512 * 2**20), ("2g", 2 * 2**30), ("1.5K", 1536)]
)
def test_the_environment_sets_the_limit(monkeypatch, setting, limit):
    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, setting)
    assert memory_limit()[0] == limit


def test_a_bad_limit_is_named(monkeypatch):
    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, "lots")
    with pytest.raises(ValueError, match="PERCEPTRONS_MEMORY_LIMIT='lots' is not a size"):
        memory_limit()


def test_the_default_limit_is_what_the_machine_and_session_allow(monkeypatch):
    monkeypatch.delenv(MEMORY_LIMIT_VARIABLE, raising=False)
    limit, source = memory_limit()
    assert limit is None or limit > 2**20
    assert limit is None or any(
        name in source for name in ("physical memory", "ulimit -v", "control group")
    )


def test_refusal_names_the_cost_the_limit_and_the_remedy(monkeypatch):
    monkeypatch.setenv(MEMORY_LIMIT_VARIABLE, "1M")
    check_allocation(2**20, "the weights")  # at the limit: allowed
    with pytest.raises(MemoryBudgetError) as refused:
        check_allocation(2**21, "the weights (x)", "lower --n-features")
    message = str(refused.value)
    assert message == (
        "the weights (x) would take 2.0 MiB, more than 1.0 MiB, the limit "
        "PERCEPTRONS_MEMORY_LIMIT=1M sets; lower --n-features"
    )
    assert isinstance(refused.value, ValueError)
    assert isinstance(refused.value, MemoryError)


def test_the_default_limit_is_the_least_of_memory_ulimit_and_control_group(monkeypatch):
    import perceptrons._memory as memory

    monkeypatch.delenv(MEMORY_LIMIT_VARIABLE, raising=False)
    monkeypatch.setattr(memory, "_physical_memory", lambda: 8 * 2**30)
    monkeypatch.setattr(memory, "_address_space_limit", lambda: 2 * 2**30)
    monkeypatch.setattr(memory, "_control_group_limit", lambda: None)
    assert memory.memory_limit() == (
        2 * 2**30,
        "what the address-space limit (ulimit -v) leaves (PERCEPTRONS_MEMORY_LIMIT sets "
        "another limit)",
    )
    monkeypatch.setattr(memory, "_control_group_limit", lambda: 2**30)
    assert memory.memory_limit()[0] == 2**30
    for name in ("_physical_memory", "_address_space_limit", "_control_group_limit"):
        monkeypatch.setattr(memory, name, lambda: None)
    assert memory.memory_limit() == (None, "no limit is known")
    memory.check_allocation(2**62, "anything")  # nothing known: nothing refused


def test_a_ulimit_lowers_the_default_limit_in_a_child(tmp_path):
    import subprocess
    import sys

    script = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, resource.RLIM_INFINITY))\n"
        "from perceptrons._memory import memory_limit\n"
        "print(memory_limit()[0])\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != MEMORY_LIMIT_VARIABLE}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) <= 3 * 2**30
