"""The PipelineDP adapter (``dpplug.adapters.pipelinedp``) on the real PipelineDP 0.3.1 engines.

The same pipeline (``select_partitions`` and ``aggregate`` with COUNT and PRIVACY_ID_COUNT, a dpplug
partition selector with a pre-threshold m and a dpplug count sampler) runs on
``pipeline_dp.LocalBackend()``, on ``BeamBackend()`` with Beam's DirectRunner in memory and with
two worker processes, and on ``SparkRDDBackend`` (Spark ``local[2]``, started once for the module),
under the Naive and the PLD budget accountant. No mocks: every decision and every noisy count is
drawn by the plugin where the backend runs it.

The data make the checks certain or overwhelming (ε = 10, δ = 1e-3): "big" partitions have far
more units than the selectors' saturation (kept with probability exactly 1), "small" ones have
fewer than m units (dropped with probability exactly 0 by the pre-threshold), "medium" ones may go
either way. That the plugin, not PipelineDP's Laplace, ran on the workers is shown by the explain
report and by worker-side effects: counts are integer-valued floats (PipelineDP's type; Laplace
noise is never an integer), the pre-threshold drops small partitions, and
``fixedpoint-geometric`` with n = 5 clamps every released count into [0, 5] although the big
partitions count hundreds of rows (impossible with additive Laplace noise).
Accuracy checks use the sampler's own (a, β) bound at β = 1e-12 per count.

Worker-side code is lambdas and installed modules only (no module-level test helpers), so Beam's
and Spark's workers never need to import this file.
"""

from __future__ import annotations

import glob
import json
import math
import operator
import pickle
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

pipeline_dp = pytest.importorskip("pipeline_dp")
beam = pytest.importorskip("apache_beam")
pyspark = pytest.importorskip("pyspark")
pytest.importorskip("dp_accounting")

import numpy as np  # noqa: E402
from apache_beam.internal import pickler as beam_pickler  # noqa: E402
from apache_beam.options.pipeline_options import PipelineOptions  # noqa: E402
from dp_accounting.pld import common as pld_common  # noqa: E402
from dp_accounting.pld import privacy_loss_distribution as pldlib  # noqa: E402
from pipeline_dp.aggregate_params import MechanismType  # noqa: E402
from pyspark.serializers import CloudPickleSerializer  # noqa: E402

import dpplug  # noqa: E402
from dpplug.adapters import pipelinedp as adapter  # noqa: E402
from dpplug.adapters.pipelinedp import (  # noqa: E402
    DPEngine,
    PluginNoise,
    central_release,
    partition_selection,
    sampler,
)
from dpplug.adapters.pipelinedp_batches import BATCH, per_batch  # noqa: E402
from dpplug.adapters.spark import local_context  # noqa: E402
from dpplug.plugins.partition.grid_selector import GridSelector  # noqa: E402

Metrics = pipeline_dp.Metrics

EPSILON, DELTA = 10.0, 1e-3
PRE_THRESHOLD = 5  # m
BETA = Fraction(1, 10**12)  # failure probability of each accuracy check

#: Units per partition: big (surely kept), medium (≥ m, may be kept), small (< m, never released).
BIG = {f"big{i}": 150 + 10 * i for i in range(4)}
MEDIUM = {f"mid{i}": PRE_THRESHOLD + i for i in range(4)}
SMALL = {f"small{i}": 1 + i % (PRE_THRESHOLD - 1) for i in range(24)}
UNITS = {**BIG, **MEDIUM, **SMALL}
ELIGIBLE = {key for key, units in UNITS.items() if units >= PRE_THRESHOLD}

#: One unit contributes to one partition, with 1 or 2 rows: contribution bounding keeps them all.
ROWS = [
    (f"{key}/{unit}", key, 1)
    for key, units in UNITS.items()
    for unit in range(units)
    for _ in range(1 + unit % 2)
]
ROW_COUNTS = {key: sum(1 + unit % 2 for unit in range(units)) for key, units in UNITS.items()}
EXTRACTORS = pipeline_dp.DataExtractors(
    privacy_id_extractor=operator.itemgetter(0),
    partition_extractor=operator.itemgetter(1),
    value_extractor=operator.itemgetter(2),
)
L0, LINF = 1, 2
L1 = {"count": L0 * LINF, "privacy_id_count": L0}
METRIC_FIELDS = {"count", "count_noise_stddev", "privacy_id_count", "privacy_id_count_noise_stddev"}


@dataclass(frozen=True)
class Case:
    selector: str
    sampler: str
    sampler_params: tuple[tuple[str, Any], ...]
    accountant: str  # "naive" or "pld"

    @property
    def id(self) -> str:
        given = "".join(f"-{k}{v}" for k, v in self.sampler_params)
        return f"{self.selector}+{self.sampler}{given}+{self.accountant}"

    @property
    def n(self) -> int | None:
        return dict(self.sampler_params).get("n")


CASES = [
    Case(selector, name, params, accountant)
    for accountant in ("naive", "pld")
    for selector in ("optimal-partition-selection", "laplace-thresholding")
    for name, params in (
        ("discrete-laplace", ()),
        ("fixedpoint-geometric", (("n", 5),)),
        ("fixedpoint-geometric", (("n", 10_000),)),
    )
]
BACKENDS = ("local", "beam_in_memory", "beam_multi_processing", "spark")


@dataclass
class Run:
    """What one case released, as plain values, and its engine and accountant (driver side)."""

    selected: list[Any]
    aggregated: dict[str, tuple[str, dict[str, Any]]]  # key → (metrics type name, fields)
    engine: Any
    accountant: Any


def _accountant(kind: str) -> Any:
    if kind == "naive":
        return pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPSILON, total_delta=DELTA)
    return pipeline_dp.PLDBudgetAccountant(total_epsilon=EPSILON, total_delta=DELTA)


