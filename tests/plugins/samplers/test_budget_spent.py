"""Every built-in sampler spends the ε it is asked for: its guarantee e^ε̃ satisfies
e^{0.95·ε} ≤ e^ε̃ ≤ e^ε across its schema's whole ε range, checked exactly (rigorous 512-bit
bounds on e^x against the exact rational guarantee). Balcer–Vadhan's power-of-two ratio spent
as little as 0.41·ε, and ln(3/2) for every ε ≥ 1/2 (docs/mechanisms.md#geosample)."""

from __future__ import annotations

import random
from fractions import Fraction
from itertools import pairwise
from typing import Any

import pytest

import dpplug

from support.geometric import SLACK, exact, exp_bounds

#: (name, fixed parameters) of every built-in sampler.
SAMPLERS = {
    "geosample": {"n": 3},
    "fastsample": {"n": 3, "gamma": Fraction(1, 100)},
    "fixedpoint-geometric": {"n": 3},
    "truncated-geometric": {"delta": Fraction(1, 10**6)},
    "discrete-laplace": {},
    "oblivious-laplace": {"n": 3, "gamma": Fraction(1, 100)},
}


def epsilon_range(name: str) -> tuple[Fraction, Fraction]:
    param = next(p for p in dpplug.registry().get(name).cls.schema if p.name == "epsilon")
    return exact(param.low), exact(param.high)


def grid(name: str) -> list[Fraction]:
    """Both ends, 2^k and 3·2^(k−1) in between, and random rationals (fixed seed)."""
    low, high = epsilon_range(name)
    rng = random.Random(16)
    values = {low, high}
    for k in range(-24, 8):
        values.update(e for e in (Fraction(2) ** k, 3 * Fraction(2) ** (k - 1)) if low <= e <= high)
    for _ in range(40):
        values.add(low + (high - low) * Fraction(rng.randint(1, 10**6), 10**6) ** 3)
    return sorted(values)


def exp_epsilon(name: str, epsilon: Fraction) -> Fraction:
    sampler: Any = dpplug.create(name, epsilon=epsilon, **SAMPLERS[name])
    return exact(sampler.guarantee.exp_epsilon)


@pytest.mark.parametrize("name", SAMPLERS)
def test_at_least_95_percent_of_epsilon_across_the_schema(name: str) -> None:
    floor = Fraction(95, 100) if name not in ("geosample", "fastsample") else 1 - SLACK
    achieved = []
    for epsilon in grid(name):
        value = exp_epsilon(name, epsilon)
        assert exp_bounds(floor * epsilon)[1] <= value <= exp_bounds(epsilon)[0], (name, epsilon)
        achieved.append(value)
    # More ε asked, more spent: no two requested ε share one law (BV's ratio gave ε = 1, 5
    # and 64 the same noise).
    assert all(x < y for x, y in pairwise(achieved)), name


@pytest.mark.parametrize("name", ["geosample", "fastsample"])
def test_epsilon_one_five_and_sixty_four_differ(name: str) -> None:
    values = [exp_epsilon(name, Fraction(e)) for e in (1, 5, 64)]
    assert values[0] < values[1] < values[2]
    assert values[2] > exp_bounds(Fraction(63))[1]  # ε̃ > 63 at ε = 64
