"""Inputs that slipped through, or raised untyped errors blamed on the wrong party, now get a
dpplug error saying what to change: masked arrays, a bool as a unit count, a universe nested too
deeply to read, and parameters whose exact searches outgrow a C index."""

from __future__ import annotations

import numpy as np
import pytest

import dpplug
from dpplug import BadData, BadParameter, SeededSource
from dpplug.kinds import PARTITION_SELECTOR, SAMPLER

REGISTRY = dpplug.Registry.load(entry_points=False)
SAMPLERS = [entry.name for entry in REGISTRY.entries(SAMPLER)]
SELECTORS = [entry.name for entry in REGISTRY.entries(PARTITION_SELECTOR)]


def _first_case(name: str) -> dpplug.Mechanism:
    entry = REGISTRY.get(name)
    return entry.create(**entry.cls.conformance_cases[0])


@pytest.mark.parametrize("name", SAMPLERS)
def test_samplers_refuse_masked_arrays(name: str) -> None:
    sampler = _first_case(name)
    masked = np.ma.masked_array([0, 1, 0], mask=[False, True, False])
    with pytest.raises(BadData, match="masked array"):
        sampler.sample(masked, SeededSource(1))  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", SELECTORS)
def test_selectors_refuse_masked_arrays_and_bools(name: str) -> None:
    selector = _first_case(name)
    masked = np.ma.masked_array([5, 9, 2], mask=[False, True, False])
    with pytest.raises(BadData, match="masked array"):
        selector.select(masked, SeededSource(1))  # type: ignore[attr-defined]
    decide = selector.decider(SeededSource(1))  # type: ignore[attr-defined]
    with pytest.raises(BadData):
        decide(True)


def test_a_universe_nested_too_deeply_is_a_bad_parameter() -> None:
    deep = "labels:" + "[" * 100_000 + "]" * 100_000
    with pytest.raises(BadParameter, match="cannot read the universe"):
        dpplug.create("basic-histogram", universe=deep, n=3, epsilon=1)


@pytest.mark.parametrize("epsilon", [1e-15, 1e-40])
def test_a_tiny_epsilon_gives_a_huge_but_exact_error_bound(epsilon: float) -> None:
    releaser = dpplug.create(
        "independent-laplace", n=100, epsilon=epsilon, max_queries=3, sparsity=1
    )
    bound = releaser.accuracy(0.05).per_query.a
    assert bound == 100 * releaser.workload.grid  # clamped answers: at most n·W off
