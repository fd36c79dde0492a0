"""Broken counting-query samplers (red team A). Each class docstring states its flaw."""

from __future__ import annotations

from functools import lru_cache

import gmpy2
import numpy as np
import numpy.typing as npt
from gmpy2 import mpfr, mpq, mpz

from dpplug.enclosure import Enclosure
from dpplug.exact import EXACT_BITS
from dpplug.plugins.samplers.discrete_laplace import DiscreteLaplace
from dpplug.plugins.samplers.fixedpoint_geometric import TABLE_BITS, TABLE_SIZE, FixedPointGeometric
from dpplug.plugins.samplers.geometric_params import GeometricParams
from dpplug.plugins.samplers.geosample import GeoSample
from dpplug.randomness import RandomSource


class AntitheticPairs(FixedPointGeometric):
    """fixedpoint-geometric whose vectorised path uses antithetic pairs.

    FLAW (joint law of one vectorised call): element 2i+1 of a batch reuses element 2i's 63-bit
    draw reflected, u' = 2^63 − 1 − u, which for the symmetric table gives exactly the negated
    noise. Every element alone has the declared law, but the two noises of a pair cancel, so
    noisy[2i] + noisy[2i+1] = c[2i] + c[2i+1] whenever neither is clamped: a histogram or a
    PipelineDP count vector built on this sampler releases sums of true counts exactly.
    """

    name = "rta-antithetic-pairs"
    summary = "fixedpoint-geometric with antithetic pairs in a batch: half the 63-bit draws."

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        size = counts.size
        if size < 2:
            return super()._sample(counts, source)
        half = (size + 1) // 2
        first = source.bits_array(TABLE_BITS, half).view(np.int64)
        u0 = np.empty(size, dtype=np.int64)
        u0[0::2] = first
        # antithetic variate: the reflected draw, exactly uniform on [0, 2^63) as well
        u0[1::2] = (TABLE_SIZE - 1) - first[: size // 2]
        noisy: npt.NDArray[np.int64] = np.clip(counts + self._noise(u0), 0, self.n)
        return noisy


class UnderstatedStd(DiscreteLaplace):
    """discrete-laplace with a closed-form variance for ``noise_std``.

    FLAW (declared number): the closed form is α/(1−α)², the variance of ONE geometric, while the
    noise is the difference of two independent geometrics, variance 2α/(1−α)². ``noise_std``
    (PipelineDP's ``count_noise_stddev``) is too small by a factor √2.
    """

    name = "rta-understated-std"
    summary = "discrete-laplace with a closed-form noise variance (cheap noise_std)."

    def _noise_variance(self, count: int) -> float:
        alpha = self.alpha
        return float(alpha / (1 - alpha) ** 2)


#: From this ε on, e^ε is large and the ratio is an integer a/1.
_INTEGER_RATIO_FROM = mpq(2)


class RatioRoundedNearest(GeoSample):
    """GeoSample whose ratio is the NEAREST integer to e^ε for ε ≥ 2.

    FLAW (budget): Balcer–Vadhan's a/b must be at most e^ε; rounding e^ε to the nearest integer
    overshoots whenever its fractional part is ≥ 1/2 (ε = 4: a = 55 > e^4 ≈ 54.598; ε = 8:
    a = 2981 > e^8 ≈ 2980.958). The declared guarantee is the true one (a/1), but it is above
    the ε the caller asked for, so the mechanism spends more than its budget.
    """

    name = "rta-ratio-rounded-nearest"
    summary = "GeoSample with the nearest integer ratio for large ε (less noise)."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        epsilon = self.params["epsilon"]
        if epsilon >= _INTEGER_RATIO_FROM:
            with gmpy2.context(gmpy2.get_context(), precision=256):
                a = int(gmpy2.rint(gmpy2.exp(mpfr(epsilon))))
            self.geometric = GeometricParams(a, 1)
            self._rebuild()

    def _rebuild(self) -> None:
        a, b = self.geometric.a, self.geometric.b
        self._d = (a + b) * mpz(a) ** (self.n - 1)
        self.d = int(self._d)
        self.derived = self.geometric.as_dict()
        self._g_enclosure = lru_cache(maxsize=1 << 14)(lambda j: self._g(j)(Enclosure.of))
        exact = lambda j: self._g(j)(mpz)  # noqa: E731
        short = self._d.bit_length() <= EXACT_BITS
        self._g_exact = lru_cache(maxsize=1 << 10)(exact) if short else exact


class FloatSumLaplace(DiscreteLaplace):
    """discrete-laplace that subtracts its two geometrics in float64.

    FLAW (sizes up to the schema's limit): the noise G₁ − G₂ is formed in float64 "so that huge
    geometrics at tiny ε cannot overflow int64", and the count is added to it in float64. Counts
    above 2^53 (the schema takes |count| ≤ 2^62) are rounded to the float grid BEFORE the noise:
    at 2^60 the grid step is 256, so c = 2^60 + 128 and c + 1 are released as 2^60 and
    2^60 + 256 with probability ≈ 1 − 2·α^128: a likelihood ratio of about e^{128ε}.
    """

    name = "rta-float-sum-laplace"
    summary = "discrete-laplace with the two geometrics subtracted in float64."

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        g1 = self._geometric(counts.size, source)
        g2 = self._geometric(counts.size, source)
        noise = np.subtract(g1, g2, dtype=np.float64)
        return np.rint(counts + noise).astype(np.int64)


#: Batches from this size on take the bulk path.
BULK_FROM = 1 << 16


class CoarseBulk(FixedPointGeometric):
    """fixedpoint-geometric with a 32-bit bulk path for large batches.

    FLAW (code path keyed to large batches): from 2^16 counts on, each count uses a 32-bit draw
    w, u0 = w·2^31, "since the table's resolution loss is below 2^-32 per entry". But the table's
    tail weights are far below 2^31/2^63: on this path their probabilities become 0 or 2^-32,
    so neighbouring counts get outputs of probability 0 against 2^-32 (infinite likelihood
    ratio), and the law differs from the declared pmf.
    """

    name = "rta-coarse-bulk"
    summary = "fixedpoint-geometric with a 32-bit bulk path for batches of 2^16 counts or more."

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        if counts.size < BULK_FROM:
            return super()._sample(counts, source)
        words = source.bits_array(32, counts.size).astype(np.int64)
        u0 = words << np.int64(TABLE_BITS - 32)
        noisy: npt.NDArray[np.int64] = np.clip(counts + self._noise(u0), 0, self.n)
        return noisy
