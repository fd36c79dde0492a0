"""The discrete Laplace (two-sided geometric) mechanism with a rational ratio, sampled exactly.

c + Z with Pr[Z = z] = ((1−α)/(1+α))·α^{|z|} for every integer z (Ghosh–Roughgarden–Sundararajan;
docs/mechanisms.md#discrete-laplace). α is e^{−ε} rounded *up* to a dyadic rational m/2^q, so the
likelihood ratio of neighbouring counts is exactly 1/α ≤ e^ε.

Z = G₁ − G₂ for two independent geometrics with Pr[G ≥ g] = α^g. A geometric is the number of
g ≥ 1 with V < α^g for a uniform V ∈ [0, 1): each round locates V among the T boundaries
α^T < … < α² < α exactly (:class:`~dpplug.inverse_cdf.BoundaryTable`, one 63-bit draw but for
rare refinements), adds T − #{g ≤ T : α^g ≤ V}, and, when V < α^T, goes on with a fresh V (the
geometric is memoryless). With T = min(⌈ln 2/ln(1/α)⌉, 2^16) a round ends the draw with
probability 1 − α^T ≥ 1/2 down to ε = 2^-16·ln 2, so a count costs a few vectorised rounds
however small ε is (at most about 2 + 2^-16/ε; T = 1 for ε ≥ ln 2, where a round is one exact
Bernoulli(α) coin), where one coin per trial cost 2/(1−α) draws per count (2·10^6 at ε = 2^-20).
The number of draws is random but independent of the data. The output is unbounded: there is no
finite randomness size d, so M(c, u) and the scaled CDF do not exist; this is the exact
comparison point for OpenDP's native ``make_geometric``. The accuracy is decided from rigorous
enclosures of the tail (:mod:`dpplug.enclosure`), so β = 10^-300 costs as little as β = 1/2.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.enclosure import Enclosure
from dpplug.exact import exp_upper, smallest_error_bound
from dpplug.guarantee import COUNT_SENSITIVITY_1, Accuracy, ErrorBound, Guarantee
from dpplug.inverse_cdf import BoundaryTable
from dpplug.kinds import CountingQuerySampler
from dpplug.params import Schema, epsilon_param
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource

_DENOMINATOR_BITS = 32
_PMF_WINDOW = 32
#: The largest number of geometric trials one round of :meth:`DiscreteLaplace._geometric` covers.
_MAX_ROUND = 1 << 16


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
        self.derived = {"alpha": self.alpha}

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(1 / self.alpha, 0, COUNT_SENSITIVITY_1)

    def _pmf(self, count: int) -> Pmf:
        alpha = self.alpha
        centre = (1 - alpha) / (1 + alpha)
        window = range(-_PMF_WINDOW, _PMF_WINDOW + 1)
        return Pmf({count + z: centre * alpha ** abs(z) for z in window}, tail_ratio=alpha)

    @cached_property
    def _powers(self) -> BoundaryTable:
        """α^T ≤ … ≤ α² ≤ α: the boundaries of one round (see the module docstring)."""
        alpha = self.alpha
        rounds = max(1, min(_MAX_ROUND, math.ceil(math.log(2) / -math.log(float(alpha)))))
        powers = [Enclosure.of(alpha)]
        while len(powers) < rounds:
            powers.append(powers[-1] * alpha)
        return BoundaryTable.build(powers[::-1], lambda i: alpha ** (rounds - i))

    def _geometric(self, size: int, source: RandomSource) -> npt.NDArray[np.int64]:
        """Pr[G ≥ g] = α^g: G = #{g ≥ 1 : V < α^g}, T boundaries per round."""
        table, rounds = self._powers, self._powers.lower.size
        out = np.zeros(size, dtype=np.int64)
        active = np.arange(size)
        while active.size:
            below = table.locate(active.size, source)  # #{g ≤ T : α^g ≤ V}
            out[active] += rounds - below
            active = active[below == 0]
        return out

    def _sample(self, counts: npt.NDArray[np.int64], source: RandomSource) -> npt.NDArray[np.int64]:
        return counts + self._geometric(counts.size, source) - self._geometric(counts.size, source)

    def _accuracy(self, beta: Any) -> Accuracy:
        """Smallest a with Pr[|Z| > a] = 2α^{a+1}/(1+α) ≤ β."""
        alpha = self.alpha

        def tail(a: int) -> Any:
            return lambda lift: 2 * lift(alpha) ** (a + 1) / (1 + lift(alpha))

        a = smallest_error_bound(tail, beta)
        bound = ErrorBound(a, beta)
        return Accuracy(bound, bound, formula="smallest a with 2α^(a+1)/(1+α) ≤ β")
