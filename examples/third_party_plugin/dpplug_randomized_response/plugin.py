"""Binary randomized response (Warner 1965) as a dpplug counting-query sampler.

A count c ∈ {0, 1} is kept with probability 3/4 and flipped otherwise: M(c, u) = c for u ≤ 3 and
1 − c for u = 4, with randomness u ∈ [1, 4]. The likelihood ratio of neighbouring counts is
(3/4)/(1/4) = 3 exactly, so the guarantee is ε = ln 3 for counts differing by one.
"""

from __future__ import annotations

from typing import Any

from gmpy2 import mpq

import dpplug
from dpplug.guarantee import COUNT_SENSITIVITY_1


class RandomizedResponse(dpplug.CountingQuerySampler):
    name = "randomized-response"  # lower-case words joined by dashes
    summary = "Keep a bit with probability 3/4, flip it otherwise (e^ε = 3)."
    reference = "Warner 1965, randomized response"
    schema = dpplug.Schema(())  # validated parameters: dpplug.Param(...)
    conformance_cases = ({},)  # small cases for the exact checks

    def __init__(self, **params: object) -> None:
        super().__init__(**params)  # validates params before anything else
        self.n, self.d = 1, 4  # counts in [0, 1], randomness u in [1, 4]

    @property
    def guarantee(self) -> dpplug.Guarantee:  # e^ε = 3 exactly, δ = 0, counts one apart
        return dpplug.Guarantee(3, 0, COUNT_SENSITIVITY_1)

    def _output(self, count: int, u: int) -> int:
        return count if u <= 3 else 1 - count

    def _scaled_cdf(self, z: int, count: int) -> int:
        if z < 0:
            return 0
        if z >= 1:
            return 4
        return 3 if count == 0 else 1

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        """The output is wrong with probability exactly 1/4."""
        bound = dpplug.ErrorBound(0 if beta >= mpq(1, 4) else 1, beta)
        return dpplug.Accuracy(bound, bound, formula="a = 0 if β ≥ 1/4, else 1")


@dpplug.hookimpl
def register_samplers(register: Any) -> None:
    register(RandomizedResponse)
