"""blanket-sparse-histogram and oblivious-laplace through the frameworks, like every other
releaser and sampler: an OpenDP measurement after ``then_count_by`` and OpenDP count noise, a
PipelineDP central release on the local backend, on Beam's DirectRunner and on Spark, and
PipelineDP's COUNT noise. Outputs are random and checked structurally or against the declared
accuracy at β = 10⁻⁹ (each check fails with probability below 10⁻⁸)."""

from __future__ import annotations

import json
import math
import operator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

dp = pytest.importorskip("opendp.prelude")
pipeline_dp = pytest.importorskip("pipeline_dp")
beam = pytest.importorskip("apache_beam")
pytest.importorskip("pyspark")

from apache_beam.options.pipeline_options import PipelineOptions  # noqa: E402

import dpplug  # noqa: E402
from dpplug.adapters import pipelinedp as dpplug_pdp  # noqa: E402
from dpplug.adapters.opendp import enable_features, make_measurement, then_measurement  # noqa: E402
from dpplug.adapters.spark import local_context  # noqa: E402

NAME = "blanket-sparse-histogram"
PARAMS = {"universe": "text:2", "n": 1000, "epsilon": 2, "beta": Fraction(1, 10**9)}
ROWS = ["a"] * 400 + ["b"] * 250 + ["c"] * 150
UNIT_ROWS = [(u, "a") for u in range(400)] + [(400 + u, "bb") for u in range(250)]
UNIT_TRUTH = {"a": 400, "bb": 250}
BETA = Fraction(1, 10**9)


@pytest.fixture(autouse=True)
def opendp_features() -> None:
    enable_features()


def exact(value: Any) -> Fraction:
    return Fraction(int(value.numerator), int(value.denominator))


def check_release(released: dict[str, int], truth: dict[str, int], releaser: Any) -> None:
    """Canonical order, and every true bin within the simultaneous a (β = 10⁻⁹)."""
    universe = releaser.universe
    assert list(released) == sorted(released, key=universe.index)
    a = releaser.accuracy(BETA).simultaneous.a
    assert all(abs(released.get(label, 0) - count) <= a for label, count in truth.items())
    assert len(released) <= releaser.labels


def test_opendp_measurement_after_count_by() -> None:
    releaser = dpplug.create(NAME, **PARAMS)
    count_by = dp.t.make_count_by(
        dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance(), TV="i64"
    )
    chain = count_by >> then_measurement(NAME, **PARAMS)
    check_release(chain(ROWS), {"a": 400, "b": 250, "c": 150}, releaser)
    # one row added or removed: the declared Λ, rounded up; three rows: group privacy
    exp_epsilon = exact(releaser.guarantee.exp_epsilon)
    assert chain.map(1) == pytest.approx(math.log(exp_epsilon), rel=1e-12)
    assert chain.map(1) >= math.log(exp_epsilon)
    assert chain.map(3) == pytest.approx(3 * math.log(exp_epsilon), rel=1e-12)


def test_opendp_count_noise_from_oblivious_laplace() -> None:
    params = {"n": 1000, "epsilon": Fraction(1, 2)}
    sampler = dpplug.create("oblivious-laplace", **params)
    measurement = make_measurement(
        "oblivious-laplace", dp.atom_domain(T="i64"), dp.absolute_distance(T="i64"), **params
    )
    a = sampler.accuracy(BETA).per_query.a
    assert all(abs(measurement(500) - 500) <= a for _ in range(20))
    assert measurement.map(1) == pytest.approx(math.log(exact(sampler.guarantee.exp_epsilon)))


def release_through(backend: Any, col: Any) -> tuple[Any, Any]:
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=2, total_delta=1e-6)
    engine = dpplug_pdp.DPEngine(accountant, backend)
    extractors = pipeline_dp.DataExtractors(
        privacy_id_extractor=operator.itemgetter(0),
        partition_extractor=operator.itemgetter(1),
        value_extractor=lambda row: 1,
    )
    spec = dpplug_pdp.central_release(NAME, universe="text:2", n=1000, beta=BETA)
    released = engine.release(col, spec, extractors)
    accountant.compute_budgets()
    return released, accountant


def test_pipelinedp_central_release_on_the_local_backend() -> None:
    released, _ = release_through(pipeline_dp.LocalBackend(), UNIT_ROWS)
    (histogram,) = list(released)
    releaser = dpplug.create(NAME, universe="text:2", n=1000, beta=BETA, epsilon=2)
    check_release(histogram.to_dict(), UNIT_TRUTH, releaser)
    assert histogram.guarantee == releaser.guarantee  # the whole budget, ε = 2


def test_pipelinedp_central_release_on_beam(tmp_path: Path) -> None:
    options = PipelineOptions(flags=[], runner="DirectRunner", direct_running_mode="in_memory")
    with beam.Pipeline(options=options) as pipeline:
        col = pipeline | "Create rows" >> beam.Create(UNIT_ROWS)
        released, _ = release_through(pipeline_dp.BeamBackend(), col)
        _ = (
            released
            | "To JSON" >> beam.Map(lambda h: json.dumps(list(h.items())))
            | "Write" >> beam.io.WriteToText(str(tmp_path / "histogram"))
        )
    (line,) = [
        line for path in tmp_path.glob("histogram*") for line in path.read_text().splitlines()
    ]
    releaser = dpplug.create(NAME, universe="text:2", n=1000, beta=BETA, epsilon=2)
    check_release(dict(json.loads(line)), UNIT_TRUTH, releaser)


def test_pipelinedp_central_release_on_spark() -> None:
    context = local_context("dpplug-blanket-tests")
    try:
        released, _ = release_through(
            pipeline_dp.SparkRDDBackend(context), context.parallelize(UNIT_ROWS, 2)
        )
        (histogram,) = released.collect()
    finally:
        context.stop()
    releaser = dpplug.create(NAME, universe="text:2", n=1000, beta=BETA, epsilon=2)
    check_release(histogram.to_dict(), UNIT_TRUTH, releaser)


def test_pipelinedp_count_noise_from_oblivious_laplace() -> None:
    rows = [(user, f"page{user % 3}") for user in range(900)]
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=1, total_delta=1e-6)
    noise = dpplug_pdp.sampler("oblivious-laplace", n=10_000)
    engine = dpplug_pdp.DPEngine(accountant, pipeline_dp.LocalBackend(), count_noise=noise)
    params = pipeline_dp.AggregateParams(
        metrics=[pipeline_dp.Metrics.COUNT],
        max_partitions_contributed=1,
        max_contributions_per_partition=1,
    )
    extractors = pipeline_dp.DataExtractors(
        privacy_id_extractor=operator.itemgetter(0),
        partition_extractor=operator.itemgetter(1),
        value_extractor=lambda row: 1,
    )
    result = engine.aggregate(rows, params, extractors, public_partitions=["page0", "page1"])
    accountant.compute_budgets()
    counts = {page: metrics.count for page, metrics in result}
    sampler = dpplug.create("oblivious-laplace", n=10_000, epsilon=1)
    a = sampler.accuracy(BETA).per_query.a
    assert set(counts) == {"page0", "page1"}
    assert all(c == int(c) and abs(c - 300) <= a for c in counts.values())  # whole-number floats
