"""Query releasers: variants of independent-laplace."""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from gmpy2 import mpq

from dpplug.discrete_noise import discrete_laplace, laplace_error
from dpplug.errors import NotSupported
from dpplug.guarantee import Accuracy, ErrorBound
from dpplug.kinds.query_releaser.queries import (
    Declaration,
    LabelCounts,
    QuerySession,
    SparseQuery,
    clamp,
)
from dpplug.plugins.queries.independent import IndependentLaplace, IndependentSession
from dpplug.randomness import RandomSource


class OkExplicitSession(IndependentSession):
    def _answer(self, query: SparseQuery) -> int:
        true = 0
        for label, weight in zip(query.labels, query.weights, strict=True):
            true += weight * self._counts.count(label)
        return min(max(true + discrete_laplace(self._scale, self._source), 0), self.scale)


class OkExplicit(IndependentLaplace):
    """Control: the scaled answer summed explicitly and clamped inline (same law)."""

    name = "rtb-ok-independent-explicit"
    summary = "Independent Laplace answers computed explicitly (honest control)."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return OkExplicitSession(self.declaration(), counts, self.noise_scale, source)


class BatchSession(IndependentSession):
    def answers(self, queries: Iterable[object]) -> list[Fraction]:
        parsed = [self.query(q) for q in queries]
        if len(parsed) > self.declaration.workload.max_queries:
            raise NotSupported(
                f"a batch covers at most k = {self.declaration.workload.max_queries} queries"
            )
        with self._lock:
            return [Fraction(self._answer(q), self.scale) for q in parsed]


class BatchUncounted(IndependentLaplace):
    """Flaw: batch path checks a batch against k but never counts answers."""

    name = "rtb-independent-batch-uncounted"
    summary = "Independent Laplace with a vectorised batch path."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return BatchSession(self.declaration(), counts, self.noise_scale, source)


class UnionOffByOne(IndependentLaplace):
    """Flaw: simultaneous bound at β/(k−1)."""

    name = "rtb-independent-union-off-by-one"
    summary = "Independent Laplace with a union-bounded simultaneous accuracy."

    def _accuracy(self, beta: Any) -> Accuracy:
        k, cap = self.workload.max_queries, self.n * self.workload.grid
        terms = max(k - 1, 1)
        return Accuracy(
            ErrorBound(min(laplace_error(self.noise_scale, beta), cap), beta),
            ErrorBound(min(laplace_error(self.noise_scale, beta / terms), cap), beta),
            formula="a at β per query; at β/(k−1) for all k",
        )


class MinWeightSession(IndependentSession):
    def __init__(self, declaration: Declaration, counts: LabelCounts, eps0: Any, src: Any) -> None:
        super().__init__(declaration, counts, None, src)
        self._eps0 = eps0

    def _answer(self, query: SparseQuery) -> int:
        scale = mpq(min(query.weights)) / self._eps0  # the query's sensitivity
        noisy = query.scaled_answer(self._counts) + discrete_laplace(scale, self._source)
        return clamp(noisy, self.scale)


class MinWeightScale(IndependentLaplace):
    """Flaw: noise scaled to the query's smallest weight, not its largest."""

    name = "rtb-independent-min-weight"
    summary = "Independent Laplace with noise scaled to each query's own sensitivity."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return MinWeightSession(self.declaration(), counts, self.budget.epsilon0, source)


class UnlockedSession(IndependentSession):
    def answer(self, query: object) -> Fraction:
        parsed = self.query(query)  # fast path for one query: no batch bookkeeping
        if self.remaining <= 0:
            raise NotSupported(
                f"this session's guarantee covers k = {self.declaration.workload.max_queries} "
                "queries, all answered; start a new release for more"
            )
        released = Fraction(self._answer(parsed), self.scale)
        self.answered += 1
        return released


class UnlockedAnswer(IndependentLaplace):
    """Flaw: single-query answer() checks k and counts outside the session lock."""

    name = "rtb-independent-answer-unlocked"
    summary = "Independent Laplace with a single-query fast path."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return UnlockedSession(self.declaration(), counts, self.noise_scale, source)


class CountsCache(IndependentLaplace):
    """Flaw: validated label counts cached on the mechanism keyed by the label set."""

    name = "rtb-independent-counts-cache"
    summary = "Independent Laplace that reuses validated counts of repeated label sets."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        cache = self.__dict__.setdefault("_rtb_counts", {})
        counts = cache.setdefault(counts.labels, counts)
        return IndependentSession(self.declaration(), counts, self.noise_scale, source)


ALL = (
    OkExplicit,
    BatchUncounted,
    UnionOffByOne,
    MinWeightScale,
    UnlockedAnswer,
    CountsCache,
)
