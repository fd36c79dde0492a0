# ruff: noqa: E501  (kept as the red team wrote it: one-line flaw docstrings)
"""Query releasers (rtd-q-*)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

from gmpy2 import mpq

from dpplug.discrete_noise import discrete_laplace
from dpplug.kinds.query_releaser.queries import LabelCounts, QuerySession, SparseQuery, clamp
from dpplug.plugins.queries.independent import IndependentLaplace, IndependentSession
from dpplug.randomness import RandomSource


class GridUnits(IndependentLaplace):
    """Flaw: the noise scale is 1/ε₀ ("a [0,1] query has sensitivity 1"), but in grid units the scaled answer moves by up to W: e^ε is L^W."""

    name = "rtd-q-gridunits"
    summary = "Independent Laplace with noise calibrated to sensitivity 1."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.noise_scale = 1 / mpq(self.budget.epsilon0)
        self.derived["scale"] = self.noise_scale


class SqrtK(IndependentLaplace):
    """Flaw: each of k answers gets ε₀·⌊√k⌋ ("composition grows like √k") while δ = 0 is declared: pure composition needs ε/k."""

    name = "rtd-q-sqrtk"
    summary = "Independent Laplace with square-root composition."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        root = math.isqrt(self.workload.max_queries)
        self.noise_scale = mpq(self.workload.grid) / (mpq(self.budget.epsilon0) * root)
        self.derived["scale"] = self.noise_scale


class SharedNoiseSession(IndependentSession):
    def answers(self, queries: Iterable[object]) -> list[Fraction]:
        queries = list(queries)
        self._batch_noise = (
            discrete_laplace(self._scale, self._source) if len(queries) >= 3 else None
        )
        try:
            return super().answers(queries)
        finally:
            self._batch_noise = None

    def _answer(self, query: SparseQuery) -> int:
        shared = getattr(self, "_batch_noise", None)
        y = shared if shared is not None else discrete_laplace(self._scale, self._source)
        return clamp(query.scaled_answer(self._counts) + y, self.scale)


class BatchSharedNoise(IndependentLaplace):
    """Flaw: a batch of 3 or more queries (answers()) shares one noise draw, so differences of answers are exact."""

    name = "rtd-q-batch-shared-noise"
    summary = "Independent Laplace with one noise draw per batch of queries."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return SharedNoiseSession(self.declaration(), counts, self.noise_scale, source)


class LoopSession(IndependentSession):
    def _answer(self, query: SparseQuery) -> int:
        total = 0
        for label, weight in zip(query.labels, query.weights, strict=True):
            total += weight * self._counts.count(label)
        return clamp(total + discrete_laplace(self._scale, self._source), self.scale)


class OkLoop(IndependentLaplace):
    """Honest control: independent Laplace whose session computes the scaled answer in an explicit loop (same law)."""

    name = "rtd-ok-indep-loop"
    summary = "Independent Laplace, answers by an explicit loop."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return LoopSession(self.declaration(), counts, self.noise_scale, source)


class CopyableSession(IndependentSession):
    def __copy__(self) -> CopyableSession:
        """Branch an analysis: a fresh session over the same data."""
        return CopyableSession(self.declaration, self._counts, self._scale, self._source)


class SessionCopy(IndependentLaplace):
    """Flaw: sessions support copy.copy() ("branch an analysis"), and each copy answers k more queries on the same data: the k-query budget is unbounded."""

    name = "rtd-q-session-copy"
    summary = "Independent Laplace whose sessions can be branched with copy.copy."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return CopyableSession(self.declaration(), counts, self.noise_scale, source)
