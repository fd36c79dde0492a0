"""Exact privacy of the four partition selectors (docs/mechanisms.md).

Per partition: the four inequalities of B1 at (L, δ) = (per_partition.exp_epsilon,
per_partition.delta) for every neighbouring pair (n, n+1), n = 0 … saturation + 2, over the grid
ε ∈ {0.01, 0.1, 0.5, 1, 2, 5, 10} × δ ∈ {1e-12, 1e-6, 1e-3, 0.1} × ℓ₀ ∈ {1, 2, 3, 10} (exact
decimals). For truncated-geometric-thresholding, which releases counts, also the exact
hockey-stick divergence of ``output_pmf`` in both directions.

Whole selection: the declared composition (L^c, 1 − (1 − δ)^c), c = ℓ₀ (2ℓ₀ for replace-one),
is at most (e^ε, δ) asked for, and on tiny cases the exact product law of c independent
partitions really is (L^c, 1 − (1 − δ)^c)-DP for every vector change of at most one per partition.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import pytest
from gmpy2 import mpq

import dpplug
from dpplug.conformance.divergence import hockey_stick

from support.selectors import (
    GAUSSIAN,
    GRID_SELECTORS,
    SELECTORS,
    TGT,
    b1_slack,
    case_id,
    exp_lower_bound,
    grid_cases,
    grid_selector,
    selector,
    slow_marked,
)

CASES = grid_cases()

#: truncated-geometric-thresholding: the per-unit-count checks cost O(k) (keep probability) and
#: O(k²) (hockey-stick over all n) big-integer work, k the noise truncation (up to 22 335 on the
#: grid, at ε = 0.01, ℓ₀ = 10). Every n is checked up to these k, sampled n beyond (see below).
TGT_ALL_N_KEEP = 400
TGT_ALL_N_PMF = 60
TGT_SAMPLED_PMF = 300


def tgt_sampled_units(k: int, m: int) -> list[int]:
    """The unit counts where the output law of k-TSGD thresholding changes shape: around 0, the
    pre-threshold m, the threshold k+1 and the saturation 2k + m."""
    around = (0, m, k, k + m, 2 * k + m)
    return sorted({n for c in around for n in range(c - 2, c + 3) if n >= 0})


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_per_partition_four_inequalities(case: tuple[str, Fraction, Fraction, int]) -> None:
    """π(n+1) ≤ Lπ(n) + δ, π(n) ≤ Lπ(n+1) + δ and the same for 1 − π, exactly, for n = 0 …
    saturation + 2; π(0) = 0 and π(saturation) = 1."""
    s = grid_selector(case)
    pp = s.per_partition
    L, delta = pp.exp_epsilon, pp.delta
    assert L >= 1 and 0 < delta < 1
    assert pp.neighbouring == dpplug.COUNT_SENSITIVITY_1
    assert s.keep_probability(0) == 0
    assert s.keep_probability(s.saturation) == 1
    if case[0] == TGT and s.k > TGT_ALL_N_KEEP:
        units = tgt_sampled_units(s.k, s.pre_threshold)
    else:
        units = list(range(s.saturation + 3))
    worst = mpq(0)
    pi = {n: s.keep_probability(n) for n in sorted({*units, *(n + 1 for n in units)})}
    for n in units:
        lo, hi = pi[n], pi[n + 1]
        assert 0 <= lo <= hi <= 1, n  # monotone
        worst = max(worst, b1_slack(lo, hi, L))
    assert worst <= delta
    if case[0] in GRID_SELECTORS:
        # the declared δ is the exact worst slack of the keep table (no slack left unclaimed)
        assert worst == delta


def _has_exact_law(s: Any) -> bool:
    """Whether the selector's released value has an exact law within the size limit (not for
    k ≳ 800 on the grid: 2k + 1 outputs of ~10^5-bit denominators)."""
    try:
        s.output_pmf(0)
    except dpplug.NotSupported:
        return False
    return True


#: The TGT grid cases whose released value has an exact law to check.
TGT_LAW_CASES = [c for c in CASES if c[0] == TGT and _has_exact_law(grid_selector(c))]


@pytest.mark.parametrize(
    "case", slow_marked(TGT_LAW_CASES, lambda s: s.k > TGT_SAMPLED_PMF), ids=case_id
)
def test_tgt_hockey_stick_of_released_counts(case: tuple[str, Fraction, Fraction, int]) -> None:
    """Σ max(0, P − L·Q) ≤ δ′ in both directions for the laws of the released value (0 = dropped,
    else the noisy count) at n and n + 1; the worst pair attains δ′ = Pr[X = k] exactly (B3).
    Beyond k = TGT_SAMPLED_PMF the exact laws over 2k + 1 outputs are slow: slow_grid."""
    s = grid_selector(case)
    L, delta = s.per_partition.exp_epsilon, s.per_partition.delta
    if s.k <= TGT_ALL_N_PMF:
        units = list(range(s.saturation + 3))
    else:
        units = tgt_sampled_units(s.k, s.pre_threshold)
    worst = mpq(0)
    law = {n: s.output_pmf(n) for n in sorted({*units, *(n + 1 for n in units)})}
    for n in units:
        p, q = law[n], law[n + 1]
        assert p.total() == 1 and q.total() == 1
        worst = max(worst, hockey_stick(p, q, L), hockey_stick(q, p, L))
    assert worst == delta


@pytest.mark.parametrize("case", [c for c in CASES if c[0] != GAUSSIAN], ids=case_id)
def test_composed_guarantee(case: tuple[str, Fraction, Fraction, int]) -> None:
    """guarantee = (L^ℓ₀, 1 − (1 − δ_c)^ℓ₀) for add-remove with max_partitions = ℓ₀, and it is
    at most the (ε, δ) asked for: L^ℓ₀ ≤ a rigorous lower bound on e^ε, 1 − (1 − δ_c)^ℓ₀ ≤ δ.
    (Gaussian thresholding composes in ℓ₂: test_laplace_gaussian.py.)"""
    _name, eps, delta, l0 = case
    s = grid_selector(case)
    pp, g = s.per_partition, s.guarantee
    assert g.exp_epsilon == pp.exp_epsilon**l0
    assert g.delta == 1 - (1 - pp.delta) ** l0
    assert g.exp_epsilon <= exp_lower_bound(eps)
    assert g.delta <= mpq(delta)
    assert g.neighbouring.relation is dpplug.Relation.ADD_REMOVE
    assert g.neighbouring.max_partitions == l0
    assert s.derived["coordinates"] == l0


@pytest.mark.parametrize("name", [n for n in SELECTORS if n != GAUSSIAN])
@pytest.mark.parametrize("l0", [1, 2, 3])
@pytest.mark.parametrize(
    ("eps", "delta"), [(Fraction(1), Fraction(1, 10**6)), (Fraction(1, 2), Fraction(1, 100))]
)
def test_composed_guarantee_replace_one(name: str, l0: int, eps: Fraction, delta: Fraction) -> None:
    """Bounded DP: c = 2ℓ₀ coordinates, relation replace-one, max_partitions = ℓ₀."""
    s = selector(name, epsilon=eps, delta=delta, max_partitions_contributed=l0, replace_one=True)
    pp, g = s.per_partition, s.guarantee
    assert g.exp_epsilon == pp.exp_epsilon ** (2 * l0)
    assert g.delta == 1 - (1 - pp.delta) ** (2 * l0)
    assert g.exp_epsilon <= exp_lower_bound(eps)
    assert g.delta <= mpq(delta)
    assert g.neighbouring.relation is dpplug.Relation.REPLACE_ONE
    assert g.neighbouring.max_partitions == l0
    assert s.derived["coordinates"] == 2 * l0


# --- exact composition over c independent partitions (B7, B8) -------------------------------


def product_law(laws: list[dict[int, Any]]) -> dict[tuple[int, ...], Any]:
    out: dict[tuple[int, ...], Any] = {(): mpq(1)}
    for law in laws:
        out = {(*z, x): pz * px for z, pz in out.items() for x, px in law.items() if px}
    return out


def divergence(p: dict[Any, Any], q: dict[Any, Any], e: Any) -> Any:
    """Σ_z max(0, P(z) − e·Q(z)) over dict laws."""
    return sum((max(mpq(0), pz - e * q.get(z, mpq(0))) for z, pz in p.items()), mpq(0))


COMPOSITION_CASES = [
    (name, params)
    for params in (
        {"epsilon": Fraction(2), "delta": Fraction(1, 10), "max_partitions_contributed": 2},
        {"epsilon": Fraction(6), "delta": Fraction(3, 10), "max_partitions_contributed": 3},
        {"epsilon": Fraction(2), "delta": Fraction(1, 10), "replace_one": True},
    )
    for name in SELECTORS
]
#: Largest unit count per coordinate enumerated, for c = 2 and c = 3 coordinates: the whole curve
#: (up to saturation + 1) except the Laplace/Gaussian tails where π(n) is within 2^-30 of 1.
WINDOW = {2: 30, 3: 12}


@pytest.mark.parametrize(
    ("name", "params"),
    COMPOSITION_CASES,
    ids=[f"{n.split('-')[0]}-{i // len(SELECTORS)}" for i, (n, _) in enumerate(COMPOSITION_CASES)],
)
def test_exact_composition_of_independent_partitions(name: str, params: dict[str, Any]) -> None:
    """For c = 2, 3 coordinates (ℓ₀ = 2, 3, or ℓ₀ = 1 replace-one): for every unit vector n and
    every change d ∈ {−1, 0, 1}^c ∖ {0}, the product law of the c independent per-partition
    releases satisfies Σ max(0, P_n − L^c·P_{n+d}) ≤ 1 − (1 − δ_c)^c = guarantee.delta. For
    Gaussian thresholding, whose guarantee (e^ε, δ) comes from the ℓ₂ (Gaussian-DP)
    composition rather than from per_partition, the same exact check holds at its e^ε and δ."""
    s = selector(name, **params)
    c = s.derived["coordinates"]
    assert c in (2, 3)
    g = s.guarantee
    e, bound = g.exp_epsilon, g.delta
    if name != GAUSSIAN:
        assert e == s.per_partition.exp_epsilon**c
    top = min(s.saturation + 1, WINDOW[c])
    assert s.keep_probability(top) >= 1 - mpq(1, 1 << 30)
    law = {n: dict(s.output_pmf(n)) for n in range(top + 2)}
    joint: dict[tuple[int, ...], Any] = {}
    worst = mpq(0)
    for units in itertools.product(range(top + 1), repeat=c):
        for change in itertools.product((-1, 0, 1), repeat=c):
            other = tuple(u + d for u, d in zip(units, change, strict=True))
            if not any(change) or min(other) < 0:
                continue
            for vec in (units, other):
                if vec not in joint:
                    joint[vec] = product_law([law[u] for u in vec])
            worst = max(worst, divergence(joint[units], joint[other], e))
    assert worst <= bound
    # a single coordinate already reaches δ_c, so the composed δ is not vacuous
    assert worst >= s.per_partition.delta
