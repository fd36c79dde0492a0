"""Composition and zCDP accounting (dpplug.composition): every declared bound is an upper bound
of the exact expression (checked against 80-digit evaluations), and the searched step parameter
is as large as the theorem allows, up to the precision of its dyadic representation."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from math import comb

import mpmath
import pytest
from gmpy2 import mpq

from dpplug.bounds import Ball, ball, lower, precise, upper
from dpplug.composition import (
    MAX_OPTIMAL_STEPS,
    STEP_BITS,
    advanced_epsilon,
    advanced_step_estimate,
    largest_rho,
    optimal_delta_at,
    step_budget,
    step_estimate,
    zcdp_delta,
)
from dpplug.exact import exp_lower, exp_upper


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


def overlaps(a: Ball, b: Ball) -> bool:
    return bool(lower(a) <= upper(b) and lower(b) <= upper(a))


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


def kov(epsilon0: Fraction, steps: int, epsilon: Fraction) -> mpmath.mpf:
    """KOV15 Thm 3.3's δ at ε for k ε₀-DP steps, summed term by term at 80 digits (binomials
    from log-gamma, the terms with (k − 2l)ε₀ ≤ ε being 0)."""
    with mpmath.workdps(80):
        e0, e = mpmath.mpf(epsilon0), mpmath.mpf(epsilon)
        log_norm = steps * mpmath.log(1 + mpmath.exp(e0))
        total = mpmath.mpf(0)
        for ones in range(steps + 1):
            if (steps - 2 * ones) * e0 <= e:
                break
            log_comb = (
                mpmath.loggamma(steps + 1)
                - mpmath.loggamma(ones + 1)
                - mpmath.loggamma(steps - ones + 1)
            )
            term = mpmath.exp(log_comb + (steps - ones) * e0 - log_norm)
            total += term * (1 - mpmath.exp(e - (steps - 2 * ones) * e0))
        return total


@pytest.mark.parametrize("steps", [2, 50, 2000, 4096, MAX_OPTIMAL_STEPS])
def test_the_optimal_budget_is_sound_maximal_and_beats_the_advanced_theorem(steps: int) -> None:
    epsilon, delta = mpq(1), mpq(1, 10**6)
    budget = step_budget(epsilon, delta, steps)
    assert budget.rule == "optimal" and (budget.epsilon, budget.delta) == (epsilon, delta)
    e0 = frac(budget.epsilon0)
    assert budget.epsilon0 > epsilon / steps
    with mpmath.workdps(80):
        assert kov(e0, steps, Fraction(1)) <= mpmath.mpf(frac(delta))  # sound
        bigger = e0 * (1 + Fraction(1, 2 ** (STEP_BITS - 8)))  # maximal up to its precision
        assert kov(bigger, steps, Fraction(1)) > mpmath.mpf(frac(delta))
    if steps >= 50:
        advanced = advanced_step_estimate(1.0, math.log(10**6), steps)
        assert float(budget.epsilon0) > 1.25 * advanced


@pytest.mark.parametrize("steps", [MAX_OPTIMAL_STEPS + 1, 10**6])
def test_the_advanced_budget_beyond_the_optimal_steps_is_sound_maximal_and_beats_blum_roth(
    steps: int,
) -> None:
    epsilon, delta = mpq(1), mpq(1, 10**6)
    budget = step_budget(epsilon, delta, steps)
    assert budget.rule == "advanced"
    e0 = frac(budget.epsilon0)
    assert budget.epsilon0 > epsilon / steps
    assert drv(e0, steps, frac(delta)) <= 1  # sound
    with mpmath.workdps(80):  # the declared ε bounds the composed one
        assert mpmath.mpf(frac(budget.epsilon)) >= drv(e0, steps, frac(delta))
    assert budget.epsilon <= 1
    bigger = e0 * (1 + Fraction(1, 2 ** (STEP_BITS - 8)))  # maximal up to its precision
    assert drv(bigger, steps, frac(delta)) > 1
    blum_roth = 1 / math.sqrt(8 * steps * math.log(1 / float(delta)))  # Thm 2.10's step
    assert float(budget.epsilon0) > 1.9 * blum_roth


def test_one_step_and_pure_budgets_are_basic() -> None:
    assert step_budget(mpq(1), mpq(1, 10**6), 1).rule == "basic"
    assert step_budget(mpq(2), 0, 3).epsilon0 == mpq(2, 3)


def test_the_float_estimate_is_what_the_budget_declares_to_a_few_digits() -> None:
    for steps in (3, 60, 1000):
        found = step_estimate(1.0, math.log(10**6), steps)
        declared = float(step_budget(mpq(1), mpq(1, 10**6), steps).epsilon0)
        assert abs(found - declared) <= 1e-9 * declared
    assert step_estimate(1.0, math.log(10**6), 10**5) == advanced_step_estimate(
        1.0, math.log(10**6), 10**5
    )


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_the_optimal_composition_is_the_randomized_response_products_divergence(k: int) -> None:
    epsilon1, e = mpq(1, 2), exp_upper(mpq(k, 3), 64)
    with precise(256):
        found = optimal_delta_at(epsilon1, k, e)
        p = ball(epsilon1).exp() / (1 + ball(epsilon1).exp())  # Pr[the truthful side]
        brute = ball(0)
        for outcome in itertools.product((0, 1), repeat=k):
            ones = sum(outcome)
            left = p ** (k - ones) * (1 - p) ** ones
            right = p**ones * (1 - p) ** (k - ones)
            excess = left - ball(e) * right
            if excess > 0:
                brute += excess
        assert overlaps(found, brute)
        assert upper(found) > 0


def test_kov_theorem_3_3_at_its_own_epsilons() -> None:
    """δ_i = Σ_{l<i} C(k,l)(e^{(k−l)ε₀} − e^{(k−2i+l)ε₀})/(1+e^{ε₀})^k at e^ε = e^{(k−2i)ε₀},
    with e^ε given as a rational just above it."""
    k, epsilon0 = 4, mpq(3, 10)
    with precise(256):
        e0 = ball(epsilon0).exp()
        for i in range(1, 3):
            e = exp_upper((k - 2 * i) * epsilon0, 200)
            theorem = (
                sum(
                    (comb(k, j) * (e0 ** (k - j) - e0 ** (k - 2 * i + j)) for j in range(i)),
                    ball(0),
                )
                / (1 + e0) ** k
            )
            found = optimal_delta_at(epsilon0, k, e)
            assert upper(found) <= upper(theorem) and lower(theorem) - lower(found) < mpq(1, 2**150)


def test_pure_composition_is_zero_exactly_when_k_answers_fit() -> None:
    with precise(256):
        assert upper(optimal_delta_at(mpq(1), 3, exp_upper(mpq(3), 64))) == 0
        assert lower(optimal_delta_at(mpq(1), 3, exp_lower(mpq(3), 64))) > 0


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
