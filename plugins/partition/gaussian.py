"""Gaussian thresholding, the non-weighted baseline of Gopi et al. 2020
(docs/mechanisms.md#gaussian-thresholding), with exact keep decisions.

Per partition (ε_c, δ_c): σ is the smallest noise scale for which the Gaussian mechanism of
sensitivity 1 is (ε_c, δ_c/2)-DP (Balle–Wang 2018, Thm 8: Φ(1/(2σ) − εσ) − e^ε Φ(−1/(2σ) − εσ)
≤ δ_c/2, found by bisection), and τ = 1 + σΦ⁻¹(1 − δ_c/2); the baseline keeps iff
n + N(0, σ²) > τ, with probability Φ((n − τ)/σ). That curve (floats: it only caps) caps the
optimal recurrence on the 2^-63 grid (:class:`KeepTable`), whose exact bounds carry the proof:
the selection is exactly (ε, δ)-DP with the δ it actually uses declared. For ℓ₀ > 1 the budget
is split per partition like the other selectors, not by Gopi et al.'s joint ℓ₂ calibration.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from gmpy2 import mpq
from scipy.stats import norm

from dpplug.plugins.partition.budget import Budget
from dpplug.plugins.partition.grid_selector import GridSelector
from dpplug.plugins.partition.keep_table import ONE


def gaussian_sigma(epsilon: float, delta: float) -> float:
    """The smallest σ (to 1e-12 relative) with the analytic Gaussian mechanism (ε, δ)-DP."""

    def leak(sigma: float) -> float:
        a, b = 1 / (2 * sigma), epsilon * sigma
        return float(norm.cdf(a - b) - math.exp(epsilon) * norm.cdf(-a - b))

    low, high = 1e-6, 1.0
    while leak(high) > delta:
        high *= 2
    while (high - low) > 1e-12 * high:
        mid = (low + high) / 2
        low, high = (mid, high) if leak(mid) > delta else (low, mid)
    return high


class GaussianThresholding(GridSelector):
    name = "gaussian-thresholding"
    summary = "Gaussian thresholding (Gopi et al.), exact on a 2^-63 grid, never above it."
    reference = "Gopi, Gulhane, Kulkarni, Shen, Shokouhi, Yekhanin 2020; Desfontaines et al. §5"
    conformance_cases = (
        {"epsilon": 1, "delta": mpq(1, 10**5)},
        {"epsilon": 2, "delta": mpq(1, 100), "pre_threshold": 3, "replace_one": True},
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.derived.update(self.noise_scale)

    def _target(self, budget: Budget) -> Callable[[int], int]:
        epsilon = math.log(float(budget.exp_epsilon))
        delta = float(budget.delta)
        sigma = gaussian_sigma(epsilon, delta / 2)
        tau = 1 + sigma * float(norm.isf(delta / 2))  # Φ⁻¹(1 − δ/2), without cancellation
        self.noise_scale = {"sigma": sigma, "tau": tau}

        def target(n: int) -> int:
            value = int(float(norm.cdf((n - tau) / sigma)) * ONE)
            return ONE if value >= ONE - 1024 else value

        return target
