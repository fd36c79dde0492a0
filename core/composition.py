"""Privacy accounting for mechanisms made of many pure steps, or of Gaussian noise: how large a
step may be for a total (ε, δ) budget, computed rigorously.

- **Composition** (:func:`step_budget`). k adaptively chosen ε₀-DP mechanisms are together
  (kε₀, 0)-DP (basic composition) and (ε′, δ′)-DP with
  ε′ = √(2k·ln(1/δ′))·ε₀ + kε₀(e^{ε₀} − 1) (Dwork, Rothblum, Vadhan, "Boosting and Differential
  Privacy", FOCS 2010, Thm III.3; Dwork & Roth 2014, Thm 3.20). Blum & Roth's Thm 2.10 is the
  special case ε₀ ≤ ε′/√(8k·ln(1/δ′)); the largest ε₀ the theorem allows is about twice that.
- **zCDP** (:func:`largest_rho`). ρ-zCDP implies (ε, δ)-DP for
  δ = inf_{α>1} e^{(α−1)(αρ−ε)}/(α−1)·(1 − 1/α)^α (Canonne, Kamath, Steinke, "The Discrete
  Gaussian for Differential Privacy", NeurIPS 2020, Cor. 13).

Every bound that is declared is evaluated in balls (:mod:`dpplug.bounds`); floats only choose
candidates (a step ε₀, a Rényi order α), which are then checked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gmpy2 import mpq
from scipy.optimize import minimize_scalar

from dpplug.bounds import Ball, ball, log_float, upper_of
from dpplug.exact import exp_upper

Rat = Any  # gmpy2.mpq

#: Significant bits of a searched step parameter (ε₀, ρ): it is a dyadic rational this precise.
STEP_BITS = 40
#: Denominator bits of the rational bound on e^ε a composed guarantee reports.
EXP_BITS = 64


def _dyadic_below(x: float) -> Rat:
    """A dyadic rational ≤ x > 0 with :data:`STEP_BITS` significant bits."""
    shift = STEP_BITS - math.frexp(x)[1]
    numerator = math.floor(math.ldexp(x, shift))
    return mpq(numerator, 1 << shift) if shift >= 0 else mpq(numerator << -shift)


def advanced_epsilon(epsilon0: Rat, steps: int, delta: Rat) -> Rat:
    """A rational ≥ √(2k·ln(1/δ′))·ε₀ + kε₀(e^{ε₀} − 1) (DRV10 Thm III.3) for k = *steps*."""

    def composed() -> Ball:
        e0 = ball(epsilon0)
        return (2 * steps * (1 / ball(delta)).log()).sqrt() * e0 + steps * e0 * e0.expm1()

    return upper_of(composed)


def advanced_step_estimate(epsilon: float, log_inverse_delta: float, steps: int) -> float:
    """The largest ε₀ with √(2k·ln(1/δ))·ε₀ + kε₀(e^{ε₀} − 1) ≤ ε, in floats: a search, for
    choosing parameters (:func:`step_budget` checks what it declares). The root of
    kε₀² + √(2k·ln(1/δ))·ε₀ = ε (e^{ε₀} − 1 ≥ ε₀) is an upper bound; Newton's method on the
    increasing convex left side then converges to the root from above."""
    root = math.sqrt(2 * steps * log_inverse_delta)
    e0 = (-root + math.sqrt(root * root + 4 * steps * epsilon)) / (2 * steps)
    for _ in range(50):
        value = root * e0 + steps * e0 * math.expm1(e0) - epsilon
        slope = root + steps * (math.expm1(e0) + e0 * math.exp(e0))
        step = value / slope
        e0 -= step
        if abs(step) <= 1e-15 * e0:
            break
    return e0


@dataclass(frozen=True)
class StepBudget:
    """The per-step ε₀ of *steps* pure steps that compose to at most (ε, δ).

    ``rule`` is ``"basic"`` (ε₀ = ε/k, δ′ = 0) or ``"advanced"`` (DRV10); ``epsilon`` is a
    rational upper bound on the composed ε (at most the budget), ``delta`` the δ′ used.
    """

    epsilon0: Rat
    steps: int
    epsilon: Rat
    delta: Rat
    rule: str

    @property
    def exp_epsilon(self) -> Rat:
        """A rational ≥ e^ε for the composed ε: what a guarantee states."""
        return exp_upper(self.epsilon, EXP_BITS)


def step_budget(epsilon: Rat, delta: Rat, steps: int) -> StepBudget:
    """The largest per-step ε₀ (a dyadic rational, or exactly ε/k) such that *steps* ε₀-DP steps
    compose to (ε, δ)-DP, by basic composition (δ = 0, or when it is better) or the advanced
    composition theorem."""
    epsilon, delta = mpq(epsilon), mpq(delta)
    basic = StepBudget(epsilon / steps, steps, epsilon, mpq(0), "basic")
    if delta == 0:
        return basic
    found = advanced_step_estimate(float(epsilon), log_float(1 / delta), steps)
    if found <= 0:
        return basic
    candidate = _dyadic_below(found)
    composed = advanced_epsilon(candidate, steps, delta)
    while composed > epsilon:  # the float search overshot by rounding: step down
        candidate = _dyadic_below(float(candidate) * (1 - 2.0**-30))
        composed = advanced_epsilon(candidate, steps, delta)
    if candidate <= basic.epsilon0:
        return basic
    return StepBudget(candidate, steps, composed, delta, "advanced")


def _log_delta(r: float, e: float) -> tuple[float, float]:
    """(min over α of ln δ(α), the minimising α) for CKS Cor. 13, in floats (a search)."""

    def log_delta(a: float) -> float:
        return (a - 1) * (a * r - e) - math.log(a - 1) + a * math.log1p(-1 / a)

    guess = max((e + r) / (2 * r), 2.0)
    found = minimize_scalar(
        log_delta, bounds=(1 + 1e-12, 4 * guess + 10), method="bounded", options={"xatol": 1e-12}
    )
    return float(found.fun), float(found.x)


def zcdp_delta(rho: Rat, epsilon: Rat) -> Rat:
    """A rational ≥ the δ of CKS Cor. 13 for ρ-zCDP at ε, at a Rényi order α chosen by a
    float search and then evaluated in balls."""
    alpha = mpq(_log_delta(float(rho), float(epsilon))[1])

    def delta() -> Ball:
        a = ball(alpha)
        exponent = ball((alpha - 1) * (alpha * mpq(rho) - mpq(epsilon)))
        return (exponent - (a - 1).log() + a * (1 - 1 / a).log()).exp()

    return upper_of(delta)


def largest_rho(epsilon: Rat, delta: Rat) -> Rat:
    """The largest ρ (a dyadic rational) whose zCDP implies (ε, δ)-DP by CKS Cor. 13."""
    epsilon, delta = mpq(epsilon), mpq(delta)
    low, high = 0.0, float(epsilon)
    for _ in range(100):
        middle = (low + high) / 2
        fits = _log_delta(middle, float(epsilon))[0] <= log_float(delta)
        low, high = (middle, high) if fits else (low, middle)
    candidate = _dyadic_below(low)
    while zcdp_delta(candidate, epsilon) > delta:
        candidate = _dyadic_below(float(candidate) * (1 - 2.0**-30))
    return candidate
