"""Laplace thresholding, the baseline of PipelineDP and Google's library (Korolova et al. 2009;
Desfontaines et al. Def. 9; docs/mechanisms.md#laplace-thresholding), with exact keep decisions.

Per partition (ε_c, δ_c), the baseline keeps a partition iff n + Lap(1/ε_c) > τ with
τ = 1 + ln(1/(2δ_c))/ε_c (δ_c ≤ 1/2; Google's 1 + ln(2(1 − δ_c))/ε_c above), so it keeps with
probability π_Lap(n) = ½e^{−ε_c(τ−n)} below τ and 1 − ½e^{−ε_c(n−τ)} above, and π_Lap(1) = δ_c.
Here π_Lap, evaluated in blocks with a margin that keeps it below the baseline
(:class:`~dpplug.plugins.partition.capping_curve.CappingCurve`), caps the optimal recurrence on
the 2^-63 grid (:class:`KeepTable`): every keep probability is at most the baseline's (from the
saturation on, where the grid keeps with probability 1, the baseline is within 2^-63 of 1), and
the selection is exactly (ε, δ)-DP with the δ it actually uses declared.
"""

from __future__ import annotations

from collections.abc import Callable

import gmpy2
import numpy as np
from gmpy2 import mpfr, mpq

from dpplug.plugins.partition.capping_curve import CappingCurve, Floats
from dpplug.plugins.partition.grid_selector import GridSelector


def laplace_threshold(epsilon: mpfr, delta: mpq) -> mpfr:
    """τ for per-partition (ε, δ) (Google's formula on both sides of δ = 1/2)."""
    if delta <= mpq(1, 2):
        return 1 + gmpy2.log(1 / (2 * mpfr(delta))) / epsilon
    return 1 + gmpy2.log(2 * (1 - mpfr(delta))) / epsilon


class LaplaceThresholding(GridSelector):
    name = "laplace-thresholding"
    summary = "Laplace thresholding (PipelineDP's default), exact on a 2^-63 grid, never above it."
    reference = "Korolova, Kenthapadi, Mishra, Ntoulas 2009; Desfontaines et al. Def. 9"
    conformance_cases = (
        {"epsilon": 1, "delta": mpq(1, 10**5)},
        {"epsilon": mpq(1, 2), "delta": mpq(1, 1000), "max_partitions_contributed": 2},
        {"epsilon": 2, "delta": mpq(1, 100), "pre_threshold": 3, "replace_one": True},
    )

    def _target(self) -> Callable[[int], int]:
        budget = self.budget
        with gmpy2.context(gmpy2.get_context(), precision=128):
            epsilon = gmpy2.log(mpfr(budget.exp_epsilon))
            tau = float(laplace_threshold(epsilon, budget.delta))
        eps = float(epsilon)

        def tail(units: Floats, sign: float) -> Floats:
            """½e^{−ε|n − τ|} on the side where sign·(n − τ) ≥ 0, else 1 minus it."""
            half: Floats = np.exp(-eps * np.abs(units - tau)) / 2
            return np.where(sign * (units - tau) >= 0, half, 1 - half)

        return CappingCurve(lambda units: tail(units, -1.0), lambda units: tail(units, 1.0))
