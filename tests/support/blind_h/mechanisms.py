"""Red team H's plugins (broken: rth-*, honest: rth-ok-*), every kind in one module."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gmpy2 import mpq, mpz

import dpplug
from dpplug.discrete_noise import discrete_laplace
from dpplug.exact import ceil_div, exp_lower
from dpplug.guarantee import (
    COUNT_SENSITIVITY_1,
    Accuracy,
    ErrorBound,
    Guarantee,
    Neighbouring,
    Relation,
)
from dpplug.kinds import DenseHistogram, TrueCounts
from dpplug.kinds.query_releaser.queries import clamp
from dpplug.param_types import INTEGER, RATIONAL, UNIVERSE
from dpplug.params import probability_param
from dpplug.plugins.anonymized.pava import pava_blocks, round_non_negative
from dpplug.plugins.anonymized.sorted_histogram import SortedHistogram
from dpplug.plugins.partition.truncated_geometric_thresholding import TruncatedGeometricThresholding
from dpplug.plugins.queries.independent import IndependentLaplace, IndependentSession
from dpplug.plugins.samplers.geometric_params import GeometricParams
from dpplug.plugins.samplers.geosample import GeoSample
from dpplug.plugins.samplers.truncated_geometric import TruncatedGeometric
from dpplug.plugins.set_union.policy_laplace import PolicyLaplace
from dpplug.program import noise
from dpplug.randomness import SeededSource
from dpplug.structures import ServedDraws


# ----------------------------------------------------------------------------- samplers
class TgeoKShort(TruncatedGeometric):
    """Flaw: k is one short (smallest k with Pr[X = k+1] ≤ δ) and the asked δ is declared, so the
    achieved δ′ = Pr[X = k] exceeds it."""

    name = "rth-tgeo-k-short"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        if self.k > 1:
            self.k -= 1
            self._d = mpz(self._s(0)(mpq) + self._s(1)(mpq))
            self.d = int(self._d)
            self.delta = mpq(mpz(self.b) ** self.k, self._d)
            self.derived = {"exp_epsilon": self.exp_epsilon, "k": self.k}

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.exp_epsilon, self.params["delta"], COUNT_SENSITIVITY_1)


class GeoAccFloat(GeoSample):
    """Flaw: accuracy(β) from the float closed form at the asked ε (not the achieved ε̃ ≤ ε), so a
    is one too small for some β."""

    name = "rth-geo-acc-float"
    conformance_cases = ({"n": 4, "epsilon": mpq(1, 2)}, {"n": 200, "epsilon": mpq(1, 5)})

    def _accuracy(self, beta: Any) -> Accuracy:
        eps = float(self.params["epsilon"])
        alpha = math.exp(-eps)
        m = math.ceil(math.log(2 * alpha / ((1 + alpha) * float(beta))) / eps) - 1
        m = min(max(m, 0), self.n)
        bound = ErrorBound(m, beta)
        return Accuracy(bound, bound, formula="⌈ln(2α/((1+α)β))/ε⌉ − 1 (floats)")


class GeoAccFloatGuarded(GeoAccFloat):
    """Flaw: as rth-geo-acc-float (the off-by-one closed form, copied from a docstring), with the
    exact search kept for β < 1e-12 so nothing overflows."""

    name = "rth-geo-acc-float-guarded"

    def _accuracy(self, beta: Any) -> Accuracy:
        if beta < mpq(1, 10**12):
            return GeoSample._accuracy(self, beta)
        return super()._accuracy(beta)


class RRBulkExclusive(dpplug.CountingQuerySampler):
    """Flaw: the bulk sample() path calls uniform_array(d + 1) thinking the bound exclusive, so it
    flips with probability 2/5 instead of 1/4."""

    name = "rth-rr-bulk-exclusive"
    summary = "Binary randomized response, keep w.p. 3/4, with a vectorised path."
    reference = "Warner 1965"
    schema = dpplug.Schema(())
    conformance_cases = ({},)

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.n, self.d = 1, 4

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(3, 0, COUNT_SENSITIVITY_1)

    def _output(self, count: int, u: int) -> int:
        return count if u <= 3 else 1 - count

    def _scaled_cdf(self, z: int, count: int) -> int:
        if z < 0:
            return 0
        return 4 if z >= 1 else (3 if count == 0 else 1)

    def _sample(self, counts, source):  # type: ignore[no-untyped-def]
        u = source.uniform_array(self.d + 1, counts.size)  # BUG: bound is inclusive
        return np.where(u <= 3, counts, 1 - counts).astype(np.int64)

    def _accuracy(self, beta: Any) -> Accuracy:
        bound = ErrorBound(0 if beta >= mpq(1, 4) else 1, beta)
        return Accuracy(bound, bound, formula="a = 0 if β ≥ 1/4, else 1")


class GeoEpsRoundUp(GeoSample):
    """Flaw: the ratio a/b is chosen for ε·33/32 ("headroom for rounding", wrong direction) while
    the guarantee declares e^ε."""

    name = "rth-geo-eps-roundup"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.geometric = GeometricParams.for_epsilon(self.params["epsilon"] * mpq(33, 32))
        a, b = self.geometric.a, self.geometric.b
        self._d = (a + b) * mpz(a) ** (self.n - 1)
        self.d = int(self._d)
        self._g_enclosure.cache_clear()
        if hasattr(self._g_exact, "cache_clear"):
            self._g_exact.cache_clear()
        self.derived = self.geometric.as_dict()

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(exp_lower(self.params["epsilon"], 64), 0, COUNT_SENSITIVITY_1)


# ----------------------------------------------------------------------------- partition selectors
class _Linear(dpplug.PartitionSelector):
    summary = "Keep a partition of n units with probability min(1, nδ)."
    reference = "Desfontaines et al. 2022, Thm 2 (ε = 0)"
    schema = dpplug.Schema((probability_param("delta", "δ per unit."),))
    conformance_cases = ({"delta": mpq(1, 8)}, {"delta": mpq(3, 8)})

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.delta = self.params["delta"]
        self.saturation = int(ceil_div(self.delta.denominator, self.delta.numerator))

    @property
    def per_partition(self) -> Guarantee:
        return Guarantee(1, self.delta, Neighbouring(Relation.ADD_REMOVE))

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(1, self.delta, Neighbouring(Relation.ADD_REMOVE, max_partitions=1))

    def _keep_probability(self, units: int) -> Any:
        return min(mpq(1), units * self.delta)

    def _select(self, unit_counts, source, public):  # type: ignore[no-untyped-def]
        if public is not None:
            raise dpplug.NotSupported(f"{self.name} has no public partitions")
        d = int(self.delta.denominator)
        draws = source.uniform_array(d, unit_counts.size).reshape(unit_counts.shape)
        units = np.minimum(unit_counts, self.saturation)  # no overflow near 2^62
        return dpplug.Selection(draws <= units * int(self.delta.numerator))

    def _accuracy(self, beta: Any) -> Accuracy:
        bound = ErrorBound(0, beta)
        return Accuracy(
            bound, bound, max(self.kept_from(beta) - 1, 0), "smallest n with nδ ≥ 1 − β"
        )


class LinSatFloor(_Linear):
    """Flaw: saturation is ⌊1/δ⌋ (not ⌈1/δ⌉) and select keeps every partition at or above it without
    a draw."""

    name = "rth-lin-sat-floor"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.saturation = int(self.delta.denominator // self.delta.numerator)

    def _select(self, unit_counts, source, public):  # type: ignore[no-untyped-def]
        sel = super()._select(unit_counts, source, public)
        return dpplug.Selection(sel.keep | (unit_counts >= self.saturation))


class LinL0DeltaOnce(_Linear):
    """Flaw: with ℓ₀ partitions per unit it declares (0, δ) for the whole selection (keep events
    "disjoint"), not 1 − (1 − δ)^ℓ₀."""

    name = "rth-lin-l0-delta-once"
    schema = dpplug.Schema(
        (
            probability_param("delta", "δ per unit."),
            dpplug.Param("max_partitions_contributed", INTEGER, "ℓ₀", low=1, high=16, default=1),
        )
    )
    conformance_cases = (
        {"delta": mpq(1, 8), "max_partitions_contributed": 2},
        {"delta": mpq(1, 4), "max_partitions_contributed": 3},
    )

    @property
    def guarantee(self) -> Guarantee:
        l0 = self.params["max_partitions_contributed"]
        return Guarantee(1, self.delta, Neighbouring(Relation.ADD_REMOVE, max_partitions=l0))


class TgtBulkPrefilter(TruncatedGeometricThresholding):
    """Flaw: on batches of ≥ 4096 partitions a pre-filter drops units ≤ pre_threshold (should be <),
    so π(pre_threshold) = 0 there."""

    name = "rth-tgt-bulk-prefilter"

    def _select(self, unit_counts, source, public):  # type: ignore[no-untyped-def]
        if public is not None or unit_counts.size < 4096:
            return super()._select(unit_counts, source, public)
        flat = unit_counts.reshape(-1)
        live = flat > self.pre_threshold  # BUG: partitions at the pre-threshold can be kept
        noisy = np.zeros(flat.size, dtype=np.int64)
        noisy[live] = flat[live] + self.noise.sample(
            np.zeros(int(live.sum()), dtype=np.int64), source
        )
        kept = live & (noisy - (self.pre_threshold - 1) >= self.k + 1)
        shape = unit_counts.shape
        return dpplug.Selection(kept.reshape(shape), np.where(kept, noisy, 0).reshape(shape))


class OkLinear(_Linear):
    """Control: the docs' linear selection, written with an explicit comparison table."""

    name = "rth-ok-linear"


