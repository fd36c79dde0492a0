"""dpplug specs through PipelineDP 0.3.1's front ends, each on its backend with real data:
``private_beam`` transforms on Beam's DirectRunner (in memory and with two worker processes),
``private_spark``'s PrivateRDD on Spark ``local[2]`` and the DataFrame API on Spark DataFrames (the
only kind ``pipeline_dp.dataframes`` supports).

On Beam and Spark: COUNT noised by ``fixedpoint-geometric`` and PRIVACY_ID_COUNT by
``discrete-laplace`` (given as ``noise_kind=sampler(...)`` in PipelineDP's own params),
``select_partitions`` with ``optimal-partition-selection`` and a pre-threshold m, and a
``stability-histogram`` central release; on DataFrames (which have no partition selection
parameter) the COUNT and the central release. Big partitions (150+ units) are kept with probability
exactly 1 and small ones (< m units) dropped with probability 1 at the budgets PipelineDP computes
(checked on the budgets themselves); every released value is within the mechanism's own (a, β)
bound at β = 1e-12 for the ε the accountant gave it; counts are integer-valued floats (PipelineDP's
type; its Laplace noise is never an integer), the histogram is in canonical label order, and the
accountant holds the selection and the release as GENERIC and the pure count noise as LAPLACE
(no δ charged), with the budget adding up.

Worker-side code is lambdas and installed modules only, so workers never import this file.
"""

from __future__ import annotations

import glob
import json
import operator
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

pipeline_dp = pytest.importorskip("pipeline_dp")
beam = pytest.importorskip("apache_beam")
pyspark = pytest.importorskip("pyspark")

from apache_beam.options.pipeline_options import PipelineOptions  # noqa: E402
from pipeline_dp import dataframes, dp_engine, private_beam, private_spark  # noqa: E402
from pipeline_dp.aggregate_params import MechanismType  # noqa: E402

import dpplug  # noqa: E402
from dpplug.adapters import pipelinedp_beam, pipelinedp_dataframes, pipelinedp_spark  # noqa: E402
from dpplug.adapters.pipelinedp import central_release, partition_selection, sampler  # noqa: E402
from dpplug.adapters.spark import local_context  # noqa: E402

EPSILON, DELTA = 10.0, 1e-3
PRE_THRESHOLD = 5
BETA = Fraction(1, 10**12)
BIG = {f"big{i}": 150 + 10 * i for i in range(3)}
SMALL = {f"small{i}": 1 + i for i in range(PRE_THRESHOLD - 1)}
UNITS = {**BIG, **SMALL}
#: (unit, partition) visits: every unit visits its one partition twice.
ROWS = [(f"{key}/{u}", key) for key, units in UNITS.items() for u in range(units) for _ in "ab"]
L0, LINF = 1, 2
COUNT_NOISE = ("fixedpoint-geometric", {"n": 10_000})
UNIT_NOISE = ("discrete-laplace", {})
HISTOGRAM = ("stability-histogram", {"universe": "text:8", "n": 10_000})


def _accountant() -> Any:
    return pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPSILON, total_delta=DELTA)


def _count_params() -> Any:
    return pipeline_dp.CountParams(
        noise_kind=sampler(COUNT_NOISE[0], **COUNT_NOISE[1]),
        max_partitions_contributed=L0,
        max_contributions_per_partition=LINF,
        partition_extractor=lambda row: row[1],
        pre_threshold=PRE_THRESHOLD,
    )


def _unit_params() -> Any:
    return pipeline_dp.PrivacyIdCountParams(
        noise_kind=sampler(UNIT_NOISE[0], **UNIT_NOISE[1]),
        max_partitions_contributed=L0,
        partition_extractor=lambda row: row[1],
        pre_threshold=PRE_THRESHOLD,
    )


def _select_params() -> Any:
    return pipeline_dp.SelectPartitionsParams(
        max_partitions_contributed=L0,
        partition_selection_strategy=partition_selection("optimal-partition-selection"),
        pre_threshold=PRE_THRESHOLD,
    )


def _histogram_spec() -> Any:
    return central_release(HISTOGRAM[0], **HISTOGRAM[1])


def _budget(accountant: Any, name: str) -> Any:
    (spec,) = [m.mechanism_spec for m in accountant._mechanisms if m.mechanism_spec.name == name]
    return spec


