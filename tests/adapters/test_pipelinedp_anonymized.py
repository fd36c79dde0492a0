"""Anonymized-histogram releasers in PipelineDP 0.3.1 pipelines, on the local backend, Beam
(DirectRunner, in memory and with two worker processes) and Spark (``local[2]``).

The engine keeps one row per privacy unit, counts rows per label, folds the counts into
prevalences (count of counts) in the map-reduce, and releases once from the (r, φ_r) pairs. The
sorted histogram at ε = 16 with a length just above the number of labels releases the true
anonymized histogram except with probability below 1e-6 (each of its 5 noises is 0 with
probability 1 − 2e^{−16}/(1 + e^{−16})), which checks the engine's counts of counts exactly;
PrivHist's total is within its declared accuracy at β = 1e-12 of the number of units.

Worker-side code is lambdas and installed modules only, so Beam's and Spark's workers never need
to import this file.
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
from pipeline_dp.aggregate_params import MechanismType  # noqa: E402

import dpplug  # noqa: E402
from dpplug.adapters.pipelinedp import DPEngine, central_release  # noqa: E402
from dpplug.adapters.spark import local_context  # noqa: E402

#: Units per label: "a" 40, "b" and "c" 7, "d" 2; unit 999 has 30 rows of "z" (one row kept).
UNITS = {"a": 40, "b": 7, "c": 7, "d": 2}
ROWS = [(f"{label}{u}", label) for label, units in UNITS.items() for u in range(units)] + [
    ("999", "z")
] * 30
TRUTH = {1: 1, 2: 1, 7: 2, 40: 1}  # prevalences of the per-unit counts, "z" once
UNIT_COUNT = sum(UNITS.values()) + 1
SPECS = {
    "sorted-histogram": ({"length": 5}, 16),
    "privhist": ({}, 1),
}
BETA = Fraction(1, 10**12)


def _release(backend: Any, col: Any, name: str) -> tuple[Any, Any]:
    params, epsilon = SPECS[name]
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=epsilon, total_delta=1e-6)
    engine = DPEngine(accountant, backend)
    extractors = pipeline_dp.DataExtractors(
        privacy_id_extractor=operator.itemgetter(0),
        partition_extractor=operator.itemgetter(1),
        value_extractor=lambda row: 1,
    )
    released = engine.release(col, central_release(name, **params), extractors)
    accountant.compute_budgets()
    return released, accountant


def _check(name: str, release: dict[str, Any], accountant: Any) -> None:
    (budget,) = [
        m.mechanism_spec
        for m in accountant._mechanisms
        if m.mechanism_spec.name == f"Central release ({name})"
    ]
    assert budget.mechanism_type is MechanismType.GENERIC
    params, _ = SPECS[name]
    mechanism = dpplug.create(name, **params, epsilon=Fraction(budget.eps))
    assert mechanism.guarantee.epsilon <= budget.eps
    if name == "sorted-histogram":
        assert release["prevalences"] == TRUTH
        return
    assert abs(release["total"] - UNIT_COUNT) <= mechanism.accuracy(BETA).per_query.a
    assert all(isinstance(r, int) and r >= 1 for r in release["prevalences"])


@pytest.mark.parametrize("name", sorted(SPECS))
def test_on_the_local_backend(name: str) -> None:
    released, accountant = _release(pipeline_dp.LocalBackend(), ROWS, name)
    (histogram,) = list(released)
    assert isinstance(histogram, dpplug.AnonymizedHistogram)
    _check(name, histogram.to_dict(), accountant)


@pytest.mark.parametrize("mode", ["in_memory", "multi_processing"])
def test_on_beam(mode: str, tmp_path: Path) -> None:
    options = PipelineOptions(
        flags=[], runner="DirectRunner", direct_running_mode=mode, direct_num_workers=2
    )
    accountants = {}
    with beam.Pipeline(options=options) as pipeline:
        col = pipeline | "Create rows" >> beam.Create(ROWS)
        for i, name in enumerate(sorted(SPECS)):
            backend = pipeline_dp.BeamBackend(suffix=f"case{i}")
            released, accountants[name] = _release(backend, col, name)
            _ = (
                released
                | f"To JSON {i}"
                >> beam.Map(lambda h: json.dumps([h.total, list(h.prevalences.items())]))
                | f"Write {i}" >> beam.io.WriteToText(str(tmp_path / f"release{i}"))
            )
    for i, name in enumerate(sorted(SPECS)):
        lines = [
            line
            for path in glob.glob(str(tmp_path / f"release{i}*"))
            for line in Path(path).read_text().splitlines()
        ]
        (line,) = lines
        total, pairs = json.loads(line)
        _check(name, {"total": total, "prevalences": dict(pairs)}, accountants[name])


@pytest.fixture(scope="module")
def spark_context() -> Iterator[Any]:
    context = local_context("dpplug-anonymized-tests")
    context.setLogLevel("ERROR")
    yield context
    context.stop()


@pytest.mark.parametrize("name", sorted(SPECS))
def test_on_spark(spark_context: Any, name: str) -> None:
    rdd = spark_context.parallelize(ROWS, 2)
    released, accountant = _release(pipeline_dp.SparkRDDBackend(spark_context), rdd, name)
    (histogram,) = released.collect()
    _check(name, histogram.to_dict(), accountant)


def test_without_data_a_release_still_happens() -> None:
    released, _ = _release(pipeline_dp.LocalBackend(), [], "privhist")
    (histogram,) = list(released)
    assert isinstance(histogram, dpplug.AnonymizedHistogram)


def test_sorted_histogram_spec_without_length_fails_when_made() -> None:
    with pytest.raises(dpplug.BadParameter, match="missing parameter length"):
        central_release("sorted-histogram")
