"""m-sparse linear queries answered from a released histogram: post-processing, so any number of
queries costs no privacy beyond the release (docs/mechanisms.md#query-answers-from-a-histogram).

A histogram release (dense, sparse or compact; :mod:`dpplug.histograms`) carries its accuracy:
every released count is within a of the truth, all at once, except with probability β (the
releaser's ``simultaneous`` bound; a sparse release reads 0 for a label it did not release, and
its bound covers those). A query Q with at most m labels of positive weight w_x = W·Q(x) ≤ W is
answered as clamp(Σ_x w_x·c̃_x, 0, n·W)/(n·W), the rounded query's answer on the released counts
(:mod:`dpplug.queries`: weights on the grid 1/W, the public n). Its error in grid units is
|Σ_x w_x(c̃_x − c_x)| ≤ m·W·a, and clamping to [0, n·W], where the true answer lies, only
shrinks it; so **every** m-sparse query, adaptively chosen or not, is within α = m·a/n of the
truth on the same event, and the answers declare that accuracy (a = m·W·a grid units, the
release's β). Compare Blum & Roth's releasers, whose α covers k queries: this one covers them all,
and wins once k is large (README "Which mechanism?"; ``dpplug compare query-releaser …``).

The guarantee is the release's: a histogram releaser's replace-one analysis also covers one row
added or removed (docs/kinds.md), the relation of the query releasers.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from dpplug.errors import BadParameter
from dpplug.guarantee import Accuracy, ErrorBound
from dpplug.kinds.histogram_releaser.outputs import (
    CompactHistogram,
    DenseHistogram,
    SparseHistogram,
)
from dpplug.kinds.query_releaser.queries import Declaration, QueryAnswers, Workload, clamp

#: A workload's k for answers that cover every query: the bound does not depend on k.
EVERY_QUERY = (1 << 63) - 1
#: The default grid, the query releasers' (weights rounded to multiples of 1/W).
GRID = 1 << 16

Histogram = DenseHistogram | SparseHistogram | CompactHistogram


def answer_error(count_error: int, sparsity: int) -> int:
    """m·a: how far n times an m-sparse query's answer (weights at most 1) can move when every
    count moves by at most a; divided by n it is the answers' α."""
    return sparsity * count_error


class HistogramQueries(QueryAnswers):
    """Answers to m-sparse queries from one histogram release (see the module docstring).

    ``HistogramQueries(release, n=…, sparsity=m)``: *release* a histogram releaser's output,
    *n* the public bound on rows it was released for, *sparsity* the most labels a query may
    weigh, *grid* W (default 2^16). ``answer``/``answers`` return exact ``Fraction`` s in [0, 1];
    ``alpha`` is m·a/n (up to the grid: a/(n·W) with a = m·W·a_release).
    """

    interactive = False

    def __init__(self, release: Histogram, n: int, sparsity: int, grid: int = GRID) -> None:
        if not isinstance(release, DenseHistogram | SparseHistogram | CompactHistogram):
            raise BadParameter(
                f"HistogramQueries answers from a histogram release (what a histogram "
                f"releaser's release() returns), got {type(release).__name__}"
            )
        for name, value in (("n", n), ("sparsity", sparsity), ("grid", grid)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise BadParameter(f"{name} must be a positive int, got {value!r}")
        self.release = release
        bound = release.accuracy.simultaneous
        per_answer = grid * answer_error(bound.a, sparsity)
        accuracy = Accuracy(
            ErrorBound(per_answer, bound.beta),
            ErrorBound(per_answer, bound.beta),
            formula=(
                f"every {sparsity}-sparse query within m·a/n, a = {bound.a} the release's "
                "all-bins error (post-processing)"
            ),
        )
        self.declaration = Declaration(
            "histogram-queries",
            {"n": n, "sparsity": sparsity, "grid": grid},
            f"queries answered from {release.mechanism}",
            n,
            release.universe,
            Workload(EVERY_QUERY, sparsity, grid),
            release.guarantee,
            accuracy,
        )

    def answers(self, queries: Iterable[object]) -> list[Fraction]:
        """clamp(Σ_x w_x·c̃_x, 0, n·W)/(n·W) for each query (all validated first)."""
        parsed = [self.query(q) for q in queries]
        counts = self._counts({x for q in parsed for x in q.labels})
        out = []
        for query in parsed:
            total = sum(w * counts[x] for x, w in zip(query.labels, query.weights, strict=True))
            out.append(Fraction(clamp(total, self.scale), self.scale))
        return out

    def _counts(self, labels: set[Any]) -> dict[Any, int]:
        """The released counts of *labels* (a compact release evaluates them in one batch)."""
        ordered = sorted(labels, key=self.release.universe.index)
        if isinstance(self.release, CompactHistogram):
            return dict(zip(ordered, self.release.counts(ordered), strict=True))
        return {x: self.release.count(x) for x in ordered}

    def __repr__(self) -> str:
        return f"<HistogramQueries from {self.release.mechanism}: α = {float(self.alpha):.3g}>"