def _check_budgets(accountant: Any, types: dict[str, Any]) -> None:
    specs = [m.mechanism_spec for m in accountant._mechanisms]
    assert sum(s.eps for s in specs) == pytest.approx(EPSILON, rel=1e-12)
    assert sum(s.delta for s in specs) <= DELTA * (1 + 1e-12)
    for name, mechanism_type in types.items():
        budget = _budget(accountant, name)
        assert budget.mechanism_type is mechanism_type
        assert (budget.delta == 0) == (mechanism_type is MechanismType.LAPLACE)


def _check_counts(released: dict[str, Any], truth: dict[str, int], noise: Any, eps: Any) -> None:
    """Every big partition and no small one; each count an int within the sampler's bound."""
    assert sorted(released) == sorted(BIG)
    bound = dpplug.create(noise[0], epsilon=eps, **noise[1]).accuracy(BETA).per_query.a
    for key, value in released.items():
        assert type(value) is float and value == int(value), (key, value)
        assert abs(value - truth[key]) <= bound, (key, value, truth[key], bound)


def _check_selected(selected: list[str], accountant: Any) -> None:
    budget = _budget(accountant, "PartitionSelection (optimal-partition-selection)")
    selector = dpplug.create(
        "optimal-partition-selection",
        epsilon=Fraction(budget.eps),
        delta=Fraction(budget.delta),
        pre_threshold=PRE_THRESHOLD,
    )
    assert selector.keep_probability(min(BIG.values())) == 1  # the data's premise
    assert selector.keep_probability(PRE_THRESHOLD - 1) == 0
    assert sorted(selected) == sorted(BIG)


def _check_histogram(histogram: dict[str, int], epsilon: float, delta: float) -> None:
    releaser = dpplug.create(
        HISTOGRAM[0], epsilon=Fraction(epsilon), delta=Fraction(delta), **HISTOGRAM[1]
    )
    bound = releaser.accuracy(BETA).per_query.a
    assert list(histogram) == sorted(histogram)  # canonical order
    assert set(BIG) <= set(histogram) <= set(UNITS)
    for label, count in histogram.items():
        assert abs(count - UNITS[label]) <= bound, (label, count, bound)


def _check_all(
    counts: dict[str, Any],
    units: dict[str, Any],
    selected: list[str],
    histogram: dict[str, int],
    accountant: Any,
) -> None:
    _check_budgets(
        accountant,
        {
            f"COUNT ({COUNT_NOISE[0]})": MechanismType.LAPLACE,
            f"PRIVACY_ID_COUNT ({UNIT_NOISE[0]})": MechanismType.LAPLACE,
            "PartitionSelection (optimal-partition-selection)": MechanismType.GENERIC,
            f"Central release ({HISTOGRAM[0]})": MechanismType.GENERIC,
        },
    )
    count_eps = Fraction(_budget(accountant, f"COUNT ({COUNT_NOISE[0]})").eps) / (L0 * LINF)
    unit_eps = Fraction(_budget(accountant, f"PRIVACY_ID_COUNT ({UNIT_NOISE[0]})").eps) / L0
    _check_counts(counts, {k: 2 * v for k, v in UNITS.items()}, COUNT_NOISE, count_eps)
    _check_counts(units, UNITS, UNIT_NOISE, unit_eps)
    _check_selected(selected, accountant)
    budget = _budget(accountant, f"Central release ({HISTOGRAM[0]})")
    _check_histogram(histogram, budget.eps, budget.delta)


# --------------------------------------------------------------------------- Beam


@pytest.mark.parametrize("mode", ["in_memory", "multi_processing"])
def test_private_beam(mode: str, tmp_path: Path) -> None:
    accountant = _accountant()
    options = PipelineOptions(
        flags=[], runner="DirectRunner", direct_running_mode=mode, direct_num_workers=2
    )
    with beam.Pipeline(options=options) as pipeline:
        private = (
            pipeline
            | "Rows" >> beam.Create(ROWS)
            | private_beam.MakePrivate(accountant, privacy_id_extractor=operator.itemgetter(0))
        )
        outputs = {
            "counts": private | pipelinedp_beam.Count(_count_params()),
            "units": private | pipelinedp_beam.PrivacyIdCount(_unit_params()),
            "selected": private
            | pipelinedp_beam.SelectPartitions(_select_params(), lambda row: row[1], "Select"),
            "histogram": private
            | pipelinedp_beam.Release(_histogram_spec(), lambda row: row[1])
            | "Histogram items" >> beam.Map(lambda h: list(h.items())),
        }
        accountant.compute_budgets()
        for name, col in outputs.items():
            _ = (
                col
                | f"{name} to JSON" >> beam.Map(json.dumps)
                | f"Write {name}" >> beam.io.WriteToText(str(tmp_path / name))
            )

    def lines(name: str) -> list[Any]:
        found = []
        for path in sorted(glob.glob(str(tmp_path / f"{name}-*"))):
            found += [json.loads(line) for line in Path(path).read_text().splitlines()]
        return found

    (histogram,) = lines("histogram")
    _check_all(
        dict(lines("counts")),
        dict(lines("units")),
        lines("selected"),
        dict(histogram),
        accountant,
    )