# ----------------------------------------------------------------------------- histogram releasers
class _GeoHist(dpplug.HistogramReleaser):
    summary = "GeoSample noise on every label of a small universe."
    reference = "Balcer & Vadhan 2018, Alg. 5.1"
    schema = dpplug.Schema(
        (
            dpplug.Param("universe", UNIVERSE, "labels", example='"range:0:9"'),
            dpplug.Param("n", INTEGER, "rows", low=1, high=10**4),
            dpplug.Param("epsilon", RATIONAL, "ε", low=0, high=4, low_open=True),
        )
    )
    conformance_cases = ({"universe": "range:0:2", "n": 2, "epsilon": 1},)

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.universe, self.n = self.params["universe"], self.params["n"]
        self.sampler = self.registry_in_use().create(
            "geosample", n=self.n, epsilon=self.params["epsilon"] / 2
        )

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(
            self.sampler.guarantee.exp_epsilon**2, 0, Neighbouring(Relation.REPLACE_ONE)
        )

    def _accuracy(self, beta: Any) -> Accuracy:
        per_bin = self.sampler.accuracy(beta).per_query
        everywhere = self.sampler.accuracy(beta / self.universe.size).per_query.a
        return Accuracy(per_bin, ErrorBound(everywhere, beta), 0, "union bound")

    def exact_structure(self) -> ServedDraws:
        return ServedDraws()

    def _dense(self, counts: TrueCounts) -> np.ndarray:
        dense = np.zeros(self.universe.size, dtype=np.int64)
        dense[list(counts.indices)] = counts.counts
        return dense

    def _release(self, counts: TrueCounts, source: dpplug.RandomSource) -> DenseHistogram:
        noisy = noise(self.sampler, self._dense(counts), source)
        return DenseHistogram(
            self.universe, noisy, self.guarantee, self.accuracy(mpq(1, 20)), repr(self)
        )


