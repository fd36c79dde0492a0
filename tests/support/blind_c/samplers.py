"""Broken samplers (rtc-*) of red team C."""

from __future__ import annotations

from typing import Any

import gmpy2
import numpy as np
import numpy.typing as npt
from gmpy2 import mpfr, mpq

from dpplug.guarantee import Accuracy, ErrorBound
from dpplug.plugins.samplers.discrete_laplace import DiscreteLaplace
from dpplug.plugins.samplers.geosample import GeoSample
from dpplug.randomness import RandomSource

#: Below this β the accuracy uses the asymptotic closed form (no big-integer search).
SMALL_BETA = mpq(1, 10**6)


class SmallBetaGeoSample(GeoSample):
    """FLAW: for β < 1e-6, accuracy(β) uses the 'asymptotic' a = ⌊ln(1/β)/ε̃⌋, dropping the
    two-sided factor 2/(1+α) and rounding down, so the declared a is exceeded w.p. > β."""

    name = "rtc-geo-smallbeta"
    summary = "GeoSample with a fast closed-form accuracy for tiny β."
    reference = "Balcer & Vadhan Alg. 4.8 (red team C)"

    def _accuracy(self, beta: Any) -> Accuracy:
        if beta >= SMALL_BETA:
            return super()._accuracy(beta)
        with gmpy2.context(gmpy2.get_context(), precision=128):
            eps = gmpy2.log(mpfr(self.geometric.a) / self.geometric.b)
            m = min(int(gmpy2.floor(gmpy2.log(1 / mpfr(mpq(beta))) / eps)), self.n)
        bound = ErrorBound(m, beta)
        return Accuracy(bound, bound, formula="a = ⌊ln(1/β)/ε̃⌋ for β < 1e-6 (asymptotic)")


class RankedNoiseLaplace(DiscreteLaplace):
    """FLAW: the vectorised path sorts the noise draws and gives the smallest noise to the
    smallest count, so noisy counts keep the true order; the joint law of a batch is no longer
    a product and one count's change moves the others' noise (privacy breaks in a batch)."""

    name = "rtc-dlap-ranked"
    summary = "Discrete Laplace whose noisy counts keep the true counts' order (monotone batch)."
    reference = "Ghosh et al. 2009 (red team C)"

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        z = self._geometric(counts.size, source) - self._geometric(counts.size, source)
        order = np.argsort(counts, kind="stable")
        out = np.empty_like(counts)
        out[order] = counts[order] + np.sort(z)
        return out


#: Arrays at least this long take the one-geometric bulk path.
BULK = 1024


class SignMagnitudeLaplace(DiscreteLaplace):
    """FLAW: arrays of ≥ 1024 counts draw the noise as a random sign times one geometric
    (half the draws), which counts Z = 0 twice: Pr[Z = 0] = 1 − α instead of (1 − α)/(1 + α),
    so the ratio at the true count is 2/(1 + α)·(1/α)·… above e^ε̃ (pure DP broken)."""

    name = "rtc-dlap-signmag"
    summary = "Discrete Laplace with a sign-and-magnitude bulk path for large arrays."
    reference = "Ghosh et al. 2009 (red team C)"

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        if counts.size < BULK:
            return super()._sample(counts, source)
        magnitude = self._geometric(counts.size, source)
        sign = source.bits_array(1, counts.size).astype(np.int64) * 2 - 1
        return counts + sign * magnitude
