"""truncated-geometric: k-TSGD noise (Desfontaines et al. Def. 6–7, Thm 4;
docs/mechanisms.md#truncated-geometric) against an independent closed form."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import gmpy2
import pytest
from gmpy2 import mpq

import dpplug
from dpplug.conformance.probes.sampler.probe import sampler_privacy

CASES = [
    {"epsilon": Fraction(1, 2), "delta": Fraction(3, 10), "n": 3},  # k = 1
    {"epsilon": 1, "delta": Fraction(1, 4)},  # k = 1, no count bound
    {"epsilon": Fraction(1, 10), "delta": Fraction(1, 10**6), "n": 5},
    {"epsilon": 3, "delta": 1e-9},
    {"epsilon": Fraction(7, 5), "delta": Fraction(1, 50), "n": 8},
    *dpplug.registry().get("truncated-geometric").cls.conformance_cases,
]
BETAS = [Fraction(1, 2), Fraction(1, 10), Fraction(1, 1000)]


def create(case: dict[str, Any]) -> Any:
    return dpplug.create("truncated-geometric", **case)


def tsgd_last(L: Fraction, k: int) -> Fraction:
    """Pr[X = k] = (L−1)/((L+1)L^k − 2) for k-TSGD with e^ε = L
    (docs/mechanisms.md#truncated-geometric)."""
    return (L - 1) / ((L + 1) * L**k - 2)


def tsgd_law(L: Fraction, k: int, c: int, n: int | None = None) -> dict[int, Fraction]:
    """c + X with Pr[X = x] ∝ L^{−|x|} on [−k, k], clamped to [0, n] when n is given."""
    weights: dict[int, Fraction] = {}
    for x in range(-k, k + 1):
        z = c + x if n is None else min(max(c + x, 0), n)
        weights[z] = weights.get(z, Fraction(0)) + L ** -abs(x)
    total = sum(weights.values())
    return {z: w / total for z, w in weights.items()}


def counts_of(case: dict[str, Any]) -> range:
    return range(case["n"] + 1) if case.get("n") is not None else range(-3, 4)


@pytest.mark.parametrize("case", CASES)
def test_parameters_and_guarantee(case: dict[str, Any]) -> None:
    """e^ε rounded down (ε̃ ≥ ε·(1 − 2^-40)), k the smallest with Pr[X = k] ≤ δ, δ′ = Pr[X = k]."""
    sampler = create(case)
    L, k = Fraction(sampler.guarantee.exp_epsilon), sampler.derived["k"]
    assert Fraction(sampler.derived["exp_epsilon"]) == L
    eps = mpq(case["epsilon"])
    with gmpy2.context(precision=512, round=gmpy2.RoundDown):
        assert L <= mpq(gmpy2.exp(gmpy2.mpfr(eps)))  # rigorous: L ≤ lower bound ≤ e^ε
    with gmpy2.context(precision=512, round=gmpy2.RoundUp):
        assert L >= mpq(gmpy2.exp(gmpy2.mpfr(eps * (1 - mpq(1, 1 << 40)))))
    delta = Fraction(mpq(case["delta"]))
    assert tsgd_last(L, k) <= delta
    assert k == 1 or tsgd_last(L, k - 1) > delta
    assert Fraction(sampler.guarantee.delta) == tsgd_last(L, k)
    assert sampler.guarantee.neighbouring == dpplug.COUNT_SENSITIVITY_1


@pytest.mark.parametrize("case", CASES)
def test_pmf_is_the_normalised_truncated_geometric(case: dict[str, Any]) -> None:
    sampler = create(case)
    L, k = Fraction(sampler.guarantee.exp_epsilon), sampler.derived["k"]
    for c in counts_of(case):
        pmf = sampler.pmf(c)
        assert pmf.tail_ratio is None and pmf.total() == 1
        n = case.get("n")
        ends = (c - k, c + k) if n is None else (max(c - k, 0), min(c + k, n))
        assert (pmf.low, pmf.high) == ends
        assert {z: Fraction(p) for z, p in pmf.items()} == tsgd_law(L, k, c, n)


@pytest.mark.parametrize("case", CASES)
def test_exact_privacy_divergence_is_exactly_delta(case: dict[str, Any]) -> None:
    sampler = create(case)
    report = sampler_privacy(sampler)
    assert report.passed, report.failures
    assert report.totals_exact
    assert report.counts == (counts_of(case)[0], counts_of(case)[-1])
    # Tight: the divergence is the mass of the extreme output, which has no counterpart.
    assert report.worst_divergence == sampler.guarantee.delta
    if case.get("n") is None:  # unclamped, the extreme outputs have no counterpart at all
        assert report.worst_ratio is None


@pytest.mark.parametrize("case", CASES)
def test_inverse_cdf_is_monotone_in_u(case: dict[str, Any]) -> None:
    """d has k·(40 + log₂(1/ε)) bits, too many to enumerate every u: M(c, ·) is non-decreasing
    on random u and on every CDF boundary (which, with the boundary test below, gives each output
    exactly d·Pr[output] values of u)."""
    sampler = create(case)
    d, rng = sampler.d, random.Random(7)
    for c in counts_of(case):
        cuts = [sampler.scaled_cdf(z, c) for z in range(c - sampler.k - 1, c + sampler.k + 1)]
        us = sorted({1, d, *(u for cut in cuts for u in (cut, cut + 1) if 1 <= u <= d)})
        us = sorted({*us, *(rng.randint(1, d) for _ in range(200))})
        outputs = [sampler(c, u) for u in us]
        assert outputs == sorted(outputs)


@pytest.mark.parametrize("case", CASES)
def test_scaled_cdf_and_inverse_cdf_boundaries(case: dict[str, Any]) -> None:
    sampler = create(case)
    k, d = sampler.derived["k"], sampler.d
    for c in counts_of(case):
        zs = range(c - k - 2, c + k + 2)
        cdf = [sampler.scaled_cdf(z, c) for z in zs]
        assert cdf == sorted(cdf) and cdf[:2] == [0, 0] and cdf[-2:] == [d, d]
        pmf = sampler.pmf(c)
        for z in pmf:
            low, high = sampler.scaled_cdf(z - 1, c), sampler.scaled_cdf(z, c)
            assert Fraction(high - low, d) == Fraction(pmf[z])
            assert sampler(c, low + 1) == z and sampler(c, high) == z


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("beta", BETAS)
def test_accuracy_is_the_smallest_a(case: dict[str, Any], beta: Fraction) -> None:
    sampler = create(case)
    L, k = Fraction(sampler.guarantee.exp_epsilon), sampler.derived["k"]
    a = sampler.accuracy(beta).per_query.a
    assert 0 <= a <= k
    for c in counts_of(case):
        pmf = sampler.pmf(c)
        assert sum(Fraction(p) for z, p in pmf.items() if abs(z - c) > a) <= beta
    if a > 0:  # the noise tail itself must exceed β one step earlier
        assert sum(p for x, p in tsgd_law(L, k, 0).items() if abs(x) > a - 1) > beta
