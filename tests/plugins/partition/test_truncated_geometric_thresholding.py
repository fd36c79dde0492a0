"""truncated-geometric-thresholding (Desfontaines et al. Def. 8, Thm 5;
docs/mechanisms.md#truncated-geometric-thresholding): Thm 5 exactly (its keep probability is the
optimal π at (L, δ′)), the tail formula (eq. 8), the released counts' law, the pre-threshold shift
and public partitions."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from gmpy2 import mpq
from scipy.stats import binomtest

import dpplug
from dpplug.plugins.partition.optimal import keep_probabilities

from support.selectors import (
    TGT,
    case_id,
    exp_lower_bound,
    exp_upper_bound,
    grid_cases,
    grid_selector,
    selector,
    slow_marked,
)

#: Thm 5 / eq. 8 on every run where k ≤ 400 (exact recurrence and tail on 2k + 3 unit counts).
THM5_MAX_K = 400
PARAMS = [
    {"epsilon": Fraction(1), "delta": Fraction(1, 10**4)},
    {"epsilon": Fraction(1, 2), "delta": Fraction(1, 100), "max_partitions_contributed": 2},
    {"epsilon": Fraction(2), "delta": Fraction(1, 10)},
    {"epsilon": Fraction(1, 10), "delta": Fraction(1, 10**6)},
    {"epsilon": 3, "delta": 1e-9},
]


def tsgd_last(L: Any, k: int) -> Any:
    """Pr[X = k] = (L − 1)/((L + 1)L^k − 2) (B3)."""
    return (L - 1) / ((L + 1) * L**k - 2)


def tail(L: Any, k: int, n: int) -> Any:
    """Pr[n + X > k] by eq. 8 with a = e^{−ε} = 1/L and Den = 1 + a − 2a^{k+1}."""
    a = 1 / mpq(L)
    den = 1 + a - 2 * a ** (k + 1)
    if n <= 0:
        return mpq(0)
    if n <= k:
        return (a ** (k - n + 1) - a ** (k + 1)) / den
    if n <= 2 * k:
        return 1 - (a ** (n - k) - a ** (k + 1)) / den
    return mpq(1)


THM5_CASES = grid_cases((TGT,))


@pytest.mark.parametrize("case", THM5_CASES, ids=case_id)
def test_thm5_k_is_the_smallest_with_its_tail_within_delta(
    case: tuple[str, Fraction, Fraction, int],
) -> None:
    """With L = per_partition.exp_epsilon and δ′ = per_partition.delta = Pr[X = k]: k is the
    smallest with Pr[X = k] ≤ δ_c."""
    s = grid_selector(case)
    L, delta, k = s.per_partition.exp_epsilon, s.per_partition.delta, s.k
    assert s.derived["k"] == k
    assert delta == tsgd_last(L, k) == s.derived["delta_per_partition"]
    assert delta <= s.budget.delta
    assert k == 1 or tsgd_last(L, k - 1) > s.budget.delta


@pytest.mark.parametrize("case", slow_marked(THM5_CASES, lambda s: s.k > THM5_MAX_K), ids=case_id)
def test_thm5_and_tail_formula(case: tuple[str, Fraction, Fraction, int]) -> None:
    """π(n) = π_{L,δ′}(n) (the optimal recurrence) = Pr[n + X > k] (eq. 8) for every n ≥ 0,
    exactly (Thm 5). Beyond k = THM5_MAX_K the exact recurrence is slow: slow_grid."""
    s = grid_selector(case)
    L, delta, k = s.per_partition.exp_epsilon, s.per_partition.delta, s.k
    pi = keep_probabilities(L, delta)
    assert len(pi) - 1 == 2 * k + 1  # π < 1 up to 2k, = 1 from 2k + 1 on
    for n in range(s.saturation + 3):
        got = s.keep_probability(n)
        assert got == pi[min(n, len(pi) - 1)], n
        assert got == tail(L, k, n), n


@pytest.mark.parametrize("params", PARAMS)
def test_released_count_law(params: dict[str, Any]) -> None:
    """output_pmf(n): 0 with probability 1 − π(n); the noisy count z ≥ k + 1 with probability
    Pr[X = z − n] = L^{−|z−n|}/Σ_{|x|≤k} L^{−|x|} (k-TSGD, B2); nothing else."""
    s = selector(TGT, **params)
    L, k = s.per_partition.exp_epsilon, s.k
    norm = sum((L ** -abs(x) for x in range(-k, k + 1)), mpq(0))
    for n in range(s.saturation + 2):
        law = s.output_pmf(n)
        assert law.total() == 1
        expected = {z: L ** -abs(z - n) / norm for z in range(max(n - k, k + 1), n + k + 1)}
        assert {z: p for z, p in law.items() if z != 0 and p} == expected
        assert law.prob(0) == 1 - s.keep_probability(n)


@pytest.mark.parametrize("params", PARAMS[:3])
@pytest.mark.parametrize("m", [2, 3, 7])
def test_pre_threshold_shifts_released_counts(params: dict[str, Any], m: int) -> None:
    """With pre-threshold m: π_m(n) = 0 for n < m and π_1(n − m + 1) above; the released count is
    still the noisy n + X (the law at n is the m = 1 law at n − m + 1 shifted by m − 1)."""
    base, s = selector(TGT, **params), selector(TGT, **params, pre_threshold=m)
    assert s.saturation == base.saturation + m - 1
    assert s.per_partition == base.per_partition and s.guarantee == base.guarantee
    for n in range(s.saturation + 3):
        law = s.output_pmf(n)
        if n < m:
            assert s.keep_probability(n) == 0
            assert dict(law) == {0: 1}
            continue
        ref = base.output_pmf(n - m + 1)
        assert s.keep_probability(n) == base.keep_probability(n - m + 1)
        shifted = {z + m - 1: p for z, p in ref.items() if z != 0 and p}
        assert {z: p for z, p in law.items() if z != 0 and p} == shifted


# --- select: noisy counts and public partitions (B9) --------------------------------------


def test_noisy_counts_of_kept_and_dropped() -> None:
    s = selector(TGT, epsilon=1, delta=Fraction(1, 1000), pre_threshold=2)
    k = s.k
    units = np.tile(np.arange(0, 3 * k + 4), 300).reshape(30, -1)
    out = s.select(units, dpplug.SeededSource(11))
    assert out.keep.shape == units.shape and out.noisy_counts is not None
    assert out.noisy_counts.shape == units.shape and out.noisy_counts.dtype == np.int64
    kept, noisy = out.keep, out.noisy_counts
    assert (noisy[~kept] == 0).all()
    assert (np.abs(noisy[kept] - units[kept]) <= k).all()
    assert (noisy[kept] - 1 >= k + 1).all()  # released iff n + X − (m − 1) ≥ k + 1
    assert not kept[units < 2].any()
    assert kept[units >= 2 * k + 2].all()
    assert kept.any() and not kept.all()


@pytest.mark.parametrize("units", [0, 1, 5])
def test_public_partitions_always_released_below_minus_k(units: int) -> None:
    """τ_pub ≤ −k: every public partition is released (even with 0 units), with its noisy count;
    non-public partitions follow the usual threshold."""
    k = selector(TGT, epsilon=1, delta=Fraction(1, 1000)).k
    for tau in (-k, -k - 5):
        t = selector(TGT, epsilon=1, delta=Fraction(1, 1000), public_threshold=tau)
        counts = np.full((4, 500), units)
        public = np.zeros(counts.shape, dtype=bool)
        public[:2] = True
        out = t.select(counts, dpplug.SeededSource(3), public=public)
        assert out.keep[public].all()
        noisy = out.noisy_counts
        assert noisy is not None
        assert (np.abs(noisy[public] - units) <= k).all()
        assert (noisy[public] >= tau).all()
        if units == 0:
            assert not out.keep[~public].any()


def test_public_partitions_no_false_negatives() -> None:
    """τ_pub ≤ 1 − k: every public partition present in the data (≥ 1 unit) is released."""
    k = selector(TGT, epsilon=1, delta=Fraction(1, 1000)).k
    s = selector(TGT, epsilon=1, delta=Fraction(1, 1000), public_threshold=1 - k)
    counts = np.tile(np.arange(0, 2 * k + 3), 200)
    out = s.select(counts, dpplug.SeededSource(9), public=np.ones(counts.shape, dtype=bool))
    assert out.keep[counts >= 1].all()
    assert out.noisy_counts is not None
    assert (out.noisy_counts[out.keep] >= 1 - k).all()


def test_public_partitions_never_released_with_no_units_above_k() -> None:
    """τ_pub ≥ k + 1: a public partition with 0 units (noisy count ≤ k) is never released."""
    base = selector(TGT, epsilon=Fraction(1, 2), delta=Fraction(1, 100))
    k = base.k
    for tau in (k + 1, k + 10):
        s = selector(TGT, epsilon=Fraction(1, 2), delta=Fraction(1, 100), public_threshold=tau)
        counts = np.zeros(5000, dtype=np.int64)
        counts[::2] = tau + k  # noisy count ≥ τ_pub: always released
        out = s.select(counts, dpplug.SeededSource(5), public=np.ones(5000, dtype=bool))
        assert not out.keep[counts == 0].any()
        assert out.keep[counts > 0].all()
        assert out.noisy_counts is not None
        assert (out.noisy_counts[counts == 0] == 0).all()


def test_public_threshold_frequency() -> None:
    """A public partition with 0 units and τ_pub = 1 is released with probability
    Pr[X ≥ 1] = (1 − Pr[X = 0])/2: binomial test at level 1e-7 (fixed seed)."""
    s = selector(TGT, epsilon=1, delta=Fraction(1, 1000), public_threshold=1)
    law = s.noise.pmf(0)
    p = float(sum((law.prob(x) for x in range(1, s.k + 1)), mpq(0)))
    size = 40_000
    out = s.select(np.zeros(size, dtype=np.int64), dpplug.SeededSource(17), public=[True] * size)
    kept = int(out.keep.sum())
    assert binomtest(kept, size, p).pvalue > 1e-7
    assert binomtest(kept, size, p * 1.1).pvalue < 1e-7  # power
    assert out.noisy_counts is not None
    assert (out.noisy_counts[out.keep] >= 1).all()


def test_public_needs_public_threshold() -> None:
    s = selector(TGT, epsilon=1, delta=Fraction(1, 1000))
    source = dpplug.SeededSource(1)
    with pytest.raises(dpplug.NotSupported):
        s.select([1, 2, 3], source, public=[True, False, True])
    assert source.draws == 0
    t = selector(TGT, epsilon=1, delta=Fraction(1, 1000), public_threshold=3)
    assert t.select([1, 2, 3], source).keep.shape == (3,)  # public is optional


def test_exactly_optimal_at_its_own_budget_at_the_issue_point() -> None:
    """ε = 1, δ = 10⁻¹⁰. Thm 5 holds exactly for any rational L: δ′ = Pr[X = k] makes
    (L + 2δ′ − 1)/((L + 1)δ′) = L^k, so the keep probability is exactly the optimal π at
    (ln L, δ′). At ε itself k = 23 leaves δ′ = 4.7·10⁻¹¹, so the noise runs at the ε̃ whose δ′
    is 95% of δ (ε̃ ≈ 0.9685); the optimal π at (ε, δ) itself is still up to 0.29 higher (0.30
    at ε itself): that gap is the truncated geometric's, k being an integer."""
    s = selector(TGT, epsilon=Fraction(1), delta=Fraction(1, 10**10))
    L, k, dp = s.per_partition.exp_epsilon, s.k, s.per_partition.delta
    assert (L + 2 * dp - 1) / ((L + 1) * dp) == L**k  # Thm 5's condition, exactly
    assert exp_lower_bound(mpq(968, 1000)) < L < exp_upper_bound(mpq(969, 1000))
    own = keep_probabilities(L, dp)
    assert len(own) == 2 * k + 2  # π reaches 1 at n = 2k + 1, as the thresholding does

    def at(curve: list[Any], n: int) -> Any:
        return curve[min(n, len(curve) - 1)]

    assert all(s.keep_probability(n) == at(own, n) for n in range(2 * k + 3))
    best = keep_probabilities(exp_lower_bound(1), Fraction(1, 10**10))
    assert 0.28 < max(at(best, n) - s.keep_probability(n) for n in range(2 * k + 3)) < 0.3
    assert k == 23 and 0.95e-10 <= dp <= 0.96e-10


