"""Broken samplers (each class docstring's first line states its flaw)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq, mpz

from dpplug.enclosure import Enclosure
from dpplug.exact import smallest_error_bound, smallest_reaching
from dpplug.guarantee import COUNT_SENSITIVITY_1, Guarantee
from dpplug.plugins.samplers.discrete_laplace import DiscreteLaplace
from dpplug.plugins.samplers.geosample import GeoSample
from dpplug.plugins.samplers.noise_moments import ClampedNoise, power_sums
from dpplug.plugins.samplers.truncated_geometric import TruncatedGeometric
from dpplug.randomness import RandomSource, SystemSource

#: G(j) memoised across instances "to share work between releasers built for the same n".
_G_TABLE: dict[tuple[int, int], Any] = {}


class SharedTableGeoSample(GeoSample):
    """Flaw: M(c, u) reads G(j) from a module-level memo keyed by (n, j) that forgets ε.

    GeoSample whose inverse-CDF search memoises the exact G(j) in a process-wide table so that
    several releasers with the same n share it; the key omits a and b, so an instance built after
    another one with the same n but a different ε searches the other instance's CDF.
    """

    name = "rte-geo-shared-table"
    summary = "GeoSample with a process-wide G(j) memo (keyed by n and j)."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self._g_exact = self._shared_g
        self._g_enclosure = lambda j: Enclosure.of(self._shared_g(j))

    def _shared_g(self, j: int) -> Any:
        key = (self.n, j)
        value = _G_TABLE.get(key)
        if value is None:
            value = _G_TABLE[key] = self._g(j)(mpz)
        return value

    def _output(self, count: int, u: int) -> int:
        j = smallest_reaching(self._g_exact, self._g_enclosure, -self.n, self.n, u)
        return min(max(count + j, 0), self.n)


class OsFastPathLaplace(DiscreteLaplace):
    """Flaw: with the OS source, the second geometric of Z = G₁ − G₂ runs one round only.

    A fast path for the production source (its word pool serves draws cheaply): the author
    unrolled the round loop for G₂ and forgot to continue it, so G₂ is capped at T and the noise
    can never go below −T: neighbouring counts get outputs of probability 0 against > 0.
    Seeded sources take the reference path.
    """

    name = "rte-dlap-os-fastpath"
    summary = "Discrete Laplace with an unrolled fast path for the OS CSPRNG."

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        if not isinstance(source, SystemSource):
            return super()._sample(counts, source)
        table = self._powers
        rounds = table.lower.size
        first = self._geometric(counts.size, source)
        second = rounds - table.locate(counts.size, source)  # one round: min(G, T)
        return counts + first - second


class UntruncatedDeltaTSGD(TruncatedGeometric):
    """Flaw: k and δ′ = Pr[X = k] from the untruncated geometric's mass at k.

    The author used the two-sided geometric's Pr[Z = k] = (1−α)α^k/(1+α) for k-TSGD's
    δ′ (and for choosing k), forgetting that truncating to [−k, k] renormalises the law upwards:
    the declared δ is below the real Pr[X = k], and k can be one too small for the δ asked.
    """

    name = "rte-tsgd-untruncated-delta"
    summary = "k-TSGD with δ′ computed from the untruncated geometric."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        a, b = self.a, self.b

        def untruncated(k: int) -> Any:
            return mpq((a - b) * mpz(b) ** k, (a + b) * mpz(a) ** k)

        self.k = smallest_error_bound(untruncated, self.params["delta"])
        self._d = mpz(self._s(0)(mpq) + self._s(1)(mpq))
        self.d = int(self._d)
        self.delta = untruncated(self.k)
        self.derived = {"exp_epsilon": self.exp_epsilon, "k": self.k, "achieved_delta": self.delta}
        self.__dict__.pop("_boundaries", None)
        exact = lambda j: self._g(j)(mpq)  # noqa: E731
        self._g_exact = exact
        self._g_enclosure = lambda j: self._g(j)(Enclosure.of)

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.exp_epsilon, self.delta, COUNT_SENSITIVITY_1)


#: From this n on, G(j) uses the "streamlined" upper-side closed form.
_LARGE_N = 4096


class LargeNExponentGeoSample(GeoSample):
    """Flaw: for n ≥ 4096 the upper side of G(j) is b^{j+2}·a^{n−2−j} (an exponent slip).

    A closed form rewritten for large n puts one extra factor b/a on the upper tail, moving that
    mass to the noise 0: M(c, ·), F and the pmf stay consistent with each other, but
    Pr[Z = 0]/Pr[Z = −1] = (a + b)/b > a/b = the declared e^ε.
    """

    name = "rte-geo-large-n-exponent"
    summary = "GeoSample with a large-n closed form of its CDF."

    def _g(self, j: int) -> Any:
        a, b, n, d = self.geometric.a, self.geometric.b, self.n, self._d
        if n < _LARGE_N or j < 0 or j >= n - 1:
            return super()._g(j)
        return lambda lift: lift(d) - lift(b) ** (j + 2) * lift(a) ** (n - 2 - j)

    def probability_at_most(self, z: int, count: int) -> Any:
        if self.n < _LARGE_N:
            return super().probability_at_most(z, count)
        j = z - count
        if z < 0 or z >= self.n or j < 0 or j >= self.n - 1:
            return super().probability_at_most(z, count)
        a, b = self.geometric.a, self.geometric.b
        return 1 - mpq(mpz(b) ** (j + 2), mpz(a) ** (j + 1) * (a + b))

    def _noise_variance(self, count: int) -> float:
        if self.n < _LARGE_N:
            return super()._noise_variance(count)
        a, b = self.geometric.a, self.geometric.b
        r, peak = mpq(b, a), mpq(a - b, a + b)
        noise = ClampedNoise(count, self.n)
        noise.point(0, mpq(a - b, a))
        down, up = noise.reach()
        for sign, reach, weight in ((-1, down, peak), (1, up, peak * r)):
            noise.run(weight, power_sums(r, 1, reach - 1), sign)
            noise.point(sign * reach, weight * r ** max(reach, 1) / (1 - r))
        return noise.variance