class GeoHistMono(_GeoHist):
    """Flaw: when the data holds one distinct label, only that bin is noised and the others are
    released as exact 0."""

    name = "rth-geohist-mono"

    def _release(self, counts: TrueCounts, source: dpplug.RandomSource) -> DenseHistogram:
        if len(counts.indices) == 1:
            noisy = np.zeros(self.universe.size, dtype=np.int64)
            i = int(counts.indices[0])
            noisy[i] = noise(self.sampler, np.array([counts.counts[0]], dtype=np.int64), source)[0]
            return DenseHistogram(
                self.universe, noisy, self.guarantee, self.accuracy(mpq(1, 20)), repr(self)
            )
        return super()._release(counts, source)


class GeoHistDenseCache(_GeoHist):
    """Flaw: the dense count vector is cached on the instance and only overwritten at the current
    labels, so bins of earlier releases keep their counts."""

    name = "rth-geohist-dense-cache"

    def _dense(self, counts: TrueCounts) -> np.ndarray:
        if not hasattr(self, "_cache"):
            self._cache = np.zeros(self.universe.size, dtype=np.int64)
        self._cache[list(counts.indices)] = counts.counts
        return self._cache.copy()


class GeoHistSimulTimes(_GeoHist):
    """Flaw: the simultaneous bound is the per-bin a at min(β·|X|, 1/2) (union bound inverted:
    multiplies instead of divides)."""

    name = "rth-geohist-simul-times"
    conformance_cases = (
        {"universe": "range:0:2", "n": 2, "epsilon": 1},
        {"universe": "range:0:9", "n": 200, "epsilon": 1},
    )

    def _accuracy(self, beta: Any) -> Accuracy:
        per_bin = self.sampler.accuracy(beta).per_query
        everywhere = self.sampler.accuracy(min(beta * self.universe.size, mpq(1, 2))).per_query.a
        return Accuracy(per_bin, ErrorBound(everywhere, beta), 0, "union bound")


