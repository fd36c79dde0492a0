"""The Laplace and Gaussian thresholding baselines (docs/mechanisms.md) capped onto the exact
2^-63 keep table: never above their continuous curves, and π(1) where the baselines put it.

Laplace is checked exactly: the curve ½e^{−ε(τ−n)} (n < τ) / 1 − ½e^{−ε(n−τ)} (n ≥ τ), with
ε = ln L (L the per-partition e^ε) and τ = 1 + ln(1/(2δ_c))/ε (Google's 1 + ln(2(1 − δ_c))/ε
for δ_c > 1/2), is evaluated with MPFR at 256 bits; the only allowance is the documented
round-up of the last step (the grid keeps with probability 1 where the curve is within 2^-63
of 1).

Gaussian uses floats for its cap (σ by bisection, Φ by scipy), so its curve Φ((n − τ)/σ),
evaluated with MPFR from the instance's ``derived["sigma"]`` and ``derived["tau"]``, gets a
relative slack of 2^-48 = 32·2^-53: the float argument (n − τ)/σ, scipy's Φ (measured up to
≈ 12 ulp) and the round-up to 1 within 1024·2^-63 = 2^-53 of 1 (measured worst: 17.6·2^-53).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import gmpy2
import pytest
from gmpy2 import mpfr, mpq

from dpplug.conformance.probes.partition_selector.probe import selector_privacy
from dpplug.kinds.partition_selector.gaussian_dp import GaussianPairs, pair_slack
from dpplug.plugins.partition.capping_curve import MARGIN
from dpplug.plugins.partition.gaussian import GaussianThresholding

from support.selectors import (
    GAUSSIAN,
    GRID,
    LAPLACE,
    OPTIMAL,
    case_id,
    exp_lower_bound,
    floor_grid,
    grid_cases,
    grid_selector,
    selector,
)


def curve_cases(name: str) -> list[tuple[str, Fraction, Fraction, int]]:
    """The grid without ε = 0.01, ℓ₀ ≥ 3: saturations of 15 000–92 000 there, too many MPFR
    exps; test_selector_privacy.py still checks those instances exactly."""
    return [c for c in grid_cases((name,)) if not (c[1] == Fraction("0.01") and c[3] >= 3)]


PRECISION = 256
GAUSS_SLACK = mpq(1, 1 << 48)


def laplace_curve(L: Any, delta: Any) -> Any:
    """n ↦ π_Lap(n) as an MPFR number (call inside a 256-bit context)."""
    eps = gmpy2.log(mpfr(L))
    delta = mpfr(mpq(delta))
    tau = 1 + (gmpy2.log(1 / (2 * delta)) if delta <= 0.5 else gmpy2.log(2 * (1 - delta))) / eps

    def curve(n: int) -> Any:
        if n < tau:
            return gmpy2.exp(-eps * (tau - n)) / 2
        return 1 - gmpy2.exp(-eps * (n - tau)) / 2

    return curve


def check_laplace(s: Any) -> None:
    L, delta_c = s.per_partition.exp_epsilon, s.budget.delta
    sat = s.saturation
    with gmpy2.context(gmpy2.get_context(), precision=PRECISION):
        curve = laplace_curve(L, delta_c)
        for n in range(1, sat):
            assert s.keep_probability(n) <= mpq(curve(n)), n
        assert s.keep_probability(sat) == 1
        assert 1 - mpq(curve(sat)) <= GRID  # the documented round-up of the last step
        assert 1 - mpq(curve(sat - 1)) > GRID / 2  # …and no earlier than needed
    opt = selector(
        OPTIMAL,
        epsilon=s.params["epsilon"],
        delta=s.params["delta"],
        max_partitions_contributed=s.params["max_partitions_contributed"],
    )
    for n in range(0, sat + 2, max(1, sat // 200)):
        assert s.keep_probability(n) <= opt.keep_probability(n), n


def spends_delta_at_one_unit(s: Any) -> bool:
    """π̂(1) is δ_c (B5: π_Lap(1) = δ_c) up to the cap's float margin and float error: within
    (2^-44 + 2^-46)·δ_c + 2^-62 below ⌊δ_c·2^63⌋/2^63 (plugins/partition/capping_curve.py),
    never above it."""
    top = floor_grid(s.budget.delta)
    return top - top * (MARGIN + 2.0**-46) - 2 <= floor_grid(s.keep_probability(1)) <= top


@pytest.mark.parametrize("case", curve_cases(LAPLACE), ids=case_id)
def test_laplace_never_above_its_curve(case: tuple[str, Fraction, Fraction, int]) -> None:
    """π̂(n) ≤ π_Lap(n) for n < saturation; π̂(1) = δ_c up to the margin; π̂ ≤ the optimal
    selector's π̂ (the same recurrence caps both)."""
    s = grid_selector(case)
    check_laplace(s)
    assert spends_delta_at_one_unit(s)


