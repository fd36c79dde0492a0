"""Small plugins used to exercise the registry the way third parties use it."""

from __future__ import annotations

from typing import Any

from gmpy2 import mpq

import dpplug
from dpplug.guarantee import COUNT_SENSITIVITY_1


class RandomizedResponse(dpplug.CountingQuerySampler):
    """Keep a bit with probability 3/4, flip it otherwise: e^ε = 3 exactly (d = 4)."""

    name = "randomized-response"
    summary = "Binary randomized response on a count in {0, 1}."
    reference = "Warner 1965"
    schema = dpplug.Schema(())
    conformance_cases = ({},)

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.n = 1
        self.d = 4

    @property
    def guarantee(self) -> dpplug.Guarantee:
        return dpplug.Guarantee(3, 0, COUNT_SENSITIVITY_1)

    def _output(self, count: int, u: int) -> int:
        return count if u <= 3 else 1 - count

    def _scaled_cdf(self, z: int, count: int) -> int:
        if z < 0:
            return 0
        if z >= 1:
            return 4
        return 3 if count == 0 else 1

    def _pmf(self, count: int) -> dpplug.Pmf:
        return self._pmf_from_scaled_cdf(count)

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        a = 0 if beta >= mpq(1, 4) else 1
        bound = dpplug.ErrorBound(a, beta)
        return dpplug.Accuracy(bound, bound)
