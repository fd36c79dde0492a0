"""Known-broken mechanisms, each registered as a plugin the way a third party would, and each
required to fail a named conformance contract (see test_zoo.py)."""

from __future__ import annotations

import bisect
import dataclasses
import math
from fractions import Fraction
from itertools import accumulate
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq, mpz

import dpplug
from dpplug.discrete_noise import BitStream, bernoulli_exp, discrete_laplace
from dpplug.guarantee import COUNT_SENSITIVITY_1, Neighbouring, Relation
from dpplug.kinds import TrueCounts
from dpplug.kinds.histogram_releaser.outputs import DenseHistogram, SparseHistogram
from dpplug.param_types import INTEGER
from dpplug.plugins.histograms import (
    BasicHistogramReleaser,
    CompactHistogramReleaser,
    StabilityHistogramReleaser,
)
from dpplug.plugins.histograms.sampler_choice import REPLACE_ONE
from dpplug.plugins.partition import OptimalPartitionSelection
from dpplug.plugins.partition.budget import SELECTOR_PARAMS, Budget
from dpplug.plugins.partition.keep_table import GRID_BITS, KeepTable
from dpplug.plugins.samplers import (
    DiscreteGaussian,
    DiscreteLaplace,
    FastSample,
    FixedPointGeometric,
    GeoSample,
    TruncatedGeometric,
)
from dpplug.plugins.samplers.geometric_params import GeometricParams
from dpplug.pmf import Pmf
from dpplug.program import noise
from dpplug.randomness import RandomSource, SeededSource


class FloatLaplace(DiscreteLaplace):
    """Mironov 2012: c + Laplace(1/ε) in floating point, released as a float."""

    name = "zoo-float-laplace"

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> Any:
        u = source.bits_array(53, counts.size).astype(np.float64) / 2.0**53 - 0.5
        scale = 1 / float(self.params["epsilon"])
        return counts - scale * np.sign(u) * np.log1p(-2 * np.abs(u))


class RenormalisedGeometric(GeoSample):
    """Truncates the geometric to [0, n] by renormalising instead of clamping."""

    name = "zoo-renormalised-geometric"

    def _pmf(self, count: int) -> Pmf:
        ratio = mpq(self.geometric.b, self.geometric.a)
        weights = {z: ratio ** abs(z - count) for z in range(self.n + 1)}
        total = sum(weights.values(), mpq(0))
        return Pmf({z: w / total for z, w in weights.items()})

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> Any:
        out = np.empty_like(counts)
        for i, count in enumerate(counts):
            pmf = self._pmf(int(count))
            denominator = math.lcm(*(int(p.denominator) for p in pmf.values()))
            cumulative = list(accumulate(int(p * denominator) for p in pmf.values()))
            out[i] = list(pmf)[bisect.bisect_left(cumulative, source.uniform(denominator))]
        return out


class CappedFastSample(FastSample):
    """The public reference code's bug: the truncation t capped at n
    (docs/mechanisms.md#fastsample)."""

    name = "zoo-capped-fastsample"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        a, b, n, g = self.geometric.a, self.geometric.b, self.n, int(1 / self.gamma)
        self.t = min(self.t, n)
        self._core_d = (a + b) * mpz(a) ** self.t
        self.core_d = int(self._core_d)
        self.d = (n + 1) * self.core_d * g


class OffByOneThreshold(TruncatedGeometric):
    """Truncates at k − 1 but declares the δ of k: the off-by-one of OpenDP issue #2922."""

    name = "zoo-off-by-one-threshold"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        declared = self.delta
        self.k -= 1
        self._d = mpz(self._s(0)(mpq) + self._s(1)(mpq))
        self.d = int(self._d)
        self._g_enclosure.cache_clear()
        self.delta = declared


class WrongRelation(GeoSample):
    """Calibrated for counts one apart but declared for counts two apart."""

    name = "zoo-wrong-relation"

    @property
    def guarantee(self) -> dpplug.Guarantee:
        g = super().guarantee
        return dpplug.Guarantee(g.exp_epsilon, g.delta, Neighbouring(Relation.COUNT, 2))