@pytest.mark.parametrize(
    "params",
    [
        {"epsilon": Fraction(1), "delta": Fraction(3, 4)},  # δ_c > 1/2: Google's τ < 1
        {"epsilon": Fraction(1, 2), "delta": Fraction(9, 10), "max_partitions_contributed": 2},
        {"epsilon": Fraction(2), "delta": Fraction(1, 100), "pre_threshold": 1},
        {"epsilon": Fraction(3), "delta": Fraction(1, 2)},
    ],
)
def test_laplace_large_delta(params: dict[str, Any]) -> None:
    s = selector(LAPLACE, **params)
    check_laplace(s)
    assert spends_delta_at_one_unit(s)


@pytest.mark.parametrize(("epsilon", "delta"), [(1, 1e-3), (2, 0.1), (5, 2.0**-20), (0.5, 1e-6)])
def test_laplace_pi1_with_float_delta(epsilon: float, delta: float) -> None:
    """With a float δ, δ·2^63 is often an integer: π̂(1) is still δ up to the margin, never above."""
    s = selector(LAPLACE, epsilon=epsilon, delta=delta)
    assert spends_delta_at_one_unit(s)
    check_laplace(s)


def gaussian_phi(x: Any) -> Any:
    """Φ(x) = erfc(−x/√2)/2 in MPFR (call inside a high-precision context)."""
    return gmpy2.erfc(-mpfr(x) / gmpy2.sqrt(mpfr(2))) / 2


