"""Known-broken query releasers, each registered as a plugin the way a third party would, and
each required to fail a named conformance contract with a named diagnosis (see
test_query_releasers.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from gmpy2 import mpq

from dpplug.composition import step_budget
from dpplug.discrete_noise import discrete_gaussian, discrete_laplace
from dpplug.guarantee import Accuracy, ErrorBound
from dpplug.hookspecs import Register, hookimpl
from dpplug.kinds.query_releaser.projections import ProjectionHash, SparseProjection
from dpplug.kinds.query_releaser.queries import LabelCounts, SparseQuery, clamp
from dpplug.plugins.queries import (
    IndependentLaplace,
    SparseMultiplicativeWeights,
    SparseProjectionReleaser,
)
from dpplug.plugins.queries.independent import IndependentSession
from dpplug.plugins.queries.sparse_mw import Design, SparseMultiplicativeWeightsSession
from dpplug.randomness import RandomSource


class LeakyIndependent(IndependentLaplace):
    """Declares ε but adds a thousandth of the noise that ε needs."""

    name = "zoo-leaky-independent"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.noise_scale /= 1000


class OverclaimingProjection(SparseProjectionReleaser):
    """Declares an error sixteen times smaller than its analysis proves."""

    name = "zoo-overclaiming-projection"

    def _accuracy(self, beta: Any) -> Accuracy:
        honest = super()._accuracy(beta)
        return Accuracy(
            ErrorBound(honest.per_query.a // 16, beta),
            ErrorBound(honest.simultaneous.a // 16, beta),
            formula="a sixteenth of the honest bound",
        )


class _TalkativeSession(IndependentSession):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.rows = self._counts.rows  # a public attribute that depends on the data


class TalkativeSessions(IndependentLaplace):
    """Its sessions show how many rows the data has."""

    name = "zoo-talkative-sessions"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _TalkativeSession:
        return _TalkativeSession(self.declaration(), counts, self.noise_scale, source)


class _EndlessSession(IndependentSession):
    def answers(self, queries: Iterable[object]) -> list[Fraction]:
        out = [Fraction(self._answer(self.query(q)), self.scale) for q in queries]
        self.answered += len(out)
        return out


class EndlessSessions(IndependentLaplace):
    """Its sessions answer past the k queries their guarantee covers."""

    name = "zoo-endless-sessions"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _EndlessSession:
        return _EndlessSession(self.declaration(), counts, self.noise_scale, source)


class _EagerSession(IndependentSession):
    def answers(self, queries: Iterable[object]) -> list[Fraction]:
        queries = list(queries)
        self._source.bits(8)  # draws before it validates the queries
        return super().answers(queries)


class EagerSessions(IndependentLaplace):
    """Its sessions draw randomness before validating a query."""

    name = "zoo-eager-sessions"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _EagerSession:
        return _EagerSession(self.declaration(), counts, self.noise_scale, source)


class _FirstLabelSession(IndependentSession):
    def query(self, query: object) -> SparseQuery:
        parsed = super().query(query)
        if isinstance(query, dict) and query:
            first = next(iter(query))
            if first in parsed.labels:  # keeps only the label listed first
                weight = parsed.weights[parsed.labels.index(first)]
                return SparseQuery((first,), (weight,), parsed.grid)
        return parsed


class FirstLabelSessions(IndependentLaplace):
    """Answers a query from the label it lists first: the answer depends on the listing order."""

    name = "zoo-first-label-sessions"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _FirstLabelSession:
        return _FirstLabelSession(self.declaration(), counts, self.noise_scale, source)


class _RoundingSession(IndependentSession):
    def query(self, query: object) -> SparseQuery:
        parsed = super().query(query)
        if isinstance(query, dict):  # replaces the caller's query by its canonical form
            query.clear()
            query.update(parsed.as_dict())
        return parsed


class RoundsCallersQueries(IndependentLaplace):
    """Rewrites the caller's query in place: rounded onto the grid, labels in canonical order."""

    name = "zoo-rounds-callers-queries"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _RoundingSession:
        return _RoundingSession(self.declaration(), counts, self.noise_scale, source)


class ForgetsComposition(IndependentLaplace):
    """Gives every answer the whole ε instead of its share of the k answers, and declares the
    answer law it really has: one answer is fine, the session is not."""

    name = "zoo-forgets-composition"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.noise_scale = mpq(self.workload.grid) / mpq(self.params["epsilon"])


class UnstructuredForgetsComposition(ForgetsComposition):
    """Forgets composition and declares no exact structure: only a whole session's audit (its
    k answers asked one call at a time) sees it, since each answer alone is private."""

    name = "zoo-unstructured-forgets-composition"
    conformance_cases = ({"n": 20, "epsilon": 1, "max_queries": 8, "sparsity": 2, "grid": 1},)

    def exact_structure(self) -> None:
        return None