# --------------------------------------------------------------------------- Spark


@pytest.fixture(scope="module")
def spark_context() -> Iterator[Any]:
    context = local_context("dpplug-pipelinedp-frontends")
    yield context
    context.stop()


def test_private_spark(spark_context: Any) -> None:
    accountant = _accountant()
    rdd = spark_context.parallelize(ROWS, 2)
    private = pipelinedp_spark.make_private(rdd, accountant, operator.itemgetter(0))
    mapped = private.map(lambda row: row)  # still dpplug's PrivateRDD
    assert isinstance(mapped, pipelinedp_spark.PrivateRDD)
    counts = mapped.count(_count_params())
    units = private.privacy_id_count(_unit_params())
    selected = private.select_partitions(_select_params(), lambda row: row[1])
    histogram = private.release(_histogram_spec(), lambda row: row[1])
    accountant.compute_budgets()
    (released,) = histogram.collect()
    _check_all(
        dict(counts.collect()),
        dict(units.collect()),
        selected.collect(),
        released.to_dict(),
        accountant,
    )


def _dataframe(spark_context: Any) -> Any:
    return pyspark.sql.SparkSession(spark_context).createDataFrame(ROWS, ["unit", "page"])


def test_dataframes_on_spark(spark_context: Any) -> None:
    """``run_query`` builds its own Naive accountant: the private partition selection
    (PipelineDP's truncated geometric) and the COUNT get ε/2 each, δ going to the selection."""
    df = _dataframe(spark_context)
    query = (
        pipelinedp_dataframes.QueryBuilder(df, "unit")
        .groupby("page", max_groups_contributed=L0, max_contributions_per_group=LINF)
        .count()
        .build_query()
    )
    assert isinstance(query, pipelinedp_dataframes.Query)
    name, params = COUNT_NOISE
    result = query.run_query(
        dataframes.Budget(EPSILON, DELTA), noise_kind=sampler(name, **params)
    ).collect()
    released = {row.page: row["count"] for row in result}
    assert set(BIG) <= set(released) <= set(UNITS)
    bound = (
        dpplug.create(name, epsilon=Fraction(EPSILON) / 2 / (L0 * LINF), **params)
        .accuracy(BETA)
        .per_query.a
    )
    for page, value in released.items():
        assert value == int(value)  # the sampler's integers (Laplace would not be)
        assert abs(value - 2 * UNITS[page]) <= bound, (page, value, bound)


def test_dataframes_release(spark_context: Any) -> None:
    """The histogram release on a DataFrame's label column, with the whole budget."""
    released = pipelinedp_dataframes.release(
        _dataframe(spark_context), "unit", "page", _histogram_spec(), dataframes.Budget(1, 1e-6)
    )
    _check_histogram(released.to_dict(), 1, 1e-6)


# --------------------------------------------------------------------------- PipelineDP untouched


def test_pipelinedps_front_ends_are_untouched() -> None:
    """dpplug's front ends run PipelineDP's own code objects with the engine name bound to
    dpplug's engine; PipelineDP's classes and modules still build PipelineDP's engine."""
    pairs = [
        (pipelinedp_beam.Count.expand, private_beam.Count.expand, "DPEngine"),
        (pipelinedp_beam.SelectPartitions.expand, private_beam.SelectPartitions.expand, "DPEngine"),
        (pipelinedp_spark.PrivateRDD.count, private_spark.PrivateRDD.count, "pipeline_dp"),
        (pipelinedp_dataframes.Query.run_query, dataframes.Query.run_query, "dpeng"),
    ]
    for ours, theirs, name in pairs:
        assert ours.__code__ is theirs.__code__ and ours is not theirs
        assert theirs.__globals__ is vars(__import__(theirs.__module__, fromlist=["_"]))
        assert ours.__globals__[name] is not theirs.__globals__[name]
    assert private_beam.DPEngine is pipeline_dp.DPEngine is dp_engine.DPEngine
    assert dataframes.dpeng is dp_engine and private_spark.pipeline_dp is pipeline_dp
