"""Privacy accounting for mechanisms made of many pure steps, or of Gaussian noise: how large a
step may be for a total (ε, δ) budget, computed rigorously.

- **Composition** (:func:`step_budget`). k adaptively chosen ε₀-DP mechanisms are together
  (kε₀, 0)-DP (basic composition), and (ε, δ)-DP exactly for
  δ ≥ Σ_l C(k, l)·max(0, e^{(k−l)ε₀} − e^ε·e^{lε₀})/(1 + e^{ε₀})^k (:func:`optimal_delta`: every
  ε₀-DP mechanism is a post-processing of randomized response with e^{ε₀}, adaptively too, so
  this is the best bound for the class; Kairouz, Oh, Viswanath, "The Composition Theorem for
  Differential Privacy", ICML 2015, Thm 3.3; Murtagh & Vadhan 2016). It sums up to k/2 terms, so
  beyond :data:`MAX_OPTIMAL_STEPS` steps the advanced composition theorem is used instead:
  ε′ = √(2k·ln(1/δ′))·ε₀ + kε₀(e^{ε₀} − 1) (Dwork, Rothblum, Vadhan, "Boosting and Differential
  Privacy", FOCS 2010, Thm III.3; Dwork & Roth 2014, Thm 3.20), whose step is about 1.3 times
  smaller at δ = 10⁻⁶. Blum & Roth's Thm 2.10 is the special case ε₀ ≤ ε′/√(8k·ln(1/δ′)); the
  largest ε₀ the advanced theorem allows is about twice that.
- **zCDP** (:func:`largest_rho`). ρ-zCDP implies (ε, δ)-DP for
  δ = inf_{α>1} e^{(α−1)(αρ−ε)}/(α−1)·(1 − 1/α)^α (Canonne, Kamath, Steinke, "The Discrete
  Gaussian for Differential Privacy", NeurIPS 2020, Cor. 13).

Every bound that is declared is evaluated in balls (:mod:`dpplug.bounds`); floats only choose
candidates (a step ε₀, a Rényi order α), which are then checked.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from gmpy2 import mpq
from scipy import special
from scipy.optimize import minimize_scalar

from dpplug.bounds import Ball, ball, log_float, positive_part, upper_of
from dpplug.exact import Rat, exp_upper

#: Significant bits of a searched step parameter (ε₀, ρ): it is a dyadic rational this precise.
STEP_BITS = 40
#: Denominator bits of the rational bound on e^ε a composed guarantee reports.
EXP_BITS = 64
#: The most steps whose optimal composition (:func:`optimal_delta`, up to k/2 terms) is
#: computed; beyond, the advanced composition theorem.
MAX_OPTIMAL_STEPS = 1 << 15


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


def _optimal_sum(
    epsilon0: Rat, steps: int, exp_epsilon: Ball, above: Callable[[Rat], bool | None]
) -> Ball:
    """The sum of :func:`optimal_delta`; ``above(x)`` tells whether e^x > e^ε (None: undecided,
    the term is then enclosed with 0). Terms with (k − 2l)ε₀ ≤ 0 are never positive (ε ≥ 0), and
    the exponent only decreases with l, so the sum stops at the first term that is not. The
    weights C(k, l)·p^{k−l}·(1 − p)^l, p = e^{ε₀}/(1 + e^{ε₀}), are carried from one term to the
    next (times (k − l)/(l + 1)·e^{−ε₀}), so a term costs a few ball operations whatever k."""
    e0 = ball(epsilon0).exp()
    weight = (e0 / (1 + e0)) ** steps
    shrink = 1 / e0
    total = ball(0)
    for ones in range((steps + 1) // 2):
        exponent = (steps - 2 * ones) * mpq(epsilon0)
        side = above(exponent)
        if side is False:
            break
        term = weight * (1 - exp_epsilon * (-ball(exponent)).exp())
        total += term if side else positive_part(term)
        weight *= ball(mpq(steps - ones, ones + 1)) * shrink
    return total


def optimal_delta(epsilon0: Rat, steps: int, epsilon: Rat) -> Ball:
    """The smallest δ for which *steps* adaptively chosen ε₀-DP mechanisms are (ε, δ)-DP
    (KOV15 Thm 3.3; see the module docstring), as a ball, for a rational ε."""
    epsilon = mpq(epsilon)
    return _optimal_sum(epsilon0, steps, ball(epsilon).exp(), lambda x: x > epsilon)


def exp_exceeds(x: Rat, exp_epsilon: Rat) -> bool | None:
    """Whether e^x > e^ε for a rational x and a rational e^ε > 0, decided in balls at the
    working precision (None: undecided); exactly when x = 0. They are never equal otherwise
    (e^x is irrational for a rational x ≠ 0, by Lindemann), so a higher precision decides."""
    if x == 0:
        return bool(exp_epsilon < 1)
    gap = ball(x) - ball(exp_epsilon).log()
    return True if gap > 0 else False if gap < 0 else None


def optimal_delta_at(epsilon0: Rat, steps: int, exp_epsilon: Rat) -> Ball:
    """:func:`optimal_delta` at a rational e^ε ≥ 1 (a declared guarantee's), each term's sign
    decided by :func:`exp_exceeds` (or the term enclosed with 0)."""
    above = partial(exp_exceeds, exp_epsilon=exp_epsilon)
    return _optimal_sum(epsilon0, steps, ball(exp_epsilon), above)


def optimal_step_estimate(epsilon: float, log_delta: float, steps: int) -> float:
    """The largest ε₀ with :func:`optimal_delta` ≤ δ, in floats (a bisection in log space, for
    choosing parameters; :func:`step_budget` checks what it declares): at least ε/k, where the
    sum is 0."""
    ones = np.arange((steps + 1) // 2, dtype=np.float64)
    log_comb = (
        special.gammaln(steps + 1) - special.gammaln(ones + 1) - special.gammaln(steps - ones + 1)
    )

    def log_delta_of(e0: float) -> float:
        gap = (steps - 2 * ones) * e0 - epsilon
        live = gap > 0
        if not live.any():
            return -math.inf
        terms = (
            log_comb[live]
            + (steps - ones[live]) * e0
            + np.log(-np.expm1(-gap[live]))
            - steps * math.log1p(math.exp(e0))
        )
        return float(special.logsumexp(terms))

    # The optimal step is at least the basic and the advanced ones (both valid for the class),
    # and in practice within twice the larger: bracket there, else up to ε.
    low = max(epsilon / steps, advanced_step_estimate(epsilon, -log_delta, steps))
    high = min(epsilon, 2 * low)
    if log_delta_of(high) <= log_delta:
        high = epsilon
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if log_delta_of(middle) <= log_delta else (low, middle)
    return low


@functools.lru_cache(maxsize=4096)
def step_estimate(epsilon: float, log_inverse_delta: float, steps: int) -> float:
    """The per-step ε₀ :func:`step_budget` will about choose, in floats (for searches that choose
    other parameters around it, and call it for the same arguments again: kept): optimal
    composition up to :data:`MAX_OPTIMAL_STEPS` steps, advanced beyond, never below basic."""
    if steps <= MAX_OPTIMAL_STEPS:
        found = optimal_step_estimate(epsilon, -log_inverse_delta, steps)
    else:
        found = advanced_step_estimate(epsilon, log_inverse_delta, steps)
    return max(epsilon / steps, found)


@dataclass(frozen=True)
class StepBudget:
    """The per-step ε₀ of *steps* pure steps that compose to at most (ε, δ).

    ``rule`` is ``"basic"`` (ε₀ = ε/k, δ′ = 0), ``"optimal"`` (KOV15, up to
    :data:`MAX_OPTIMAL_STEPS` steps) or ``"advanced"`` (DRV10, beyond); ``epsilon`` is a
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
    compose to (ε, δ)-DP: by basic composition (δ = 0, or when it is better), the optimal
    composition theorem (up to :data:`MAX_OPTIMAL_STEPS` steps) or the advanced one."""
    epsilon, delta = mpq(epsilon), mpq(delta)
    basic = StepBudget(epsilon / steps, steps, epsilon, mpq(0), "basic")
    if delta == 0:
        return basic
    if steps <= MAX_OPTIMAL_STEPS:
        return _optimal_budget(epsilon, delta, steps, basic)
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


def _optimal_budget(epsilon: Rat, delta: Rat, steps: int, basic: StepBudget) -> StepBudget:
    """The dyadic ε₀ just below the float estimate whose :func:`optimal_delta` is at most δ in
    balls, stepping down where rounding overshot; basic composition if that is not larger."""
    candidate = _dyadic_below(optimal_step_estimate(float(epsilon), -log_float(1 / delta), steps))
    while upper_of(partial(optimal_delta, candidate, steps, epsilon)) > delta:
        candidate = _dyadic_below(float(candidate) * (1 - 2.0**-30))
    if candidate <= basic.epsilon0:
        return basic
    return StepBudget(candidate, steps, epsilon, delta, "optimal")


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