@pytest.mark.parametrize("case", curve_cases(GAUSSIAN), ids=case_id)
def test_gaussian_never_above_its_curve(case: tuple[str, Fraction, Fraction, int]) -> None:
    """π̂(n) ≤ Φ((n − τ)/σ)·(1 + 2^-48) for every n (slack: see the module docstring), and, at
    ℓ₀ = 1 where both spend the same (ε, δ), π̂ ≤ the optimal selector's π̂."""
    s = grid_selector(case)
    sigma, tau = mpfr(s.derived["sigma"]), mpfr(s.derived["tau"])
    with gmpy2.context(gmpy2.get_context(), precision=PRECISION):
        for n in range(1, s.saturation + 1):
            phi = mpq(gaussian_phi((n - tau) / sigma))
            assert s.keep_probability(n) <= phi * (1 + GAUSS_SLACK), n
    assert s.keep_probability(s.saturation) == 1
    if case[3] == 1:
        opt = grid_selector((OPTIMAL, *case[1:]))
        step = max(1, s.saturation // 200)
        for n in range(0, s.saturation + 2, step):
            assert s.keep_probability(n) <= opt.keep_probability(n), n


def joint_calibration(s: Any) -> tuple[Any, Any, Any]:
    """(ε′, δ″, c) of the joint calibration (docs/mechanisms.md#gaussian-thresholding): σ is the
    Balle–Wang σ of ℓ₂ sensitivity √c at e^{ε′} = L·(1 − δ/2) and δ″ = (δ/2 − c·slack)(1 − 10⁻⁹)."""
    c = s.budget.coordinates
    delta = mpfr(mpq(s.params["delta"]))
    eps = gmpy2.log(mpfr(s.guarantee.exp_epsilon)) + gmpy2.log1p(-delta / 2)
    return eps, (delta / 2 - c * mpfr(mpq(s.gaussian.slack))) * (1 - mpfr("1e-9")), c


@pytest.mark.parametrize("case", curve_cases(GAUSSIAN), ids=case_id)
def test_gaussian_calibration(case: tuple[str, Fraction, Fraction, int]) -> None:
    """σ: Balle–Wang Thm 8 for ℓ₂ sensitivity √c, Φ(√c/(2σ) − ε′σ/√c) − e^{ε′}·Φ(−√c/(2σ) −
    ε′σ/√c) ≤ δ″ (up to 1e-9 relative: the bisection runs on floats) and σ minimal to 1e-5; τ:
    Φ((1 − τ)/σ) = 1 − (1 − δ/2)^{1/c} (1e-9 relative): c new partitions all stay below τ with
    probability 1 − δ/2 (Gopi et al.'s calibration, c = ℓ₀)."""
    s = grid_selector(case)
    sigma, tau = mpfr(s.derived["sigma"]), mpfr(s.derived["tau"])
    with gmpy2.context(gmpy2.get_context(), precision=PRECISION):
        eps, target, c = joint_calibration(s)
        root = gmpy2.sqrt(mpfr(c))

        def leak(sg: Any) -> Any:
            a, b = root / (2 * sg), eps * sg / root
            return gaussian_phi(a - b) - gmpy2.exp(eps) * gaussian_phi(-a - b)

        assert leak(sigma) <= target * (1 + mpfr("1e-9"))
        assert leak(sigma * (1 - mpfr("1e-5"))) > target
        appear = -gmpy2.expm1(gmpy2.log1p(-mpfr(mpq(s.params["delta"])) / 2) / c)
        assert abs(gaussian_phi((1 - tau) / sigma) / appear - 1) <= mpfr("1e-9")
    assert s.keep_probability(1) <= appear * (1 + GAUSS_SLACK)


@pytest.mark.parametrize("case", curve_cases(GAUSSIAN), ids=case_id)
def test_gaussian_pairs_are_gdp_and_compose_to_at_most_delta(
    case: tuple[str, Fraction, Fraction, int],
) -> None:
    """Every pair of neighbouring positive keep probabilities is μ-GDP (rigorous enclosures) up
    to the declared slack (a few grid units) on either side, μ = 1/σ; the declared δ is the ℓ₂
    composition over ℓ₀ partitions, at most the δ asked for, at the whole e^ε (a rigorous lower
    bound of which it is)."""
    s = grid_selector(case)
    mu = s.gaussian.mu
    assert abs(float(mu) * s.derived["sigma"] - 1) < 1e-15
    slack = s.gaussian.slack  # K grid units, K ≪ δ/(2ℓ₀·2^-63)
    assert 2 <= slack / GRID <= mpq(case[2]) / 2 / 64 / GRID / case[3]
    keep = [s.keep_probability(n) for n in range(s.saturation + 1)]
    step = max(1, len(keep) // 300)  # MPFR erfc dominates: a spread of pairs on long tables
    for n in range(1, len(keep) - 1, step):
        assert pair_slack(keep[n], keep[n + 1], mu) <= slack, n
    l0 = case[3]
    appear = next(p for p in keep if p > 0)
    g = s.guarantee
    assert g.delta == s.gaussian.delta(g.exp_epsilon, l0, l0, l0, appear) <= mpq(case[2])
    assert g.exp_epsilon <= exp_lower_bound(case[1]) and g.exp_epsilon == s.budget.exp_epsilon
    assert g.neighbouring.max_partitions == l0


def test_gaussian_midpoint_at_l0_10_is_gopis() -> None:
    """ε = 1, δ = 10⁻⁵, ℓ₀ = 10: Gopi et al.'s calibration (σ for ℓ₂ sensitivity √10 at
    (ε, δ/2), τ = 1 + σΦ⁻¹((1 − δ/2)^{1/10})) keeps half the partitions from n = ⌈τ⌉ = 62 on;
    splitting (ε, δ) per partition, as before, put the midpoint at 187."""
    s = selector(
        GAUSSIAN, epsilon=Fraction(1), delta=Fraction(1, 10**5), max_partitions_contributed=10
    )
    with gmpy2.context(gmpy2.get_context(), precision=PRECISION):
        delta, root = mpfr("1e-5"), gmpy2.sqrt(mpfr(10))

        def leak(sg: Any) -> Any:
            a, b = root / (2 * sg), sg / root
            return gaussian_phi(a - b) - gmpy2.exp(mpfr(1)) * gaussian_phi(-a - b)

        low, high = mpfr(1), mpfr(100)
        while high - low > mpfr("1e-12"):
            mid = (low + high) / 2
            low, high = (mid, high) if leak(mid) > delta / 2 else (low, mid)
        quantile = gmpy2.sqrt(mpfr(2)) * erfcinv_twice(-gmpy2.expm1(gmpy2.log1p(-delta / 2) / 10))
        tau = 1 + high * quantile
    assert int(gmpy2.ceil(tau)) == 62
    assert s.kept_from(Fraction(1, 2)) == 62
    assert abs(s.derived["sigma"] / float(high) - 1) < 1e-5


def erfcinv_twice(p: Any) -> Any:
    """x with erfc(x) = 2p (so that Φ(−√2·x) = p and Φ(√2·x) = 1 − p), by bisection in MPFR."""
    low, high = mpfr(-10), mpfr(10)
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if gmpy2.erfc(mid) > 2 * p else (low, mid)
    return high


class UnderstatedGaussian(GaussianThresholding):
    """A broken variant: declares μ half its true value, hence a δ far too small."""

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.gaussian = GaussianPairs(self.gaussian.mu / 2, self.gaussian.slack)
        c = self.budget.coordinates
        appear = next(v for v in self.table.values if v > 0)
        self.declared_delta = self.gaussian.delta(
            self.budget.exp_epsilon, c, c, c, mpq(appear, 1 << 63)
        )


def test_conformance_catches_an_understated_gaussian() -> None:
    good = selector(GAUSSIAN, epsilon=1, delta=Fraction(1, 10**5), max_partitions_contributed=3)
    assert selector_privacy(good) == []
    bad = UnderstatedGaussian(epsilon=1, delta=Fraction(1, 10**5), max_partitions_contributed=3)
    assert bad.guarantee.delta < good.guarantee.delta * 6 / 10  # δ_G shrinks, δ_A stays
    failures = selector_privacy(bad)
    assert failures and "μ-GDP" in failures[0]