def _build(case: Case, backend: Any, col: Any) -> tuple[Any, Any, Any, Any]:
    """The pipeline of one case on *backend*: (selected, aggregated, engine, accountant)."""
    accountant = _accountant(case.accountant)
    engine = DPEngine(
        accountant, backend, count_noise=sampler(case.sampler, **dict(case.sampler_params))
    )
    strategy = partition_selection(case.selector)
    selected = engine.select_partitions(
        col,
        pipeline_dp.SelectPartitionsParams(
            max_partitions_contributed=L0,
            partition_selection_strategy=strategy,
            pre_threshold=PRE_THRESHOLD,
        ),
        EXTRACTORS,
    )
    aggregated = engine.aggregate(
        col,
        pipeline_dp.AggregateParams(
            metrics=[Metrics.COUNT, Metrics.PRIVACY_ID_COUNT],
            max_partitions_contributed=L0,
            max_contributions_per_partition=LINF,
            output_noise_stddev=True,
            partition_selection_strategy=strategy,
            pre_threshold=PRE_THRESHOLD,
        ),
        EXTRACTORS,
    )
    accountant.compute_budgets()  # before any backend runs the pipeline
    return selected, aggregated, engine, accountant


def _run(selected: Any, aggregated: Any, engine: Any, accountant: Any) -> Run:
    rows = {key: (type(m).__name__, m._asdict()) for key, m in aggregated}
    return Run(list(selected), rows, engine, accountant)


# --------------------------------------------------------------------------- backends


@pytest.fixture(scope="module")
def local_runs() -> dict[str, Run]:
    runs = {}
    for case in CASES:
        selected, aggregated, engine, accountant = _build(case, pipeline_dp.LocalBackend(), ROWS)
        runs[case.id] = _run(selected, aggregated, engine, accountant)
    return runs


def _beam_runs(mode: str, out: Path) -> dict[str, Run]:
    """Every case in one Beam pipeline; workers write JSON lines, which json.dumps refuses for
    anything but plain Python values (a numpy integer would fail the pipeline)."""
    options = PipelineOptions(
        flags=[], runner="DirectRunner", direct_running_mode=mode, direct_num_workers=2
    )
    built = {}
    with beam.Pipeline(options=options) as pipeline:
        col = pipeline | "Create rows" >> beam.Create(ROWS)
        for i, case in enumerate(CASES):
            backend = pipeline_dp.BeamBackend(suffix=f"case{i}")
            selected, aggregated, engine, accountant = _build(case, backend, col)
            built[case.id] = (engine, accountant)
            _ = (
                selected
                | f"Selected to JSON {i}" >> beam.Map(json.dumps)
                | f"Write selected {i}" >> beam.io.WriteToText(str(out / f"selected{i}"))
            )
            _ = (
                aggregated
                | f"Aggregated to JSON {i}"
                >> beam.Map(lambda kv: json.dumps([kv[0], type(kv[1]).__name__, kv[1]._asdict()]))
                | f"Write aggregated {i}" >> beam.io.WriteToText(str(out / f"aggregated{i}"))
            )

    def lines(prefix: str) -> Iterator[Any]:
        for name in sorted(glob.glob(str(out / f"{prefix}*"))):
            with open(name, encoding="utf-8") as f:
                yield from (json.loads(line) for line in f)

    runs = {}
    for i, case in enumerate(CASES):
        aggregated = {key: (kind, fields) for key, kind, fields in lines(f"aggregated{i}-")}
        runs[case.id] = Run(list(lines(f"selected{i}-")), aggregated, *built[case.id])
    return runs


@pytest.fixture(scope="module")
def beam_in_memory_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    return _beam_runs("in_memory", tmp_path_factory.mktemp("beam_in_memory"))


@pytest.fixture(scope="module")
def beam_multi_processing_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    return _beam_runs("multi_processing", tmp_path_factory.mktemp("beam_multi_processing"))


@pytest.fixture(scope="module")
def spark_context() -> Iterator[Any]:
    context = local_context("dpplug-pipelinedp-tests")
    yield context
    context.stop()


@pytest.fixture(scope="module")
def spark_runs(spark_context: Any) -> dict[str, Run]:
    runs = {}
    rdd = spark_context.parallelize(ROWS, 2)
    for case in CASES:
        backend = pipeline_dp.SparkRDDBackend(spark_context)
        selected, aggregated, engine, accountant = _build(case, backend, rdd)
        rows = aggregated.map(lambda kv: (kv[0], type(kv[1]).__name__, kv[1]._asdict()))
        collected = {key: (kind, fields) for key, kind, fields in rows.collect()}
        runs[case.id] = Run(selected.collect(), collected, engine, accountant)
    return runs


# --------------------------------------------------------------------------- expectations


def _fraction(value: Any) -> Fraction:
    return Fraction(int(value.numerator), int(value.denominator))


def _count_sampler(case: Case, epsilon: Fraction) -> Any:
    return dpplug.create(case.sampler, epsilon=epsilon, **dict(case.sampler_params))


def _expected_std(case: Case, epsilon: Fraction) -> float:
    """The sampler's exact noise standard deviation, computed here independently of the adapter:
    discrete Laplace in closed form (Var = 2α/(1−α)²), fixedpoint-geometric from its exact law at
    the central count n // 2 (where the adapter states it; clamping makes it count-dependent)."""
    mechanism = _count_sampler(case, epsilon)
    if case.sampler == "discrete-laplace":
        alpha = _fraction(mechanism.alpha)
        return math.sqrt(2 * alpha) / (1 - alpha)
    centre = mechanism.n // 2
    law = {z: _fraction(p) for z, p in mechanism.pmf(centre).items()}
    assert sum(law.values()) == 1
    mean = sum(p * (z - centre) for z, p in law.items())
    return math.sqrt(sum(p * (z - centre - mean) ** 2 for z, p in law.items()))


