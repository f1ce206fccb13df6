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


def test_the_default_limit_is_the_machine_physical_memory(monkeypatch):
    monkeypatch.delenv(MEMORY_LIMIT_VARIABLE, raising=False)
    limit, source = memory_limit()
    assert limit is None or limit > 2**20
    assert "physical memory" in source


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
