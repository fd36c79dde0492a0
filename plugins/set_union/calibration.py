"""Calibrating the weighted Gaussian rounds of a set union (Gopi et al. ICML 2020, §4; DP-SIPS,
Swanberg, Desfontaines, Haney 2023) on the exact discrete Gaussian, and the δ they declare.

**The argument** (docs/mechanisms.md#set-union-selectors). Weights live on a grid: weight 1 is G
units, and a unit holding t labels gives each w_t = ⌊G/√t⌋ units, so its weight vector has ℓ₂
norm ≤ G. Round r adds N_ℤ(0, s_r²) to each label's total and keeps the labels at or above T_r.
Neighbouring data differ in one unit (two for replace-one, whose shifts have ℓ₂ norm ≤ √2·G).
On the labels other units hold too, each round's keep decisions are independent Bernoulli pairs,
(w/s_r + 2ζ_r)-GDP each (:class:`~dpplug.kinds.set_union_selector.thresholded_gaussian
.RoundCertificate`), up to a total variation τ_r each outside the checked window: the rounds
compose adaptively to μ-GDP with μ² = Σ_r μ_r² (DRS Thm 3.2 and Cor. 3.3), μ_r ≤ G/s_r +
2ζ_r√Δ₀ (times √2 for replace-one). Labels only the changed unit holds are kept with probability
at most A_r in round r (an upper bound on max_t 1 − (1 − Pr[Z ≥ T_r − w_t])^t); they are never
kept on the other side. With A = Σ_r A_r, the argument of Gopi et al. (Thm 4.1) with the
appearing labels conditioned away gives (ε, δ)-DP for

    δ = δ_μ(e^ε·(1 − A)) + A + (1 + e^ε)·c·Σ_r τ_r,

δ_μ the μ-GDP trade-off's δ at that e^ε (DRS Cor. 2.13, :func:`~dpplug.kinds.partition_selector
.gaussian_dp.gdp_delta`), c = Δ₀ (2Δ₀ for replace-one) the labels whose pairs change. Every term
is a rigorous rational upper bound; e^ε is the dyadic rational just below the ε asked for.

**The choice** (floats, checked by the argument above): G = 2^⌈log₂(100√Δ₀)⌉ (at least 128), so
weights lose at most 1% to rounding; δ split between A and δ_μ at the share that minimises the
first round's threshold; round r gets the share ρ^{r−1}/Σρ^j of μ² and of A (DP-SIPS's
increasing budget: ρ = ``budget_ratio``); s_r from μ_r, T_r the smallest integer with A_r within
its share, the window where Pr[Z > window] is negligible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from gmpy2 import mpq
from scipy import special
from scipy.optimize import brentq

from dpplug.errors import BadParameter
from dpplug.exact import Rat, exp_lower
from dpplug.kinds.set_union_selector.declared import compose_rounds
from dpplug.kinds.set_union_selector.thresholded_gaussian import (
    RoundCertificate,
    closeness,
    unit_weights,
)

#: Bits of the dyadic e^ε.
EXP_BITS = 48
#: Shares of δ tried for the appearing labels.
SPLITS = tuple(i / 20 for i in range(1, 20))


@dataclass(frozen=True)
class Calibration:
    """The rounds and the guarantee they declare (see the module docstring)."""

    rounds: tuple[RoundCertificate, ...]
    exp_epsilon: Rat
    delta: Rat
    mu: Rat
    appear: Rat
    slack: Rat


def grid_for(items: int) -> int:
    """G = 2^⌈log₂(100√Δ₀)⌉, at least 128."""
    return max(128, 1 << math.ceil(math.log2(100 * math.sqrt(items))))


def _gdp_delta_float(mu: float, epsilon: float) -> float:
    return float(
        special.ndtr(-epsilon / mu + mu / 2)
        - math.exp(epsilon) * special.ndtr(-epsilon / mu - mu / 2)
    )


def _mu_for(epsilon: float, delta: float) -> float:
    """The largest μ (floats, a choice) whose δ at ε is δ."""
    return float(brentq(lambda mu: _gdp_delta_float(mu, epsilon) - delta, 1e-6, 60.0))


def _appear_float(s: float, threshold: int, weights: np.ndarray) -> float:
    t = np.arange(1, len(weights) + 1)
    p = special.ndtr(-(threshold - weights - 0.5) / s)
    return float(np.max(-np.expm1(t * np.log1p(-p))))


def _threshold_float(s: float, weights: np.ndarray, budget: float) -> int:
    low, high = 0, int(weights[0] + 60 * s) + 1
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if _appear_float(s, mid, weights) <= budget else (mid, high)
    return high


def calibrate(
    epsilon: Rat, delta: Rat, items: int, rounds: int, ratio: Rat, replace_one: bool
) -> Calibration:
    """The rounds for (ε, δ), Δ₀ = *items*, *rounds* rounds of budget ratio *ratio*."""
    exp_epsilon = exp_lower(mpq(epsilon), EXP_BITS)
    eps, target = math.log(float(exp_epsilon)), float(delta)
    grid = grid_for(items)
    weights = np.array(unit_weights(grid, items), dtype=np.float64)
    raw = [float(ratio) ** r for r in range(rounds)]
    shares = [x / sum(raw) for x in raw]
    units = 2 if replace_one else 1
    coordinates = units * items

    def plan(split: float) -> tuple[float, list[float], list[int]]:
        mu = _mu_for(eps + math.log1p(-split * target), (1 - split) * target * (1 - 1e-3))
        scales = [grid * math.sqrt(units) / (mu * math.sqrt(share)) for share in shares]
        budgets = [split * target * share * (1 - 1e-3) for share in shares]
        thresholds = [_threshold_float(s, weights, b) for s, b in zip(scales, budgets, strict=True)]
        return mu, scales, thresholds

    best = min(SPLITS, key=lambda split: plan(split)[2][0] / grid)
    _, scales, thresholds = plan(best)
    tau_target = target * 2.0**-24 / (coordinates * rounds * (1 + float(exp_epsilon)))
    certificates = []
    for r, (s, threshold) in enumerate(zip(scales, thresholds, strict=True)):
        certificates.append(
            _certificate(grid, items, s, threshold, tau_target, best * target * shares[r])
        )
    return _declared(tuple(certificates), exp_epsilon, mpq(delta), units)


def _certificate(
    grid: int, items: int, s: float, threshold: int, tau: float, appear_budget: float
) -> RoundCertificate:
    """A round's certificate near scale *s* (first ζ = 1/s², doubled if the check fails)."""
    window = math.ceil(s * math.sqrt(2 * math.log(1 / tau)))
    reach = window + grid
    for doubling in range(4):
        zeta_float = 2.0**doubling / (s * s)
        # s chosen so that G/s + 2ζ√Δ₀ is the μ of the plan.
        wanted = s / (1 + 2 * zeta_float * math.sqrt(items) * s / grid)
        sigma2 = mpq(math.ceil(wanted * wanted * 256), 256)
        zeta = mpq(1 << doubling, math.ceil(wanted * wanted))
        found = closeness(sigma2, zeta, reach, window)
        if found is not None:
            break
    else:
        raise BadParameter(f"the discrete Gaussian of s ≈ {s:.4g} could not be certified")
    certificate = RoundCertificate(grid, items, sigma2, threshold, zeta, reach, found)
    while certificate.appear() > mpq(appear_budget):
        certificate = RoundCertificate(
            grid, items, sigma2, certificate.threshold + 1, zeta, reach, found
        )
    return certificate


def _declared(
    rounds: tuple[RoundCertificate, ...], exp_epsilon: Rat, delta: Rat, units: int
) -> Calibration:
    composed = compose_rounds(rounds, exp_epsilon, units)
    if composed.appear >= 1:
        raise BadParameter("the appearing labels' bound reaches 1: raise delta")
    if composed.delta > delta:
        raise BadParameter(
            f"the calibrated rounds declare δ = {float(composed.delta):.4g}, above δ = "
            f"{float(delta):.4g}: raise delta or epsilon"
        )
    return Calibration(
        rounds, exp_epsilon, composed.delta, composed.mu, composed.appear, composed.slack
    )
