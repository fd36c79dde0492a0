"""StabilityHistogram_{M,t} (Balcer & Vadhan, full version Alg. 5.4, Thm 5.5–5.6; ITCS version
Thm 1.3; docs/mechanisms.md#stability-histogram): noisy counts of the nonempty bins only,
released when above a threshold t.

1. A = {x : c_x > 0};  2. c̃_x = M(c_x, U) for x ∈ A;  3. release {(x, c̃_x) : c̃_x > t}, in
canonical order.

**Threshold.** t is the smallest z with F(1, z) ≥ d·(1 − δ), computed exactly from the sampler's
scaled CDF, so Pr[M(1, U) > t] ≤ δ. The declared δ is that probability exactly; exact
hockey-stick checks over every replacement neighbour (tests) show it is the worst case. A row
that moves between bins makes one bin appear or vanish at count 1; everything else is the basic
histogram's e^{2ε_M}. For FastSample the paper's γ ≤ δ/2 is used when γ is not given.

**Accuracy.** A bin of true count c > t + a is dropped only if its noise is below −a, so it is
within the sampler's a with probability 1 − β (the per-query bound, on counts above t + a). All
bins at once: a bin fails if it is released more than a off, or dropped (released as 0) while
c > a, and the failure probability of a release is at most Σ_x f(c_x) ≤ n·max_c f(c)/c with f
exact from the scaled CDF (:func:`~.error_bounds.dropping_simultaneous`): the worst dataset is
about n/(t + a) bins with counts just above a, each dropped through one tail. (The union bound
(a at β/n) + t is the fallback past the scan budget.)
"""

from __future__ import annotations

from typing import Any

from gmpy2 import mpq

from dpplug.exact import smallest_at_least
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee
from dpplug.kinds import HistogramReleaser, TrueCounts
from dpplug.kinds.histogram_releaser.outputs import SparseHistogram
from dpplug.params import Schema, probability_param
from dpplug.plugins.histograms.coverage import warn_if_uncovered
from dpplug.plugins.histograms.error_bounds import dropping_simultaneous
from dpplug.plugins.histograms.sampler_choice import (
    REPLACE_ONE,
    build_sampler,
    releaser_params,
    require_bounded,
)
from dpplug.program import noise
from dpplug.randomness import RandomSource
from dpplug.structures import ServedDraws

_DELTA = probability_param(
    "delta", "Target δ: the threshold t is the smallest with Pr[M(1,U) > t] ≤ δ."
)


class StabilityHistogramReleaser(HistogramReleaser):
    name = "stability-histogram"
    summary = "Noisy counts of the nonempty bins above an exact threshold (approximate DP)."
    reference = "Balcer & Vadhan, Differential Privacy on Finite Computers: Alg. 5.4 / Thm 5.5"
    schema = Schema((*releaser_params("fixedpoint-geometric"), _DELTA))
    #: Thresholds below n (t = 2 in both), so the cases really release something.
    conformance_cases = (
        {"universe": "range:0:2", "n": 3, "epsilon": 2, "delta": 0.3, "sampler": "geosample"},
        {"universe": "bytes:1", "n": 5, "epsilon": 1, "delta": 0.3},
    )
    releases_empty_bins = False

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.universe = self.params["universe"]
        self.n = self.params["n"]
        gamma = (self.params["delta"] / 2, "δ/2")
        self.sampler = build_sampler(self.name, self.params, self.registry_in_use(), gamma=gamma)
        d = require_bounded(self.name, self.sampler, self.n)
        floor = d - d * self.params["delta"]  # F(1, t) ≥ d(1 − δ)
        self.threshold = smallest_at_least(
            lambda z: self.sampler.scaled_cdf(z, 1), 0, self.n, floor
        )
        self.delta = mpq(d - self.sampler.scaled_cdf(self.threshold, 1), d)
        self.derived = {"sampler": repr(self.sampler), "threshold": self.threshold}
        warn_if_uncovered(self)

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.sampler.guarantee.exp_epsilon**2, self.delta, REPLACE_ONE)

    def covered_above(self, beta: Any) -> int:
        """t + a: the count above which the per-query bound holds (for :mod:`.coverage`)."""
        return int(self.threshold + self.sampler.accuracy(beta).per_query.a)

    def _accuracy(self, beta: Any) -> Accuracy:
        per_query = self.sampler.accuracy(beta).per_query.a
        everywhere = dropping_simultaneous(self.sampler, self.n, self.threshold, beta)
        if everywhere is None:  # past the scan budget: the union bound of Thm 5.6
            everywhere = self.sampler.accuracy(beta / self.n).per_query.a + self.threshold
        return Accuracy(
            ErrorBound(per_query, beta),
            ErrorBound(min(everywhere, self.n), beta),
            threshold=self.covered_above(beta),
            formula=(
                f"t = {self.threshold}; a at β on counts > t + a; for all bins the smallest a "
                f"with n·f(c, a) ≤ β·c for every count c (f: released > a off, or dropped)"
            ),
        )

    def exact_structure(self) -> ServedDraws:
        """Every draw is served (its noise is asked through :func:`dpplug.program.noise`)."""
        return ServedDraws()

    def _release(self, counts: TrueCounts, source: RandomSource) -> SparseHistogram:
        noisy = noise(self.sampler, counts.counts, source)
        pairs = zip(counts.indices, noisy, strict=True)
        kept = [(i, int(c)) for i, c in pairs if c > self.threshold]
        return SparseHistogram(
            self.universe,
            tuple(i for i, _ in kept),
            tuple(c for _, c in kept),
            self.guarantee,
            self.accuracy(self.params["beta"]),
            repr(self),
        )
