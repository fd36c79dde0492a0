"""The discrete Laplace (two-sided geometric) mechanism with a rational ratio, sampled exactly.

c + Z with Pr[Z = z] = ((1−α)/(1+α))·α^{|z|} for every integer z (Ghosh–Roughgarden–Sundararajan;
docs/mechanisms.md#discrete-laplace). α is e^{−ε} rounded *up* to a dyadic rational m/2^q, so the
likelihood ratio of neighbouring counts is exactly 1/α ≤ e^ε.

Z = G₁ − G₂ for two independent geometrics with Pr[G ≥ g] = α^g; each trial of a geometric is
one exact Bernoulli(α) coin, a q-bit uniform integer compared with m. The number of draws is
random (expected 2/(1−α) per count) but independent of the data. The output is unbounded: there
is no finite randomness size d, so M(c, u) and the scaled CDF do not exist; this is the exact
comparison point for OpenDP's native ``make_geometric``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.exact import exp_upper, smallest_error_bound
from dpplug.guarantee import COUNT_SENSITIVITY_1, Accuracy, ErrorBound, Guarantee
from dpplug.kinds import CountingQuerySampler
from dpplug.params import Schema, epsilon_param
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource

_DENOMINATOR_BITS = 32
_PMF_WINDOW = 32


class DiscreteLaplace(CountingQuerySampler):
    name = "discrete-laplace"
    summary = "Unbounded two-sided geometric noise with rational ratio e^(−ε̃), exact."
    reference = "Ghosh, Roughgarden, Sundararajan 2009 (geometric mechanism); Balcer & Vadhan §4.1"
    schema = Schema(
        (
            epsilon_param(
                "Guarantee for one count of sensitivity 1 (e^−ε rounded up to m/2^32).",
                high=16,
                low=mpq(1, 1 << 20),
            ),
        )
    )
    conformance_cases = ({"epsilon": mpq(1, 2)}, {"epsilon": 2})

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.n: int | None = None
        self.d: int | None = None
        self.alpha = exp_upper(-self.params["epsilon"], _DENOMINATOR_BITS)
        self._threshold = int(self.alpha.numerator)
        self._bits = int(self.alpha.denominator).bit_length() - 1
        self.derived = {"alpha": self.alpha}

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(1 / self.alpha, 0, COUNT_SENSITIVITY_1)

    def _pmf(self, count: int) -> Pmf:
        alpha = self.alpha
        centre = (1 - alpha) / (1 + alpha)
        window = range(-_PMF_WINDOW, _PMF_WINDOW + 1)
        return Pmf({count + z: centre * alpha ** abs(z) for z in window}, tail_ratio=alpha)

    def _geometric(self, size: int, source: RandomSource) -> npt.NDArray[np.int64]:
        """Pr[G ≥ g] = α^g: count exact Bernoulli(α) successes before the first failure."""
        out = np.zeros(size, dtype=np.int64)
        active = np.arange(size)
        while active.size:
            active = active[source.bits_array(self._bits, active.size) < self._threshold]
            out[active] += 1
        return out

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        return counts + self._geometric(counts.size, source) - self._geometric(counts.size, source)

    def _accuracy(self, beta: Any) -> Accuracy:
        """Smallest a with Pr[|Z| > a] = 2α^{a+1}/(1+α) ≤ β."""
        alpha = self.alpha
        a = smallest_error_bound(lambda a: 2 * alpha ** (a + 1) / (1 + alpha), beta)
        bound = ErrorBound(a, beta)
        return Accuracy(bound, bound, formula="smallest a with 2α^(a+1)/(1+α) ≤ β")
