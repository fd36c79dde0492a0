"""Broken query releasers (rtc-*) of red team C."""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from dpplug.discrete_noise import discrete_laplace
from dpplug.errors import NotSupported
from dpplug.kinds.query_releaser.queries import LabelCounts, QuerySession, SparseQuery, clamp
from dpplug.plugins.queries.independent import IndependentLaplace, IndependentSession
from dpplug.randomness import RandomSource


class RowsSession(IndependentSession):
    def _answer(self, query: SparseQuery) -> int:
        rows, n = self._counts.rows, self.declaration.n
        exact = query.scaled_answer(self._counts)
        scaled = (exact * n + rows // 2) // rows if rows else 0
        return clamp(scaled + discrete_laplace(self._scale, self._source), self.scale)


class RowsNormalised(IndependentLaplace):
    """FLAW: answers are normalised by the data's own row count instead of the public n
    (Q(D) = Σ Q(row)/|D|), so one row added changes an answer by up to W·n/|D|, not W."""

    name = "rtc-il-rows-normalised"
    summary = "Independent Laplace answers, normalised by the number of rows."
    reference = "Dwork et al. 2006 (red team C)"

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return RowsSession(self.declaration(), counts, self.noise_scale, source)


class SortedBatchSession(IndependentSession):
    def answers(self, queries: Iterable[object]) -> list[Fraction]:
        parsed = [self.query(q) for q in queries]
        parsed.sort(key=lambda q: (tuple(map(repr, q.labels)), q.weights))
        with self._lock:
            if len(parsed) > self.remaining:
                raise NotSupported(f"more than the {self.remaining} queries left")
            released = []
            for query in parsed:
                released.append(Fraction(self._answer(query), self.scale))
                self.answered += 1
            return released


class SortedBatch(IndependentLaplace):
    """FLAW: answers(queries) answers a batch in canonical query order (to reuse label
    lookups) and returns the answers in that order, not the caller's: answers are attached to
    the wrong queries whenever a batch is not already sorted."""

    name = "rtc-il-sorted-batch"
    summary = "Independent Laplace answers with a label-ordered batch path."
    reference = "Dwork et al. 2006 (red team C)"

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return SortedBatchSession(self.declaration(), counts, self.noise_scale, source)


class LabelCacheSession(IndependentSession):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._cache: dict[Any, int] = {}

    def _answer(self, query: SparseQuery) -> int:
        key = query.labels
        if key not in self._cache:
            self._cache[key] = super()._answer(query)
        return self._cache[key]


class LabelCache(IndependentLaplace):
    """FLAW: a session caches noisy answers by the query's label set (for consistent repeated
    answers), ignoring the weights: {a: 1} then {a: 0.5} returns the first answer twice."""

    name = "rtc-il-label-cache"
    summary = "Independent Laplace answers, consistent for repeated queries."
    reference = "Dwork et al. 2006 (red team C)"

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return LabelCacheSession(self.declaration(), counts, self.noise_scale, source)
