"""Shared helpers of the partition-selector tests (not a test module).

Selectors are built once per parameter set and cached for the whole session, so the exact checks
of several files (privacy, curves, accuracy) share the slow constructions (the Gaussian σ
bisection and the long keep tables of small ε).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import cache
from typing import Any

import gmpy2
import numpy as np
import pytest
from gmpy2 import mpfr, mpq

import dpplug

OPTIMAL = "optimal-partition-selection"
TGT = "truncated-geometric-thresholding"
LAPLACE = "laplace-thresholding"
GAUSSIAN = "gaussian-thresholding"
GRID_SELECTORS = (OPTIMAL, LAPLACE, GAUSSIAN)
SELECTORS = (OPTIMAL, TGT, LAPLACE, GAUSSIAN)

#: The parameter grid of the brief, as exact decimals.
EPSILONS = tuple(Fraction(e) for e in ("0.01", "0.1", "0.5", "1", "2", "5", "10"))
DELTAS = tuple(Fraction(d) for d in ("1e-12", "1e-6", "1e-3", "0.1"))
L0S = (1, 2, 3, 10)

#: 2^-63, the resolution of the keep tables.
GRID = mpq(1, 1 << 63)


def in_grid(name: str, epsilon: Fraction, l0: int) -> bool:
    """Whether (name, ε, ℓ₀) is built in the grid tests: everything except the Gaussian at
    ε = 0.01 with ℓ₀ ≥ 3 (its float σ bisection alone takes 1–3 s per instance there)."""
    return not (name == GAUSSIAN and epsilon == Fraction("0.01") and l0 >= 3)


def grid_cases(names: tuple[str, ...] = SELECTORS) -> list[tuple[str, Fraction, Fraction, int]]:
    return [
        (name, eps, delta, l0)
        for name in names
        for eps in EPSILONS
        for delta in DELTAS
        for l0 in L0S
        if in_grid(name, eps, l0)
    ]


def case_id(case: tuple[str, Fraction, Fraction, int]) -> str:
    name, eps, delta, l0 = case
    return f"{name.split('-')[0]}-eps{float(eps):g}-delta{float(delta):g}-l0{l0}"


@cache
def _build(name: str, items: tuple[tuple[str, Any], ...]) -> Any:
    return dpplug.create(name, **dict(items))


def selector(name: str, **params: Any) -> Any:
    """``dpplug.create(name, **params)``, cached (instances are never mutated by the tests)."""
    return _build(name, tuple(sorted(params.items())))


def grid_selector(case: tuple[str, Fraction, Fraction, int]) -> Any:
    name, eps, delta, l0 = case
    return selector(name, epsilon=eps, delta=delta, max_partitions_contributed=l0)


def slow_marked(
    cases: list[tuple[str, Fraction, Fraction, int]], too_slow: Callable[[Any], bool]
) -> list[Any]:
    """*cases* for ``parametrize``, those whose selector is *too_slow* for every run marked
    ``slow_grid`` (tests/conftest.py: skipped unless ``--slow-grid``; CI runs a rotating
    share). The selectors are built here once, at collection, and cached for the tests."""
    return [
        pytest.param(case, marks=pytest.mark.slow_grid) if too_slow(grid_selector(case)) else case
        for case in cases
    ]


def b1_slack(lo: Any, hi: Any, L: Any) -> Any:
    """The largest violation of the four inequalities of B1 for π(n) = lo, π(n+1) = hi without δ:
    max(hi − L·lo, lo − L·hi, (1−lo) − L(1−hi), (1−hi) − L(1−lo)). (ε, δ)-DP iff ≤ δ."""
    return max(hi - L * lo, lo - L * hi, (1 - lo) - L * (1 - hi), (1 - hi) - L * (1 - lo))


def exp_lower_bound(x: Any) -> Any:
    """A rigorous rational lower bound on e^x (MPFR, 512 bits, rounding down throughout)."""
    with gmpy2.context(gmpy2.get_context(), precision=512, round=gmpy2.RoundDown):
        return mpq(gmpy2.exp(mpfr(mpq(x))))


def exp_upper_bound(x: Any) -> Any:
    """A rigorous rational upper bound on e^x (MPFR, 512 bits, rounding up throughout)."""
    with gmpy2.context(gmpy2.get_context(), precision=512, round=gmpy2.RoundUp):
        return mpq(gmpy2.exp(mpfr(mpq(x))))


def floor_grid(x: Any) -> int:
    """⌊2^63·x⌋ for a rational x."""
    x = mpq(x)
    return int((x.numerator << 63) // x.denominator)


class Words(dpplug.RandomSource):
    """A source serving prescribed 63-bit draws u (as the 64-bit words u << 1, whose top 63 bits
    ``bits_array(63, ·)`` keeps)."""

    def __init__(self, draws: list[int]) -> None:
        super().__init__()
        self.buffer = np.array([u << 1 for u in draws], dtype="<u8").tobytes()

    def random_bytes(self, count: int) -> bytes:
        out, self.buffer = self.buffer[:count], self.buffer[count:]
        assert len(out) == count, "more bytes drawn than prescribed"
        return out
