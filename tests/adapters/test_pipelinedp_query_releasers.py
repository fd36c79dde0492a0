"""The sparse projection in PipelineDP 0.3.1 pipelines (dpplug.adapters.pipelinedp,
``DPEngine.release``) on the local backend, Beam's DirectRunner (in memory and with two worker
processes) and Spark ``local[2]``: the public hash is drawn when the pipeline is built, the
engine keeps one row per unit, counts rows per label and sums each label's column on the
workers, and the noise is added once, centrally.

The budget is large (ε = 16, δ = 1/4) so the noise on each released sum is at most a few units
except with probability below 1e-9, while every count is at least 100: a label lost, counted per
row instead of per unit, or given the wrong column would move sums by 100 or more. Worker-side
code is lambdas and installed modules only.
"""

from __future__ import annotations

import glob
import operator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pipeline_dp = pytest.importorskip("pipeline_dp")
beam = pytest.importorskip("apache_beam")
pyspark = pytest.importorskip("pyspark")

from collections.abc import Iterator  # noqa: E402

from apache_beam.options.pipeline_options import PipelineOptions  # noqa: E402
from gmpy2 import mpq  # noqa: E402
from pipeline_dp.aggregate_params import MechanismType  # noqa: E402

import dpplug  # noqa: E402
from dpplug.adapters.pipelinedp import DPEngine, central_release  # noqa: E402
from dpplug.adapters.spark import local_context  # noqa: E402
from dpplug.discrete_noise import laplace_error  # noqa: E402

#: 300 units with "a", 150 with "b" (each with two rows: one is kept), 100 with "c".
ROWS = (
    [(u, "a") for u in range(300)]
    + [(300 + u, "b") for u in range(150) for _ in range(2)]
    + [(450 + u, "c") for u in range(100)]
)
TRUTH = {"a": 300, "b": 150, "c": 100}
DIMENSION = 16
PROJECTION = {
    "universe": "text:1",
    "n": 1000,
    "max_queries": 5,
    "sparsity": 2,
    "dimension": DIMENSION,
}
EPSILON, DELTA = 16.0, 0.25


def _release(backend: Any, col: Any) -> tuple[Any, Any]:
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPSILON, total_delta=DELTA)
    engine = DPEngine(accountant, backend)
    extractors = pipeline_dp.DataExtractors(
        privacy_id_extractor=operator.itemgetter(0),
        partition_extractor=operator.itemgetter(1),
        value_extractor=lambda row: 1,
    )
    released = engine.release(col, central_release("sparse-projection", **PROJECTION), extractors)
    accountant.compute_budgets()
    return released, accountant


def _check(projection: dpplug.SparseProjection, accountant: Any) -> None:
    (budget,) = [m.mechanism_spec for m in accountant._mechanisms]
    assert budget.mechanism_type is MechanismType.GENERIC
    assert budget.name == "Central release (sparse-projection)"
    releaser = dpplug.create(
        "sparse-projection", **PROJECTION, epsilon=mpq(budget.eps), delta=mpq(budget.delta)
    )
    assert projection.guarantee == releaser.guarantee
    assert projection.hash.shape == releaser.projection
    universe = releaser.universe
    assert universe is not None
    exact = projection.hash.column_sums([universe.index(x) for x in TRUTH], list(TRUTH.values()))
    bound = laplace_error(releaser.noise_parameter, mpq(1, 10**9) / DIMENSION)
    assert bound < 50
    assert np.abs(np.array(projection.sums) - np.array(exact)).max() <= bound
    answers = projection.answers([{"a": 1}, {"b": 1, "c": 1}])
    assert all(0 <= a <= 1 for a in answers)


def test_projection_on_the_local_backend() -> None:
    released, accountant = _release(pipeline_dp.LocalBackend(), ROWS)
    (projection,) = list(released)
    _check(projection, accountant)


@pytest.mark.parametrize("mode", ["in_memory", "multi_processing"])
def test_projection_on_beam(mode: str, tmp_path: Path) -> None:
    """The release crosses from the workers as its bytes (``to_bytes``/``from_bytes``)."""
    options = PipelineOptions(
        flags=[], runner="DirectRunner", direct_running_mode=mode, direct_num_workers=2
    )
    with beam.Pipeline(options=options) as pipeline:
        col = pipeline | "Create rows" >> beam.Create(ROWS)
        released, accountant = _release(pipeline_dp.BeamBackend(), col)
        _ = (
            released
            | "To hex" >> beam.Map(lambda p: p.to_bytes().hex())
            | "Write" >> beam.io.WriteToText(str(tmp_path / "projection"))
        )
    lines = [Path(name).read_text().split() for name in glob.glob(str(tmp_path / "proj*"))]
    (line,) = [line for chunk in lines for line in chunk]
    _check(dpplug.SparseProjection.from_bytes(bytes.fromhex(line)), accountant)


@pytest.fixture(scope="module")
def spark_context() -> Iterator[Any]:
    context = local_context("dpplug-query-releaser-tests")
    yield context
    context.stop()


def test_projection_on_spark(spark_context: Any) -> None:
    released, accountant = _release(
        pipeline_dp.SparkRDDBackend(spark_context), spark_context.parallelize(ROWS, 2)
    )
    (projection,) = released.collect()
    _check(projection, accountant)


def test_without_data_the_projection_still_releases() -> None:
    released, _ = _release(pipeline_dp.LocalBackend(), [])
    (projection,) = list(released)
    assert len(projection.sums) == DIMENSION


def test_interactive_releasers_and_alpha_targets_are_refused_when_the_pipeline_is_built() -> None:
    engine = DPEngine(
        pipeline_dp.NaiveBudgetAccountant(total_epsilon=1, total_delta=1e-6),
        pipeline_dp.LocalBackend(),
    )
    extractors = pipeline_dp.DataExtractors(
        privacy_id_extractor=operator.itemgetter(0),
        partition_extractor=operator.itemgetter(1),
        value_extractor=lambda row: 1,
    )
    session = central_release("independent-laplace", n=1000, max_queries=5, sparsity=2)
    with pytest.raises(dpplug.NotSupported, match="runs where the data is"):
        engine.release(ROWS, session, extractors)
    target = central_release(
        "sparse-projection",
        **{k: v for k, v in PROJECTION.items() if k != "dimension"},
        alpha=0.9,
    )
    with pytest.raises(dpplug.BadParameter, match="give sparse-projection its dimension"):
        engine.release(ROWS, target, extractors)
