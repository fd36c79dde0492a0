"""Set-union selectors through OpenDP ((unit, label) pairs) and PipelineDP 0.3.1: the local
backend, Beam (DirectRunner, in memory and with two worker processes) and Spark (``local[2]``),
with ``select_partitions`` and ``aggregate``.

The data: COMMON_UNITS units each hold "common" and a label of their own, so "common" is held by
units_needed(β, 2) units of two labels each and is released except with probability β = 1e-8
(the mechanism's declared accuracy); each of the RARE labels is held by one unit, so each is
released with probability at most δ (the guarantee, against the data without that unit, where it
cannot be). With δ = 1e-9, any run releases exactly ["common"] except with probability at most
β + RARE·δ < 1e-6, for every route and backend: the routes' plumbing (grouping by unit,
bounding, weights summed per partition round by round, DP-SIPS's join by label, a sequential
policy on one worker) is what is tested; the mechanisms' laws are the conformance suite's.

Worker-side code is lambdas and installed modules only, so Beam's and Spark's workers never need
to import this file.
"""

from __future__ import annotations

import glob
import json
import math
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

pipeline_dp = pytest.importorskip("pipeline_dp")
beam = pytest.importorskip("apache_beam")
pytest.importorskip("pyspark")
pytest.importorskip("opendp")

from apache_beam.options.pipeline_options import PipelineOptions  # noqa: E402
from pyspark import RDD  # noqa: E402

import dpplug  # noqa: E402
from dpplug.adapters import pipelinedp as dpplug_pdp  # noqa: E402
from dpplug.adapters.opendp import enable_features, make_measurement  # noqa: E402
from dpplug.adapters.spark import local_context  # noqa: E402
from dpplug.errors import NotSupported, PluginFault  # noqa: E402

from support import layout_unions  # noqa: E402

NAMES = ("weighted-gaussian", "dp-sips", "policy-laplace")
EPSILON, DELTA, BETA = 1, Fraction(1, 10**9), Fraction(1, 10**8)
RARE = 40
#: The policy's cutoff caps a label's total, so how surely it is released: raised to reach 1 − β.
OPTIONS: dict[str, dict[str, Any]] = {"policy-laplace": {"cutoff": 25}}


def _units(name: str) -> int:
    """Units of "common": enough that it is released w.p. ≥ 1 − β (declared accuracy)."""
    mechanism = dpplug.create(
        name, epsilon=EPSILON, delta=DELTA, max_partitions_contributed=2, **OPTIONS.get(name, {})
    )
    needed: int = mechanism.units_needed(BETA, 2)
    return needed


COMMON_UNITS = max(_units(name) for name in NAMES)
ROWS = [(u, "common") for u in range(COMMON_UNITS)] + [(u, f"rare{u}") for u in range(RARE)]
EXTRACT = pipeline_dp.DataExtractors(
    privacy_id_extractor=lambda row: row[0],
    partition_extractor=lambda row: row[1],
    value_extractor=lambda row: 1,
)


def _accountant() -> Any:
    return pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPSILON, total_delta=float(DELTA))


def _select(name: str, backend: Any, col: Any) -> tuple[Any, Any]:
    accountant = _accountant()
    engine = dpplug_pdp.DPEngine(accountant, backend)
    params = pipeline_dp.SelectPartitionsParams(
        max_partitions_contributed=2,
        partition_selection_strategy=dpplug_pdp.set_union(name, **OPTIONS.get(name, {})),
    )
    selected = engine.select_partitions(col, params, EXTRACT)
    return selected, accountant


def _aggregate(name: str, backend: Any, col: Any) -> tuple[Any, Any]:
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=2, total_delta=float(DELTA))
    engine = dpplug_pdp.DPEngine(accountant, backend)
    params = pipeline_dp.AggregateParams(
        metrics=[pipeline_dp.Metrics.COUNT],
        max_partitions_contributed=2,
        max_contributions_per_partition=1,
        partition_selection_strategy=dpplug_pdp.set_union(name, **OPTIONS.get(name, {})),
    )
    aggregated = engine.aggregate(col, params, EXTRACT)
    return aggregated, accountant


def test_opendp_measurement_on_unit_label_pairs() -> None:
    enable_features()
    for name in NAMES:
        m = make_measurement(
            name,
            epsilon=EPSILON,
            delta=DELTA,
            max_partitions_contributed=2,
            **OPTIONS.get(name, {}),
        )
        assert m(ROWS) == ["common"]
        epsilon, delta = m.map(1)
        # δ is the requested one (the adapter's floor) rounded up to a float.
        assert epsilon <= EPSILON
        assert Fraction(delta) >= DELTA > Fraction(math.nextafter(delta, 0))


@pytest.mark.parametrize("name", NAMES)
def test_local_select_partitions(name: str) -> None:
    selected, accountant = _select(name, pipeline_dp.LocalBackend(), ROWS)
    accountant.compute_budgets()
    assert list(selected) == ["common"]


def test_local_aggregate_says_what_to_do() -> None:
    with pytest.raises(NotSupported, match="select_partitions"):
        _aggregate("weighted-gaussian", pipeline_dp.LocalBackend(), ROWS)


