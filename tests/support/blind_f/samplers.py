# ruff: noqa: E501  (kept as the red team wrote it: one-line flaw docstrings)
"""Broken (and honest) counting-query samplers, subclasses of the built-in discrete Laplace."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gmpy2 import mpq

from dpplug.exact import exp_lower, smallest_error_bound
from dpplug.guarantee import Accuracy, ErrorBound
from dpplug.plugins.samplers.discrete_laplace import DiscreteLaplace
from dpplug.randomness import RandomSource


class OneSidedTail(DiscreteLaplace):
    """FLAW: accuracy(β) from the one-sided tail α^(a+1)/(1+α), so |Z| > a has probability ≈ 2β."""

    name = "rtf-s-onesided-tail"
    summary = "Discrete Laplace with an accuracy read from one tail of the noise."

    def _accuracy(self, beta: Any) -> Accuracy:
        alpha = self.alpha

        def tail(a: int) -> Any:
            return lambda lift: lift(alpha) ** (a + 1) / (1 + lift(alpha))

        a = smallest_error_bound(tail, beta)
        bound = ErrorBound(a, beta)
        return Accuracy(bound, bound, formula="smallest a with α^(a+1)/(1+α) ≤ β")


class AlphaRoundedDown(DiscreteLaplace):
    """FLAW: the noise is drawn with α = e^−ε rounded DOWN (ratio 1/α > e^ε), pmf/guarantee use α up."""

    name = "rtf-s-alpha-down"
    summary = "Discrete Laplace whose sampling ratio is rounded the other way from its pmf."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self._declared_alpha = self.alpha

    def _sample(self, counts: Any, source: RandomSource) -> Any:
        # "exp_lower is the safe rounding": the sampler's table is built from α rounded down
        declared = self.alpha
        self.__dict__.pop("_powers", None)
        self.alpha = exp_lower(-self.params["epsilon"], 32)
        try:
            return super()._sample(counts, source)
        finally:
            self.alpha = declared
            self.__dict__.pop("_powers", None)


class RoundCapped(DiscreteLaplace):
    """FLAW: each geometric stops after 8 rounds (bounded time), so |noise| ≤ 8T: pure DP breaks."""

    name = "rtf-s-round-cap"
    summary = "Discrete Laplace with at most 8 rounds per geometric."

    def _geometric(self, size: int, source: RandomSource) -> Any:
        table, rounds = self._powers, self._powers.lower.size
        out = np.zeros(size, dtype=np.int64)
        active = np.arange(size)
        for _ in range(8):
            if not active.size:
                break
            below = table.locate(active.size, source)
            out[active] += rounds - below
            active = active[below == 0]
        return out


class ContinuousStd(DiscreteLaplace):
    """FLAW: noise_std is the continuous Laplace's √2/ε, not the discrete 1/(√2·sinh(ε̃/2))."""

    name = "rtf-s-std-continuous"
    summary = "Discrete Laplace reporting the continuous Laplace standard deviation."

    def _noise_variance(self, count: int) -> float:
        return 2 / float(self.params["epsilon"]) ** 2


class OkDoubleDraw(DiscreteLaplace):
    """CONTROL: the two geometrics drawn in one call of size 2n and split (same law)."""

    name = "rtf-ok-dlap-split"
    summary = "Discrete Laplace drawing both geometrics in one vector."

    def _sample(self, counts: Any, source: RandomSource) -> Any:
        both = self._geometric(2 * counts.size, source)
        return counts + both[: counts.size] - both[counts.size :]


_ = (math, mpq)