class WiderLaw(GeoSample):
    """Declares GeoSample's pmf but samples a slightly wider law (a smaller ε)."""

    name = "zoo-wider-law"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self._wider = GeoSample(n=self.n, epsilon=mpq(self.params["epsilon"]) / 2)

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> Any:
        return self._wider._sample(counts, source)


class DrawsBeforeValidating(GeoSample):
    """Draws randomness before it checks the counts."""

    name = "zoo-draws-first"

    def sample(self, counts: object, source: RandomSource | None = None) -> Any:
        if source is not None:
            source.uniform(self.d)
        return super().sample(counts, source)


class FakeStrictTime(DiscreteLaplace):
    """Claims a data-independent number of draws, but draws more for larger counts."""

    name = "zoo-fake-strict-time"
    strict_time = True

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> Any:
        source.bits_array(8, int(np.count_nonzero(counts > 0)))
        return super()._sample(counts, source)


class GlobalRandomness(GeoSample):
    """Takes its noise from numpy's global generator instead of the RandomSource."""

    name = "zoo-global-randomness"

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> Any:
        source.bits(1)
        noise = np.random.default_rng().geometric(0.5, counts.size) - 1  # not the source
        return np.clip(counts + noise, 0, self.n)


class OverclaimedAccuracy(GeoSample):
    """Declares an error bound a third of the true one."""

    name = "zoo-overclaimed-accuracy"

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        real = super()._accuracy(beta).per_query
        bound = dpplug.ErrorBound(math.floor(real.a / 3), beta)
        return dpplug.Accuracy(bound, bound)


class KeepsTooEarly(OptimalPartitionSelection):
    """A partition selector whose π(1) is 2δ while it declares δ."""

    name = "zoo-keeps-too-early"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.table = KeepTable.build(self.budget.exp_epsilon, 2 * self.budget.delta)


class ReleasesAbsentPartitions(OptimalPartitionSelection):
    """Keeps a partition with no units at all (π(0) > 0), as if it had one."""

    name = "zoo-releases-absent"

    def _shifted(self, units: Any) -> Any:
        return np.maximum(super()._shifted(units), 1)


#: A replace-one stability histogram that can release something (t = 2 < n): the base of the
#: broken releasers below, whose flaws only show in what is released.
_RELEASING_STABILITY = {
    "universe": "range:0:2",
    "n": 6,
    "epsilon": 2,
    "delta": Fraction(3, 10),
    "sampler": "geosample",
}