def _beam(mode: str, out: Path) -> dict[tuple[str, str], list[Any]]:
    """select_partitions and aggregate of every mechanism in one Beam pipeline; workers write
    JSON lines."""
    options = PipelineOptions(
        flags=[], runner="DirectRunner", direct_running_mode=mode, direct_num_workers=2
    )
    with beam.Pipeline(options=options) as pipeline:
        col = pipeline | "Create rows" >> beam.Create(ROWS)
        for i, name in enumerate(NAMES):
            selected, accountant = _select(name, pipeline_dp.BeamBackend(suffix=f"s{i}"), col)
            aggregated, other = _aggregate(name, pipeline_dp.BeamBackend(suffix=f"a{i}"), col)
            accountant.compute_budgets()
            other.compute_budgets()
            _ = (
                selected
                | f"Selected to JSON {i}" >> beam.Map(json.dumps)
                | f"Write selected {i}" >> beam.io.WriteToText(str(out / f"select-{i}"))
            )
            _ = (
                aggregated
                | f"Aggregated to JSON {i}" >> beam.Map(lambda kv: json.dumps([kv[0], kv[1].count]))
                | f"Write aggregated {i}" >> beam.io.WriteToText(str(out / f"aggregate-{i}"))
            )

    def lines(prefix: str) -> list[Any]:
        return [
            json.loads(line)
            for path in sorted(glob.glob(str(out / f"{prefix}*")))
            for line in Path(path).read_text().splitlines()
        ]

    found = {}
    for i, name in enumerate(NAMES):
        found[(name, "select")] = lines(f"select-{i}-")
        found[(name, "aggregate")] = lines(f"aggregate-{i}-")
    return found


@pytest.mark.parametrize("mode", ["in_memory", "multi_processing"])
def test_beam_select_partitions_and_aggregate(mode: str, tmp_path: Path) -> None:
    found = _beam(mode, tmp_path)
    for name in NAMES:
        assert found[(name, "select")] == ["common"], name
        ((key, count),) = found[(name, "aggregate")]
        assert key == "common" and isinstance(count, float), name


@pytest.fixture(scope="module")
def spark_context() -> Iterator[Any]:
    context = local_context("dpplug-set-union-tests")
    context.setLogLevel("ERROR")
    yield context
    context.stop()


@pytest.mark.parametrize("name", NAMES)
def test_spark_select_partitions_and_aggregate(spark_context: Any, name: str) -> None:
    rdd = spark_context.parallelize(ROWS, 2)
    backend = pipeline_dp.SparkRDDBackend(spark_context)
    selected, accountant = _select(name, backend, rdd)
    aggregated, other = _aggregate(name, backend, rdd)
    # Both are RDDs the driver has not evaluated: nothing was collected to lay them out.
    assert isinstance(selected, RDD) and isinstance(aggregated, RDD)
    accountant.compute_budgets()
    other.compute_budgets()
    assert selected.collect() == ["common"]
    ((key, metrics),) = aggregated.collect()
    assert key == "common" and isinstance(metrics.count, float)


def test_spark_dp_sips_rounds_read_one_draw_of_each_decision(spark_context: Any) -> None:
    """Spark recomputes an RDD for every stage that reads it: a round's keep decisions, drawn
    again for the next round's join, would release a label in round 1 and let round 2 decide it
    anew. 100 labels of 63 single-label units each are kept w.p. ≈ 0.54 by round 1 and ≈ 0.998
    by round 2 (ε = 1, δ = 1e-9, Δ₀ = 1), so two draws of round 1 would release some label twice
    except with probability ≈ 0.75^100 < 1e-12; one draw never does."""
    rows = [(f"{label}/{unit}", f"x{label}") for label in range(100) for unit in range(63)]
    accountant = _accountant()
    engine = dpplug_pdp.DPEngine(accountant, pipeline_dp.SparkRDDBackend(spark_context))
    params = pipeline_dp.SelectPartitionsParams(
        max_partitions_contributed=1,
        partition_selection_strategy=dpplug_pdp.set_union("dp-sips", rounds=2),
    )
    selected = engine.select_partitions(spark_context.parallelize(rows, 2), params, EXTRACT)
    accountant.compute_budgets()
    released = selected.collect()
    assert len(released) == len(set(released))
    assert len(released) > 50  # round 2 keeps nearly every label round 1 left


LAYOUTS = dpplug.Registry.load([layout_unions], entry_points=False)


def _select_with(spec: Any, total_epsilon: float) -> tuple[Any, Any]:
    accountant = pipeline_dp.NaiveBudgetAccountant(
        total_epsilon=total_epsilon, total_delta=float(DELTA)
    )
    engine = dpplug_pdp.DPEngine(accountant, pipeline_dp.LocalBackend())
    params = pipeline_dp.SelectPartitionsParams(
        max_partitions_contributed=2, partition_selection_strategy=spec
    )
    return engine.select_partitions(ROWS, params, EXTRACT), accountant


def test_a_pipeline_runs_the_rounds_of_the_complete_parameters() -> None:
    """A set union whose rounds parameter the user leaves out runs its schema's default number
    of rounds (one here), not what pipeline_rounds would say of the user's parameters alone."""
    layout_unions.OneRoundByDefault.decided.clear()
    spec = dpplug_pdp.set_union("test-sips-one-round-by-default", registry=LAYOUTS)
    selected, accountant = _select_with(spec, EPSILON)
    accountant.compute_budgets()
    assert list(selected) == ["common"]
    assert set(layout_unions.OneRoundByDefault.decided) == {0}


def test_rounds_that_change_with_the_grant_are_refused_at_the_grant() -> None:
    spec = dpplug_pdp.set_union("test-sips-rounds-by-budget", registry=LAYOUTS)
    _, accountant = _select_with(spec, 0.5)
    with pytest.raises(PluginFault, match="rounds must not depend on its budget"):
        accountant.compute_budgets()
