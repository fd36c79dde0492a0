# ruff: noqa: E501, B905  (kept as the red team wrote it: one-line flaw docstrings)
"""Red team I's plugins, kept as their authors wrote them (registration hooks removed)."""
from __future__ import annotations

from typing import Any

import numpy as np
from gmpy2 import mpq, mpz

import dpplug
from dpplug.discrete_noise import discrete_laplace
from dpplug.exact import ceil_div
from dpplug.guarantee import Neighbouring, Relation
from dpplug.kinds import DenseHistogram, TrueCounts
from dpplug.kinds.query_releaser.queries import clamp
from dpplug.param_types import INTEGER, RATIONAL, UNIVERSE
from dpplug.params import probability_param
from dpplug.plugins.anonymized.pava import pava_blocks, rounded_runs
from dpplug.plugins.anonymized.sorted_histogram import SortedHistogram
from dpplug.plugins.queries.independent import IndependentLaplace, IndependentSession
from dpplug.plugins.samplers.geosample import GeoSample
from dpplug.program import Noise, noise
from dpplug.structures import ServedDraws


# ---------------------------------------------------------------- samplers
class StdMemo(GeoSample):
    """noise_std memoised per instance ignoring the count (clamped variance depends on it)."""
    name = "rti-geo-std-memo"

    def noise_std(self, count: object) -> float:
        self._count(count)
        if not hasattr(self, "_std_memo"):
            object.__setattr__(self, "_std_memo", super().noise_std(count))
        return self._std_memo


class ShortTable(GeoSample):
    """Vectorised _sample uses a table of G(j) for j in [-n, n-2] (G(n-1) missing): count 0 can jump to n."""
    name = "rti-geo-short-table"

    def _sample(self, counts, source):  # type: ignore[no-untyped-def]
        table = [int(self._g(j)(mpz)) for j in range(-self.n, self.n - 1)]
        us = source.uniforms(self.d, counts.size)
        out = np.empty(counts.size, dtype=np.int64)
        import bisect
        for i, (c, u) in enumerate(zip(counts.tolist(), us)):
            k = bisect.bisect_left(table, u)
            j = -self.n + k  # past the table: j = n - 1 + 1
            out[i] = min(max(c + j, 0), self.n)
        return out


class ClosedCdf(GeoSample):
    """probability_at_most closed form with an exponent slip for z < count (a^(-j) for a^(-j-1))."""
    name = "rti-geo-closed-cdf"

    def probability_at_most(self, z: int, count: int) -> Any:
        if z < 0:
            return mpq(0)
        if z >= self.n:
            return mpq(1)
        a, b, j = self.geometric.a, self.geometric.b, z - count
        if j < 0:
            return mpq(mpz(b) ** -j, mpz(a) ** (-j) * (a + b))
        return 1 - mpq(mpz(b) ** (j + 1), mpz(a) ** j * (a + b))


class OkMirror(GeoSample):
    """Honest: the vectorised path mirrors counts above n/2 (n − M(n − c, U)), same law by symmetry."""
    name = "rti-ok-geo-mirror"

    def _sample(self, counts, source):  # type: ignore[no-untyped-def]
        us = source.uniforms(self.d, counts.size)
        out = []
        for c, u in zip(counts.tolist(), us):
            if 2 * c > self.n:
                out.append(self.n - self._output(self.n - c, u))
            else:
                out.append(self._output(c, u))
        return np.array(out, dtype=np.int64)


# ---------------------------------------------------------------- partition selectors
class Linear(dpplug.PartitionSelector):
    """Honest: linear selection min(1, nδ), (0, δ)-DP, compared as U(d) − 1 < n·num."""
    name = "rti-ok-linear"
    summary = "Keep a partition of n units with probability min(1, nδ): (0, δ)-DP."
    reference = "Desfontaines, Voss, Gipson, Mandayam 2022, Thm 2 (the case ε = 0)"
    schema = dpplug.Schema((probability_param("delta", "δ per unit."),))
    conformance_cases = ({"delta": mpq(1, 8)}, {"delta": mpq(3, 10)})
    public_ok = False

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.delta = self.params["delta"]
        self.saturation = int(ceil_div(self.delta.denominator, self.delta.numerator))

    @property
    def per_partition(self) -> dpplug.Guarantee:
        return dpplug.Guarantee(1, self.delta, Neighbouring(Relation.ADD_REMOVE))

    @property
    def guarantee(self) -> dpplug.Guarantee:
        return dpplug.Guarantee(1, self.delta, Neighbouring(Relation.ADD_REMOVE, max_partitions=1))

    def _keep_probability(self, units: int) -> Any:
        return min(mpq(1), units * self.delta)

    def _select(self, unit_counts, source, public):  # type: ignore[no-untyped-def]
        if public is not None:
            raise dpplug.NotSupported(f"{self.name} has no public partitions")
        d = int(self.delta.denominator)
        draws = source.uniform_array(d, unit_counts.size).reshape(unit_counts.shape)
        capped = np.minimum(unit_counts, self.saturation)
        return dpplug.Selection(draws - 1 < capped * int(self.delta.numerator))

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        bound = dpplug.ErrorBound(0, beta)
        threshold = max(self.kept_from(beta) - 1, 0)
        return dpplug.Accuracy(bound, bound, threshold, "smallest n with nδ ≥ 1 − β")


