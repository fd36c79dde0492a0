"""The query-releaser probe: broken releasers fail the contract that names their flaw (in the
fast run's settings), and the probe's pieces behave as documented."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

import dpplug
from dpplug import Registry
from dpplug.conformance.probes import probes
from dpplug.conformance.probes.query_releaser.probe import (
    QueryReleaserProbe,
    probe_labels,
    true_answer,
    workload_queries,
)
from dpplug.conformance.results import Outcome
from dpplug.conformance.runner import CONTRACTS, run_contract
from dpplug.conformance.settings import Settings
from dpplug.conformance.structures.independent_answers import (
    LATER_ANSWERS,
    MIXED_BATCH,
    PAIR_TOTAL,
    SESSION_TOTAL,
)
from dpplug.conformance.structures.noisy_coordinates import NoisyCoordinatesVerifier
from dpplug.conformance.structures.sparse_vector_rounds import (
    AT_THRESHOLD,
    AT_THRESHOLD_LABELS,
    BUCKETS_PER_SIDE,
    SECOND_ANSWER,
    SECOND_UPDATE_TIME,
    UPDATE_TIME,
    SparseVectorVerifier,
)
from dpplug.errors import NotSupported
from dpplug.kinds.query_releaser.queries import sparse_query
from dpplug.kinds.query_releaser.sparse_vector import SparseVectorRounds
from dpplug.plugins.queries import SparseMultiplicativeWeights

from support import query_zoo

ZOO_REGISTRY = Registry.load([query_zoo], entry_points=False)
FAST = Settings(mode="fast")


class Undeclared(SparseMultiplicativeWeights):
    """Sparse multiplicative weights without its sparse-vector declaration."""

    name = "test-undeclared"

    def exact_structure(self) -> None:
        return None


def test_every_zoo_releaser_registers() -> None:
    assert ZOO_REGISTRY.broken == []
    assert {e.name for e in ZOO_REGISTRY.entries(dpplug.kinds.QUERY_RELEASER)} >= {
        cls.name for cls in query_zoo.ZOO
    }


@pytest.mark.parametrize(
    ("broken", "contract", "diagnosis"),
    [(cls, contract, diagnosis) for cls, (contract, diagnosis) in query_zoo.ZOO.items()],
    ids=[cls.name for cls in query_zoo.ZOO],
)
def test_broken_releaser_fails_its_contract_for_the_right_reason(
    broken: type, contract: str, diagnosis: str
) -> None:
    assert contract in CONTRACTS
    result = run_contract(ZOO_REGISTRY.get(broken.name), contract, Settings())
    assert result.outcome is Outcome.FAILED, result.detail
    assert diagnosis in result.detail


def test_the_workload_is_fixed_sparse_and_on_the_grid() -> None:
    releaser = dpplug.create(
        "independent-laplace",
        universe="range:0:99",
        n=10,
        epsilon=1,
        max_queries=7,
        sparsity=3,
        grid=8,
    )
    queries = workload_queries(releaser, 5)
    assert queries == workload_queries(releaser, 5) != workload_queries(releaser, 6)
    assert len(queries) == 7
    assert all(len(q) == 3 and set(q) <= set(probe_labels(releaser)) for q in queries)
    assert all(w.denominator in (1, 2, 4, 8) and 0 < w <= 1 for q in queries for w in q.values())
    assert probe_labels(releaser, 3) == [0, 1, 2]
    assert true_answer({0: Fraction(1, 2), 1: 1}, {0: 4, 1: 1}, 10) == Fraction(3, 10)


def test_the_probe_draws_answers_in_grid_units_with_exact_laws_only_where_declared() -> None:
    case = SparseMultiplicativeWeights.conformance_cases[0]
    undeclared = QueryReleaserProbe(Undeclared(**case), dict(case))
    with pytest.raises(NotSupported, match="no exact structure"):
        undeclared.tested_law(0)
    with pytest.raises(NotSupported, match="no exact structure"):
        undeclared.exact_privacy(FAST)
    entry = dpplug.registry().get("independent-laplace")
    (probe, *_) = list(probes(entry))
    assert isinstance(probe, QueryReleaserProbe)
    with pytest.raises(NotSupported, match="irrational"):
        probe.law(0)
    assert probe.inputs == (0, probe.releaser.n // 2, probe.releaser.n)  # both clamped ends
    batches = (MIXED_BATCH, PAIR_TOTAL)
    assert probe.law_inputs == (*probe.inputs, LATER_ANSWERS, *batches, SESSION_TOTAL)
    later = probe.law_draw(LATER_ANSWERS, 7, dpplug.SeededSource(1))
    batch = probe.law_draw(MIXED_BATCH, 7, dpplug.SeededSource(1))
    assert len(batch) == 7 and batch.min() >= 0 and batch.max() <= probe.scale
    assert probe.tested_law(MIXED_BATCH) == probe.tested_law(probe.inputs[2])  # x₀'s, at the top
    pairs = probe.law_draw(PAIR_TOTAL, 7, dpplug.SeededSource(1))
    assert len(pairs) == 7 and pairs.min() >= 0 and pairs.max() <= 2 * probe.scale
    total, width = probe.tested_law(PAIR_TOTAL)  # {x₀: 1} at the middle and a query at 0
    assert 0 < width < 2**-100 and abs(sum(total.values()) - 1) == 0
    assert max(total, key=total.prob) == probe.inputs[1] * probe.releaser.workload.grid
    assert len(later) == 7 and later.min() >= 0 and later.max() <= probe.scale
    assert probe.tested_law(LATER_ANSWERS) == probe.tested_law(probe.inputs[1])
    middle = probe.inputs[1]
    law, width = probe.tested_law(middle)
    assert 0 < width < 2**-100
    centre = middle * probe.releaser.workload.grid
    assert law.prob(centre) == max(law.prob(z) for z in law)
    k = probe.releaser.workload.max_queries
    totals = probe.law_draw(SESSION_TOTAL, 7, dpplug.SeededSource(1))
    assert len(totals) == 7 and totals.min() >= 0 and totals.max() <= k * probe.scale
    total, total_width = probe.tested_law(SESSION_TOTAL)
    assert total.total() == 1 and 0 < total_width < 2**-100
    assert total.prob(k * centre) == max(total.prob(z) for z in total)
    assert probe.exact_privacy(FAST).failures == ()
    draws = probe.draw(probe.inputs[1], 50, dpplug.SeededSource(1))
    scale = probe.releaser.n * probe.releaser.workload.grid
    assert draws.dtype.kind == "i" and draws.min() >= 0 and draws.max() <= scale
    assert probe.pairs == ((0, 1), (probe.releaser.n // 2, probe.releaser.n // 2 + 1))
    projection = next(iter(probes(dpplug.registry().get("sparse-projection"))))
    assert projection.pairs == ((0, 1),)
    assert isinstance(projection, QueryReleaserProbe)
    assert isinstance(projection.verifier, NoisyCoordinatesVerifier)
    noise = projection.law_draw(0, 40, dpplug.SeededSource(2))  # 40 of three releases' 16
    assert noise.dtype.kind == "i" and len(noise) == 40
    law, width = projection.tested_law(0)
    assert 0 < width < 2**-100 and law.prob(0) == max(law.prob(z) for z in law)
    assert projection.exact_privacy(FAST).failures == ()


def test_a_sparse_vector_session_is_tested_at_its_threshold() -> None:
    """The first answer is the hypothesis or a bucket of the noise; on the dataset whose gap is
    nearest τ, both about half the time, and the update time has the structure's law."""
    (probe, *_) = list(probes(dpplug.registry().get("sparse-multiplicative-weights")))
    assert isinstance(probe, QueryReleaserProbe)
    assert isinstance(probe.verifier, SparseVectorVerifier)
    assert probe.law_inputs == (
        *probe.inputs,
        AT_THRESHOLD,
        AT_THRESHOLD_LABELS,
        UPDATE_TIME,
        SECOND_ANSWER,
        SECOND_UPDATE_TIME,
    )
    rounds, grid = probe.releaser.exact_structure(), probe.releaser.workload.grid
    query = sparse_query({probe_labels(probe.releaser)[0]: 1}, probe.releaser.workload, None)
    gap = probe.verifier.threshold_count * grid - rounds.hypothesis(query, ())
    assert abs(gap - rounds.threshold) <= grid
    law, width = probe.tested_law(AT_THRESHOLD)
    assert law.total() == 1 and 0 < width < 2**-100
    assert 0.3 < law.prob(BUCKETS_PER_SIDE + 1) < 0.7
    draws = probe.law_draw(AT_THRESHOLD, 200, dpplug.SeededSource(3))
    assert set(draws) <= set(law) and 60 < (draws == BUCKETS_PER_SIDE + 1).sum() < 140
    assert probe.tested_law(AT_THRESHOLD_LABELS) == (law, width)
    held = probe.law_draw(AT_THRESHOLD_LABELS, 200, dpplug.SeededSource(3))
    assert 60 < (held == BUCKETS_PER_SIDE + 1).sum() < 140
    times, slack = probe.tested_law(UPDATE_TIME)
    k = probe.releaser.workload.max_queries
    assert list(times) == list(range(1, k + 2)) and times.total() == 1 and slack < 1e-12
    drawn = probe.law_draw(UPDATE_TIME, 50, dpplug.SeededSource(3))
    assert set(drawn) <= set(times)
    second, _ = probe.tested_law(SECOND_ANSWER)
    assert 0.3 < second.prob(BUCKETS_PER_SIDE + 1) < 0.7  # the second round is fresh
    answers = probe.law_draw(SECOND_ANSWER, 100, dpplug.SeededSource(3))
    assert len(answers) == 100 and set(answers) <= set(second)
    later, _ = probe.tested_law(SECOND_UPDATE_TIME)
    assert list(later) == list(range(1, k + 1))  # k − 1 repetitions left, and "none"


class SmallGridDeclared(SparseMultiplicativeWeights):
    """Declares its structure on half its grid, so its losses would look half as large."""

    name = "test-small-grid-declared"

    def exact_structure(self) -> SparseVectorRounds:
        return dataclasses.replace(super().exact_structure(), sensitivity=self.workload.grid // 2)


def test_a_structure_on_another_grid_than_the_workload_fails() -> None:
    case = SparseMultiplicativeWeights.conformance_cases[0]
    probe = QueryReleaserProbe(SmallGridDeclared(**case), dict(case))
    (failure,) = probe.exact_privacy(FAST).failures
    assert "structure has W = 2 and n·W = 40000000, but the workload's grid is W = 4" in failure