class _SharedNoiseSession(IndependentSession):
    def _answer(self, query: SparseQuery) -> int:
        if not hasattr(self, "_noise"):  # one noise for the whole session
            self._noise = discrete_laplace(self._scale, self._source)
        return clamp(query.scaled_answer(self._counts) + self._noise, self.scale)


class SharedNoise(IndependentLaplace):
    """Draws one noise per session and adds it to every answer: each answer alone has the
    declared law, but the answers are not independent."""

    name = "zoo-shared-noise"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _SharedNoiseSession:
        return _SharedNoiseSession(self.declaration(), counts, self.noise_scale, source)


class HalfBudgetProjection(SparseProjectionReleaser):
    """Noises its T column sums as if they were T/2 (the step for half the coordinates), and
    declares the noise it really adds."""

    name = "zoo-half-budget-projection"

    def _configure(self, dimension: int) -> None:
        super()._configure(dimension)
        if self.budget is not None:
            half = step_budget(self.params["epsilon"], self.params["delta"], max(1, dimension // 2))
            self.noise_parameter = 1 / half.epsilon0


class NarrowNoiseProjection(SparseProjectionReleaser):
    """Adds noise of 4/5 the declared scale (or variance) to each column sum."""

    name = "zoo-narrow-noise-projection"

    def _noisy(
        self, projection_hash: ProjectionHash, sums: list[int], source: RandomSource
    ) -> SparseProjection:
        draw = discrete_laplace if self.noise == "laplace" else discrete_gaussian
        noise = draw(self.noise_parameter * mpq(4, 5), source, len(sums))
        noisy = tuple(s + z for s, z in zip(sums, noise, strict=True))
        return SparseProjection(self.declaration(), projection_hash, noisy)


class _ExactAtTopSession(IndependentSession):
    def _answer(self, query: SparseQuery) -> int:
        scaled = query.scaled_answer(self._counts)
        if scaled == self.scale:  # "the noise would be clamped away anyway"
            return scaled
        return super()._answer(query)


class ExactAtTop(IndependentLaplace):
    """Releases the true answer, without noise, when it is the top of the range n·W, and
    declares the clamped Laplace law there too: the probe's datasets must reach both ends."""

    name = "zoo-exact-at-top"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _ExactAtTopSession:
        return _ExactAtTopSession(self.declaration(), counts, self.noise_scale, source)


class _LastAnswerSession(IndependentSession):
    def _answer(self, query: SparseQuery) -> int:
        if self.remaining == 1:  # "the last query gets what is left of the budget"
            noise = discrete_laplace(self._scale / 2, self._source)
            return clamp(query.scaled_answer(self._counts) + noise, self.scale)
        return super()._answer(query)


class LessNoiseLast(IndependentLaplace):
    """Answers the k-th query with half the declared noise: the first two answers, which the
    replay sees, are as declared."""

    name = "zoo-less-noise-last"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _LastAnswerSession:
        return _LastAnswerSession(self.declaration(), counts, self.noise_scale, source)


class _AntitheticLastSession(IndependentSession):
    def _answer(self, query: SparseQuery) -> int:
        if self.remaining == 1:  # "antithetic noise": the last answer negates the one before
            noise = -self._previous
        else:
            noise = self._previous = discrete_laplace(self._scale, self._source)
        return clamp(query.scaled_answer(self._counts) + noise, self.scale)


class AntitheticLast(IndependentLaplace):
    """Answers the k-th query with the negated noise of the (k−1)-th: every answer alone has the
    declared law, but the last two sum to their true answers' sum."""

    name = "zoo-antithetic-last"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _AntitheticLastSession:
        return _AntitheticLastSession(self.declaration(), counts, self.noise_scale, source)


class _RelatedNoiseSession(IndependentSession):
    def _answer(self, query: SparseQuery) -> int:
        drawn: dict[tuple[Any, ...], tuple[Any, int]] = self.__dict__.setdefault("_drawn", {})
        earlier = drawn.get(query.labels)
        if earlier is not None and earlier[0] != query.weights:  # same labels, other weights
            noise = earlier[1]
        else:
            noise = discrete_laplace(self._scale, self._source)
        drawn[query.labels] = (query.weights, noise)
        return clamp(query.scaled_answer(self._counts) + noise, self.scale)


class RelatedNoise(IndependentLaplace):
    """Reuses a query's noise for a later query over the same labels with other weights (the same
    query asked again gets fresh noise): their difference is exact."""

    name = "zoo-related-noise"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _RelatedNoiseSession:
        return _RelatedNoiseSession(self.declaration(), counts, self.noise_scale, source)


class _LabelsHeldSession(IndependentSession):
    def _answer(self, query: SparseQuery) -> int:
        if len(self._counts.labels) >= 3:  # "spread-out data needs less noise"
            noise = discrete_laplace(self._scale / 4, self._source)
            return clamp(query.scaled_answer(self._counts) + noise, self.scale)
        return super()._answer(query)


class LabelsHeld(IndependentLaplace):
    """A quarter of the declared noise once the data holds three labels or more: the answer
    depends on more than its true answer."""

    name = "zoo-labels-held"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _LabelsHeldSession:
        return _LabelsHeldSession(self.declaration(), counts, self.noise_scale, source)


class _ExactUpdateSession(SparseMultiplicativeWeightsSession):
    def _answer(self, query: SparseQuery) -> int:
        answer = super()._answer(query)
        if self._round_noise is None and self.updates:  # an update just ended the round
            return clamp(query.scaled_answer(self._counts), self.scale)
        return answer


class ExactUpdates(SparseMultiplicativeWeights):
    """Releases the exact answer when it updates, instead of the noisy one."""

    name = "zoo-exact-updates"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _ExactUpdateSession:
        return _ExactUpdateSession(self.declaration(), self.design, counts, source)


class _FreshThresholdSession(SparseMultiplicativeWeightsSession):
    def _answer(self, query: SparseQuery) -> int:
        self._round_noise = None  # a new threshold noise for every query
        return super()._answer(query)


class FreshThreshold(SparseMultiplicativeWeights):
    """Draws the sparse vector's threshold noise for every query, not once per round, while
    declaring the per-round structure."""

    name = "zoo-fresh-threshold"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _FreshThresholdSession:
        return _FreshThresholdSession(self.declaration(), self.design, counts, source)


def _recast(design: Design, kind: type[Design]) -> Design:
    """*design*'s constants in a Design subclass that overrides a noise scale."""
    return kind(**{f.name: getattr(design, f.name) for f in dataclasses.fields(Design)})


@dataclasses.dataclass(frozen=True)
class _ThinTestDesign(Design):
    @property
    def query_scale(self) -> Any:
        return super().query_scale / 3


class ThinTestNoise(SparseMultiplicativeWeights):
    """Tests each query with a third of the noise its declared structure states."""

    name = "zoo-thin-test-noise"

    def _start(
        self, counts: LabelCounts, source: RandomSource
    ) -> SparseMultiplicativeWeightsSession:
        thin = _recast(self.design, _ThinTestDesign)
        return SparseMultiplicativeWeightsSession(self.declaration(), thin, counts, source)


class ForgetsAnswers(SparseMultiplicativeWeights):
    """Splits its budget over the min(c, k) sparse-vector rounds only, forgetting that each
    round's noisy answer spends as much again."""

    name = "zoo-forgets-answers"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        rounds = min(self.design.updates, self.workload.max_queries)
        budget = step_budget(self.params["epsilon"], self.params["delta"], rounds)
        self.design = dataclasses.replace(self.design, budget=budget)


class HalvedThreshold(SparseMultiplicativeWeights):
    """Tests each query against half the threshold τ its declared structure states ("τ is
    conservative, half is enough"): the rounds end far more often than declared."""

    name = "zoo-halved-threshold"

    def _start(
        self, counts: LabelCounts, source: RandomSource
    ) -> SparseMultiplicativeWeightsSession:
        halved = dataclasses.replace(self.design, threshold=self.design.threshold // 2)
        return SparseMultiplicativeWeightsSession(self.declaration(), halved, counts, source)


class _ThresholdNoiseAnswerSession(SparseMultiplicativeWeightsSession):
    def _answer(self, query: SparseQuery) -> int:
        if self._round_noise is None:
            self._round_noise = discrete_laplace(self._design.threshold_scale, self._source)
        rho = self._round_noise
        answer = super()._answer(query)
        if self._round_noise is None:  # the round ended: "ρ/2 has the answer noise's scale"
            return clamp(query.scaled_answer(self._counts) + rho // 2, self._design.scale)
        return answer


class ThresholdNoiseAnswers(SparseMultiplicativeWeights):
    """Answers a round's update with the round's threshold noise halved (b_thr = 2·b_ans)
    instead of a fresh draw: the answer's noise is the one the test was passed with."""

    name = "zoo-threshold-noise-answers"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _ThresholdNoiseAnswerSession:
        return _ThresholdNoiseAnswerSession(self.declaration(), self.design, counts, source)


class _SpreadHypothesisSession(SparseMultiplicativeWeightsSession):
    def _answer(self, query: SparseQuery) -> int:
        updates = self.updates
        answer = super()._answer(query)
        if self.updates == updates and len(self._counts.labels) >= 3:
            return min(answer + 1, self.scale)  # "spread-out data sits above the IDC's guess"
        return answer


class SpreadHypothesis(SparseMultiplicativeWeights):
    """Answers its hypothesis plus one grid unit when the data holds three labels or more."""

    name = "zoo-spread-hypothesis"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _SpreadHypothesisSession:
        return _SpreadHypothesisSession(self.declaration(), self.design, counts, source)


@dataclasses.dataclass(frozen=True)
class _ThinAnswerDesign(Design):
    @property
    def answer_scale(self) -> Any:
        return super().answer_scale / 4


class _ThinAfterUpdateSession(SparseMultiplicativeWeightsSession):
    def _answer(self, query: SparseQuery) -> int:
        if self.updates == 1 and not isinstance(self._design, _ThinAnswerDesign):
            self._design = _recast(self._design, _ThinAnswerDesign)  # "the IDC is warmed up"
        return super()._answer(query)


class ThinAfterUpdate(SparseMultiplicativeWeights):
    """Answers with a quarter of the declared answer noise once its first round has ended."""

    name = "zoo-thin-after-update"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _ThinAfterUpdateSession:
        return _ThinAfterUpdateSession(self.declaration(), self.design, counts, source)


class _StaleThresholdSession(SparseMultiplicativeWeightsSession):
    def _answer(self, query: SparseQuery) -> int:
        if "_kept" not in self.__dict__:
            self._kept = discrete_laplace(self._design.threshold_scale, self._source)
        self._round_noise = self._kept  # the first round's threshold noise, for every round
        return super()._answer(query)


class StaleThreshold(SparseMultiplicativeWeights):
    """Draws the sparse vector's threshold noise once per session, not once per round."""

    name = "zoo-stale-threshold"

    def _start(self, counts: LabelCounts, source: RandomSource) -> _StaleThresholdSession:
        return _StaleThresholdSession(self.declaration(), self.design, counts, source)


#: Each broken releaser → (the contract that must catch it, what its diagnosis must say).
ZOO: dict[type, tuple[str, str]] = {
    LeakyIndependent: ("audit", "more than the declared ε"),
    OverclaimingProjection: ("accuracy", "too many for β = 1/20"),
    TalkativeSessions: ("hygiene", "public attributes depend on the data: {'rows'"),
    EndlessSessions: ("hygiene", "a session answered a query past the k-th"),
    EagerSessions: ("bad-input", "only after drawing randomness"),
    FirstLabelSessions: ("hygiene", "the answers depend on the order of a query's labels"),
    ExactUpdates: ("audit", "more than the declared ε"),
    RoundsCallersQueries: ("hygiene", "changed the caller's data"),
    ForgetsComposition: ("exact-privacy", "the same query asked k = 4 times already has"),
    UnstructuredForgetsComposition: ("audit", "of its k = 8, one call each"),
    SharedNoise: ("exact-privacy", "the first two answers to"),
    HalfBudgetProjection: ("exact-privacy", "moving all T = 16 coordinates by one gives"),
    NarrowNoiseProjection: ("sampling-law", "samples do not follow the declared law"),
    ExactAtTop: ("exact-privacy", "the first answer to {'x0': 1} on {'x0': 50} gives"),
    LessNoiseLast: ("sampling-law", "answers 2…k to the same query pooled: samples do not"),
    AntitheticLast: ("sampling-law", "the total of k answers to one query: samples do not"),
    RelatedNoise: ("exact-privacy", "the first two answers to {'x0': 1, 'x5': 1} and"),
    LabelsHeld: ("exact-privacy", "on {'x0': 25, 'x5': 1, 'x4': 1, 'x3': 1, 'x2': 1, 'x1': 1}"),
    FreshThreshold: ("sampling-law", "repetitions first ends a round: samples do not follow"),
    ThinTestNoise: ("sampling-law", "samples do not follow the declared law"),
    ForgetsAnswers: ("exact-privacy", "the declared structure does not give the guarantee"),
    HalvedThreshold: ("sampling-law", "(first gap nearest the threshold): samples do not follow"),
    ThresholdNoiseAnswers: ("sampling-law", "(first gap nearest the threshold): samples do"),
    ThinAfterUpdate: ("sampling-law", "the second round after a first that ended"),
    StaleThreshold: ("sampling-law", "the second round after a first that ended"),
    SpreadHypothesis: (
        "sampling-law",
        "'x1': 1} (first gap nearest the threshold): samples do not",
    ),
}


@hookimpl
def register_query_releasers(register: Register) -> None:
    for releaser in ZOO:
        register(releaser)
