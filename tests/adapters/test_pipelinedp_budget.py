"""The PipelineDP adapter and the budget PipelineDP's accountant grants.

- **Overspending plugins** (``overspending.py``: ``epsilon=ε`` builds 2ε, or e^ε rounded up by a
  float; a sampler, a selector and a central releaser of each) are refused by
  ``compute_budgets``, on the driver, with a ``PluginFault``, before any backend runs the
  pipeline: through the engine's count noise, ``add_dp_noise``, partition selection (in
  ``select_partitions`` and ``aggregate``) and central release, under the Naive and the PLD
  accountant, and through PipelineDP's Beam, Spark and DataFrame front ends. On the local
  backend the data is a collection that records being read: it never is.
- **Budgets outside a plugin's range**: above it the plugin runs at the top of its range
  (PipelineDP's own tests use ε from 133 to 125,000), below it ``compute_budgets`` raises the
  plugin's range as a ``BadParameter``; never on a worker.
- **Pure count noise** is requested as LAPLACE from the Naive accountant, so the partition
  selection gets all of δ; the explain report shows how the budget was split.
- **The PLD accountant with ``budget_weight`` ≠ 1** gives a GENERIC mechanism the share it
  composed, not that share times the weight.
- **Drop-in**: dpplug's engine calls PipelineDP's ``aggregate`` and ``select_partitions`` with
  keywords, so a wrapper of them that takes keywords only still works.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator
from typing import Any

import pytest

pipeline_dp = pytest.importorskip("pipeline_dp")
beam = pytest.importorskip("apache_beam")
pyspark = pytest.importorskip("pyspark")
pytest.importorskip("dp_accounting")

from apache_beam.options.pipeline_options import PipelineOptions  # noqa: E402
from dp_accounting.pld import common as pld_common  # noqa: E402
from dp_accounting.pld import privacy_loss_distribution as pldlib  # noqa: E402
from pipeline_dp import dataframes, private_beam  # noqa: E402
from pipeline_dp.aggregate_params import MechanismType  # noqa: E402

import dpplug  # noqa: E402
from dpplug.adapters import pipelinedp_beam, pipelinedp_dataframes, pipelinedp_spark  # noqa: E402
from dpplug.adapters.pipelinedp import (  # noqa: E402
    DPEngine,
    central_release,
    partition_selection,
    sampler,
)
from dpplug.adapters.spark import local_context  # noqa: E402

from support import overspending  # noqa: E402

Metrics = pipeline_dp.Metrics
PLUGINS = overspending.registry()
ROWS = [(f"u{unit}", f"p{unit % 3}") for unit in range(300) for _ in range(2)]
EXTRACTORS = pipeline_dp.DataExtractors(
    privacy_id_extractor=operator.itemgetter(0),
    partition_extractor=operator.itemgetter(1),
    value_extractor=lambda row: 1,
)
RELEASE_PARAMS = {"universe": 'labels:["p0", "p1", "p2"]', "n": 1000}


class Watched:
    """Rows that record whether anything read them."""

    def __init__(self, rows: list[Any]) -> None:
        self.rows, self.read = rows, False

    def __iter__(self) -> Iterator[Any]:
        for row in self.rows:
            self.read = True
            yield row

    def __len__(self) -> int:  # PipelineDP checks that a collection is not empty
        return len(self.rows)


def accountant(kind: str, epsilon: float = 1, delta: float = 1e-6) -> Any:
    if kind == "naive":
        return pipeline_dp.NaiveBudgetAccountant(total_epsilon=epsilon, total_delta=delta)
    return pipeline_dp.PLDBudgetAccountant(total_epsilon=epsilon, total_delta=delta)


def count_params(**given: Any) -> Any:
    return pipeline_dp.AggregateParams(
        **{
            "metrics": [Metrics.COUNT],
            "max_partitions_contributed": 1,
            "max_contributions_per_partition": 2,
            **given,
        }
    )


# --------------------------------------------------------------------------- the engine


def _count_noise(engine_of: Any, name: str, col: Any) -> Any:
    return engine_of(sampler(name, registry=PLUGINS)).aggregate(col, count_params(), EXTRACTORS)


def _add_dp_noise(engine_of: Any, name: str, col: Any) -> Any:
    params = pipeline_dp.AddDPNoiseParams(
        noise_kind=sampler(name, registry=PLUGINS), l0_sensitivity=1, linf_sensitivity=1
    )
    return engine_of(None).add_dp_noise([("a", 10), ("b", 20)], params)


def _select(engine_of: Any, name: str, col: Any) -> Any:
    params = pipeline_dp.SelectPartitionsParams(
        max_partitions_contributed=1,
        partition_selection_strategy=partition_selection(name, registry=PLUGINS),
    )
    return engine_of(None).select_partitions(col, params, EXTRACTORS)


def _aggregate_with_strategy(engine_of: Any, name: str, col: Any) -> Any:
    strategy = partition_selection(name, registry=PLUGINS)
    return engine_of(None).aggregate(
        col, count_params(partition_selection_strategy=strategy), EXTRACTORS
    )


def _release(engine_of: Any, name: str, col: Any) -> Any:
    spec = central_release(name, registry=PLUGINS, **RELEASE_PARAMS)
    return engine_of(None).release(col, spec, EXTRACTORS)


ROUTES = [
    *((_count_noise, name) for name in overspending.SAMPLERS),
    *((_add_dp_noise, name) for name in overspending.SAMPLERS),
    *((_select, name) for name in overspending.SELECTORS),
    *((_aggregate_with_strategy, name) for name in overspending.SELECTORS),
    *((_release, name) for name in overspending.RELEASERS),
]


@pytest.mark.parametrize("kind", ["naive", "pld"])
@pytest.mark.parametrize(("route", "name"), ROUTES, ids=lambda v: getattr(v, "__name__", v))
def test_the_engine_refuses_an_overspending_plugin_in_compute_budgets(
    route: Any, name: str, kind: str
) -> None:
    budget = accountant(kind)
    rows = Watched(ROWS)

    def engine_of(count_noise: Any) -> DPEngine:
        return DPEngine(budget, pipeline_dp.LocalBackend(), count_noise=count_noise)

    result = route(engine_of, name, rows)
    with pytest.raises(dpplug.PluginFault, match=f"{name} declares .* more than the budget"):
        budget.compute_budgets()
    assert not rows.read
    with pytest.raises(AssertionError, match="not calculated"):  # nothing can run either
        list(result)


def test_the_same_routes_run_honest_plugins() -> None:
    """The control: the honest built-ins the overspenders derive from, through the same routes,
    are granted their budget and run."""
    honest = {
        _count_noise: "discrete-laplace",
        _add_dp_noise: "discrete-laplace",
        _select: "optimal-partition-selection",
        _aggregate_with_strategy: "optimal-partition-selection",
        _release: "basic-histogram",
    }
    for route, name in honest.items():
        budget = accountant("naive", epsilon=4)
        rows = Watched(ROWS)

        def engine_of(count_noise: Any, budget: Any = budget) -> DPEngine:
            return DPEngine(budget, pipeline_dp.LocalBackend(), count_noise=count_noise)

        result = route(engine_of, name, rows)
        budget.compute_budgets()
        assert list(result) and (rows.read or route is _add_dp_noise)


# --------------------------------------------------------------------------- front ends


def test_the_beam_front_end_refuses_them() -> None:
    """PipelineDP's Beam transforms on dpplug's engine: ``compute_budgets`` raises while the
    pipeline is being built, so Beam never runs it."""
    builds = [
        lambda private, name: (
            private
            | pipelinedp_beam.Count(
                pipeline_dp.CountParams(
                    noise_kind=sampler(name, registry=PLUGINS),
                    max_partitions_contributed=1,
                    max_contributions_per_partition=2,
                    partition_extractor=lambda row: row[1],
                )
            )
        ),
        lambda private, name: (
            private
            | pipelinedp_beam.SelectPartitions(
                pipeline_dp.SelectPartitionsParams(
                    max_partitions_contributed=1,
                    partition_selection_strategy=partition_selection(name, registry=PLUGINS),
                ),
                lambda row: row[1],
                "Select",
            )
        ),
        lambda private, name: (
            private
            | pipelinedp_beam.Release(
                central_release(name, registry=PLUGINS, **RELEASE_PARAMS), lambda row: row[1]
            )
        ),
    ]
    names = [overspending.SAMPLERS[0], overspending.SELECTORS[1], overspending.RELEASERS[0]]
    for build, name in zip(builds, names, strict=True):
        budget = accountant("naive")
        pipeline = beam.Pipeline(options=PipelineOptions(flags=[], runner="DirectRunner"))
        private = (
            pipeline
            | "Rows" >> beam.Create(ROWS)
            | private_beam.MakePrivate(budget, privacy_id_extractor=operator.itemgetter(0))
        )
        build(private, name)
        with pytest.raises(dpplug.PluginFault, match=name):
            budget.compute_budgets()


@pytest.fixture(scope="module")
def spark_context() -> Iterator[Any]:
    context = local_context("dpplug-pipelinedp-budget")
    yield context
    context.stop()


def test_the_spark_front_ends_refuse_them(spark_context: Any) -> None:
    """``private_spark``'s PrivateRDD (count, select_partitions, release) and the DataFrame API
    (``run_query`` computes the budgets itself; ``release``)."""
    rdd = spark_context.parallelize(ROWS, 2)
    builds = [
        lambda private, name: private.count(
            pipeline_dp.CountParams(
                noise_kind=sampler(name, registry=PLUGINS),
                max_partitions_contributed=1,
                max_contributions_per_partition=2,
                partition_extractor=lambda row: row[1],
            )
        ),
        lambda private, name: private.select_partitions(
            pipeline_dp.SelectPartitionsParams(
                max_partitions_contributed=1,
                partition_selection_strategy=partition_selection(name, registry=PLUGINS),
            ),
            lambda row: row[1],
        ),
        lambda private, name: private.release(
            central_release(name, registry=PLUGINS, **RELEASE_PARAMS), lambda row: row[1]
        ),
    ]
    names = [overspending.SAMPLERS[1], overspending.SELECTORS[0], overspending.RELEASERS[1]]
    for build, name in zip(builds, names, strict=True):
        budget = accountant("pld")
        build(pipelinedp_spark.make_private(rdd, budget, operator.itemgetter(0)), name)
        with pytest.raises(dpplug.PluginFault, match=name):
            budget.compute_budgets()

    df = pyspark.sql.SparkSession(spark_context).createDataFrame(ROWS, ["unit", "page"])
    query = (
        pipelinedp_dataframes.QueryBuilder(df, "unit")
        .groupby("page", max_groups_contributed=1, max_contributions_per_group=2)
        .count()
        .build_query()
    )
    with pytest.raises(dpplug.PluginFault, match="double-laplace"):
        query.run_query(
            dataframes.Budget(1, 1e-6), noise_kind=sampler("double-laplace", registry=PLUGINS)
        )
    spec = central_release("double-histogram", registry=PLUGINS, **RELEASE_PARAMS)
    with pytest.raises(dpplug.PluginFault, match="double-histogram"):
        pipelinedp_dataframes.release(df, "unit", "page", spec, dataframes.Budget(1, 1e-6))


# --------------------------------------------------------------------------- budgets out of range


def test_budgets_above_a_plugins_range_run_it_at_the_top() -> None:
    """ε = 125,000 (PipelineDP's own tests go that high): discrete-laplace takes ε ≤ 16 and the
    optimal selector ε ≤ 64, so they run there, within the much larger grant."""
    budget = accountant("naive", epsilon=125_000, delta=1e-6)
    engine = DPEngine(budget, pipeline_dp.LocalBackend(), count_noise=sampler("discrete-laplace"))
    strategy = partition_selection("optimal-partition-selection")
    result = engine.aggregate(ROWS, count_params(partition_selection_strategy=strategy), EXTRACTORS)
    budget.compute_budgets()
    released = dict(result)
    assert sorted(released) == ["p0", "p1", "p2"]
    for metrics in released.values():
        assert abs(metrics.count - 200) <= 2  # ε = 16 per count: |noise| ≤ 2 w.p. 1 − 1e-13
    (report,) = engine.explain_computations_report()
    assert "at ε=16 per count for COUNT" in report


def test_budgets_below_a_plugins_range_are_refused_in_compute_budgets() -> None:
    budget = accountant("naive", epsilon=1e-9, delta=1e-6)
    engine = DPEngine(budget, pipeline_dp.LocalBackend(), count_noise=sampler("discrete-laplace"))
    rows = Watched(ROWS)
    engine.aggregate(rows, count_params(), EXTRACTORS)
    with pytest.raises(dpplug.BadParameter, match=r"below the smallest it takes \(\[1/1048576"):
        budget.compute_budgets()
    assert not rows.read


# --------------------------------------------------------------------------- pure noise, the split


def test_pure_count_noise_charges_no_delta_and_selection_gets_all_of_it() -> None:
    """At (1, 10^-6) with COUNT noised by a pure sampler and partitions selected: the count
    is requested as LAPLACE and gets δ = 0, the selection the whole δ (GENERIC counts took
    half of it, which halved the keep probability of small partitions)."""
    budget = accountant("naive")
    engine = DPEngine(budget, pipeline_dp.LocalBackend(), count_noise=sampler("discrete-laplace"))
    strategy = partition_selection("optimal-partition-selection")
    engine.aggregate(ROWS, count_params(partition_selection_strategy=strategy), EXTRACTORS)
    budget.compute_budgets()
    specs = {m.mechanism_spec.name: m.mechanism_spec for m in budget._mechanisms}
    count = specs["COUNT (discrete-laplace)"]
    selection = specs["PartitionSelection (optimal-partition-selection)"]
    assert count.mechanism_type is MechanismType.LAPLACE and count.delta == 0
    assert selection.mechanism_type is MechanismType.GENERIC and selection.delta == 1e-6
    assert count.eps == selection.eps == 0.5


# --------------------------------------------------------------------------- PLD and budget_weight


def _composed_epsilon(budget: Any) -> float:
    """ε at the accountant's δ of the composition of every mechanism at the (ε, δ) it was
    granted, by the PLD library the accountant uses."""
    composed = None
    for internal in budget._mechanisms:
        spec = internal.mechanism_spec
        pld = pldlib.from_privacy_parameters(
            pld_common.DifferentialPrivacyParameters(spec.eps, spec.delta),
            value_discretization_interval=1e-4,
        )
        composed = pld if composed is None else composed.compose(pld)
    assert composed is not None
    return float(composed.get_epsilon_for_delta(budget.total_delta))


@pytest.mark.parametrize("weight", [1, 8, 0.25])
def test_pld_with_a_budget_weight_gives_the_share_it_composed(weight: float) -> None:
    """Two aggregations, the first with ``budget_weight``: PipelineDP's PLD accountant composed
    every GENERIC mechanism at √2/σ and handed the first one that times its weight (total ε = 1,
    weight 8: the sampler ran at ε ≈ 8 and the report said so). Every dpplug mechanism now gets
    the composed share, and their composition is within the total."""
    budget = accountant("pld")
    engine = DPEngine(budget, pipeline_dp.LocalBackend(), count_noise=sampler("discrete-laplace"))
    public = ["p0", "p1", "p2"]  # PipelineDP's own selection has no PLD composition in 0.3.1
    weighted = engine.aggregate(
        ROWS, count_params(budget_weight=weight), EXTRACTORS, public_partitions=public
    )
    engine.aggregate(
        ROWS, count_params(metrics=[Metrics.PRIVACY_ID_COUNT]), EXTRACTORS, public_partitions=public
    )
    budget.compute_budgets()
    share = math.sqrt(2) / budget.base_noise_std
    assert {m.mechanism_spec.eps for m in budget._mechanisms} == {share}
    assert _composed_epsilon(budget) <= 1.001
    assert len(list(weighted)) == 3
    reports = "\n".join(engine.explain_computations_report())
    assert f"ε={share / 2:.6g} per count for COUNT" in reports  # ℓ₁ = 2


# --------------------------------------------------------------------------- keywords


def test_pipelinedps_methods_are_called_with_keywords(monkeypatch: pytest.MonkeyPatch) -> None:
    """Code that wraps PipelineDP's ``aggregate`` or ``select_partitions`` with keyword-only
    parameters (or a mock that reads them by name) sees dpplug's engine call them so."""
    original = pipeline_dp.DPEngine.aggregate, pipeline_dp.DPEngine.select_partitions
    seen: list[str] = []

    def aggregate(self: Any, *, col: Any, params: Any, data_extractors: Any, **rest: Any) -> Any:
        seen.append("aggregate")
        return original[0](self, col, params, data_extractors, **rest)

    def select_partitions(self: Any, *, col: Any, params: Any, data_extractors: Any) -> Any:
        seen.append("select_partitions")
        return original[1](self, col, params, data_extractors)

    monkeypatch.setattr(pipeline_dp.DPEngine, "aggregate", aggregate)
    monkeypatch.setattr(pipeline_dp.DPEngine, "select_partitions", select_partitions)
    budget = accountant("naive", epsilon=4)
    engine = DPEngine(budget, pipeline_dp.LocalBackend(), count_noise=sampler("discrete-laplace"))
    counted = engine.aggregate(ROWS, count_params(), EXTRACTORS)
    selected = engine.select_partitions(
        ROWS, pipeline_dp.SelectPartitionsParams(max_partitions_contributed=1), EXTRACTORS
    )
    budget.compute_budgets()
    assert seen == ["aggregate", "select_partitions"]
    assert len(list(counted)) == 3 and set(selected) <= {"p0", "p1", "p2"}
