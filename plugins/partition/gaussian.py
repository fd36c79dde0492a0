"""Gaussian thresholding, the non-weighted selection of Gopi et al. 2020
(docs/mechanisms.md#gaussian-thresholding), with exact keep decisions and the joint ℓ₂
calibration of the paper.

**Calibration (Gopi et al.).** A unit in ℓ₀ partitions (c = ℓ₀ coordinates, 2ℓ₀ for
replace-one) moves the vector of counts by √c in ℓ₂, so σ is the smallest scale for which the
Gaussian mechanism of ℓ₂ sensitivity √c is (ε, δ/2)-DP (Balle–Wang 2018 Thm 8:
Φ(√c/(2σ) − εσ/√c) − e^ε·Φ(−√c/(2σ) − εσ/√c) ≤ δ/2, by bisection), and τ = 1 + σ·Φ⁻¹((1−δ/2)^{1/c})
so that none of c partitions new to the data passes it with probability 1 − δ/2. The baseline
keeps a partition iff n + N(0, σ²) > τ, with probability Φ((n − τ)/σ). Splitting (ε, δ) per
partition instead, as the other selectors do, needs σ ∝ ℓ₀ rather than √ℓ₀ (midpoint 187 against
62 at ℓ₀ = 10, ε = 1, δ = 10⁻⁵).

**Exact table.** The curve Φ((n − τ)/σ) (floats: it only caps) caps the optimal recurrence at the
whole (e^ε, δ) on the 2^-63 grid (:class:`KeepTable`), and every step is also capped by the Gaussian
bound π̂(n+1) ≤ Φ(Φ⁻¹(π̂(n)) + μ) with μ slightly below 1/σ, evaluated with rigorous enclosures
(:mod:`dpplug.kinds.partition_selector.gaussian_dp`); where rounding down would stop the table from
growing, it grows by one grid unit instead.

**Why the declared guarantee holds.** The selection is not a post-processing of the Gaussian noise
any more (its keep probabilities are rounded), so the proof is about the table itself
(:class:`~dpplug.kinds.partition_selector.gaussian_dp.GaussianPairs`): every pair of neighbouring
positive keep probabilities is μ-GDP with μ = 1/σ (Dong, Roth, Su 2022; checked exactly, up to a
slack of a few grid units, K·2^-63, in total variation, see ``_step_cap``), so the c partitions a
unit changes compose to √c·μ-GDP, i.e. (ε, δ_G)-DP with the formula above; partitions appearing from
keep probability 0 are kept with probability at most δ_A = 1 − (1 − π̂(1))^c ≤ δ/2; and the declared
δ, computed rigorously as δ_G at e^ε(1 − δ_A) + δ_A + c·K·2^-63, is at most the δ asked for (σ is
calibrated for δ/2 − c·K·2^-63). Each partition on its own is also exactly (ε, δ′)-DP with δ′ the
table's exact slack (the per-partition guarantee). The conformance suite re-checks every pair and
the declared δ from the keep probabilities.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from gmpy2 import mpq
from scipy import special
from scipy.stats import norm

from dpplug.enclosure import Enclosure, scaled_floor
from dpplug.errors import BadParameter
from dpplug.exact import as_rational
from dpplug.guarantee import Guarantee
from dpplug.kinds.partition_selector.gaussian_dp import GaussianPairs, normal_cdf_bound, step_bound
from dpplug.plugins.partition.budget import Budget
from dpplug.plugins.partition.capping_curve import CappingCurve
from dpplug.plugins.partition.grid_selector import GridSelector
from dpplug.plugins.partition.keep_table import GRID_BITS, ONE

#: The share of δ/2 the grid's slack may take at most (see ``_step_cap``).
_SLACK_SHARE = 1 / 64
#: The table's Gaussian cap uses μ·(1 − 2^-40): the declared μ then holds with room to spare.
_CAP_SHRINK = mpq((1 << 40) - 1, 1 << 40)
#: The most entries the table may have: each costs a few MPFR erfc evaluations (about 0.2 ms),
#: so this bounds the construction to seconds. The table ends near τ + 9.4σ (Φ within 2^-63 of 1).
MAX_GAUSSIAN_ENTRIES = 1 << 14


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest σ (to 1e-12 relative) with the analytic Gaussian mechanism of ℓ₂ sensitivity
    *sensitivity* (ε, δ)-DP (Balle–Wang Thm 8)."""

    def leak(sigma: float) -> float:
        a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
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
    summary = "Gaussian thresholding (Gopi et al.), ℓ₂-calibrated, exact on a 2^-63 grid."
    reference = (
        "Gopi, Gulhane, Kulkarni, Shen, Shokouhi, Yekhanin 2020 (Gaussian thresholding); "
        "Dong, Roth, Su 2022 (composition); Desfontaines et al. §5"
    )
    conformance_cases = (
        {"epsilon": 1, "delta": mpq(1, 10**5)},
        {"epsilon": 1, "delta": mpq(1, 10**3), "max_partitions_contributed": 3},
        {"epsilon": 2, "delta": mpq(1, 100), "pre_threshold": 3, "replace_one": True},
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        c = self.budget.coordinates
        first = next(v for v in self.table.values if v > 0)  # π̂(1) unless rounded to 0
        self.gaussian = GaussianPairs(self._mu, mpq(self._slack_units, ONE))
        self.declared_delta = self.gaussian.delta(self.budget.exp_epsilon, c, c, c, mpq(first, ONE))
        if self.declared_delta > self.params["delta"]:
            raise BadParameter(
                f"{self.name}: δ = {float(self.params['delta']):.3g} is too small for "
                f"{c} partition(s) on the 2^-63 grid (it would need "
                f"{float(self.declared_delta):.3g}); raise delta or lower "
                "max_partitions_contributed"
            )
        self.derived.update(self.noise_scale)

    def _budget(self) -> Budget:
        """The whole (ε, δ) for the table, and σ, τ, μ calibrated for c coordinates."""
        budget = Budget.joint(self.params)
        c = budget.coordinates
        epsilon, delta = math.log(float(budget.exp_epsilon)), float(budget.delta)
        # δ_G is taken at e^ε·(1 − δ_A) with δ_A ≤ δ/2 (see the module docstring).
        shifted = epsilon + math.log1p(-delta / 2)
        appear = -math.expm1(math.log1p(-delta / 2) / c)  # 1 − (1 − δ/2)^{1/c}
        units = 2  # the grid's slack per pair, in 2^-63 (see _step_cap)
        for _ in range(2):  # σ for the slack reserved, then the slack σ needs
            reserve = c * units / ONE
            if reserve >= delta / 2 * _SLACK_SHARE * 2:
                raise BadParameter(
                    f"{self.name}: δ = {delta:.3g} is below the grid's resolution for {c} "
                    "partition(s); raise delta, lower max_partitions_contributed, or use "
                    "optimal-partition-selection"
                )
            sigma = gaussian_sigma(shifted, (delta / 2 - reserve) * (1 - 1e-9), math.sqrt(c))
            tau = 1 - sigma * float(special.ndtri(appear))  # 1 + σ·Φ⁻¹(1 − appear)
            depth = (tau - 1) / sigma  # −Φ⁻¹(π̂(1))
            wanted = math.exp(min(depth / sigma + 1 / (2 * sigma**2), 700.0)) + 2
            units = max(2, min(math.ceil(wanted), math.floor(delta / 2 * _SLACK_SHARE * ONE / c)))
        self._slack_units = units
        if tau + 10 * sigma > MAX_GAUSSIAN_ENTRIES:
            raise BadParameter(
                f"{self.name}: σ = {sigma:.4g} and τ = {tau:.4g} need a keep table of about "
                f"{tau + 10 * sigma:.3g} entries, each a rigorous Gaussian bound (the limit is "
                f"2^14); raise epsilon or delta, lower max_partitions_contributed, or use "
                "optimal-partition-selection"
            )
        self.noise_scale = {"sigma": sigma, "tau": tau}
        self._mu = as_rational(1 / sigma)
        return budget

    def _target(self) -> Callable[[int], int]:
        sigma, tau = self.noise_scale["sigma"], self.noise_scale["tau"]
        return CappingCurve(
            lambda units: special.ndtr((units - tau) / sigma),
            lambda units: special.ndtr((tau - units) / sigma),
        )

    def _step_cap(self) -> Callable[[int], int]:
        """⌊2^63·Φ(Φ⁻¹(π̂) + μ)⌋ from the table's own (rounded) value, plus an allowance of
        K − 1 grid units where π̂ ≤ Φ(−μ), K the declared slack in units.

        Why the allowance: rounding π̂ down loses up to a unit, which the next bound carries on
        multiplied by the density ratio φ(x + μ)/φ(x) ≤ e^{μ|x| + μ²/2} in the lower tail; left
        alone, those losses stay in Φ⁻¹ terms (the table ended up to 2.5·10⁻⁷ below the curve at
        δ = 10⁻¹², ℓ₀ = 3). K is that ratio at π̂(1), within a share of 1/64 of δ/2. Why it is
        sound: there the pair (p, q) is at most K units above the bound, q − Φ(Φ⁻¹(p) + μ) ≤ K, and
        Φ(Φ⁻¹(q) − μ) − p, the excess on the other side, integrates the density over an interval
        μ lower, where it is smaller (below −μ/2), so it is at most K too. Elsewhere a pair only
        exceeds the bound where KeepTable grows by one unit because the bound stalls (complements
        c with c·(1 − e^{−μΦ⁻¹(π̂)}) < 1 near the top): at most two units on either side. The
        declared slack, max(K, 2) units, is what the conformance suite checks pair by pair."""
        mu = self._mu * _CAP_SHRINK
        lower = scaled_floor(normal_cdf_bound(-Enclosure.of(self._mu).hi, upper=False), GRID_BITS)
        allowance = self._slack_units - 1

        def cap(v: int) -> int:
            bound = scaled_floor(step_bound(mpq(v, ONE), mu), GRID_BITS)
            return bound + allowance if v <= lower else bound

        return cap

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.budget.exp_epsilon, self.declared_delta, self.budget.neighbouring)
