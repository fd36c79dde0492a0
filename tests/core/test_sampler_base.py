"""What the sampler base class derives from a plugin's declarations: a bounded sampler's law
from its scaled CDF."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from gmpy2 import mpq

import dpplug
from dpplug.errors import PluginFault
from dpplug.guarantee import COUNT_SENSITIVITY_1
from dpplug.kinds import CountingQuerySampler


class _Mod3(CountingQuerySampler):
    """A bounded sampler declaring only M(c, u) and its scaled CDF (e^ε = 2)."""

    name = "mod-three"
    summary = "Keep the count for u ≤ 2, else shift it mod 3."
    reference = "a test sampler"
    schema = dpplug.Schema(())
    conformance_cases = ({},)

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.n, self.d = 2, 4

    @property
    def guarantee(self) -> dpplug.Guarantee:
        return dpplug.Guarantee(2, 0, COUNT_SENSITIVITY_1)

    def _output(self, count: int, u: int) -> int:
        return count if u <= 2 else (count + u - 2) % 3

    def _scaled_cdf(self, z: int, count: int) -> int:
        return sum(1 for u in range(1, 5) if self._output(count, u) <= z)

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        bound = dpplug.ErrorBound(2, beta)
        return dpplug.Accuracy(bound, bound, formula="a = 2")


class _Unbounded(_Mod3):
    """The same declarations without a finite n: its law cannot be derived."""

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.n = None


@pytest.mark.parametrize("count", [0, 1, 2])
def test_a_bounded_samplers_law_is_derived_from_its_scaled_cdf(count: int) -> None:
    sampler = _Mod3()
    by_output = Counter(sampler(count, u) for u in range(1, 5))
    expected = {z: mpq(by_output[z], 4) for z in range(3)}
    assert dict(sampler.pmf(count).items()) == expected


def test_a_sampler_without_finite_n_and_d_must_declare_its_law() -> None:
    with pytest.raises(PluginFault, match="must implement _pmf"):
        _Unbounded().pmf(0)
