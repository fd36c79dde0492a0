"""dpplug's counting graphs in PipelineDP (``select_partitions`` with a dpplug strategy, and
``aggregate`` when dpplug noises every metric and selects the partitions): contribution bounding
as PipelineDP bounds, the counts it leaves, batches on any backend, and the aggregations that
keep PipelineDP's graph. The backends' own batching (Beam, Spark) is tested with the pipelines of
``test_pipelinedp.py``.

Every statistical check states its false-alarm rate: the samplers' own (a, β) bound at
β = 1e-12 per count, and binomial tails of at most 1e-9 for the contribution-bounding samples
(PipelineDP's sampler draws them, from numpy's global generator, so they are not seeded here).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest

pipeline_dp = pytest.importorskip("pipeline_dp")

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from dpplug.adapters import pipelinedp_batches  # noqa: E402
from dpplug.adapters.pipelinedp import (  # noqa: E402
    DPEngine,
    PluginNoise,
    partition_selection,
    sampler,
)

Metrics = pipeline_dp.Metrics
EXTRACTORS = pipeline_dp.DataExtractors(
    privacy_id_extractor=operator.itemgetter(0),
    partition_extractor=operator.itemgetter(1),
    value_extractor=operator.itemgetter(2),
)
BETA = Fraction(1, 10**12)
UNITS = 3000
#: Each unit: 5 rows in each of 3 partitions of its own group of 3 (units u, u + 3, … share).
ROWS = [(u, f"p{u % 3}-{k}", 1) for u in range(UNITS) for k in range(3) for _ in range(5)]
L0, LINF = 2, 2


class Delegating:
    """A backend PipelineDP does not know (not one of its classes): every operation is the
    local backend's, so batches there are of one element."""

    def __init__(self) -> None:
        self._local = pipeline_dp.LocalBackend()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._local, name)


@pytest.fixture(scope="module")
def spark_context() -> Iterator[Any]:
    pytest.importorskip("pyspark")
    from dpplug.adapters.spark import local_context

    context = local_context("dpplug-counting-graph-tests")
    yield context
    context.stop()


def _on(backend: str, request: pytest.FixtureRequest, rows: list[Any]) -> tuple[Any, Any]:
    """(backend, collection of *rows*) for *backend*: "local", "delegating" (a backend PipelineDP
    does not know) or "spark" (Spark local[2], the rows dealt round-robin into 3 RDD partitions,
    so every unit's rows lie in all of them: the per-partition counts and groups of the Spark
    graph must be combined across partitions, or a unit counts up to 3 times)."""
    if backend == "spark":
        context = request.getfixturevalue("spark_context")
        dealt = [row for offset in range(3) for row in rows[offset::3]]
        return pipeline_dp.SparkRDDBackend(context), context.parallelize(dealt, 3)
    return (Delegating() if backend == "delegating" else pipeline_dp.LocalBackend()), rows


def _accountant(epsilon: float = 1000) -> Any:
    return pipeline_dp.NaiveBudgetAccountant(total_epsilon=epsilon, total_delta=1e-6)


def _aggregate(
    backend: Any, metrics: list[Any], col: Any = ROWS, **bounds: Any
) -> tuple[dict[str, Any], Any]:
    accountant = _accountant()
    engine = DPEngine(accountant, backend, count_noise=sampler("discrete-laplace"))
    params = pipeline_dp.AggregateParams(
        metrics=metrics,
        partition_selection_strategy=partition_selection("optimal-partition-selection"),
        **{"max_partitions_contributed": L0, "max_contributions_per_partition": LINF, **bounds},
    )
    result = engine.aggregate(col, params, EXTRACTORS)
    accountant.compute_budgets()
    found = result.collect() if isinstance(backend, pipeline_dp.SparkRDDBackend) else result
    return dict(found), engine


def _error(engine: Any, name: str, l1: int) -> int:
    """The error bound at β of the engine's count sampler on one count of *name*'s budget, its
    ℓ₁ sensitivity *l1*."""
    (spec,) = [
        m.mechanism_spec
        for m in engine._budget_accountant._mechanisms
        if m.mechanism_spec.name == name
    ]
    epsilon = PluginNoise(engine._count_noise, spec.eps, l1).epsilon
    built = engine._count_noise.build(
        epsilon=Fraction(int(epsilon.numerator), int(epsilon.denominator))
    )
    return int(built.accuracy(BETA).per_query.a)


