"""Every public call of every built-in selector returns at the extreme values of its schema, or
the schema refuses the parameters up front with a message that says what to change (no timing
assertions: the test has to finish). Before: the keep tables of ℓ₀ = 64 … 4096 took minutes
(Gaussian: 27 s at ℓ₀ = 4096, ε = 1) and ε = 2^-10 with ℓ₀ = 4096 asked for 10^8 entries;
kept_from scanned every unit count."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import dpplug

from support.selectors import GAUSSIAN, LAPLACE, OPTIMAL, SELECTORS, TGT

LARGEST = {"max_partitions_contributed": 4096, "pre_threshold": 2**30}


def exercise(selector: Any) -> None:
    """select, keep_probability, kept_from, accuracy, decider and output_pmf (or its refusal)."""
    counts = np.array([0, 1, selector.saturation, 2**62], dtype=np.int64)
    selection = selector.select(counts, dpplug.SeededSource(1))
    assert not selection.keep[0] and selection.keep[-1]
    assert selector.keep_probability(2**62) == 1
    assert 0 < selector.kept_from(Fraction(1, 10**12)) <= selector.saturation
    assert selector.accuracy(1e-300).threshold <= selector.saturation
    assert selector.decider(dpplug.SeededSource(2))(2**62) is True
    try:
        assert selector.output_pmf(selector.saturation).total() == 1
    except dpplug.NotSupported as refused:
        assert "exact law" in str(refused)


@pytest.mark.parametrize("name", [OPTIMAL, LAPLACE, GAUSSIAN])
@pytest.mark.parametrize("epsilon", [1, 64])
def test_grid_selectors_at_the_largest_l0(name: str, epsilon: int) -> None:
    exercise(dpplug.create(name, epsilon=epsilon, delta=Fraction(1, 10**5), **LARGEST))


@pytest.mark.parametrize("name", [OPTIMAL, LAPLACE, GAUSSIAN, TGT])
def test_the_smallest_budget_per_partition_is_refused_with_a_message(name: str) -> None:
    with pytest.raises(dpplug.BadParameter, match=r"raise (epsilon|delta)"):
        dpplug.create(name, epsilon=Fraction(1, 2**10), delta=Fraction(1, 2**60), **LARGEST)


@pytest.mark.parametrize("name", SELECTORS)
def test_the_smallest_budget_at_one_partition(name: str) -> None:
    """ε = 2^-10, δ = 2^-60, ℓ₀ = 1: every selector either works or refuses, and says why."""
    try:
        selector = dpplug.create(name, epsilon=Fraction(1, 2**10), delta=Fraction(1, 2**60))
    except dpplug.BadParameter as refused:
        assert name == GAUSSIAN and "optimal-partition-selection" in str(refused)
        return
    exercise(selector)


def test_truncated_geometric_thresholding_at_its_extremes() -> None:
    selector = dpplug.create(TGT, epsilon=64, delta=1 - Fraction(1, 2**60), **LARGEST)
    exercise(selector)
    selector = dpplug.create(TGT, epsilon=Fraction(1, 2**10), delta=Fraction(1, 2**60))
    exercise(selector)