class _UnorderedSparse(SparseHistogram):
    """A sparse histogram without the canonical-order check, as a releaser that builds its own
    output might return."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_index", dict(zip(self.indices, self.counts, strict=True)))


class DataDependentOrder(StabilityHistogramReleaser):
    """Releases the kept bins largest noisy count first: the order depends on the data
    (Balcer & Vadhan, full version §2.2.1, footnote; docs/mechanisms.md#canonical-order)."""

    name = "zoo-data-dependent-order"
    conformance_cases = (_RELEASING_STABILITY,)

    def _release(self, counts: TrueCounts, source: RandomSource) -> Any:
        release = super()._release(counts, source)
        ordered = sorted(zip(release.indices, release.counts, strict=True), key=lambda b: -b[1])
        return _UnorderedSparse(
            release.universe,
            tuple(i for i, _ in ordered),
            tuple(c for _, c in ordered),
            release.guarantee,
            release.accuracy,
            release.mechanism,
        )


class ThresholdsEveryLabel(StabilityHistogramReleaser):
    """Adds noise to every label of the universe before thresholding, so empty bins are
    released, while declaring (as the stability histogram) that it releases nonempty bins only."""

    name = "zoo-thresholds-every-label"
    conformance_cases = (_RELEASING_STABILITY,)
    releases_empty_bins = False

    def _release(self, counts: TrueCounts, source: RandomSource) -> Any:
        dense = np.zeros(self.universe.size, dtype=np.int64)
        dense[list(counts.indices)] = counts.counts
        every = TrueCounts(tuple(range(self.universe.size)), dense, counts.rows)
        return super()._release(every, source)


class PerCountGuarantee(BasicHistogramReleaser):
    """Declares its sampler's e^ε for one count, but replacing a row changes two counts."""

    name = "zoo-per-count-guarantee"

    @property
    def guarantee(self) -> dpplug.Guarantee:
        per_count = self.sampler.guarantee
        return dpplug.Guarantee(per_count.exp_epsilon, per_count.delta, REPLACE_ONE)


# Flaws that only show in what a plugin does, outside the view of its own declared cases.


class SelectsOneUnitAhead(OptimalPartitionSelection):
    """Declares π(n) but its select() decides partitions as if they had one more unit."""

    name = "zoo-selects-one-unit-ahead"

    def _shifted(self, units: Any) -> Any:
        return np.where(units > 0, super()._shifted(units + 1), 0)

    def _keep_probability(self, units: int) -> Any:
        return self.table.probability(int(super()._shifted(units)))


class CoreOnlyFastSample(FastSample):
    """Declares FastSample's mixture but its vectorised path samples the core alone."""

    name = "zoo-core-only-fastsample"

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> Any:
        return np.array([self._core(int(c), source.uniform(self.core_d)) for c in counts])

    def _core(self, count: int, u: int) -> int:
        """The smallest z with F′(count, z) ≥ u: the core's inverse CDF, F′ read off
        F(c, z) = (z+1)·d′ + mix·F′(c, z)."""
        return next(
            z
            for z in range(self.n + 1)
            if z == self.n or self._scaled_cdf(z, count) - (z + 1) * self.core_d >= u * self._mix
        )


class SplitsForAddRemoveOnly(OptimalPartitionSelection):
    """With replace_one it declares bounded DP but splits its budget over ℓ₀ partitions, not
    the 2ℓ₀ a replaced unit changes; its own cases never set replace_one."""

    name = "zoo-splits-for-add-remove-only"
    conformance_cases = tuple(
        case for case in OptimalPartitionSelection.conformance_cases if "replace_one" not in case
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        declared = Budget.from_params(self.params).neighbouring
        honest = Budget.from_params({**self.params, "replace_one": False})
        self.budget = dataclasses.replace(honest, neighbouring=declared)


class IgnoresContributionBound(OptimalPartitionSelection):
    """Accepts max_partitions_contributed, then calibrates and declares for ℓ₀ = 1 anyway."""

    name = "zoo-ignores-contribution-bound"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.budget = Budget.from_params({**self.params, "max_partitions_contributed": 1})
        self.table = KeepTable.build(self.budget.exp_epsilon, self.budget.delta)
        self.achieved_delta = self.table.achieved_delta(self.budget.exp_epsilon)


class ReversesCallersRows(BasicHistogramReleaser):
    """Reverses the caller's list of rows in place while counting them."""

    name = "zoo-reverses-callers-rows"

    def release(self, data: object, source: RandomSource | None = None) -> Any:
        if isinstance(data, list):
            data.reverse()
        return super().release(data, source)


class NoiseInInsertionOrder(BasicHistogramReleaser):
    """Draws the bins' noise in the order the caller listed the labels: the law of each bin
    is right, but which draw a bin gets depends on how the caller built the data."""

    name = "zoo-noise-in-insertion-order"

    def release(self, data: object, source: RandomSource | None = None) -> Any:
        self._order = [self.universe.index(label) for label in dict.fromkeys(data)]  # type: ignore[call-overload]
        return super().release(data, source)

    def _release(self, counts: TrueCounts, source: RandomSource) -> Any:
        dense = np.zeros(self.universe.size, dtype=np.int64)
        dense[list(counts.indices)] = counts.counts
        order = list(dict.fromkeys([*self._order, *range(self.universe.size)]))
        noisy = np.empty_like(dense)
        noisy[order] = noise(self.sampler, dense[order], source)
        release = super()._release(counts, SeededSource(0))
        return dataclasses.replace(release, counts=noisy)


class LocalGenerator(GeoSample):
    """Draws one byte from the RandomSource and seeds its own numpy generator with it."""

    name = "zoo-local-generator"

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> Any:
        own = np.random.default_rng(source.bits(8))
        return np.array([self._output(int(c), int(own.integers(1, self.d + 1))) for c in counts])


class OverclaimsRareTails(FixedPointGeometric):
    """Exact where β is common; at β below 1/100 it declares an error bound 4 below the truth (a
    true failure rate of about e²·β), on a case too large for the exact worst tail, so only a test
    with power at small β sees, or the exact tail of a small generated case."""

    name = "zoo-overclaims-rare-tails"
    conformance_cases = ({"n": 1000, "epsilon": mpq(1, 2)},)

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        real = super()._accuracy(beta).per_query
        bound = dpplug.ErrorBound(real.a - 4 if beta < mpq(1, 100) else real.a, beta)
        return dpplug.Accuracy(bound, bound)


class MixedScaleGaussian(DiscreteGaussian):
    """CKS 2020 Alg. 3 written anew with one wrong constant: discrete Laplace proposals of scale
    t = ⌊σ⌋ + 1, accepted with probability e^{−(|y| − σ²/(t+1))²/(2σ²)} (the acceptance step
    written for scale t + 1). Its law is e^{−y²/(2σ²)}·e^{−|y|/(t(t+1))} normalised, about 5% in
    total variation from the discrete Gaussian it declares, while its guarantee still holds:
    only the sampling law can see it."""

    name = "zoo-mixed-scale-gaussian"

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> Any:
        sigma2 = mpq(self.sigma2)
        t = math.isqrt(int(sigma2)) + 1
        bits = BitStream(source)

        def one() -> int:
            while True:
                y = discrete_laplace(t, source)
                if bernoulli_exp((abs(y) - sigma2 / (t + 1)) ** 2 / (2 * sigma2), bits):
                    return int(y)

        return counts + np.array([one() for _ in counts], dtype=np.int64)


class _ShortDraws(RandomSource):
    """Passes every draw to *source*, but U(k) for the k in *short* as U(k − 1)."""

    def __init__(self, source: RandomSource, short: set[int]) -> None:
        super().__init__()
        self.source, self.short = source, short

    def uniform(self, d: int) -> int:
        return self.source.uniform(int(d) - 1 if int(d) in self.short else d)

    def random_bytes(self, count: int) -> bytes:
        return self.source.random_bytes(count)

    def serve(self, draw: Any) -> Any:
        return self.source.serve(draw)


class CompactMissesLastElement(CompactHistogramReleaser):
    """Draws u_x from S_c̃ without its last element (U(|S_c̃| − 1)): p(x) still decodes to c̃,
    but its density on S_c̃ is no longer uniform, so the closed-form law is not its law."""

    name = "zoo-compact-misses-last-element"

    def _release(self, counts: TrueCounts, source: RandomSource) -> Any:
        widths = {self.law.interval(v)[1] for v in range(self.n + 1)} - {1, self.modulus}
        return super()._release(counts, _ShortDraws(source, widths))


class CompactShortFill(CompactHistogramReleaser):
    """Draws the values at the points outside the data from [0, P − 2], never P − 1."""

    name = "zoo-compact-short-fill"

    def _release(self, counts: TrueCounts, source: RandomSource) -> Any:
        return super()._release(counts, _ShortDraws(source, {self.modulus}))


_MASK64 = (1 << 64) - 1


class SortsLargeBatch(OptimalPartitionSelection):
    """For batches of 4096 partitions or more, sorts the caller's unit counts in place ("for
    cache locality") and un-permutes only its output: small batches are left alone."""

    name = "zoo-sorts-large-batch"

    def _select(self, unit_counts: Any, source: RandomSource, public: Any) -> Any:
        if public is not None or unit_counts.size < 4096:
            return super()._select(unit_counts, source, public)
        flat = unit_counts.reshape(-1)
        order = np.argsort(flat, kind="stable")
        flat.sort(kind="stable")
        kept = np.empty(flat.size, dtype=np.bool_)
        kept[order] = self.table.keep(self._shifted(flat), source)
        return dpplug.Selection(kept.reshape(unit_counts.shape))


class StaleBufferHistogram(BasicHistogramReleaser):
    """Reuses one dense buffer across releases without clearing it: a label absent from this
    dataset shows (with noise) the count it had in an earlier one."""

    name = "zoo-stale-buffer-histogram"

    def _release(self, counts: TrueCounts, source: RandomSource) -> Any:
        buffer = self.__dict__.setdefault("_buffer", np.zeros(self.universe.size, dtype=np.int64))
        buffer[list(counts.indices)] = counts.counts
        noisy = noise(self.sampler, buffer.copy(), source)
        return DenseHistogram(
            self.universe, noisy, self.guarantee, self.accuracy(self.params["beta"]), repr(self)
        )


class HashRotation(GeoSample):
    """Rotates its uniform draw by a constant taken from Python's string hashing: the law is
    exact and a seeded run repeats within one process, but another process releases other
    noise from the same seed."""

    name = "zoo-hash-rotation"

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> Any:
        shift = ((hash(self.name) & _MASK64) * self.d) >> 64
        return np.fromiter(
            (
                self._output(int(c), (source.uniform(self.d) - 1 + shift) % self.d + 1)
                for c in counts
            ),
            dtype=np.int64,
            count=counts.size,
        )


class HashReflection(GeoSample):
    """Uses u' = d + 1 − u for the i-th output when bit i mod 64 of a string's hash is set: each
    output has exactly the declared law and is monotone in its draw, so the exact replay holds,
    but another process releases other noise from the same seed."""

    name = "zoo-hash-reflection"

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> Any:
        bits = hash(self.name) & _MASK64
        draws = [source.uniform(self.d) for _ in range(counts.size)]
        return np.array(
            [
                self._output(int(c), self.d + 1 - u if bits >> (i % 64) & 1 else u)
                for i, (c, u) in enumerate(zip(counts, draws, strict=True))
            ],
            dtype=np.int64,
        )


class HashOrderHistogram(BasicHistogramReleaser):
    """Draws the bins' noise in the order of hash(str(label)): every bin's law is right and a
    seeded release repeats within one process, but another process orders the draws otherwise."""

    name = "zoo-hash-order-histogram"
    conformance_cases = ({"universe": "range:0:16", "n": 8, "epsilon": 1},)

    def _release(self, counts: TrueCounts, source: RandomSource) -> Any:
        size = self.universe.size
        dense = np.zeros(size, dtype=np.int64)
        dense[list(counts.indices)] = counts.counts
        order = sorted(range(size), key=lambda i: hash(str(self.universe.label(i))))
        noisy = np.empty_like(dense)
        noisy[order] = noise(self.sampler, dense[order], source)
        return DenseHistogram(
            self.universe, noisy, self.guarantee, self.accuracy(self.params["beta"]), repr(self)
        )


# Flaws that a seeded choice of cases, βs or unit counts could miss: each is caught whatever the
# run's seed (test_zoo.py checks seed 1 besides the default 0).


class MidEpsilonGuarantee(GeoSample):
    """For 2 < ε < 8 it declares the e^ε of ε/2 (a table of precomputed ratios read one row off)
    while it samples with ε; its cases, and the ladder's ε = 2 and ε = 8, are outside that gap."""

    name = "zoo-mid-epsilon"

    @property
    def guarantee(self) -> dpplug.Guarantee:
        epsilon = self.params["epsilon"]
        if 2 < epsilon < 8:
            half = GeometricParams.for_epsilon(epsilon / 2).exp_epsilon
            return dpplug.Guarantee(half, 0, COUNT_SENSITIVITY_1)
        return super().guarantee


class OverclaimsMidBeta(GeoSample):
    """Declares an error bound 2 below the truth for 1/1000 < β < 1/20 only: exact at the βs
    that are sampled."""

    name = "zoo-overclaims-mid-beta"

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        real = super()._accuracy(beta).per_query
        a = max(real.a - 2, 0) if mpq(1, 1000) < beta < mpq(1, 20) else real.a
        bound = dpplug.ErrorBound(a, beta)
        return dpplug.Accuracy(bound, bound)


#: Two of optimal partition selection's cases: ε ≤ 1, no pre-threshold.
_SMALL_EPSILON_CASES = OptimalPartitionSelection.conformance_cases[:2]


class OverclaimsLargeEpsilonThreshold(OptimalPartitionSelection):
    """Declares an accuracy threshold 3 units too low when ε > 3/2; its own cases have ε ≤ 1."""

    name = "zoo-overclaims-large-epsilon-threshold"
    conformance_cases = _SMALL_EPSILON_CASES

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        real = super()._accuracy(beta)
        if self.params["epsilon"] <= mpq(3, 2):
            return real
        return dataclasses.replace(real, threshold=max(real.threshold - 3, 0))


class KeepsOneUnitTooOften(OptimalPartitionSelection):
    """Its select() keeps a partition of one unit (after the pre-threshold) with 4δ when the
    table is long (saturation > 16), while it declares π(1) = δ."""

    name = "zoo-keeps-one-unit-too-often"

    def _select(self, unit_counts: Any, source: RandomSource, public: Any) -> Any:
        if public is not None or self.table.saturation <= 16:
            return super()._select(unit_counts, source, public)
        flat = np.minimum(self._shifted(unit_counts.reshape(-1)), self.table.saturation)
        thresholds = self.table.grid[flat].copy()
        thresholds[flat == 1] *= np.uint64(4)
        draws = source.bits_array(GRID_BITS, flat.size)
        return dpplug.Selection((draws < thresholds).reshape(unit_counts.shape))


class PreThresholdForgetsL0(OptimalPartitionSelection):
    """With pre_threshold ≥ 2 and ℓ₀ ≥ 2 together it does not split its budget over ℓ₀ (a code
    path for pre-thresholded tables), still declaring the requested ε for ℓ₀; each of its cases
    sets one of the two options only."""

    name = "zoo-pre-threshold-forgets-l0"

    def _budget(self) -> Budget:
        params = self.params
        if params["pre_threshold"] >= 2 and params["max_partitions_contributed"] >= 2:
            return Budget.from_params({**params, "max_partitions_contributed": 1})
        return Budget.from_params(params)

    @property
    def guarantee(self) -> dpplug.Guarantee:
        honest = Budget.from_params(self.params)
        per = dpplug.Guarantee(honest.exp_epsilon, honest.delta, COUNT_SENSITIVITY_1)
        return honest.compose(per)


class IgnoresContributionsPerPartition(OptimalPartitionSelection):
    """Takes max_contributions_per_partition (ℓ∞) and declares it, but calibrates every
    partition for a unit that adds one unit to it."""

    name = "zoo-ignores-contributions-per-partition"
    schema = dpplug.Schema(
        (
            *SELECTOR_PARAMS,
            dpplug.Param(
                "max_contributions_per_partition",
                INTEGER,
                "ℓ∞: how many units one privacy unit may add to one partition.",
                low=1,
                high=100,
                default=1,
            ),
        )
    )
    conformance_cases = (
        {"epsilon": 1, "delta": mpq(1, 10**5), "max_contributions_per_partition": 3},
    )

    @property
    def guarantee(self) -> dpplug.Guarantee:
        honest = super().guarantee
        relation = dataclasses.replace(
            honest.neighbouring, max_contributions=self.params["max_contributions_per_partition"]
        )
        return dpplug.Guarantee(honest.exp_epsilon, honest.delta, relation)


#: Zoo entries whose catch must not depend on the run's seed.
ANY_SEED = (
    MidEpsilonGuarantee,
    OverclaimsMidBeta,
    OverclaimsLargeEpsilonThreshold,
    KeepsOneUnitTooOften,
    PreThresholdForgetsL0,
    IgnoresContributionsPerPartition,
)


#: Each broken plugin, the contract that must catch it, and words its diagnosis must contain.
ZOO: dict[type[dpplug.Mechanism], tuple[str, str]] = {
    SelectsOneUnitAhead: ("exact-privacy", "it does not do what it declares: select()"),
    CoreOnlyFastSample: ("exact-privacy", "it does not do what it declares: sample()"),
    SplitsForAddRemoveOnly: ("exact-privacy", "below the composition of"),
    IgnoresContributionBound: ("exact-privacy", "max_partitions_contributed=2"),
    ReversesCallersRows: ("hygiene", "changed the caller's data"),
    NoiseInInsertionOrder: ("hygiene", "another insertion order"),
    LocalGenerator: ("hygiene", "comes from somewhere other than the RandomSource"),
    OverclaimsRareTails: ("accuracy", "β = 1/1000"),
    FloatLaplace: ("hygiene", "not integers"),
    RenormalisedGeometric: ("exact-privacy", "it does not do what it declares: F(0"),
    CappedFastSample: ("exact-privacy", "likelihood ratio 1593763/346624"),
    OffByOneThreshold: ("exact-privacy", "hockey-stick divergence"),
    WrongRelation: ("exact-privacy", "for counts 0 and 2 exceeds"),
    WiderLaw: ("sampling-law", "do not follow the declared law"),
    DrawsBeforeValidating: ("bad-input", "only after drawing randomness"),
    FakeStrictTime: ("hygiene", "claims strict running time"),
    GlobalRandomness: ("hygiene", "randomness comes from somewhere other than the RandomSource"),
    OverclaimedAccuracy: ("accuracy", "> β = 1/20 (exact)"),
    KeepsTooEarly: ("exact-privacy", "exceeds the per-partition δ"),
    ReleasesAbsentPartitions: ("exact-privacy", "a partition of 0 units is kept"),
    DataDependentOrder: ("hygiene", "not in canonical (index) order"),
    ThresholdsEveryLabel: ("hygiene", "whose true counts are 0"),
    PerCountGuarantee: ("exact-privacy", "likelihood ratio"),
    CompactMissesLastElement: ("exact-privacy", "draws u_x for the nonempty bin 2 (S_0 has"),
    CompactShortFill: ("exact-privacy", "draws the value at point 0 (the field F_"),
    SortsLargeBatch: ("hygiene", "select(65536 unit counts) changed the caller's data"),
    StaleBufferHistogram: ("hygiene", "the output depends on the instance's history"),
    HashRotation: ("hygiene", "differs between processes: hash seed, import-time state"),
    HashReflection: ("hygiene", "differs between processes: hash seed, import-time state"),
    HashOrderHistogram: ("hygiene", "differs between processes: hash seed, import-time state"),
    MidEpsilonGuarantee: ("exact-privacy", "likelihood ratio"),
    OverclaimsMidBeta: ("accuracy", "> β = 1/50 (exact)"),
    OverclaimsLargeEpsilonThreshold: ("accuracy", "units dropped] has probability"),
    KeepsOneUnitTooOften: ("exact-privacy", "it does not do what it declares: select() at 1 units"),
    PreThresholdForgetsL0: ("exact-privacy", "is below the composition of"),
    IgnoresContributionsPerPartition: ("exact-privacy", "(ℓ∞ = 3: one unit may add"),
    MixedScaleGaussian: ("sampling-law", "do not follow the declared law"),
}


@dpplug.hookimpl
def register_samplers(register: Any) -> None:
    for cls in ZOO:
        if issubclass(cls, dpplug.CountingQuerySampler):
            register(cls)


@dpplug.hookimpl
def register_partition_selectors(register: Any) -> None:
    for cls in ZOO:
        if issubclass(cls, dpplug.PartitionSelector):
            register(cls)


@dpplug.hookimpl
def register_histogram_releasers(register: Any) -> None:
    for cls in ZOO:
        if issubclass(cls, dpplug.HistogramReleaser):
            register(cls)
