"""Query releasers (broken: rtg-*, honest: rtg-ok-*)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from gmpy2 import mpq

from dpplug.discrete_noise import discrete_laplace
from dpplug.errors import NotSupported
from dpplug.kinds.query_releaser.queries import LabelCounts, QuerySession, SparseQuery, clamp
from dpplug.plugins.queries.independent import IndependentLaplace, IndependentSession
from dpplug.randomness import RandomSource


class _DebugSession(IndependentSession):
    def _answer(self, query: SparseQuery) -> int:
        true = query.scaled_answer(self._counts)
        self.last_true = true  # for debugging a session
        noisy = true + discrete_laplace(self._scale, self._source)
        return clamp(noisy, self.scale)


class DebugAttribute(IndependentLaplace):
    """FLAW: the session keeps the last query's true scaled answer in a public attribute
    (``last_true``, "for debugging"), readable by whoever holds the session."""

    name = "rtg-q-debug-attr"
    summary = "independent-laplace whose session remembers the last true answer (debugging)."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return _DebugSession(self.declaration(), counts, self.noise_scale, source)


class IntegerScale(IndependentLaplace):
    """FLAW: the discrete Laplace scale W/ε₀ is floored to an integer ("the integer sampler");
    a smaller scale spends more than ε₀ per answer whenever W/ε₀ is not an integer."""

    name = "rtg-q-integer-scale"
    summary = "independent-laplace with an integer noise scale ⌊W/ε₀⌋."
    conformance_cases = (IndependentLaplace.conformance_cases[0],)

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.noise_scale = mpq(max(1, int(self.noise_scale)))
        self.derived["scale"] = self.noise_scale


class RowsDedupe(IndependentLaplace):
    """FLAW: rows given as a list are de-duplicated before counting ("identical rows are one
    record"), so repeated labels count once: answers on row input are far from the truth."""

    name = "rtg-q-rows-dedupe"
    summary = "independent-laplace, duplicate rows removed before counting."

    def label_counts(self, data: object) -> LabelCounts:
        if not isinstance(data, Mapping | str | bytes) and isinstance(data, Iterable):
            seen: dict[Any, None] = {}
            for row in data:
                seen.setdefault(row, None)
            data = list(seen)
        return super().label_counts(data)


class _ReverseSession(IndependentSession):
    def answers(self, queries: Iterable[object]) -> list[Fraction]:
        parsed = [self.query(q) for q in queries]
        with self._lock:
            if len(parsed) > self.remaining:
                raise NotSupported(
                    f"this session covers k = {self.declaration.workload.max_queries} queries "
                    f"and {self.answered} were answered; start a new release for more"
                )
            out: list[Fraction] = [Fraction(0)] * len(parsed)
            for i in reversed(range(len(parsed))):  # draws in reverse order: same law
                out[i] = Fraction(self._answer(parsed[i]), self.scale)
                self.answered += 1
            return out


class ReverseBatch(IndependentLaplace):
    """CONTROL: independent-laplace whose session answers a batch drawing the noises from the
    last query to the first (independent noises: the same law)."""

    name = "rtg-ok-q-reverse-batch"
    summary = "independent-laplace; a batch's noises drawn last query first."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return _ReverseSession(self.declaration(), counts, self.noise_scale, source)


from dpplug.kind import CentralPlan  # noqa: E402
from dpplug.kinds.query_releaser.projections import SparseProjection  # noqa: E402
from dpplug.plugins.queries import projection as _projection  # noqa: E402
from dpplug.plugins.queries.projection import SparseProjectionReleaser  # noqa: E402


def _finish_exact(mechanism: Any, public: Any, folded: Any) -> Any:
    universe, projection_hash = public
    if mechanism.projection != projection_hash.shape or mechanism.universe != universe:
        raise ValueError("the pipeline's hash does not fit the mechanism built from the budget")
    _rows, sums = (0, [0] * projection_hash.shape.dimension) if folded is None else folded
    # PipelineDP's engine noises the aggregate, so the plan hands back the exact column sums
    return SparseProjection(mechanism.declaration(), projection_hash, tuple(int(v) for v in sums))


class PlanWithoutNoise(SparseProjectionReleaser):
    """FLAW: the PipelineDP central plan's finish step returns the exact column sums (the
    author believed the engine adds the noise), so pipeline releases are deterministic; the
    direct start() route is correct."""

    name = "rtg-proj-plan-no-noise"
    summary = "sparse-projection with its own PipelineDP plan."

    @classmethod
    def central_plan(cls) -> CentralPlan:
        return CentralPlan(
            per_bin=_projection._contribution,
            combine=_projection._add,
            empty=None,
            finish=_finish_exact,
            public=_projection._public,
        )
