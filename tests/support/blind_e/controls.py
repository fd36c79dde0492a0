"""Honest controls: correct variations of built-ins, written differently (must not fail)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.composition import step_budget
from dpplug.kinds import Prevalences, Selection
from dpplug.kinds.anonymized_histogram_releaser.outputs import AnonymizedHistogram
from dpplug.plugins.anonymized.sorted_histogram import SortedHistogram
from dpplug.plugins.partition.optimal import OptimalPartitionSelection
from dpplug.plugins.partition.truncated_geometric_thresholding import (
    TruncatedGeometricThresholding,
)
from dpplug.plugins.queries.independent import IndependentLaplace
from dpplug.plugins.queries.workload import declared_loss
from dpplug.plugins.samplers.discrete_laplace import DiscreteLaplace
from dpplug.plugins.samplers.geosample import GeoSample
from dpplug.program import Noise, Program
from dpplug.randomness import RandomSource


class MirroredGeoSample(GeoSample):
    """Control: the vectorised path draws M(c, d + 1 − U), the same law as M(c, U)."""

    name = "rte-ok-geo-mirrored"
    summary = "GeoSample sampling through the mirrored randomness d + 1 − U."

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        d = self.d
        return np.fromiter(
            (self._output(int(c), d + 1 - source.uniform(d)) for c in counts),
            dtype=np.int64,
            count=counts.size,
        )


class SignMagnitudeLaplace(DiscreteLaplace):
    """Control: Z = 0 w.p. (1−α)/(1+α), else a fair sign times 1 + Geometric(α), exactly."""

    name = "rte-ok-dlap-sign-magnitude"
    summary = "Discrete Laplace sampled as a zero test, a sign and a magnitude."

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        num, den = int(self.alpha.numerator), int(self.alpha.denominator)
        size = counts.size
        zero = source.uniform_array(den + num, size) <= den - num
        sign = np.where(source.bits_array(1, size) == 1, 1, -1).astype(np.int64)
        magnitude = np.ones(size, dtype=np.int64)
        active = np.arange(size)
        while active.size:
            more = source.uniform_array(den, active.size) <= num  # a coin of probability α
            magnitude[active[more]] += 1
            active = active[more]
        return counts + np.where(zero, 0, sign * magnitude)


class SortInsteadOfPava(SortedHistogram):
    """Control: the noisy padded vector sorted non-increasing instead of PAVA (ℓ∞-non-expansive)."""

    name = "rte-ok-sorted-sort"
    summary = "Sorted histogram whose consistency step is a sort of the noisy vector."

    def program(self, prevalences: Prevalences) -> Program[AnonymizedHistogram]:
        noisy = yield Noise(self.sampler, self.padded(prevalences).tolist())
        counts: dict[int, int] = {}
        for value in sorted(noisy, reverse=True):
            if value > 0:
                counts[value] = counts.get(value, 0) + 1
        return self.histogram(counts, sum(r * phi for r, phi in counts.items()))


class PublicAlwaysOptimal(OptimalPartitionSelection):
    """Control: public partitions (known in advance) are always kept; the rest as optimal."""

    name = "rte-ok-opt-public-always"
    summary = "Optimal partition selection that keeps every public partition."

    def _select(
        self,
        unit_counts: npt.NDArray[np.int64],
        source: RandomSource,
        public: npt.NDArray[np.bool_] | None,
    ) -> Selection:
        flat = self._shifted(unit_counts.reshape(-1))
        keep = self.table.keep(flat, source).reshape(unit_counts.shape)
        if public is not None:
            keep = keep | public
        return Selection(keep)


class PureIndependentLaplace(IndependentLaplace):
    """Control: always basic composition (ε₀ = ε₁/k), declaring δ = 0 whatever δ it is given."""

    name = "rte-ok-il-pure"
    summary = "Independent Laplace that never uses the δ it is given."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        run, _ = declared_loss(self.params["epsilon"])
        self.budget = step_budget(run, 0, self.workload.max_queries)
        self.noise_scale = mpq(self.workload.grid) / self.budget.epsilon0
        self.derived = {**self.derived, "epsilon0": self.budget.epsilon0, "scale": self.noise_scale}


class EligibleDrawsThresholding(TruncatedGeometricThresholding):
    """Control: noise drawn only for partitions that can be released (same law, fewer draws)."""

    name = "rte-ok-tgt-eligible-draws"
    summary = "k-TSGD thresholding drawing noise only where it can matter."

    def _select(
        self,
        unit_counts: npt.NDArray[np.int64],
        source: RandomSource,
        public: npt.NDArray[np.bool_] | None,
    ) -> Selection:
        if public is not None:
            return super()._select(unit_counts, source, public)
        flat = unit_counts.reshape(-1)
        eligible = np.flatnonzero(flat >= self.pre_threshold)
        noisy = np.zeros(flat.size, dtype=np.int64)
        if eligible.size:
            noisy[eligible] = self.noise.sample(flat[eligible], source)
        kept = np.zeros(flat.size, dtype=bool)
        kept[eligible] = noisy[eligible] - (self.pre_threshold - 1) >= self.k + 1
        shape = unit_counts.shape
        return Selection(kept.reshape(shape), np.where(kept, noisy, 0).reshape(shape))