def _spec(accountant: Any, name: str) -> Any:
    (spec,) = [m.mechanism_spec for m in accountant._mechanisms if m.mechanism_spec.name == name]
    return spec


def _check_budgets(case: Case, accountant: Any) -> None:
    specs = [m.mechanism_spec for m in accountant._mechanisms]
    assert sorted(s.name for s in specs) == sorted(
        [f"PartitionSelection ({case.selector})"] * 2
        + [f"COUNT ({case.sampler})", f"PRIVACY_ID_COUNT ({case.sampler})"]
    )
    selections = [s for s in specs if s.name.startswith("PartitionSelection")]
    noises = [s for s in specs if s not in selections]
    assert all(s.mechanism_type is MechanismType.GENERIC for s in selections)
    assert all(s.eps > 0 and s.delta > 0 for s in selections)
    if case.accountant == "naive":
        # Pure count noise is requested as LAPLACE: no δ is charged, the selections get it all.
        assert all(s.mechanism_type is MechanismType.LAPLACE and s.delta == 0 for s in noises)
        assert sum(s.eps for s in specs) == pytest.approx(EPSILON, rel=1e-12)
        assert sum(s.delta for s in selections) == pytest.approx(DELTA, rel=1e-12)
        return
    # PLD composes LAPLACE as continuous Laplace noise, which a discrete sampler is not: GENERIC.
    assert all(s.mechanism_type is MechanismType.GENERIC for s in noises)
    # PLD: the accountant's composition of the GENERIC (ε_i, δ_i) stays within (ε, δ).
    assert accountant.base_noise_std is not None
    composed = None
    for s in specs:
        pld = pldlib.from_privacy_parameters(
            pld_common.DifferentialPrivacyParameters(s.eps, s.delta),
            value_discretization_interval=1e-4,
        )
        composed = pld if composed is None else composed.compose(pld)
    assert composed is not None
    assert composed.get_epsilon_for_delta(DELTA) <= EPSILON * 1.001


def _check_report(case: Case, engine: Any) -> None:
    report = "\n".join(engine.explain_computations_report())
    assert report.count(f"dpplug plugin {case.selector}(") == 2
    assert report.count(f"dpplug plugin {case.sampler}(") == 2  # COUNT and PRIVACY_ID_COUNT
    assert "Laplace mechanism" not in report
    assert "Truncated Geometric" not in report


# --------------------------------------------------------------------------- the pipelines


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
@pytest.mark.parametrize("backend", BACKENDS)
def test_select_partitions_and_counts(
    backend: str, case: Case, request: pytest.FixtureRequest
) -> None:
    run = request.getfixturevalue(f"{backend}_runs")[case.id]

    # Partition selection on the workers, with PipelineDP's pre_threshold.
    selected = set(run.selected)
    assert len(selected) == len(run.selected)
    assert set(BIG) <= selected <= ELIGIBLE
    assert set(BIG) <= set(run.aggregated) <= ELIGIBLE

    # Budgets (selections GENERIC, count noise pure under Naive), and the report's mechanisms.
    _check_budgets(case, run.accountant)
    _check_report(case, run.engine)
    epsilon = {
        metric: Fraction(_spec(run.accountant, f"{metric.upper()} ({case.sampler})").eps)
        / L1[metric]
        for metric in L1
    }
    std = {metric: _expected_std(case, eps) for metric, eps in epsilon.items()}
    error = {
        metric: _count_sampler(case, eps).accuracy(BETA).per_query.a
        for metric, eps in epsilon.items()
    }
    truth = {"count": ROW_COUNTS, "privacy_id_count": UNITS}

    for key, (kind, fields) in run.aggregated.items():
        assert kind == "MetricsTuple"
        assert set(fields) == METRIC_FIELDS
        for metric in L1:
            value = fields[metric]
            assert type(value) is float and value == int(value), (key, metric, value)
            assert fields[f"{metric}_noise_stddev"] == pytest.approx(std[metric], rel=1e-9)
            true = truth[metric][key]
            if case.n is not None:
                assert 0 <= value <= case.n  # the sampler clamps; Laplace noise would not
            if case.n is None or true <= case.n:
                assert abs(value - true) <= error[metric], (key, metric, value, true)
    if case.n == 5:  # the big partitions count hundreds: only the clamp explains these counts
        assert all(run.aggregated[key][1]["count"] <= 5 for key in BIG)


def test_the_big_partitions_are_kept_surely() -> None:
    """The data's premise: at the smallest per-mechanism budget any case gets, the grid
    selectors keep a big partition with probability exactly 1 and a small one with 0."""
    for name in ("optimal-partition-selection", "laplace-thresholding"):
        selector = dpplug.create(
            name, epsilon=Fraction(2), delta=Fraction(1, 10**4), pre_threshold=PRE_THRESHOLD
        )
        assert isinstance(selector, GridSelector)
        assert selector.keep_probability(min(BIG.values())) == 1
        assert selector.keep_probability(PRE_THRESHOLD - 1) == 0


def test_generic_selector_path_on_local_backend() -> None:
    """A selector that is not on the keep table (truncated-geometric-thresholding) goes through
    its vectorised ``select``, one partition at a time."""
    accountant = _accountant("naive")
    engine = DPEngine(accountant, pipeline_dp.LocalBackend())
    selected = engine.select_partitions(
        ROWS,
        pipeline_dp.SelectPartitionsParams(
            max_partitions_contributed=L0,
            partition_selection_strategy=partition_selection("truncated-geometric-thresholding"),
            pre_threshold=PRE_THRESHOLD,
        ),
        EXTRACTORS,
    )
    accountant.compute_budgets()
    assert set(BIG) <= set(selected) <= ELIGIBLE
    assert (
        "dpplug plugin truncated-geometric-thresholding(" in engine.explain_computations_report()[0]
    )