def tsgd_weights(L: Any, k: int) -> list[Any]:
    """Pr[X = x] for x = −k … k, from Def. 6: ∝ L^{−|x|}, normalised by direct summation."""
    weights = [mpq(L) ** -abs(x) for x in range(-k, k + 1)]
    total = sum(weights, mpq(0))
    return [w / total for w in weights]


SPENDING = [
    (Fraction(1), Fraction(1, 10**10), 1),  # 47% of δ at ε itself
    (Fraction(2), Fraction(1, 10**8), 1),  # 16%
    (Fraction(1), Fraction(1, 10**5), 1),
    (Fraction(1), Fraction(1, 10**6), 10),
    (Fraction(1, 4), Fraction(1, 10**6), 1),  # already 98%: ε itself
    (Fraction(8), Fraction(1, 10**12), 3),
    (Fraction(1, 100), Fraction(1, 10), 1),  # k = 5: δ′ < 1/11 < 95% of δ at any ε: ε itself
]


@pytest.mark.parametrize(("epsilon", "delta", "l0"), SPENDING, ids=str)
def test_the_noise_spends_at_least_95_percent_of_the_delta_per_partition(
    epsilon: Fraction, delta: Fraction, l0: int
) -> None:
    """δ′ = Pr[X = k], summed from Def. 6's weights at the L the noise runs at, is in
    [0.95·δ_c, δ_c], below ε_c with the k of ε_c; at ε_c itself when that already holds, or
    when no L does: with k fixed δ′ grows as L falls, but only up to the uniform law's
    1/(2k + 1)."""
    s = selector(TGT, epsilon=epsilon, delta=delta, max_partitions_contributed=l0)
    L, k, delta_c = s.per_partition.exp_epsilon, s.k, s.budget.delta
    spent, floor = tsgd_weights(L, k)[-1], mpq(95, 100) * delta_c
    assert spent == s.per_partition.delta <= delta_c
    full = dpplug.create("truncated-geometric", epsilon=mpq(epsilon) / l0, delta=delta_c)
    if full.delta >= floor or mpq(1, 2 * k + 1) < floor:
        assert L == full.exp_epsilon
    else:
        assert floor <= spent and k == full.k and L < full.exp_epsilon
