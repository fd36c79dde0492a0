"""The explain-computation report names the dpplug sampler that adds the noise, on the local
backend: its header says ``noise: dpplug sampler NAME(params) at ε=… per count for METRIC``
instead of PipelineDP's ``noise_kind=laplace``, with the ε each count gets (the budget
PipelineDP computed over the count's ℓ₁ sensitivity), and keeps PipelineDP's noise kind for the
metrics PipelineDP still noises; a ``dpplug budget`` line shows the (ε, δ) each dpplug mechanism
was granted. Without dpplug mechanisms the report is PipelineDP's own
(``test_pipelinedp_dropin.py``)."""

from __future__ import annotations

import operator
from typing import Any

import pytest

pipeline_dp = pytest.importorskip("pipeline_dp")

from pipeline_dp.report_generator import ExplainComputationReport  # noqa: E402

from dpplug.adapters.pipelinedp import DPEngine, partition_selection, sampler  # noqa: E402

Metrics = pipeline_dp.Metrics
ROWS = [(u, f"p{u % 3}", 1) for u in range(300) for _ in range(2)]
EXTRACTORS = pipeline_dp.DataExtractors(
    privacy_id_extractor=operator.itemgetter(0),
    partition_extractor=operator.itemgetter(1),
    value_extractor=operator.itemgetter(2),
)
BOUNDS = {"max_partitions_contributed": 1, "max_contributions_per_partition": 2}


def _header(report: str) -> list[str]:
    return report.split("Computation graph:")[0].splitlines()


def _eps(accountant: Any, name: str) -> float:
    (spec,) = [m.mechanism_spec for m in accountant._mechanisms if m.mechanism_spec.name == name]
    return float(spec.eps)


def test_engine_count_noise_with_a_laplace_sum() -> None:
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=3, total_delta=1e-6)
    engine = DPEngine(
        accountant,
        pipeline_dp.LocalBackend(),
        count_noise=sampler("fixedpoint-geometric", n=1000),
    )
    out = ExplainComputationReport()
    params = pipeline_dp.AggregateParams(
        metrics=[Metrics.COUNT, Metrics.SUM], min_value=0, max_value=1, **BOUNDS
    )
    result = engine.aggregate(ROWS, params, EXTRACTORS, out_explain_computation_report=out)
    accountant.compute_budgets()
    assert len(list(result)) == 3
    count_eps = _eps(accountant, "COUNT (fixedpoint-geometric)") / 2  # ℓ₁ = ℓ₀·ℓ∞ = 2
    expected = (
        f" noise: dpplug sampler fixedpoint-geometric(n=1000) at ε={count_eps:.6g} per count "
        "for COUNT; laplace for SUM"
    )
    header = _header(out.text())
    assert expected in header
    assert " noise_kind=laplace" not in header
    assert out.text() == engine.explain_computations_report()[0]


def test_noise_kind_sampler_for_both_counts() -> None:
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=2, total_delta=1e-6)
    engine = DPEngine(accountant, pipeline_dp.LocalBackend())
    params = pipeline_dp.AggregateParams(
        metrics=[Metrics.COUNT, Metrics.PRIVACY_ID_COUNT],
        noise_kind=sampler("discrete-laplace"),
        **BOUNDS,
    )
    result = engine.aggregate(ROWS, params, EXTRACTORS)
    accountant.compute_budgets()
    assert all(type(m.count) is float and m.count == int(m.count) for _, m in result)
    count = _eps(accountant, "COUNT (discrete-laplace)") / 2
    units = _eps(accountant, "PRIVACY_ID_COUNT (discrete-laplace)") / 1
    (report,) = engine.explain_computations_report()
    assert (
        f" noise: dpplug sampler discrete-laplace() at ε={count:.6g} per count for COUNT, "
        f"ε={units:.6g} per count for PRIVACY_ID_COUNT"
    ) in _header(report)
    assert "noise_kind" not in report and "Laplace mechanism" not in report


def test_add_dp_noise_report() -> None:
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=1, total_delta=0)
    engine = DPEngine(accountant, pipeline_dp.LocalBackend())
    params = pipeline_dp.AddDPNoiseParams(
        noise_kind=sampler("fixedpoint-geometric", n=100), l0_sensitivity=2, linf_sensitivity=1
    )
    out = ExplainComputationReport()
    result = engine.add_dp_noise([("a", 10), ("b", 90)], params, out)
    accountant.compute_budgets()
    assert sorted(key for key, _ in result) == ["a", "b"]
    header = _header(out.text())
    assert (
        " noise: dpplug sampler fixedpoint-geometric(n=100) at ε=0.5 per count for the values"
        in (header)
    )
    assert not any("noise_kind" in line for line in header)


def test_the_header_shows_how_the_budget_was_split() -> None:
    """A ``dpplug budget`` line names every dpplug mechanism with the (ε, δ) it was granted,
    the pure count noise marked as charged no δ (the selection gets all of it)."""
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=1, total_delta=1e-6)
    engine = DPEngine(accountant, pipeline_dp.LocalBackend(), count_noise=sampler("geosample", n=9))
    params = pipeline_dp.AggregateParams(
        metrics=[Metrics.COUNT],
        partition_selection_strategy=partition_selection("laplace-thresholding"),
        **BOUNDS,
    )
    engine.aggregate(ROWS, params, EXTRACTORS)
    accountant.compute_budgets()
    (report,) = engine.explain_computations_report()
    assert (
        " dpplug budget: COUNT (geosample) ε=0.5, δ=0 (pure: no δ charged); "
        "PartitionSelection (laplace-thresholding) ε=0.5, δ=1e-06"
    ) in _header(report)
