"""Top-k order statistics of m iid draws (Balcer & Vadhan, full version Prop. 6.6 / Alg. 6.7 and
Alg. 6.20; docs/mechanisms.md#order-statistics), by exact enumeration of the programs' laws
(program.law).

- The corrected binomial OrdSample equals brute-force enumeration of the m draws.
- The ITCS OrdSample (ITCS version Alg. 6), whose law is computed here independently, does not: it
  is only right for continuous laws. The fair-bits counterexample stays as a regression test.
- The approximate, certified jump method is within total_variation_bound of the exact law;
  the bound is not vacuous for the larger precisions, and the distance really shrinks with
  the precision (so the comparison can see a difference).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import partial
from itertools import product
from typing import Any

import pytest
from gmpy2 import mpq

import dpplug
from dpplug import program
from dpplug.plugins.histograms.order_statistics import (
    approximate_order_statistics,
    binomial_pmf,
    bits_for,
    exact_order_statistics,
    total_variation_bound,
)

from support.histograms import total_variation

Cdf = Callable[[int], int]


def table_cdf(values: list[int]) -> Cdf:
    """F(v) = values[v] for 0 ≤ v ≤ top, F(−1) = 0."""
    return lambda v: 0 if v < 0 else values[v]


def sampler_cdf(name: str, **params: object) -> tuple[Cdf, int]:
    """The scaled CDF of M(0, U) and the top value n of a registered sampler."""
    sampler = dpplug.create(name, **params)
    return (lambda v: 0 if v < 0 else int(sampler.scaled_cdf(v, 0))), sampler.n


def brute_force(cdf: Cdf, top: int, m: int, k: int) -> dict[tuple[int, ...], Any]:
    """The top k of m iid draws, by enumerating all (top+1)^m outcomes."""
    d = cdf(top)
    pmf = {v: mpq(cdf(v) - cdf(v - 1), d) for v in range(top + 1)}
    law: dict[tuple[int, ...], Any] = {}
    for draws in product(range(top + 1), repeat=m):
        p = mpq(1)
        for v in draws:
            p *= pmf[v]
        if p:
            key = tuple(sorted(draws, reverse=True)[:k])
            law[key] = law.get(key, mpq(0)) + p
    return law


def itcs_law(cdf: Cdf, top: int, m: int, k: int) -> dict[tuple[int, ...], Any]:
    """The law of ITCS OrdSample (ITCS version Alg. 6, docs/mechanisms.md#order-statistics): v_{−1}
    = top; for i = 0 … k−1 draw u_i ← U(F(v_{i−1})^{m−i}) and take the smallest z ≤ v_{i−1} with
    F(z)^{m−i} ≥ u_i, so Pr[v_i = z] = (F(z)^{m−i} − F(z−1)^{m−i}) / F(v_{i−1})^{m−i}."""
    law: dict[tuple[int, ...], Any] = {}

    def walk(prefix: tuple[int, ...], previous: int, p: Any) -> None:
        i = len(prefix)
        if i == k:
            law[prefix] = law.get(prefix, mpq(0)) + p
            return
        power = m - i
        total = cdf(previous) ** power
        for z in range(previous + 1):
            step = cdf(z) ** power - cdf(z - 1) ** power
            if step:
                walk((*prefix, z), z, p * mpq(step, total))

    walk((), top, mpq(1))
    return law


def exact_law(cdf: Cdf, top: int, m: int, k: int) -> dict[tuple[int, ...], Any]:
    return program.law(partial(exact_order_statistics, cdf, top, m, k))


FAIR_BIT = table_cdf([1, 2])


def test_fair_bits_counterexample() -> None:
    """m = 2 fair bits: the truth is Pr[(1,0)] = 1/2, Pr[(1,1)] = 1/4; ITCS gives 3/8, 3/8."""
    truth = {(1, 1): mpq(1, 4), (1, 0): mpq(1, 2), (0, 0): mpq(1, 4)}
    assert brute_force(FAIR_BIT, 1, 2, 2) == truth
    assert exact_law(FAIR_BIT, 1, 2, 2) == truth
    assert itcs_law(FAIR_BIT, 1, 2, 2) == {(1, 1): mpq(3, 8), (1, 0): mpq(3, 8), (0, 0): mpq(1, 4)}


CASES = {
    "fair bits m=5 k=3": (FAIR_BIT, 1, 5, 3),
    "skewed, zero mass at 0": (table_cdf([0, 1, 3]), 2, 4, 3),
    "zero mass in the middle": (table_cdf([2, 2, 7]), 2, 4, 3),
    "point mass at top": (table_cdf([0, 0, 5]), 2, 3, 3),
    "geosample n=2 m=3": (*sampler_cdf("geosample", n=2, epsilon=Fraction(1, 2)), 3, 3),
    "geosample n=2 m=6": (*sampler_cdf("geosample", n=2, epsilon=Fraction(1, 2)), 6, 3),
    "fastsample n=3 m=5": (
        *sampler_cdf("fastsample", n=3, epsilon=Fraction(1, 2), gamma=Fraction(1, 10)),
        5,
        4,
    ),
    "fixedpoint n=3 m=6 k=2": (*sampler_cdf("fixedpoint-geometric", n=3, epsilon=1), 6, 2),
    "k = m": (*sampler_cdf("geosample", n=3, epsilon=1), 4, 4),
}


@pytest.mark.parametrize(("cdf", "top", "m", "k"), CASES.values(), ids=CASES.keys())
def test_corrected_ordsample_equals_brute_force(cdf: Cdf, top: int, m: int, k: int) -> None:
    truth = brute_force(cdf, top, m, k)
    assert sum(truth.values()) == 1
    assert exact_law(cdf, top, m, k) == truth


@pytest.mark.parametrize(("cdf", "top", "m", "k"), CASES.values(), ids=CASES.keys())
def test_itcs_ordsample_is_wrong_for_discrete_laws(cdf: Cdf, top: int, m: int, k: int) -> None:
    """Off whenever two draws can tie below the top: here, every case but the point mass."""
    itcs, truth = itcs_law(cdf, top, m, k), brute_force(cdf, top, m, k)
    assert sum(itcs.values()) == 1
    if cdf(top - 1) == 0:  # a point mass: nothing to get wrong
        assert itcs == truth
    else:
        assert total_variation(itcs, truth) > mpq(1, 100)


def test_binomial_pmf_is_exact() -> None:
    law = binomial_pmf(5, mpq(1, 3))
    assert sum(law.values()) == 1 and law[0] == mpq(32, 243) and law[5] == mpq(1, 243)


# --- the approximate, certified method ---------------------------------------------------------

APPROXIMATE = {
    "geosample n=2 m=3": (*sampler_cdf("geosample", n=2, epsilon=Fraction(1, 2)), 3, 3, 10),
    "geosample n=2 m=20": (*sampler_cdf("geosample", n=2, epsilon=Fraction(1, 2)), 20, 3, 10),
    "fastsample n=3 m=6": (
        *sampler_cdf("fastsample", n=3, epsilon=Fraction(1, 2), gamma=Fraction(1, 10)),
        6,
        4,
        11,
    ),
    "fixedpoint n=3 m=7": (*sampler_cdf("fixedpoint-geometric", n=3, epsilon=1), 7, 4, 10),
    "zero mass at 0": (table_cdf([0, 1, 3]), 2, 5, 3, 10),
    "fair bits": (FAIR_BIT, 1, 4, 2, 10),
}


def approximate_law(cdf: Cdf, top: int, m: int, k: int, bits: int) -> dict[Any, Any]:
    return program.law(partial(approximate_order_statistics, cdf, top, m, k, bits))


@pytest.mark.parametrize(
    ("cdf", "top", "m", "k", "max_bits"), APPROXIMATE.values(), ids=APPROXIMATE.keys()
)
def test_approximate_is_within_the_bound_and_improves_with_precision(
    cdf: Cdf, top: int, m: int, k: int, max_bits: int
) -> None:
    truth = exact_law(cdf, top, m, k)
    distances = {}
    for bits in range(4, max_bits + 1):
        approximate = approximate_law(cdf, top, m, k, bits)
        assert sum(approximate.values()) == 1
        assert set(approximate) <= set(truth) | {tuple([0] * k)}
        distances[bits] = total_variation(approximate, truth)
        assert distances[bits] <= total_variation_bound(top, k, bits), (bits, distances)
    assert total_variation_bound(top, k, max_bits) < mpq(1, 10)  # not vacuous
    # Power: the comparison sees the approximation, and it shrinks with the precision.
    assert distances[4] > 0
    assert distances[max_bits] * 8 < distances[4]


def test_total_variation_bound_and_bits_for() -> None:
    assert total_variation_bound(2, 3, 10) == mpq(2 * 3 * 6, 1024)
    for top, k, delta_bits in [(2, 3, 4), (10, 11, 30), (200, 201, 843), (1, 2, 0)]:
        bits = bits_for(top, k, delta_bits)
        delta = mpq(1, 1 << delta_bits)
        assert total_variation_bound(top, k, bits) <= delta
        assert total_variation_bound(top, k, bits - 1) > delta  # the smallest such b
