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
from selector_support import (
    GAUSSIAN,
    GRID,
    LAPLACE,
    OPTIMAL,
    case_id,
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


@pytest.mark.parametrize("case", curve_cases(LAPLACE), ids=case_id)
def test_laplace_never_above_its_curve(case: tuple[str, Fraction, Fraction, int]) -> None:
    """π̂(n) ≤ π_Lap(n) for n < saturation; π̂(1) = ⌊δ_c·2^63⌋/2^63 (B5: π_Lap(1) = δ_c);
    π̂ ≤ the optimal selector's π̂ (the same recurrence caps both)."""
    s = grid_selector(case)
    check_laplace(s)
    assert s.keep_probability(1) == floor_grid(s.budget.delta) * GRID


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
    assert s.keep_probability(1) == floor_grid(s.budget.delta) * GRID


@pytest.mark.parametrize(("epsilon", "delta"), [(1, 1e-3), (2, 0.1), (5, 2.0**-20), (0.5, 1e-6)])
def test_laplace_pi1_with_float_delta(epsilon: float, delta: float) -> None:
    """With a float δ, δ·2^63 is often an integer; the cap, evaluated rounding down, then lands
    one grid step below it: π̂(1) ∈ {δ − 2^-63, δ} (observed, harmless: only lower)."""
    s = selector(LAPLACE, epsilon=epsilon, delta=delta)
    v1 = floor_grid(s.keep_probability(1))
    assert floor_grid(s.budget.delta) - 1 <= v1 <= floor_grid(s.budget.delta)
    check_laplace(s)


def gaussian_phi(x: Any) -> Any:
    """Φ(x) = erfc(−x/√2)/2 in MPFR (call inside a high-precision context)."""
    return gmpy2.erfc(-mpfr(x) / gmpy2.sqrt(mpfr(2))) / 2


@pytest.mark.parametrize("case", curve_cases(GAUSSIAN), ids=case_id)
def test_gaussian_never_above_its_curve(case: tuple[str, Fraction, Fraction, int]) -> None:
    """π̂(n) ≤ Φ((n − τ)/σ)·(1 + 2^-48) for every n (slack: see the module docstring), and
    π̂ ≤ the optimal selector's π̂."""
    s = grid_selector(case)
    sigma, tau = mpfr(s.derived["sigma"]), mpfr(s.derived["tau"])
    with gmpy2.context(gmpy2.get_context(), precision=PRECISION):
        for n in range(1, s.saturation + 1):
            phi = mpq(gaussian_phi((n - tau) / sigma))
            assert s.keep_probability(n) <= phi * (1 + GAUSS_SLACK), n
    assert s.keep_probability(s.saturation) == 1
    opt = grid_selector((OPTIMAL, *case[1:]))
    step = max(1, s.saturation // 200)
    for n in range(0, s.saturation + 2, step):
        assert s.keep_probability(n) <= opt.keep_probability(n), n


@pytest.mark.parametrize("case", curve_cases(GAUSSIAN), ids=case_id)
def test_gaussian_calibration(case: tuple[str, Fraction, Fraction, int]) -> None:
    """σ: Balle–Wang Thm 8 at (ε_c, δ_c/2), Φ(1/(2σ) − εσ) − e^ε·Φ(−1/(2σ) − εσ) ≤ δ_c/2 (up to
    1e-9 relative: the bisection runs on floats) and σ minimal to 1e-5; τ: Φ((1 − τ)/σ) = δ_c/2
    (1e-9 relative), i.e. the baseline keeps one unit with probability δ_c/2."""
    s = grid_selector(case)
    sigma, tau = mpfr(s.derived["sigma"]), mpfr(s.derived["tau"])
    half = mpfr(mpq(s.budget.delta)) / 2
    with gmpy2.context(gmpy2.get_context(), precision=PRECISION):
        eps = gmpy2.log(mpfr(s.per_partition.exp_epsilon))

        def leak(sg: Any) -> Any:
            a, b = 1 / (2 * sg), eps * sg
            return gaussian_phi(a - b) - gmpy2.exp(eps) * gaussian_phi(-a - b)

        assert leak(sigma) <= half * (1 + mpfr("1e-9"))
        assert leak(sigma * (1 - mpfr("1e-5"))) > half
        assert abs(gaussian_phi((1 - tau) / sigma) / half - 1) <= mpfr("1e-9")
    assert s.keep_probability(1) <= floor_grid(s.budget.delta) * GRID