@pytest.mark.parametrize(
    "name",
    ["optimal-partition-selection", "laplace-thresholding", "truncated-geometric-thresholding"],
)
def test_scalar_keep_path_equals_vectorised_select(name: str) -> None:
    """The per-partition decider the adapter uses draws exactly what ``select`` draws."""
    selector = dpplug.create(
        name, epsilon=Fraction(1, 2), delta=Fraction(1, 10**3), pre_threshold=3
    )
    distinct = selector.saturation + 5
    units = np.arange(distinct, dtype=np.int64).repeat(3 * 4096 // distinct + 1)
    expected = selector.select(units, dpplug.SeededSource(11)).keep
    decide = selector.decider(dpplug.SeededSource(11))
    assert [decide(int(u)) for u in units] == expected.tolist()
    assert not expected[units < 3].any() and expected[units >= selector.saturation].all()


def _batch_sizes(backend: str, size: int, request: pytest.FixtureRequest, tmp: Path) -> list[int]:
    """The sizes of the batches ``per_batch`` hands a function on *backend*, for *size* elements
    in 2 partitions (Spark) or bundles of Beam's DirectRunner."""
    sizes = lambda batch: [len(batch)]  # noqa: E731 (shipped to the workers as a lambda)
    if backend == "spark":
        context = request.getfixturevalue("spark_context")
        rdd = context.parallelize(range(size), 2)
        found = per_batch(pipeline_dp.SparkRDDBackend(context), rdd, sizes, "Sizes")
        return list(found.collect())
    with beam.Pipeline(options=PipelineOptions(flags=[], runner="DirectRunner")) as pipeline:
        col = pipeline | "Create" >> beam.Create(list(range(size)))
        found = per_batch(pipeline_dp.BeamBackend(), col, sizes, "Sizes")
        _ = found | "To text" >> beam.Map(str) | beam.io.WriteToText(str(tmp / "sizes"))
    return [int(line) for name in glob.glob(str(tmp / "sizes*")) for line in open(name)]


@pytest.mark.parametrize("backend", ["beam", "spark"])
def test_batches_on_beam_and_spark(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """dpplug's counting graphs decide and noise whole batches where the backend runs them:
    every element in one batch of at most BATCH, and batches of more than one."""
    size = 3 * BATCH + 5
    sizes = _batch_sizes(backend, size, request, tmp_path)
    assert sum(sizes) == size and 1 < max(sizes) <= BATCH


# --------------------------------------------------------------------------- add_dp_noise


def _add_dp_noise(engine: Any, col: Any) -> Any:
    params = pipeline_dp.AddDPNoiseParams(
        noise_kind=pipeline_dp.NoiseKind.LAPLACE,
        l0_sensitivity=1,
        linf_sensitivity=1,
        output_noise_stddev=True,
    )
    return engine.add_dp_noise(col, params)


PRE_AGGREGATED = [(f"p{i}", 1000 + 7 * i) for i in range(300)]


@pytest.mark.parametrize(
    ("name", "params"), [("discrete-laplace", {}), ("fixedpoint-geometric", {"n": 5})]
)
@pytest.mark.parametrize("backend", ["local", "spark"])
def test_add_dp_noise(
    backend: str, name: str, params: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    accountant = _accountant("naive")
    case = Case("-", name, tuple(params.items()), "naive")
    if backend == "local":
        engine = DPEngine(
            accountant, pipeline_dp.LocalBackend(), count_noise=sampler(name, **params)
        )
        result = _add_dp_noise(engine, PRE_AGGREGATED)
        accountant.compute_budgets()
        released = list(result)
    else:
        context = request.getfixturevalue("spark_context")
        backend_ = pipeline_dp.SparkRDDBackend(context)
        engine = DPEngine(accountant, backend_, count_noise=sampler(name, **params))
        result = _add_dp_noise(engine, context.parallelize(PRE_AGGREGATED, 2))
        accountant.compute_budgets()
        released = result.collect()

    spec = _spec(accountant, f"AddDPNoise ({name})")
    assert spec.mechanism_type is MechanismType.LAPLACE and spec.eps == pytest.approx(EPSILON)
    assert spec.delta == 0
    epsilon = Fraction(spec.eps)
    bound = _count_sampler(case, epsilon).accuracy(BETA).per_query.a
    std = _expected_std(case, epsilon)
    truth = dict(PRE_AGGREGATED)
    assert sorted(key for key, _ in released) == sorted(truth)
    for key, (noisy, noise_std) in released:
        assert type(noisy) is float and noisy == int(noisy)
        assert noise_std == pytest.approx(std, rel=1e-9)
        if case.n is None:
            assert abs(noisy - truth[key]) <= bound
        else:
            assert 0 <= noisy <= case.n  # true values 1000+ clamped by the sampler
    assert f"dpplug plugin {name}(" in engine.explain_computations_report()[0]


def test_add_dp_noise_rejects_non_integer_values() -> None:
    accountant = _accountant("naive")
    engine = DPEngine(
        accountant, pipeline_dp.LocalBackend(), count_noise=sampler("discrete-laplace")
    )
    result = _add_dp_noise(engine, [("a", 2.5)])
    accountant.compute_budgets()
    with pytest.raises(dpplug.BadData, match="integer"):
        list(result)


@pytest.mark.parametrize("name", ["discrete-laplace", "fixedpoint-geometric"])
def test_add_dp_noise_clamps_huge_values_instead_of_wrapping(name: str) -> None:
    """1e30 used to become −2^62 after an int64 cast; now every value is clamped to the
    sampler's count bounds first (1-Lipschitz, so the sensitivity is unchanged), and NaN or
    infinities are refused before anything is drawn."""
    spec = sampler(name, **({"n": 100} if name == "fixedpoint-geometric" else {}))
    noise = PluginNoise(spec, 1.0, 1.0)
    low, high = noise._sampler.count_bounds
    noisy = noise.add_noise(np.array([1e30, -1e30, float(2**70)]))
    assert noisy.dtype == np.float64
    assert abs(int(noisy[0]) - high) <= 60 and abs(int(noisy[1]) - low) <= 60
    huge = noise.add_noise(np.array([2**64 - 1], dtype=np.uint64))
    assert abs(int(huge[0]) - high) <= 60
    for bad in (np.array([np.nan]), np.array([np.inf]), np.array(["1"])):
        with pytest.raises(dpplug.BadData):
            noise.add_noise(bad)


def test_discrete_laplace_std_includes_the_tails() -> None:
    """At small ε most of the variance is beyond the sampler's pmf window; the reported std is
    still the exact one."""
    spec = sampler("discrete-laplace")
    noise = adapter.PluginNoise(spec, 0.1, 1)
    case = Case("-", "discrete-laplace", (), "naive")
    assert noise.std == pytest.approx(_expected_std(case, Fraction(0.1)), rel=1e-12)


# --------------------------------------------------------------------------- histograms

#: 400 units with "a", 150 with "b", 50 with "c", and one unit with 60 rows of "z": the engine
#: keeps one row per unit, so "z" has true count 1 (released with probability ≤ δ < 1e-6).
UNIT_ROWS = (
    [(u, "a") for u in range(400)]
    + [(400 + u, "b") for u in range(150)]
    + [(550 + u, "c") for u in range(50)]
    + [(999, "z")] * 60
)
UNIT_TRUTH = {"a": 400, "b": 150, "c": 50}
HISTOGRAM = {"universe": "text:1", "n": 1000}


def _histogram(backend: Any, col: Any) -> tuple[Any, Any]:
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=1, total_delta=1e-6)
    engine = DPEngine(accountant, backend)
    extractors = pipeline_dp.DataExtractors(
        privacy_id_extractor=operator.itemgetter(0),
        partition_extractor=operator.itemgetter(1),
        value_extractor=lambda row: 1,
    )
    spec = central_release("stability-histogram", **HISTOGRAM)
    released = engine.release(col, spec, extractors)
    accountant.compute_budgets()
    return released, accountant


def _check_histogram(released: dict[str, int], accountant: Any) -> None:
    budget = _spec(accountant, "Central release (stability-histogram)")
    assert budget.mechanism_type is MechanismType.GENERIC
    releaser = dpplug.create(
        "stability-histogram",
        **HISTOGRAM,
        epsilon=Fraction(budget.eps),
        delta=Fraction(budget.delta),
    )
    assert releaser.guarantee.epsilon <= budget.eps and releaser.guarantee.delta <= budget.delta
    a = releaser.accuracy(BETA).per_query.a
    assert list(released) == sorted(released) and set(released) == set(UNIT_TRUTH)
    for label, truth in UNIT_TRUTH.items():
        assert abs(released[label] - truth) <= a


def test_central_release_on_local_backend() -> None:
    released, accountant = _histogram(pipeline_dp.LocalBackend(), UNIT_ROWS)
    (histogram,) = list(released)
    _check_histogram(histogram.to_dict(), accountant)


@pytest.mark.parametrize("mode", ["in_memory", "multi_processing"])
def test_central_release_on_beam(mode: str, tmp_path: Path) -> None:
    options = PipelineOptions(
        flags=[], runner="DirectRunner", direct_running_mode=mode, direct_num_workers=2
    )
    with beam.Pipeline(options=options) as pipeline:
        col = pipeline | "Create rows" >> beam.Create(UNIT_ROWS)
        released, accountant = _histogram(pipeline_dp.BeamBackend(), col)
        _ = (
            released
            | "To JSON" >> beam.Map(lambda h: json.dumps(list(h.items())))
            | "Write" >> beam.io.WriteToText(str(tmp_path / "histogram"))
        )
    lines = [Path(name).read_text().splitlines() for name in glob.glob(str(tmp_path / "hist*"))]
    (line,) = [line for chunk in lines for line in chunk]
    _check_histogram(dict(json.loads(line)), accountant)


def test_central_release_on_spark(spark_context: Any) -> None:
    rdd = spark_context.parallelize(UNIT_ROWS, 2)
    released, accountant = _histogram(pipeline_dp.SparkRDDBackend(spark_context), rdd)
    (histogram,) = released.collect()
    _check_histogram(histogram.to_dict(), accountant)


def test_central_release_without_data_still_releases() -> None:
    released, _ = _histogram(pipeline_dp.LocalBackend(), [])
    (histogram,) = list(released)
    assert len(histogram) == 0


@pytest.mark.parametrize("backend", ["local", "spark"])
def test_the_linear_time_blanket_release_runs_centrally(backend: str, request: Any) -> None:
    """blanket-sparse-histogram (pure DP, its padding drawn from all of text:1) through the
    engine: its grant is pure and within the budget, the bins come in canonical order, and every
    label above its coverage threshold is within its per-query a (each fails with probability
    at most β = 1e-6)."""
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=1, total_delta=1e-6)
    extractors = pipeline_dp.DataExtractors(
        privacy_id_extractor=operator.itemgetter(0),
        partition_extractor=operator.itemgetter(1),
        value_extractor=lambda row: 1,
    )
    spec = central_release("blanket-sparse-histogram", universe="text:1", n=1000)
    if backend == "spark":
        context = request.getfixturevalue("spark_context")
        col = context.parallelize(UNIT_ROWS, 2)
        released = DPEngine(accountant, pipeline_dp.SparkRDDBackend(context)).release(
            col, spec, extractors
        )
        accountant.compute_budgets()
        (histogram,) = released.collect()
    else:
        released = DPEngine(accountant, pipeline_dp.LocalBackend()).release(
            UNIT_ROWS, spec, extractors
        )
        accountant.compute_budgets()
        (histogram,) = list(released)
    budget = _spec(accountant, "Central release (blanket-sparse-histogram)")
    releaser = dpplug.create(
        "blanket-sparse-histogram", universe="text:1", n=1000, epsilon=Fraction(budget.eps)
    )
    assert releaser.guarantee.pure and releaser.guarantee.epsilon <= budget.eps
    counts = histogram.to_dict()
    assert list(counts) == sorted(counts, key=releaser.universe.index)
    accuracy = releaser.accuracy(Fraction(1, 10**6))
    for label, truth in UNIT_TRUTH.items():
        if truth > accuracy.threshold:
            assert abs(counts.get(label, 0) - truth) <= accuracy.per_query.a


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: partition_selection("no-such-selector"), dpplug.UnknownMechanism, "no-such"),
        (
            lambda: partition_selection("optimal-partition-selection", epsilon=1),
            dpplug.BadParameter,
            "epsilon",
        ),
        (
            lambda: partition_selection("optimal-partition-selection", pre_threshold=3),
            dpplug.BadParameter,
            "pre_threshold",
        ),
        (lambda: partition_selection("geosample"), dpplug.BadParameter, "as partition-selection"),
        (lambda: sampler("truncated-geometric", delta=1e-6), dpplug.BadParameter, "pure"),
        (lambda: sampler("optimal-partition-selection"), dpplug.BadParameter, "as count-noise"),
        (lambda: central_release("geosample"), dpplug.BadParameter, "as central-release"),
        (
            lambda: central_release("stability-histogram", universe="text:1", n=10, delta=0.1),
            dpplug.BadParameter,
            "delta",
        ),
        (
            lambda: central_release("pure-sparse-histogram", universe="range:0:3", n=10),
            dpplug.BadParameter,
            "4n",
        ),
        (lambda: sampler("discrete-laplace", epsilon=1), dpplug.BadParameter, "epsilon"),
        (lambda: sampler("fixedpoint-geometric"), dpplug.BadParameter, "missing parameter n"),
        (lambda: sampler("fixedpoint-geometric", n=-1), dpplug.BadParameter, "n=-1"),
        (
            lambda: partition_selection("laplace-thresholding", replace_one="yes"),
            dpplug.BadParameter,
            "replace_one",
        ),
        (
            lambda: partition_selection("optimal-partition-selection", nope=1),
            dpplug.BadParameter,
            "nope",
        ),
    ],
)
def test_bad_specs_fail_when_made(make: Callable[[], Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        make()


def _engine(**kwargs: Any) -> Any:
    return DPEngine(_accountant("naive"), pipeline_dp.LocalBackend(), **kwargs)


def test_engine_rejects_misplaced_specs_before_running() -> None:
    misplaced = sampler("discrete-laplace")
    with pytest.raises(dpplug.BadParameter, match="as partition-selection"):
        _engine().select_partitions(
            ROWS,
            pipeline_dp.SelectPartitionsParams(
                max_partitions_contributed=1, partition_selection_strategy=misplaced
            ),
            EXTRACTORS,
        )
    with pytest.raises(dpplug.BadParameter, match="as partition-selection"):
        _engine().aggregate(
            ROWS,
            pipeline_dp.AggregateParams(
                metrics=[Metrics.COUNT],
                max_partitions_contributed=1,
                max_contributions_per_partition=1,
                partition_selection_strategy=misplaced,
            ),
            EXTRACTORS,
        )
    with pytest.raises(dpplug.BadParameter, match="count_noise"):
        _engine(count_noise=partition_selection("optimal-partition-selection"))
    with pytest.raises(dpplug.BadParameter, match="partition_selection_strategy"):
        _engine().select_partitions(
            ROWS,
            pipeline_dp.SelectPartitionsParams(
                max_partitions_contributed=1, partition_selection_strategy="optimal"
            ),
            EXTRACTORS,
        )
    with pytest.raises(dpplug.NotSupported, match="post_aggregation_thresholding"):
        _engine(count_noise=sampler("discrete-laplace")).aggregate(
            ROWS,
            pipeline_dp.AggregateParams(
                metrics=[Metrics.COUNT, Metrics.PRIVACY_ID_COUNT],
                max_partitions_contributed=1,
                max_contributions_per_partition=2,
                post_aggregation_thresholding=True,
            ),
            EXTRACTORS,
        )


def test_noise_kind_sampler_is_refused_where_it_cannot_noise() -> None:
    """``params.noise_kind=sampler(...)`` noises counts only, once, and only with a sampler."""
    params = pipeline_dp.AggregateParams(
        metrics=[Metrics.COUNT, Metrics.SUM],
        max_partitions_contributed=1,
        max_contributions_per_partition=1,
        min_value=0,
        max_value=1,
        noise_kind=sampler("discrete-laplace"),
    )
    with pytest.raises(dpplug.BadParameter, match="separate aggregation"):
        _engine().aggregate(ROWS, params, EXTRACTORS)
    params.metrics = [Metrics.COUNT]
    with pytest.raises(dpplug.BadParameter, match="given twice"):
        _engine(count_noise=sampler("discrete-laplace")).aggregate(ROWS, params, EXTRACTORS)
    params.noise_kind = partition_selection("optimal-partition-selection")
    with pytest.raises(dpplug.BadParameter, match="as count-noise"):
        _engine().aggregate(ROWS, params, EXTRACTORS)


# --------------------------------------------------------------------------- laziness, pickling


_LocalBackend: Any = pipeline_dp.LocalBackend


class _RecordingBackend(_LocalBackend):  # type: ignore[misc]
    """A real LocalBackend that keeps the functions given to ``filter``."""

    def __init__(self) -> None:
        super().__init__()
        self.filters: list[Callable[[Any], bool]] = []

    def filter(self, col: Any, fn: Callable[[Any], bool], stage_name: str | None = None) -> Any:
        self.filters.append(fn)
        return super().filter(col, fn, stage_name)


_SPARK_PICKLER: Any = CloudPickleSerializer()  # type: ignore[no-untyped-call]
#: What Beam and Spark ship functions and combiners with.
_BACKEND_PICKLERS: list[tuple[Callable[[Any], bytes], Callable[[bytes], Any]]] = [
    (beam_pickler.dumps, beam_pickler.loads),
    (_SPARK_PICKLER.dumps, _SPARK_PICKLER.loads),
]


def test_specs_filters_and_combiners_pickle_and_build_lazily() -> None:
    specs = [
        partition_selection("laplace-thresholding", replace_one=True),
        sampler("fixedpoint-geometric", n=40),
    ]
    for spec in specs:
        assert pickle.loads(pickle.dumps(spec)) == spec

    accountant = _accountant("naive")
    backend = _RecordingBackend()
    engine = DPEngine(accountant, backend, count_noise=sampler("discrete-laplace"))
    params = pipeline_dp.AggregateParams(
        metrics=[Metrics.COUNT, Metrics.PRIVACY_ID_COUNT, Metrics.SUM],
        max_partitions_contributed=1,
        max_contributions_per_partition=2,
        min_value=0,
        max_value=1,
        partition_selection_strategy=partition_selection("optimal-partition-selection"),
        pre_threshold=PRE_THRESHOLD,
    )
    result = engine.aggregate(ROWS, params, EXTRACTORS)
    combiner = engine._create_compound_combiner(params)
    (keep,) = backend.filters

    # Before compute_budgets nothing is built: the pieces pickle, and using them fails. The
    # compound holds PipelineDP's dynamic MetricsTuple class, which only the backends' own
    # picklers (cloudpickle) ship; its children and the filter pickle with plain pickle.
    children = combiner._combiners
    assert {type(c).__name__ for c in children} >= {"PluginCountCombiner"}
    for piece in (*specs, *children, keep):
        pickle.loads(pickle.dumps(piece))
    for dumps, loads in _BACKEND_PICKLERS:
        loads(dumps(combiner))
    with pytest.raises(AssertionError, match="not calculated"):
        keep(("big0", (200, ())))

    accountant.compute_budgets()
    assert keep(("big0", (200, ()))) is True
    assert keep(("small0", (1, ()))) is False
    metrics = combiner.compute_metrics(combiner.create_accumulator([1, 1, 1]))
    assert metrics.count == int(metrics.count) and type(metrics.count) is float
    assert metrics.privacy_id_count == int(metrics.privacy_id_count)
    assert isinstance(metrics.sum, float) and metrics.sum != int(metrics.sum)  # PipelineDP's own

    # Built mechanisms are dropped from the pickles and rebuilt where they are unpickled.
    assert pickle.loads(pickle.dumps(keep))(("big0", (200, ()))) is True
    for dumps, loads in _BACKEND_PICKLERS:
        restored = loads(dumps(combiner))
        count = restored.compute_metrics(restored.create_accumulator([1])).count
        assert type(count) is float and count == int(count)
    for child in children:
        assert "_mechanism" not in pickle.loads(pickle.dumps(child)).__dict__
    assert set(BIG) <= {key for key, _ in result}


def test_no_monkeypatching() -> None:
    """A fresh interpreter: PipelineDP's functions are the same objects before and after the
    adapter is imported and used, and the native engine still adds (float) Laplace noise."""
    script = textwrap.dedent(
        """
        import operator, pipeline_dp
        from pipeline_dp import combiners, dp_computations, partition_selection
        targets = [
            (pipeline_dp.DPEngine, "_select_private_partitions_internal"),
            (pipeline_dp.DPEngine, "_create_compound_combiner"),
            (pipeline_dp.DPEngine, "_add_dp_noise"),
            (pipeline_dp.DPEngine, "select_partitions"),
            (pipeline_dp.DPEngine, "aggregate"),
            (combiners, "create_compound_combiner"),
            (combiners.CountCombiner, "create_mechanism"),
            (dp_computations, "create_additive_mechanism"),
            (partition_selection, "create_partition_selection_strategy"),
        ]
        before = [getattr(owner, name) for owner, name in targets]
        from dpplug.adapters.pipelinedp import DPEngine, partition_selection as ps, sampler
        rows = [(f"u{i}", i % 3, 1) for i in range(600)]
        ext = pipeline_dp.DataExtractors(
            privacy_id_extractor=operator.itemgetter(0),
            partition_extractor=operator.itemgetter(1),
            value_extractor=operator.itemgetter(2),
        )
        params = pipeline_dp.AggregateParams(
            metrics=[pipeline_dp.Metrics.COUNT], max_partitions_contributed=1,
            max_contributions_per_partition=1,
            partition_selection_strategy=ps("optimal-partition-selection"),
        )
        acc = pipeline_dp.NaiveBudgetAccountant(total_epsilon=5, total_delta=1e-5)
        ours = DPEngine(acc, pipeline_dp.LocalBackend(), count_noise=sampler("discrete-laplace"))
        ours_out = ours.aggregate(rows, params, ext)
        acc.compute_budgets()
        assert all(type(m.count) is float and m.count == int(m.count) for _, m in ours_out)
        after = [getattr(owner, name) for owner, name in targets]
        assert all(a is b for a, b in zip(before, after)), "PipelineDP was patched"
        acc = pipeline_dp.NaiveBudgetAccountant(total_epsilon=5, total_delta=1e-5)
        native = pipeline_dp.DPEngine(acc, pipeline_dp.LocalBackend())
        native_params = pipeline_dp.AggregateParams(
            metrics=[pipeline_dp.Metrics.COUNT], max_partitions_contributed=1,
            max_contributions_per_partition=1,
        )
        native_out = native.aggregate(rows, native_params, ext)
        acc.compute_budgets()
        assert all(type(m.count) is float and m.count != int(m.count) for _, m in native_out)
        print("unpatched")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("unpatched")
    assert DPEngine._select_private_partitions_internal is not (
        pipeline_dp.DPEngine._select_private_partitions_internal
    )
    native = pipeline_dp.DPEngine._select_private_partitions_internal
    assert native.__module__ == "pipeline_dp.dp_engine"
    assert native is pipeline_dp.dp_engine.DPEngine.__dict__["_select_private_partitions_internal"]


# --------------------------------------------------------------------------- PLD


def test_pld_select_partitions_native_crashes_dpplug_works() -> None:
    params_native = pipeline_dp.SelectPartitionsParams(max_partitions_contributed=1)
    accountant = _accountant("pld")
    native = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
    native.select_partitions(ROWS, params_native, EXTRACTORS)
    with pytest.raises(AttributeError):  # TRUNCATED_GEOMETRIC has no PLD in 0.3.1
        accountant.compute_budgets()

    accountant = _accountant("pld")
    engine = DPEngine(accountant, pipeline_dp.LocalBackend())
    selected = engine.select_partitions(
        ROWS,
        pipeline_dp.SelectPartitionsParams(
            max_partitions_contributed=1,
            partition_selection_strategy=partition_selection("optimal-partition-selection"),
            pre_threshold=PRE_THRESHOLD,
        ),
        EXTRACTORS,
    )
    accountant.compute_budgets()
    (mechanism,) = accountant._mechanisms
    spec = mechanism.mechanism_spec
    assert spec.mechanism_type is MechanismType.GENERIC
    assert spec.name == "PartitionSelection (optimal-partition-selection)"
    assert spec.eps == pytest.approx(EPSILON, rel=1e-3) and 0 < spec.delta <= DELTA
    assert set(BIG) <= set(selected) <= ELIGIBLE
    report = engine.explain_computations_report()[0]
    assert "dpplug plugin optimal-partition-selection(" in report
    assert f"budget ε={spec.eps}, δ={spec.delta}" in report


def test_spark_without_java_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(dpplug.NotSupported, match="Spark needs Java"):
        local_context("no-java")


def test_spark_launch_failures_are_retried_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A launch that keeps failing (what a busy machine does now and then) is tried `attempts`
    times, then reported with its cause; the real launch is what the other Spark tests use."""
    from dpplug.adapters import spark

    tries = []

    def gateway_exits(conf: Any) -> Any:
        tries.append(conf)
        raise RuntimeError("Java gateway process exited before sending its port number")

    monkeypatch.setattr(pyspark, "SparkContext", gateway_exits)
    monkeypatch.setattr(spark.time, "sleep", lambda seconds: None)
    with pytest.raises(dpplug.NotSupported, match=r"after 3 attempts.*Java gateway"):
        local_context("flaky", attempts=3)
    assert len(tries) == 3


@pytest.mark.parametrize("l0", [1, 10])
def test_best_selector_is_chosen_for_the_granted_budget(l0: int) -> None:
    """``partition_selection("best")`` keeps partitions with the selector that
    ``dpplug.compare.best`` ranks first at the budget and ℓ₀ PipelineDP grants, and the explain
    report names it (at this grant, Laplace thresholding for ℓ₀ = 1 and Gaussian thresholding
    for ℓ₀ = 10, so a choice that ignored the grant names the wrong one in one of the cases)."""
    accountant = _accountant("naive")
    engine = DPEngine(accountant, pipeline_dp.LocalBackend())
    selected = engine.select_partitions(
        ROWS,
        pipeline_dp.SelectPartitionsParams(
            max_partitions_contributed=l0,
            partition_selection_strategy=partition_selection("best"),
            pre_threshold=PRE_THRESHOLD,
        ),
        EXTRACTORS,
    )
    accountant.compute_budgets()
    (spec,) = [m.mechanism_spec for m in accountant._mechanisms]
    expected = dpplug.compare.best(
        "partition-selector",
        epsilon=Fraction(spec.eps),
        delta=Fraction(spec.delta),
        l0=l0,
        pre_threshold=PRE_THRESHOLD,
    ).name
    assert expected == ("laplace-thresholding" if l0 == 1 else "gaussian-thresholding")
    assert set(BIG) <= set(selected) <= ELIGIBLE
    assert (
        f"best:partition-selector, chosen as {expected}: "
        in (engine.explain_computations_report()[0])
    )


def test_best_selector_is_refused_when_made_if_nothing_takes_its_parameters() -> None:
    with pytest.raises(dpplug.NotSupported, match="no registered partition-selector"):
        partition_selection("best", replace_one="sometimes")
@pytest.mark.parametrize("sensitivity", [0, -1.0, float("nan"), float("inf")])
def test_plugin_noise_refuses_a_sensitivity_it_cannot_divide_by(sensitivity: float) -> None:
    with pytest.raises(dpplug.BadParameter, match="l1_sensitivity must be a positive finite"):
        PluginNoise(sampler("discrete-laplace"), 1.0, sensitivity)