@pytest.mark.parametrize("backend", ["local", "delegating", "spark"])
def test_counts_are_bounded_as_pipelinedp_bounds_them(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """Every unit touches 3 partitions with 5 rows each; ℓ₀ = 2 of them are kept, each counted
    up to ℓ∞ = 2 rows: the 3 partitions of a group share 2·units contributions, the counts sum
    to exactly 2·ℓ∞ per unit and the unit counts to 2 per unit (each within the noise), and each
    partition holds about 2/3 of the group's units (binomial, 6 standard deviations)."""
    engine_backend, col = _on(backend, request, ROWS)
    released, engine = _aggregate(engine_backend, [Metrics.COUNT, Metrics.PRIVACY_ID_COUNT], col)
    assert sorted(released) == sorted({row[1] for row in ROWS})  # every partition, surely
    count_error = _error(engine, "COUNT (discrete-laplace)", L0 * LINF)
    units_error = _error(engine, "PRIVACY_ID_COUNT (discrete-laplace)", L0)
    group = UNITS // 3
    p = Fraction(L0, 3)
    spread = 6 * math.sqrt(group * p * (1 - p))  # per partition: P(|X − np| > 6σ) < 1e-8
    for g in range(3):
        keys = [f"p{g}-{k}" for k in range(3)]
        counts = [released[key].count for key in keys]
        units = [released[key].privacy_id_count for key in keys]
        assert abs(sum(counts) - LINF * L0 * group) <= 3 * count_error
        assert abs(sum(units) - L0 * group) <= 3 * units_error
        for count, unit in zip(counts, units, strict=True):
            assert abs(unit - float(p * group)) <= spread + units_error
            assert abs(count - LINF * unit) <= count_error + LINF * units_error


def test_contributions_bounded_already_count_every_row() -> None:
    """With contributions bounded already, COUNT is the rows (PipelineDP allows no
    PRIVACY_ID_COUNT there), and the selection sees ⌈rows / ℓ∞⌉ units: a partition of
    2·(m − 1) rows is below the pre-threshold m, one of 2·m rows at it."""
    m = 40
    rows = [(None, "low", 1)] * (2 * (m - 1)) + [(None, "high", 1)] * (1000 * m)
    accountant = _accountant()
    count_noise = sampler("geosample", n=10**5)
    engine = DPEngine(accountant, pipeline_dp.LocalBackend(), count_noise=count_noise)
    params = pipeline_dp.AggregateParams(
        metrics=[Metrics.COUNT],
        max_partitions_contributed=1,
        max_contributions_per_partition=2,
        contribution_bounds_already_enforced=True,
        pre_threshold=m,
        partition_selection_strategy=partition_selection("laplace-thresholding"),
    )
    assert engine._counts_in_batches(params, None)
    aggregated = engine.aggregate(rows, params, EXTRACTORS)
    accountant.compute_budgets()
    result = dict(aggregated)
    assert list(result) == ["high"]
    assert abs(result["high"].count - 1000 * m) <= _error(engine, "COUNT (geosample)", 2)


@pytest.mark.parametrize("backend", ["local", "spark"])
def test_select_partitions_keeps_l0_distinct_partitions_per_unit(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """ℓ₀ = 1 of each unit's 3 partitions (rows repeated: distinct partitions count once): each
    partition holds a third of its group's units, so with the pre-threshold just above a third
    plus 6 standard deviations none is kept, and just below a third minus 6 standard deviations
    all are (binomial tails below 1e-9 each)."""
    group = UNITS // 3
    spread = 6 * math.sqrt(group * (1 / 3) * (2 / 3))
    keys = {row[1] for row in ROWS}
    for pre_threshold, expected in (
        (math.ceil(group / 3 + spread) + 1, set()),
        (math.floor(group / 3 - spread) - 200, keys),
    ):
        accountant = _accountant(10)
        engine_backend, col = _on(backend, request, ROWS)
        engine = DPEngine(accountant, engine_backend)
        params = pipeline_dp.SelectPartitionsParams(
            max_partitions_contributed=1,
            pre_threshold=pre_threshold,
            partition_selection_strategy=partition_selection("optimal-partition-selection"),
        )
        selected = engine.select_partitions(col, params, EXTRACTORS)
        accountant.compute_budgets()
        found = selected.collect() if backend == "spark" else selected
        assert set(found) == expected


PUBLIC = [*sorted({row[1] for row in ROWS})[:4], "absent"]


@pytest.mark.parametrize(
    ("metrics", "bounds", "public"),
    [
        ([Metrics.COUNT, Metrics.SUM], {"min_value": 0, "max_value": 1}, None),
        ([Metrics.COUNT], {}, PUBLIC),
        (
            [Metrics.PRIVACY_ID_COUNT],
            {"perform_cross_partition_contribution_bounding": False},
            None,
        ),
    ],
)
def test_other_aggregations_keep_pipelinedps_graph(
    metrics: list[Any], bounds: Any, public: list[str] | None
) -> None:
    """Aggregations the counting graph does not compute (a metric PipelineDP noises, public
    partitions, no cross-partition bounding) run PipelineDP's graph with dpplug's filter and
    noise: every partition (the public ones alone when given), integer counts."""
    accountant = _accountant()
    engine = DPEngine(
        accountant, pipeline_dp.LocalBackend(), count_noise=sampler("discrete-laplace")
    )
    params = pipeline_dp.AggregateParams(
        metrics=metrics,
        max_partitions_contributed=L0,
        max_contributions_per_partition=LINF,
        partition_selection_strategy=partition_selection("optimal-partition-selection"),
        **bounds,
    )
    assert not engine._counts_in_batches(params, public)
    aggregated = engine.aggregate(ROWS, params, EXTRACTORS, public_partitions=public)
    accountant.compute_budgets()
    released = dict(aggregated)
    assert sorted(released) == sorted(public or {row[1] for row in ROWS})
    for value in released.values():
        counted = value.count if Metrics.COUNT in metrics else value.privacy_id_count
        assert type(counted) is float and counted == int(counted)


def test_the_report_names_each_step_of_the_counting_graph() -> None:
    """The report's stages in order, and the metrics in PipelineDP's order (the params')."""
    released, engine = _aggregate(
        pipeline_dp.LocalBackend(), [Metrics.PRIVACY_ID_COUNT, Metrics.COUNT]
    )
    assert all(m._fields == ("privacy_id_count", "count") for m in released.values())
    (report,) = engine.explain_computations_report()
    graph = report.split("Computation graph:")[1]
    steps = [
        f"Per-partition contribution bounding: for each privacy_id and each partition, count "
        f"min(actual_contributions_per_partition, {LINF})",
        f"Cross-partition contribution bounding: for each privacy_id randomly select "
        f"max(actual_partition_contributed, {L0})",
        "Private partition selection with dpplug plugin optimal-partition-selection()",
        "Computed DP privacy_id_count with\n     dpplug plugin discrete-laplace()",
        "Computed DP count with\n     dpplug plugin discrete-laplace()",
    ]
    at = [graph.index(step) for step in steps]
    assert at == sorted(at)


@pytest.mark.parametrize("size", [0, 1, pipelinedp_batches.BATCH, 3 * pipelinedp_batches.BATCH + 5])
@pytest.mark.parametrize("backend", [pipeline_dp.LocalBackend, Delegating])
def test_batches_cover_every_element_once(backend: Any, size: int) -> None:
    """Batches of at most BATCH elements (one on a backend PipelineDP does not know), each
    element in one batch, in order on the local backend."""
    seen: list[int] = []

    def record(batch: list[int]) -> list[int]:
        assert 1 <= len(batch) <= pipelinedp_batches.BATCH
        seen.append(len(batch))
        return [x for x in batch if x % 3]

    out = list(pipelinedp_batches.per_batch(backend(), range(size), record, "Batches"))
    assert out == [x for x in range(size) if x % 3]
    assert sum(seen) == size
    if backend is Delegating:
        assert set(seen) <= {1}


def test_bounded_partitions_is_uniform() -> None:
    """The ℓ₀ partitions kept of a unit's distinct ones (a partition named twice is one) are a
    uniform sample: χ² over which of 5 is kept (ℓ₀ = 1, 20,000 units) at false alarm 1e-6;
    power: the expected counts with the first partition kept 10% more often are rejected."""
    kept = [
        pipelinedp_batches.bounded_partitions(1, (u, ["a", "b", "c", "d", "e", "a"]))[0]
        for u in range(20_000)
    ]
    counts = np.array([kept.count(label) for label in "abcde"])
    assert counts.sum() == 20_000
    assert stats.chisquare(counts).pvalue > 1e-6
    biased = np.full(5, 4_000) + np.array([400, -100, -100, -100, -100])
    assert stats.chisquare(biased).pvalue < 1e-6