class OkGeoHist(_GeoHist):
    """Control: the docs' geometric histogram, dense vector built with np.add.at."""

    name = "rth-ok-geohist"

    def _dense(self, counts: TrueCounts) -> np.ndarray:
        dense = np.zeros(self.universe.size, dtype=np.int64)
        np.add.at(
            dense,
            np.asarray(counts.indices, dtype=np.int64),
            np.asarray(counts.counts, dtype=np.int64),
        )
        return dense


# ----------------------------------------------------------------------------- anonymized
class SortedAscending(SortedHistogram):
    """Flaw: the padded vector lists the counts in increasing order (pairs not reversed), so one new
    count of 1 shifts every coordinate."""

    name = "rth-sorted-ascending"

    def padded(self, prevalences):  # type: ignore[no-untyped-def]
        if prevalences.counts > self.length:
            raise dpplug.BadData("more labels than length")
        vector = np.zeros(self.length, dtype=np.int64)
        position = 0
        for r, phi in prevalences.pairs:  # BUG: should be reversed (non-increasing)
            vector[position : position + phi] = r
            position += phi
        return vector


class SortedPavaUp(SortedHistogram):
    """Flaw: PAVA is run on the reversed vector (a non-decreasing fit), flattening the sorted
    counts; the declared sorted-count accuracy fails."""

    name = "rth-sorted-pava-up"

    def program(self, prevalences):  # type: ignore[no-untyped-def]
        from dpplug.program import Noise

        noisy = yield Noise(self.sampler, self.padded(prevalences).tolist())
        counts: dict[int, int] = {}
        for s, w, length in pava_blocks(list(reversed(noisy)), [1] * len(noisy)):
            value = round_non_negative(mpq(s, w))
            if value:
                counts[value] = counts.get(value, 0) + length
        return self.histogram(counts, sum(r * phi for r, phi in counts.items()))


class OkSorted(SortedHistogram):
    """Control: sorted-histogram with the padded vector built by np.repeat."""

    name = "rth-ok-sorted"

    def padded(self, prevalences):  # type: ignore[no-untyped-def]
        if prevalences.counts > self.length:
            raise dpplug.BadData("more labels than length; build it with a larger public length")
        rs = [r for r, _ in reversed(prevalences.pairs)]
        phis = [phi for _, phi in reversed(prevalences.pairs)]
        body = np.repeat(np.array(rs, dtype=np.int64), np.array(phis, dtype=np.int64))
        return np.concatenate([body, np.zeros(self.length - body.size, dtype=np.int64)])