class PublicEmpty(Linear):
    """Public partitions are kept only when they hold at least one unit (empty ones dropped)."""
    name = "rti-lin-public-empty"

    def _select(self, unit_counts, source, public):  # type: ignore[no-untyped-def]
        d = int(self.delta.denominator)
        draws = source.uniform_array(d, unit_counts.size).reshape(unit_counts.shape)
        capped = np.minimum(unit_counts, self.saturation)
        keep = draws <= capped * int(self.delta.numerator)
        if public is not None:
            keep = np.where(public, unit_counts > 0, keep)
        return dpplug.Selection(keep)


class CoarseDecider(Linear):
    """decider() keeps iff U(2^16) ≤ ⌊π·2^16⌋: π quantised down, δ-divergence up to δ + 2^-16."""
    name = "rti-lin-coarse-decider"

    def decider(self, source=None):  # type: ignore[no-untyped-def]
        rng = dpplug.randomness.default_source(source) if hasattr(dpplug, "randomness") else source
        from dpplug.randomness import default_source
        rng = default_source(source)

        def decide(units: int) -> bool:
            p = self.keep_probability(units)
            return bool(rng.uniform(1 << 16) <= int(p * (1 << 16)))

        return decide


class SatFloat(Linear):
    """Bulk _select caps units at int(1/float(δ)) (floor): at n = ⌈1/δ⌉ keeps w.p. ⌊1/δ⌋δ < 1... and above."""
    name = "rti-lin-sat-floor"

    def _select(self, unit_counts, source, public):  # type: ignore[no-untyped-def]
        if public is not None:
            raise dpplug.NotSupported(f"{self.name} has no public partitions")
        d = int(self.delta.denominator)
        sat = int(1 / float(self.delta))
        draws = source.uniform_array(d, unit_counts.size).reshape(unit_counts.shape)
        capped = np.minimum(unit_counts, sat)
        return dpplug.Selection(draws <= capped * int(self.delta.numerator))


# ---------------------------------------------------------------- histogram releasers
class GeoHist(dpplug.HistogramReleaser):
    """Honest: GeoSample noise at ε/2 on every label (docs' geometric-histogram), written again."""
    name = "rti-ok-geo-hist"
    summary = "GeoSample noise on every label of a small universe (pure DP, replace one row)."
    reference = "Balcer & Vadhan 2018, Alg. 5.1 with GeoSample"
    schema = dpplug.Schema(
        (
            dpplug.Param("universe", UNIVERSE, "The public labels.", example='"range:0:9"'),
            dpplug.Param("n", INTEGER, "The public bound on rows.", low=1, high=10**4),
            dpplug.Param("epsilon", RATIONAL, "ε for one row replaced.", low=0, high=4, low_open=True),
        )
    )
    conformance_cases = ({"universe": "range:0:2", "n": 2, "epsilon": 1},)

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.universe, self.n = self.params["universe"], self.params["n"]
        if self.universe.size > 10**4:
            raise dpplug.BadParameter("universe too large: at most 10^4 labels")
        self.sampler = self.registry_in_use().create("geosample", n=self.n, epsilon=self.params["epsilon"] / 2)

    @property
    def guarantee(self) -> dpplug.Guarantee:
        per_count = self.sampler.guarantee.exp_epsilon
        return dpplug.Guarantee(per_count**2, 0, Neighbouring(Relation.REPLACE_ONE))

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        per_bin = self.sampler.accuracy(beta).per_query
        everywhere = self.sampler.accuracy(beta / self.universe.size).per_query.a
        return dpplug.Accuracy(per_bin, dpplug.ErrorBound(everywhere, beta), 0, "union bound")

    def exact_structure(self) -> ServedDraws:
        return ServedDraws()

    def _dense(self, counts: TrueCounts):  # type: ignore[no-untyped-def]
        dense = np.zeros(self.universe.size, dtype=np.int64)
        dense[list(counts.indices)] = counts.counts
        return dense

    def _release(self, counts: TrueCounts, source: dpplug.RandomSource) -> DenseHistogram:
        dense = self._dense(counts)
        # honest variation: nonempty bins noised first, then the empty ones (independent bins)
        order = np.argsort(dense == 0, kind="stable")
        noisy = np.empty_like(dense)
        noisy[order] = noise(self.sampler, dense[order], source)
        return DenseHistogram(self.universe, noisy, self.guarantee, self.accuracy(0.05), repr(self))


