"""Every public call of every built-in sampler returns at the extreme values of its schema
(bounded time and memory: no timing assertions, the test simply has to finish), or is refused
with a dpplug error that says what is supported. Before: discrete-laplace at ε = 2^-20 drew 2^21
coins per count (20 s) and accuracy(1e-300) never returned; geosample at n = 10^6 took 80 s per
sample and cached up to 2^14 integers of 2.6 MB; fastsample's construction took 5 s at its
extremes; exact laws over [0, 2^40] were attempted."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import dpplug

TINY = Fraction(1, 2**128)
CASES = [
    ("geosample", {"n": 10**6, "epsilon": Fraction(1, 2**20)}),
    ("geosample", {"n": 10**6, "epsilon": 64}),
    ("fastsample", {"n": 2**40, "epsilon": Fraction(1, 2**10), "gamma": TINY}),
    ("fastsample", {"n": 2**40, "epsilon": 64, "gamma": Fraction(1, 2)}),
    ("fixedpoint-geometric", {"n": 2**40, "epsilon": Fraction(1, 2**10)}),
    ("fixedpoint-geometric", {"n": 2**40, "epsilon": 32}),
    ("truncated-geometric", {"epsilon": Fraction(1, 2**10), "delta": TINY}),
    ("truncated-geometric", {"epsilon": 64, "delta": 1 - Fraction(1, 2**60), "n": 2**62}),
    ("discrete-laplace", {"epsilon": Fraction(1, 2**20)}),
    ("discrete-laplace", {"epsilon": 16}),
]


@pytest.mark.parametrize(
    ("name", "params"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)]
)
def test_every_call_returns_at_the_extremes(name: str, params: dict[str, Any]) -> None:
    sampler: Any = dpplug.create(name, **params)
    low, high = sampler.count_bounds
    top = min(high, 2**40)
    counts = np.array([max(low, 0), top // 2, top], dtype=np.int64)
    out = sampler.sample(counts, dpplug.SeededSource(1))
    assert out.shape == (3,) and (sampler.n is None or 0 <= out.min() <= out.max() <= sampler.n)
    for beta in (Fraction(1, 2), 1e-300):
        bound = sampler.accuracy(beta).per_query
        assert bound.a >= 0 and (sampler.n is None or bound.a <= sampler.n)
    assert sampler.noise_std(top // 2) > 0
    if sampler.d is not None:
        assert 0 <= sampler(top // 2, sampler.d) <= top
        assert sampler(top // 2, 1) <= sampler(top // 2, sampler.d)
        assert 0 <= sampler.scaled_cdf(top // 2, top // 2) <= sampler.d
    try:  # small laws are built, large ones refused before any work
        assert sampler.pmf(top // 2).total() == 1
    except dpplug.NotSupported as refused:
        assert "exact law" in str(refused) and sampler.name != "discrete-laplace"


def test_discrete_laplace_at_its_smallest_epsilon_has_its_law() -> None:
    """10^4 draws at ε = 2^-20 (a few vectorised rounds each): their spread is the law's, √2/(1−α)
    for the standard deviation, within 5 % (a 7-σ band for 10^4 draws: false alarm < 1e-9)."""
    sampler: Any = dpplug.create("discrete-laplace", epsilon=Fraction(1, 2**20))
    draws = sampler.sample(np.zeros(10**4, dtype=np.int64), dpplug.SeededSource(2))
    expected = sampler.noise_std(0)
    assert abs(float(np.std(draws)) / expected - 1) < 0.05
