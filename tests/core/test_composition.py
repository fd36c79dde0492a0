"""Composition and zCDP accounting (dpplug.composition): every declared bound is an upper bound
of the exact expression (checked against 80-digit evaluations), and the searched step parameter
is as large as the theorem allows, up to the precision of its dyadic representation."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from gmpy2 import mpq

from dpplug.composition import (
    STEP_BITS,
    advanced_epsilon,
    largest_rho,
    step_budget,
    zcdp_delta,
)


def drv(epsilon0: Fraction, steps: int, delta: Fraction) -> mpmath.mpf:
    """√(2k·ln(1/δ))·ε₀ + kε₀(e^{ε₀} − 1) at 80 digits."""
    with mpmath.workdps(80):
        e0 = mpmath.mpf(epsilon0)
        root = mpmath.sqrt(2 * steps * mpmath.log(1 / mpmath.mpf(delta)))
        return root * e0 + steps * e0 * mpmath.expm1(e0)


def cks_delta(rho: Fraction, epsilon: Fraction, alpha: mpmath.mpf) -> mpmath.mpf:
    """CKS 2020 Cor. 13's expression at order α, 80 digits."""
    with mpmath.workdps(80):
        r, e, a = mpmath.mpf(rho), mpmath.mpf(epsilon), mpmath.mpf(alpha)
        return mpmath.exp((a - 1) * (a * r - e)) / (a - 1) * (1 - 1 / a) ** a


def frac(value: object) -> Fraction:
    q = mpq(value)
    return Fraction(int(q.numerator), int(q.denominator))


@pytest.mark.parametrize(
    ("e0", "steps", "delta"),
    [(Fraction(1, 100), 200, Fraction(1, 10**6)), (Fraction(3, 7), 5, Fraction(1, 3))],
)
def test_advanced_epsilon_bounds_the_theorem_from_above(
    e0: Fraction, steps: int, delta: Fraction
) -> None:
    bound = advanced_epsilon(mpq(e0), steps, mpq(delta))
    exact = drv(e0, steps, delta)
    with mpmath.workdps(80):
        assert exact <= mpmath.mpf(frac(bound)) <= exact * (1 + mpmath.mpf(10) ** -60)


def test_pure_budget_is_basic_composition_exactly() -> None:
    budget = step_budget(mpq(3, 2), 0, 6)
    assert (budget.rule, budget.epsilon0, budget.epsilon, budget.delta) == (
        "basic",
        mpq(1, 4),
        mpq(3, 2),
        0,
    )
    assert budget.exp_epsilon >= mpq(math.e) ** mpq(3, 2) - mpq(1, 10**12)  # e^1.5, rounded up
    with mpmath.workdps(40):
        assert mpmath.mpf(frac(budget.exp_epsilon)) >= mpmath.exp(mpmath.mpf(3) / 2)


@pytest.mark.parametrize("steps", [2, 50, 2000, 10**6])
def test_advanced_budget_is_sound_maximal_and_beats_blum_roth(steps: int) -> None:
    epsilon, delta = mpq(1), mpq(1, 10**6)
    budget = step_budget(epsilon, delta, steps)
    basic = epsilon / steps
    if budget.rule == "basic":
        assert budget.epsilon0 == basic and steps <= 2
        return
    e0 = frac(budget.epsilon0)
    assert budget.epsilon0 > basic
    assert drv(e0, steps, frac(delta)) <= 1  # sound
    with mpmath.workdps(80):  # the declared ε bounds the composed one
        assert mpmath.mpf(frac(budget.epsilon)) >= drv(e0, steps, frac(delta))
    assert budget.epsilon <= 1
    bigger = e0 * (1 + Fraction(1, 2 ** (STEP_BITS - 8)))  # maximal up to its precision
    assert drv(bigger, steps, frac(delta)) > 1
    blum_roth = 1 / math.sqrt(8 * steps * math.log(1 / float(delta)))  # Thm 2.10's step
    assert float(budget.epsilon0) > 1.9 * blum_roth


@pytest.mark.parametrize(
    ("epsilon", "delta"),
    [(mpq(1), mpq(1, 10**6)), (mpq(1, 4), mpq(1, 10**9)), (mpq(8), mpq(1, 100))],
)
def test_largest_rho_converts_to_the_budget_and_no_larger_rho_does(
    epsilon: mpq, delta: mpq
) -> None:
    rho = largest_rho(epsilon, delta)
    declared = zcdp_delta(rho, epsilon)
    assert declared <= delta
    with mpmath.workdps(80):
        optimum = (mpmath.mpf(frac(epsilon)) + float(rho)) / (2 * float(rho))
        centre = max(mpmath.mpf("1.01"), optimum)
        orders = [centre + mpmath.mpf(j) / 256 for j in range(-1024, 1025)]
        orders = [a for a in orders if a > 1]
        # the declared δ is the conversion at a nearly optimal order (searched in floats)
        best = min(cks_delta(frac(rho), frac(epsilon), a) for a in orders)
        assert mpmath.mpf(frac(declared)) <= best * (1 + mpmath.mpf(10) ** -3)
        # a ρ 0.1% larger converts to more than δ at every order: ρ is (nearly) the largest
        larger = frac(rho) * (1 + Fraction(1, 1000))
        assert min(cks_delta(larger, frac(epsilon), a) for a in orders) > mpmath.mpf(frac(delta))
    # and it is at least Bun & Steinke's closed form (ε = ρ + 2√(ρ ln(1/δ)))
    log_inverse = math.log(1 / float(delta))
    bun_steinke = (math.sqrt(float(epsilon) + log_inverse) - math.sqrt(log_inverse)) ** 2
    assert float(rho) >= bun_steinke