# ----------------------------------------------------------------------------- query releasers
class _ClampTopSession(IndependentSession):
    def _answer(self, query):  # type: ignore[no-untyped-def]
        noisy = query.scaled_answer(self._counts) + discrete_laplace(self._scale, self._source)
        return clamp(noisy, self.scale - 1)  # BUG: off by one at the top


class IndepClampTop(IndependentLaplace):
    """Flaw: answers are clamped to [0, n·W − 1], so an answer of exactly 1 never appears."""

    name = "rth-indep-clamp-top"

    def _start(self, counts, source):  # type: ignore[no-untyped-def]
        return _ClampTopSession(self.declaration(), counts, self.noise_scale, source)


class _MedianSession(IndependentSession):
    def _answer(self, query):  # type: ignore[no-untyped-def]
        true = query.scaled_answer(self._counts)
        draws = sorted(discrete_laplace(self._scale, self._source) for _ in range(3))
        return clamp(true + draws[1], self.scale)  # median of three: "lower variance"


class IndepMedian3(IndependentLaplace):
    """Flaw: each answer is the median of three noisy copies ("variance reduction") but the budget
    counts one: the tail ratio is e^{2ε₀}."""

    name = "rth-indep-median3"

    def _start(self, counts, source):  # type: ignore[no-untyped-def]
        return _MedianSession(self.declaration(), counts, self.noise_scale, source)


class IndepFixedSeed(IndependentLaplace):
    """Flaw: every session draws its noise from SeededSource(0), ignoring the source passed, so
    releases on neighbours differ by exactly the true difference."""

    name = "rth-indep-fixed-seed"

    def _start(self, counts, source):  # type: ignore[no-untyped-def]
        return IndependentSession(self.declaration(), counts, self.noise_scale, SeededSource(0))


class _OkSession(IndependentSession):
    def _answer(self, query):  # type: ignore[no-untyped-def]
        noisy = query.scaled_answer(self._counts) + discrete_laplace(self._scale, self._source)
        return max(0, min(int(noisy), int(self.scale)))


class OkIndep(IndependentLaplace):
    """Control: independent-laplace with the clamp written as max/min."""

    name = "rth-ok-indep"

    def _start(self, counts, source):  # type: ignore[no-untyped-def]
        return _OkSession(self.declaration(), counts, self.noise_scale, source)


# ----------------------------------------------------------------------------- set union
class PlUnitsShort(PolicyLaplace):
    """Flaw: units_needed(β, t) returns one unit fewer than needed (a 0-based index of the search
    read as a count)."""

    name = "rth-pl-units-short"

    def _units_needed(self, beta: Any, items: int) -> int:
        return max(1, super()._units_needed(beta, items) - 1)


class PlFirstSeen(PolicyLaplace):
    """Flaw: the released labels are listed in the order the data first shows them, not canonical
    order (leaks the data's order)."""

    name = "rth-pl-first-seen"

    def _select(self, units, source):  # type: ignore[no-untyped-def]
        kept = set(super()._select(units, source))
        order: list[Any] = []
        for _, labels in units:
            for label in labels:
                if label in kept and label not in order:
                    order.append(label)
        return order


class OkPolicy(PolicyLaplace):
    """Control: policy-laplace, renamed."""

    name = "rth-ok-policy"


SAMPLERS = [TgeoKShort, GeoAccFloat, GeoAccFloatGuarded, RRBulkExclusive, GeoEpsRoundUp]
SELECTORS = [LinSatFloor, LinL0DeltaOnce, TgtBulkPrefilter, OkLinear]
HISTOGRAMS = [GeoHistMono, GeoHistDenseCache, GeoHistSimulTimes, OkGeoHist]
ANONYMIZED = [SortedAscending, SortedPavaUp, OkSorted]
QUERIES = [IndepClampTop, IndepMedian3, IndepFixedSeed, OkIndep]
SET_UNION = [PlUnitsShort, PlFirstSeen, OkPolicy]
ALL = SAMPLERS + SELECTORS + HISTOGRAMS + ANONYMIZED + QUERIES + SET_UNION