class NeverEmpty(GeoHist):
    """A label with rows is never reported as 0: a noisy 0 on a nonempty bin is lifted to 1."""
    name = "rti-hist-never-empty"

    def _release(self, counts: TrueCounts, source: dpplug.RandomSource) -> DenseHistogram:
        dense = self._dense(counts)
        noisy = noise(self.sampler, dense, source)
        noisy = np.where((noisy == 0) & (dense > 0), 1, noisy)
        return DenseHistogram(self.universe, noisy, self.guarantee, self.accuracy(0.05), repr(self))


class SimulMax(GeoHist):
    """Simultaneous accuracy: the per-bin a at β/|X| capped at n/|X| rows... (bins share n rows)."""
    name = "rti-hist-simul-share"

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        per_bin = self.sampler.accuracy(beta).per_query
        everywhere = self.sampler.accuracy(beta / self.universe.size).per_query.a
        # "the n rows are spread over |X| bins": no bin's error exceeds ⌈n/|X|⌉ (wrong)
        everywhere = min(everywhere, -(-self.n // self.universe.size))
        return dpplug.Accuracy(per_bin, dpplug.ErrorBound(everywhere, beta), 0, "union bound")


class EpsPerLabel(GeoHist):
    """Two-label universes get the sampler at ε (not ε/2): 'one row moves one count' (wrong under replace)."""
    name = "rti-hist-two-label-eps"
    conformance_cases = ({"universe": "range:0:1", "n": 2, "epsilon": 1}, {"universe": "range:0:2", "n": 2, "epsilon": 1})

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        if self.universe.size <= 2:
            self.sampler = self.registry_in_use().create("geosample", n=self.n, epsilon=self.params["epsilon"])
            self._per = self.sampler.guarantee.exp_epsilon
        else:
            self._per = self.sampler.guarantee.exp_epsilon ** 2

    @property
    def guarantee(self) -> dpplug.Guarantee:
        return dpplug.Guarantee(self._per, 0, Neighbouring(Relation.REPLACE_ONE))


# ---------------------------------------------------------------- query releasers
class TwoHalvesSession(IndependentSession):
    def _answer(self, query):  # type: ignore[no-untyped-def]
        y = discrete_laplace(self._scale / 2, self._source) + discrete_laplace(self._scale / 2, self._source)
        return clamp(query.scaled_answer(self._counts) + y, self.scale)


class TwoHalves(IndependentLaplace):
    """Noise as the sum of two discrete Laplaces of half the scale (same variance/2... lighter tails: ~2ε₀)."""
    name = "rti-ind-two-halves"

    def _start(self, counts, source):  # type: ignore[no-untyped-def]
        return TwoHalvesSession(self.declaration(), counts, self.noise_scale, source)


class ReflectSession(IndependentSession):
    def _answer(self, query):  # type: ignore[no-untyped-def]
        noisy = query.scaled_answer(self._counts) + discrete_laplace(self._scale, self._source)
        top = self.scale
        if noisy < 0:
            noisy = -noisy
        if noisy > top:
            noisy = 2 * top - noisy
        return clamp(noisy, top)


class Reflect(IndependentLaplace):
    """Answers out of [0, nW] reflected back in (not clamped) while answer_law declares the clamp."""
    name = "rti-ind-reflect"

    def _start(self, counts, source):  # type: ignore[no-untyped-def]
        return ReflectSession(self.declaration(), counts, self.noise_scale, source)


class OkIndependent(IndependentLaplace):
    """Honest: independent Laplace, the session's noise drawn before the query is read."""
    name = "rti-ok-independent"

    def _start(self, counts, source):  # type: ignore[no-untyped-def]
        return OkSession(self.declaration(), counts, self.noise_scale, source)


class OkSession(IndependentSession):
    def _answer(self, query):  # type: ignore[no-untyped-def]
        y = discrete_laplace(self._scale, self._source)
        return clamp(y + query.scaled_answer(self._counts), self.scale)


# ---------------------------------------------------------------- anonymized
class NoisedPrefix(SortedHistogram):
    """Noise only on the true labels' ranks plus one; padding beyond stays exactly 0 (leaks #labels)."""
    name = "rti-sorted-noised-prefix"

    def program(self, prevalences):  # type: ignore[no-untyped-def]
        vector = self.padded(prevalences).tolist()
        m = min(prevalences.counts + 1, self.length)
        head = yield Noise(self.sampler, vector[:m])
        noisy = list(head) + [0] * (self.length - m)
        counts: dict[int, int] = {}
        for value, length in rounded_runs(pava_blocks(noisy, [1] * len(noisy))):
            if value:
                counts[value] = counts.get(value, 0) + length
        return self.histogram(counts, sum(r * phi for r, phi in counts.items()))


ALL = [StdMemo, ShortTable, ClosedCdf, OkMirror, Linear, PublicEmpty, CoarseDecider, SatFloat,
       GeoHist, NeverEmpty, SimulMax, EpsPerLabel, TwoHalves, Reflect, OkIndependent, NoisedPrefix]
